/* SPDX-License-Identifier: MIT */
/* Inside lease/lease*.c: the set of files one lease operation locks. Not
 * for other files. */
#ifndef EXTRES_LEASE_INTERNAL_H
#define EXTRES_LEASE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "alloc/coord.h"
#include "lease/lease.h"

/* One file of the set: a coordination file or a queue. */
struct lease_file {
	char *path;
	const char *resource; /* the first want that uses it, for messages */
	gid_t group; /* its resource's coordination_gid */
	dev_t dev;
	ino_t ino;
	int known; /* dev and ino are set: the file existed */
	struct extres_coord *c; /* locked, or NULL */
	int dirty; /* changed in memory: write before unlocking */
	int *keep; /* a waiter's descriptor of this queue, or NULL */
};

struct lease_files {
	size_t n;
	struct lease_file *items;
	size_t *of_want; /* want i uses items[of_want[i]] */
	int queues; /* the queues of the wants, not their files */
};

/* The distinct coordination files (queues = 0) or queue files (1) of
 * `wants`, unlocked. 0 or -ENOMEM (with err set). */
int extres_lease_files_init(struct lease_files *f,
			    const struct extres_lease_want *wants, size_t n,
			    int queues, struct extres_err *err);

/* Lock every file in path order, each within `timeout_ms`. `create`: make
 * missing files; otherwise a missing file stays unlocked (c NULL). On
 * failure, what was locked stays locked for lease_files_clear(). With
 * `warn`, a file that cannot be locked (refused, or its lock not had in
 * time) is no failure: it stays unlocked and `warn` says why (the first
 * one; its msg stays empty while there is none). A queue that is refused is
 * named with its owner and what root does to replace it. */
int extres_lease_files_lock(struct lease_files *f, int create,
			    unsigned timeout_ms, struct extres_err *err,
			    struct extres_err *warn);

/* Write every dirty file; carries on past a failure, returns the first. */
int extres_lease_files_write(struct lease_files *f, struct extres_err *err);

/* Unlock and free. Accepts a zeroed set. */
void extres_lease_files_clear(struct lease_files *f);

#endif
