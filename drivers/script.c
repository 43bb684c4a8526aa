/* SPDX-License-Identifier: MIT */
/*
 * The script driver: Flink's GPU discovery-script contract.
 *
 * Params:
 *   discovery-script.path     required; a relative path resolves against
 *                             $FLINK_HOME when set and non-empty, else the
 *                             config file's directory.
 *   discovery-script.args     optional; a string split into words on
 *                             whitespace (no shell quoting, as Flink), or a
 *                             sequence of scalars, one argument each.
 *   discovery-script.timeout  optional; a duration from 1 ms to 86400 s:
 *                             seconds ("10", "0.5", at most 3 decimals,
 *                             "10s") or milliseconds ("500ms"). Default 10 s,
 *                             Flink's fixed discovery timeout.
 *
 * discover() runs the script without a shell as `path amount args...`, stdin
 * from /dev/null, in its own process group, and parses its standard output
 * with script_output.c: Flink's comma list or Spark's JSON object. Each item
 * becomes one info with the single property "index", in output order.
 */
#include <extres/driver.h>
#include <extres/driver_util.h>

#include "script_keeper.h"
#include "script_output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARAM_PATH "discovery-script.path"
#define PARAM_ARGS "discovery-script.args"
#define PARAM_TIMEOUT "discovery-script.timeout"

#define DEFAULT_TIMEOUT_MS 10000u
#define MAX_TIMEOUT_MS (86400u * 1000u)
#define OUTPUT_MAX (64u * 1024u)
/* How much of the script's stderr a message quotes: its end, where scripts
 * (and shells, and Python) put the reason they failed. */
#define STDERR_QUOTE_MAX 1000u
/* How much of the script's stdout a message about it quotes: its start,
 * where a message printed instead of the indexes is. */
#define STDOUT_QUOTE_MAX 256u
/* After the script exits, how long a background child of it may keep the
 * pipes open before we stop reading and kill its process group. */
#define EXIT_GRACE_MS 100
/* How often a wait looks whether the daemon is asked to stop: a stop is
 * obeyed within a second, script killed and all. */
#define STOP_SLICE_MS 50
/* How long the keeper gets to kill and reap what the script left. */
#define KEEPER_DEADLINE_MS 500

struct script {
	const struct extres_host *host;
	char *path;
	char **argv; /* path, amount, args..., NULL */
	size_t argc;
	uint64_t timeout_ms;
};

enum { OUT, ERR };

/* One run of the script, from spawn to reap. */
struct run {
	pid_t pid; /* the script's */
	int pidfd;    /* -1 when the kernel has no pidfd_open */
	pid_t keeper; /* script_keeper.h; -1 when none */
	int status; /* read end: the exec's errno, then the keeper's count */
	int life; /* write end of the keeper's lifeline */
	int fd[2];    /* read ends of stdout and stderr; -1 once at EOF */
	char *buf[2]; /* OUTPUT_MAX bytes each */
	size_t len[2];
	int exited;    /* the script is a zombie: waited for, not reaped */
	int timed_out;
	int stopped; /* the daemon was asked to stop */
	int overflow;  /* stdout went past OUTPUT_MAX */
	int lingering; /* a pipe was still open after the grace period */
	int exec_errno; /* the script could not be started */
	int exit_code;   /* once exited: its exit status, */
	int exit_signal; /* or the signal that killed it */
	int escaped; /* killed outside its group; -1: unknown */
	int holder_left; /* after all that, the output is still held open */
};

