/* SPDX-License-Identifier: MIT */
/*
 * Files readers wait on with poll() for POLLPRI (select()'s exceptfds,
 * EPOLLPRI), until their value changes: sysfs' way (sysfs_notify()), since
 * inotify never hears of changes a FUSE daemon makes. As in sysfs, a file
 * is always readable: POLLIN alone never waits.
 *
 * A changed value is a new file (a new inode number: see served.h), so "the
 * value changed" is "the inode is no longer in the served tree". The kernel
 * asks with a poll request per open file that has a waiter, handing a
 * handle to notify; a handle is kept per open file (the kernel's `kh`), the
 * newest one replacing older ones, until that file's inode leaves the tree:
 * then the kernel is told, asks again, and hears POLLPRI|POLLERR.
 * The open file itself still reads the old value, whole (a file is a
 * snapshot, as a listing is): the reader opens the path again.
 */
#ifndef EXTRES_POLLED_H
#define EXTRES_POLLED_H

#include <fuse_lowlevel.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* What a poll on a file reports, before and after its value changed. */
#define EXTRES_POLL_UNCHANGED (POLLIN | POLLRDNORM)
#define EXTRES_POLL_CHANGED (EXTRES_POLL_UNCHANGED | POLLPRI | POLLERR)

/* Past this many waiting files, all are woken and forgotten at once: each
 * waiter asks again (a spurious wake-up costs one request), and memory
 * stays bounded whatever users do. */
#define EXTRES_POLLED_MAX 65536

struct extres_polled_waiter {
	uint64_t ino;
	uint64_t kh;
	struct fuse_pollhandle *ph;
};

struct extres_polled {
	pthread_mutex_t lock;
	struct extres_polled_waiter *w;
	size_t n, cap;
};

/* 0 or a negative errno. */
int extres_polled_init(struct extres_polled *p);
/* Forget every handle, telling nobody (the session is over). */
void extres_polled_destroy(struct extres_polled *p);

/*
 * Keep `ph` (which the caller gives up) to notify when `ino` leaves the
 * tree; a handle kept for the same open file is dropped. On failure (out of
 * memory) the handle is notified at once: a spurious wake-up, never a lost
 * one. Any thread; never blocks on anything but the list's own lock.
 */
void extres_polled_add(struct extres_polled *p, uint64_t ino,
		       struct fuse_pollhandle *ph);

/*
 * Notify and drop every handle whose inode `served(ino, arg)` says (0) is
 * no longer served. Returns how many were notified. Call after the new tree
 * is in place, so that the poll request that follows sees it.
 */
size_t extres_polled_wake(struct extres_polled *p,
			  int (*served)(uint64_t ino, void *arg), void *arg);

#endif
