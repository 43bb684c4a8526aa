/* SPDX-License-Identifier: MIT */
/*
 * The daemon's control thread runs the jobs' loop (daemon/extresd.h): the
 * one place where the served tree changes, so that slow work (drivers, the
 * coordination file's lock) never runs in a request handler, and a stop
 * never cuts a reload short: the session keeps serving until the reload,
 * and the kernel invalidations it makes, are done.
 *
 * SIGHUP, SIGTERM and SIGINT are read from signalfds on the loop (so no
 * handler and no global state): they must be blocked in every thread: call
 * extres_control_block_signals() in the main thread before any other thread
 * starts. Until the loop reads them they stay pending (see
 * extres_stop_pending() (os/stop.h)).
 */
#ifndef EXTRES_CONTROL_H
#define EXTRES_CONTROL_H

/* Block SIGHUP, SIGTERM and SIGINT in the calling thread (and so in the
 * threads it starts later). 0 or a negative errno. */
int extres_control_block_signals(void);

#endif
