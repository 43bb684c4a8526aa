/* SPDX-License-Identifier: MIT */
#include "daemonize.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void parent_wait(int fd, pid_t child)
{
	char status = 0;
	ssize_t n;

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
		sigset_t none;

		/* The caller blocked the stop signals for its threads; the
		 * waiting parent is a plain command again: ^C ends it. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(fds[1]);
		parent_wait(fds[0], pid);
	}
	close(fds[0]);
	setsid();
	d->fd = fds[1];
	return 0;
}

void extres_daemonize_finish(struct extres_daemonize *d, int ok)
{
	char status = ok ? 'R' : 'F';
	int null;

	if (d->fd < 0)
		return;
	if (ok) {
		if (chdir("/") < 0) {
			/* Harmless: every path we use is absolute. */
		}
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
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
