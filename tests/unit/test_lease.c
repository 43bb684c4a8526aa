/* SPDX-License-Identifier: MIT */
/* Leases: taking for an owner with lease lines, all or nothing, the queue's
 * order, releasing only the lease's lines, its environment and CPUs. Real
 * files in a mkdtemp directory, real processes. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc_files.h"

#include "alloc/coord.h"
#include "lease/lease.h"
#include "os/cpus.h"
#include "os/locks.h"

struct fixture {
	char dir[TF_DIR_LEN];
	char path[TF_PATH_LEN];
	char queue[TF_PATH_LEN + 8];
	struct extres_param root;
	struct extres_resource_config res;
	struct extres_infos *cands;
	struct extres_lease_want want;
	pid_t me;
	uint64_t st;
	char buf[4096];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || tf_coord_dir("lease", f->dir, f->path) < 0) {
		free(f);
		return -1;
	}
	snprintf(f->queue, sizeof(f->queue), "%s.queue", f->path);
	f->root.kind = EXTRES_PARAM_MAPPING;
	f->res.name = "gpu";
	f->res.amount = (struct extres_amount){ 1, 1 };
	f->res.driver = "static";
	f->res.params = &f->root;
	f->res.coordination_key = "index";
	f->res.coordination_file = f->path;
	f->res.lock_timeout_ms = 5000;
	f->me = getpid();
	f->st = tf_starttime(f->me);
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

/* n candidates with index=i and the given local_cpulist (NULL: none). */
static void make_want(struct fixture *f, size_t n, uint64_t want,
		      const char *cpulist)
{
	char v[32];
	size_t i;

	assert_int_equal(extres_infos_new(&f->cands), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(extres_infos_begin(f->cands, NULL), 0);
		snprintf(v, sizeof(v), "%zu", i);
		assert_int_equal(extres_infos_add(f->cands, "index", v, NULL),
				 0);
		if (cpulist)
			assert_int_equal(extres_infos_add(f->cands,
							  "local_cpulist",
							  cpulist, NULL),
					 0);
	}
	f->want = (struct extres_lease_want){ .res = &f->res,
					      .n = want,
					      .candidates = f->cands };
}

/* A process that waits in `queue` (which exists) as a waiter proves it:
 * with the lock of lease/lease.h, taken before this returns. */
static pid_t start_waiter(const char *queue)
{
	pid_t parent = getpid(), pid;
	int p[2], fd;
	char c;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		fd = open(queue, O_RDONLY);
		/* After the fork: its own PID's byte. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
		    getppid() != parent || fd < 0 ||
		    extres_lock_proof_take(fd, EXTRES_LEASE_WAITER_PROOF) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

/* Lines of a lease of `pid`/`st` for each key in `keys` ("0 1"). */
static const char *lease_lines(struct fixture *f, pid_t pid, uint64_t st,
			       const char *keys)
{
	size_t off = 0;
	char k[16];
	const char *p = keys;
	int n;

	f->buf[0] = '\0';
	while (sscanf(p, "%15s%n", k, &n) == 1) {
		off += (size_t)snprintf(f->buf + off, sizeof(f->buf) - off,
					"%s %d\t%" PRIu64 "\tlease=%d-%" PRIu64
					"\n",
					k, (int)pid, st, (int)pid, st);
		p += n;
	}
	return f->buf;
}

static void test_take_and_release(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = NULL;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid(), dead = tf_dead_pid();
	uint64_t hst = tf_starttime(holder);
	char before[512], want[1024];

	make_want(f, 4, 2, NULL);
	/* 0: a live daemon's line; 1: a dead owner's; 3: Flink's line. */
	snprintf(before, sizeof(before), "0 %d\t%" PRIu64 "\n1 %d\t5\n3 %d\n",
		 (int)holder, hst, (int)dead, (int)holder);
	tf_write_file(f->path, before);
	assert_int_equal(extres_lease_check(&f->want, 1, &err), 0);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 0);
	assert_null(busy.text);
	assert_int_equal(l->n, 1);
	assert_int_equal(l->parts[0]->n, 2);
	assert_string_equal(extres_info_get(&l->parts[0]->infos[0], "index"),
			    "1");
	assert_string_equal(extres_info_get(&l->parts[0]->infos[1], "index"),
			    "2");
	snprintf(want, sizeof(want), "0 %d\t%" PRIu64 "\n3 %d\n%s", (int)holder,
		 hst, (int)holder, lease_lines(f, f->me, f->st, "1 2"));
	assert_string_equal(tf_read_file(f->path), want);
	snprintf(want, sizeof(want), "%d-%" PRIu64, (int)f->me, f->st);
	assert_string_equal(l->id, want);

	/* Only the lease's lines go, byte for byte. */
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	snprintf(want, sizeof(want), "0 %d\t%" PRIu64 "\n3 %d\n", (int)holder,
		 hst, (int)holder);
	assert_string_equal(tf_read_file(f->path), want);
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
	tf_reap(holder);
}

