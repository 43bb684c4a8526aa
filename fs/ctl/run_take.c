/* SPDX-License-Identifier: MIT */
/*
 * extresctl run: taking the lease, at once or in the queue (--wait).
 *
 * A waiter sleeps in poll() on what can free its devices or move it up
 * the queue: inotify on the directories of the coordination files (their
 * queues lie beside them; Flink's `sed -i` replaces a file by rename), and
 * a pidfd per process in the way (a holder or an earlier waiter that dies
 * by SIGKILL changes no file). Only changes count: its own opens and
 * closes (a close after O_RDWR is IN_CLOSE_WRITE) must not wake it. Its
 * timeout is the --wait deadline, and EXTRES_LEASE_RELOOK_MS while a
 * running waiter is ahead (a stop changes no file); the signalfd brings a
 * stop, Ctrl-Z or the command's death.
 *
 * No lock is held while it sleeps: each attempt locks and unlocks within
 * it. SIGTSTP is blocked and read from the signalfd, so that a Ctrl-Z
 * never stops us inside an attempt with the locks held: we stop
 * ourselves (SIGSTOP) only between attempts, and a lock not had in time
 * is one more reason to look again later, not the end of the wait.
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
#include "base/text.h"
#include "alloc/coord.h"
#include "ctl/run.h"
#include "os/proc.h"

/* The largest queue looked at without its lock. */
#define QUEUE_PEEK_MAX (1u << 20)

/* What a wait sleeps on: the signalfd, inotify, then one pidfd each. */
#define FIXED_FDS 2

/* What moves a waiter's files. Not IN_CLOSE_WRITE: every attempt opens
 * the files for writing and closes them, written or not, and would wake
 * the waiter itself at once, for ever; a write is IN_MODIFY already. */
#define WATCH_MASK (IN_MODIFY | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB)

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

/* 1 if `name` (an entry of a watched directory) is a coordination file
 * of `t` or its queue. */
static int is_ours(const struct run_take *t, const char *name)
{
	const char *file, *base;
	size_t i, len;

	for (i = 0; i < t->n; i++) {
		file = t->wants[i].res->coordination_file;
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		len = strlen(base);
		if (strncmp(name, base, len) == 0 &&
		    (name[len] == '\0' || strcmp(name + len, ".queue") == 0))
			return 1;
	}
	return 0;
}

/* Read what is queued (one read: a busy directory must not keep us
 * here; poll() says when there is more); 1 if an event was about our
 * files, or the queue overflowed and anything may have changed. */
static int drain(const struct run_take *t, int fd)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n, off;
	int ours = 0;

	n = read(fd, buf, sizeof(buf));
	for (off = 0; n > 0 && off < n;
	     off += (ssize_t)sizeof(*ev) + (ssize_t)ev->len) {
		ev = (const struct inotify_event *)(buf + off);
		if ((ev->mask & IN_Q_OVERFLOW) ||
		    (ev->len && is_ours(t, ev->name)))
			ours = 1;
	}
	return ours;
}

/* Whether the queue open at fd shows a running waiter ahead of `w`, as
 * extres_lease_try() would judge it. Read through the descriptor the
 * waiter keeps: opening and closing the queue again would drop its proof. */
static int behind_in(int fd, const struct extres_lease_waiter *w)
{
	struct extres_coord_entry e, *all = NULL, *grown;
	uint64_t mine = 0, t;
	const char *p, *nl, *end;
	size_t n = 0, len = 0, i;
	int found = 0, behind = 0;
	char *buf = malloc(QUEUE_PEEK_MAX);
	ssize_t got;

	while (fd >= 0 && buf && len < QUEUE_PEEK_MAX &&
	       (got = pread(fd, buf + len, QUEUE_PEEK_MAX - len, (off_t)len)) >
		       0)
		len += (size_t)got;
	if (fd < 0 || !buf || len == QUEUE_PEEK_MAX)
		goto out;
	for (p = buf, end = buf + len; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		grown = realloc(all, (n + 1) * sizeof(*all));
		if (!grown ||
		    extres_coord_parse_line(p, (size_t)(nl - p), &e) < 0) {
			all = grown ? grown : all;
			goto out;
		}
		all = grown;
		all[n++] = e;
		if (extres_lease_is_waiter_line(&e, w) &&
		    extres_parse_dec(e.key, strlen(e.key), UINT64_MAX, &mine) ==
			    0)
			found = 1;
	}
	for (i = 0; found && i < n && !behind; i++) {
		char state = 0;

		behind = all[i].parsed && all[i].pid != w->pid &&
			 extres_parse_dec(all[i].key, strlen(all[i].key),
					  UINT64_MAX, &t) == 0 &&
			 (t < mine || (t == mine && all[i].pid < w->pid)) &&
			 extres_lease_waiter_proven(fd, &all[i]) &&
			 extres_proc_stat(all[i].pid, &state, NULL) == 0 &&
			 state != 'T' && state != 't' && state != 'Z';
	}
out:
	for (i = 0; i < n; i++)
		extres_coord_entry_clear(&all[i]);
	free(all);
	free(buf);
	return behind;
}

