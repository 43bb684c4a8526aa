/* SPDX-License-Identifier: MIT */
/* One resource's settings, from its keys. */
#include "config/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/text.h"
#include "config/cdi_name.h"
#include "config/name.h"

static int set_amount(struct loader *l, struct extres_resource_config *res,
		      const struct extres_flat *e)
{
	const struct extres_flat *typo;
	const char *text, *why;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_AMOUNT],
				 &text);
	if (r < 0)
		return r;
	if (!text && res->pool)
		return 0;
	if (!text && (typo = extres_cfg_typo_of(
			      l, res->name, extres_cfg_slot_keys[SLOT_AMOUNT])))
		return extres_cfg_fail(
			l, EINVAL, typo->line, typo->column,
			"unknown key '%s'; did you mean " RESOURCE_PREFIX
			"%s.amount? (resource '%s': " RESOURCE_PREFIX
			"%s.amount is not set)",
			typo->key, res->name, res->name, res->name);
	if (!text)
		return extres_cfg_fail(l, EINVAL, res->line, res->column,
				       "resource '%s': " RESOURCE_PREFIX
				       "%s.amount is not set",
				       res->name, res->name);
	if (extres_amount_parse(text, &res->amount, &why) < 0)
		return extres_cfg_fail(l, EINVAL, extres_cfg_value_line(e),
				       extres_cfg_value_column(e),
				       "%s is '%s'; %s", e->key, text, why);
	return 0;
}

/* refresh-interval: from EXTRES_MIN_REFRESH_MS; unset or null for none. */
static int set_refresh(struct loader *l, struct extres_resource_config *res,
		       const struct extres_flat *e)
{
	unsigned long long ms;
	const char *text;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_REFRESH],
				 &text);
	if (r < 0 || !text)
		return r;
	if (extres_parse_ms(text, EXTRES_MIN_REFRESH_MS, EXTRES_MAX_REFRESH_MS,
			    &ms) < 0)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; it must be seconds from %g to %llu, with at most three decimals",
			e->key, text, EXTRES_MIN_REFRESH_MS / 1000.0,
			(unsigned long long)EXTRES_MAX_REFRESH_MS / 1000);
	res->refresh_ms = ms;
	return 0;
}

static int valid_driver(const char *driver)
{
	const char *p;

	if (extres_cfg_is_absolute(driver))
		return 1;
	for (p = driver; *p; p++)
		if (!extres_is_driver_name_char(*p))
			return 0;
	return 1;
}

static int set_driver(struct loader *l, struct extres_resource_config *res,
		      const struct resource_keys *keys)
{
	const struct extres_flat *driver = keys->slot[SLOT_DRIVER];
	const struct extres_flat *class_entry;
	const char *text, *class_name;
	int r;

	r = extres_cfg_scalar_of(l, driver,
				 extres_cfg_slot_expected[SLOT_DRIVER], &text);
	if (r < 0)
		return r;
	r = extres_cfg_pick(l, keys->slot[SLOT_FACTORY_CLASS],
			    keys->slot[SLOT_DRIVER_CLASS],
			    extres_cfg_slot_expected[SLOT_FACTORY_CLASS],
			    &class_name, &class_entry);
	if (r < 0)
		return r;
	if (text) {
		if (!valid_driver(text))
			return extres_cfg_fail(
				l, EINVAL, extres_cfg_value_line(driver),
				extres_cfg_value_column(driver),
				"%s is '%s'; expected a driver name ([A-Za-z0-9_-]+) or an absolute path",
				driver->key, text);
		if (class_name) {
			r = extres_cfg_warn(l, class_entry->line,
					    class_entry->column,
					    "%s is ignored because %s is set",
					    class_entry->key, driver->key);
			if (r < 0)
				return r;
		}
	} else if (class_name) {
		r = extres_cfg_factory_class(l, res, class_entry, class_name,
					     &text);
		if (r == -ENOENT)
			return extres_cfg_fail(
				l, EINVAL, extres_cfg_value_line(class_entry),
				extres_cfg_value_column(class_entry),
				"unsupported driver factory class '%s' for resource '%s'; set " RESOURCE_PREFIX
				"%s.driver to an extres driver",
				class_name, res->name, res->name);
		if (r < 0)
			return r;
	} else {
		return extres_cfg_fail(
			l, EINVAL, res->line, res->column,
			"resource '%s' has no driver; set " RESOURCE_PREFIX
			"%s.driver (or " RESOURCE_PREFIX
			"%s.driver-factory.class)",
			res->name, res->name, res->name);
	}
	res->driver = strdup(text);
	return res->driver ? 0 : extres_cfg_oom(l);
}

/* *ret = a copy of `text`, or NULL for NULL. */
int extres_cfg_copy_opt(struct loader *l, const char *text, char **ret)
{
	if (!text)
		return 0;
	*ret = strdup(text);
	return *ret ? 0 : extres_cfg_oom(l);
}

static int set_coordination(struct loader *l,
			    struct extres_resource_config *res,
			    const struct resource_keys *keys)
{
	const struct extres_flat *key_entry = keys->slot[SLOT_COORD_KEY];
	const char *file, *key, *problem;
	int r;

	r = extres_cfg_scalar_of(l, keys->slot[SLOT_COORD_FILE],
				 extres_cfg_slot_expected[SLOT_COORD_FILE],
				 &file);
	if (r < 0)
		return r;
	if (file) {
		res->coordination_file =
			extres_cfg_resolve(l->config->dir, file);
		if (!res->coordination_file)
			return extres_cfg_oom(l);
	}
	r = extres_cfg_scalar_of(
		l, key_entry, extres_cfg_slot_expected[SLOT_COORD_KEY], &key);
	if (r < 0)
		return r;
	if (key) {
		problem = extres_name_problem(key);
		if (problem)
			return extres_cfg_fail(
				l, EINVAL, extres_cfg_value_line(key_entry),
				extres_cfg_value_column(key_entry),
				"%s '%s' %s", key_entry->key, key, problem);
	}
	return extres_cfg_copy_opt(l, key ? key : "index",
				   &res->coordination_key);
}

