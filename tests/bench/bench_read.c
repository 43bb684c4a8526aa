/*
 * extres-bench-read: the timing half of scripts/bench.
 *
 *   extres-bench-read read  -n ITERATIONS -r RUNS [-x EXPECTED] FILE...
 *   extres-bench-read list  -n ITERATIONS -r RUNS -e ENTRIES DIR...
 *   extres-bench-read start -r RUNS -t TIMEOUT_MS -f FILE -x EXPECTED
 *                           -m MOUNTPOINT -l LOG -- DAEMON [ARG...]
 *
 * read:  open(O_RDONLY|O_CLOEXEC) + read(4096) + close, ITERATIONS times per
 *        run, after a warm-up; the value is ns per open+read+close.
 * list:  opendir + readdir to the end + closedir, ITERATIONS times per run,
 *        after one warm-up listing; every listing must hold ENTRIES names
 *        besides "." and ".."; the value is ns per listing.
 * start: spawn DAEMON, then read FILE in a tight loop until it holds exactly
 *        EXPECTED; the value is ns from just before the spawn to that read.
 *        The daemon is then stopped with SIGTERM and must exit 0 and leave
 *        MOUNTPOINT unmounted before the next run.
 *
 * With several paths, read and list interleave their runs (path 1 run 1,
 * path 2 run 1, path 1 run 2, ...) so that drift in machine load hits all
 * paths alike. Output, one line each, values in ns:
 *
 *   run PATH_INDEX RUN VALUE
 *   result PATH_INDEX MEDIAN MIN MAX
 *
 * Exit status: 0 on success, 1 on a failed measurement, 2 on bad usage,
 * 130 when interrupted by SIGINT/SIGTERM/SIGHUP during start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "extres-bench-read"
#define MAX_RUNS 1000u
#define READ_BUF 4096
/* How long a stopped daemon gets to unmount and exit before SIGKILL. */
#define STOP_TIMEOUT_NS (10ull * 1000000000ull)

extern char **environ;

struct opts {
	uint64_t iterations;
	uint64_t runs;
	uint64_t entries;
	uint64_t timeout_ms;
	int have_entries;
	const char *expected;
	const char *file;
	const char *mountpoint;
	const char *log;
	char **paths; /* read, list: the paths; start: DAEMON and its args */
	int npaths;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max,
		     uint64_t *ret_value)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9') {
		fprintf(stderr, PROG ": option -%s: '%s' is not a number\n",
			opt, s);
		return -EINVAL;
	}
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max) {
		fprintf(stderr,
			PROG ": option -%s: '%s' is not a number in %" PRIu64
			     "..%" PRIu64 "\n",
			opt, s, min, max);
		return -EINVAL;
	}
	*ret_value = v;
	return 0;
}

/* Writes `len` bytes as a C string literal body, so "\n" shows as \n. */
static void put_escaped(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			fputs("\\n", f);
		else if (c == '\\' || c == '"')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_result(int index, double *values, uint64_t n)
{
	double median;

	qsort(values, n, sizeof(*values), cmp_double);
	median =
		n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
	printf("result %d %.1f %.1f %.1f\n", index, median, values[0],
	       values[n - 1]);
}

/* One open+read+close; returns the bytes read or -errno. */
static ssize_t read_once(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size);
	err = errno;
	close(fd);
	return n < 0 ? -err : n;
}

static int time_reads(const char *path, uint64_t iterations, double *ret_ns)
{
	char buf[READ_BUF];
	uint64_t i, t0;
	ssize_t n;

	t0 = now_ns();
	for (i = 0; i < iterations; i++) {
		n = read_once(path, buf, sizeof(buf));
		if (n <= 0) {
			fprintf(stderr, PROG ": %s: %s\n", path,
				n ? strerror((int)-n) : "empty read");
			return n ? (int)n : -ENODATA;
		}
	}
	*ret_ns = (double)(now_ns() - t0) / (double)iterations;
	return 0;
}