static void free_argv(char **argv, size_t argc)
{
	size_t i;

	if (!argv)
		return;
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static void script_free(struct script *s)
{
	if (!s)
		return;
	free_argv(s->argv, s->argc);
	free(s->path);
	free(s);
}

/* Append a copy of `len` bytes of `str`, keeping argv NULL-terminated. */
static int argv_push(struct script *s, const char *str, size_t len)
{
	char **argv = reallocarray(s->argv, s->argc + 2, sizeof(*argv));
	char *copy;

	if (!argv)
		return -ENOMEM;
	s->argv = argv;
	copy = strndup(str, len);
	if (!copy)
		return -ENOMEM;
	argv[s->argc++] = copy;
	argv[s->argc] = NULL;
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int parse_args(struct script *s, const struct extres_param *p)
{
	const struct extres_host *host = s->host;
	const char *w, *e;
	uint32_t i;
	int r;

	if (!p)
		return 0;
	if (p->kind == EXTRES_PARAM_SEQUENCE) {
		for (i = 0; i < p->count; i++) {
			const struct extres_param *item = &p->items[i];

			if (item->kind != EXTRES_PARAM_SCALAR || !item->value) {
				host->error(host,
					    "param " PARAM_ARGS ": item %" PRIu32
					    " is not a string",
					    i + 1);
				return -EINVAL;
			}
			r = argv_push(s, item->value, strlen(item->value));
			if (r < 0)
				goto oom;
		}
		return 0;
	}
	if (p->kind != EXTRES_PARAM_SCALAR || !p->value) {
		host->error(host, "param " PARAM_ARGS
			    " must be a string or a sequence of strings");
		return -EINVAL;
	}
	/* Flink splits on whitespace with no quoting; so do we. */
	for (w = p->value; *w;) {
		while (*w && is_space(*w))
			w++;
		for (e = w; *e && !is_space(*e); e++)
			;
		if (e > w) {
			r = argv_push(s, w, (size_t)(e - w));
			if (r < 0)
				goto oom;
		}
		w = e;
	}
	return 0;
oom:
	host->error(host, "out of memory");
	return r;
}

/* "10", "0.5", "10s", "1.25s", "500ms" -> milliseconds, 1 ms .. 1 day. */
static int parse_timeout(const char *text, uint64_t *ret_ms)
{
	unsigned long long whole;
	uint64_t frac = 0, scale = 1000, ms;
	int has_frac = 0;
	char *end;

	/* strtoull would take a sign or leading blanks; a duration has none. */
	if (!(*text >= '0' && *text <= '9'))
		return -EINVAL;
	errno = 0;
	whole = strtoull(text, &end, 10);
	if (errno != 0 || whole > MAX_TIMEOUT_MS)
		return -ERANGE;
	if (*end == '.') {
		has_frac = 1;
		end++;
		if (!(*end >= '0' && *end <= '9'))
			return -EINVAL;
		while (*end >= '0' && *end <= '9') {
			if (scale == 1)
				return -EINVAL; /* finer than 1 ms */
			scale /= 10;
			frac += (uint64_t)(*end - '0') * scale;
			end++;
		}
	}
	if (strcmp(end, "ms") == 0) {
		if (has_frac)
			return -EINVAL;
		ms = whole;
	} else if (*end == '\0' || strcmp(end, "s") == 0) {
		ms = (uint64_t)whole * 1000 + frac;
	} else {
		return -EINVAL;
	}
	if (ms == 0)
		return -EINVAL;
	if (ms > MAX_TIMEOUT_MS)
		return -ERANGE;
	*ret_ms = ms;
	return 0;
}

/* The timeout as an operator wrote it, in seconds: "10 s", "0.5 s". */
static void format_timeout(char *dst, size_t len, uint64_t ms)
{
	char frac[4];
	int n;

	if (ms % 1000 == 0) {
		snprintf(dst, len, "%" PRIu64 " s", ms / 1000);
		return;
	}
	snprintf(frac, sizeof(frac), "%03" PRIu64, ms % 1000);
	for (n = 3; n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(dst, len, "%" PRIu64 ".%s s", ms / 1000, frac);
}

static int resolve_path(const struct extres_host *host, const char *path,
			char **ret_path)
{
	const char *base = getenv("FLINK_HOME");
	char *full;
	size_t n;

	if (path[0] == '/')
		base = NULL;
	else if (!base || !*base)
		base = host->config_dir;

	if (!base || !*base) {
		full = strdup(path);
	} else {
		n = strlen(base);
		if (asprintf(&full, "%s%s%s", base,
			     base[n - 1] == '/' ? "" : "/", path) < 0)
			full = NULL;
	}
	if (!full)
		return -ENOMEM;
	*ret_path = full;
	return 0;
}

/* Fail at open(), where the operator looks, not at the first discovery. */
static int check_script(const struct extres_host *host, const char *path)
{
	struct stat st;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		host->error(host, "discovery script %s: %s", path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		host->error(host, "discovery script %s is not a regular file",
			    path);
		return -EINVAL;
	}
	if (access(path, X_OK) < 0) {
		r = -errno;
		host->error(host, "discovery script %s is not executable: %s",
			    path, strerror(-r));
		return r;
	}
	return 0;
}

static const char *const known_params[] = { PARAM_PATH, PARAM_ARGS,
					    PARAM_TIMEOUT, NULL };

/* The flags of Flink's GPU scripts that make them record what they take. */
static const char *const coordination_flags[] = { "--enable-coordination-mode",
						  "--enable-coordination",
						  NULL };
#define COORDINATION_FILE_FLAG "--coordination-file"
/* Where Flink's scripts coordinate when not told otherwise. */
#define FLINK_COORDINATION_FILE "/var/tmp/flink-gpu-coordination"

/*
 * A script asked to coordinate takes its devices through its own file:
 * tell the core, which then checks every line rather than taking devices
 * itself. The file is the argument after --coordination-file, else
 * Flink's default. A core without the hook coordinates on its own.
 */
static int report_coordination(struct script *s)
{
	const struct extres_host *host = s->host;
	const char *flag = NULL, *file = NULL;
	size_t i;
	int r;

	/* argv[0] and [1] are the path and the amount. */
	for (i = 2; i < s->argc; i++) {
		const char *const *f;

		for (f = coordination_flags; *f && !flag; f++)
			if (strcmp(s->argv[i], *f) == 0)
				flag = *f;
		if (!file && i + 1 < s->argc &&
		    strcmp(s->argv[i], COORDINATION_FILE_FLAG) == 0)
			file = s->argv[i + 1];
	}
	if (!flag || !EXTRES_HAS_MEMBER(host, coordinated_by) ||
	    !host->coordinated_by)
		return 0;
	r = host->coordinated_by(host, file ? file : FLINK_COORDINATION_FILE,
				 flag);
	if (r < 0)
		host->error(host, "discovery script %s, run with %s: %s",
			    s->path, flag, strerror(-r));
	return r;
}

static int32_t script_open(const struct extres_host *host,
			   const struct extres_param *params, void **ret_handle)
{
	const struct extres_param *p;
	const char *path, *timeout;
	struct script *s;
	char amount[24];
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		host->error(host, "out of memory");
		return -ENOMEM;
	}
	s->host = host;
	s->timeout_ms = DEFAULT_TIMEOUT_MS;

	extres_params_warn_unknown(host, params, known_params);

	p = extres_param_get(params, PARAM_PATH);
	if (!p) {
		r = host->error(host, "param " PARAM_PATH " is not set");
		goto fail;
	}
	path = extres_param_scalar(params, PARAM_PATH);
	if (!path || !*path) {
		r = host->error(host, "param " PARAM_PATH
				" must be a non-empty string");
		goto fail;
	}

	p = extres_param_get(params, PARAM_TIMEOUT);
	if (p) {
		timeout = extres_param_scalar(params, PARAM_TIMEOUT);
		if (!timeout || parse_timeout(timeout, &s->timeout_ms) < 0) {
			r = host->error(host,
					"param " PARAM_TIMEOUT
					": invalid value \"%s\" (expected a duration from 1 ms to 86400 s: 10, 0.5, 10s or 500ms)",
					timeout ? timeout : "(not a string)");
			goto fail;
		}
	}

	r = resolve_path(host, path, &s->path);
	if (r < 0) {
		host->error(host, "out of memory");
		goto fail;
	}
	r = check_script(host, s->path);
	if (r < 0)
		goto fail;
	/* The script runs with the daemon's rights: nobody else may be able
	 * to change it. A core older than the check cannot make it. */
	if (EXTRES_HAS_MEMBER(host, check_trusted_path) &&
	    host->check_trusted_path) {
		r = host->check_trusted_path(host, s->path, "discovery script");
		if (r < 0)
			goto fail;
	}

	snprintf(amount, sizeof(amount), "%" PRIu64, host->amount);
	r = argv_push(s, s->path, strlen(s->path));
	if (r == 0)
		r = argv_push(s, amount, strlen(amount));
	if (r < 0) {
		host->error(host, "out of memory");
		goto fail;
	}
	r = parse_args(s, extres_param_get(params, PARAM_ARGS));
	if (r == 0)
		r = report_coordination(s);
	if (r < 0)
		goto fail;

	*ret_handle = s;
	return 0;
fail:
	script_free(s);
	return r;
}

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

/* Move *fd above 0-2 (keeping O_CLOEXEC): the keeper sets up the script's
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
 * since the script's stdout must stay blocking. */
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

/*
 * Start the script and its keeper (script_keeper.h); on success the caller
 * must finish_run(). Returns 0 or a negative errno, with run->exec_errno
 * set when the exec itself failed (ENOENT, EACCES, ENOEXEC).
 */
static int spawn(struct script *s, struct run *run)
{
	struct script_keeper_fds kfds = { -1, -1 };
	int w[2] = { -1, -1 }, exec_r = -1, exec_w = -1, nul = -1, r;
	pid_t self = getpid();
	int32_t e;

	r = make_pipe(&run->fd[OUT], &w[OUT], 1);
	if (r == 0)
		r = make_pipe(&run->fd[ERR], &w[ERR], 1);
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
		script_keeper_exec(s->argv, self, w[OUT], w[ERR], exec_w);
	}
	if (run->pid < 0) {
		r = -errno;
		goto out;
	}
	/* Both sides set the group, so that it exists whichever runs
	 * first: the keeper and finish_run() kill it. */
	setpgid(run->pid, run->pid);
	close_fd(&w[OUT]);
	close_fd(&w[ERR]);
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
		script_keeper_run(run->pid, &kfds);
	/* Without a keeper the script still dies with its group. */
	if (run->keeper < 0)
		run->keeper = -1;
out:
	close_fd(&w[OUT]);
	close_fd(&w[ERR]);
	close_fd(&exec_r);
	close_fd(&exec_w);
	close_fd(&nul);
	close_fd(&kfds.status);
	close_fd(&kfds.life);
	if (r < 0) {
		close_fd(&run->fd[OUT]);
		close_fd(&run->fd[ERR]);
		close_fd(&run->status);
		close_fd(&run->life);
	}
	return r;
}

/* Read what one pipe has. stdout past OUTPUT_MAX is an error; stderr keeps
 * its last OUTPUT_MAX bytes, where the reason for a failure is. */
static int drain(struct run *run, int i)
{
	char scratch[4096];
	ssize_t n;

	for (;;) {
		size_t room = OUTPUT_MAX - run->len[i];
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
		} else if (i == OUT) {
			run->overflow = 1;
			return 0;
		} else {
			memmove(run->buf[i], run->buf[i] + n,
				OUTPUT_MAX - (size_t)n);
			memcpy(run->buf[i] + OUTPUT_MAX - n, scratch,
			       (size_t)n);
		}
	}
}

