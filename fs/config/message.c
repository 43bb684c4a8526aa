/* SPDX-License-Identifier: MIT */
/* Errors and warnings at a position of the config file, and the checks on
 * one key's value that produce them. */
#include "config/loader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Write `src` into `dst` (`size` bytes, NUL-terminated, cut if need be) with
 * every control character as \xNN: messages quote keys and values from
 * the file, which must not reach a terminal or a log as raw bytes.
 */
static void escape_controls(char *dst, size_t size, const char *src)
{
	size_t o = 0;

	for (; *src && o + 1 < size; src++) {
		unsigned char c = (unsigned char)*src;

		if (c >= 0x20 && c != 0x7f) {
			dst[o++] = (char)c;
		} else if (o + 4 < size) {
			snprintf(dst + o, size - o, "\\x%02x", c);
			o += 4;
		} else {
			break;
		}
	}
	dst[o] = '\0';
}

int extres_cfg_fail(struct loader *l, int errnum, uint32_t line,
		    uint32_t column, const char *fmt, ...)
{
	va_list ap;

	char raw[EXTRES_ERR_MAX];

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (l->err)
		escape_controls(l->err->msg, sizeof(l->err->msg), raw);
	return extres_err_prefix(l->err, errnum, "%s:%u:%u", l->file, line,
				 column);
}

int extres_cfg_oom(struct loader *l)
{
	return extres_err_set(l->err, ENOMEM, "out of memory");
}

int extres_cfg_warn(struct loader *l, uint32_t line, uint32_t column,
		    const char *fmt, ...)
{
	struct warning *w;
	char *msg = NULL, *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return extres_cfg_oom(l);
	n = asprintf(&text, "%s:%u:%u: %s", l->file, line, column, msg);
	free(msg);
	if (n < 0)
		return extres_cfg_oom(l);
	/* Escaping makes a character at most four. */
	msg = malloc(4 * (size_t)n + 1);
	if (!msg) {
		free(text);
		return extres_cfg_oom(l);
	}
	escape_controls(msg, 4 * (size_t)n + 1, text);
	free(text);
	text = msg;
	w = extres_cfg_grow(l->warnings, l->n_warnings, sizeof(*w));
	if (!w) {
		free(text);
		return extres_cfg_oom(l);
	}
	l->warnings = w;
	w[l->n_warnings] =
		(struct warning){ line, column, l->n_warnings, text };
	l->n_warnings++;
	return 0;
}

int extres_cfg_warn_unknown(struct loader *l, const struct extres_flat *e)
{
	return extres_cfg_warn_unknown_near(l, e, NULL);
}

int extres_cfg_warn_unknown_near(struct loader *l, const struct extres_flat *e,
				 const char *near)
{
	if (near)
		return extres_cfg_warn(
			l, e->line, e->column,
			"unknown key '%s' (ignored); did you mean %s?", e->key,
			near);
	return extres_cfg_warn(l, e->line, e->column,
			       "unknown key '%s' (ignored)", e->key);
}

uint32_t extres_cfg_value_line(const struct extres_flat *e)
{
	return extres_yaml_pos(e->value->start_mark.line);
}

uint32_t extres_cfg_value_column(const struct extres_flat *e)
{
	return extres_yaml_pos(e->value->start_mark.column);
}

/* A key that takes one value, given a mapping (flattened into keys of its
 * own, which would leave the key itself unset). */
int extres_cfg_wrong_kind(struct loader *l, const struct extres_flat *e,
			  const char *expected)
{
	return extres_cfg_fail(l, EINVAL, extres_cfg_value_line(e),
			       extres_cfg_value_column(e),
			       "%s is a %s, where %s is expected", e->key,
			       extres_yaml_kind(e->value), expected);
}

/* Refuses a section named `key`. */
int extres_cfg_refuse_section(struct loader *l, const char *key,
			      const char *expected)
{
	size_t i;

	for (i = 0; i < l->flat.n; i++)
		if (l->flat.items[i].section &&
		    strcmp(l->flat.items[i].key, key) == 0)
			return extres_cfg_wrong_kind(l, &l->flat.items[i],
						     expected);
	return 0;
}

/*
 * The text of a key that takes one value (`expected`, for messages), in
 * *ret_text; NULL when the key is absent, empty or null (not set).
 */
int extres_cfg_scalar_of(struct loader *l, const struct extres_flat *e,
			 const char *expected, const char **ret_text)
{
	const char *text;
	int r;

	if (!e) {
		*ret_text = NULL;
		return 0;
	}
	if (e->value->type != YAML_SCALAR_NODE)
		return extres_cfg_wrong_kind(l, e, expected);
	r = extres_yaml_text(&l->yaml, e->value, &text, l->err);
	if (r < 0)
		return r;
	*ret_text = *text ? text : NULL;
	return 0;
}

/*
 * Of a newer key and its older spelling, the text of the one in effect;
 * warns when both are set.
 */
int extres_cfg_pick(struct loader *l, const struct extres_flat *newer,
		    const struct extres_flat *older, const char *expected,
		    const char **ret_text, const struct extres_flat **ret_entry)
{
	const char *new_text, *old_text;
	int r;

	r = extres_cfg_scalar_of(l, newer, expected, &new_text);
	if (r < 0)
		return r;
	r = extres_cfg_scalar_of(l, older, expected, &old_text);
	if (r < 0)
		return r;
	if (new_text && old_text) {
		r = extres_cfg_warn(l, older->line, older->column,
				    "%s is ignored because %s is set",
				    older->key, newer->key);
		if (r < 0)
			return r;
	}
	*ret_text = new_text ? new_text : old_text;
	if (ret_entry)
		*ret_entry = new_text ? newer : old_text ? older : NULL;
	return 0;
}

static int compare_warnings(const void *a, const void *b)
{
	const struct warning *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand the warnings, in file order, to the config. */
int extres_cfg_move_warnings(struct loader *l)
{
	struct extres_config *c = l->config;
	size_t i;

	if (l->n_warnings == 0)
		return 0;
	c->warnings = calloc(l->n_warnings, sizeof(*c->warnings));
	if (!c->warnings)
		return extres_cfg_oom(l);
	qsort(l->warnings, l->n_warnings, sizeof(*l->warnings),
	      compare_warnings);
	for (i = 0; i < l->n_warnings; i++) {
		c->warnings[i] = l->warnings[i].text;
		l->warnings[i].text = NULL;
	}
	c->n_warnings = l->n_warnings;
	return 0;
}
