/* SPDX-License-Identifier: MIT */
/*
 * The allocation transaction over all resources, shared by extresd (start-up
 * and reload) and extresctl: run every resource's driver, take its amount,
 * all or nothing, and release it all again. No FUSE, no logging of errors
 * (they come back in struct extres_err); driver warnings go to extres_log().
 */
#ifndef EXTRES_TRANSACTION_H
#define EXTRES_TRANSACTION_H

#include <stddef.h>
#include <sys/types.h>

#include "alloc/alloc.h"
#include "config/config.h"
#include "base/err.h"
#include "host/infos.h"

struct extres_driver;

struct extres_allocations {
	size_t n;
	struct extres_allocation **items; /* one per resource, config order */
	/* items[i]'s driver instance, kept open to discover again (a
	 * refresh); shared with the allocations a reload makes from these
	 * when the resource stays as it was. */
	struct extres_driver **drivers;
	/* Every device items[i]'s driver found at its last discovery (NULL
	 * where it was not run: a script that coordinates by itself, kept
	 * as it was), so that a lease beside the daemon shows the
	 * properties of a device the daemon discovered and did not take. */
	struct extres_infos **found;
};

/* Open the resource's driver, discover, close it. On success *ret_infos is
 * the candidate list (free with extres_infos_free()). */
int extres_discover_resource(const struct extres_config *config,
			     const struct extres_resource_config *res,
			     struct extres_infos **ret_infos,
			     struct extres_err *err);

/*
 * Discover and allocate every resource of `config` for `owner`, in order.
 * All or nothing: if any resource fails, everything taken so far is released
 * before returning the error (which names the resource). The infos taken
 * count towards EXTRES_MAX_ENTRIES and EXTRES_MAX_BYTES all together: past
 * either, -E2BIG names the resource that passed it.
 */
int extres_allocate_all(const struct extres_config *config, pid_t owner,
			struct extres_allocations **ret,
			struct extres_err *err);

/*
 * The same for a reload: `old` (NULL at start-up) is what this owner holds
 * now. Devices of `old` that the drivers still offer stay held and keep their
 * info numbers (see extres_alloc_retake()); added resources and higher
 * amounts take more. All or nothing: on failure everything this call took is
 * released again and `old` is exactly as it was. Nothing of `old` is released
 * on success either: extres_release_dropped() does that once the new
 * allocations are in use.
 *
 * A resource whose driver instance in `old` serves it as it is now
 * (extres_driver_serves()) is discovered again with that instance, which the
 * result shares; any other gets a new one. Freeing `old` then closes only
 * the instances of resources that went or changed.
 *
 * A resource whose script coordinates by itself is not run again when its
 * configuration (`old_config`) is the same: it would take more devices, its
 * own being held. When it changed, its devices are unrecorded first so that
 * the script may pick them again, and recorded again on failure.
 */
int extres_reallocate_all(const struct extres_config *config,
			  const struct extres_config *old_config,
			  struct extres_allocations *old, pid_t owner,
			  struct extres_allocations **ret,
			  struct extres_err *err);

/* Release what `old` holds and `now` (NULL: nothing) does not (removed
 * resources, lowered amounts, devices gone), newest first. Carries on past
 * failures; the first is returned. */
int extres_release_dropped(struct extres_allocations *old,
			   const struct extres_allocations *now,
			   struct extres_err *err);

/*
 * Release every allocation (remove our coordination-file lines) on the way
 * out, in at most about `budget_ms` of waiting for locks all told: each
 * allocation gets what the ones before it left, and one try when nothing
 * is left, so that a stop never waits on every resource's lock in turn.
 * Carries on past failures; returns the first error.
 */
int extres_release_all_within(struct extres_allocations *a, unsigned budget_ms,
			      struct extres_err *err);

/* Accepts NULL. Does not release; closes the driver instances no other
 * allocations share. */
void extres_allocations_free(struct extres_allocations *a);

#endif
