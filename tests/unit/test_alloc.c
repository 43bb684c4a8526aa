/* SPDX-License-Identifier: MIT */
/* Allocation: first N without coordination, through the coordination file
 * with it, release, script-coordinated resources, and a real race between
 * processes. Real files in a mkdtemp directory, real processes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc_files.h"

#include "alloc/alloc.h"
#include "alloc/coord.h"

struct fixture {
	char dir[TF_DIR_LEN];
	char path[TF_PATH_LEN]; /* dir/coord, not created */
	struct extres_param root; /* the resource's params: a MAPPING */
	struct extres_param arg; /* its one member, when set */
	struct extres_param seq[3]; /* items of a sequence-valued arg */
	struct extres_resource_config res;
	struct extres_infos *cands;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || tf_coord_dir("alloc", f->dir, f->path) < 0) {
		free(f);
		return -1;
	}
	f->root.kind = EXTRES_PARAM_MAPPING;
	f->res.name = "gpu";
	f->res.amount = (struct extres_amount){ 1, 1 };
	f->res.driver = "static";
	f->res.params = &f->root;
	f->res.coordination_key = "index";
	f->res.lock_timeout_ms = 10000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = tf_remove_tree(f->dir);

	extres_infos_free(f->cands);
	free(f);
	return r;
}

/* n candidates: index=i, uuid=GPU-i. */
static struct extres_infos *make_candidates(size_t n)
{
	struct extres_infos *infos = NULL;
	char v[32];
	size_t i;

	assert_int_equal(extres_infos_new(&infos), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(extres_infos_begin(infos, NULL), 0);
		snprintf(v, sizeof(v), "%zu", i);
		assert_int_equal(extres_infos_add(infos, "index", v, NULL), 0);
		snprintf(v, sizeof(v), "GPU-%zu", i);
		assert_int_equal(extres_infos_add(infos, "uuid", v, NULL), 0);
	}
	return infos;
}

static void append_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	size_t len = strlen(content);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *format, ...)
{
	static char bufs[8][1024];
	static int next;
	char *b = bufs[next++ % 8];
	va_list ap;

	va_start(ap, format);
	vsnprintf(b, sizeof(bufs[0]), format, ap);
	va_end(ap);
	return b;
}

/* In a child: die with the test, so that a failed assertion leaves no
 * process behind. */
static void die_with_parent(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
}

static void assert_index(const struct extres_allocation *a, size_t i,
			 const char *index)
{
	assert_true(i < a->n);
	assert_string_equal(extres_info_get(&a->infos[i], "index"), index);
}

static void test_no_coordination_first_n(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };

	f->cands = make_candidates(4);
	f->res.amount = (struct extres_amount){ 2, 2 };
	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err), 0);
	/* Deep copies: the candidates may go. */
	extres_infos_free(f->cands);
	f->cands = NULL;
	assert_int_equal(a->n, 2);
	assert_index(a, 0, "0");
	assert_index(a, 1, "1");
	assert_string_equal(extres_info_get(&a->infos[1], "uuid"), "GPU-1");
	assert_string_equal(a->resource, "gpu");
	assert_null(a->coordination_file);
	assert_int_equal(a->owner, getpid());
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_int_equal(a->released, 1);
	assert_int_equal(extres_alloc_release(a, &err), 0);
	extres_allocation_free(a);
	extres_allocation_free(NULL);
	assert_int_equal(extres_alloc_release(NULL, &err), 0);
}

static void test_no_coordination_short(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };

	f->cands = make_candidates(4);
	f->res.amount = (struct extres_amount){ 5, 5 };
	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err),
		-ENOSPC);
	assert_string_equal(err.msg, "resource 'gpu': wanted 5, found 4");
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
}

