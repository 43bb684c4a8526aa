/* SPDX-License-Identifier: MIT */
/* The event loop (os/loop.c): timers on a fake clock, deferred work that
 * coalesces, descriptors, eventfds, signals and pidfds. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/loop.h"

static long long fake_ms;

static long long fake_now(void *ctx)
{
	(void)ctx;
	return fake_ms;
}

struct counter {
	int calls;
	struct extres_source *mark; /* a defer source to trigger, or NULL */
	struct extres_source *free_me; /* a source to free, or NULL */
	int last_signo;
};

static void count(struct extres_source *s, void *ctx)
{
	struct counter *c = ctx;

	c->calls++;
	if (c->mark)
		extres_source_trigger(c->mark);
	if (c->free_me) {
		extres_source_free(c->free_me);
		c->free_me = NULL;
	}
	c->last_signo = extres_source_signal(s);
}

static struct extres_loop *fake_loop(void)
{
	struct extres_loop *l;

	assert_int_equal(extres_loop_new(&l), 0);
	fake_ms = 1000;
	extres_loop_set_clock(l, fake_now, NULL);
	return l;
}

static void test_timers(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter a = { 0 }, b = { 0 };
	struct extres_source *ta, *tb;

	assert_int_equal(extres_loop_add_timer(l, count, &a, &ta), 0);
	assert_int_equal(extres_loop_add_timer(l, count, &b, &tb), 0);
	/* Disarmed until set. */
	assert_int_equal(extres_source_time(ta), -1);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls + b.calls, 0);

	extres_source_set_delay(ta, 100);
	extres_source_set_time(tb, 1050);
	assert_int_equal(extres_source_time(ta), 1100);
	fake_ms = 1049;
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls + b.calls, 0);
	fake_ms = 1050;
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(b.calls, 1);
	assert_int_equal(a.calls, 0);
	/* One-shot. */
	assert_int_equal(extres_source_time(tb), -1);
	fake_ms = 5000;
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 1);
	assert_int_equal(extres_source_calls(ta), 1);

	/* Sooner wins; later does not push it back. */
	extres_source_set_delay(ta, 500);
	extres_source_set_delay_min(ta, 100);
	assert_int_equal(extres_source_time(ta), 5100);
	extres_source_set_delay_min(ta, 900);
	assert_int_equal(extres_source_time(ta), 5100);
	extres_source_set_time(ta, -1);
	fake_ms = 99999;
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 1);
	/* A fake clock never advanced by waiting: nothing woke the loop. */
	assert_int_equal(extres_loop_wakeups(l), 0);
	extres_loop_free(l);
}

/* A timer on the real clock wakes a blocking wait, and only then. */
static void test_real_timer(void **state)
{
	struct extres_loop *l;
	struct counter a = { 0 };
	struct extres_source *t;

	assert_int_equal(extres_loop_new(&l), 0);
	assert_int_equal(extres_loop_add_timer(l, count, &a, &t), 0);
	extres_source_set_delay(t, 20);
	while (a.calls == 0)
		assert_int_equal(extres_loop_run_once(l, -1), 0);
	assert_int_equal(a.calls, 1);
	assert_true(extres_loop_wakeups(l) >= 1);
	assert_true(extres_loop_wakeups(l) <= 3);
	extres_loop_free(l);
}

static void test_defer_coalesces(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter render = { 0 }, job1 = { 0 }, job2 = { 0 };
	struct extres_source *d, *t1, *t2;

	/* Added first, so that the jobs that mark it come after it in the
	 * loop's order: it must still run after them, once. */
	assert_int_equal(extres_loop_add_defer(l, count, &render, &d), 0);
	assert_int_equal(extres_loop_add_timer(l, count, &job1, &t1), 0);
	assert_int_equal(extres_loop_add_defer(l, count, &job2, &t2), 0);
	job1.mark = d;
	job2.mark = d;

	extres_source_trigger(d);
	extres_source_trigger(d);
	extres_source_trigger(d);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(render.calls, 1);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(render.calls, 1);

	/* A timer and a deferred job, both due in one iteration, each mark
	 * the render: one render, after both. */
	extres_source_set_delay(t1, 0);
	extres_source_trigger(t2);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(job1.calls, 1);
	assert_int_equal(job2.calls, 1);
	assert_int_equal(render.calls, 2);

	/* One that marks itself runs again in the next iteration, not in a
	 * loop within this one. */
	render.mark = d;
	extres_source_trigger(d);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(render.calls, 3);
	render.mark = NULL;
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(render.calls, 4);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(render.calls, 4);
	extres_loop_free(l);
}

