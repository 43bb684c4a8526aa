/* SPDX-License-Identifier: MIT */
/* A module whose entry point returns no ops table. */
#include <stddef.h>

#include <extres/driver.h>

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return NULL;
}