static void test_coordination_take(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid(), dead = tf_dead_pid(), me = getpid();
	uint64_t hst = tf_starttime(holder), mst = tf_starttime(me);
	struct stat before, after;

	f->cands = make_candidates(5);
	f->res.amount = (struct extres_amount){ 2, 2 };
	f->res.coordination_file = f->path;
	/* 0: live extres holder; 1: dead holder; 2: Flink line, live. */
	tf_write_file(f->path,
		      fmt("0 %d %" PRIu64 "\n1 %d 5\nnot a line\n2 %d\n",
			  (int)holder, hst, (int)dead, (int)holder));
	assert_int_equal(stat(f->path, &before), 0);

	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_int_equal(a->n, 2);
	assert_index(a, 0, "1");
	assert_index(a, 1, "3");
	assert_string_equal(a->coordination_file, f->path);
	assert_string_equal(a->coordination_key, "index");
	assert_int_equal(a->owner, me);
	assert_true(a->owner_starttime == mst);
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d %" PRIu64 "\nnot a line\n2 %d\n"
				"1 %d\t%" PRIu64 "\tuuid=GPU-1\n"
				"3 %d\t%" PRIu64 "\tuuid=GPU-3\n",
				(int)holder, hst, (int)holder, (int)me, mst,
				(int)me, mst));
	assert_int_equal(stat(f->path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);

	/* Our own live lines hold too: a second take gets the next one. */
	{
		struct extres_allocation *b = NULL;

		f->res.amount = (struct extres_amount){ 1, 1 };
		assert_int_equal(
			extres_alloc_take(&f->res, f->cands, me, &b, &err), 0);
		assert_index(b, 0, "4");
		assert_int_equal(extres_alloc_release(b, &err), 0);
		extres_allocation_free(b);
	}

	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d %" PRIu64 "\nnot a line\n2 %d\n",
				(int)holder, hst, (int)holder));
	extres_allocation_free(a);

	/* Once the holder is gone, its devices come back. */
	tf_reap(holder);
	f->res.amount = (struct extres_amount){ 3, 3 };
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_index(a, 0, "0");
	assert_index(a, 1, "1");
	assert_index(a, 2, "2");
	assert_string_equal(tf_read_file(f->path),
			    fmt("not a line\n0 %d\t%" PRIu64
				"\tuuid=GPU-0\n1 %d\t%" PRIu64
				"\tuuid=GPU-1\n2 %d\t%" PRIu64 "\tuuid=GPU-2\n",
				(int)me, mst, (int)me, mst, (int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	extres_allocation_free(a);
	assert_string_equal(tf_read_file(f->path), "not a line\n");
}

/* Wait (10 s at most) until a write now would show in the mtime: a file
 * written beside `path` gets another mtime than `before` (file systems
 * stamp times from a coarse clock). No one says so: look every
 * millisecond. */
static void wait_mtime_moves(const char *path, const struct stat *before)
{
	char probe[PATH_MAX];
	struct stat st;
	int i;

	snprintf(probe, sizeof(probe), "%s.tick", path);
	for (i = 0; i < 10000; i++) {
		tf_write_file(probe, "");
		assert_int_equal(stat(probe, &st), 0);
		if (st.st_mtim.tv_sec != before->st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != before->st_mtim.tv_nsec) {
			unlink(probe);
			return;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fail_msg("the mtime of a new file did not move in 10 s");
}

static void test_coordination_short_untouched(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid(), dead = tf_dead_pid();
	struct stat before, after;
	char *content;

	f->cands = make_candidates(3);
	f->res.amount = (struct extres_amount){ 2, 2 };
	f->res.coordination_file = f->path;
	/* Even the dead line, which a success would reclaim, must stay. */
	content = strdup(fmt("0 %d %" PRIu64 "\n\n1 %d 5\ngarbage\n2 %d",
			     (int)holder, tf_starttime(holder), (int)dead,
			     (int)holder));
	assert_non_null(content);
	tf_write_file(f->path, content);
	assert_int_equal(stat(f->path, &before), 0);
	wait_mtime_moves(f->path, &before);

	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err),
		-ENOSPC);
	assert_string_equal(err.msg,
			    fmt("resource 'gpu': wanted 2, found 1 free of 3 "
				"(coordination file %s)",
				f->path));
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
	assert_string_equal(tf_read_file(f->path), content);
	assert_int_equal(stat(f->path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_size, after.st_size);
	assert_int_equal(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
	assert_int_equal(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	free(content);
	tf_reap(holder);
}

static void test_release_exact(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid(), me = getpid();
	uint64_t hst = tf_starttime(holder), mst = tf_starttime(me);
	char *others;

	f->cands = make_candidates(4);
	f->res.amount = (struct extres_amount){ 2, 2 };
	f->res.coordination_file = f->path;
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d\t%" PRIu64 "\tuuid=GPU-0\n1 %d\t%" PRIu64
				"\tuuid=GPU-1\n",
				(int)me, mst, (int)me, mst));

	/* A Flink line and another extres line of a live process; our PID
	 * with another start time (a successor); our start time with another
	 * PID; our PID and start time on a key we did not take. */
	others = strdup(fmt("5 %d\n6 %d %" PRIu64 "\n0 %d %" PRIu64
			    "\n1 %d %" PRIu64 "\n3 %d %" PRIu64 "\n",
			    (int)holder, (int)holder, hst, (int)me, mst + 1,
			    (int)holder, mst, (int)me, mst));
	assert_non_null(others);
	append_file(f->path, others);

	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_int_equal(a->released, 1);
	assert_string_equal(tf_read_file(f->path), others);

	/* A second release does nothing, even with our line back. */
	append_file(f->path, fmt("0 %d %" PRIu64 "\n", (int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("%s0 %d %" PRIu64 "\n", others, (int)me, mst));
	extres_allocation_free(a);
	free(others);
	tf_reap(holder);
}

static void test_coordination_key_uuid(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid(), me = getpid();
	uint64_t hst = tf_starttime(holder), mst = tf_starttime(me);

	f->cands = make_candidates(3);
	f->res.coordination_file = f->path;
	f->res.coordination_key = "uuid";
	/* "0" as an index must not block anything when uuids are compared. */
	tf_write_file(f->path, fmt("GPU-0 %d %" PRIu64 "\n0 %d\n", (int)holder,
				   hst, (int)holder));
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_int_equal(a->n, 1);
	assert_index(a, 0, "1");
	assert_string_equal(a->coordination_key, "uuid");
	assert_string_equal(tf_read_file(f->path),
			    fmt("GPU-0 %d %" PRIu64 "\n0 %d\nGPU-1 %d\t%" PRIu64
				"\tuuid=GPU-1\n",
				(int)holder, hst, (int)holder, (int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("GPU-0 %d %" PRIu64 "\n0 %d\n", (int)holder,
				hst, (int)holder));
	extres_allocation_free(a);
	tf_reap(holder);
}

static void test_missing_key(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };

	f->cands = make_candidates(2);
	assert_int_equal(extres_infos_begin(f->cands, NULL), 0);
	assert_int_equal(extres_infos_add(f->cands, "index", "2", NULL), 0);
	f->res.coordination_file = f->path;
	f->res.coordination_key = "uuid";
	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err),
		-EINVAL);
	assert_string_equal(err.msg,
			    "resource 'gpu': info 2 has no property 'uuid' "
			    "(the coordination key)");
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
	/* Checked before the file is even opened. */
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_key_with_whitespace(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };

	assert_int_equal(extres_infos_new(&f->cands), 0);
	assert_int_equal(extres_infos_begin(f->cands, NULL), 0);
	assert_int_equal(extres_infos_add(f->cands, "name", "Tesla V100", NULL),
			 0);
	f->res.coordination_file = f->path;
	f->res.coordination_key = "name";
	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err),
		-EINVAL);
	assert_string_equal(err.msg,
			    "resource 'gpu': info 0 has 'name' = 'Tesla V100', "
			    "which contains whitespace and cannot be recorded "
			    "in the coordination file");
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
}

static void test_duplicate_keys(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t me = getpid();
	uint64_t mst = tf_starttime(me);
	static const char *const idx[] = { "0", "0", "1" };
	size_t i;

	assert_int_equal(extres_infos_new(&f->cands), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(extres_infos_begin(f->cands, NULL), 0);
		assert_int_equal(
			extres_infos_add(f->cands, "index", idx[i], NULL), 0);
	}
	f->res.amount = (struct extres_amount){ 2, 2 };
	f->res.coordination_file = f->path;
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_index(a, 0, "0");
	assert_index(a, 1, "1");
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d\t%" PRIu64 "\n1 %d\t%" PRIu64 "\n",
				(int)me, mst, (int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	extres_allocation_free(a);
	assert_string_equal(tf_read_file(f->path), "");
}

static void test_refused_file_prefixed(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };
	char target[160];

	snprintf(target, sizeof(target), "%s/target", f->dir);
	tf_write_file(target, "keep\n");
	assert_int_equal(symlink(target, f->path), 0);
	f->cands = make_candidates(1);
	f->res.coordination_file = f->path;
	assert_int_equal(
		extres_alloc_take(&f->res, f->cands, getpid(), &a, &err),
		-ELOOP);
	assert_string_equal(
		err.msg, fmt("resource 'gpu': %s is a symbolic link; refusing "
			     "to use it as a coordination file",
			     f->path));
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
	assert_string_equal(tf_read_file(target), "keep\n");
}

static void test_owner_gone(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = (struct extres_allocation *)0x1;
	struct extres_err err = { "" };
	pid_t dead = tf_dead_pid();

	f->cands = make_candidates(1);
	f->res.coordination_file = f->path;
	assert_int_equal(extres_alloc_take(&f->res, f->cands, dead, &a, &err),
			 -ESRCH);
	assert_string_equal(err.msg,
			    fmt("resource 'gpu': cannot read the start time of "
				"process %d: No such process",
				(int)dead));
	assert_ptr_equal(a, (struct extres_allocation *)0x1);
}

static void test_script_coordinated_take(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t me = getpid(), holder = tf_live_pid();
	uint64_t mst = tf_starttime(me);

	f->cands = make_candidates(3);
	f->res.amount = (struct extres_amount){ 2, 2 };
	/* What the script driver reports from open() for
	 * "--enable-coordination --coordination-file PATH". */
	assert_int_equal(
		extres_driver_info_set_coordination(&f->cands->driver, f->path,
						    "--enable-coordination"),
		0);

	/* A script that ignored the flag recorded nothing: every device it
	 * returned is recorded here, for this process (the script's $PPID),
	 * in the script's file. */
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_string_equal(a->coordination_file, f->path);
	assert_int_equal(a->recorded_by_driver, 1);
	assert_int_equal(a->owner, me);
	assert_index(a, 0, "0");
	assert_index(a, 1, "1");
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d\t%" PRIu64 "\tuuid=GPU-0\n1 %d\t%" PRIu64
				"\tuuid=GPU-1\n",
				(int)me, mst, (int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path), "");
	extres_allocation_free(a);
	a = NULL;

	/* A script that coordinates wrote Flink's two fields: nothing is
	 * added, and release removes exactly those lines. */
	tf_write_file(f->path, fmt("0 %d\n1 %d\n", (int)me, (int)me));
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d\n1 %d\n", (int)me, (int)me));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path), "");
	extres_allocation_free(a);
	a = NULL;

	/* A device that a live other process holds is skipped when the
	 * script returned more than the amount ... */
	tf_write_file(f->path, fmt("0 %d\n", (int)holder));
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_index(a, 0, "1");
	assert_index(a, 1, "2");
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path), fmt("0 %d\n", (int)holder));
	extres_allocation_free(a);
	a = NULL;

	/* ... and when too few are left, the error names the holder, and
	 * nothing is written. */
	f->res.amount = (struct extres_amount){ 3, 3 };
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err),
			 -EBUSY);
	assert_null(a);
	assert_non_null(strstr(
		err.msg,
		fmt("resource 'gpu': wanted 3, found 2 free of the 3 its discovery script returned (coordination file %s); device index 0 is held by PID %d (",
		    f->path, (int)holder)));
	assert_string_equal(tf_read_file(f->path), fmt("0 %d\n", (int)holder));
	f->res.amount = (struct extres_amount){ 2, 2 };

	/* Our lines with and without a start time are ours; the line the
	 * script wrote for us for a device not taken goes at the take: we
	 * would hold it without serving it. */
	tf_write_file(f->path, fmt("0 %d %" PRIu64 "\n1 %d\n2 %d %" PRIu64 "\n",
				   (int)me, mst, (int)me, (int)me, mst));
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_string_equal(
		tf_read_file(f->path),
		fmt("0 %d %" PRIu64 "\n1 %d\n", (int)me, mst, (int)me));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	assert_string_equal(tf_read_file(f->path), "");
	extres_allocation_free(a);
	tf_reap(holder);
}

