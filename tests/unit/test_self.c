/* SPDX-License-Identifier: MIT */
/* /self: the tree's leases, matched by PID and start time; and the
 * process chain read from /proc. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/self.h"
#include "os/proc.h"
#include "tree/snapshot.h"

static struct extres_property p1[] = { { "index", "1", 1 } };
static struct extres_info one[] = { { 1, p1 } };

static struct extres_tree *build(size_t n_leases)
{
	struct extres_snapshot_resource res[] = { { "gpu", one, 1 } };
	struct extres_snapshot_lease leases[] = { { "42-7", res, 1 } };
	struct timespec now = { 0 };
	struct extres_tree *t = NULL;
	struct extres_err err;

	assert_int_equal(extres_snapshot_build_self(res, 1, NULL, 0, leases,
						    n_leases, now, NULL, &t,
						    &err),
			 0);
	return t;
}

static void test_match(void **state)
{
	struct extres_tree *t = build(1), *none = build(0);
	const struct extres_node *self =
		extres_tree_lookup(t, EXTRES_ROOT_INO, "self");
	char buf[EXTRES_SELF_TARGET_MAX];
	size_t len = 0;

	assert_non_null(self);
	assert_true(S_ISLNK(self->mode));
	assert_int_equal(extres_self_match(t, 42, 7, buf, &len), 1);
	assert_int_equal(len, strlen(".leases/42-7"));
	assert_memory_equal(buf, ".leases/42-7", len);
	/* Another start time is another process. */
	assert_int_equal(extres_self_match(t, 42, 8, buf, &len), 0);
	assert_int_equal(extres_self_match(t, 43, 7, buf, &len), 0);
	assert_int_equal(extres_self_match(none, 42, 7, buf, &len), -ENOENT);
	extres_tree_free(t);
	extres_tree_free(none);
}

static const struct extres_tree *lock(void *ctx)
{
	return ctx;
}

static void unlock(void *ctx)
{
}

/* The lease of this process, as a tree. */
static struct extres_tree *lease_tree(pid_t pid, char *id, size_t size)
{
	static struct extres_snapshot_resource res[] = { { "gpu", one, 1 } };
	struct extres_snapshot_lease leases[] = { { id, res, 1 } };
	struct timespec now = { 0 };
	struct extres_tree *t = NULL;
	struct extres_err err;
	uint64_t starttime;

	if (extres_proc_starttime(pid, &starttime) < 0)
		return NULL;
	snprintf(id, size, "%d-%llu", (int)pid, (unsigned long long)starttime);
	if (extres_snapshot_build_self(res, 1, NULL, 0, leases, 1, now, NULL,
				       &t, &err) < 0)
		return NULL;
	return t;
}

/* A grandchild of a leaseholder resolves to the lease; the holder's
 * parent (this test) does not. The holder and its child exit at once,
 * whatever happens: never back into the test runner. */
static void test_resolve(void **state)
{
	char id[64], buf[EXTRES_SELF_TARGET_MAX], want[80];
	char again[EXTRES_SELF_TARGET_MAX];
	struct extres_proc_cache procs;
	int from_child[2], i;
	struct extres_tree *t;
	pid_t pid, gc;
	size_t len;
	ssize_t n;

	assert_int_equal(pipe(from_child), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		t = lease_tree(getpid(), id, sizeof(id));
		if (!t)
			_exit(1);
		gc = fork();
		if (gc == 0) {
			len = extres_self_resolve(NULL, getpid(), lock, unlock,
						  (void *)t, buf);
			/* The same through a cache, once kept too. */
			if (extres_proc_cache_init(&procs) < 0)
				_exit(1);
			for (i = 0; i < 4; i++)
				if (extres_self_resolve(&procs, getpid(), lock,
							unlock, (void *)t,
							again) != len ||
				    memcmp(buf, again, len) != 0)
					_exit(1);
			_exit(write(from_child[1], buf, len) == (ssize_t)len ?
				      0 :
				      1);
		}
		_exit(gc > 0 && waitpid(gc, NULL, 0) == gc ? 0 : 1);
	}
	close(from_child[1]);
	n = read(from_child[0], buf, sizeof(buf));
	/* The holder is still ours to look at until it is reaped. */
	t = lease_tree(pid, id, sizeof(id));
	assert_non_null(t);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(from_child[0]);
	snprintf(want, sizeof(want), ".leases/%s", id);
	assert_int_equal(n, (ssize_t)strlen(want));
	assert_memory_equal(buf, want, (size_t)n);
	len = extres_self_resolve(NULL, getpid(), lock, unlock, t, buf);
	assert_int_equal(len, strlen(".leases/none"));
	assert_memory_equal(buf, ".leases/none", len);
	extres_tree_free(t);
}

/* Where nobody holds a lease, /self leads nowhere for anyone: who asks is
 * never read from /proc. */
static void test_resolve_no_leases(void **state)
{
	struct extres_tree *t = build(0);
	struct extres_proc_cache procs;
	char buf[EXTRES_SELF_TARGET_MAX];
	size_t len;

	assert_int_equal(extres_proc_cache_init(&procs), 0);
	len = extres_self_resolve(&procs, getpid(), lock, unlock, t, buf);
	assert_int_equal(len, strlen(".leases/none"));
	assert_memory_equal(buf, ".leases/none", len);
	assert_int_equal(procs.reads, 0);
	extres_proc_cache_destroy(&procs);
	extres_tree_free(t);
}

static void test_stat_thread(void **state)
{
	static const char main_thread[] =
		"9 (x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 17 0\n";
	static const char other[] =
		"10 (x) S 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -1 0\n";
	struct extres_proc_stat st;

	assert_int_equal(extres_proc_parse_stat_full(
				 main_thread, sizeof(main_thread) - 1, &st),
			 0);
	assert_int_equal(st.thread, 0);
	assert_int_equal(st.starttime, 5);
	assert_int_equal(
		extres_proc_parse_stat_full(other, sizeof(other) - 1, &st), 0);
	assert_int_equal(st.thread, 1);
	assert_int_equal(st.ppid, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_no_leases),
		cmocka_unit_test(test_stat_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
