/* SPDX-License-Identifier: MIT */
/* The identity keys (see extres_driver_ops.identity_keys) of the drivers that
 * keep what extresd compared on a refresh before drivers declared theirs. */
#ifndef EXTRES_DRIVERS_IDENTITY_H
#define EXTRES_DRIVERS_IDENTITY_H

/* "uuid", "path", "pci.bus_id", "serial", "unique_id", NULL-terminated: the
 * properties that name a device itself, not its place in a list. */
extern const char *const identity_keys_usual[];

#endif
