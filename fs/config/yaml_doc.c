/* SPDX-License-Identifier: MIT */
#include "config/yaml_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/param.h"

static int node_error(const struct extres_yaml *y, struct extres_err *err,
		      int errnum, const yaml_node_t *node, const char *what)
{
	return extres_yaml_error(
		err, errnum, y->file, extres_yaml_pos(node->start_mark.line),
		extres_yaml_pos(node->start_mark.column), "%s", what);
}

const char *extres_yaml_kind(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_SCALAR_NODE:
		return "scalar";
	case YAML_SEQUENCE_NODE:
		return "sequence";
	case YAML_MAPPING_NODE:
		return "mapping";
	default:
		return "empty node";
	}
}

int extres_yaml_is_null(const yaml_node_t *node)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };
	const char *text = (const char *)node->data.scalar.value;
	size_t i;

	if (node->type != YAML_SCALAR_NODE)
		return 0;
	if (node->tag && strcmp((const char *)node->tag, YAML_NULL_TAG) == 0)
		return 1;
	/* Only a plain scalar can be an implicit null: "~" in quotes is text. */
	if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	for (i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (strcmp(text, nulls[i]) == 0)
			return 1;
	return 0;
}

int extres_yaml_text(const struct extres_yaml *y, const yaml_node_t *node,
		     const char **ret_text, struct extres_err *err)
{
	const char *text = (const char *)node->data.scalar.value;

	if (memchr(text, '\0', node->data.scalar.length))
		return node_error(y, err, EINVAL, node,
				  "a value holds a NUL character");
	*ret_text = extres_yaml_is_null(node) ? "" : text;
	return 0;
}

/* Count the bytes of a dotted key against the document's budget. */
static int spend_key(struct extres_yaml *y, const yaml_node_t *node,
		     size_t bytes, struct extres_err *err)
{
	if (bytes > y->key_bytes_left)
		return extres_yaml_error(
			err, E2BIG, y->file,
			extres_yaml_pos(node->start_mark.line),
			extres_yaml_pos(node->start_mark.column),
			"the keys add up to more than %u MiB once nested keys are joined with dots",
			EXTRES_YAML_MAX_KEY_BYTES >> 20);
	y->key_bytes_left -= bytes;
	return 0;
}

/* The text of a mapping key, which must be a scalar without NUL bytes. */
static int key_text(const struct extres_yaml *y, const yaml_node_t *key,
		    const char **ret_text, size_t *ret_len,
		    struct extres_err *err)
{
	if (key->type != YAML_SCALAR_NODE)
		return extres_yaml_error(
			err, EINVAL, y->file,
			extres_yaml_pos(key->start_mark.line),
			extres_yaml_pos(key->start_mark.column),
			"a key must be a scalar, not a %s",
			extres_yaml_kind(key));
	if (memchr(key->data.scalar.value, '\0', key->data.scalar.length))
		return node_error(y, err, EINVAL, key,
				  "a key holds a NUL character");
	*ret_text = (const char *)key->data.scalar.value;
	*ret_len = key->data.scalar.length;
	return 0;
}

/* Takes ownership of `key` whatever happens. */
static int flat_append(struct extres_flat_list *list, char *key,
		       yaml_node_t *value, const yaml_node_t *key_node,
		       int section)
{
	struct extres_flat *e;

	if (list->n == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 64;
		struct extres_flat *items =
			realloc(list->items, cap * sizeof(*items));

		if (!items) {
			free(key);
			return -ENOMEM;
		}
		list->items = items;
		list->cap = cap;
	}
	e = &list->items[list->n++];
	e->key = key;
	e->value = value;
	e->line = extres_yaml_pos(key_node->start_mark.line);
	e->column = extres_yaml_pos(key_node->start_mark.column);
	e->section = section;
	e->superseded = 0;
	return 0;
}

/* Recursive, but no deeper than the document: see extres_yaml_load(). */
static int flatten(struct extres_yaml *y, yaml_node_t *mapping,
		   const char *prefix, size_t prefix_len,
		   struct extres_flat_list *list, struct extres_err *err)
{
	yaml_node_pair_t *pair;
	int r;