/* Absent: NULL (the driver's default). Present but empty or null: "". */
static int set_env_var(struct loader *l, struct extres_resource_config *res,
		       const struct extres_flat *e)
{
	const char *text;
	int r;

	if (!e)
		return 0;
	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_ENV_VAR],
				 &text);
	if (r < 0)
		return r;
	if (!text)
		text = "";
	else if (extres_check_env_var_name(text) < 0)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; expected a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or \"\" for none",
			e->key, text);
	res->env_var_line = extres_cfg_value_line(e);
	res->env_var_column = extres_cfg_value_column(e);
	return extres_cfg_copy_opt(l, text, &res->env_var);
}

/* Checked here, where the value's position is known: a runtime would
 * refuse the whole spec file, far from the config. */
static int set_cdi_kind(struct loader *l, struct extres_resource_config *res,
			const struct extres_flat *e)
{
	const char *text, *problem;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_CDI_KIND],
				 &text);
	if (r < 0 || !text)
		return r;
	problem = extres_cdi_kind_problem(text);
	if (problem)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s', which %s; expected a CDI kind such as " EXTRES_CDI_VENDOR
			"/%s",
			e->key, text, problem, res->name);
	return extres_cfg_copy_opt(l, text, &res->cdi_kind);
}

/* cdi.base-spec: the vendor's generated spec, where it is not where the
 * driver says to look. */
static int set_cdi_base(struct loader *l, struct extres_resource_config *res,
			const struct extres_flat *e)
{
	const char *text;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_CDI_BASE],
				 &text);
	if (r < 0 || !text)
		return r;
	res->cdi_base_spec = extres_cfg_resolve(l->config->dir, text);
	return res->cdi_base_spec ? 0 : extres_cfg_oom(l);
}

/* pool: YAML's core-schema booleans only; unset or null is false. */
static int set_pool(struct loader *l, struct extres_resource_config *res,
		    const struct extres_flat *e)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	const char *text;
	size_t i;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_POOL],
				 &text);
	if (r < 0 || !text)
		return r;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(text, yes[i]) == 0)
			res->pool = 1;
		else if (strcmp(text, no[i]) == 0)
			return 0;
	}
	if (!res->pool)
		return extres_cfg_fail(l, EINVAL, extres_cfg_value_line(e),
				       extres_cfg_value_column(e),
				       "%s is '%s'; expected true or false",
				       e->key, text);
	return 0;
}

/* A pool shares its devices through its coordination file: without one
 * nobody could lease them, nor could it say who holds them. */
static int check_pool(struct loader *l,
		      const struct extres_resource_config *res,
		      const struct extres_flat *e)
{
	if (!res->pool || res->coordination_file)
		return 0;
	return extres_cfg_fail(
		l, EINVAL, extres_cfg_value_line(e), extres_cfg_value_column(e),
		"%s is true, but " RESOURCE_PREFIX
		"%s.coordination-file is not set: a pool's devices are shared through its coordination file",
		e->key, res->name);
}

int extres_cfg_finish_resource(struct loader *l, size_t index)
{
	struct extres_resource_config *res = &l->config->resources[index];
	const struct resource_keys *keys = &l->keys[index];
	const char *text;
	int r;

	r = set_pool(l, res, keys->slot[SLOT_POOL]);
	if (r < 0)
		return r;
	r = set_amount(l, res, keys->slot[SLOT_AMOUNT]);
	if (r < 0)
		return r;
	r = set_driver(l, res, keys);
	if (r < 0)
		return r;
	r = extres_cfg_pick(
		l, keys->slot[SLOT_KUBERNETES], keys->slot[SLOT_KUBERNETES_OLD],
		extres_cfg_slot_expected[SLOT_KUBERNETES], &text, NULL);
	if (r < 0)
		return r;
	r = extres_cfg_copy_opt(l, text, &res->kubernetes_key);
	if (r < 0)
		return r;
	r = extres_cfg_pick(l, keys->slot[SLOT_YARN], keys->slot[SLOT_YARN_OLD],
			    extres_cfg_slot_expected[SLOT_YARN], &text, NULL);
	if (r < 0)
		return r;
	r = extres_cfg_copy_opt(l, text, &res->yarn_key);
	if (r < 0)
		return r;
	r = set_coordination(l, res, keys);
	if (r < 0)
		return r;
	r = check_pool(l, res, keys->slot[SLOT_POOL]);
	if (r < 0)
		return r;
	r = set_refresh(l, res, keys->slot[SLOT_REFRESH]);
	if (r < 0)
		return r;
	r = set_cdi_kind(l, res, keys->slot[SLOT_CDI_KIND]);
	if (r < 0)
		return r;
	r = set_cdi_base(l, res, keys->slot[SLOT_CDI_BASE]);
	if (r == 0)
		r = extres_cfg_set_sharing(l, res, keys);
	if (r < 0)
		return r;
	return set_env_var(l, res, keys->slot[SLOT_ENV_VAR]);
}
