/* SPDX-License-Identifier: MIT */
/* The notifier thread's queue (daemon/pusher.c). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/pusher.h"

struct seen {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* a call was made, or block cleared */
	uint64_t inos[64];
	unsigned calls[64];
	size_t n;
	uint64_t later; /* this one answers EXTRES_PUSH_LATER */
	int block; /* the callback waits while set */
};

static int record(void *ctx, uint64_t ino)
{
	struct seen *s = ctx;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	while (s->block)
		pthread_cond_wait(&s->changed, &s->lock);
	if (s->n < 64)
		s->inos[s->n++] = ino;
	if (ino < 64)
		s->calls[ino]++;
	if (ino == s->later)
		r = EXTRES_PUSH_LATER;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Ten seconds from now on CLOCK_REALTIME (pthread_cond_timedwait's): a
 * bound that only catches a hang. */
static struct timespec in_10_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	return t;
}

/* Wait (10 s at most) until `n` calls were made. */
static void wait_calls(struct seen *s, size_t n)
{
	struct timespec until = in_10_s();
	size_t got;

	pthread_mutex_lock(&s->lock);
	while (s->n < n &&
	       pthread_cond_timedwait(&s->changed, &s->lock, &until) == 0)
		;
	got = s->n;
	pthread_mutex_unlock(&s->lock);
	if (got < n)
		fail_msg("%zu calls after 10 s, wanted %zu", got, n);
}

static void unblock(struct seen *s)
{
	pthread_mutex_lock(&s->lock);
	s->block = 0;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
}

/* Wait (10 s at most) until the pusher has counted `n` inodes, pushed or
 * dropped. It counts one after its callback returned, and says so to no
 * one: look every millisecond. */
static void wait_counted(struct extres_pusher *p, unsigned long long n)
{
	unsigned long long got = 0;
	int i;

	for (i = 0; i < 10000; i++) {
		pthread_mutex_lock(&p->lock);
		got = p->pushed + p->dropped;
		pthread_mutex_unlock(&p->lock);
		if (got >= n)
			return;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	fail_msg("%llu inodes counted after 10 s, wanted %llu", got, n);
}

static void test_in_order(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER,
			  .changed = PTHREAD_COND_INITIALIZER };
	struct extres_pusher p;

	assert_int_equal(extres_pusher_init(&p, 16, record, &s), 0);
	/* Not started: dropped. */
	extres_pusher_queue(&p, 1);
	assert_int_equal(extres_pusher_start(&p), 0);
	extres_pusher_queue(&p, 2);
	extres_pusher_queue(&p, 3);
	wait_calls(&s, 2);
	assert_int_equal(s.inos[0], 2);
	assert_int_equal(s.inos[1], 3);
	/* Each stored once: a store that returned 0 is in the kernel. */
	wait_counted(&p, 2);
	extres_pusher_destroy(&p);
	assert_int_equal(s.calls[2], 1);
	assert_int_equal(s.calls[3], 1);
	assert_int_equal(p.pushed, 2);
	assert_int_equal(p.dropped, 0);
	extres_pusher_destroy(&p);
}

/* EXTRES_PUSH_LATER: tried again for about a second (21 tries), not for
 * ever. */
static void test_later(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER,
			  .changed = PTHREAD_COND_INITIALIZER,
			  .later = 5 };
	struct extres_pusher p;

	assert_int_equal(extres_pusher_init(&p, 16, record, &s), 0);
	assert_int_equal(extres_pusher_start(&p), 0);
	extres_pusher_queue(&p, 5);
	/* Given up (dropped): it can be tried no more. */
	wait_counted(&p, 1);
	pthread_mutex_lock(&s.lock);
	assert_int_equal(s.calls[5], 21);
	pthread_mutex_unlock(&s.lock);
	extres_pusher_destroy(&p);
	assert_int_equal(p.dropped, 1);
}

/* A full queue drops what does not fit; what fits is still pushed. */
static void test_full(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER,
			  .changed = PTHREAD_COND_INITIALIZER,
			  .block = 1 };
	struct extres_pusher p;
	uint64_t i;

	assert_int_equal(extres_pusher_init(&p, 4, record, &s), 0);
	assert_int_equal(extres_pusher_start(&p), 0);
	extres_pusher_queue(&p, 10);
	/* The thread holds 10 (blocked in the callback) or has not taken
	 * it yet; either way at most 4 of the next 8 fit. */
	for (i = 11; i < 19; i++)
		extres_pusher_queue(&p, i);
	unblock(&s);
	/* All 9 accounted for: what fit pushed, the rest dropped. */
	wait_counted(&p, 9);
	extres_pusher_destroy(&p);
	assert_true(p.pushed >= 4 && p.pushed <= 5);
	assert_int_equal(p.pushed + p.dropped, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_later),
		cmocka_unit_test(test_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
