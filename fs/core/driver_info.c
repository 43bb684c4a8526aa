/* SPDX-License-Identifier: MIT */
#include "core/driver_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/infos.h"

/* strdup() that passes NULL through; sets *failed when out of memory. */
static char *dup_opt(const char *s, int *failed)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*failed = 1;
	return d;
}

static char **dup_keys(const char *const *keys, int *failed)
{
	size_t n = 0, i;
	char **d;

	if (!keys)
		return NULL;
	while (keys[n])
		n++;
	d = calloc(n + 1, sizeof(*d));
	if (!d) {
		*failed = 1;
		return NULL;
	}
	for (i = 0; i < n; i++)
		d[i] = dup_opt(keys[i], failed);
	return d;
}

/* What a driver declares besides its variable. */
struct declared {
	const char *const *identity_keys;
	const char *const *env_fixed;
	const char *const *control_nodes;
	const char *const *cdi_base_specs;
	const char *cdi_base_hint;
	const char *const *node_keys;
};

static int fill(struct extres_driver_info *ret, const char *env_var,
		const char *env_property, uint32_t env_form,
		const struct declared *x, const char *coord_file,
		const char *coord_how)
{
	struct extres_driver_info d = { .env_form = env_form };
	int failed = 0;

	d.env_var = dup_opt(env_var, &failed);
	d.env_property = dup_opt(env_property, &failed);
	d.identity_keys = dup_keys(x->identity_keys, &failed);
	d.env_fixed = dup_keys(x->env_fixed, &failed);
	d.control_nodes = dup_keys(x->control_nodes, &failed);
	d.cdi_base_specs = dup_keys(x->cdi_base_specs, &failed);
	d.cdi_base_hint = dup_opt(x->cdi_base_hint, &failed);
	d.node_keys = dup_keys(x->node_keys, &failed);
	d.coord_file = dup_opt(coord_file, &failed);
	d.coord_how = dup_opt(coord_how, &failed);
	if (failed) {
		extres_driver_info_clear(&d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

int extres_driver_info_from_ops(const struct extres_driver_ops *ops,
				struct extres_driver_info *ret)
{
	const struct declared x = { ops->identity_keys, ops->env_fixed,
				    ops->control_nodes, ops->cdi_base_specs,
				    ops->cdi_base_hint, ops->node_keys };

	return fill(ret, ops->env_var, ops->env_property, ops->env_form, &x,
		    NULL, NULL);
}

int extres_driver_info_copy(const struct extres_driver_info *src,
			    struct extres_driver_info *ret)
{
	const struct declared x = {
		(const char *const *)src->identity_keys,
		(const char *const *)src->env_fixed,
		(const char *const *)src->control_nodes,
		(const char *const *)src->cdi_base_specs,
		src->cdi_base_hint,
		(const char *const *)src->node_keys,
	};

	return fill(ret, src->env_var, src->env_property, src->env_form, &x,
		    src->coord_file, src->coord_how);
}

int extres_driver_info_set_coordination(struct extres_driver_info *info,
					const char *file, const char *how)
{
	char *f, *h;

	if (!file || !*file)
		return -EINVAL;
	f = strdup(file);
	h = strdup(how ? how : "");
	if (!f || !h) {
		free(f);
		free(h);
		return -ENOMEM;
	}
	free(info->coord_file);
	free(info->coord_how);
	info->coord_file = f;
	info->coord_how = h;
	return 0;
}

void extres_driver_info_clear(struct extres_driver_info *info)
{
	size_t i;

	free(info->env_var);
	free(info->env_property);
	for (i = 0; info->identity_keys && info->identity_keys[i]; i++)
		free(info->identity_keys[i]);
	free(info->identity_keys);
	for (i = 0; info->env_fixed && info->env_fixed[i]; i++)
		free(info->env_fixed[i]);
	free(info->env_fixed);
	for (i = 0; info->control_nodes && info->control_nodes[i]; i++)
		free(info->control_nodes[i]);
	free(info->control_nodes);
	for (i = 0; info->cdi_base_specs && info->cdi_base_specs[i]; i++)
		free(info->cdi_base_specs[i]);
	free(info->cdi_base_specs);
	free(info->cdi_base_hint);
	for (i = 0; info->node_keys && info->node_keys[i]; i++)
		free(info->node_keys[i]);
	free(info->node_keys);
	free(info->coord_file);
	free(info->coord_how);
	memset(info, 0, sizeof(*info));
}

const char *extres_driver_info_cdi_base(const struct extres_driver_info *info,
					const char *configured,
					int *ret_missing)
{
	char *const *p;
	struct stat st;

	*ret_missing = 0;
	if (configured)
		return configured;
	for (p = info ? info->cdi_base_specs : NULL; p && *p; p++)
		if (stat(*p, &st) == 0)
			return *p;
	*ret_missing = info && info->cdi_base_specs && info->cdi_base_specs[0];
	return NULL;
}

int extres_driver_info_same_device(const struct extres_driver_info *info,
				   const struct extres_info *held,
				   const struct extres_info *fresh)
{
	size_t i;

	for (i = 0; info && info->identity_keys && info->identity_keys[i];
	     i++) {
		const char *a = extres_info_get(held, info->identity_keys[i]);
		const char *b = extres_info_get(fresh, info->identity_keys[i]);

		if (a && b && strcmp(a, b) != 0)
			return 0;
	}
	return 1;
}

int extres_driver_info_check_env(
	const struct extres_config *config,
	const struct extres_driver_info *const *drivers, struct extres_err *err)
{
	const char **defaults;
	size_t i;
	int r;

	defaults = calloc(config->n_resources ? config->n_resources : 1,
			  sizeof(*defaults));
	if (!defaults)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < config->n_resources; i++)
		defaults[i] = drivers[i] ? drivers[i]->env_var : NULL;
	r = extres_config_check_env(config, defaults, err);
	free(defaults);
	return r;
}
