/* SPDX-License-Identifier: MIT */
/*
 * The process that owns the allocation (extresd --owner-pid PID).
 *
 * The daemon records PID, not itself, as the devices' owner, so a daemon
 * crash does not free devices a live workload still uses; when PID exits,
 * the daemon must go too, by the same clean path as an operator's kill
 * (unmount, release, exit 0). So a thread of its own waits on
 * pidfd_open(PID) and raises SIGTERM: not a source on the jobs' loop, whose
 * thread may be in a long job (a reload waiting for a coordination file's
 * lock) when PID exits; a pending SIGTERM is what every such wait asks
 * about (os/stop.h), so the stop is obeyed at once, and the loop acts on it
 * when the job has given up.
 */
#ifndef EXTRES_OWNER_H
#define EXTRES_OWNER_H

#include <pthread.h>
#include <sys/types.h>

#include "base/err.h"

struct extres_owner_watch {
	int pidfd; /* -1 when not watching */
	int stopfd; /* eventfd that ends the thread early */
	pthread_t thread;
	int started;
};

/* Parse a PID argument: a decimal > 0 naming a live process. A zombie or a
 * dying process (state Z or X in /proc/PID/stat), which allocators count as
 * gone, is refused like a missing one: -ESRCH "--owner-pid: no process N". */
int extres_owner_parse(const char *arg, pid_t *ret, struct extres_err *err);

/* Open a pidfd for `pid` now (so a later exit cannot be missed) into `w`,
 * whose fds are -1. 0 or a negative errno with a message. */
int extres_owner_open(struct extres_owner_watch *w, pid_t pid,
		      struct extres_err *err);

/* Start the thread (every signal blocked in it). From then on, PID's exit
 * raises SIGTERM in this process, once. Call it after the last fork of
 * the process that stays (extres_daemonize_start()). */
int extres_owner_start(struct extres_owner_watch *w, struct extres_err *err);

/* Stop the thread if it runs and close everything. Safe on a watch never
 * opened (fds -1) and more than once. */
void extres_owner_close(struct extres_owner_watch *w);

#endif