/* Reads `path` once and compares it with `expected`, to time the right bytes. */
static int check_content(const char *path, const char *expected)
{
	char buf[READ_BUF];
	ssize_t n;

	n = read_once(path, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror((int)-n));
		return (int)n;
	}
	if ((size_t)n != strlen(expected) || memcmp(buf, expected, (size_t)n)) {
		fprintf(stderr, PROG ": %s: content is \"", path);
		put_escaped(stderr, buf, (size_t)n);
		fputs("\", expected \"", stderr);
		put_escaped(stderr, expected, strlen(expected));
		fputs("\"\n", stderr);
		return -EPROTO;
	}
	return 0;
}

/* One opendir+readdir+closedir; returns 0 or -errno, the names in ret_count. */
static int list_once(const char *path, uint64_t *ret_count)
{
	struct dirent *de;
	uint64_t count = 0;
	DIR *dir;
	int err;

	/* glibc's opendir() opens with O_CLOEXEC. */
	dir = opendir(path);
	if (!dir)
		return -errno;
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			count++;
	}
	err = errno;
	closedir(dir);
	if (err)
		return -err;
	*ret_count = count;
	return 0;
}

static int list_checked(const char *path, uint64_t expected)
{
	uint64_t count = 0;
	int r;

	r = list_once(path, &count);
	if (r < 0) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-r));
		return r;
	}
	if (count != expected) {
		fprintf(stderr,
			PROG ": %s: %" PRIu64 " entries, expected %" PRIu64
			     "\n",
			path, count, expected);
		return -EPROTO;
	}
	return 0;
}

static int time_listings(const char *path, uint64_t iterations,
			 uint64_t expected, double *ret_ns)
{
	uint64_t i, t0;
	int r;

	t0 = now_ns();
	for (i = 0; i < iterations; i++) {
		r = list_checked(path, expected);
		if (r < 0)
			return r;
	}
	*ret_ns = (double)(now_ns() - t0) / (double)iterations;
	return 0;
}

enum mode { MODE_READ, MODE_LIST };

static int run_interleaved(enum mode mode, const struct opts *o)
{
	double *values = NULL;
	uint64_t run, warmup;
	int i, r = 0;

	values = calloc((size_t)o->npaths * o->runs, sizeof(*values));
	if (!values) {
		r = -ENOMEM;
		fprintf(stderr, PROG ": %s\n", strerror(-r));
		goto cleanup;
	}

	/* Warm-up: fill the dentry, inode and page caches before timing. */
	warmup = o->iterations / 10 ? o->iterations / 10 : 1;
	for (i = 0; i < o->npaths; i++) {
		double ignored;

		if (mode == MODE_READ) {
			if (o->expected) {
				r = check_content(o->paths[i], o->expected);
				if (r < 0)
					goto cleanup;
			}
			r = time_reads(o->paths[i], warmup, &ignored);
		} else {
			r = list_checked(o->paths[i], o->entries);
		}
		if (r < 0)
			goto cleanup;
	}

	for (run = 0; run < o->runs; run++) {
		for (i = 0; i < o->npaths; i++) {
			double *v = &values[(size_t)i * o->runs + run];

			if (mode == MODE_READ)
				r = time_reads(o->paths[i], o->iterations, v);
			else
				r = time_listings(o->paths[i], o->iterations,
						  o->entries, v);
			if (r < 0)
				goto cleanup;
			printf("run %d %" PRIu64 " %.1f\n", i, run, *v);
			fflush(stdout);
		}
	}
	for (i = 0; i < o->npaths; i++)
		print_result(i, &values[(size_t)i * o->runs], o->runs);
cleanup:
	free(values);
	return r;
}

/*
 * Whether something is mounted on `path`: its device differs from its
 * parent's, or it cannot even be stat()ed (a dead FUSE mount: ENOTCONN).
 */
static int is_mounted(const char *path)
{
	char parent[PATH_MAX];
	struct stat st, pst;

	if (snprintf(parent, sizeof(parent), "%s/..", path) >=
	    (int)sizeof(parent))
		return 1;
	if (stat(path, &st) < 0 || stat(parent, &pst) < 0)
		return 1;
	return st.st_dev != pst.st_dev;
}

/*
 * SIGTERM the daemon and wait for a clean exit; SIGKILL it and detach its
 * mount if it takes too long, so that the next run starts from a bare
 * mount point whatever happened. `judge` = 0 when giving up anyway: the
 * daemon may not have set up its signal handlers yet, so how it ends says
 * nothing.
 */
