/* SPDX-License-Identifier: MIT */
#include "script_keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Without pidfd_open (Linux < 5.3), how often the keeper looks for the
 * script's exit. */
#define POLL_SLICE_MS 10
/* How many processes outside the group the sweep tells apart; past that it
 * still kills them all but may count one twice. */
#define SEEN_MAX 256

static void send_msg(int fd, int32_t kind, int32_t value)
{
	struct script_keeper_msg m = { kind, value };
	ssize_t n;

	/* Smaller than PIPE_BUF: one write, never interleaved. */
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

static void close_range_of(unsigned int from, unsigned int to)
{
	struct rlimit rl;
	unsigned int fd;

	if (from > to)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, from, to, 0) == 0)
		return;
#endif
	/* Before Linux 5.9: one by one, up to the highest fd we may have. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < to)
		to = rl.rlim_cur > INT_MAX ? INT_MAX :
					     (unsigned int)rl.rlim_cur;
	for (fd = from; fd <= to && fd < (unsigned int)INT_MAX; fd++)
		close((int)fd);
}

/* Close every fd above 2 but the four in `fds`: the daemon's others (the
 * /dev/fuse channel, lock files, other discoveries' pipes) must not be
 * held by a keeper that outlives it, or reach the script. */
static void close_others(const struct script_keeper_fds *fds)
{
	int keep[4] = { fds->out, fds->err, fds->status, fds->life };
	unsigned int from = 3;
	int i, j, t;

	for (i = 1; i < 4; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < 4; i++) {
		if (keep[i] < (int)from)
			continue;
		close_range_of(from, (unsigned int)keep[i] - 1);
		from = (unsigned int)keep[i] + 1;
	}
	close_range_of(from, ~0u);
}

static void stdio_null(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

/* The script's side of the fork: never returns. */
static void exec_script(char *const argv[], const struct script_keeper_fds *fds,
			pid_t keeper)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig;

	/* Dies with the keeper. Set after the fork, so check that the keeper
	 * did not die before: the signal would never come. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    getppid() != keeper)
		_exit(127);
	/* Its own group, so that whatever it starts is killed with it. */
	setpgid(0, 0);
	if (dup2(fds->out, STDOUT_FILENO) < 0 ||
	    dup2(fds->err, STDERR_FILENO) < 0) {
		send_msg(fds->status, KEEPER_EXEC_FAILED, errno);
		_exit(127);
	}
	/* Default signals and an empty mask, whatever the daemon's threads
	 * and the keeper use. */
	sigemptyset(&dfl.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(argv[0], argv, environ);
	/* The status end is O_CLOEXEC: after a successful exec the driver
	 * hears nothing from here. */
	send_msg(fds->status, KEEPER_EXEC_FAILED, errno);
	_exit(127);
}

/* Parse the pids in "/proc/thread-self/children" ("12 34 "), at most
 * `max`. Returns how many, or -1 when the file cannot be read. */
static int read_children(pid_t *pids, int max)
{
	char buf[4096];
	ssize_t n;
	int fd, count = 0, i;
	long v = -1;

	fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	/* A cut list is fine: the rest shows up on the next round. */
	for (i = 0; i < n && count < max; i++) {
		if (buf[i] >= '0' && buf[i] <= '9') {
			v = (v < 0 ? 0 : v * 10) + (buf[i] - '0');
			continue;
		}
		if (v > 0)
			pids[count++] = (pid_t)v;
		v = -1;
	}
	return count;
}

/*
 * Kill and reap every child the keeper has: what is left of the script's
 * group, and what left it and was reparented here (PR_SET_CHILD_SUBREAPER);
 * killing one hands us its own children, so go on until there are none.
 * Returns how many distinct processes outside group `pgid` were killed, or
 * -1 when the children could not be listed.
 */
static int sweep(pid_t pgid)
{
	pid_t seen[SEEN_MAX], kids[64];
	int n_seen = 0, escaped = 0, n, i, j;

	for (;;) {
		n = read_children(kids, 64);
		if (n < 0) {
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (kill(kids[i], SIGKILL) < 0 ||
			    getpgid(kids[i]) == pgid)
				continue;
			for (j = 0; j < n_seen && seen[j] != kids[i]; j++)
				;
			if (j == n_seen) {
				escaped++;
				if (n_seen < SEEN_MAX)
					seen[n_seen++] = kids[i];
			}
		}
		if (n == 0) {
			if (waitpid(-1, NULL, WNOHANG) > 0)
				continue;
			return escaped;
		}
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			return escaped;
	}
}

void script_keeper_run(char *const argv[], const struct script_keeper_fds *fds)
{
	pid_t self = getpid(), pid;
	struct pollfd p[2];
	sigset_t all;
	siginfo_t si;
	int pidfd, exited = 0, n;

	/* Only SIGKILL ends the keeper: a ^C to the daemon's process group,
	 * or a SIGTERM to all of a service's processes, must not leave the
	 * script's escaped children without anyone to kill them. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	close_others(fds);
	stdio_null();
	/* Before Linux 3.4 there is none: the sweep then finds only what
	 * is still our child. */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	pid = fork();
	if (pid == 0)
		exec_script(argv, fds, self);
	if (pid < 0) {
		send_msg(fds->status, KEEPER_FORK_FAILED, errno);
		_exit(0);
	}
	/* Both sides set the group, so that it exists whichever runs first. */
	setpgid(pid, pid);
	close(fds->out);
	close(fds->err);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	for (;;) {
		p[0] = (struct pollfd){ .fd = fds->life, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = exited ? -1 : pidfd,
					.events = POLLIN };
		n = poll(p, 2, !exited && pidfd < 0 ? POLL_SLICE_MS : -1);
		if (n < 0 && errno != EINTR)
			break;
		if (!exited) {
			/* WNOWAIT: the script stays a zombie until its group
			 * is killed, so that its id cannot name another. */
			si.si_pid = 0;
			if (waitid(P_PID, (id_t)pid, &si,
				   WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == pid) {
				exited = 1;
				send_msg(fds->status,
					 si.si_code == CLD_EXITED ?
						 KEEPER_EXITED :
						 KEEPER_KILLED,
					 si.si_status);
			}
		}
		if (n > 0 && p[0].revents)
			break;
	}

	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	send_msg(fds->status, KEEPER_SWEPT, sweep(pid));
	_exit(0);
}
