/* SPDX-License-Identifier: MIT */
/* A shared object that is not a driver: its one exported function has a
 * near-miss name, and the real entry point is hidden. */
#include <extres/driver.h>

EXTRES_DRIVER_EXPORT int extres_driver_entry_v0(void);
int extres_driver_entry_v0(void)
{
	return 0;
}
