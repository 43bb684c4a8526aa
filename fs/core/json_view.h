/* SPDX-License-Identifier: MIT */
/*
 * The one JSON shape for what extres serves or would serve: the daemon's
 * .meta/extres.json (and so `extresctl status --json`, which prints that
 * file) and `extresctl discover --json`:
 *
 *   {"resources": {"gpu": {"driver": "<driver>", "amount": 2,
 *     "infos": [{"index": "0", "uuid": "GPU-..."}, ...],
 *     "candidates": [{"index": "0", ...}, ...]}, ...}}
 *
 * resources in configuration order; "infos" (what was allocated: element n
 * is directory <name>/<n> of the mount) only where something was
 * allocated, "candidates" (what the driver discovered, in its order) only
 * where discovery was asked for. Properties are in the driver's order,
 * every value a string exactly as its file holds it without the "\n". The
 * text is on one line, in the JSON writer's layout (base/json.h), and ends
 * in "\n".
 */
#ifndef EXTRES_JSON_VIEW_H
#define EXTRES_JSON_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "core/infos.h"

struct extres_json_resource {
	const char *name;
	const char *driver; /* as configured */
	uint64_t amount;
	/* NULL: no "infos" member (nothing allocated, as for discover). */
	const struct extres_info *infos;
	size_t n_infos;
	/* NULL: no "candidates" member. */
	const struct extres_infos *candidates;
};

/*
 * The document for `res` (n of them; NULL when n is 0): 0 with *ret_text
 * (malloc'd, NUL-terminated, for free()) and *ret_len (without the NUL), or
 * -ENOMEM with both untouched. Thread-safe: nothing is shared.
 */
int extres_json_view(const struct extres_json_resource *res, size_t n,
		     char **ret_text, size_t *ret_len);

#endif
