/* SPDX-License-Identifier: MIT */
/*
 * Parsing a discovery script's standard output (see script_output.h).
 *
 * Pure: no I/O, no global state, bounded by the input, so that it can be
 * unit-tested and fuzzed on its own. `buf` is untrusted bytes (it may hold NUL
 * bytes and need not be NUL-terminated), so everything below works on lengths.
 * Every item passes one check (check_item) in both forms, because each one
 * becomes the content of a file and a field of a coordination file line.
 */
#include "script_output.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "text_scan.h"

/* How much of an offending item or line an error message quotes. */
#define QUOTE_MAX 64
#define QUOTED_SIZE SCRIPT_OUTPUT_QUOTED_SIZE(QUOTE_MAX)

#define STR_(x) #x
#define STR(x) STR_(x)

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

static int is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void script_output_quote(char *dst, const char *s, size_t len, size_t max)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i, char_start = 1;

	dst[o++] = '"';
	for (i = 0; i < len && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c & 0xc0) != 0x80)
			char_start = o;
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
	/* Half a character would be invalid UTF-8 in the log. A sequence is
	 * at most 4 bytes: further back there was none to complete. */
	if (i < len && ((unsigned char)s[i] & 0xc0) == 0x80 &&
	    o - char_start < 4)
		o = char_start;
	dst[o++] = '"';
	if (i < len) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

/*
 * An index must fit the places it goes: a file's content (no control
 * characters), a field of a coordination file line (no whitespace), and a
 * sane size. What fails is usually a message that a script printed where
 * its indexes belong.
 */
static int check_item(const char *s, size_t len, char *why, size_t why_len)
{
	const char *problem = NULL;
	char q[QUOTED_SIZE];
	size_t i;

	for (i = 0; i < len && !problem; i++)
		if (is_control((unsigned char)s[i]))
			problem = "contains a control character";
	/* The other ASCII whitespace is control characters. */
	for (i = 0; i < len && !problem; i++)
		if (s[i] == ' ')
			problem = "contains whitespace";
	if (!problem && len > SCRIPT_OUTPUT_ITEM_MAX)
		problem =
			"is longer than " STR(SCRIPT_OUTPUT_ITEM_MAX) " bytes";
	if (!problem)
		return 0;
	script_output_quote(q, s, len, QUOTE_MAX);
	return fail(why, why_len, -EINVAL, "index %s %s", q, problem);
}

