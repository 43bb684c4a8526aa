/* SPDX-License-Identifier: MIT */
#include "daemon/control.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

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

int extres_control_open(struct extres_control *c, void (*reload)(void *ctx),
			void (*stop)(void *ctx),
			long long (*refresh)(void *ctx), void *ctx,
			struct extres_err *err)
{
	sigset_t set;
	int r;

	control_signals(&set);
	c->kickfd = -1;
	c->reload = reload;
	c->stop = stop;
	c->refresh = refresh;
	c->watchfd = -1;
	c->watch = NULL;
	c->ctx = ctx;
	c->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (c->sigfd < 0)
		return extres_err_set(err, errno, "signalfd: %s",
				      strerror(errno));
	c->stopfd = eventfd(0, EFD_CLOEXEC);
	r = errno;
	/* Non-blocking: drivers' threads write to it and must never wait. */
	if (c->stopfd >= 0) {
		c->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		r = errno;
	}
	if (c->stopfd < 0 || c->kickfd < 0) {
		close(c->sigfd);
		if (c->stopfd >= 0)
			close(c->stopfd);
		c->sigfd = c->stopfd = c->kickfd = -1;
		return extres_err_set(err, r, "eventfd: %s", strerror(r));
	}
	return 0;
}

static void *run(void *arg)
{
	struct extres_control *c = arg;
	struct pollfd p[4] = {
		{ .fd = c->sigfd, .events = POLLIN },
		{ .fd = c->stopfd, .events = POLLIN },
		/* poll() skips a negative fd. */
		{ .fd = c->watch ? c->watchfd : -1, .events = POLLIN },
		{ .fd = c->kickfd, .events = POLLIN },
	};
	struct signalfd_siginfo si;
	long long next = c->refresh(c->ctx);
	uint64_t kicks;
	int n;

	for (;;) {
		n = poll(p, 4,
			 next < 0	? -1 :
			 next > INT_MAX ? INT_MAX :
					  (int)next);
		if (n < 0 && errno != EINTR)
			return NULL;
		if (n > 0 && p[1].revents)
			return NULL;
		if (n > 0 && p[0].revents &&
		    read(c->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo != SIGHUP) {
				c->stop(c->ctx);
				return NULL;
			}
			c->reload(c->ctx);
		}
		if (n > 0 && p[2].revents)
			c->watch(c->ctx);
		/* What was asked is in the drivers' flags: the count only
		 * wakes us. */
		if (n > 0 && p[3].revents &&
		    read(c->kickfd, &kicks, sizeof(kicks)) < 0) {
		}
		/* Due refreshes run after a reload too (which reschedules). */
		next = c->refresh(c->ctx);
	}
}

int extres_control_start(struct extres_control *c, struct extres_err *err)
{
	int r = pthread_create(&c->thread, NULL, run, c);

	if (r != 0)
		return extres_err_set(err, r,
				      "cannot start the control thread: %s",
				      strerror(r));
	c->started = 1;
	return 0;
}

void extres_control_close(struct extres_control *c)
{
	uint64_t one = 1;

	if (c->started) {
		if (write(c->stopfd, &one, sizeof(one)) < 0) {
			/* An eventfd write of 1 cannot fail here. */
		}
		pthread_join(c->thread, NULL);
		c->started = 0;
	}
	if (c->sigfd >= 0)
		close(c->sigfd);
	if (c->stopfd >= 0)
		close(c->stopfd);
	c->sigfd = c->stopfd = -1;
}

void extres_control_close_kick(struct extres_control *c)
{
	if (c->kickfd >= 0)
		close(c->kickfd);
	c->kickfd = -1;
}
