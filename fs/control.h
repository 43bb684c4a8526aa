/* SPDX-License-Identifier: MIT */
/*
 * The daemon's control thread: the one place where the served tree changes.
 *
 * It waits for SIGHUP (through a signalfd, so no handler and no global
 * state) and calls the reload callback, and in between calls the refresh
 * callback whenever the next refresh is due; slow work (drivers, the
 * coordination file's lock) therefore never runs in a request handler.
 * SIGHUP must be blocked in every thread: call
 * extres_control_block_signals() in the main thread before any other thread
 * starts.
 */
#ifndef EXTRES_CONTROL_H
#define EXTRES_CONTROL_H

#include <pthread.h>

#include "err.h"

struct extres_control {
	int sigfd;  /* SIGHUP */
	int stopfd; /* eventfd: end the thread */
	pthread_t thread;
	int started;
	void (*reload)(void *ctx);
	/* Do what is due; return the milliseconds until the next refresh is
	 * due, or -1 for none. Also called once at start and after every
	 * reload, to learn the first delay. */
	long long (*refresh)(void *ctx);
	void *ctx;
};

/* Block SIGHUP in the calling thread (and so in threads it starts later). */
int extres_control_block_signals(void);

/* Open the descriptors; 0 or a negative errno with a message. */
int extres_control_open(struct extres_control *c, void (*reload)(void *ctx),
			long long (*refresh)(void *ctx), void *ctx,
			struct extres_err *err);

/* Start the thread. */
int extres_control_start(struct extres_control *c, struct extres_err *err);

/* Stop and join the thread if it runs (a reload in progress finishes
 * first), close the descriptors. Safe on a zeroed struct with fds -1. */
void extres_control_close(struct extres_control *c);

#endif
