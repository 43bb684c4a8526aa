/*
 * extres-bench-alloc: coordinated allocation latency, for scripts/bench.
 *
 *   extres-bench-alloc [-r RUNS] [-w WARMUP] [-d DIR]
 *
 * Writes a coordination file in a fresh directory under DIR (default
 * $TMPDIR or /tmp) with 63 entries for 63 of 64 devices, all owned by this
 * process with its own start time so that every one is live. Then, RUNS
 * times after WARMUP untimed rounds, times extres_alloc_take() of 1 device
 * out of the 64 candidates (it must get the one free device, 63), and the
 * extres_alloc_release() that follows, and checks that the file is back to
 * its 63 entries at the end. Output, values in ns:
 *
 *   result take MEDIAN P99 MIN MAX
 *   result release MEDIAN P99 MIN MAX
 *
 * Exit status: 0 on success, 1 when the measurement failed, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc/alloc.h"
#include "alloc/coord.h"
#include "host/infos.h"

#define PROG "extres-bench-alloc"
#define DEVICES 64
#define LIVE (DEVICES - 1)
#define MAX_RUNS 1000000u

struct opts {
	uint64_t runs;
	uint64_t warmup;
	const char *dir;
};

/* What one measurement works on; everything it owns is freed by bench_free. */
struct bench {
	char *dir;
	char *path;
	struct extres_infos *candidates;
	struct extres_param params; /* an empty MAPPING */
	struct extres_resource_config res;
	uint64_t *take_ns;
	uint64_t *release_ns;
	off_t file_size; /* of the 63 entries */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_u64(char opt, const char *s, uint64_t min, uint64_t max,
		     uint64_t *ret_value)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || errno || *end != '\0' || v < min ||
	    v > max) {
		fprintf(stderr,
			PROG ": option -%c: '%s' is not a number in %" PRIu64
			     "..%" PRIu64 "\n",
			opt, s, min, max);
		return -EINVAL;
	}
	*ret_value = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-r RUNS] [-w WARMUP] [-d DIR]\n"
		   "  -r RUNS    timed take+release rounds (default 2000)\n"
		   "  -w WARMUP  untimed rounds first (default 100)\n"
		   "  -d DIR     where to make the temporary directory\n"
		   "             (default $TMPDIR, else /tmp)\n");
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	o->runs = 2000;
	o->warmup = 100;
	o->dir = getenv("TMPDIR");
	if (!o->dir || !o->dir[0])
		o->dir = "/tmp";
	while ((c = getopt(argc, argv, "r:w:d:h")) != -1) {
		switch (c) {
		case 'r':
			if (parse_u64('r', optarg, 1, MAX_RUNS, &o->runs) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_u64('w', optarg, 0, MAX_RUNS, &o->warmup) < 0)
				return -EINVAL;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* 64 candidates, each with an index and a uuid, as a GPU driver gives. */
static int make_candidates(struct extres_infos **ret)
{
	struct extres_infos *infos = NULL;
	struct extres_err err;
	char index[16], uuid[64];
	int i, r;

	r = extres_infos_new(&infos);
	if (r < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return r;
	}
	for (i = 0; i < DEVICES; i++) {
		snprintf(index, sizeof(index), "%d", i);
		snprintf(uuid, sizeof(uuid),
			 "GPU-00000000-bench-0000-0000-%012d", i);
		r = extres_infos_begin(infos, &err);
		if (r == 0)
			r = extres_infos_add(infos, "index", index, &err);
		if (r == 0)
			r = extres_infos_add(infos, "uuid", uuid, &err);
		if (r < 0) {
			fprintf(stderr, PROG ": candidate %d: %s\n", i,
				err.msg);
			extres_infos_free(infos);
			return r;
		}
	}
	*ret = infos;
	return 0;
}

/* The file with 63 live entries, keys 0..62: only 63 is free, so a take
 * looks at every candidate before it finds one. */
static int write_coord_file(struct bench *b)
{
	uint64_t starttime;
	char *buf = NULL;
	size_t size = 0;
	FILE *mem;
	ssize_t n;
	int fd = -1, i, r;

	r = extres_proc_starttime(getpid(), &starttime);
	if (r < 0) {
		fprintf(stderr, PROG ": cannot read our start time: %s\n",
			strerror(-r));
		return r;
	}
	mem = open_memstream(&buf, &size);
	if (!mem) {
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	for (i = 0; i < LIVE; i++)
		fprintf(mem, "%d %d %" PRIu64 "\n", i, (int)getpid(),
			starttime);
	if (fclose(mem) != 0) {
		free(buf);
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	fd = open(b->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		fprintf(stderr, PROG ": cannot create %s: %s\n", b->path,
			strerror(errno));
		goto out;
	}
	n = write(fd, buf, size);
	if (n < 0 || (size_t)n != size) {
		r = n < 0 ? -errno : -EIO;
		fprintf(stderr, PROG ": cannot write %s: %s\n", b->path,
			strerror(-r));
		goto out;
	}
	b->file_size = (off_t)size;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

static void bench_free(struct bench *b)
{
	if (b->path)
		unlink(b->path);
	if (b->dir)
		rmdir(b->dir);
	free(b->path);
	free(b->dir);
	extres_infos_free(b->candidates);
	free(b->take_ns);
	free(b->release_ns);
}

static int bench_init(struct bench *b, const struct opts *o)
{
	int r;

	if (asprintf(&b->dir, "%s/extres-bench-alloc.XXXXXX", o->dir) < 0) {
		b->dir = NULL;
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	if (!mkdtemp(b->dir)) {
		r = -errno;
		fprintf(stderr, PROG ": cannot make a directory in %s: %s\n",
			o->dir, strerror(errno));
		free(b->dir);
		b->dir = NULL;
		return r;
	}
	if (asprintf(&b->path, "%s/coord", b->dir) < 0) {
		b->path = NULL;
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	b->take_ns = calloc(o->runs, sizeof(*b->take_ns));
	b->release_ns = calloc(o->runs, sizeof(*b->release_ns));
	if (!b->take_ns || !b->release_ns) {
		fprintf(stderr, PROG ": out of memory\n");
		return -ENOMEM;
	}
	r = make_candidates(&b->candidates);
	if (r < 0)
		return r;
	r = write_coord_file(b);
	if (r < 0)
		return r;
	b->params.kind = EXTRES_PARAM_MAPPING;
	b->res.name = "gpu";
	b->res.amount = (struct extres_amount){ 1, 1 };
	b->res.driver = "static";
	b->res.params = &b->params;
	b->res.coordination_file = b->path;
	b->res.coordination_key = "index";
	b->res.lock_timeout_ms = 10000;
	return 0;
}

/* One take + release; *ret_take and *ret_release in ns. */
static int round_once(struct bench *b, uint64_t *ret_take,
		      uint64_t *ret_release)
{
	struct extres_allocation *a = NULL;
	struct extres_err err;
	char want[16];
	const char *index;
	uint64_t t0, t1, t2, t3;
	int r;

	t0 = now_ns();
	r = extres_alloc_take(&b->res, b->candidates, getpid(), &a, &err);
	t1 = now_ns();
	if (r < 0) {
		fprintf(stderr, PROG ": take: %s\n", err.msg);
		return r;
	}
	snprintf(want, sizeof(want), "%d", LIVE);
	index = a->n == 1 ? extres_info_get(&a->infos[0], "index") : NULL;
	if (!index || strcmp(index, want) != 0) {
		fprintf(stderr,
			PROG
			": take got %zu devices, first '%s'; wanted device %s\n",
			a->n, index ? index : "(none)", want);
		/* Leave the file as we found it even so. */
		extres_alloc_release(a, &err);
		extres_allocation_free(a);
		return -EPROTO;
	}
	t2 = now_ns();
	r = extres_alloc_release(a, &err);
	t3 = now_ns();
	extres_allocation_free(a);
	if (r < 0) {
		fprintf(stderr, PROG ": release: %s\n", err.msg);
		return r;
	}
	*ret_take = t1 - t0;
	*ret_release = t3 - t2;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentiles over sorted values. */
static void print_result(const char *what, uint64_t *v, uint64_t n)
{
	uint64_t p99 = (99 * n + 99) / 100; /* ceil(0.99 n), 1-based */
	double median;

	qsort(v, n, sizeof(*v), cmp_u64);
	median = n % 2 ? (double)v[n / 2] :
			 ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	printf("result %s %.0f %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", what,
	       median, v[p99 - 1], v[0], v[n - 1]);
}

int main(int argc, char **argv)
{
	struct bench b = { 0 };
	struct opts o;
	uint64_t i, take, release;
	struct stat st;
	int status = 1;

	if (parse_opts(argc, argv, &o) < 0) {
		usage(stderr);
		return 2;
	}
	if (bench_init(&b, &o) < 0)
		goto out;
	for (i = 0; i < o.warmup; i++)
		if (round_once(&b, &take, &release) < 0)
			goto out;
	for (i = 0; i < o.runs; i++)
		if (round_once(&b, &b.take_ns[i], &b.release_ns[i]) < 0)
			goto out;
	/* Every release must have put the file back as it was. */
	if (stat(b.path, &st) < 0 || st.st_size != b.file_size) {
		fprintf(stderr,
			PROG
			": %s is not back to its %jd bytes after the runs\n",
			b.path, (intmax_t)b.file_size);
		goto out;
	}
	print_result("take", b.take_ns, o.runs);
	print_result("release", b.release_ns, o.runs);
	status = 0;
out:
	bench_free(&b);
	return status;
}
