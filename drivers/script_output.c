/* SPDX-License-Identifier: MIT */
/*
 * Parsing a discovery script's standard output (see script_output.h).
 *
 * Pure: no I/O, no global state, bounded by the input, so that it can be
 * unit-tested and fuzzed on its own. `buf` is untrusted bytes (it may hold NUL
 * bytes and need not be NUL-terminated), so everything below works on lengths.
 * In both forms items are trimmed and empty ones dropped; control characters
 * are refused, because each item becomes the content of a file.
 */
#include "script_output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* How much of an offending item an error message quotes. */
#define QUOTE_MAX 64

struct list {
	size_t n, cap;
	char **items;
};

static void list_free(struct list *l)
{
	while (l->n > 0)
		free(l->items[--l->n]);
	free(l->items);
	l->items = NULL;
	l->cap = 0;
}

static int fail(char *why, size_t why_len, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t why_len, int r, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len > 0) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Java's String.trim() and Character.isWhitespace agree on these for ASCII. */
static int is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/*
 * Quote an item for a message: control characters, quotes and backslashes
 * escaped, long items cut, so that a hostile script cannot inject terminal
 * escapes or newlines into the daemon's log.
 */
#define QUOTED_SIZE (QUOTE_MAX * 4 + 8)

static void quote(char dst[QUOTED_SIZE], const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	dst[o++] = '"';
	for (i = 0; i < len && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_control(c)) {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		} else if (c == '"' || c == '\\') {
			dst[o++] = '\\';
			dst[o++] = (char)c;
		} else {
			dst[o++] = (char)c;
		}
	}
	dst[o++] = '"';
	if (i < len) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

/* Trim `s`, drop it if empty, reject control characters, append a copy. */
static int add_item(struct list *l, const char *s, size_t len, char *why,
		    size_t why_len)
{
	char q[QUOTED_SIZE];
	char *copy;
	size_t i;

	while (len > 0 && is_space((unsigned char)s[0]))
		s++, len--;
	while (len > 0 && is_space((unsigned char)s[len - 1]))
		len--;
	if (len == 0)
		return 0;

	for (i = 0; i < len; i++) {
		if (is_control((unsigned char)s[i])) {
			quote(q, s, len);
			return fail(why, why_len, -EINVAL,
				    "index %s contains a control character", q);
		}
	}

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		char **items = reallocarray(l->items, cap, sizeof(*items));

		if (!items)
			return fail(why, why_len, -ENOMEM, "out of memory");
		l->items = items;
		l->cap = cap;
	}
	copy = strndup(s, len);
	if (!copy)
		return fail(why, why_len, -ENOMEM, "out of memory");
	l->items[l->n++] = copy;
	return 0;
}

/* Flink's GPUDriver reads one line (BufferedReader.readLine) and splits it. */
static int parse_flink(const char *buf, size_t len, struct list *l, char *why,
		       size_t why_len)
{
	size_t end = 0, start, i;
	int r;

	while (end < len && buf[end] != '\n' && buf[end] != '\r')
		end++;

	for (start = 0, i = 0; i <= end; i++) {
		if (i == end || buf[i] == ',') {
			r = add_item(l, buf + start, i - start, why, why_len);
			if (r < 0)
				return r;
			start = i + 1;
		}
	}

	if (l->n == 0) {
		/* Output that starts with an empty line would otherwise fail
		 * with no hint of why. */
		for (i = end; i < len; i++)
			if (!is_space((unsigned char)buf[i]))
				return fail(why, why_len, -EINVAL,
					    "no indexes in output (only its first line is read)");
	}
	return 0;
}

