/* SPDX-License-Identifier: MIT */
#include "daemon/known.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_CAP 1024

/* splitmix64's finaliser: inode numbers are hashes already, but the root
 * and small numbers are not. */
static size_t spread(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (size_t)x;
}

/* The slot holding `ino`, or the empty one where it would go. */
static struct extres_known_slot *probe(const struct extres_known *k,
				       uint64_t ino)
{
	size_t i = spread(ino) & k->mask;

	while (k->slots[i].ino && k->slots[i].ino != ino)
		i = (i + 1) & k->mask;
	return &k->slots[i];
}

static int grow(struct extres_known *k)
{
	struct extres_known_slot *old = k->slots;
	size_t i, old_cap = k->mask + 1;

	k->slots = calloc(2 * old_cap, sizeof(*k->slots));
	if (!k->slots) {
		k->slots = old;
		return -ENOMEM;
	}
	k->mask = 2 * old_cap - 1;
	for (i = 0; i < old_cap; i++)
		if (old[i].ino)
			*probe(k, old[i].ino) = old[i];
	free(old);
	return 0;
}

int extres_known_init(struct extres_known *k)
{
	int r;

	memset(k, 0, sizeof(*k));
	k->slots = calloc(INITIAL_CAP, sizeof(*k->slots));
	if (!k->slots)
		return -ENOMEM;
	k->mask = INITIAL_CAP - 1;
	r = pthread_mutex_init(&k->lock, NULL);
	if (r != 0) {
		free(k->slots);
		k->slots = NULL;
		return -r;
	}
	return 0;
}

void extres_known_destroy(struct extres_known *k)
{
	if (!k->slots)
		return;
	pthread_mutex_destroy(&k->lock);
	free(k->slots);
	k->slots = NULL;
}

int extres_known_add(struct extres_known *k, uint64_t ino)
{
	struct extres_known_slot *s;
	int r = 0;

	pthread_mutex_lock(&k->lock);
	/* At most three quarters full: probes stay short, and a tree of
	 * 40,960 files the kernel knows costs 1 MiB here, not 2. */
	if (4 * (k->used + 1) > 3 * (k->mask + 1)) {
		r = grow(k);
		if (r < 0)
			goto out;
	}
	s = probe(k, ino);
	if (!s->ino) {
		s->ino = ino;
		k->used++;
		r = 1;
	}
	s->count++;
out:
	pthread_mutex_unlock(&k->lock);
	return r;
}

void extres_known_forget(struct extres_known *k, uint64_t ino, uint64_t n)
{
	struct extres_known_slot *s;
	size_t i, j, home;

	pthread_mutex_lock(&k->lock);
	s = probe(k, ino);
	if (!s->ino)
		goto out;
	if (s->count > n) {
		s->count -= n;
		goto out;
	}
	/* Remove it, shifting back whatever its slot kept from home, so
	 * that every probe still meets its entry before an empty slot. */
	i = (size_t)(s - k->slots);
	k->slots[i].ino = 0;
	k->slots[i].count = 0;
	k->used--;
	for (j = (i + 1) & k->mask; k->slots[j].ino; j = (j + 1) & k->mask) {
		home = spread(k->slots[j].ino) & k->mask;
		/* Movable to i unless its home lies in (i, j]. */
		if (i <= j ? home > i && home <= j : home > i || home <= j)
			continue;
		k->slots[i] = k->slots[j];
		k->slots[j].ino = 0;
		k->slots[j].count = 0;
		i = j;
	}
out:
	pthread_mutex_unlock(&k->lock);
}

int extres_known_has(struct extres_known *k, uint64_t ino)
{
	int r;

	pthread_mutex_lock(&k->lock);
	r = probe(k, ino)->ino != 0;
	pthread_mutex_unlock(&k->lock);
	return r;
}

size_t extres_known_count(struct extres_known *k)
{
	size_t n;

	pthread_mutex_lock(&k->lock);
	n = k->used;
	pthread_mutex_unlock(&k->lock);
	return n;
}
