/* SPDX-License-Identifier: MIT */
/*
 * Choosing `amount` infos out of a driver's candidates, through the
 * coordination file where the resource has one.
 */
#ifndef EXTRES_ALLOC_H
#define EXTRES_ALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "config/config.h"
#include "base/err.h"
#include "base/file_state.h"
#include "host/driver_info.h"
#include "host/infos.h"

struct extres_allocation {
	char *resource;
	/* NULL when not coordinated (no file, or the driver coordinates). */
	char *coordination_file;
	char *coordination_key;
	pid_t owner;
	uint64_t owner_starttime;
	unsigned lock_timeout_ms; /* the resource's, for releasing */
	gid_t coordination_gid; /* the resource's trusted group, likewise */
	/* The resource's driver took the devices in its own coordination
	 * file (coordination_file; extres_host.coordinated_by), recording
	 * this daemon as their owner: nothing is written here, but the lines
	 * are ours to release. */
	int recorded_by_driver;
	/* What the driver declares about itself (copied from the
	 * candidates): the device variable and identity keys. */
	struct extres_driver_info driver;
	size_t n;
	struct extres_info *infos; /* deep copies, allocation order */
	/* A lease's share (alloc/share.h): share I of N of its one device;
	 * 0/0 when it holds its devices whole. */
	unsigned share_i, share_n;
	int released; /* set by a successful extres_alloc_release() */
};

/*
 * Take res->amount.max infos from `candidates` (as many as are free, and
 * at least res->amount.min; config/amount.h), in order, skipping any whose
 * coordination key is held by a live owner in the coordination file, and
 * record the taken ones for `owner` (whose start time is read from /proc).
 * Waits at most res->lock_timeout_ms for the file's lock (see
 * extres_coord_lock(): -ETIMEDOUT naming the holders, -EINTR when asked to
 * stop).
 * Entries of owners that are gone (dead, reused PID, zombie) are dropped on
 * the way. A candidate without the coordination key property, or whose key
 * value holds whitespace, is -EINVAL naming the info; `owner` not running is
 * -ESRCH. Fewer free candidates than wanted: -ENOSPC, with a message naming
 * the resource, wanted (extres_amount_wanted()) and found, and the file left
 * byte for byte as it was.
 * Messages start "resource 'NAME': ". Blocks on the file's lock: call it
 * from the control thread, never from a file-system request. On success
 * *ret is freed with extres_allocation_free() after extres_alloc_release().
 */
int extres_alloc_take(const struct extres_resource_config *res,
		      const struct extres_infos *candidates, pid_t owner,
		      struct extres_allocation **ret, struct extres_err *err);

/*
 * Take for `res` again while `prev` (what this owner holds for the resource
 * now, or NULL) stays held, for a reload: the devices of `prev` that are
 * still among `candidates` are kept first, in prev's order and with the
 * candidates' current properties, and already recorded; then more are taken
 * as extres_alloc_take() does, up to res->amount.max. Devices of `prev` beyond
 * that (dropped, or amount lowered) are not released here: see
 * extres_alloc_release_except(). If `prev` was taken differently (another
 * coordination file or key, or coordination switched), nothing is kept.
 * A device of `prev` that a live other owner now holds fails the call with
 * -EBUSY naming the device and that process: a reload never quietly drops
 * a device in conflict. On failure nothing new is recorded.
 *
 * When the resource's driver coordinates by itself (candidates->driver.
 * coord_file, from extres_host.coordinated_by), its output is checked, not
 * trusted:
 * every device taken is recorded for this process in the script's file,
 * by the script or else here; devices a live other owner holds are skipped;
 * too few left is -EBUSY naming a holder (-ENOSPC when none is held).
 */
int extres_alloc_retake(const struct extres_resource_config *res,
			const struct extres_infos *candidates,
			const struct extres_allocation *prev, pid_t owner,
			struct extres_allocation **ret, struct extres_err *err);

/*
 * Like extres_alloc_release(), but keep the lines of devices that `keep`
 * (NULL: none) holds through the same coordination file and owner: after a
 * reload, release what the old allocation had and the new one does not
 * (commit), or what the new one took and the old did not (roll back).
 */
int extres_alloc_release_except(struct extres_allocation *a,
				const struct extres_allocation *keep,
				struct extres_err *err);

/*
 * Remove exactly this allocation's lines (same key, pid and start time) from
 * its coordination file. No-op without one. Safe to call twice.
 */
int extres_alloc_release(struct extres_allocation *a, struct extres_err *err);

/* Accepts NULL. Does not release. */
void extres_allocation_free(struct extres_allocation *a);

/* A deep copy (same devices, same record), or NULL without memory. */
struct extres_allocation *
extres_allocation_dup(const struct extres_allocation *a);

/*
 * Remove this allocation's lines from its coordination file without
 * marking it released, and put them back: around re-running a script that
 * coordinates by itself (it must see its devices free to pick them again),
 * and to undo that if the reload fails. Record skips keys that somebody
 * else recorded meanwhile. No-op without a coordination file.
 */
int extres_alloc_unrecord(struct extres_allocation *a, struct extres_err *err);
int extres_alloc_record(const struct extres_allocation *a,
			struct extres_err *err);

/*
 * The guard of a held allocation, run when its coordination file changed:
 * under the lock, a line of ours that went missing (Flink's script frees an
 * index with `sed -i "/INDEX /d"`, which also hits "13 ...") is written
 * back when nobody else recorded the device since; a device that a live
 * other owner now holds is a conflict, which cannot be undone from here.
 * *ret_conflicts is NULL or one line per conflict ("resource 'R': device
 * KEY V is held by PID N (cmd) in coordination file F\n"), malloc'd;
 * *ret_restored counts the lines written back. A line of a live owner
 * (ours, a lease's, anyone's) that records a uuid (coord.h) while `found`,
 * what the driver reports now (NULL: not known), gives its key to a device
 * with another uuid is a conflict too ("... device KEY V recorded as
 * uuid=U by PID N (cmd) now names uuid=W in coordination file F"): its
 * owner does not use the device now at that key. No-op (0, NULL) without a
 * coordination file. *ret_seen (when not NULL) is the file as this found
 * it and as it left it, under the lock (base/file_state.h; empty when it was
 * not looked at), so that a watcher can tell our own writes from others';
 * the caller clears both (extres_file_state_clear()); both are empty on
 * failure. 0 or a negative errno with `err` set.
 */
struct extres_alloc_seen {
	struct extres_file_state found, left;
};
int extres_alloc_guard(struct extres_allocation *a,
		       const struct extres_infos *found, char **ret_conflicts,
		       size_t *ret_restored, struct extres_alloc_seen *ret_seen,
		       struct extres_err *err);

/*
 * A driver that coordinates by itself (extres_host.coordinated_by; the
 * script driver run with --enable-coordination) yields allocations with
 * recorded_by_driver set, the driver's coordination file, and this process,
 * which a Flink script records as $PPID, as the owner; and
 * extres_alloc_retake() makes sure of every line.
 */

/*
 * One line for `extresctl check`: which coordination will really happen
 * for `res` whose opened driver said `driver` (NULL when it could not be
 * opened): the driver's own file and flag, extresd's file, or none.
 * *ret is malloc'd. 0 or -ENOMEM.
 */
int extres_alloc_describe(const struct extres_resource_config *res,
			  const struct extres_driver_info *driver, char **ret);

#endif
