/* SPDX-License-Identifier: MIT */
/*
 * The notifier thread: a queue of inode numbers and one thread that hands
 * each to a callback (which pushes the file's bytes to the kernel). Request
 * handlers queue and return at once: a notification sent from a handler
 * can wait on the very request it answers, and the kernel needs the reply
 * processed before it holds the inode a push fills.
 *
 * The queue is bounded: what does not fit is dropped, and its reader then
 * asks the daemon as it would without a push. Stopping takes no longer than
 * the callback in progress.
 */
#ifndef EXTRES_PUSHER_H
#define EXTRES_PUSHER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* What the callback may return to be called again for `ino` a little later
 * (the kernel does not hold the inode yet), for about a second at most. */
#define EXTRES_PUSH_LATER 1

struct extres_pusher {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct extres_push_item {
		uint64_t ino;
		unsigned tries;
	} * ring;
	size_t cap, head, n;
	int stop;
	int started;
	pthread_t thread;
	/* 0, or EXTRES_PUSH_LATER; anything else drops `ino`. */
	int (*push)(void *ctx, uint64_t ino);
	void *ctx;
	/* Pushes made, and given up, for statistics and tests. */
	unsigned long long pushed, dropped;
};

/* Set up a queue of `cap` entries; nothing runs yet. 0 or a negative
 * errno. */
int extres_pusher_init(struct extres_pusher *p, size_t cap,
		       int (*push)(void *ctx, uint64_t ino), void *ctx);

/* Start the thread. 0 or a negative errno. */
int extres_pusher_start(struct extres_pusher *p);

/* Queue `ino` (dropped when full or not started). Never blocks for longer
 * than the queue's mutex is held. */
void extres_pusher_queue(struct extres_pusher *p, uint64_t ino);

/* Stop and join the thread if started, and free the queue. Safe on a
 * zeroed struct and twice. */
void extres_pusher_destroy(struct extres_pusher *p);

#endif