#define RACERS 8
#define DEVICES 4
#define ROUNDS 20

/* The device number at the start of s, or -1. */
static int device_of(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || (*end != '\0' && *end != ' ') || v < 0 ||
	    v >= DEVICES)
		return -1;
	return (int)v;
}

struct race_result {
	int rc;
	int msg_ok;
	pid_t pid;
	char key[8];
};

static void race_child(struct fixture *f, int start_fd, int result_fd,
		       int exit_fd)
{
	struct race_result res = { .pid = getpid() };
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	char expect[512], ch;

	snprintf(
		expect, sizeof(expect),
		"resource 'gpu': wanted 1, found 0 free of %d (coordination file %s)",
		DEVICES, f->path);
	(void)!read(start_fd, &ch, 1); /* EOF: all start together */
	res.rc = extres_alloc_take(&f->res, f->cands, getpid(), &a, &err);
	if (res.rc == 0)
		snprintf(res.key, sizeof(res.key), "%s",
			 extres_info_get(&a->infos[0], "index"));
	else
		res.msg_ok = strcmp(err.msg, expect) == 0;
	if (write(result_fd, &res, sizeof(res)) != sizeof(res))
		_exit(1);
	if (res.rc == 0)
		(void)!read(exit_fd, &ch, 1); /* hold until told */
	_exit(0);
}

