/* SPDX-License-Identifier: MIT */
#include "os/daemonize.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

/* How long an interrupted front waits for the daemon to let go of what it
 * took: the daemon obeys a stop within a second. */
#define ABORT_WAIT_MS 5000
#define ABORT_SLICE_MS 10

/*
 * ^C or SIGTERM while the daemon starts: the start is called off, not left
 * to finish behind the operator's back. The daemon takes the same SIGTERM
 * as a stop (it releases what it took and does not mount, or unmounts), and
 * the front says so once the daemon is gone, exiting as killed by `sig`
 * would (130, 143).
 */
static void parent_abort(pid_t child, int sig)
{
	const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
	struct timespec slice = { 0, ABORT_SLICE_MS * 1000000L };
	int waited;

	kill(child, SIGTERM);
	for (waited = 0; waited < ABORT_WAIT_MS; waited += ABORT_SLICE_MS) {
		pid_t r = waitpid(child, NULL, WNOHANG);

		if (r == child || (r < 0 && errno == ECHILD)) {
			extres_log(
				EXTRES_LOG_NOTICE,
				"interrupted by %s: start-up called off, nothing mounted",
				name);
			_exit(128 + sig);
		}
		nanosleep(&slice, NULL);
	}
	extres_log(
		EXTRES_LOG_ERR,
		"interrupted by %s: the background extresd (pid %d) did not stop within %d s",
		name, (int)child, ABORT_WAIT_MS / 1000);
	_exit(128 + sig);
}

/*
 * SIGHUP while the daemon starts (to the front, whose PID the caller
 * has): a reload request, as it would be a moment later, never the
 * front's death. The daemon keeps it pending until it serves, then
 * reloads. One sent before the fork is pending here, not in the child,
 * and comes through the same way.
 */
static void parent_pass_hup(pid_t child)
{
	if (kill(child, SIGHUP) == 0)
		extres_log(
			EXTRES_LOG_NOTICE,
			"SIGHUP during start-up: passed on to the background extresd (pid %d), which reloads once it serves",
			(int)child);
}

static void parent_wait(int fd, pid_t child)
{
	struct signalfd_siginfo si;
	struct pollfd p[2];
	sigset_t stop;
	char status = 0;
	ssize_t n;

	/* The caller blocked SIGTERM, SIGINT and SIGHUP for its threads:
	 * here they are read from a signalfd, the rest act as on any
	 * command. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_SETMASK, &stop, NULL);
	p[0] = (struct pollfd){ .fd = signalfd(-1, &stop, SFD_CLOEXEC),
				.events = POLLIN };
	p[1] = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (p[0].fd < 0) {
		/* Without one, ^C ends the front at least; a SIGHUP stays
		 * blocked, lost rather than fatal. */
		sigemptyset(&stop);
		sigaddset(&stop, SIGHUP);
		sigprocmask(SIG_SETMASK, &stop, NULL);
	}
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* A stop that comes with the ready word still wins: whatever
		 * the front says last is true. */
		if (p[0].revents &&
		    read(p[0].fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGHUP)
				parent_pass_hup(child);
			else
				parent_abort(child, (int)si.ssi_signo);
		}
		if (p[1].revents)
			break;
	}
	do
		n = read(fd, &status, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && status == 'R')
		_exit(0);
	/* A child that failed exits by itself; reap it so the caller's shell
	 * sees no stray. */
	waitpid(child, NULL, 0);
	_exit(1);
}

int extres_daemonize_start(struct extres_daemonize *d)
{
	int fds[2];
	pid_t pid;

	d->fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid > 0) {
		close(fds[1]);
		parent_wait(fds[0], pid);
	}
	close(fds[0]);
	setsid();
	d->fd = fds[1];
	return 0;
}

/*
 * Where the log goes once the caller is let go: syslog when a syslog daemon
 * listens (1), else on the caller's stderr, kept (0), so that nothing is
 * lost; but a pipe is let go all the same (1), since the caller may wait
 * for its end (`$(extresd ...)`): said on it before it goes.
 */
static int log_to_syslog(void)
{
	struct stat st;

	if (extres_log_use_syslog() == 0)
		return 1;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 1;
	if (!S_ISFIFO(st.st_mode))
		return 0;
	extres_log(
		EXTRES_LOG_WARNING,
		"no syslog at /dev/log and stderr is a pipe: the messages of the daemon in the background are lost (run it with -f to keep them)");
	return 1;
}

void extres_daemonize_finish(struct extres_daemonize *d, int ok)
{
	char status = ok ? 'R' : 'F';
	int null, keep_err;

	if (d->fd < 0)
		return;
	if (ok) {
		if (chdir("/") < 0) {
			/* Harmless: every path we use is absolute. */
		}
		keep_err = !log_to_syslog();
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			if (!keep_err)
				dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
	}
	/* Write last, so the parent exits only after stderr is let go. */
	if (write(d->fd, &status, 1) < 0) {
		/* The parent is gone; nobody is left to tell. */
	}
	close(d->fd);
	d->fd = -1;
}
