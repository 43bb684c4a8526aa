/* SPDX-License-Identifier: MIT */
/*
 * The naming rules of the Container Device Interface (CDI) for a spec's
 * kind ("vendor/class") and its device names, as the runtimes that read
 * our specs apply them: the strictest of the CDI SPEC.md text and of the
 * parser Debian 12's podman vendors (CDI 0.5), so that a name passed here
 * is taken by both.
 */
#ifndef EXTRES_CDI_NAME_H
#define EXTRES_CDI_NAME_H

/* The vendor of the kind extres writes when none is configured. */
#define EXTRES_CDI_VENDOR "extres.dev"

/*
 * What keeps `kind` from being a CDI kind, for a message ("has no '/'
 * between vendor and class", "has a vendor that is not a DNS subdomain
 * starting with a letter", ...), or NULL when it is one:
 *
 *   vendor  a DNS subdomain (labels of [a-z0-9-] separated by '.', each
 *           starting and ending with a letter or digit, at most 63 bytes;
 *           253 in all) whose first byte is a letter
 *   class   at most 63 bytes of [A-Za-z0-9_-], starting with a letter
 *           and ending with a letter or digit (CDI 0.6 also allows '.',
 *           which CDI 0.5 refuses)
 */
const char *extres_cdi_kind_problem(const char *kind);

/* 1 if `name` is a CDI device name: [A-Za-z0-9] at both ends, [A-Za-z0-9_.-]
 * between, at most 255 bytes (the mount's longest name); else 0. */
int extres_cdi_is_device_name(const char *name);

#endif