static int is_json_number(const char *s, size_t len)
{
	size_t i = 0, d;

	if (i < len && s[i] == '-')
		i++;
	for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (i == d)
		return 0;
	if (i < len && s[i] == '.') {
		for (d = ++i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i == len;
}

static int yaml_fail(const yaml_parser_t *p, const char *buf, size_t len,
		     size_t skipped, char *why, size_t why_len)
{
	const char *problem = p->problem ? p->problem : "parse error";
	size_t line = p->problem_mark.line, column = p->problem_mark.column;
	size_t i, line_start = 0;

	if (p->error == YAML_MEMORY_ERROR)
		return fail(why, why_len, -ENOMEM, "out of memory");
	if (p->error == YAML_READER_ERROR) {
		/* Bad bytes (invalid UTF-8, control characters): libyaml
		 * gives only their offset. */
		return fail(why, why_len, -EINVAL,
			    "invalid JSON output: %s at byte %zu", problem,
			    skipped + p->problem_offset + 1);
	}
	/* libyaml puts the end of the input on a line of its own. */
	if (p->problem_mark.index >= len - skipped)
		return fail(why, why_len, -EINVAL,
			    "invalid JSON output: %s at the end of the output",
			    problem);

	/* libyaml saw the output from the '{' on: give the position in the
	 * output as the operator sees it. */
	for (i = 0; i < skipped; i++) {
		if (buf[i] == '\n') {
			line++;
			line_start = i + 1;
		}
	}
	if (p->problem_mark.line == 0)
		column += skipped - line_start;
	return fail(why, why_len, -EINVAL,
		    "invalid JSON output: %s at line %zu, column %zu", problem,
		    line + 1, column + 1);
}

static const yaml_node_t *find_addresses(yaml_document_t *doc,
					 const yaml_node_t *root)
{
	const yaml_node_t *found = NULL;
	const yaml_node_pair_t *pair;

	/* The last one wins, as for a repeated key in most JSON readers. */
	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(doc, pair->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    k->data.scalar.length == 9 &&
		    memcmp(k->data.scalar.value, "addresses", 9) == 0)
			found = yaml_document_get_node(doc, pair->value);
	}
	return found;
}

static int collect_addresses(yaml_document_t *doc, struct list *l, char *why,
			     size_t why_len)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc), *seq;
	const yaml_node_item_t *it;
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(why, why_len, -EINVAL,
			    "JSON output is not an object");
	seq = find_addresses(doc, root);
	if (!seq)
		return fail(why, why_len, -EINVAL,
			    "JSON output has no \"addresses\"");
	if (seq->type != YAML_SEQUENCE_NODE)
		return fail(why, why_len, -EINVAL,
			    "\"addresses\" in JSON output is not an array");

	for (it = seq->data.sequence.items.start;
	     it < seq->data.sequence.items.top; it++) {
		const yaml_node_t *n = yaml_document_get_node(doc, *it);
		size_t pos = (size_t)(it - seq->data.sequence.items.start) + 1;
		const char *v;
		size_t vlen;

		if (!n || n->type != YAML_SCALAR_NODE)
			return fail(why, why_len, -EINVAL,
				    "\"addresses\" item %zu is not a string or number",
				    pos);
		v = (const char *)n->data.scalar.value;
		vlen = n->data.scalar.length;
		/* Unquoted, only a number is JSON: not null, true, or
		 * YAML's bare words. */
		if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    !is_json_number(v, vlen))
			return fail(why, why_len, -EINVAL,
				    "\"addresses\" item %zu is not a string or number",
				    pos);
		r = add_item(l, v, vlen, why, why_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Spark's object is two levels deep. libyaml takes time quadratic in the
 * nesting depth (64 KiB of '[' costs seconds), so refuse deep input before
 * it gets there. Brackets inside double-quoted strings do not count.
 */
#define JSON_DEPTH_MAX 32

static int too_deep(const char *buf, size_t len)
{
	size_t depth = 0, i;
	int in_string = 0;

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
		} else if (c == '"') {
			in_string = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > JSON_DEPTH_MAX)
				return 1;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Spark's form. JSON is YAML, so libyaml reads it; `start` is the '{'. */
static int parse_json(const char *buf, size_t len, size_t start,
		      struct list *l, char *why, size_t why_len)
{
	yaml_parser_t parser;
	yaml_document_t doc, rest;
	int r;

	if (too_deep(buf + start, len - start))
		return fail(why, why_len, -EINVAL,
			    "invalid JSON output: nested more than %d deep",
			    JSON_DEPTH_MAX);
	if (!yaml_parser_initialize(&parser))
		return fail(why, why_len, -ENOMEM, "out of memory");
	/* From the '{' on, because YAML forbids the tabs JSON allows before
	 * it at the start of a line. */
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf + start,
				     len - start);

	if (!yaml_parser_load(&parser, &doc)) {
		r = yaml_fail(&parser, buf, len, start, why, why_len);
		goto out_parser;
	}
	r = collect_addresses(&doc, l, why, why_len);
	yaml_document_delete(&doc);
	if (r < 0)
		goto out_parser;

	/* Anything after the object is an error too, not silently dropped. */
	if (!yaml_parser_load(&parser, &rest)) {
		r = yaml_fail(&parser, buf, len, start, why, why_len);
		goto out_parser;
	}
	if (yaml_document_get_root_node(&rest))
		r = fail(why, why_len, -EINVAL,
			 "JSON output has text after the object");
	yaml_document_delete(&rest);
out_parser:
	yaml_parser_delete(&parser);
	return r;
}

static int cmp_item(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorting a copy keeps this O(n log n) on 64 KiB of "0,0,0,...". */
static int check_duplicates(const struct list *l, char *why, size_t why_len)
{
	char q[QUOTED_SIZE];
	char **sorted;
	size_t i;
	int r = 0;

	if (l->n < 2)
		return 0;
	sorted = malloc(l->n * sizeof(*sorted));
	if (!sorted)
		return fail(why, why_len, -ENOMEM, "out of memory");
	memcpy(sorted, l->items, l->n * sizeof(*sorted));
	qsort(sorted, l->n, sizeof(*sorted), cmp_item);
	for (i = 1; i < l->n; i++) {
		if (strcmp(sorted[i - 1], sorted[i]) == 0) {
			quote(q, sorted[i], strlen(sorted[i]));
			r = fail(why, why_len, -EINVAL, "duplicate index %s",
				 q);
			break;
		}
	}
	free(sorted);
	return r;
}

int script_output_parse(const char *buf, size_t len, struct script_output *ret,
			char *why, size_t why_len)
{
	struct list l = { 0 };
	size_t first = 0;
	int r;

	if (!buf)
		len = 0;
	while (first < len && is_space((unsigned char)buf[first]))
		first++;

	if (first < len && buf[first] == '{')
		r = parse_json(buf, len, first, &l, why, why_len);
	else
		r = parse_flink(buf, len, &l, why, why_len);
	if (r < 0)
		goto fail;

	if (l.n == 0) {
		r = fail(why, why_len, -EINVAL, "no indexes in output");
		goto fail;
	}
	r = check_duplicates(&l, why, why_len);
	if (r < 0)
		goto fail;

	ret->n = l.n;
	ret->items = l.items;
	return 0;
fail:
	list_free(&l);
	return r;
}

void script_output_clear(struct script_output *out)
{
	if (!out)
		return;
	while (out->n > 0)
		free(out->items[--out->n]);
	free(out->items);
	out->items = NULL;
}
