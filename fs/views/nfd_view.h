/* SPDX-License-Identifier: MIT */
/*
 * .meta/nfd: a feature file of node-feature-discovery's local source, so
 * that NFD labels the node with what extres serves. NFD reads every file
 * of its features.d directory: `# +expiry-time=TIME` (RFC 3339) makes it
 * ignore the file after TIME, and each `NAME=VALUE` line is a label.
 *
 *   # +expiry-time=2025-01-31T12:00:00Z
 *   extres.dev/gpu.count=8
 *   extres.dev/gpu.product=Example-GPU-80GB
 *   extres.dev/gpu.memory=81559
 *   extres.dev/gpu.compute.major=9
 *   extres.dev/gpu.compute.minor=0
 *
 * the labels GPU Feature Discovery gives (count, product, memory in MiB,
 * compute capability), per resource in configuration order, under
 * extres's prefix: count is the devices served; product, memory and the
 * compute capability come from the properties `name`, `memory.total` and
 * `compute_cap` ("MAJOR.MINOR") when every device that has one agrees
 * (a mixed resource has none of that label). Names and values keep
 * Kubernetes' label rules: at most 63 characters of [A-Za-z0-9._-],
 * starting and ending with a letter or digit; anything else becomes '-'
 * (a resource whose name leaves nothing gets no labels; a value that
 * leaves nothing is left out). Pure.
 */
#ifndef EXTRES_NFD_VIEW_H
#define EXTRES_NFD_VIEW_H

#include <stddef.h>
#include <time.h>

#include "views/views.h"

/* The label names' prefix. */
#define EXTRES_NFD_PREFIX "extres.dev/"

/* The text, expiring at `expires` (seconds since the epoch). 0 with
 * *ret_text (malloc'd, NUL-ended) and *ret_len, or -ENOMEM. */
int extres_view_nfd(const struct extres_view_resource *res, size_t n,
		    time_t expires, char **ret_text, size_t *ret_len);

#endif
