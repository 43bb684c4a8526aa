/* SPDX-License-Identifier: MIT */
#include "config/yaml_load.h"

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CORE_TAG "tag:yaml.org,2002:"
#define TAGS_READ "!!str, !!int, !!float, !!bool, !!null, !!seq and !!map"

/* What an alias stands for. */
struct anchor {
	char *name;
	int id;
	size_t nodes, bytes; /* what the node expands to */
	unsigned height; /* its levels of collections, expanded */
};

/* A collection whose end has not come yet. */
struct open_node {
	int id;
	int key; /* a mapping's key that waits for its value, or 0 */
	char *anchor; /* registered when the collection ends: an alias inside
		       * it may not name it */
	size_t nodes, bytes;
	unsigned height;
};

struct loader {
	const char *file;
	struct extres_err *err;
	yaml_document_t *doc;
	struct open_node open[EXTRES_YAML_MAX_DEPTH];
	unsigned depth;
	int documents; /* DOCUMENT-START events so far */
	int done;
	size_t nodes; /* as written */
	size_t alias_nodes; /* what aliases add to them */
	size_t alias_bytes;
	void *anchors; /* a tsearch() tree of struct anchor: no input can
			* make a lookup slow */
	/* Reading from a file descriptor: */
	int fd;
	size_t max_bytes, bytes;
	int read_errno; /* a read failed */
	int too_big;
};

int extres_yaml_error(struct extres_err *err, int errnum, const char *file,
		      uint32_t line, uint32_t column, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	extres_err_setv(err, errnum, fmt, ap);
	va_end(ap);
	return extres_err_prefix(err, errnum, "%s:%u:%u", file, line, column);
}

static int fail_at(struct loader *l, int errnum, yaml_mark_t mark,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail_at(struct loader *l, int errnum, yaml_mark_t mark,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	extres_err_setv(l->err, errnum, fmt, ap);
	va_end(ap);
	return extres_err_prefix(l->err, errnum, "%s:%u:%u", l->file,
				 extres_yaml_pos(mark.line),
				 extres_yaml_pos(mark.column));
}

static int fail_oom(struct loader *l)
{
	return extres_err_set(l->err, ENOMEM, "out of memory");
}

static int parser_error(struct loader *l, const yaml_parser_t *parser)
{
	const char *problem =
		parser->problem ? parser->problem : "syntax error";

	/* libyaml knows only that the input failed. */
	if (l->too_big)
		return extres_err_set(l->err, EFBIG, "%s: larger than %zu MiB",
				      l->file, l->max_bytes >> 20);
	if (l->read_errno)
		return extres_err_set(l->err, l->read_errno, "%s: %s", l->file,
				      strerror(l->read_errno));
	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		return fail_oom(l);
	case YAML_READER_ERROR:
		/* The reader knows a byte offset, not a line. */
		if (parser->problem_value != -1)
			return extres_err_set(l->err, EINVAL,
					      "%s: %s (#%X at byte %zu)",
					      l->file, problem,
					      (unsigned)parser->problem_value,
					      parser->problem_offset);
		return extres_err_set(l->err, EINVAL, "%s: %s at byte %zu",
				      l->file, problem, parser->problem_offset);
	default:
		if (parser->context)
			return fail_at(
				l, EINVAL, parser->problem_mark,
				"%s (%s at line %u, column %u)", problem,
				parser->context,
				extres_yaml_pos(parser->context_mark.line),
				extres_yaml_pos(parser->context_mark.column));
		return fail_at(l, EINVAL, parser->problem_mark, "%s", problem);
	}
}

/* ---- tags ---- */

/*
 * A tag as the file wrote it ("!!python/object" rather than the resolved
 * "tag:yaml.org,2002:python/object"), cut short, without control bytes: a
 * tag's %-escapes can hold any byte.
 */
