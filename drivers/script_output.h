/* SPDX-License-Identifier: MIT */
/*
 * Parsing a discovery script's standard output.
 *
 * Two forms are accepted:
 *  - Flink's: the first line is a list of indexes split by ','. Items are
 *    trimmed of whitespace and empty items dropped ("0, 1,,2 " -> 0 1 2).
 *  - Spark's: a JSON object {"name": "gpu", "addresses": ["0", "1"]}. The
 *    whole output is parsed (it may span lines); addresses may be strings or
 *    numbers; "name" is optional and not checked.
 * Output that is neither (no items, a JSON object without an addresses
 * sequence, an item with a control character, a duplicate item, JSON nested
 * more than 32 deep) is an error. Items become file contents, so '/' and
 * spaces inside them are fine.
 */
#ifndef EXTRES_SCRIPT_OUTPUT_H
#define EXTRES_SCRIPT_OUTPUT_H

#include <stddef.h>

struct script_output {
	size_t n;
	char **items; /* each trimmed, non-empty, NUL-terminated */
};

/*
 * Parse `len` bytes of `buf` (need not be NUL-terminated). On success returns
 * 0 and fills *ret (free with script_output_clear()). On failure returns
 * -EINVAL (or -ENOMEM) with a short reason in `why` (size `why_len`), and
 * *ret is untouched.
 */
int script_output_parse(const char *buf, size_t len, struct script_output *ret,
			char *why, size_t why_len);
void script_output_clear(struct script_output *out);

#endif