static void test_io_and_free_in_dispatch(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter a = { 0 }, b = { 0 };
	struct extres_source *sa, *sb;
	int p1[2], p2[2];
	char c;

	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(extres_loop_add_io(l, p1[0], EPOLLIN, count, &a, &sa),
			 0);
	assert_int_equal(extres_loop_add_io(l, p2[0], EPOLLIN, count, &b, &sb),
			 0);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls + b.calls, 0);
	/* Both ready in one batch; whichever runs first frees the other,
	 * which must then not run (ASan sees a use after free). */
	a.free_me = sb;
	b.free_me = sa;
	assert_int_equal(write(p1[1], "x", 1), 1);
	assert_int_equal(write(p2[1], "x", 1), 1);
	assert_int_equal(extres_loop_run_once(l, 1000), 0);
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(extres_loop_wakeups(l), 1);
	/* Level-triggered: what is left unread calls again. */
	if (a.calls) {
		assert_int_equal(extres_loop_run_once(l, 0), 0);
		assert_int_equal(a.calls, 2);
		assert_int_equal(read(p1[0], &c, 1), 1);
		extres_source_free(sa);
	} else {
		assert_int_equal(extres_loop_run_once(l, 0), 0);
		assert_int_equal(b.calls, 2);
		assert_int_equal(read(p2[0], &c, 1), 1);
		extres_source_free(sb);
	}
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	extres_loop_free(l);
}

static void *kick(void *arg)
{
	uint64_t one = 1;
	int i;

	for (i = 0; i < 5; i++)
		if (write(*(int *)arg, &one, sizeof(one)) != sizeof(one))
			return arg;
	return NULL;
}

static void test_event_from_thread(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter a = { 0 };
	struct extres_source *s;
	pthread_t t;
	void *ret;
	int fd;

	assert_int_equal(extres_loop_add_event(l, count, &a, &s), 0);
	fd = extres_source_fd(s);
	assert_true(fd >= 0);
	assert_int_equal(pthread_create(&t, NULL, kick, &fd), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_null(ret);
	/* Five writes, drained at once: one call. */
	assert_int_equal(extres_loop_run_once(l, 1000), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 1);
	extres_loop_free(l);
}

static void test_signal(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter a = { 0 };
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	assert_int_equal(extres_loop_add_signal(l, SIGUSR2, count, &a, NULL),
			 0);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 0);
	assert_int_equal(kill(getpid(), SIGUSR2), 0);
	assert_int_equal(extres_loop_run_once(l, 5000), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.last_signo, SIGUSR2);
	/* Read: not pending any more. */
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 1);
	extres_loop_free(l);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

static void test_pidfd(void **state)
{
	struct extres_loop *l = fake_loop();
	struct counter a = { 0 };
	int go[2], pidfd, status;
	pid_t pid;
	char c;

	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		/* Exit once the parent says so (or is gone). */
		if (read(go[0], &c, 1) < 0) {
		}
		_exit(0);
	}
	close(go[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	assert_true(pidfd >= 0);
	assert_int_equal(extres_loop_add_pidfd(l, pidfd, count, &a, NULL), 0);
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 0);
	close(go[1]);
	assert_int_equal(extres_loop_run_once(l, 10000), 0);
	assert_int_equal(a.calls, 1);
	/* Once, though the pidfd stays readable. */
	assert_int_equal(extres_loop_run_once(l, 0), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	extres_loop_free(l);
	/* A bad descriptor is refused. */
	assert_int_equal(extres_loop_new(&l), 0);
	assert_int_equal(extres_loop_add_pidfd(l, -1, count, &a, NULL), -EBADF);
	extres_loop_free(l);
}

static void *run_loop(void *arg)
{
	return (void *)(intptr_t)extres_loop_run(arg);
}

/* An idle loop sleeps (no wake-up while nothing happens) and a quit from
 * another thread ends it. */
static void test_idle_and_quit(void **state)
{
	struct extres_loop *l;
	struct counter a = { 0 };
	struct extres_source *t;
	pthread_t th;
	void *ret;

	assert_int_equal(extres_loop_new(&l), 0);
	assert_int_equal(extres_loop_add_timer(l, count, &a, &t), 0);
	assert_int_equal(pthread_create(&th, NULL, run_loop, l), 0);
	usleep(200 * 1000);
	extres_loop_quit(l);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	/* The quit's own wake-up at most, and nothing else. */
	assert_true(extres_loop_wakeups(l) <= 1);
	assert_int_equal(a.calls, 0);
	extres_loop_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timers),
		cmocka_unit_test(test_real_timer),
		cmocka_unit_test(test_defer_coalesces),
		cmocka_unit_test(test_io_and_free_in_dispatch),
		cmocka_unit_test(test_event_from_thread),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_pidfd),
		cmocka_unit_test(test_idle_and_quit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
