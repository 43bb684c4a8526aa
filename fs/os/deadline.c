/* SPDX-License-Identifier: MIT */
#include "os/deadline.h"
#include "base/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often a wait asks stop_requested(): "at once" for a person. */
#define STOP_POLL_MS 50
/* How long a killed child gets to be reaped before we leave it to init. */
#define REAP_MS 500
#define CHILD_FD 3

#define STEP 's'
#define DONE 'd'

static void say(struct extres_deadline_child *c, char what)
{
	ssize_t n;

	do
		n = write(c->fd, &what, 1);
	while (n < 0 && errno == EINTR);
}

void extres_deadline_step(struct extres_deadline_child *c)
{
	say(c, STEP);
}

void extres_deadline_done(struct extres_deadline_child *c)
{
	say(c, DONE);
}

static void child_main(int fd, pid_t parent, int keep_stdio,
		       int (*fn)(void *arg, struct extres_deadline_child *c),
		       void *arg)
{
	struct extres_deadline_child c = { CHILD_FD };
	int null, i;

	/* A caller killed at its own deadline must not leave us blocked on
	 * the mount for good. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	if (fd != CHILD_FD && dup2(fd, CHILD_FD) < 0)
		_exit(1);
	if (!keep_stdio) {
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0)
			_exit(1);
		for (i = 0; i < 3; i++)
			if (null != i && dup2(null, i) < 0)
				_exit(1);
	}
	/* Nothing of the caller's that outlives it: a lock it holds (flock)
	 * must not stay held by a child stuck in the kernel. */
	close_range(CHILD_FD + 1, ~0U, 0);
	_exit(fn(arg, &c) & 0xff);
}

/* SIGKILL `pid` and reap it if it goes within REAP_MS. */
static void kill_child(pid_t pid)
{
	const struct timespec nap = { 0, 10 * 1000000L };
	long long until;

	kill(pid, SIGKILL);
	until = extres_now_ms() + REAP_MS;
	while (waitpid(pid, NULL, WNOHANG) == 0 && extres_now_ms() < until)
		nanosleep(&nap, NULL);
}

/* When the child must next be heard from (-1: no deadline). */
static long long next_deadline(const struct extres_deadline *dl, int done,
			       long long start, long long last)
{
	long long at;

	if (done)
		return -1;
	at = last + dl->step_ms;
	if (dl->total_ms && start + dl->total_ms < at)
		at = start + dl->total_ms;
	return at;
}

/* Follow the child's reports until it closes the pipe (0), a deadline
 * passes (-ETIMEDOUT) or a stop is asked for (-EINTR). */
static int follow(const struct extres_deadline *dl, int fd)
{
	long long start = extres_now_ms(), last = start, at, now;
	int done = 0, timeout, i;
	char buf[256];
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		now = extres_now_ms();
		at = next_deadline(dl, done, start, last);
		if (at >= 0 && now >= at)
			return -ETIMEDOUT;
		timeout = at < 0 ? -1 : (int)(at - now);
		if (dl->stop_requested &&
		    (timeout < 0 || timeout > STOP_POLL_MS))
			timeout = STOP_POLL_MS;
		if (poll(&p, 1, timeout) < 0 && errno != EINTR)
			return -errno;
		if (dl->stop_requested && dl->stop_requested())
			return -EINTR;
		if (!p.revents)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		last = extres_now_ms();
		for (i = 0; i < n; i++)
			if (buf[i] == DONE)
				done = 1;
	}
}

int extres_deadline_run(const struct extres_deadline *dl,
			int (*fn)(void *arg, struct extres_deadline_child *c),
			void *arg)
{
	pid_t parent = getpid(), pid;
	int fds[2], status, r;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1], parent, dl->keep_stdio, fn, arg);
	}
	close(fds[1]);
	r = follow(dl, fds[0]);
	close(fds[0]);
	if (r < 0) {
		kill_child(pid);
		return r;
	}
	/* The pipe closed: the child has exited or is exiting. */
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