	for (pair = mapping->data.mapping.pairs.start;
	     pair < mapping->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(y->doc, pair->value);
		const char *text;
		size_t len, key_len;
		char *key;

		r = key_text(y, k, &text, &len, err);
		if (r < 0)
			return r;
		key_len = prefix_len + (prefix_len ? 1 : 0) + len;
		r = spend_key(y, k, key_len + 1, err);
		if (r < 0)
			return r;
		key = malloc(key_len + 1);
		if (!key)
			return extres_err_set(err, ENOMEM, "out of memory");
		if (prefix_len) {
			memcpy(key, prefix, prefix_len);
			key[prefix_len] = '.';
		}
		memcpy(key + key_len - len, text, len);
		key[key_len] = '\0';

		/* The list owns the key from here: a section's key stays
		 * valid as the prefix of its members. */
		r = flat_append(list, key, v, k, v->type == YAML_MAPPING_NODE);
		if (r < 0)
			return extres_err_set(err, ENOMEM, "out of memory");
		if (v->type == YAML_MAPPING_NODE) {
			r = flatten(y, v, key, key_len, list, err);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int extres_yaml_flatten(struct extres_yaml *y, yaml_node_t *mapping,
			struct extres_flat_list *list, struct extres_err *err)
{
	return flatten(y, mapping, "", 0, list, err);
}

void extres_flat_list_clear(struct extres_flat_list *list)
{
	size_t i;

	for (i = 0; i < list->n; i++)
		free(list->items[i].key);
	free(list->items);
	list->items = NULL;
	list->n = list->cap = 0;
}

static int convert(struct extres_yaml *y, yaml_node_t *node,
		   struct extres_param *ret, struct extres_err *err);

static int convert_sequence(struct extres_yaml *y, yaml_node_t *node,
			    struct extres_param *p, struct extres_err *err)
{
	yaml_node_item_t *item;
	int r;

	for (item = node->data.sequence.items.start;
	     item < node->data.sequence.items.top; item++) {
		struct extres_param child;

		r = convert(y, yaml_document_get_node(y->doc, *item), &child,
			    err);
		if (r < 0)
			return r;
		r = extres_param_append(p, &child);
		if (r < 0) {
			extres_param_clear(&child);
			return extres_err_set(err, ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int convert_mapping(struct extres_yaml *y, yaml_node_t *node,
			   struct extres_param *p, struct extres_err *err)
{
	yaml_node_pair_t *pair;
	int r;

	for (pair = node->data.mapping.pairs.start;
	     pair < node->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(y->doc, pair->key);
		struct extres_param child;
		const char *text;
		size_t len;

		r = key_text(y, k, &text, &len, err);
		if (r < 0)
			return r;
		r = convert(y, yaml_document_get_node(y->doc, pair->value),
			    &child, err);
		if (r < 0)
			return r;
		child.key = strdup(text);
		if (!child.key || extres_param_append(p, &child) < 0) {
			extres_param_clear(&child);
			return extres_err_set(err, ENOMEM, "out of memory");
		}
	}
	return 0;
}

/*
 * Recursive, but no deeper than the document, and it copies no more than
 * the document expands to: both are bounded by extres_yaml_load().
 */
static int convert(struct extres_yaml *y, yaml_node_t *node,
		   struct extres_param *ret, struct extres_err *err)
{
	struct extres_param p = {
		.line = extres_yaml_pos(node->start_mark.line),
		.column = extres_yaml_pos(node->start_mark.column),
	};
	const char *text;
	int r;

	switch (node->type) {
	case YAML_SCALAR_NODE:
		r = extres_yaml_text(y, node, &text, err);
		if (r < 0)
			return r;
		p.kind = EXTRES_PARAM_SCALAR;
		p.value = strdup(text);
		if (!p.value)
			return extres_err_set(err, ENOMEM, "out of memory");
		break;
	case YAML_SEQUENCE_NODE:
		p.kind = EXTRES_PARAM_SEQUENCE;
		r = convert_sequence(y, node, &p, err);
		break;
	case YAML_MAPPING_NODE:
		p.kind = EXTRES_PARAM_MAPPING;
		r = convert_mapping(y, node, &p, err);
		break;
	default:
		return node_error(y, err, EINVAL, node, "an empty YAML node");
	}
	if (r < 0) {
		extres_param_clear(&p);
		return r;
	}
	*ret = p;
	return 0;
}

int extres_param_from_yaml(struct extres_yaml *y, yaml_node_t *node,
			   struct extres_param *ret, struct extres_err *err)
{
	return convert(y, node, ret, err);
}