static void test_busy_writes_nothing(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = (struct extres_lease *)0x1;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	pid_t holder = tf_live_pid();
	uint64_t hst = tf_starttime(holder);
	char before[256];

	make_want(f, 2, 2, NULL);
	/* The dead line would be reclaimed by a take that succeeds. */
	snprintf(before, sizeof(before), "1 %d\t%" PRIu64 "\n0 %d\t7\n",
		 (int)holder, hst, (int)tf_dead_pid());
	tf_write_file(f->path, before);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 -EBUSY);
	assert_ptr_equal(l, (struct extres_lease *)0x1);
	assert_string_equal(tf_read_file(f->path), before);
	assert_non_null(strstr(busy.text, "wanted 2, found 1 free of 2"));
	assert_non_null(strstr(busy.text, "index 1 by PID"));
	assert_int_equal(busy.n_pids, 1);
	assert_int_equal(busy.pids[0], holder);
	extres_lease_busy_clear(&busy);
	tf_reap(holder);
}

static void test_check(void **state)
{
	struct fixture *f = *state;
	struct extres_err err = { "" };
	struct extres_lease_want two[2];

	make_want(f, 2, 3, NULL);
	assert_int_equal(extres_lease_check(&f->want, 1, &err), -ERANGE);
	assert_string_equal(err.msg,
			    "resource 'gpu': wanted 3, but it has 2 devices");
	f->want.n = 1;
	two[0] = two[1] = f->want;
	assert_int_equal(extres_lease_check(two, 2, &err), -EINVAL);
	f->res.coordination_file = NULL;
	assert_int_equal(extres_lease_check(&f->want, 1, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "has no coordination-file"));
}

/* Waiters are served in the order they came; a dead one counts for
 * nothing; a run that does not wait does not overtake them. */
static void test_queue_order(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = NULL;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	pid_t first, dead = tf_dead_pid();
	struct extres_lease_waiter w1 = { 0 },
				   me = { .pid = f->me, .starttime = f->st };
	char lines[256];

	make_want(f, 2, 1, NULL);
	tf_write_file(f->queue, "");
	first = start_waiter(f->queue);
	w1.pid = first;
	w1.starttime = tf_starttime(first);
	/* A dead waiter with ticket 1, a live one with ticket 2. */
	snprintf(lines, sizeof(lines),
		 "1 %d\t3\tlease=waiting\n2 %d\t%" PRIu64 "\tlease=waiting\n",
		 (int)dead, (int)first, w1.starttime);
	tf_write_file(f->queue, lines);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, &me, 5000,
					  &l, &busy, &err),
			 -EBUSY);
	assert_non_null(strstr(busy.text, "earlier waiters in the queue"));
	assert_int_equal(busy.n_pids, 1);
	assert_int_equal(busy.pids[0], first);
	extres_lease_busy_clear(&busy);
	/* Behind the live one with the next ticket; the dead one dropped;
	 * nothing recorded. */
	snprintf(lines, sizeof(lines),
		 "2 %d\t%" PRIu64 "\tlease=waiting\n3 %d\t%" PRIu64
		 "\tlease=waiting\n",
		 (int)first, w1.starttime, (int)f->me, f->st);
	assert_string_equal(tf_read_file(f->queue), lines);
	/* The coordination file was not even looked at. */
	assert_int_equal(access(f->path, F_OK), -1);
	/* Not waiting is no way past. */
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 -EBUSY);
	extres_lease_busy_clear(&busy);
	/* The first waiter goes: we are first, take, and leave the queue. */
	tf_reap(first);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, &me, 5000,
					  &l, &busy, &err),
			 0);
	assert_string_equal(tf_read_file(f->queue), "");
	assert_string_equal(tf_read_file(f->path),
			    lease_lines(f, f->me, f->st, "0"));
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
	/* Leaving removes only our line. */
	tf_write_file(f->queue, "5 1\t2\tlease=waiting\n");
	snprintf(lines, sizeof(lines),
		 "5 1\t2\tlease=waiting\n9 %d\t%" PRIu64 "\tlease=waiting\n",
		 (int)f->me, f->st);
	tf_write_file(f->queue, lines);
	assert_int_equal(extres_lease_queue_leave(&f->want, 1, &me, 5000, &err),
			 0);
	assert_string_equal(tf_read_file(f->queue), "5 1\t2\tlease=waiting\n");
}

/* A waiter line counts only while its process proves it; a stopped
 * waiter is passed over and keeps its place. */
