/* SPDX-License-Identifier: MIT */
#include "os/sentinel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* What the daemon writes once the mount is gone. */
#define RELEASED 'r'
/* How long a release waits for the sentinel to be gone. */
#define REAP_MS 1000

/* A pidfd of this process's main thread (the caller), readable once that
 * thread has exited, even while another thread is stuck on the mount.
 * Before Linux 6.9 (no PIDFD_THREAD) it becomes readable only once the
 * whole process is gone: a stuck thread then keeps the sentinel waiting,
 * as the kernel would. */
static int pidfd_self(void)
{
	int fd = (int)syscall(SYS_pidfd_open, getpid(), PIDFD_THREAD);

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	return fd;
}

/* Close every descriptor from 3 up but the three given. */
static void close_others(int a, int b, int c)
{
	int keep[3] = { a, b, c }, i, j, t;
	unsigned lo = 3;

	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	for (i = 0; i < 3; i++) {
		if ((unsigned)keep[i] > lo)
			close_range(lo, (unsigned)keep[i] - 1, 0);
		if ((unsigned)keep[i] + 1 > lo)
			lo = (unsigned)keep[i] + 1;
	}
	close_range(lo, ~0U, 0);
}

static void report(int fd, int e)
{
	ssize_t n;

	do
		n = write(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
}

#define NAME "extresd-sentinel"

/* Our name in ps and /proc/PID/cmdline: not the daemon's arguments. */
static void retitle(char *args, size_t len)
{
	size_t i;

	if (!args || len < sizeof(NAME))
		return;
	for (i = 0; i < len; i++)
		args[i] = i < sizeof(NAME) ? NAME[i] : '\0';
	prctl(PR_SET_NAME, "extres-sentinel", 0, 0, 0);
}

/* The sentinel: async-signal-safe calls only (forked from a threaded
 * process). */
static void __attribute__((noreturn))
child_main(int pidfd, int pipe_r, int rep, const char *abort_name, char *args,
	   size_t args_len)
{
	struct pollfd p[3] = { { .fd = pidfd, .events = POLLIN },
			       { .fd = pipe_r, .events = POLLIN },
			       { .fd = -1, .events = POLLIN } };
	int null, fs, mnt, abort_fd, e;
	sigset_t none, orphaned;
	char c;

	retitle(args, args_len);

	/* The daemon blocks its stop signals for its signalfd: a plain
	 * kill ends the sentinel. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Nothing of the caller's: not its pipes (`$(extresd)`), and above
	 * all not /dev/fuse. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0) {
		report(rep, errno);
		_exit(1);
	}
	close_others(pidfd, pipe_r, rep);
	/* A fusectl mount of our own, attached nowhere: it works where
	 * /sys/fs/fuse/connections is not mounted, and changes nothing
	 * anyone else sees. The abort file is opened now, so that a later
	 * connection with the same number is never the one aborted: once
	 * ours is gone, writing this file does nothing. */
	fs = fsopen("fusectl", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		report(rep, errno);
		_exit(1);
	}
	mnt = fsmount(fs, FSMOUNT_CLOEXEC,
		      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	abort_fd = mnt < 0 ? -1 : openat(mnt, abort_name, O_WRONLY | O_CLOEXEC);
	e = errno;
	close(fs);
	if (abort_fd < 0) {
		report(rep, e);
		_exit(1);
	}
	close(mnt);
	/* The pidfd of the main thread never reads as exited while another
	 * thread lives (the kernel holds back a group leader's exit until
	 * its group is empty), which is just the case of a thread stuck on
	 * the mount. The parent-death signal is sent when the thread that
	 * forked us, the main thread, exits, whatever the other threads do.
	 * Set before the report, so the main thread is alive for it. */
	sigemptyset(&orphaned);
	sigaddset(&orphaned, SIGUSR1);
	sigprocmask(SIG_BLOCK, &orphaned, NULL);
	p[2].fd = signalfd(-1, &orphaned, SFD_CLOEXEC);
	if (p[2].fd < 0 || prctl(PR_SET_PDEATHSIG, SIGUSR1) < 0) {
		report(rep, errno);
		_exit(1);
	}
	report(rep, 0);
	close(rep);
	for (;;) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* Checked first: a daemon that exits after saying so is
		 * gone with its mount. */
		if (p[1].revents) {
			if (read(pipe_r, &c, 1) == 1 && c == RELEASED)
				_exit(0);
			break;
		}
		if (p[0].revents || p[2].revents)
			break;
	}
	/* Died without unmounting: requests fail (ENOTCONN) from now on,
	 * and a thread of the daemon stuck on its own mount is let go. */
	if (write(abort_fd, "1", 1) < 0)
		_exit(1);
	_exit(0);
}

int extres_sentinel_start(struct extres_sentinel *s, unsigned minor, char *args,
			  size_t args_len, struct extres_err *err)
{
	int pidfd, p[2] = { -1, -1 }, rep[2] = { -1, -1 }, e = 0, r = 0;
	char name[32];
	ssize_t n;
	pid_t pid;

	s->pid = 0;
	s->fd = -1;
	snprintf(name, sizeof(name), "%u/abort", minor);
	pidfd = pidfd_self();
	if (pidfd < 0)
		return extres_err_set(err, errno,
				      "cannot watch this process (pidfd): %s",
				      strerror(errno));
	if (pipe2(p, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		r = extres_err_set(err, errno, "cannot make a pipe: %s",
				   strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = extres_err_set(err, errno, "cannot fork: %s",
				   strerror(errno));
		goto out;
	}
	if (pid == 0)
		child_main(pidfd, p[0], rep[1], name, args, args_len);
	close(rep[1]);
	rep[1] = -1;
	/* The child makes a few system calls, none of which waits on
	 * another process, then says how it went. */
	do
		n = read(rep[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e) && e == 0)
		e = EIO;
	if (e) {
		waitpid(pid, NULL, 0);
		r = extres_err_set(
			err, e,
			"cannot open the abort file of FUSE connection %u (fusectl): %s",
			minor, strerror(e));
		goto out;
	}
	s->pid = pid;
	s->fd = p[1];
	p[1] = -1;
out:
	close(pidfd);
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	return r;
}

void extres_sentinel_release(struct extres_sentinel *s)
{
	struct pollfd p = { .events = POLLIN };
	char c = RELEASED;

	if (s->fd >= 0) {
		/* It may be gone already (killed): EPIPE, SIGPIPE ignored. */
		if (write(s->fd, &c, 1) < 0) {
		}
		close(s->fd);
		s->fd = -1;
	}
	if (s->pid <= 0)
		return;
	/* Sleep until it exits, which it does at once; never for good. */
	p.fd = (int)syscall(SYS_pidfd_open, s->pid, 0);
	if (p.fd >= 0) {
		while (poll(&p, 1, REAP_MS) < 0 && errno == EINTR)
			;
		close(p.fd);
	}
	waitpid(s->pid, NULL, WNOHANG);
	s->pid = 0;
}
