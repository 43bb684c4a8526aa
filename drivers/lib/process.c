/* SPDX-License-Identifier: MIT */
#include "lib/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/process_keeper.h"

/* How long the keeper gets to kill and reap what the program left. */
#define KEEPER_DEADLINE_MS 500

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Move *fd above 0-2 (keeping O_CLOEXEC): the keeper sets up the program's
 * stdin, stdout and stderr with dup2(), which must not overwrite one with
 * another when the daemon runs with its own standard fds closed. */
static int move_above_stdio(int *fd)
{
	int n;

	if (*fd > 2)
		return 0;
	n = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (n < 0)
		return -errno;
	close(*fd);
	*fd = n;
	return 0;
}

/* A pipe with both ends above 2; `nonblock_read`: only our reading end,
 * since the program's stdout must stay blocking. */
static int make_pipe(int *ret_read, int *ret_write, int nonblock_read)
{
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	r = move_above_stdio(&p[0]);
	if (r == 0)
		r = move_above_stdio(&p[1]);
	if (r == 0 && nonblock_read && fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
		r = -errno;
	if (r < 0) {
		close(p[0]);
		close(p[1]);
		return r;
	}
	*ret_read = p[0];
	*ret_write = p[1];
	return 0;
}

/* Read one int32_t from `fd` (blocking, or until `deadline_ms`): 0 and
 * *ret, or -1 at EOF or on an error. */
static int read_i32(int fd, int64_t deadline_ms, int32_t *ret)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int32_t v;
	ssize_t n;

	for (;;) {
		int64_t left = deadline_ms - now_ms();

		if (left <= 0)
			return -1;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -1;
		n = read(fd, &v, sizeof(v));
		if (n == (ssize_t)sizeof(v)) {
			*ret = v;
			return 0;
		}
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return -1;
	}
}

int process_start(struct process *run, char *const argv[])
{
	struct process_keeper_fds kfds = { -1, -1 };
	int w[2] = { -1, -1 }, exec_r = -1, exec_w = -1, nul = -1, r;
	pid_t self = getpid();
	int32_t e;

	r = make_pipe(&run->fd[PROCESS_OUT], &w[PROCESS_OUT], 1);
	if (r == 0)
		r = make_pipe(&run->fd[PROCESS_ERR], &w[PROCESS_ERR], 1);
	if (r == 0)
		r = make_pipe(&exec_r, &exec_w, 0);
	if (r == 0)
		r = make_pipe(&run->status, &kfds.status, 0);
	if (r == 0)
		r = make_pipe(&kfds.life, &run->life, 0);
	if (r < 0)
		goto out;
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0) {
		r = -errno;
		goto out;
	}
	r = move_above_stdio(&nul);
	if (r < 0)
		goto out;

	run->pid = fork();
	if (run->pid == 0) {
		if (dup2(nul, STDIN_FILENO) < 0)
			_exit(127);
		process_keeper_exec(argv, self, w[PROCESS_OUT], w[PROCESS_ERR],
				    exec_w);
	}
	if (run->pid < 0) {
		r = -errno;
		goto out;
	}
	/* Both sides set the group, so that it exists whichever runs
	 * first: the keeper and process_finish() kill it. */
	setpgid(run->pid, run->pid);
	close_fd(&w[PROCESS_OUT]);
	close_fd(&w[PROCESS_ERR]);
	close_fd(&exec_w);
	/* EOF once the exec succeeded (the end is O_CLOEXEC), else its
	 * errno; the exec takes no longer than the kernel needs. */
	if (read_i32(exec_r, now_ms() + 10000, &e) == 0)
		run->exec_errno = e > 0 ? e : EIO;
	run->pidfd = (int)syscall(SYS_pidfd_open, run->pid, 0);
	if (run->pidfd < 0)
		run->pidfd = -1;

	run->keeper = fork();
	if (run->keeper == 0)
		process_keeper_run(run->pid, &kfds);
	/* Without a keeper the program still dies with its group. */
	if (run->keeper < 0)
		run->keeper = -1;
out:
	close_fd(&w[PROCESS_OUT]);
	close_fd(&w[PROCESS_ERR]);
	close_fd(&exec_r);
	close_fd(&exec_w);
	close_fd(&nul);
	close_fd(&kfds.status);
	close_fd(&kfds.life);
	if (r < 0) {
		close_fd(&run->fd[PROCESS_OUT]);
		close_fd(&run->fd[PROCESS_ERR]);
		close_fd(&run->status);
		close_fd(&run->life);
	}
	return r;
}

/* Read what one pipe has. stdout past PROCESS_OUTPUT_MAX is an error; stderr keeps
 * its last PROCESS_OUTPUT_MAX bytes, where the reason for a failure is. */
static int drain(struct process *run, int i)
{
	char scratch[4096];
	ssize_t n;

	for (;;) {
		size_t room = PROCESS_OUTPUT_MAX - run->len[i];
		char *dst = room ? run->buf[i] + run->len[i] : scratch;

		n = read(run->fd[i], dst, room ? room : sizeof(scratch));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		if (n == 0) {
			close_fd(&run->fd[i]);
			return 0;
		}
		if (room) {
			run->len[i] += (size_t)n;
		} else if (i == PROCESS_OUT) {
			run->overflow = 1;
			return 0;
		} else {
			memmove(run->buf[i], run->buf[i] + n,
				PROCESS_OUTPUT_MAX - (size_t)n);
			memcpy(run->buf[i] + PROCESS_OUTPUT_MAX - n, scratch,
			       (size_t)n);
		}
	}
}

/* Has the program exited? Leaves it a zombie, so that its pid, and so its
 * process group id, cannot be reused before we kill the group. */
