/* SPDX-License-Identifier: MIT */
/*
 * Sharing a device (extres.yaml(5): replicas, sharing-strategy): a
 * resource with replicas N > 1 lets up to N leases hold one device at
 * once, each holding one share. A share is a coordination line with
 * `share=I/N` (alloc/coord.h): I numbers the share (1..N, the lowest free
 * one is taken) and N is the resource's replicas when it was taken.
 *
 * The rules, judged under the coordination file's lock from its live
 * lines:
 *
 *   - a device with a line that holds it whole (no share=, as Flink's
 *     scripts, extresd and whole-device leases write) takes no share;
 *   - a device with any share line is not free for a whole-device take
 *     (every whole take skips a device with any line, coord_has_key());
 *   - a device takes a share while it has fewer share lines than the
 *     resource's replicas now: after a reload that lowers replicas, held
 *     shares stay and no new one is taken until they fall under it.
 *
 * To Flink's scripts, which read the first two fields only, a shared
 * device is taken: a TaskManager never gets it.
 */
#ifndef EXTRES_SHARE_H
#define EXTRES_SHARE_H

#include <stddef.h>

#include "config/config.h"
#include "alloc/alloc.h"
#include "alloc/coord.h"
#include "host/infos.h"

/*
 * The live lines of `key` in `c`: *ret_shares share lines; returns 1 when
 * a line holds the device whole, else 0. Lines whose owners are gone count
 * as they are: reclaim first (extres_coord_reclaim()).
 */
int extres_share_count(const struct extres_coord *c, const char *key,
		       unsigned *ret_shares);

/*
 * Pick a device of `candidates` (by the coordination key `key`) for one
 * more share of `replicas`: a healthy one already shared that has room
 * first (so whole devices stay free for whole takes), else a healthy one
 * no line records. 1 with its index in *ret_j and the share number
 * (lowest free, 1..replicas) in *ret_share; 0 when none has room. Pure.
 */
int extres_share_pick(const struct extres_coord *c,
		      const struct extres_infos *candidates, const char *key,
		      unsigned replicas, size_t *ret_j, unsigned *ret_share);

/* The most variables extres_share_env() adds. */
#define EXTRES_SHARE_ENV_MAX 5

/*
 * The variables of a share held in allocation `a` (share_n > 0) of
 * resource `res`, as malloc'd "NAME=VALUE" into out[0..], at most
 * EXTRES_SHARE_ENV_MAX; their number into *ret_n:
 *
 *   EXTRES_<NAME>_SHARE=I/N  always;
 *   for sharing-strategy mps: CUDA_MPS_PIPE_DIRECTORY and
 *   CUDA_MPS_LOG_DIRECTORY (mps.pipe-directory, mps.log-directory),
 *   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (100 / N, rounded down, at least
 *   1) and, when the device has a `memory.total` in MiB (a decimal
 *   number), CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=<memory.total / N>M
 *   (device 0 is the one device the share's process sees).
 *
 * 0 or -ENOMEM (nothing left allocated).
 */
int extres_share_env(const struct extres_resource_config *res,
		     const struct extres_allocation *a, char **out,
		     size_t *ret_n);

#endif