static void test_queue_proof_and_stop(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = NULL;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	struct extres_lease_waiter me = { .pid = f->me, .starttime = f->st };
	uint64_t st1 = tf_starttime(1);
	pid_t other;
	char lines[256];

	make_want(f, 2, 1, NULL);
	/* PID 1 is alive, but proves nothing: it neither blocks a run nor
	 * stays in the queue. */
	snprintf(lines, sizeof(lines), "1 1\t%" PRIu64 "\tlease=waiting\n",
		 st1);
	tf_write_file(f->queue, lines);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 0);
	assert_null(busy.text);
	extres_lease_busy_clear(&busy);
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
	l = NULL;
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, &me, 5000,
					  &l, &busy, &err),
			 0);
	extres_lease_busy_clear(&busy);
	assert_string_equal(tf_read_file(f->queue), "");
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
	l = NULL;
	/* A proven waiter ahead, stopped: passed over, its line kept. */
	other = start_waiter(f->queue);
	snprintf(lines, sizeof(lines), "1 %d\t%" PRIu64 "\tlease=waiting\n",
		 (int)other, tf_starttime(other));
	tf_write_file(f->queue, lines);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, &me, 5000,
					  &l, &busy, &err),
			 -EBUSY);
	assert_true(busy.relook);
	extres_lease_busy_clear(&busy);
	kill(other, SIGSTOP);
	assert_int_equal(waitpid(other, NULL, WUNTRACED), other);
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, &me, 5000,
					  &l, &busy, &err),
			 0);
	extres_lease_busy_clear(&busy);
	assert_string_equal(tf_read_file(f->queue), lines);
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
	tf_reap(other);
}

static void test_env_and_cpus(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = NULL;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	char **env = NULL, want[64];
	cpu_set_t set;

	make_want(f, 3, 2, "2-3,0");
	f->res.env_var = "MY_DEVICES";
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 0);
	assert_int_equal(extres_lease_env(l, &f->want, &env), 0);
	assert_string_equal(env[0], "EXTRES_GPU_INDEXES=0,1");
	assert_string_equal(env[1], "MY_DEVICES=0,1");
	snprintf(want, sizeof(want), "EXTRES_LEASE=%d-%" PRIu64, (int)f->me,
		 f->st);
	assert_string_equal(env[2], want);
	assert_null(env[3]);
	extres_lease_env_free(env);
	assert_int_equal(extres_lease_local_cpus(l, &set, &err), 0);
	assert_int_equal(CPU_COUNT(&set), 3);
	assert_true(CPU_ISSET(0, &set) && CPU_ISSET(2, &set) &&
		    CPU_ISSET(3, &set));
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
}

/* A quote in a value comes through .meta/env's quoting unharmed. */
static void test_env_quote(void **state)
{
	struct fixture *f = *state;
	struct extres_lease *l = NULL;
	struct extres_lease_busy busy;
	struct extres_err err = { "" };
	char **env = NULL;

	assert_int_equal(extres_infos_new(&f->cands), 0);
	assert_int_equal(extres_infos_begin(f->cands, NULL), 0);
	assert_int_equal(extres_infos_add(f->cands, "index", "it's", NULL), 0);
	f->want = (struct extres_lease_want){ .res = &f->res,
					      .n = 1,
					      .candidates = f->cands };
	assert_int_equal(extres_lease_try(&f->want, 1, f->me, f->st, NULL, 5000,
					  &l, &busy, &err),
			 0);
	assert_int_equal(extres_lease_env(l, &f->want, &env), 0);
	assert_string_equal(env[0], "EXTRES_GPU_INDEXES=it's");
	extres_lease_env_free(env);
	/* No local_cpulist: said, with the device. */
	assert_int_equal(extres_lease_local_cpus(l, &(cpu_set_t){ 0 }, &err),
			 -ENOENT);
	assert_string_equal(
		err.msg,
		"resource 'gpu': device index it's has no local_cpulist property");
	assert_int_equal(extres_lease_release(l, 5000, &err), 0);
	extres_lease_free(l);
}

static void test_cpulist(void **state)
{
	cpu_set_t s;

	(void)state;
	CPU_ZERO(&s);
	assert_int_equal(extres_cpulist_parse("0-3,8-11\n", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 8);
	assert_true(CPU_ISSET(11, &s) && !CPU_ISSET(4, &s));
	CPU_ZERO(&s);
	assert_int_equal(extres_cpulist_parse("", &s), 0);
	assert_int_equal(CPU_COUNT(&s), 0);
	assert_int_equal(extres_cpulist_parse("3-1", &s), -EINVAL);
	assert_int_equal(extres_cpulist_parse("1,", &s), -EINVAL);
	assert_int_equal(extres_cpulist_parse("a", &s), -EINVAL);
	assert_int_equal(extres_cpulist_parse("1 2", &s), -EINVAL);
	assert_int_equal(extres_cpulist_parse("99999", &s), -EINVAL);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_take_and_release),
		T(test_busy_writes_nothing),
		T(test_check),
		T(test_queue_order),
		T(test_queue_proof_and_stop),
		T(test_env_and_cpus),
		T(test_env_quote),
		cmocka_unit_test(test_cpulist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