static int stop_daemon(pid_t pid, const char *mountpoint, int judge)
{
	uint64_t deadline = now_ns() + STOP_TIMEOUT_NS;
	int status, r = 0;
	pid_t w;

	kill(pid, SIGTERM);
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": waitpid: %s\n",
				strerror(errno));
			return -errno;
		}
		if (now_ns() > deadline) {
			fprintf(stderr,
				PROG
				": daemon (pid %d) still running %llu s after SIGTERM; killing it\n",
				(int)pid, STOP_TIMEOUT_NS / 1000000000ull);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			r = -ETIMEDOUT;
			break;
		}
		usleep(1000);
	}
	if (!judge) {
		/* Detach below without complaint. */
	} else if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr,
			PROG ": daemon exited with status %d after SIGTERM\n",
			WEXITSTATUS(status));
		r = -EPROTO;
	} else if (r == 0 && WIFSIGNALED(status)) {
		fprintf(stderr,
			PROG
			": daemon killed by signal %d (%s) after SIGTERM\n",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
		r = -EPROTO;
	}
	if (is_mounted(mountpoint)) {
		if (judge)
			fprintf(stderr,
				PROG ": daemon left %s mounted; detaching it\n",
				mountpoint);
		if (umount2(mountpoint, MNT_DETACH) < 0)
			fprintf(stderr, PROG ": umount %s: %s\n", mountpoint,
				strerror(errno));
		if (r == 0 && judge)
			r = -EBUSY;
	}
	return r;
}

static void describe_exit(int status)
{
	if (WIFEXITED(status))
		fprintf(stderr,
			PROG ": daemon exited with status %d before %s\n",
			WEXITSTATUS(status), "its file could be read");
	else if (WIFSIGNALED(status))
		fprintf(stderr,
			PROG ": daemon killed by signal %d (%s) before %s\n",
			WTERMSIG(status), strsignal(WTERMSIG(status)),
			"its file could be read");
}

/*
 * One start: spawn the daemon, poll the file until it holds the expected
 * bytes, stop the daemon. `stop` are the signals that mean "give up"; they
 * are blocked in this process and checked in the loop, and unblocked for the
 * daemon.
 */
static int time_start(const struct opts *o, int log_fd, const sigset_t *stop,
		      double *ret_ns)
{
	size_t len = strlen(o->expected);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	uint64_t t0, t1 = 0, deadline;
	sigset_t empty, pending;
	char buf[READ_BUF];
	int status, r, spawned = 0;
	pid_t pid;

	if (is_mounted(o->mountpoint)) {
		fprintf(stderr,
			PROG ": %s is already a mount point; not starting\n",
			o->mountpoint);
		return -EBUSY;
	}
	sigemptyset(&empty);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, log_fd, STDERR_FILENO);
	posix_spawnattr_setsigmask(&attr, &empty);
	posix_spawnattr_setsigdefault(&attr, stop);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
						POSIX_SPAWN_SETSIGDEF);

	t0 = now_ns();
	deadline = t0 + o->timeout_ms * 1000000ull;
	r = -posix_spawn(&pid, o->paths[0], &fa, &attr, o->paths, environ);
	if (r < 0) {
		fprintf(stderr, PROG ": cannot start %s: %s\n", o->paths[0],
			strerror(-r));
		goto cleanup;
	}
	spawned = 1;

	for (;;) {
		ssize_t n = read_once(o->file, buf, sizeof(buf));

		if (n == (ssize_t)len && memcmp(buf, o->expected, len) == 0) {
			t1 = now_ns();
			break;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			describe_exit(status);
			spawned = 0;
			/* A crashed daemon leaves its mount behind (ENOTCONN). */
			if (is_mounted(o->mountpoint) &&
			    umount2(o->mountpoint, MNT_DETACH) < 0)
				fprintf(stderr, PROG ": umount %s: %s\n",
					o->mountpoint, strerror(errno));
			r = -ECHILD;
			goto cleanup;
		}
		if (sigpending(&pending) == 0 &&
		    (sigismember(&pending, SIGINT) ||
		     sigismember(&pending, SIGTERM) ||
		     sigismember(&pending, SIGHUP))) {
			r = -EINTR;
			goto cleanup;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, PROG ": %s did not read \"", o->file);
			put_escaped(stderr, o->expected, len);
			fprintf(stderr,
				"\" within %" PRIu64 " ms (last try: %s)\n",
				o->timeout_ms,
				n < 0 ? strerror((int)-n) : "other bytes");
			r = -ETIMEDOUT;
			goto cleanup;
		}
		/* Only 2 CPUs on small machines: let the daemon run. */
		sched_yield();
	}
	*ret_ns = (double)(t1 - t0);
