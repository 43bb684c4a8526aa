/* SPDX-License-Identifier: MIT */
/*
 * The inodes the kernel knows, by their lookup counts: one more for every
 * entry it was given (a lookup, an entry of a readdirplus listing), fewer
 * by what each forget says. A node the kernel knows may still be asked for
 * by number, whatever tree is served; one it forgot never is. So these
 * counts tell which bytes a retired tree must keep, and which files are
 * worth handing the kernel before anyone reads them.
 *
 * Thread-safe: request handlers count and forget concurrently, under a
 * mutex held for a table probe, never across anything that waits.
 */
#ifndef EXTRES_KNOWN_H
#define EXTRES_KNOWN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct extres_known {
	pthread_mutex_t lock;
	/* Open addressing, linear probing, capacity a power of two; ino 0
	 * marks an empty slot (never a node's number). */
	struct extres_known_slot {
		uint64_t ino;
		uint64_t count;
	} * slots;
	size_t mask;
	size_t used;
};

/* 0, or a negative errno. */
int extres_known_init(struct extres_known *k);
void extres_known_destroy(struct extres_known *k);

/* The kernel was given `ino` once more. 1 if it did not know it before, 0
 * if it did, -ENOMEM if it could not be counted (it is then treated as
 * known by nobody: its bytes may go early, never late enough to leak). */
int extres_known_add(struct extres_known *k, uint64_t ino);

/* The kernel forgot `n` of the times it was given `ino` (all: it never
 * forgets more than it was given; more is taken as all). */
void extres_known_forget(struct extres_known *k, uint64_t ino, uint64_t n);

/* Whether the kernel knows `ino` now. */
int extres_known_has(struct extres_known *k, uint64_t ino);

/* How many inodes the kernel knows now. */
size_t extres_known_count(struct extres_known *k);

#endif
