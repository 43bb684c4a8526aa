/* SPDX-License-Identifier: MIT */
#include "daemon/owner.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/coord.h"

int extres_owner_parse(const char *arg, pid_t *ret, struct extres_err *err)
{
	struct extres_coord_entry owner = { .parsed = 1 };
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v == 0 || v > INT_MAX)
		return extres_err_set(err, EINVAL,
				      "--owner-pid: '%s' is not a process ID",
				      arg);
	/* A zombie or a dying process is an owner that every allocator
	 * counts as gone: recorded, its devices would go to the next comer
	 * while we serve them. So the same rule decides, through the same
	 * code. */
	owner.pid = (pid_t)v;
	if (extres_coord_owner_state(&owner) != EXTRES_OWNER_LIVE)
		return extres_err_set(err, ESRCH,
				      "--owner-pid: no process %llu", v);
	*ret = (pid_t)v;
	return 0;
}

int extres_owner_open(struct extres_owner_watch *w, pid_t pid,
		      struct extres_err *err)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), r;

	if (fd < 0)
		return extres_err_set(err, errno,
				      "--owner-pid %d: pidfd_open: %s",
				      (int)pid, strerror(errno));
	w->stopfd = eventfd(0, EFD_CLOEXEC);
	if (w->stopfd < 0) {
		r = errno;
		close(fd);
		return extres_err_set(err, r, "eventfd: %s", strerror(r));
	}
	/* pidfd_open sets close-on-exec itself. */
	w->pidfd = fd;
	return 0;
}

static void *watch(void *arg)
{
	struct extres_owner_watch *w = arg;
	struct pollfd p[2] = {
		{ .fd = w->pidfd, .events = POLLIN },
		{ .fd = w->stopfd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents) {
			/* To the process, not a thread: it stays pending
			 * (every thread blocks it) until the loop reads it,
			 * and a wait in any thread sees it meanwhile. */
			kill(getpid(), SIGTERM);
			break;
		}
	}
	return NULL;
}

int extres_owner_start(struct extres_owner_watch *w, struct extres_err *err)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&w->thread, NULL, watch, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return extres_err_set(err, r,
				      "cannot start the owner watch: %s",
				      strerror(r));
	w->started = 1;
	return 0;
}

void extres_owner_close(struct extres_owner_watch *w)
{
	uint64_t one = 1;

	if (w->started) {
		if (write(w->stopfd, &one, sizeof(one)) < 0) {
			/* An eventfd write of 1 cannot fail here. */
		}
		pthread_join(w->thread, NULL);
		w->started = 0;
	}
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->stopfd >= 0)
		close(w->stopfd);
	w->pidfd = w->stopfd = -1;
}
