/* SPDX-License-Identifier: MIT */
#include "daemon/ready.h"

#include <errno.h>
#include <linux/magic.h>
#include <pthread.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>

#include "base/log.h"
#include "daemon/extresd.h"
#include "os/daemonize.h"
#include "os/mountpoint.h"
#include "os/sdnotify.h"
#include "os/stop.h"

/* How long the first request through a new mount may take to be answered
 * before the start counts as failed. */
#define READY_TIMEOUT_MS 10000
/* Readiness threads do next to nothing: a small stack, so that they start
 * under a tight address-space limit too. */
#define READY_STACK_SIZE (256u * 1024u)

static void *ready_probe(void *arg)
{
	struct extresd_ready *rd = arg;
	struct statfs st;
	int r = 0;

	if (statfs(rd->d->mountpoint, &st) < 0)
		r = -errno;
	else if (st.f_type != FUSE_SUPER_MAGIC)
		r = -ENOTCONN; /* not our mount: it went away under us */
	pthread_mutex_lock(&rd->lock);
	rd->answered = 1;
	rd->result = r;
	pthread_cond_signal(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
	return NULL;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int r;

	r = pthread_attr_init(&attr);
	if (r != 0)
		return -r;
	r = pthread_attr_setstacksize(&attr, READY_STACK_SIZE);
	if (r == 0)
		r = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -r;
}

/* Tell the caller (the command's parent, systemd) once the mount serves;
 * on no answer, end the session so that main() reports the failure. */
static void *ready_wait(void *arg)
{
	struct extresd_ready *rd = arg;
	struct extresd *d = rd->d;
	struct timespec until;
	int r, ok;

	r = start_thread(&rd->prober, ready_probe, rd);
	pthread_mutex_lock(&rd->lock);
	if (r < 0) {
		rd->answered = 1;
		rd->result = r;
	}
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += READY_TIMEOUT_MS / 1000;
	while (!rd->answered && !rd->loop_over) {
		if (pthread_cond_timedwait(&rd->cond, &rd->lock, &until) ==
		    ETIMEDOUT) {
			rd->timed_out = !rd->answered && !rd->loop_over;
			break;
		}
	}
	ok = rd->answered && rd->result == 0 && !rd->loop_over;
	rd->ready = ok;
	pthread_mutex_unlock(&rd->lock);

	if (ok) {
		extres_log(EXTRES_LOG_INFO, "mounted %s from %s", d->mountpoint,
			   d->config->path);
		/* Once the caller's stderr is let go, syslog is all there
		 * is; until then failures must reach the caller. */
		if (d->daemon.fd >= 0)
			extres_log_use_syslog();
		extres_daemonize_finish(&d->daemon, 1);
		/* A service manager (Type=notify) learns that the mount
		 * serves. */
		if (extres_sd_notify("READY=1") < 0)
			extres_log(EXTRES_LOG_WARNING,
				   "cannot notify $NOTIFY_SOCKET");
	} else if (!rd->loop_over) {
		/* The main thread reports why; here only end the loop. */
		rd->end_loop(d);
	}
	/* The prober returns once the loop answered or the mount is gone:
	 * main() unmounts before it joins us. */
	if (r == 0)
		pthread_join(rd->prober, NULL);
	return NULL;
}

/* Why the start failed between the mount and readiness; 0 when it did not
 * (ready, or stopped on request: loop_result >= 0 and no failed probe). */
static int ready_failure(struct extresd *d, struct extresd_ready *rd,
			 int loop_result)
{
	if (rd->ready)
		return 0;
	if (loop_result < 0) {
		/* libfuse returns -1 for a thread it could not start, and
		 * has said why on stderr. */
		extres_log(
			EXTRES_LOG_ERR,
			"cannot serve %s: the session loop failed before it answered a request%s%s",
			d->mountpoint, loop_result == -1 ? "" : ": ",
			loop_result == -1 ? "" : strerror(-loop_result));
		return loop_result;
	}
	if (rd->timed_out) {
		extres_log(
			EXTRES_LOG_ERR,
			"cannot serve %s: its first request was not answered within %d s",
			d->mountpoint, READY_TIMEOUT_MS / 1000);
		return -ETIMEDOUT;
	}
	/* A stop, or an unmount, that ended the loop before it answered
	 * makes the probe fail too: that is no failed start. */
	if (rd->answered && rd->result < 0 && !extres_stop_pending() &&
	    !extres_mountpoint_gone_errno(-rd->result)) {
		extres_log(EXTRES_LOG_ERR,
			   "cannot serve %s: its first request failed: %s",
			   d->mountpoint, strerror(-rd->result));
		return rd->result;
	}
	/* Stopped (SIGTERM, fusermount3 -u) before the first answer. */
	extres_log(EXTRES_LOG_NOTICE, "stopped during start-up");
	return 0;
}

void extresd_ready_init(struct extresd_ready *rd, struct extresd *d,
			void (*end_loop)(void *d))
{
	pthread_condattr_t attr;

	*rd = (struct extresd_ready){ .d = d, .end_loop = end_loop };
	pthread_mutex_init(&rd->lock, NULL);
	/* The deadline must not move with the wall clock (NTP at boot). */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&rd->cond, &attr);
	pthread_condattr_destroy(&attr);
}

int extresd_ready_start(struct extresd_ready *rd)
{
	int r = start_thread(&rd->waiter, ready_wait, rd);

	if (r == 0)
		rd->waiter_started = 1;
	return r;
}

void extresd_ready_loop_over(struct extresd_ready *rd)
{
	pthread_mutex_lock(&rd->lock);
	rd->loop_over = 1;
	pthread_cond_signal(&rd->cond);
	pthread_mutex_unlock(&rd->lock);
}

int extresd_ready_end(struct extresd_ready *rd, int loop_result)
{
	if (rd->waiter_started) {
		pthread_join(rd->waiter, NULL);
		if (!rd->ready)
			loop_result = ready_failure(rd->d, rd, loop_result);
	}
	pthread_cond_destroy(&rd->cond);
	pthread_mutex_destroy(&rd->lock);
	return loop_result;
}