static int check_exit(struct process *run)
{
	siginfo_t si;

	si.si_pid = 0;
	if (waitid(P_PID, (id_t)run->pid, &si, WEXITED | WNOHANG | WNOWAIT) <
	    0) {
		if (errno == EINTR)
			return 0;
		return -errno;
	}
	if (si.si_pid != run->pid)
		return 0;
	run->exited = 1;
	if (si.si_code == CLD_EXITED)
		run->exit_code = si.si_status;
	else
		run->exit_signal = si.si_status;
	return 0;
}

int process_pump(struct process *run, uint64_t timeout_ms,
		 int (*stop_requested)(void *arg), void *arg)
{
	/* now_ms() truncates, so the start may be up to 1 ms past it: one ms
	 * more keeps the program from ever getting less than its timeout. */
	int64_t deadline = now_ms() + (int64_t)timeout_ms + 1, grace_end = 0;
	int r;

	for (;;) {
		struct pollfd pfd[3];
		int nfds = 0, i, n;
		int64_t now, wait;

		if (run->fd[PROCESS_OUT] < 0 && run->fd[PROCESS_ERR] < 0 &&
		    run->exited)
			return 0;
		if (stop_requested && stop_requested(arg)) {
			run->stopped = 1;
			return 0;
		}
		now = now_ms();
		if (!run->exited) {
			if (now >= deadline) {
				run->timed_out = 1;
				return 0;
			}
			wait = deadline - now;
		} else {
			if (now >= grace_end) {
				run->lingering = 1;
				return 0;
			}
			wait = grace_end - now;
		}
		/* Without pidfd_open (Linux < 5.3) the exit is looked for
		 * at each slice too. */
		if (wait > PROCESS_STOP_SLICE_MS)
			wait = PROCESS_STOP_SLICE_MS;

		for (i = PROCESS_OUT; i <= PROCESS_ERR; i++) {
			if (run->fd[i] >= 0)
				pfd[nfds++] =
					(struct pollfd){ .fd = run->fd[i],
							 .events = POLLIN };
		}
		if (run->status >= 0)
			pfd[nfds++] = (struct pollfd){ .fd = run->status,
						       .events = POLLIN };

		n = poll(pfd, (nfds_t)nfds, (int)wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = PROCESS_OUT; i <= PROCESS_ERR; i++) {
			if (run->fd[i] < 0)
				continue;
			r = drain(run, i);
			if (r < 0)
				return r;
			if (run->overflow)
				return 0;
		}
		if (!run->exited) {
			r = check_exit(run);
			if (r < 0)
				return r;
			if (run->exited)
				grace_end = now_ms() + PROCESS_EXIT_GRACE_MS;
		}
	}
}

/* Pull the keeper's lifeline: it kills what left the group (and the
 * group); kill the group too, as there may be no keeper. */
void process_finish(struct process *run)
{
	int64_t deadline = now_ms() + KEEPER_DEADLINE_MS;
	int32_t n;
	char one = 1;

	close_fd(&run->pidfd);
	run->escaped = -1;
	if (run->keeper > 0) {
		if (write(run->life, &one, 1) < 0) {
			/* Gone already: its status pipe says so. */
		}
		if (read_i32(run->status, deadline, &n) == 0)
			run->escaped = n;
		else
			/* Stuck (a process it cannot stop): never hold up a
			 * stop for it. */
			kill(run->keeper, SIGKILL);
		while (waitpid(run->keeper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close_fd(&run->life);
	close_fd(&run->status);
	/* The program is not reaped yet, so the group id is still ours. */
	kill(-run->pid, SIGKILL);
	while (waitpid(run->pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Whatever held the output is dead now, unless it escaped us: a
	 * message must not say it was killed when it lives on. */
	deadline = now_ms() + PROCESS_EXIT_GRACE_MS;
	while (run->lingering &&
	       (run->fd[PROCESS_OUT] >= 0 || run->fd[PROCESS_ERR] >= 0)) {
		struct pollfd p[2];
		int64_t left = deadline - now_ms();
		int i, nfds = 0;

		for (i = PROCESS_OUT; i <= PROCESS_ERR; i++)
			if (run->fd[i] >= 0)
				p[nfds++] = (struct pollfd){ .fd = run->fd[i],
							     .events = POLLIN };
		if (left <= 0 || poll(p, (nfds_t)nfds, (int)left) <= 0)
			break;
		for (i = PROCESS_OUT; i <= PROCESS_ERR; i++) {
			char scratch[4096];
			ssize_t r;

			if (run->fd[i] < 0)
				continue;
			do
				r = read(run->fd[i], scratch, sizeof(scratch));
			while (r > 0);
			if (r == 0)
				close_fd(&run->fd[i]);
		}
	}
	run->holder_left =
		run->fd[PROCESS_OUT] >= 0 || run->fd[PROCESS_ERR] >= 0;
	close_fd(&run->fd[PROCESS_OUT]);
	close_fd(&run->fd[PROCESS_ERR]);
}

int process_init(struct process *run)
{
	*run = (struct process){
		.pid = -1,
		.pidfd = -1,
		.keeper = -1,
		.status = -1,
		.life = -1,
		.fd = { -1, -1 },
	};
	run->buf[PROCESS_OUT] = malloc(PROCESS_OUTPUT_MAX);
	run->buf[PROCESS_ERR] = malloc(PROCESS_OUTPUT_MAX);
	return run->buf[PROCESS_OUT] && run->buf[PROCESS_ERR] ? 0 : -ENOMEM;
}

void process_clear(struct process *run)
{
	free(run->buf[PROCESS_OUT]);
	free(run->buf[PROCESS_ERR]);
	run->buf[PROCESS_OUT] = run->buf[PROCESS_ERR] = NULL;
}
