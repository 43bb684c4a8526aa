/* SPDX-License-Identifier: MIT */
/*
 * extresd's readiness: the start counts as done (READY=1, the parent told,
 * syslog from then on) only once a request through the new mount has been
 * answered by the session loop.
 *
 * Use, around the session loop: extresd_ready_init(), then
 * extresd_ready_start() once mounted; when the loop has ended,
 * extresd_ready_loop_over(), unmount, then extresd_ready_end().
 */
#ifndef EXTRES_DAEMON_READY_H
#define EXTRES_DAEMON_READY_H

#include <pthread.h>

struct extresd;

/* "Ready" is proven, not assumed: a request through the mount, answered by
 * the session loop. One thread asks (statfs() always reaches the daemon,
 * and blocks until the loop answers or the mount goes away); another waits
 * for the answer with a deadline and then reports. */
struct extresd_ready {
	struct extresd *d;
	void (*end_loop)(void *d); /* ends the session loop */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t waiter, prober;
	int waiter_started;
	int answered; /* the prober's statfs() returned */
	int result; /* its outcome: 0 or a negative errno */
	int loop_over; /* main(): the session loop has ended */
	int timed_out; /* no answer within READY_TIMEOUT_MS */
	int ready; /* reported: the start succeeded */
};

/* `end_loop(d)` is called from the waiting thread when no answer came. */
void extresd_ready_init(struct extresd_ready *rd, struct extresd *d,
			void (*end_loop)(void *d));

/* Start asking and waiting: 0 or a negative errno (no thread started). */
int extresd_ready_start(struct extresd_ready *rd);

/* The session loop has ended: stop waiting for it. */
void extresd_ready_loop_over(struct extresd_ready *rd);

/*
 * After the unmount (which makes a pending probe return): join the threads,
 * free what init took, and return the start's outcome: `loop_result`, or
 * why the start failed before it was ready (logged), or 0 for a stop during
 * start-up.
 */
int extresd_ready_end(struct extresd_ready *rd, int loop_result);

#endif
