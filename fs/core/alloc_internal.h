/* SPDX-License-Identifier: MIT */
/* Inside core/alloc*.c: what the allocation files share. Not for other
 * files. */
#ifndef EXTRES_ALLOC_INTERNAL_H
#define EXTRES_ALLOC_INTERNAL_H

#include <sys/types.h>

#include "base/err.h"
#include "config/config.h"
#include "core/alloc.h"

/* 1 if `a` (NULL: nothing) holds the device whose coordination key is
 * `key`. */
int extres_alloc_holds(const struct extres_allocation *a, const char *key);

/* "resource 'R': device KEY V is held by PID N (cmd) in coordination file
 * F" into err; returns -EBUSY. */
int extres_alloc_held_error(const char *resource, const char *key,
			    const char *v, pid_t holder, const char *file,
			    struct extres_err *err);

#endif
