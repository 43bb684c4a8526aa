/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer (json.h). Written by hand rather than through libyaml's
 * emitter in flow style: that emitter turns a mapping key longer than 128
 * bytes into YAML's complex-key form `{? "key" : value}` and escapes
 * characters beyond the BMP as `\U0001F600`, neither of which is JSON, and a
 * property name may be 255 bytes long.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/text.h"

/* One open array or object. */
struct frame {
	int object;
	size_t n_members; /* values so far (in an object, complete members) */
	int have_key; /* object: a key was written, its value is due */
};

struct extres_json {
	char *text;
	size_t len, cap; /* cap counts the room for the final NUL */
	int error; /* the first failure, sticky; 0 while all is well */
	int finished;
	int have_root; /* the top-level value has begun */
	size_t depth;
	struct frame frames[EXTRES_JSON_MAX_DEPTH];
};

int extres_json_new(struct extres_json **ret_json)
{
	struct extres_json *json = calloc(1, sizeof(*json));

	if (!json)
		return -ENOMEM;
	*ret_json = json;
	return 0;
}

void extres_json_free(struct extres_json *json)
{
	if (!json)
		return;
	free(json->text);
	free(json);
}

static int fail(struct extres_json *json, int r)
{
	json->error = r;
	return r;
}

static int put(struct extres_json *json, const char *s, size_t n)
{
	size_t cap;
	char *text;

	if (json->cap - json->len <= n) {
		cap = json->cap ? json->cap : 256;
		while (cap - json->len <= n) {
			if (cap > SIZE_MAX / 2)
				return fail(json, -ENOMEM);
			cap *= 2;
		}
		text = realloc(json->text, cap);
		if (!text)
			return fail(json, -ENOMEM);
		json->text = text;
		json->cap = cap;
	}
	memcpy(json->text + json->len, s, n);
	json->len += n;
	return 0;
}

static int put_str(struct extres_json *json, const char *s)
{
	return put(json, s, strlen(s));
}

/* The escape for `cp`, in `buf`; NULL when it is written as itself. */
static const char *escape(uint32_t cp, char buf[8])
{
	switch (cp) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\t':
		return "\\t";
	case '\n':
		return "\\n";
	case '\f':
		return "\\f";
	case '\r':
		return "\\r";
	}
	if (extres_is_control(cp)) {
		snprintf(buf, 8, "\\u%04" PRIx32, cp);
		return buf;
	}
	return NULL;
}

static int put_quoted(struct extres_json *json, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, start = 0, n;
	const char *esc;
	char buf[8];
	uint32_t cp;
	int r;

	r = put(json, "\"", 1);
	/* Runs of characters written as themselves go out in one copy. */
	while (r == 0 && i < len) {
		n = extres_utf8_next(u + i, len - i, &cp);
		esc = cp == EXTRES_UTF8_REPLACEMENT ?
			      EXTRES_UTF8_REPLACEMENT_TEXT :
			      escape(cp, buf);
		if (!esc) {
			i += n;
			continue;
		}
		r = put(json, s + start, i - start);
		if (r == 0)
			r = put_str(json, esc);
		i += n;
		start = i;
	}
	if (r == 0)
		r = put(json, s + start, i - start);
	if (r == 0)
		r = put(json, "\"", 1);
	return r;
}

/* Check that a value may come here and write what goes before it. */
static int before_value(struct extres_json *json)
{
	struct frame *f;

	if (json->error)
		return json->error;
	if (json->finished)
		return fail(json, -EINVAL);
	if (json->depth == 0) {
		if (json->have_root)
			return fail(json, -EINVAL);
		json->have_root = 1;
		return 0;
	}
	f = &json->frames[json->depth - 1];
	if (f->object) {
		if (!f->have_key)
			return fail(json, -EINVAL);
		f->have_key = 0;
		f->n_members++;
		return put(json, ": ", 2);
	}
	return f->n_members++ ? put(json, ", ", 2) : 0;
}

static int begin(struct extres_json *json, int object)
{
	int r = before_value(json);

	if (r < 0)
		return r;
	if (json->depth == EXTRES_JSON_MAX_DEPTH)
		return fail(json, -E2BIG);
	json->frames[json->depth++] = (struct frame){ .object = object };
	return put(json, object ? "{" : "[", 1);
}

static int end(struct extres_json *json, int object)
{
	struct frame *f;

	if (json->error)
		return json->error;
	if (json->finished || json->depth == 0)
		return fail(json, -EINVAL);
	f = &json->frames[json->depth - 1];
	if (f->object != object || f->have_key)
		return fail(json, -EINVAL);
	json->depth--;
	return put(json, object ? "}" : "]", 1);
}

int extres_json_begin_array(struct extres_json *json)
{
	return begin(json, 0);
}

int extres_json_end_array(struct extres_json *json)
{
	return end(json, 0);
}

int extres_json_begin_object(struct extres_json *json)
{
	return begin(json, 1);
}

int extres_json_end_object(struct extres_json *json)
{
	return end(json, 1);
}

int extres_json_key(struct extres_json *json, const char *key)
{
	struct frame *f;

	if (json->error)
		return json->error;
	if (json->finished || json->depth == 0)
		return fail(json, -EINVAL);
	f = &json->frames[json->depth - 1];
	if (!f->object || f->have_key)
		return fail(json, -EINVAL);
	f->have_key = 1;
	if (f->n_members && put(json, ", ", 2) < 0)
		return json->error;
	return put_quoted(json, key, strlen(key));
}

int extres_json_string_len(struct extres_json *json, const char *s, size_t len)
{
	int r = before_value(json);

	return r < 0 ? r : put_quoted(json, s, len);
}

int extres_json_string(struct extres_json *json, const char *s)
{
	return extres_json_string_len(json, s, strlen(s));
}

int extres_json_uint(struct extres_json *json, uint64_t v)
{
	char buf[32];
	int r = before_value(json);

	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return put_str(json, buf);
}

int extres_json_null(struct extres_json *json)
{
	int r = before_value(json);

	return r < 0 ? r : put(json, "null", 4);
}

int extres_json_bool(struct extres_json *json, int v)
{
	int r = before_value(json);

	return r < 0 ? r : v ? put(json, "true", 4) : put(json, "false", 5);
}

int extres_json_finish(struct extres_json *json, char **ret_text,
		       size_t *ret_len)
{
	int r;

	if (json->error)
		r = json->error;
	else if (json->finished || !json->have_root || json->depth)
		r = fail(json, -EINVAL);
	else
		r = put(json, "\n", 1);
	json->finished = 1;
	if (r < 0)
		return r;
	/* put() always leaves room for the NUL. */
	json->text[json->len] = '\0';
	*ret_text = json->text;
	*ret_len = json->len;
	json->text = NULL;
	json->len = json->cap = 0;
	return 0;
}
