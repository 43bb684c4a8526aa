/* SPDX-License-Identifier: MIT */
/*
 * Inspecting and cleaning a coordination file from outside the allocator:
 * what `extresctl coord list` and `extresctl coord gc` do.
 *
 * Both take the file's exclusive lock through extres_coord_lock(), so they
 * judge and rewrite the file exactly as an allocator would and never race
 * with one; they inherit its refusals (symbolic link -ELOOP, not a regular
 * file -EINVAL, hard links -EMLINK, over 16 MiB -EFBIG, writable by another
 * user -EPERM). Unlike an allocator, neither creates a missing file: that is
 * -ENOENT with the message "PATH: No such file or directory". Both wait at
 * most `timeout_ms` while another process holds the lock (-ETIMEDOUT,
 * naming the holders), and trust a file that `group` may write (the
 * config's coordination_gid, or EXTRES_NO_GROUP) as extres_coord_lock()
 * does.
 *
 * Owner states are judged once per entry while the lock is held, with
 * extres_coord_owner_state(); a caller shows them with
 * extres_coord_owner_state_name().
 */
#ifndef EXTRES_COORD_GC_H
#define EXTRES_COORD_GC_H

#include <stddef.h>

#include "alloc/coord.h"
#include "base/err.h"

/* One line of the file and its owner's state as judged under the lock. */
struct extres_coord_item {
	struct extres_coord_entry entry;
	int state; /* EXTRES_OWNER_* */
};

/*
 * Every entry of the existing file at `path`, in file order (blank lines are
 * not entries), each with its owner state. The file is locked, read and
 * unlocked; it is never written, not even its timestamps. On success
 * *ret_items (NULL when the file has no entries) and *ret_n are set; free
 * them with extres_coord_items_free(). 0 or a negative errno with `err` set.
 */
int extres_coord_list(const char *path, unsigned timeout_ms, gid_t group,
		      struct extres_coord_item **ret_items, size_t *ret_n,
		      struct extres_err *err);

/* extres_coord_gc() flags. */
#define EXTRES_COORD_GC_DRY_RUN 1u /* write nothing, say what would go */
#define EXTRES_COORD_GC_UNPARSABLE 2u /* drop unparsable lines too */

/*
 * Drop, under the lock, every entry whose owner is gone: dead, reused PID or
 * zombie, or a waiter's line (lease=waiting, a queue's) that no live
 * process proves (EXTRES_OWNER_UNPROVEN, alloc/lease_line.h), and with EXTRES_COORD_GC_UNPARSABLE every unparsable line (so
 * that a file filled with garbage up to the size limit can always be made
 * usable again). Live entries and, without that flag, unparsable lines stay
 * byte for byte and in order; the file is rewritten in place (same inode)
 * with extres_coord_write(), and only when something was dropped. With
 * EXTRES_COORD_GC_DRY_RUN nothing is written and the result says what would
 * have gone.
 *
 * On success *ret_removed (NULL when none) and *ret_n_removed hold the
 * dropped entries in file order, and *ret_kept how many entries remain; free
 * the entries with extres_coord_items_free(). On failure the out-parameters
 * are untouched and `err` says why, naming the file; only a failing rewrite
 * (see extres_coord_write()) can have changed it.
 */
int extres_coord_gc(const char *path, unsigned flags, unsigned timeout_ms,
		    gid_t group, struct extres_coord_item **ret_removed,
		    size_t *ret_n_removed, size_t *ret_kept,
		    struct extres_err *err);

/* Free `n` items and the array. Accepts NULL. */
void extres_coord_items_free(struct extres_coord_item *items, size_t n);

#endif