cleanup:
	if (spawned) {
		int s = stop_daemon(pid, o->mountpoint, r == 0);

		if (r == 0)
			r = s;
	}
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

static int run_start(const struct opts *o)
{
	double *values = NULL;
	sigset_t stop;
	uint64_t run;
	int log_fd, r = 0;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	log_fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0) {
		r = -errno;
		fprintf(stderr, PROG ": %s: %s\n", o->log, strerror(-r));
		goto cleanup;
	}
	values = calloc(o->runs, sizeof(*values));
	if (!values) {
		r = -ENOMEM;
		fprintf(stderr, PROG ": %s\n", strerror(-r));
		goto cleanup;
	}
	for (run = 0; run < o->runs; run++) {
		r = time_start(o, log_fd, &stop, &values[run]);
		if (r < 0)
			goto cleanup;
		printf("run 0 %" PRIu64 " %.1f\n", run, values[run]);
		fflush(stdout);
	}
	print_result(0, values, o->runs);
cleanup:
	free(values);
	if (log_fd >= 0)
		close(log_fd);
	return r;
}

static void usage(FILE *f)
{
	fputs("usage: " PROG
	      " read  -n ITERATIONS -r RUNS [-x EXPECTED] FILE...\n"
	      "       " PROG " list  -n ITERATIONS -r RUNS -e ENTRIES DIR...\n"
	      "       " PROG
	      " start -r RUNS -t TIMEOUT_MS -f FILE -x EXPECTED\n"
	      "                               -m MOUNTPOINT -l LOG -- DAEMON [ARG...]\n",
	      f);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "+n:r:e:t:x:f:m:l:h")) != -1) {
		char name[2] = { (char)c, '\0' };
		int r = 0;

		switch (c) {
		case 'n':
			r = parse_u64(name, optarg, 1, UINT64_MAX / 2,
				      &o->iterations);
			break;
		case 'r':
			r = parse_u64(name, optarg, 1, MAX_RUNS, &o->runs);
			break;
		case 'e':
			r = parse_u64(name, optarg, 0, UINT64_MAX, &o->entries);
			o->have_entries = 1;
			break;
		case 't':
			r = parse_u64(name, optarg, 1, 3600000, &o->timeout_ms);
			break;
		case 'x':
			o->expected = optarg;
			break;
		case 'f':
			o->file = optarg;
			break;
		case 'm':
			o->mountpoint = optarg;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
		if (r < 0)
			return r;
	}
	o->paths = argv + optind;
	o->npaths = argc - optind;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	const char *mode;
	int r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	mode = argv[1];
	if (parse_opts(argc - 1, argv + 1, &o) < 0) {
		usage(stderr);
		return 2;
	}

	if (strcmp(mode, "read") == 0 && o.iterations && o.runs &&
	    o.npaths > 0) {
		r = run_interleaved(MODE_READ, &o);
	} else if (strcmp(mode, "list") == 0 && o.iterations && o.runs &&
		   o.have_entries && o.npaths > 0) {
		r = run_interleaved(MODE_LIST, &o);
	} else if (strcmp(mode, "start") == 0 && o.runs && o.timeout_ms &&
		   o.file && o.expected && o.mountpoint && o.log &&
		   o.npaths > 0) {
		r = run_start(&o);
	} else {
		fprintf(stderr, PROG ": unknown mode '%s' or missing options\n",
			mode);
		usage(stderr);
		return 2;
	}
	if (r == -EINTR)
		return 130;
	return r < 0 ? 1 : 0;
}