/* Check `s` and append a copy. */
static int add_item(struct list *l, const char *s, size_t len, char *why,
		    size_t why_len)
{
	char *copy;
	int r;

	r = check_item(s, len, why, why_len);
	if (r < 0)
		return r;
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

/* Flink's form: trimmed, and dropped if empty, as Flink does. */
static int add_flink_item(struct list *l, const char *s, size_t len, char *why,
			  size_t why_len)
{
	while (len > 0 && text_is_space(s[0]))
		s++, len--;
	while (len > 0 && text_is_space(s[len - 1]))
		len--;
	return len == 0 ? 0 : add_item(l, s, len, why, why_len);
}

/*
 * Lines end as for Java's readLine(): at "\n", "\r" or "\r\n". Flink keeps
 * the first line and only warns about more; but a script that prints two
 * lines is broken (a header, a message, indexes on the wrong line), so any
 * line after the first that is not blank is an error. `end` is where the
 * first line ends.
 */
static int check_one_line(const char *buf, size_t len, size_t end, char *why,
			  size_t why_len)
{
	char q[QUOTED_SIZE];
	size_t line = 1, i = end, start, s, e;

	while (i < len) {
		if (buf[i] == '\r' && i + 1 < len && buf[i + 1] == '\n')
			i++;
		start = ++i;
		line++;
		while (i < len && buf[i] != '\n' && buf[i] != '\r')
			i++;
		for (s = start; s < i && text_is_space(buf[s]); s++)
			;
		if (s == i)
			continue;
		for (e = i; text_is_space(buf[e - 1]); e--)
			;
		script_output_quote(q, buf + s, e - s, QUOTE_MAX);
		return fail(
			why, why_len, -EINVAL,
			"line %zu of the output is not blank: %s (the indexes must be on the first line, and nothing else may follow)",
			line, q);
	}
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
	r = check_one_line(buf, len, end, why, why_len);
	if (r < 0)
		return r;

	for (start = 0, i = 0; i <= end; i++) {
		if (i == end || buf[i] == ',') {
			r = add_flink_item(l, buf + start, i - start, why,
					   why_len);
			if (r < 0)
				return r;
			start = i + 1;
		}
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

/* Member `key` of mapping `root`, or NULL. */
static const yaml_node_t *find_member(yaml_document_t *doc,
				      const yaml_node_t *root, const char *key)
{
	const yaml_node_t *found = NULL;
	const yaml_node_pair_t *pair;
	size_t len = strlen(key);

	/* The last one wins, as for a repeated key in most JSON readers. */
	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		const yaml_node_t *k = yaml_document_get_node(doc, pair->key);

		if (k && k->type == YAML_SCALAR_NODE &&
		    k->data.scalar.length == len &&
		    memcmp(k->data.scalar.value, key, len) == 0)
			found = yaml_document_get_node(doc, pair->value);
	}
	return found;
}

/* Spark's object says which resource its addresses are for: the output of
 * a script meant for another resource must not fill this one. */
static int check_name(yaml_document_t *doc, const yaml_node_t *root,
		      const char *resource, char *why, size_t why_len)
{
	const yaml_node_t *n = find_member(doc, root, "name");
	char q[QUOTED_SIZE];

	if (!n)
		return 0;
	/* Unquoted is a number, null, true or YAML's bare words: not JSON's
	 * string. */
	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return fail(why, why_len, -EINVAL,
			    "\"name\" in JSON output is not a string");
	if (!resource || (n->data.scalar.length == strlen(resource) &&
			  memcmp(n->data.scalar.value, resource,
				 n->data.scalar.length) == 0))
		return 0;
	script_output_quote(q, (const char *)n->data.scalar.value,
			    n->data.scalar.length, QUOTE_MAX);
	return fail(
		why, why_len, -EINVAL,
		"JSON output is for resource %s, not for this resource \"%s\"",
		q, resource);
}

static int collect_addresses(yaml_document_t *doc, const char *resource,
			     struct list *l, char *why, size_t why_len)
{
	const yaml_node_t *root = yaml_document_get_root_node(doc), *seq;
	const yaml_node_item_t *it;
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return fail(why, why_len, -EINVAL,
			    "JSON output is not an object");
	r = check_name(doc, root, resource, why, why_len);
	if (r < 0)
		return r;
	seq = find_member(doc, root, "addresses");
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
			return fail(
				why, why_len, -EINVAL,
				"\"addresses\" item %zu is not a string or number",
				pos);
		v = (const char *)n->data.scalar.value;
		vlen = n->data.scalar.length;
		/* Unquoted, only a number is JSON: not null, true, or
		 * YAML's bare words. */
		if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    !is_json_number(v, vlen))
			return fail(
				why, why_len, -EINVAL,
				"\"addresses\" item %zu is not a string or number",
				pos);
		/* Unlike Flink's list, Spark's has no empty items to skip:
		 * one is a script that failed to fill it in. */
		if (vlen == 0)
			return fail(why, why_len, -EINVAL,
				    "\"addresses\" item %zu is empty", pos);
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
		      const char *resource, struct list *l, char *why,
		      size_t why_len)
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
	yaml_parser_set_input_string(
		&parser, (const unsigned char *)buf + start, len - start);

	if (!yaml_parser_load(&parser, &doc)) {
		r = yaml_fail(&parser, buf, len, start, why, why_len);
		goto out_parser;
	}
	r = collect_addresses(&doc, resource, l, why, why_len);
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
			script_output_quote(q, sorted[i], strlen(sorted[i]),
					    QUOTE_MAX);
			r = fail(why, why_len, -EINVAL, "duplicate index %s",
				 q);
			break;
		}
	}
	free(sorted);
	return r;
}

int script_output_parse(const char *buf, size_t len, const char *resource,
			struct script_output *ret, char *why, size_t why_len)
{
	struct list l = { 0 };
	size_t first = 0;
	int r;

	if (!buf)
		len = 0;
	while (first < len && text_is_space(buf[first]))
		first++;

	if (first < len && buf[first] == '{')
		r = parse_json(buf, len, first, resource, &l, why, why_len);
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
