/* SPDX-License-Identifier: MIT */
#include "daemon/pusher.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often, and how long apart, an inode the kernel does not hold yet is
 * tried again. The kernel makes the inode when the process that asked reads
 * the reply, and that process may wait for a CPU (about 140 us for a
 * wake-up on the other CPU here, tens of milliseconds on a loaded machine):
 * after 1, 2, 4 ... 64 ms, then every 64 ms, about 1 s in all. Not for
 * ever: a reader killed before it read the reply leaves a number the kernel
 * never holds. */
#define MAX_TRIES 21
#define RETRY_NS 1000000L
#define RETRY_SHIFT_MAX 6

static void put(struct extres_pusher *p, struct extres_push_item it)
{
	if (p->n == p->cap) {
		p->dropped++;
		return;
	}
	p->ring[(p->head + p->n) % p->cap] = it;
	p->n++;
}

static void *run(void *arg)
{
	struct extres_pusher *p = arg;
	struct extres_push_item *later;
	size_t n_later = 0, i;

	/* Named, so that an operator (and a test) can tell it in top -H. */
	pthread_setname_np(pthread_self(), "extres-push");
	later = calloc(p->cap, sizeof(*later));
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct extres_push_item it;
		int r;

		if (p->n == 0 && n_later > 0) {
			struct timespec until;
			unsigned tries = MAX_TRIES;
			long long ns;

			/* Only retries are left: give the kernel a moment,
			 * longer each time (new work wakes us at once). */
			for (i = 0; i < n_later; i++)
				if (later[i].tries < tries)
					tries = later[i].tries;
			if (tries > RETRY_SHIFT_MAX + 1)
				tries = RETRY_SHIFT_MAX + 1;
			ns = RETRY_NS << (tries - 1);
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += ns / 1000000000L;
			until.tv_nsec += ns % 1000000000L;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&p->wake, &p->lock, &until);
			for (i = 0; i < n_later; i++)
				put(p, later[i]);
			n_later = 0;
			continue;
		}
		if (p->n == 0) {
			pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		it = p->ring[p->head];
		p->head = (p->head + 1) % p->cap;
		p->n--;
		pthread_mutex_unlock(&p->lock);
		r = p->push(p->ctx, it.ino);
		pthread_mutex_lock(&p->lock);
		if (r == 0) {
			p->pushed++;
			continue;
		}
		if (r != EXTRES_PUSH_LATER || ++it.tries >= MAX_TRIES ||
		    !later || n_later == p->cap) {
			p->dropped++;
			continue;
		}
		later[n_later++] = it;
	}
	pthread_mutex_unlock(&p->lock);
	free(later);
	return NULL;
}

int extres_pusher_init(struct extres_pusher *p, size_t cap,
		       int (*push)(void *ctx, uint64_t ino), void *ctx)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->ring = calloc(cap ? cap : 1, sizeof(*p->ring));
	if (!p->ring)
		return -ENOMEM;
	p->cap = cap ? cap : 1;
	p->push = push;
	p->ctx = ctx;
	r = pthread_mutex_init(&p->lock, NULL);
	if (r != 0)
		goto fail;
	r = pthread_cond_init(&p->wake, NULL);
	if (r != 0) {
		pthread_mutex_destroy(&p->lock);
		goto fail;
	}
	return 0;
fail:
	free(p->ring);
	p->ring = NULL;
	return -r;
}

int extres_pusher_start(struct extres_pusher *p)
{
	int r = pthread_create(&p->thread, NULL, run, p);

	if (r != 0)
		return -r;
	p->started = 1;
	return 0;
}

void extres_pusher_queue(struct extres_pusher *p, uint64_t ino)
{
	if (!p->ring)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->started && !p->stop) {
		put(p, (struct extres_push_item){ .ino = ino });
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
}

void extres_pusher_destroy(struct extres_pusher *p)
{
	if (!p->ring)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = 1;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		p->started = 0;
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	p->ring = NULL;
}
