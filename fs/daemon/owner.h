/* SPDX-License-Identifier: MIT */
/*
 * Watching the process that owns the allocation (extresd --owner-pid PID).
 *
 * The daemon records PID, not itself, as the devices' owner, so a daemon
 * crash does not free devices a live workload still uses; when PID exits,
 * the daemon must go too. A thread waits on pidfd_open(PID) and, when the
 * process is gone, raises SIGTERM in the daemon: the same clean path as an
 * operator's kill (unmount, release, exit 0).
 */
#ifndef EXTRES_OWNER_H
#define EXTRES_OWNER_H

#include <pthread.h>
#include <sys/types.h>

#include "base/err.h"

struct extres_owner_watch {
	int pidfd; /* -1 when not watching */
	int stopfd; /* eventfd to end the thread early */
	pthread_t thread;
	int started;
};

/* Parse a PID argument: a decimal > 0 naming a live process. A zombie or a
 * dying process (state Z or X in /proc/PID/stat), which allocators count as
 * gone, is refused like a missing one: -ESRCH "--owner-pid: no process N". */
int extres_owner_parse(const char *arg, pid_t *ret, struct extres_err *err);

/* Open a pidfd for `pid` now (so a later exit cannot be missed). */
int extres_owner_open(struct extres_owner_watch *w, pid_t pid,
		      struct extres_err *err);

/* Start the thread (signals blocked in it, so they go to the loop). */
int extres_owner_start(struct extres_owner_watch *w, struct extres_err *err);

/* Stop the thread if it runs and close everything. Safe on a zeroed or
 * never-opened watch whose fds are -1. */
void extres_owner_close(struct extres_owner_watch *w);

#endif
