/* SPDX-License-Identifier: MIT */
/*
 * The one JSON shape for what extres serves or would serve: the daemon's
 * .meta/extres.json (and so `extresctl status --json`, which prints that
 * file) and `extresctl discover --json`:
 *
 *   {"resources": {"gpu": {"driver": "<driver>", "amount": 2,
 *     "amount-form": "2-4",
 *     "infos": [{"index": "0", "uuid": "GPU-..."}, ...],
 *     "candidates": [{"index": "0", ...}, ...]}, ...},
 *   "holders": [...]}
 *
 * resources in configuration order; "infos" (what was allocated: element n
 * is directory <name>/<n> of the mount) only where something was
 * allocated, "candidates" (what the driver discovered, in its order) only
 * where discovery was asked for; "pool": true only for a node pool, whose
 * "amount" is the number of devices it serves; "amount-form" only where
 * the amount is configured as a range or `all` (config/amount.h), when
 * "amount" is the number taken (the daemon's document) or that would be
 * taken were every candidate free (discover); "holders" only in the
 * daemon's document (see extres_json_view_holders()). Properties are in the driver's order,
 * every value a string exactly as its file holds it without the "\n". The
 * text is on one line, in the JSON writer's layout (base/json.h), and ends
 * in "\n".
 */
#ifndef EXTRES_JSON_VIEW_H
#define EXTRES_JSON_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "config/amount.h"
#include "host/infos.h"

struct extres_json_resource {
	const char *name;
	const char *driver; /* as configured */
	uint64_t amount;
	/* The amount as configured: a range or `all` (not an exact count)
	 * adds "amount-form": "2-4" in its shortest form (config/amount.h).
	 * NULL: none. */
	const struct extres_amount *configured;
	/* NULL: no "infos" member (nothing allocated, as for discover). */
	const struct extres_info *infos;
	size_t n_infos;
	/* NULL: no "candidates" member. */
	const struct extres_infos *candidates;
	int pool; /* a node pool (config.h): adds "pool": true */
};

/*
 * The document for `res` (n of them; NULL when n is 0): 0 with *ret_text
 * (malloc'd, NUL-terminated, for free()) and *ret_len (without the NUL), or
 * -ENOMEM with both untouched. Thread-safe: nothing is shared.
 */
int extres_json_view(const struct extres_json_resource *res, size_t n,
		     char **ret_text, size_t *ret_len);

struct extres_holders;

/*
 * The same with a top-level "holders" member after "resources" (the array
 * views/holders.h describes) when `holders` is not NULL: the daemon's
 * .meta/extres.json.
 */
int extres_json_view_holders(const struct extres_json_resource *res, size_t n,
			     const struct extres_holders *holders,
			     char **ret_text, size_t *ret_len);

#endif
