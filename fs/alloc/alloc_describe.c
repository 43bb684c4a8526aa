/* SPDX-License-Identifier: MIT */
/*
 * What coordination a resource will really get, in words, for `extresctl
 * check`: from its config and from what its driver reported doing itself.
 */
#include "alloc/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int extres_alloc_describe(const struct extres_resource_config *res,
			  const struct extres_driver_info *driver, char **ret)
{
	const char *unused = NULL, *file = driver ? driver->coord_file : NULL;
	int n;

	if (file) {
		if (res->coordination_file &&
		    strcmp(res->coordination_file, file) != 0)
			unused = res->coordination_file;
		n = asprintf(
			ret,
			"the discovery script is asked to record its devices in %s (%s); extresd records any it did not%s%s%s",
			file, driver->coord_how ? driver->coord_how : "",
			unused ? "; coordination-file " : "",
			unused ? unused : "", unused ? " is not used" : "");
	} else if (res->coordination_file) {
		n = asprintf(ret, "extresd records its devices in %s",
			     res->coordination_file);
	} else {
		n = asprintf(
			ret,
			"none: no coordination-file, so other processes on this host may take the same devices");
	}
	return n < 0 ? -ENOMEM : 0;
}
