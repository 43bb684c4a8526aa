/* SPDX-License-Identifier: MIT */
#include "daemon/polled.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * libfuse keeps a handle's open file (the kernel's `kh`) private, and it is
 * what tells a poller's repeated requests apart from two open files: a
 * program that polls with a timeout in a loop sends a request, and so a new
 * handle, every round. This is libfuse 3's layout of struct fuse_pollhandle
 * (lib/fuse_i.h), unchanged since it appeared (2.8); only `kh` is read.
 */
struct pollhandle_layout {
	uint64_t kh;
	void *se;
};

static uint64_t kh_of(struct fuse_pollhandle *ph)
{
	return ((const struct pollhandle_layout *)(void *)ph)->kh;
}

int extres_polled_init(struct extres_polled *p)
{
	memset(p, 0, sizeof(*p));
	return -pthread_mutex_init(&p->lock, NULL);
}

void extres_polled_destroy(struct extres_polled *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		fuse_pollhandle_destroy(p->w[i].ph);
	free(p->w);
	pthread_mutex_destroy(&p->lock);
	memset(p, 0, sizeof(*p));
}

static void notify(struct fuse_pollhandle *ph)
{
	/* Nothing to do if the kernel is gone: the reader is too. */
	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

/* Take every handle out (to notify outside the lock). */
static struct extres_polled_waiter *take_all(struct extres_polled *p, size_t *n)
{
	struct extres_polled_waiter *w = p->w;

	*n = p->n;
	p->w = NULL;
	p->n = p->cap = 0;
	return w;
}

void extres_polled_add(struct extres_polled *p, uint64_t ino,
		       struct fuse_pollhandle *ph)
{
	struct extres_polled_waiter *w, *flood = NULL;
	struct fuse_pollhandle *old = NULL;
	uint64_t kh = kh_of(ph);
	size_t i, n_flood = 0;
	int failed = 0;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++)
		if (p->w[i].kh == kh)
			break;
	if (i < p->n) {
		old = p->w[i].ph;
		p->w[i].ph = ph;
		p->w[i].ino = ino;
		goto out;
	}
	if (p->n >= EXTRES_POLLED_MAX)
		flood = take_all(p, &n_flood);
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;

		w = realloc(p->w, cap * sizeof(*w));
		if (!w) {
			failed = 1;
			goto out;
		}
		p->w = w;
		p->cap = cap;
	}
	p->w[p->n++] = (struct extres_polled_waiter){ ino, kh, ph };
out:
	pthread_mutex_unlock(&p->lock);
	/* The same open file asked again: its older handle wakes nobody
	 * the newer one does not. */
	if (old)
		fuse_pollhandle_destroy(old);
	if (failed)
		notify(ph);
	for (i = 0; i < n_flood; i++)
		notify(flood[i].ph);
	free(flood);
}

size_t extres_polled_wake(struct extres_polled *p,
			  int (*served)(uint64_t ino, void *arg), void *arg)
{
	size_t i, kept = 0, woken = 0;

	/* Under the lock: a notification is one write that the kernel
	 * handles at once (it wakes the waiters; it waits for nothing). */
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n; i++) {
		if (served(p->w[i].ino, arg)) {
			p->w[kept++] = p->w[i];
			continue;
		}
		notify(p->w[i].ph);
		woken++;
	}
	p->n = kept;
	pthread_mutex_unlock(&p->lock);
	return woken;
}
