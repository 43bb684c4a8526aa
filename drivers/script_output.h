/* SPDX-License-Identifier: MIT */
/*
 * Parsing a discovery script's standard output.
 *
 * Two forms are accepted:
 *  - Flink's: one line of indexes split by ','. Items are trimmed of
 *    whitespace and empty items dropped ("0, 1,,2 " -> 0 1 2), as Flink's
 *    contract says. Lines after the first must be blank: Flink warns and
 *    drops them, but a script that prints more than one line is broken,
 *    so it is an error naming the line.
 *  - Spark's: a JSON object {"name": "gpu", "addresses": ["0", "1"]}. The
 *    whole output is parsed (it may span lines); addresses may be strings or
 *    numbers, taken as written (not trimmed). "name" is optional; when
 *    present it must be a string equal to the resource's name.
 * Every item becomes the content of a file and a field of a coordination
 * file line, so an item that is empty (in Spark's list), holds whitespace or
 * a control character, or is longer than SCRIPT_OUTPUT_ITEM_MAX bytes is an
 * error, as are: no items at all, a JSON object without an addresses
 * sequence, a duplicate item, JSON nested more than 32 deep. A script that
 * prints its own error message with exit status 0 (Spark's, when nvidia-smi
 * fails) is caught by these rules rather than mounted. '/' inside an item is
 * fine.
 */
#ifndef EXTRES_SCRIPT_OUTPUT_H
#define EXTRES_SCRIPT_OUTPUT_H

#include <stddef.h>

/* The longest index, as the longest file name: no device needs more. */
#define SCRIPT_OUTPUT_ITEM_MAX 255

struct script_output {
	size_t n;
	char **items; /* each non-empty, NUL-terminated, no whitespace */
};

/*
 * Parse `len` bytes of `buf` (need not be NUL-terminated) for resource
 * `resource` (NULL: Spark's "name" is not compared). On success returns 0
 * and fills *ret (free with script_output_clear()). On failure returns
 * -EINVAL (or -ENOMEM) with a short reason in `why` (size `why_len`), and
 * *ret is untouched. The reason quotes what is at fault with
 * script_output_quote(), so it is one line without control characters.
 */
int script_output_parse(const char *buf, size_t len, const char *resource,
			struct script_output *ret, char *why, size_t why_len);
void script_output_clear(struct script_output *out);

/* The size script_output_quote() needs for `max` bytes of input. */
#define SCRIPT_OUTPUT_QUOTED_SIZE(max) (4 * (max) + 8)

/*
 * `len` bytes of `s` between double quotes for a message, so that a hostile
 * script cannot put terminal escapes or newlines into the daemon's log:
 * control characters as \xNN, '"' and '\\' escaped, and at most `max` bytes,
 * cut on a UTF-8 character boundary and followed by "..." when cut. `dst`
 * holds SCRIPT_OUTPUT_QUOTED_SIZE(max) bytes.
 */
void script_output_quote(char *dst, const char *s, size_t len, size_t max);

#endif
