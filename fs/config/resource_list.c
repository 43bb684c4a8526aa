/* SPDX-License-Identifier: MIT */
/* The list of resources: external-resources (or the older
 * external-resource.list), as text or as a sequence. */
#include "config/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/name.h"

static int add_resource(struct loader *l, const char *text, size_t len,
			uint32_t line, uint32_t column)
{
	struct extres_config *c = l->config;
	struct extres_resource_config *res;
	const char *problem;
	char *name;
	size_t i;

	if (c->n_resources == EXTRES_MAX_RESOURCES)
		return extres_cfg_fail(l, E2BIG, line, column,
				       "%s lists more than %d resources",
				       l->list_key, EXTRES_MAX_RESOURCES);
	name = strndup(text, len);
	if (!name)
		return extres_cfg_oom(l);
	problem = extres_name_problem(name);
	/* The mount's root holds it beside the resources. */
	if (!problem && strcmp(name, "self") == 0)
		problem =
			"is reserved (the mount's self/ shows each process its own lease)";
	if (problem) {
		extres_cfg_fail(l, EINVAL, line, column,
				"resource name '%s' in %s %s", name,
				l->list_key, problem);
		free(name);
		return -EINVAL;
	}
	for (i = 0; i < c->n_resources; i++) {
		if (strcmp(c->resources[i].name, name) == 0) {
			extres_cfg_fail(
				l, EINVAL, line, column,
				"resource '%s' is listed twice in %s (first at line %u, column %u)",
				name, l->list_key, c->resources[i].line,
				c->resources[i].column);
			free(name);
			return -EINVAL;
		}
	}
	res = &c->resources[c->n_resources];
	res->params = calloc(1, sizeof(*res->params));
	if (!res->params) {
		free(name);
		return extres_cfg_oom(l);
	}
	res->params->kind = EXTRES_PARAM_MAPPING;
	res->params->line = line;
	res->params->column = column;
	res->name = name;
	res->line = line;
	res->column = column;
	c->n_resources++;
	return 0;
}

/* Number of UTF-8 characters in the first `len` bytes of `s`. */
static uint32_t chars_in(const char *s, size_t len)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static int read_list_text(struct loader *l, const struct extres_flat *e,
			  char separator)
{
	const yaml_node_t *v = e->value;
	const char *text, *p;
	uint32_t line = extres_cfg_value_line(e),
		 column = extres_cfg_value_column(e);
	/* A plain scalar on one line is the source text itself, so each
	 * name can be placed exactly. */
	int exact = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    v->start_mark.line == v->end_mark.line;
	int r;

	r = extres_yaml_text(&l->yaml, v, &text, l->err);
	if (r < 0)
		return r;
	for (p = text;;) {
		const char *end = strchr(p, separator);
		const char *stop = end ? end : p + strlen(p);

		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t'))
			stop--;
		if (stop > p) {
			r = add_resource(
				l, p, (size_t)(stop - p), line,
				exact ? column + chars_in(text,
							  (size_t)(p - text)) :
					column);
			if (r < 0)
				return r;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

static int read_list_sequence(struct loader *l, const struct extres_flat *e)
{
	const yaml_node_t *v = e->value;
	yaml_node_item_t *item;
	int r;

	for (item = v->data.sequence.items.start;
	     item < v->data.sequence.items.top; item++) {
		yaml_node_t *node = yaml_document_get_node(l->yaml.doc, *item);
		uint32_t line = extres_yaml_pos(node->start_mark.line);
		uint32_t column = extres_yaml_pos(node->start_mark.column);
		const char *text;

		if (node->type != YAML_SCALAR_NODE)
			return extres_cfg_fail(
				l, EINVAL, line, column,
				"%s: an item must be a resource name, not a %s",
				e->key, extres_yaml_kind(node));
		r = extres_yaml_text(&l->yaml, node, &text, l->err);
		if (r < 0)
			return r;
		r = add_resource(l, text, strlen(text), line, column);
		if (r < 0)
			return r;
	}
	return 0;
}

int extres_cfg_read_list(struct loader *l)
{
	const struct extres_flat *list = extres_cfg_find_key(l, LIST_KEY);
	const struct extres_flat *old = extres_cfg_find_key(l, OLD_LIST_KEY);
	struct extres_config *c = l->config;
	const struct extres_flat *e;
	int r;

	r = extres_cfg_refuse_section(l, LIST_KEY, LIST_EXPECTED);
	if (r == 0)
		r = extres_cfg_refuse_section(l, OLD_LIST_KEY, LIST_EXPECTED);
	if (r < 0)
		return r;
	/* A null list (everything under it commented out) is not set. */
	if (list && extres_yaml_is_null(list->value))
		list = NULL;
	if (old && extres_yaml_is_null(old->value))
		old = NULL;
	if (list && old) {
		r = extres_cfg_warn(l, old->line, old->column,
				    "%s is ignored because %s is set",
				    OLD_LIST_KEY, LIST_KEY);
		if (r < 0)
			return r;
	}
	e = list ? list : old;
	if (!e)
		return extres_err_set(l->err, EINVAL,
				      "%s: no resources listed (set %s)",
				      l->file, LIST_KEY);
	l->list_key = e->key;

	c->resources = calloc(EXTRES_MAX_RESOURCES, sizeof(*c->resources));
	l->keys = calloc(EXTRES_MAX_RESOURCES, sizeof(*l->keys));
	if (!c->resources || !l->keys)
		return extres_cfg_oom(l);
	if (e->value->type == YAML_SEQUENCE_NODE)
		r = read_list_sequence(l, e);
	else
		r = read_list_text(l, e, e == list ? ';' : ',');
	if (r < 0)
		return r;
	if (c->n_resources == 0)
		return extres_cfg_fail(l, EINVAL, extres_cfg_value_line(e),
				       extres_cfg_value_column(e),
				       "%s lists no resources", e->key);
	return 0;
}
