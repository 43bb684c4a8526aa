/* SPDX-License-Identifier: MIT */
/*
 * Watching the coordination files that hold our lines, and those whose
 * holders the mount shows (daemon/holders.c).
 *
 * Other writers share those files: Flink's script frees a dead owner's
 * index with `sed -i "/INDEX /d"`, which also deletes a live "13 ..." line
 * when it frees 3, and replaces the file by rename; a careless operator may
 * truncate it. The guard tells the control thread, through one inotify
 * descriptor, when any of the files may have changed, so that it can check
 * its lines (extres_alloc_guard()) within a second. It watches each file's
 * directory, not the file: a rename over the file must be seen too, and
 * the new file be watched without a new watch.
 *
 * Only events that change the file (written, created, removed, renamed to
 * or from its name, or its mode or owner changed) count: our own lock, which
 * opens the file for writing and closes it, must not wake us again. Nor do
 * our own writes: the daemon tells the guard how it left each file, under
 * the file's lock (extres_guard_seen()), and an event that finds the file
 * exactly so (the same inode, mode and owner, the same bytes) is its own.
 * The bytes, not the times: another writer's rewrite of the same length
 * within a clock tick of ours leaves every field of stat() as it was
 * (base/file_state.h), and would pass for ours.
 */
#ifndef EXTRES_GUARD_H
#define EXTRES_GUARD_H

#include <stddef.h>

#include "base/err.h"
#include "base/file_state.h"

struct extres_guard_watch;

struct extres_guard {
	int fd; /* inotify (non-blocking); -1 when not open */
	size_t n;
	struct extres_guard_watch *watches;
};

/* Open the inotify descriptor. 0 or a negative errno with a message. */
int extres_guard_open(struct extres_guard *g, struct extres_err *err);

/*
 * Watch the coordination files `files` (n of them; NULL entries skipped),
 * instead of what was watched before. A directory that cannot be watched is
 * an error naming it; what could be watched stays watched.
 */
int extres_guard_watch(struct extres_guard *g, const char *const *files,
		       size_t n, struct extres_err *err);

/* `s` is how we left watched file `path` (its state read under its lock,
 * after our own writes); the guard keeps a copy. Ignored for a file not
 * watched. Out of memory, it forgets how we left the file: then every
 * change counts as someone else's. */
void extres_guard_seen(struct extres_guard *g, const char *path,
		       const struct extres_file_state *s);

/* Whether `s` (its state read under the lock, before any write of ours)
 * is how we last left watched file `path`: 0 when someone else changed it
 * since, which the guard's checks have not seen yet. 1 for a file not
 * watched. */
int extres_guard_known(const struct extres_guard *g, const char *path,
		       const struct extres_file_state *s);

/* Read every pending event: 1 if one concerned a watched file that is not
 * as we last left it (or the queue overflowed), else 0. */
int extres_guard_changed(struct extres_guard *g);

/* Close and forget everything. Safe on a zeroed guard whose fd is -1. */
void extres_guard_close(struct extres_guard *g);

#endif
