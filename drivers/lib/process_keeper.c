/* SPDX-License-Identifier: MIT */
#include "process_keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How many processes of the script's tree the keeper keeps track of; past
 * that, the rest is still killed with the group but not looked for. */
#define TRACK_MAX 512
/* Rounds of stopping what the tree holds before killing it: each round
 * finds what was forked during the last. */
#define FREEZE_ROUNDS 16

struct proc {
	pid_t pid;
	unsigned long long start; /* field 22 of /proc/PID/stat */
	int foreign; /* outside the script's process group */
};

struct track {
	pid_t pgid;
	int n;
	struct proc p[TRACK_MAX];
};

static void send_i32(int fd, int32_t v)
{
	ssize_t n;

	do
		n = write(fd, &v, sizeof(v));
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

/* Close every fd above 2 but `a` and `b` (either may be -1): the daemon's
 * others (/dev/fuse, lock files) must not be held by what it starts. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	unsigned int from = 3;

	if (lo >= 3) {
		close_range_of(from, (unsigned int)lo - 1);
		from = (unsigned int)lo + 1;
	}
	if (hi >= 3) {
		close_range_of(from, (unsigned int)hi - 1);
		from = (unsigned int)hi + 1;
	}
	close_range_of(from, ~0u);
}

void process_keeper_exec(char *const argv[], pid_t parent, int out, int err,
			 int status)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int32_t e;
	int sig;

	/* Set after the fork: if the parent died in between, the signal
	 * never comes, so look. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    getppid() != parent)
		_exit(127);
	/* Its own group, so that whatever it starts is killed with it. */
	setpgid(0, 0);
	if (dup2(out, STDOUT_FILENO) < 0 || dup2(err, STDERR_FILENO) < 0)
		goto fail;
	close_others(status, -1);
	/* Default signals and an empty mask, whatever the daemon's threads
	 * use. */
	sigemptyset(&dfl.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(argv[0], argv, environ);
fail:
	/* `status` is O_CLOEXEC: after a successful exec, EOF says it. */
	e = errno;
	send_i32(status, e);
	_exit(127);
}

static void fmt_path(char *dst, const char *a, pid_t pid, const char *b,
		     pid_t pid2, const char *c)
{
	char num[2][16];
	pid_t v[2] = { pid, pid2 };
	int i, k;

	for (i = 0; i < 2; i++) {
		char rev[16];
		int n = 0;
		unsigned int x = (unsigned int)v[i];

		do
			rev[n++] = (char)('0' + x % 10);
		while ((x /= 10) && n < 15);
		for (k = 0; k < n; k++)
			num[i][k] = rev[n - 1 - k];
		num[i][n] = '\0';
	}
	for (; *a; a++)
		*dst++ = *a;
	for (k = 0; num[0][k]; k++)
		*dst++ = num[0][k];
	for (; *b; b++)
		*dst++ = *b;
	for (k = 0; pid2 && num[1][k]; k++)
		*dst++ = num[1][k];
	for (; *c; c++)
		*dst++ = *c;
	*dst = '\0';
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Field 22 of /proc/PID/stat (start time), or 0 when the process is gone. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p = NULL, *q;
	unsigned long long v = 0;
	int field;

	fmt_path(path, "/proc/", pid, "/stat", 0, "");
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	/* The name may hold anything: count fields after its last ')'. */
	for (q = buf; *q; q++)
		if (*q == ')')
			p = q;
	if (!p)
		return 0;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (unsigned long long)(*p++ - '0');
	return v;
}

static struct proc *find(struct track *t, pid_t pid)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->p[i].pid == pid)
			return &t->p[i];
	return NULL;
}

/*
 * Walk the tree under `root` (children of each process's main thread).
 * With `all`, track (and SIGSTOP) every process found, else only those
 * outside the group. Returns how many were added.
 */
static int walk(struct track *t, pid_t root, int all)
{
	pid_t queue[TRACK_MAX];
	int head = 0, tail = 0, added = 0;
	char path[80], buf[4096];

	queue[tail++] = root;
	while (head < tail) {
		pid_t p = queue[head++];
		long v = -1;
		ssize_t n;
		int i;

		fmt_path(path, "/proc/", p, "/task/", p, "/children");
		n = read_small(path, buf, sizeof(buf));
		for (i = 0; n > 0 && i <= n; i++) {
			pid_t kid;
			int foreign;

			if (buf[i] >= '0' && buf[i] <= '9') {
				v = (v < 0 ? 0 : v * 10) + (buf[i] - '0');
				continue;
			}
			if (v <= 0)
				continue;
			kid = (pid_t)v;
			v = -1;
			if (tail < TRACK_MAX)
				queue[tail++] = kid;
			foreign = getpgid(kid) != t->pgid;
			if (find(t, kid) || (!all && !foreign) ||
			    t->n == TRACK_MAX)
				continue;
			if (all)
				kill(kid, SIGSTOP);
			t->p[t->n++] =
				(struct proc){ kid, start_time(kid), foreign };
			added++;
		}
	}
	return added;
}

/* Walk from the script and from every tracked process: those that left
 * the group may have lost their parent in the tree already. */
static int walk_all(struct track *t, pid_t script, int all)
{
	int added = walk(t, script, all), i;

	for (i = 0; i < t->n; i++)
		if (t->p[i].start && start_time(t->p[i].pid) == t->p[i].start)
			added += walk(t, t->p[i].pid, all);
	return added;
}

void process_keeper_run(pid_t pid, const struct process_keeper_fds *fds)
{
	struct track t = { .pgid = pid };
	struct pollfd p;
	int32_t killed = 0;
	sigset_t all;
	int round, i, n;

	/* Only SIGKILL ends the keeper, and it leaves the daemon's session
	 * and group: a ^C, or a SIGTERM to all of a service's processes,
	 * must not leave the script's escaped children to live on. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	close_others(fds->status, fds->life);
	setsid();

	for (;;) {
		p = (struct pollfd){ .fd = fds->life, .events = POLLIN };
		n = poll(&p, 1, PROCESS_KEEPER_WALK_MS);
		if (n > 0)
			break;
		if (n < 0 && errno != EINTR)
			break;
		walk_all(&t, pid, 0);
	}

	/* Stop the tree first: a killed parent would hand its children to
	 * init before we saw them. */
	for (round = 0; round < FREEZE_ROUNDS; round++)
		if (walk_all(&t, pid, 1) == 0)
			break;
	kill(-pid, SIGKILL);
	for (i = 0; i < t.n; i++) {
		if (!t.p[i].start || start_time(t.p[i].pid) != t.p[i].start)
			continue;
		if (kill(t.p[i].pid, SIGKILL) == 0 && t.p[i].foreign)
			killed++;
	}
	send_i32(fds->status, killed);
	_exit(0);
}