/*
 * Whether a look at the queues, without their locks, shows a running
 * waiter ahead of us in one of them: then taking cannot succeed, and
 * trying would only make every waiter contend for the locks each time
 * one of them moves. A look at a file being rewritten may be wrong; the
 * rewrite ends with another event, and we look again.
 */
static int still_behind(const struct run_take *t)
{
	size_t i;
	int behind = 0;

	for (i = 0; i < t->waiter.n_fds && !behind; i++)
		behind = behind_in(t->waiter.fds[i], &t->waiter);
	return behind;
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
		    const struct extres_lease_busy *busy, int relook,
		    int *ret_sig)
{
	struct pollfd p[FIXED_FDS + EXTRES_LEASE_MAX_WATCH];
	struct signalfd_siginfo si;
	long long left, until = -1;
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
	if (relook)
		until = extres_now_ms() + EXTRES_LEASE_RELOOK_MS;
	if (t->deadline_ms >= 0 && (until < 0 || t->deadline_ms < until))
		until = t->deadline_ms;
	/* Changes to other files in the directories do not count. */
	for (;;) {
		if (until >= 0) {
			left = until - extres_now_ms();
			timeout = left > 0 ? (left > INT_MAX ? INT_MAX :
							       (int)left) :
					     0;
		}
		if (poll(p, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (p[0].revents & POLLIN &&
		    read(t->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			/* Ctrl-Z: no lock is held here; stop as the shell
			 * expects, and look again once continued. */
			if (si.ssi_signo == SIGTSTP) {
				raise(SIGSTOP);
				break;
			}
			*ret_sig = (int)si.ssi_signo;
		}
		if (drain(t, ino) || *ret_sig || timeout == 0)
			break;
		for (i = FIXED_FDS; i < n; i++)
			if (p[i].revents)
				goto out;
	}
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
		if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGTSTP)
			return (int)si.ssi_signo;
	return SIGTERM;
}

/* Whether a wait must end after signal `sig` (0: none) woke it: the
 * command's process died before it could run (status stays 1), or a signal
 * to stop came (status 128 + it). */
static int wait_over(const struct run_take *t, int sig, int *status)
{
	if (sig == SIGCHLD && run_child_ended(t->child)) {
		extres_log(
			EXTRES_LOG_ERR,
			"the command's process (PID %d) ended before it could run",
			(int)t->child->pid);
		return 1;
	}
	if (sig && sig != SIGCHLD) {
		*status = 128 + sig;
		return 1;
	}
	return 0;
}

int run_take(const struct run_take *t, struct extres_lease **ret)
{
	struct extres_lease_busy busy = { 0 };
	struct extres_err err;
	int ino = -1, sig = 0, said = 0, said_lock = 0, status = 1, r;

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
		if (busy.warning && !said)
			extres_log(EXTRES_LOG_WARNING, "%s", busy.warning);
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
		/* A lock held too long (by a stopped process, say) ends a
		 * run that does not wait; a wait goes on, looking again
		 * later. */
		if (r == -ETIMEDOUT && t->wait &&
		    (t->deadline_ms < 0 || extres_now_ms() < t->deadline_ms)) {
			if (!said_lock++)
				extres_log(EXTRES_LOG_WARNING,
					   "%s; still waiting", err.msg);
			extres_lease_busy_clear(&busy);
			r = sleep_on(t, ino, &busy, 1, &sig);
			if (r < 0 || wait_over(t, sig, &status))
				break;
			sig = 0;
			continue;
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
		r = sleep_on(t, ino, &busy, busy.relook, &sig);
		if (r < 0) {
			extres_log(EXTRES_LOG_ERR, "poll: %s", strerror(-r));
			break;
		}
		if (wait_over(t, sig, &status))
			break;
		sig = 0;
		while (still_behind(t) && !sig &&
		       (t->deadline_ms < 0 ||
			extres_now_ms() < t->deadline_ms)) {
			r = sleep_on(t, ino, &busy, 1, &sig);
			if (r < 0)
				break;
		}
		if (wait_over(t, sig, &status))
			break;
		sig = 0;
	}
	if (status != 0)
		leave_queues(t);
	extres_lease_busy_clear(&busy);
	if (ino >= 0)
		close(ino);
	return status;
}
