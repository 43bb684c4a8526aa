/* SPDX-License-Identifier: MIT */
#include "views/views.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "base/json.h"
#include "views/json_view.h"

/* A driver's prefix and 16 hex digits (EXTRES_ENV_FORM_HEX_ID). */
#define HEX_ID_LEN (EXTRES_ENV_ID_PREFIX_MAX + 16)

/* ---- a growing text; the first failure sticks ---- */

struct text {
	char *data;
	size_t len, cap;
	int error;
};

static void add_len(struct text *t, const char *s, size_t len)
{
	char *grown;
	size_t cap;

	if (t->error)
		return;
	if (len >= t->cap - t->len || !t->data) {
		cap = t->cap ? t->cap : 256;
		while (cap - t->len <= len)
			cap *= 2;
		grown = realloc(t->data, cap);
		if (!grown) {
			t->error = -ENOMEM;
			return;
		}
		t->data = grown;
		t->cap = cap;
	}
	memcpy(t->data + t->len, s, len);
	t->len += len;
	t->data[t->len] = '\0';
}

static void add(struct text *t, const char *s)
{
	add_len(t, s, strlen(s));
}

/* `s` for the inside of '...': a quote closes, is escaped, and reopens. */
static void add_quoted(struct text *t, const char *s)
{
	const char *quote;

	while ((quote = strchr(s, '\''))) {
		add_len(t, s, (size_t)(quote - s));
		add(t, "'\\''");
		s = quote + 1;
	}
	add(t, s);
}

/* Hand the text over, or free it and return the error. */
static int text_finish(struct text *t, char **ret_text, size_t *ret_len)
{
	if (!t->error && !t->data)
		add(t, "");
	if (t->error) {
		free(t->data);
		return t->error;
	}
	*ret_text = t->data;
	*ret_len = t->len;
	return 0;
}

/* ---- .meta/env ---- */

