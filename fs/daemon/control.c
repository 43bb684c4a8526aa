/* SPDX-License-Identifier: MIT */
/*
 * The jobs' loop and the control thread that runs it: the signals, the
 * owner watch, and every job's own sources (daemon/extresd.h).
 */
#include "daemon/control.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/extresd.h"

static void control_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

int extres_control_block_signals(void)
{
	sigset_t set;

	control_signals(&set);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void on_reload(struct extres_source *s, void *ctx)
{
	extresd_reload(ctx);
}

/* SIGTERM (also the owner's exit, daemon/owner.h) or SIGINT: end the
 * session, then the loop. */
static void on_stop(struct extres_source *s, void *ctx)
{
	struct extresd *d = ctx;

	d->front->stop(d->front->ctx);
	extres_loop_quit(d->loop);
}

int extresd_jobs_open(struct extresd *d, struct extres_err *err)
{
	int r = extres_loop_new(&d->loop);

	if (r == 0)
		r = extres_loop_add_signal(d->loop, SIGHUP, on_reload, d, NULL);
	if (r == 0)
		r = extres_loop_add_signal(d->loop, SIGTERM, on_stop, d, NULL);
	if (r == 0)
		r = extres_loop_add_signal(d->loop, SIGINT, on_stop, d, NULL);
	if (r == 0)
		r = extresd_publish_add(d);
	if (r == 0)
		r = extresd_refresh_add(d);
	if (r == 0)
		r = extresd_guard_add(d);
	if (r == 0)
		r = extresd_holders_add(d);
	if (r < 0)
		return extres_err_set(err, -r,
				      "cannot set up the event loop: %s",
				      strerror(-r));
	return 0;
}

static void *run(void *arg)
{
	struct extresd *d = arg;

	extres_loop_run(d->loop);
	return NULL;
}

int extresd_jobs_start(struct extresd *d, struct extres_err *err)
{
	int r;

	/* Before the loop runs: a SIGTERM it raises stays pending until the
	 * loop reads it. */
	if (d->owner_watch.pidfd >= 0 && !d->owner_watch.started) {
		r = extres_owner_start(&d->owner_watch, err);
		if (r < 0)
			return r;
	}
	r = pthread_create(&d->thread, NULL, run, d);
	if (r != 0)
		return extres_err_set(err, r,
				      "cannot start the control thread: %s",
				      strerror(r));
	d->started = 1;
	return 0;
}

void extresd_jobs_stop(struct extresd *d)
{
	if (!d->started)
		return;
	extres_loop_quit(d->loop);
	pthread_join(d->thread, NULL);
	d->started = 0;
}

void extresd_jobs_close(struct extresd *d)
{
	extresd_jobs_stop(d);
	free(d->src.refresh);
	memset(&d->src, 0, sizeof(d->src));
	extres_loop_free(d->loop);
	d->loop = NULL;
	extres_owner_close(&d->owner_watch);
}