static void show_tag(char *dst, size_t size, const char *tag)
{
	const char *open = "", *close = "";
	size_t o = 0;
	int n;

	if (strncmp(tag, CORE_TAG, strlen(CORE_TAG)) == 0) {
		tag += strlen(CORE_TAG);
		open = "!!";
	} else if (tag[0] != '!') {
		open = "!<";
		close = ">";
	}
	n = snprintf(dst, size, "%s", open);
	o = n > 0 ? (size_t)n : 0;
	for (; *tag && o + 4 < size && o < 120; tag++) {
		unsigned char c = (unsigned char)*tag;

		dst[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (*tag && o + 4 < size) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	snprintf(dst + o, size - o, "%s", close);
}

/*
 * Only the core schema's tags: extres reads every value as text, so a tag
 * that asks for anything else (an object, a binary) would be silently
 * ignored, and the file would not mean what its author thought.
 */
static int check_tag(struct loader *l, const yaml_char_t *tag,
		     yaml_node_type_t type, yaml_mark_t mark)
{
	static const char *const scalars[] = { "str", "int", "float", "bool",
					       "null" };
	static const char *const kinds[] = {
		[YAML_SCALAR_NODE] = "scalar",
		[YAML_SEQUENCE_NODE] = "sequence",
		[YAML_MAPPING_NODE] = "mapping",
	};
	const char *t = (const char *)tag, *name, *fits = NULL;
	char shown[160];
	size_t i;

	/* No tag, or "!" (non-specific: as if there were none). */
	if (!t || strcmp(t, "!") == 0)
		return 0;
	if (strncmp(t, CORE_TAG, strlen(CORE_TAG)) == 0) {
		name = t + strlen(CORE_TAG);
		for (i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
			if (strcmp(name, scalars[i]) == 0)
				fits = "scalar";
		if (strcmp(name, "seq") == 0)
			fits = "sequence";
		else if (strcmp(name, "map") == 0)
			fits = "mapping";
		if (fits && strcmp(fits, kinds[type]) == 0)
			return 0;
	}
	show_tag(shown, sizeof(shown), t);
	if (fits)
		return fail_at(l, EINVAL, mark,
			       "the tag %s is for a %s, not a %s", shown, fits,
			       kinds[type]);
	return fail_at(l, EINVAL, mark,
		       "the tag %s is not one extres reads (only " TAGS_READ
		       ")",
		       shown);
}

/* ---- anchors ---- */

static int compare_anchors(const void *a, const void *b)
{
	return strcmp(((const struct anchor *)a)->name,
		      ((const struct anchor *)b)->name);
}

static void free_anchor(void *p)
{
	struct anchor *a = p;

	free(a->name);
	free(a);
}

/* Takes `name` whatever happens. */
static int add_anchor(struct loader *l, char *name, int id, size_t nodes,
		      size_t bytes, unsigned height)
{
	struct anchor *a = malloc(sizeof(*a)), **found;
	const yaml_node_t *first, *again;

	if (!a) {
		free(name);
		return fail_oom(l);
	}
	*a = (struct anchor){ name, id, nodes, bytes, height };
	found = tsearch(a, &l->anchors, compare_anchors);
	if (!found) {
		free_anchor(a);
		return fail_oom(l);
	}
	if (*found == a)
		return 0;
	/* YAML lets a later anchor replace an earlier one; a config that
	 * does so is most likely a copy and paste gone wrong. */
	first = yaml_document_get_node(l->doc, (*found)->id);
	again = yaml_document_get_node(l->doc, id);
	fail_at(l, EINVAL, again->start_mark,
		"the anchor &%s is defined twice (first at line %u, column %u)",
		name, extres_yaml_pos(first->start_mark.line),
		extres_yaml_pos(first->start_mark.column));
	free_anchor(a);
	return -EINVAL;
}

/* ---- building the document ---- */

/* Count a node as written; its place in the file is `mark`. */
static int count_node(struct loader *l, yaml_mark_t mark)
{
	l->nodes++;
	if (l->nodes > EXTRES_YAML_MAX_NODES)
		return fail_at(
			l, E2BIG, mark,
			"the file holds more than %u YAML nodes (keys, values, sequences and mappings)",
			EXTRES_YAML_MAX_NODES);
	if (l->nodes + l->alias_nodes > EXTRES_YAML_MAX_NODES)
		return fail_at(
			l, E2BIG, mark,
			"aliases expand the document to more than %u YAML nodes",
			EXTRES_YAML_MAX_NODES);
	return 0;
}

/*
 * Put a finished node (or the node an alias names) into the open
 * collection, if any: the first node of the document is its root.
 */
static int add_child(struct loader *l, int id, size_t nodes, size_t bytes,
		     unsigned height)
{
	struct open_node *p;
	int ok = 1;

	if (l->depth == 0)
		return 0;
	p = &l->open[l->depth - 1];
	p->nodes += nodes;
	p->bytes += bytes;
	if (height + 1 > p->height)
		p->height = height + 1;
	if (yaml_document_get_node(l->doc, p->id)->type == YAML_SEQUENCE_NODE) {
		ok = yaml_document_append_sequence_item(l->doc, p->id, id);
	} else if (!p->key) {
		p->key = id;
	} else {
		ok = yaml_document_append_mapping_pair(l->doc, p->id, p->key,
						       id);
		p->key = 0;
	}
	return ok ? 0 : fail_oom(l);
}

/* The tag the file gave, or NULL: libyaml gives every node a default one,
 * which extres never reads and need not keep. */
static void set_tag(yaml_node_t *node, yaml_char_t **tag)
{
	free(node->tag);
	node->tag = NULL;
	if (*tag && strcmp((const char *)*tag, "!") != 0) {
		node->tag = *tag;
		*tag = NULL;
	}
}

/*
 * A new scalar node at the end of the document's node stack, as
 * yaml_document_add_scalar() adds one, but without the copies of a default
 * tag and a value that would only be freed again: a config of thousands of
 * devices has a hundred thousand scalars. The stack is the one libyaml
 * grows with realloc() and frees with yaml_document_delete(). Its id (as
 * libyaml numbers nodes, from 1), or 0 when out of memory.
 */
static int push_scalar(yaml_document_t *doc)
{
	size_t n = (size_t)(doc->nodes.top - doc->nodes.start), cap;
	yaml_node_t *nodes, *node;

	if (doc->nodes.top == doc->nodes.end) {
		cap = n ? 2 * n : 16;
		/* Ids are ints, as in libyaml. */
		if (cap > (size_t)INT_MAX / sizeof(*nodes))
			return 0;
		nodes = realloc(doc->nodes.start, cap * sizeof(*nodes));
		if (!nodes)
			return 0;
		doc->nodes.start = nodes;
		doc->nodes.top = nodes + n;
		doc->nodes.end = nodes + cap;
	}
	node = doc->nodes.top++;
	memset(node, 0, sizeof(*node));
	node->type = YAML_SCALAR_NODE;
	return (int)(n + 1);
}

static int on_scalar(struct loader *l, yaml_event_t *e)
{
	yaml_node_t *node;
	size_t length = e->data.scalar.length;
	int id, r;

	r = count_node(l, e->start_mark);
	if (r < 0)
		return r;
	r = check_tag(l, e->data.scalar.tag, YAML_SCALAR_NODE, e->start_mark);
	if (r < 0)
		return r;
	/* Given the event's text: a value as big as the file is not
	 * copied. */
	id = push_scalar(l->doc);
	if (!id)
		return fail_oom(l);
	node = yaml_document_get_node(l->doc, id);
	node->data.scalar.value = e->data.scalar.value;
	node->data.scalar.length = length;
	node->data.scalar.style = e->data.scalar.style;
	e->data.scalar.value = NULL;
	set_tag(node, &e->data.scalar.tag);
	node->start_mark = e->start_mark;
	node->end_mark = e->end_mark;
	if (e->data.scalar.anchor) {
		r = add_anchor(l, (char *)e->data.scalar.anchor, id, 1, length,
			       0);
		e->data.scalar.anchor = NULL;
		if (r < 0)
			return r;
	}
	return add_child(l, id, 1, length, 0);
}

static int on_start(struct loader *l, yaml_event_t *e)
{
	int mapping = e->type == YAML_MAPPING_START_EVENT;
	yaml_char_t **tag = mapping ? &e->data.mapping_start.tag :
				      &e->data.sequence_start.tag;
	yaml_char_t **anchor = mapping ? &e->data.mapping_start.anchor :
					 &e->data.sequence_start.anchor;
	struct open_node *o;
	yaml_node_t *node;
	int id, r;

	if (l->depth == EXTRES_YAML_MAX_DEPTH)
		return fail_at(l, EINVAL, e->start_mark,
			       "nested deeper than %d levels",
			       EXTRES_YAML_MAX_DEPTH);
	r = count_node(l, e->start_mark);
	if (r < 0)
		return r;
	r = check_tag(l, *tag, mapping ? YAML_MAPPING_NODE : YAML_SEQUENCE_NODE,
		      e->start_mark);
	if (r < 0)
		return r;
	id = mapping ? yaml_document_add_mapping(l->doc, NULL,
						 e->data.mapping_start.style) :
		       yaml_document_add_sequence(l->doc, NULL,
						  e->data.sequence_start.style);
	if (!id)
		return fail_oom(l);
	node = yaml_document_get_node(l->doc, id);
	set_tag(node, tag);
	node->start_mark = e->start_mark;
	o = &l->open[l->depth++];
	*o = (struct open_node){ .id = id, .nodes = 1, .height = 1 };
	o->anchor = (char *)*anchor;
	*anchor = NULL;
	return 0;
}

static int on_end(struct loader *l, const yaml_event_t *e)
{
	struct open_node o = l->open[--l->depth];
	int r;

	yaml_document_get_node(l->doc, o.id)->end_mark = e->end_mark;
	if (o.anchor) {
		r = add_anchor(l, o.anchor, o.id, o.nodes, o.bytes, o.height);
		if (r < 0)
			return r;
	}
	return add_child(l, o.id, o.nodes, o.bytes, o.height);
}

static int on_alias(struct loader *l, const yaml_event_t *e)
{
	const char *name = (const char *)e->data.alias.anchor;
	struct anchor key = { .name = (char *)name }, **found;
	const struct anchor *a;
	unsigned i;

	found = tfind(&key, &l->anchors, compare_anchors);
	if (!found) {
		for (i = 0; i < l->depth; i++)
			if (l->open[i].anchor &&
			    strcmp(l->open[i].anchor, name) == 0)
				return fail_at(
					l, EINVAL, e->start_mark,
					"the alias *%s names a node that contains it",
					name);
		return fail_at(
			l, EINVAL, e->start_mark,
			"the alias *%s names no anchor defined before it",
			name);
	}
	a = *found;
	if (l->depth + a->height > EXTRES_YAML_MAX_DEPTH)
		return fail_at(
			l, EINVAL, e->start_mark,
			"the alias *%s nests deeper than %d levels (its node is %u levels deep, placed at level %u)",
			name, EXTRES_YAML_MAX_DEPTH, a->height, l->depth + 1);
	/* Both stay far below SIZE_MAX: each was checked before it grew. */
	l->alias_nodes += a->nodes;
	l->alias_bytes += a->bytes;
	if (l->nodes + l->alias_nodes > EXTRES_YAML_MAX_NODES)
		return fail_at(
			l, E2BIG, e->start_mark,
			"aliases expand the document to more than %u YAML nodes",
			EXTRES_YAML_MAX_NODES);
	if (l->alias_bytes > EXTRES_YAML_MAX_ALIAS_BYTES)
		return fail_at(
			l, E2BIG, e->start_mark,
			"aliases add more than %u MiB of text to the document (the alias *%s adds %zu bytes)",
			EXTRES_YAML_MAX_ALIAS_BYTES >> 20, name, a->bytes);
	return add_child(l, a->id, a->nodes, a->bytes, a->height);
}

static int on_event(struct loader *l, yaml_event_t *e)
{
	switch (e->type) {
	case YAML_STREAM_END_EVENT:
		l->done = 1;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		l->documents++;
		return 0;
	case YAML_ALIAS_EVENT:
	case YAML_SCALAR_EVENT:
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(l, e);
	default:
		return 0;
	}
	if (l->documents > 1)
		return fail_at(
			l, EINVAL, e->start_mark,
			"a second YAML document starts here; a config file holds one");
	if (e->type == YAML_ALIAS_EVENT)
		return on_alias(l, e);
	if (e->type == YAML_SCALAR_EVENT)
		return on_scalar(l, e);
	return on_start(l, e);
}

/* libyaml's read handler for a file descriptor. */
static int read_fd(void *data, unsigned char *buffer, size_t size,
		   size_t *size_read)
{
	struct loader *l = data;
	ssize_t n;

	do
		n = read(l->fd, buffer, size);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		l->read_errno = errno;
		return 0;
	}
	l->bytes += (size_t)n;
	if (l->bytes > l->max_bytes) {
		l->too_big = 1;
		return 0;
	}
	*size_read = (size_t)n;
	return 1;
}

/* `parser` has its input; it is deleted whatever happens. */
static int load(struct loader *l, yaml_parser_t *parser,
		yaml_document_t *ret_doc)
{
	yaml_document_t doc;
	yaml_event_t event;
	int r = 0;

	if (!yaml_document_initialize(&doc, NULL, NULL, NULL, 1, 1)) {
		yaml_parser_delete(parser);
		return fail_oom(l);
	}
	l->doc = &doc;
	while (!l->done && r == 0) {
		if (!yaml_parser_parse(parser, &event)) {
			r = parser_error(l, parser);
			break;
		}
		r = on_event(l, &event);
		yaml_event_delete(&event);
	}
	while (l->depth)
		free(l->open[--l->depth].anchor);
	tdestroy(l->anchors, free_anchor);
	yaml_parser_delete(parser);
	if (r < 0) {
		yaml_document_delete(&doc);
		return r;
	}
	*ret_doc = doc;
	return 0;
}

int extres_yaml_load(const char *file, const char *buf, size_t len,
		     yaml_document_t *ret_doc, struct extres_err *err)
{
	struct loader l = { .file = file, .err = err, .fd = -1 };
	yaml_parser_t parser;

	if (!yaml_parser_initialize(&parser))
		return fail_oom(&l);
	/* libyaml asserts on a NULL input, even an empty one. */
	yaml_parser_set_input_string(&parser,
				     (const unsigned char *)(buf ? buf : ""),
				     buf ? len : 0);
	return load(&l, &parser, ret_doc);
}

int extres_yaml_load_fd(const char *file, int fd, size_t max_bytes,
			yaml_document_t *ret_doc, struct extres_err *err)
{
	struct loader l = {
		.file = file,
		.err = err,
		.fd = fd,
		.max_bytes = max_bytes,
	};
	yaml_parser_t parser;

	if (!yaml_parser_initialize(&parser))
		return fail_oom(&l);
	yaml_parser_set_input(&parser, read_fd, &l);
	return load(&l, &parser, ret_doc);
}
