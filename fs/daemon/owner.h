/* SPDX-License-Identifier: MIT */
/*
 * The process that owns the allocation (extresd --owner-pid PID).
 *
 * The daemon records PID, not itself, as the devices' owner, so a daemon
 * crash does not free devices a live workload still uses; when PID exits,
 * the daemon must go too: the jobs' loop watches a pidfd and then takes the
 * same clean path as an operator's kill (unmount, release, exit 0).
 */
#ifndef EXTRES_OWNER_H
#define EXTRES_OWNER_H

#include <sys/types.h>

#include "base/err.h"

/* Parse a PID argument: a decimal > 0 naming a live process. A zombie or a
 * dying process (state Z or X in /proc/PID/stat), which allocators count as
 * gone, is refused like a missing one: -ESRCH "--owner-pid: no process N". */
int extres_owner_parse(const char *arg, pid_t *ret, struct extres_err *err);

/* A pidfd for `pid`, opened now (so a later exit cannot be missed), into
 * *ret_fd (close-on-exec). 0 or a negative errno with a message. */
int extres_owner_open(pid_t pid, int *ret_fd, struct extres_err *err);

#endif
