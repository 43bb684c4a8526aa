/* SPDX-License-Identifier: MIT */
/*
 * extresctl run: taking the lease, at once or in the queue (--wait).
 *
 * A waiter sleeps in poll() on what can free its devices or move it up
 * the queue: inotify on the directories of the coordination files (their
 * queues lie beside them; Flink's `sed -i` replaces a file by rename), and
 * a pidfd per process in the way (a holder or an earlier waiter that dies
 * by SIGKILL changes no file). Its timeout is only the --wait deadline;
 * the signalfd brings a stop or the command's death.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "ctl/run.h"

/* What a wait sleeps on: the signalfd, inotify, then one pidfd each. */
#define FIXED_FDS 2

/* What moves a waiter's files. */
#define WATCH_MASK                                                          \
	(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | \
	 IN_ATTRIB)

/* An inotify descriptor watching the directory of every coordination
 * file, or -1 with `err` set. */
static int watch_dirs(const struct run_take *t, struct extres_err *err)
{
	char dir[PATH_MAX];
	const char *file, *slash;
	size_t i;
	int fd;

	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd < 0) {
		extres_err_set(err, errno, "inotify: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		file = t->wants[i].res->coordination_file;
		slash = strrchr(file, '/');
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else
			snprintf(dir, sizeof(dir), "%.*s",
				 slash == file ? 1 : (int)(slash - file), file);
		if (inotify_add_watch(fd, dir, WATCH_MASK | IN_ONLYDIR) < 0) {
			extres_err_set(err, errno, "inotify on %s: %s", dir,
				       strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* Print each line of `text` as one message. */
static void say_lines(int level, const char *lead, const char *text)
{
	const char *p = text, *nl;

	while (p && *p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		extres_log(level, "%s%.*s", lead, (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/* Out of the queues, whatever else happens: a waiter's line must not
 * outlive its wait (it would only be dropped once we are gone). */
static void leave_queues(const struct run_take *t)
{
	struct extres_err err;

	if (t->wait && extres_lease_queue_leave(t->wants, t->n, &t->waiter,
						t->lock_timeout_ms, &err) < 0)
		extres_log(EXTRES_LOG_WARNING, "%s", err.msg);
}

/*
 * Sleep until something in the way may have moved, the deadline passes,
 * a stop signal comes (its number into *ret_sig) or the child dies
 * (SIGCHLD, which *ret_sig gets too). 0 or a negative errno.
 */
static int sleep_on(const struct run_take *t, int ino,
		    const struct extres_lease_busy *busy, int *ret_sig)
{
	struct pollfd p[FIXED_FDS + EXTRES_LEASE_MAX_WATCH];
	struct signalfd_siginfo si;
	long long left;
	size_t i, n = FIXED_FDS;
	int timeout = -1, r = 0, fd;

	p[0] = (struct pollfd){ .fd = t->sigfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = ino, .events = POLLIN };
	for (i = 0; i < busy->n_pids; i++) {
		fd = (int)syscall(SYS_pidfd_open, busy->pids[i], 0);
		/* Gone already: look again at once. */
		if (fd < 0 && errno == ESRCH)
			goto out;
		if (fd >= 0)
			p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	if (t->deadline_ms >= 0) {
		left = t->deadline_ms - extres_now_ms();
		timeout = left > 0 ? (left > INT_MAX ? INT_MAX : (int)left) : 0;
	}
	while (poll(p, n, timeout) < 0)
		if (errno != EINTR) {
			r = -errno;
			goto out;
		}
	if (p[0].revents & POLLIN &&
	    read(t->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		*ret_sig = (int)si.ssi_signo;
	drain(ino);
out:
	for (i = FIXED_FDS; i < n; i++)
		close(p[i].fd);
	return r;
}

/* The stop signal pending (SIGTERM or SIGINT, by os/stop.h's rule). */
static int stop_signal(int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			return (int)si.ssi_signo;
	return SIGTERM;
}

int run_take(const struct run_take *t, struct extres_lease **ret)
{
	struct extres_lease_busy busy = { 0 };
	struct extres_err err;
	int ino = -1, sig = 0, said = 0, status = 1, r;

	if (t->wait) {
		ino = watch_dirs(t, &err);
		if (ino < 0) {
			extres_log(EXTRES_LOG_ERR, "%s", err.msg);
			return 1;
		}
	}
	for (;;) {
		extres_lease_busy_clear(&busy);
		r = extres_lease_try(t->wants, t->n, t->child->pid,
				     t->child->starttime,
				     t->wait ? &t->waiter : NULL,
				     t->lock_timeout_ms, ret, &busy, &err);
		if (r == 0) {
			status = 0;
			break;
		}
		if (r == -EINTR) {
			/* A stop came while a lock was awaited: it is
			 * pending still, the signalfd tells which. */
			status = 128 + stop_signal(t->sigfd);
			break;
		}
		if (r != -EBUSY) {
			extres_log(EXTRES_LOG_ERR, "%s", err.msg);
			break;
		}
		if (!t->wait) {
			say_lines(EXTRES_LOG_ERR, "busy: ", busy.text);
			status = RUN_EXIT_BUSY;
			break;
		}
		if (t->deadline_ms >= 0 && extres_now_ms() >= t->deadline_ms) {
			say_lines(EXTRES_LOG_ERR,
				  "gave up waiting: ", busy.text);
			status = RUN_EXIT_BUSY;
			break;
		}
		if (!said++)
			say_lines(EXTRES_LOG_INFO, "waiting: ", busy.text);
		r = sleep_on(t, ino, &busy, &sig);
		if (r < 0) {
			extres_log(EXTRES_LOG_ERR, "poll: %s", strerror(-r));
			break;
		}
		if (sig == SIGCHLD && run_child_ended(t->child)) {
			extres_log(
				EXTRES_LOG_ERR,
				"the command's process (PID %d) ended before it could run",
				(int)t->child->pid);
			break;
		}
		if (sig && sig != SIGCHLD) {
			status = 128 + sig;
			break;
		}
		sig = 0;
	}
	if (status != 0)
		leave_queues(t);
	extres_lease_busy_clear(&busy);
	if (ino >= 0)
		close(ino);
	return status;
}