/* Has the script exited? Leaves it a zombie, so that its pid, and so its
 * process group id, cannot be reused before we kill the group. */
static int check_exit(struct run *run)
{
	siginfo_t si;

	si.si_pid = 0;
	if (waitid(P_PID, (id_t)run->pid, &si,
		   WEXITED | WNOHANG | WNOWAIT) < 0) {
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

static int stop_requested(const struct extres_host *host)
{
	if (host->struct_size < offsetof(struct extres_host, stop_requested) +
					sizeof(host->stop_requested) ||
	    !host->stop_requested)
		return 0;
	return host->stop_requested(host) != 0;
}

/*
 * Read both pipes until both are at EOF and the script has exited, the
 * timeout passes, stdout overflows, the daemon is asked to stop, or the
 * script has exited and the grace period for its pipes is over. Returns 0
 * or a negative errno.
 */
static int pump(const struct extres_host *host, struct run *run,
		uint64_t timeout_ms)
{
	/* now_ms() truncates, so the start may be up to 1 ms past it: one ms
	 * more keeps the script from ever getting less than its timeout. */
	int64_t deadline = now_ms() + (int64_t)timeout_ms + 1, grace_end = 0;
	int r;

	for (;;) {
		struct pollfd pfd[3];
		int nfds = 0, i, n;
		int64_t now, wait;

		if (run->fd[OUT] < 0 && run->fd[ERR] < 0 && run->exited)
			return 0;
		if (stop_requested(host)) {
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
		if (wait > STOP_SLICE_MS)
			wait = STOP_SLICE_MS;

		for (i = OUT; i <= ERR; i++) {
			if (run->fd[i] >= 0)
				pfd[nfds++] = (struct pollfd){ .fd = run->fd[i],
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
		for (i = OUT; i <= ERR; i++) {
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
				grace_end = now_ms() + EXIT_GRACE_MS;
		}
	}
}

/*
 * Pull the keeper's lifeline: it kills what left the script's group (and
 * the group); kill the group too (there may be no keeper) and reap the
 * script and the keeper. No zombie, no fd, no process of the script's left.
 */
static void finish_run(struct run *run)
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
	/* The script is not reaped yet, so the group id is still ours. */
	kill(-run->pid, SIGKILL);
	while (waitpid(run->pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Whatever held the output is dead now, unless it escaped us: a
	 * message must not say it was killed when it lives on. */
	deadline = now_ms() + EXIT_GRACE_MS;
	while (run->lingering && (run->fd[OUT] >= 0 || run->fd[ERR] >= 0)) {
		struct pollfd p[2];
		int64_t left = deadline - now_ms();
		int i, nfds = 0;

		for (i = OUT; i <= ERR; i++)
			if (run->fd[i] >= 0)
				p[nfds++] = (struct pollfd){ .fd = run->fd[i],
							     .events = POLLIN };
		if (left <= 0 || poll(p, (nfds_t)nfds, (int)left) <= 0)
			break;
		for (i = OUT; i <= ERR; i++) {
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
	run->holder_left = run->fd[OUT] >= 0 || run->fd[ERR] >= 0;
	close_fd(&run->fd[OUT]);
	close_fd(&run->fd[ERR]);
}

/* The end of stderr for a message: control characters blanked, at most
 * STDERR_QUOTE_MAX bytes, cut on a UTF-8 character boundary. */
static void quote_stderr(char *dst, size_t dst_len, const char *buf,
			 size_t len)
{
	size_t start = 0, o = 0, i;

	while (len > 0 && is_space(buf[len - 1]))
		len--;
	while (start < len && is_space(buf[start]))
		start++;
	if (len - start > STDERR_QUOTE_MAX) {
		start = len - STDERR_QUOTE_MAX;
		while (start < len && ((unsigned char)buf[start] & 0xc0) == 0x80)
			start++;
		o = (size_t)snprintf(dst, dst_len, "...");
	}
	for (i = start; i < len && o + 1 < dst_len; i++) {
		unsigned char c = (unsigned char)buf[i];

		dst[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	dst[o] = '\0';
}

static int report_sink(struct script *s, struct extres_sink *sink,
		       const struct script_output *out)
{
	size_t i;
	int r;

	for (i = 0; i < out->n; i++) {
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", out->items[i]);
		if (r < 0) {
			s->host->error(s->host, "cannot record index %s: %s",
				       out->items[i], strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Say what the script left behind and what became of it: a process that
 * left its group (setsid) is not killed with the group, but by the keeper. */
static void report_leftovers(struct script *s, const struct run *run)
{
	const struct extres_host *host = s->host;
	char killed[96] = "";

	if (run->escaped > 0)
		snprintf(killed, sizeof(killed),
			 " and %d process%s that had left it (setsid)",
			 run->escaped, run->escaped == 1 ? "" : "es");
	if (run->lingering && run->holder_left)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s exited but left a process holding its output open; killed its process group%s, but a process outside it still holds the output",
			s->path, killed);
	else if (run->lingering)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s exited but left a process holding its output open; killed its process group%s",
			s->path, killed);
	else if (run->escaped > 0)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s left %d process%s running outside its process group (setsid); killed %s",
			s->path, run->escaped, run->escaped == 1 ? "" : "es",
			run->escaped == 1 ? "it" : "them");
}

static int32_t script_discover(void *handle, struct extres_sink *sink)
{
	struct script *s = handle;
	const struct extres_host *host = s->host;
	struct run run = {
		.pid = -1, .status = -1, .life = -1, .fd = { -1, -1 }
	};
	struct script_output out = { 0 };
	char err[STDERR_QUOTE_MAX + 8], why[1024], tmo[32];
	char shown[SCRIPT_OUTPUT_QUOTED_SIZE(STDOUT_QUOTE_MAX)];
	const char *sep;
	int r;

	run.buf[OUT] = malloc(OUTPUT_MAX);
	run.buf[ERR] = malloc(OUTPUT_MAX);
	if (!run.buf[OUT] || !run.buf[ERR]) {
		host->error(host, "out of memory");
		r = -ENOMEM;
		goto out_free;
	}
	if (stop_requested(host)) {
		host->error(host, "discovery script %s not run: asked to stop",
			    s->path);
		r = -EINTR;
		goto out_free;
	}

	r = spawn(s, &run);
	if (r < 0) {
		host->error(host, "cannot set up discovery script %s: %s",
			    s->path, strerror(-r));
		goto out_free;
	}
	if (run.exec_errno) {
		finish_run(&run);
		host->error(host, "cannot run discovery script %s: %s", s->path,
			    strerror(run.exec_errno));
		r = -run.exec_errno;
		goto out_free;
	}
	r = pump(host, &run, s->timeout_ms);
	finish_run(&run);
	report_leftovers(s, &run);

	quote_stderr(err, sizeof(err), run.buf[ERR], run.len[ERR]);
	sep = err[0] ? ": " : "";
	if (r < 0) {
		host->error(host, "discovery script %s: reading its output: %s",
			    s->path, strerror(-r));
		goto out_free;
	}
	if (run.stopped) {
		host->error(
			host,
			"discovery script %s stopped: asked to stop; killed it and its process group",
			s->path);
		r = -EINTR;
		goto out_free;
	}
	if (run.exec_errno) {
		host->error(host, "cannot run discovery script %s: %s", s->path,
			    strerror(run.exec_errno));
		r = -run.exec_errno;
		goto out_free;
	}
	if (run.timed_out) {
		format_timeout(tmo, sizeof(tmo), s->timeout_ms);
		host->error(host, "discovery script %s timed out after %s%s%s",
			    s->path, tmo, sep, err);
		r = -ETIMEDOUT;
		goto out_free;
	}
	if (run.overflow) {
		host->error(host, "discovery script %s: output exceeds %u KiB",
			    s->path, OUTPUT_MAX / 1024);
		r = -EFBIG;
		goto out_free;
	}
	if (run.exit_signal != 0) {
		const char *name = sigabbrev_np(run.exit_signal);
		char sig[32] = "";

		if (name)
			snprintf(sig, sizeof(sig), " (SIG%s)", name);
		host->error(host, "discovery script %s killed by signal %d%s%s%s",
			    s->path, run.exit_signal, sig, sep, err);
		r = -EIO;
		goto out_free;
	}
	if (run.exit_code != 0) {
		host->error(host, "discovery script %s exited with status %d%s%s",
			    s->path, run.exit_code, sep, err);
		r = -EIO;
		goto out_free;
	}

	if (err[0])
		host->log(host, EXTRES_LOG_INFO,
			  "discovery script %s wrote to stderr: %s", s->path,
			  err);

	r = script_output_parse(run.buf[OUT], run.len[OUT], host->resource,
				&out, why, sizeof(why));
	if (r < 0) {
		/* The reason alone hides what the script meant to say (Spark's
		 * prints nvidia-smi's complaint as an address, with exit 0). */
		script_output_quote(shown, run.buf[OUT], run.len[OUT],
				    STDOUT_QUOTE_MAX);
		host->error(host, "discovery script %s: %s; its output: %s",
			    s->path, why, shown);
		goto out_free;
	}
	r = report_sink(s, sink, &out);
	script_output_clear(&out);
out_free:
	free(run.buf[OUT]);
	free(run.buf[ERR]);
	return r;
}

static void script_close(void *handle)
{
	script_free(handle);
}

/* Indexes only: nothing that identifies a device across refreshes. */
EXTRES_DRIVER_REGISTER(.name = "script", .open = script_open,
		       .discover = script_discover, .close = script_close)
