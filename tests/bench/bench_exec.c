/* SPDX-License-Identifier: MIT */
/*
 * extres-bench-exec: how long a command takes, start to end, for
 * scripts/bench.
 *
 *   extres-bench-exec [-r RUNS] [-w WARMUP] -- COMMAND [ARG...]
 *
 * Runs COMMAND (stdin /dev/null, stdout and stderr inherited) WARMUP times
 * untimed, then RUNS times, timing fork to reaped on the monotonic clock;
 * every run must exit 0. Output, values in ns:
 *
 *   result MEDIAN MIN MAX
 *
 * Exit status: 0 on success, 1 when a run failed, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "extres-bench-exec"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One run of argv; its duration in *ret_ns. 0, or -1 after saying why. */
static int run_once(char *argv[], uint64_t *ret_ns)
{
	uint64_t t0 = now_ns();
	int status, fd;
	pid_t pid = fork();

	if (pid < 0) {
		perror(PROG ": fork");
		return -1;
	}
	if (pid == 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		execvp(argv[0], argv);
		fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror(PROG ": waitpid");
			return -1;
		}
	*ret_ns = now_ns() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, PROG ": %s failed (status 0x%x)\n", argv[0],
			status);
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	unsigned long runs = 101, warmup = 5, i;
	uint64_t *ns, ignored;
	int c, r = 0;

	while ((c = getopt(argc, argv, "+r:w:")) != -1) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || v == 0 || v > 1000000) {
			fprintf(stderr, PROG ": -%c: bad number '%s'\n", c,
				optarg);
			return 2;
		}
		if (c == 'r')
			runs = v;
		else
			warmup = v;
	}
	if (c == '?' || optind >= argc) {
		fprintf(stderr, "usage: " PROG
				" [-r RUNS] [-w WARMUP] -- COMMAND [ARG...]\n");
		return 2;
	}
	ns = calloc(runs, sizeof(*ns));
	if (!ns)
		return 1;
	for (i = 0; i < warmup && r == 0; i++)
		r = run_once(argv + optind, &ignored);
	for (i = 0; i < runs && r == 0; i++)
		r = run_once(argv + optind, &ns[i]);
	if (r == 0) {
		qsort(ns, runs, sizeof(*ns), cmp_u64);
		printf("result %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		       ns[runs / 2], ns[0], ns[runs - 1]);
	}
	free(ns);
	return r == 0 ? 0 : 1;
}
