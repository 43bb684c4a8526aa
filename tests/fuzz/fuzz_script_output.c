/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: script_output_parse(), a discovery script's standard output.
 *
 * Not crashing is not enough; every result is checked against the contract
 * in script_output.h. On success the items are non-empty, free of
 * whitespace and control characters, at most SCRIPT_OUTPUT_ITEM_MAX bytes
 * and distinct, and for Flink's one-line form they are exactly the items a
 * direct reading of the contract gives (first line, split on ',', trimmed,
 * empty ones dropped, nothing but blanks after it), in order. On failure
 * the reason is one line without control characters (it reaches the
 * daemon's log), *ret is untouched, and the same input fails the same way
 * without a reason buffer.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "script_output.h"

/* The resource the output is said to be for. */
#define RESOURCE "gpu"

struct span {
	const char *s;
	size_t len;
};

static int is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 if the `n` spans hold two equal ones; sorts them. */
static int has_duplicate(struct span *spans, size_t n)
{
	size_t i;

	qsort(spans, n, sizeof(*spans), cmp_span);
	for (i = 1; i < n; i++)
		if (cmp_span(&spans[i - 1], &spans[i]) == 0)
			return 1;
	return 0;
}

/*
 * Flink's form, read from the contract: the first line (up to '\n' or
 * '\r'), split on ',', each item trimmed, empty ones dropped. Returns the
 * number of items in *ret_spans (caller frees), and in *ret_ok whether the
 * parse must succeed: nothing but whitespace after the first line, some
 * item, none with a control character or a space or too long, no two
 * equal.
 */
static size_t flink_items(const char *buf, size_t len, struct span **ret_spans,
			  int *ret_ok)
{
	size_t end = 0, start = 0, i, n = 0, j;
	struct span *spans, it;
	int ok = 1;

	while (end < len && buf[end] != '\n' && buf[end] != '\r')
		end++;
	for (i = end; i < len; i++)
		if (!is_space((unsigned char)buf[i]))
			ok = 0;
	/* At most one item per ',' plus one. */
	spans = malloc((end + 1) * sizeof(*spans));
	FUZZ_CHECK(spans);
	for (i = 0; i <= end; i++) {
		if (i < end && buf[i] != ',')
			continue;
		it = (struct span){ buf + start, i - start };
		while (it.len > 0 && is_space((unsigned char)it.s[0]))
			it.s++, it.len--;
		while (it.len > 0 && is_space((unsigned char)it.s[it.len - 1]))
			it.len--;
		if (it.len > 0) {
			for (j = 0; j < it.len; j++)
				if (is_control((unsigned char)it.s[j]) ||
				    it.s[j] == ' ')
					ok = 0;
			if (it.len > SCRIPT_OUTPUT_ITEM_MAX)
				ok = 0;
			spans[n++] = it;
		}
		start = i + 1;
	}
	*ret_spans = spans;
	*ret_ok = ok && n > 0;
	return n;
}

static void check_items(const struct script_output *out)
{
	char **sorted;
	size_t i, j, len;

	FUZZ_CHECK(out->n >= 1);
	FUZZ_CHECK(out->items);
	for (i = 0; i < out->n; i++) {
		const char *it = out->items[i];

		FUZZ_CHECK(it);
		len = strlen(it);
		FUZZ_CHECK(len > 0 && len <= SCRIPT_OUTPUT_ITEM_MAX);
		for (j = 0; j < len; j++)
			FUZZ_CHECK(!is_space((unsigned char)it[j]) &&
				   !is_control((unsigned char)it[j]));
	}
	sorted = malloc(out->n * sizeof(*sorted));
	FUZZ_CHECK(sorted);
	memcpy(sorted, out->items, out->n * sizeof(*sorted));
	qsort(sorted, out->n, sizeof(*sorted), cmp_str);
	for (i = 1; i < out->n; i++)
		FUZZ_CHECK(strcmp(sorted[i - 1], sorted[i]) != 0);
	free(sorted);
}

/* Flink's form: the parse agrees with flink_items(), item for item. */
static void check_flink(const char *buf, size_t len, int r,
			const struct script_output *out)
{
	struct span *spans;
	size_t n, i;
	int ok;

	n = flink_items(buf, len, &spans, &ok);
	if (ok && r == 0) {
		FUZZ_CHECK(out->n == n);
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(strlen(out->items[i]) == spans[i].len);
			FUZZ_CHECK(memcmp(out->items[i], spans[i].s,
					  spans[i].len) == 0);
		}
	}
	if (ok)
		ok = !has_duplicate(spans, n);
	FUZZ_CHECK(ok ? r == 0 : r == -EINVAL);
	free(spans);
}

static void check_reason(const char *why, size_t size)
{
	size_t len = strnlen(why, size), i;

	FUZZ_CHECK(len > 0 && len < size);
	for (i = 0; i < len; i++)
		FUZZ_CHECK(!is_control((unsigned char)why[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char *sentinel_items[1] = { NULL };
	struct script_output out = { .n = 42, .items = sentinel_items };
	struct script_output again = { .n = 42, .items = sentinel_items };
	char why[512] = "";
	size_t first = 0;
	int r, again_r;

	r = script_output_parse(buf, size, RESOURCE, &out, why, sizeof(why));
	if (r == 0) {
		FUZZ_CHECK(why[0] == '\0');
		check_items(&out);
	} else {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM);
		check_reason(why, sizeof(why));
		FUZZ_CHECK(out.n == 42 && out.items == sentinel_items);
		/* No reason buffer: the same answer, nothing written. */
		again_r = script_output_parse(buf, size, RESOURCE, &again, NULL,
					      0);
		FUZZ_CHECK(again_r == r);
		FUZZ_CHECK(again.n == 42 && again.items == sentinel_items);
	}

	while (first < size && is_space((unsigned char)buf[first]))
		first++;
	if (first == size || buf[first] != '{')
		check_flink(buf, size, r, &out);

	if (r == 0) {
		script_output_clear(&out);
		FUZZ_CHECK(out.n == 0 && out.items == NULL);
	}
	return 0;
}
