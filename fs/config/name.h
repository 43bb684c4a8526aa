/* SPDX-License-Identifier: MIT */
/*
 * The one rule for names that become entries of the mount: resources (from
 * the config), coordination keys and property names (from drivers).
 */
#ifndef EXTRES_NAME_H
#define EXTRES_NAME_H

/* Longest entry name the mount serves (NAME_MAX). */
#define EXTRES_MAX_NAME_LEN 255

/*
 * What keeps `name` from being one entry of the mount (a resource's or a
 * property's file name): "is empty", "is longer than 255 bytes", "starts
 * with '.'" (hidden names are the daemon's own), "contains '/'" or
 * "contains a control character"; NULL when it is fine.
 */
const char *extres_name_problem(const char *name);

/* 1 if `c` may be part of a driver name ([A-Za-z0-9_-]): the module
 * <name>.so in the drivers directory. */
int extres_is_driver_name_char(char c);

#endif