/* A hexadecimal "0x..." into a number; 0 (no unique id) does not count. */
static int parse_hex_id(const char *s, uint64_t *ret)
{
	unsigned long long v;
	size_t len;
	char *end;

	if (!s || strncmp(s, "0x", 2) != 0)
		return -EINVAL;
	s += 2;
	/* Digits only: strtoull would also take blanks, a sign, another 0x. */
	len = strspn(s, "0123456789abcdefABCDEF");
	if (len == 0 || s[len] != '\0')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (*end != '\0' || errno == ERANGE || v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The item `info` adds to the device variable in the driver's form, or
 * NULL; `buf` holds a reformatted one. */
static const char *device_item(const struct extres_driver_info *d,
			       const struct extres_info *info,
			       char buf[HEX_ID_LEN + 1])
{
	const char *v = extres_info_get(info, d->env_property);
	uint64_t id;

	if (v && !*v)
		return NULL;
	if (d->env_form != EXTRES_ENV_FORM_HEX_ID)
		return v;
	if (parse_hex_id(v, &id) < 0)
		return NULL;
	snprintf(buf, HEX_ID_LEN + 1, "%s%016" PRIx64,
		 d->env_id_prefix ? d->env_id_prefix : "", id);
	return buf;
}

/* The driver's form is used only when every info has it; else indexes. */
const struct extres_driver_info *
extres_view_device_form(const struct extres_view_resource *r)
{
	char buf[HEX_ID_LEN + 1];
	size_t i;

	if (!r->driver_info || !r->driver_info->env_property)
		return NULL;
	for (i = 0; i < r->n_infos; i++)
		if (!device_item(r->driver_info, &r->infos[i], buf))
			return NULL;
	return r->driver_info;
}

/* The items of infos [first, first + count) joined by ',': the driver's
 * form (`form`), or indexes; quoted for the inside of '...' or as they are. */
static void add_items(struct text *t, const struct extres_view_resource *r,
		      const struct extres_driver_info *form, size_t first,
		      size_t count, int quoted)
{
	char uuid[HEX_ID_LEN + 1];
	const char *item;
	int first_item = 1;
	size_t i;

	for (i = first; i < first + count && i < r->n_infos; i++) {
		const struct extres_info *info = &r->infos[i];

		if (form)
			item = device_item(form, info, uuid);
		else
			item = extres_info_get(info, "index");
		if (!item)
			continue;
		if (!first_item)
			add(t, ",");
		if (quoted)
			add_quoted(t, item);
		else
			add(t, item);
		first_item = 0;
	}
}

/* export NAME='item,item'\n: the driver's form (`form`), or indexes. */
static void add_export(struct text *t, const char *var,
		       const struct extres_view_resource *r,
		       const struct extres_driver_info *form)
{
	add(t, "export ");
	add(t, var);
	add(t, "='");
	add_items(t, r, form, 0, r->n_infos, 1);
	add(t, "'\n");
}

/* 1 if resource j < i already exported the fixed variable `entry`. */
static int fixed_before(const struct extres_view_resource *res, size_t i,
			const char *entry)
{
	char *const *e;
	size_t j;

	for (j = 0; j < i; j++)
		for (e = res[j].driver_info && extres_view_device_var(&res[j]) ?
				 res[j].driver_info->env_fixed :
				 NULL;
		     e && *e; e++)
			if (strcmp(*e, entry) == 0)
				return 1;
	return 0;
}

/* The driver's fixed variables that go with res[i]'s device variable,
 * each once however many resources share a driver. */
static void add_fixed(struct text *t, const struct extres_view_resource *res,
		      size_t i)
{
	char *const *e;
	const char *eq;

	for (e = res[i].driver_info ? res[i].driver_info->env_fixed : NULL;
	     e && *e; e++) {
		eq = strchr(*e, '=');
		if (!eq || fixed_before(res, i, *e))
			continue;
		add(t, "export ");
		add_len(t, *e, (size_t)(eq - *e));
		add(t, "='");
		add(t, eq + 1);
		add(t, "'\n");
	}
}

const char *extres_view_device_var(const struct extres_view_resource *r)
{
	return extres_env_var(r->driver_info ? r->driver_info->env_var : NULL,
			      r->env_var);
}

int extres_view_env_values(const struct extres_view_resource *r,
			   const struct extres_driver_info *form, size_t first,
			   size_t count, char **ret_indexes, char **ret_devices)
{
	struct text indexes = { 0 }, devices = { 0 };
	size_t len;
	int err;

	add_items(&indexes, r, NULL, first, count, 0);
	if (extres_view_device_var(r))
		add_items(&devices, r, form, first, count, 0);
	err = text_finish(&indexes, ret_indexes, &len);
	if (err < 0) {
		free(devices.data);
		return err;
	}
	if (!extres_view_device_var(r)) {
		*ret_devices = NULL;
		return 0;
	}
	err = text_finish(&devices, ret_devices, &len);
	if (err < 0)
		free(*ret_indexes);
	return err;
}

int extres_view_env(const struct extres_view_resource *res, size_t n,
		    char **ret_text, size_t *ret_len)
{
	struct text t = { 0 };
	char *indexes;
	size_t i;

	/* The name is written as shell code, unquoted: check it first. */
	for (i = 0; i < n; i++) {
		const char *var = extres_view_device_var(&res[i]);

		if (var && extres_check_env_var_name(var) < 0)
			return -EINVAL;
	}
	for (i = 0; i < n && !t.error; i++) {
		const char *var = extres_view_device_var(&res[i]);

		if (extres_env_indexes_var(res[i].name, &indexes) < 0) {
			t.error = -ENOMEM;
			break;
		}
		add_export(&t, indexes, &res[i], NULL);
		free(indexes);
		if (var) {
			add_export(&t, var, &res[i],
				   extres_view_device_form(&res[i]));
			add_fixed(&t, res, i);
		}
	}
	return text_finish(&t, ret_text, ret_len);
}

/* ---- .meta/resources.json and .meta/extres.json ---- */

static void json_indexes(struct extres_json *json,
			 const struct extres_view_resource *r)
{
	const char *index;
	size_t i;

	extres_json_begin_array(json);
	for (i = 0; i < r->n_infos; i++) {
		index = extres_info_get(&r->infos[i], "index");
		if (index)
			extres_json_string(json, index);
	}
	extres_json_end_array(json);
}

/* The writer's errors stick: only finish needs checking. */
static int json_finish(struct extres_json *json, char **ret_text,
		       size_t *ret_len)
{
	int r = extres_json_finish(json, ret_text, ret_len);

	extres_json_free(json);
	return r;
}

int extres_view_spark(const struct extres_view_resource *res, size_t n,
		      char **ret_text, size_t *ret_len)
{
	/* Spark keeps only the entries of the component reading the file:
	 * one file for each of its resourcesFile settings. */
	static const char *const components[] = { "spark.executor",
						  "spark.driver",
						  "spark.worker" };
	struct extres_json *json;
	size_t c, i;
	int r;

	r = extres_json_new(&json);
	if (r < 0)
		return r;
	extres_json_begin_array(json);
	for (c = 0; c < sizeof(components) / sizeof(*components); c++) {
		for (i = 0; i < n; i++) {
			extres_json_begin_object(json);
			extres_json_key(json, "id");
			extres_json_begin_object(json);
			extres_json_key(json, "componentName");
			extres_json_string(json, components[c]);
			extres_json_key(json, "resourceName");
			extres_json_string(json, res[i].name);
			extres_json_end_object(json);
			extres_json_key(json, "addresses");
			json_indexes(json, &res[i]);
			extres_json_end_object(json);
		}
	}
	extres_json_end_array(json);
	return json_finish(json, ret_text, ret_len);
}

int extres_view_json(const struct extres_view_resource *res, size_t n,
		     char **ret_text, size_t *ret_len)
{
	return extres_view_json_holders(res, n, NULL, NULL, ret_text, ret_len);
}

int extres_view_json_holders(const struct extres_view_resource *res, size_t n,
			     const unsigned char *pools,
			     const struct extres_holders *holders,
			     char **ret_text, size_t *ret_len)
{
	/* Every resource allocated something: "infos" is always there. */
	static const struct extres_info none;
	struct extres_json_resource *doc;
	size_t i;
	int r;

	doc = calloc(n ? n : 1, sizeof(*doc));
	if (!doc)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		doc[i] = (struct extres_json_resource){
			.name = res[i].name,
			.driver = res[i].driver,
			.amount = pools && pools[i] ? res[i].n_infos :
						      res[i].amount,
			.configured = &res[i].configured,
			.pool = pools && pools[i],
			.infos = res[i].infos ? res[i].infos : &none,
			.n_infos = res[i].n_infos,
		};
	r = extres_json_view_holders(doc, n, holders, ret_text, ret_len);
	free(doc);
	return r;
}
