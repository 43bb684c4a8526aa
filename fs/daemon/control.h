/* SPDX-License-Identifier: MIT */
/*
 * The daemon's control thread: the one place where the served tree changes.
 *
 * It reads SIGHUP, SIGTERM and SIGINT from a signalfd (so no handler and
 * no global state): SIGHUP calls the reload callback, SIGTERM and SIGINT the
 * stop callback, after which the thread ends. In between it calls the
 * refresh callback whenever the next refresh is due or `kickfd` is written, and the watch callback
 * whenever `watchfd` (if not -1) is readable. Slow work (drivers, the
 * coordination file's lock) therefore never runs in a request handler, and a
 * stop never cuts a reload short: the session keeps serving until the
 * reload, and the kernel invalidations it makes, are done.
 *
 * The three signals must be blocked in every thread: call
 * extres_control_block_signals() in the main thread before any other thread
 * starts. Until the thread runs they stay pending (see
 * extres_stop_pending() (os/stop.h)).
 */
#ifndef EXTRES_CONTROL_H
#define EXTRES_CONTROL_H

#include <pthread.h>

#include "base/err.h"

struct extres_control {
	int sigfd; /* SIGHUP, SIGTERM, SIGINT */
	int stopfd; /* eventfd: end the thread */
	/* eventfd (non-blocking) that drivers' refresh requests write to
	 * (extres_driver_set_wake_fd()): wakes the thread to call refresh.
	 * Open until extres_control_close_kick(), after the drivers. */
	int kickfd;
	pthread_t thread;
	int started;
	void (*reload)(void *ctx);
	/* SIGTERM or SIGINT: end the session (the thread ends after it). */
	void (*stop)(void *ctx);
	/* Do what is due; return the milliseconds until the next refresh is
	 * due, or -1 for none. Also called once at start and after every
	 * reload, to learn the first delay. */
	long long (*refresh)(void *ctx);
	/* Set after extres_control_open() (which leaves watchfd -1), before
	 * the start: called when watchfd is readable; it must read it. */
	int watchfd;
	void (*watch)(void *ctx);
	void *ctx;
};

/* Block SIGHUP, SIGTERM and SIGINT in the calling thread (and so in the
 * threads it starts later). */
int extres_control_block_signals(void);

/* Open the descriptors; 0 or a negative errno with a message. */
int extres_control_open(struct extres_control *c, void (*reload)(void *ctx),
			void (*stop)(void *ctx),
			long long (*refresh)(void *ctx), void *ctx,
			struct extres_err *err);

/* Start the thread. */
int extres_control_start(struct extres_control *c, struct extres_err *err);

/* Stop and join the thread if it runs (a reload in progress finishes
 * first), close the descriptors but kickfd. Safe on a zeroed struct with
 * fds -1. */
void extres_control_close(struct extres_control *c);

/* Close kickfd: only once every driver instance that may write to it is
 * closed (their threads are joined by then). */
void extres_control_close_kick(struct extres_control *c);

#endif
