/* SPDX-License-Identifier: MIT */
/* Inside alloc/alloc*.c: what the allocation files share. Not for other
 * files. */
#ifndef EXTRES_ALLOC_INTERNAL_H
#define EXTRES_ALLOC_INTERNAL_H

#include <sys/types.h>

#include "base/err.h"
#include "config/config.h"
#include "alloc/alloc.h"

/* 1 if `a` (NULL: nothing) holds the device whose coordination key is
 * `key`. */
int extres_alloc_holds(const struct extres_allocation *a, const char *key);

/* "resource 'R': device KEY V is held by PID N (cmd) in coordination file
 * F" into err; returns -EBUSY. */
int extres_alloc_held_error(const char *resource, const char *key,
			    const char *v, pid_t holder, const char *file,
			    struct extres_err *err);

/* A new allocation of candidates[picked[0..n_picked)] for `owner`, through
 * res's coordination file when `coordinated`. 0 or -ENOMEM. */
int extres_alloc_new(const struct extres_resource_config *res, int coordinated,
		     pid_t owner, uint64_t starttime,
		     const struct extres_infos *candidates,
		     const size_t *picked, size_t n_picked,
		     struct extres_allocation **ret);

/* Every candidate has the coordination property `key`, without whitespace:
 * 0, or -EINVAL naming the info. */
int extres_alloc_check_keys(const struct extres_resource_config *res,
			    const char *key,
			    const struct extres_infos *candidates,
			    struct extres_err *err);

/* A node pool (res->pool): serve every candidate, take none (alloc_pool.c). */
int extres_alloc_pool(const struct extres_resource_config *res,
		      const struct extres_infos *candidates, pid_t owner,
		      struct extres_allocation **ret, struct extres_err *err);

#endif
