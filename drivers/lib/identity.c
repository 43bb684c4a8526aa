/* SPDX-License-Identifier: MIT */
#include "lib/identity.h"

#include <stddef.h>

const char *const identity_keys_usual[] = {
	"uuid", "path", "pci.bus_id", "serial", "unique_id", NULL,
};
