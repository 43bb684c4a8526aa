/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/deadline.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* What the child does: `steps` steps `gap_ms` apart, then `done` or not,
 * then `tail_ms` of sleep, then exit with `status` (or die of `sig`). */
struct plan {
	int steps;
	long gap_ms;
	int done;
	long tail_ms;
	int status;
	int sig;
};

static int child(void *arg, struct extres_deadline_child *c)
{
	const struct plan *p = arg;
	int i;

	for (i = 0; i < p->steps; i++) {
		nap_ms(p->gap_ms);
		extres_deadline_step(c);
	}
	if (p->done)
		extres_deadline_done(c);
	nap_ms(p->tail_ms);
	if (p->sig)
		raise(p->sig);
	return p->status;
}

static void test_status(void **state)
{
	const struct extres_deadline dl = { .step_ms = 1000 };
	struct plan p = { .status = 3 };

	(void)state;
	assert_int_equal(extres_deadline_run(&dl, child, &p), 3);
	p.sig = SIGTERM;
	assert_int_equal(extres_deadline_run(&dl, child, &p), 128 + SIGTERM);
}

/* Silence past step_ms kills the child; steps keep it alive. */
static void test_step(void **state)
{
	const struct extres_deadline dl = { .step_ms = 200 };
	struct plan hang = { .steps = 1, .tail_ms = 60000 };
	struct plan busy = { .steps = 8, .gap_ms = 50 };
	long long t0;

	(void)state;
	t0 = now_ms();
	assert_int_equal(extres_deadline_run(&dl, child, &hang), -ETIMEDOUT);
	assert_true(now_ms() - t0 >= 200);
	assert_true(now_ms() - t0 < 5000);
	assert_int_equal(extres_deadline_run(&dl, child, &busy), 0);
}

/* total_ms ends even a child that keeps stepping. */
static void test_total(void **state)
{
	const struct extres_deadline dl = { .step_ms = 1000, .total_ms = 300 };
	struct plan busy = { .steps = 1000, .gap_ms = 20 };
	long long t0;

	(void)state;
	t0 = now_ms();
	assert_int_equal(extres_deadline_run(&dl, child, &busy), -ETIMEDOUT);
	assert_true(now_ms() - t0 >= 300);
	assert_true(now_ms() - t0 < 5000);
}

/* After done, no deadline applies. */
static void test_done(void **state)
{
	const struct extres_deadline dl = { .step_ms = 100, .total_ms = 100 };
	struct plan p = { .done = 1, .tail_ms = 400, .status = 7 };

	(void)state;
	assert_int_equal(extres_deadline_run(&dl, child, &p), 7);
}

static int stop_yes(void)
{
	return 1;
}

static void test_stop(void **state)
{
	const struct extres_deadline dl = { .step_ms = 60000,
					    .stop_requested = stop_yes };
	struct plan hang = { .tail_ms = 60000 };
	long long t0;

	(void)state;
	t0 = now_ms();
	assert_int_equal(extres_deadline_run(&dl, child, &hang), -EINTR);
	assert_true(now_ms() - t0 < 5000);
}

/* In the child: exit 1 when descriptors 0, 1 and 2 are all /dev/null,
 * 2 when they are the caller's (`arg`: the caller's fd 1's inode). */
static int child_stdio(void *arg, struct extres_deadline_child *c)
{
	const struct stat *caller = arg;
	struct stat null, st;
	int fd, nulls = 0;

	(void)c;
	if (stat("/dev/null", &null) < 0)
		return 9;
	for (fd = 0; fd < 3; fd++)
		if (fstat(fd, &st) == 0 && st.st_rdev == null.st_rdev &&
		    st.st_ino == null.st_ino)
			nulls++;
	if (nulls == 3)
		return 1;
	if (fstat(1, &st) == 0 && st.st_ino == caller->st_ino &&
	    st.st_dev == caller->st_dev)
		return 2;
	return 8;
}

/* A child the caller gives up on must hold none of its pipes, unless it
 * is to print. */
static void test_stdio(void **state)
{
	struct extres_deadline dl = { .step_ms = 5000 };
	int fds[2], saved;
	struct stat st;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	saved = dup(1);
	assert_true(saved >= 0);
	assert_true(dup2(fds[1], 1) == 1);
	assert_int_equal(fstat(1, &st), 0);
	assert_int_equal(extres_deadline_run(&dl, child_stdio, &st), 1);
	dl.keep_stdio = 1;
	assert_int_equal(extres_deadline_run(&dl, child_stdio, &st), 2);
	assert_true(dup2(saved, 1) == 1);
	close(saved);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status), cmocka_unit_test(test_step),
		cmocka_unit_test(test_total),  cmocka_unit_test(test_done),
		cmocka_unit_test(test_stop),   cmocka_unit_test(test_stdio),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