static void race_round(struct fixture *f)
{
	int start[2], result[2], hold[2], status, i, j, winners = 0;
	struct race_result res[RACERS];
	int held[DEVICES] = { 0 };
	char expect[DEVICES][64];
	char *content, *line, *save = NULL;
	pid_t pids[RACERS], parent = getpid();

	assert_int_equal(pipe2(start, O_CLOEXEC), 0);
	assert_int_equal(pipe2(result, O_CLOEXEC), 0);
	assert_int_equal(pipe2(hold, O_CLOEXEC), 0);
	for (i = 0; i < RACERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			die_with_parent(parent);
			close(start[1]);
			close(result[0]);
			close(hold[1]);
			race_child(f, start[0], result[1], hold[0]);
		}
	}
	close(start[0]);
	close(result[1]);
	close(hold[0]);
	close(start[1]); /* go */

	for (i = 0; i < RACERS; i++)
		assert_int_equal(read(result[0], &res[i], sizeof(res[i])),
				 sizeof(res[i]));
	close(result[0]);
	for (i = 0; i < RACERS; i++) {
		if (res[i].rc == 0) {
			int k = device_of(res[i].key);

			assert_true(k >= 0 && k < DEVICES);
			assert_int_equal(held[k], 0);
			held[k] = 1;
			snprintf(expect[k], sizeof(expect[k]),
				 "%s %d\t%" PRIu64 "\tuuid=GPU-%d", res[i].key,
				 (int)res[i].pid, tf_starttime(res[i].pid), k);
			winners++;
		} else {
			assert_int_equal(res[i].rc, -ENOSPC);
			assert_int_equal(res[i].msg_ok, 1);
		}
	}
	assert_int_equal(winners, DEVICES);

	/* The file holds exactly the winners' lines, one per device. */
	content = strdup(tf_read_file(f->path));
	assert_non_null(content);
	for (j = 0, line = strtok_r(content, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), j++) {
		int k = device_of(line);

		assert_true(k >= 0 && k < DEVICES);
		assert_string_equal(line, expect[k]);
		assert_int_equal(held[k], 1);
		held[k] = 2;
	}
	assert_int_equal(j, DEVICES);
	free(content);

	close(hold[1]); /* winners exit */
	for (i = 0; i < RACERS; i++) {
		assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

static void test_race(void **state)
{
	struct fixture *f = *state;
	struct extres_allocation *a = NULL;
	struct extres_err err = { "" };
	pid_t me = getpid();
	uint64_t mst = tf_starttime(me);
	int round;

	f->cands = make_candidates(DEVICES);
	f->res.amount = (struct extres_amount){ 1, 1 };
	f->res.coordination_file = f->path;
	/* Each round starts with the last round's winners dead. */
	for (round = 0; round < ROUNDS; round++)
		race_round(f);

	f->res.amount = (struct extres_amount){ DEVICES, DEVICES };
	assert_int_equal(extres_alloc_take(&f->res, f->cands, me, &a, &err), 0);
	assert_string_equal(tf_read_file(f->path),
			    fmt("0 %d\t%" PRIu64 "\tuuid=GPU-0\n1 %d\t%" PRIu64
				"\tuuid=GPU-1\n2 %d\t%" PRIu64
				"\tuuid=GPU-2\n3 %d\t%" PRIu64 "\tuuid=GPU-3\n",
				(int)me, mst, (int)me, mst, (int)me, mst,
				(int)me, mst));
	assert_int_equal(extres_alloc_release(a, &err), 0);
	extres_allocation_free(a);
	assert_string_equal(tf_read_file(f->path), "");
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_no_coordination_first_n),
		T(test_no_coordination_short),
		T(test_coordination_take),
		T(test_coordination_short_untouched),
		T(test_release_exact),
		T(test_coordination_key_uuid),
		T(test_missing_key),
		T(test_key_with_whitespace),
		T(test_duplicate_keys),
		T(test_refused_file_prefixed),
		T(test_owner_gone),
		T(test_script_coordinated_take),
		T(test_race),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
