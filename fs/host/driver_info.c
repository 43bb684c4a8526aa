/* SPDX-License-Identifier: MIT */
#include "host/driver_info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/infos.h"

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
	const char *env_id_prefix;
};

/* The labels extres_device_info has of itself (views/metrics_view.h). */
static const char *const own_labels[] = {
	"resource", "info", "index", "uuid", "pci_bus_id", "name",
};

static int label_name_ok(const char *s)
{
	size_t i;

	if (!s[0] || (s[0] == '_' && s[1] == '_'))
		return 0;
	for (i = 0; s[i]; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (i > 0 && s[i] >= '0' && s[i] <= '9')))
			return 0;
	for (i = 0; i < sizeof(own_labels) / sizeof(own_labels[0]); i++)
		if (strcmp(s, own_labels[i]) == 0)
			return 0;
	return 1;
}

int extres_driver_info_check_labels(const struct extres_metric_label *labels,
				    const char *path, struct extres_err *err)
{
	size_t i;

	for (i = 0; labels && labels[i].label; i++) {
		if (!label_name_ok(labels[i].label))
			return extres_err_set(
				err, ELIBBAD,
				"%s: driver's metric label %zu '%s' is not a Prometheus label name of its own (or is one extres_device_info has already)",
				path, i, labels[i].label);
		if (labels[i].property && !labels[i].property[0])
			return extres_err_set(
				err, ELIBBAD,
				"%s: driver's metric label %zu '%s' names an empty property",
				path, i, labels[i].label);
	}
	return 0;
}

/* Deep copy of `n` labels into d->labels; sets *failed when out of
 * memory. `from` is either form: the fields are read as const char *. */
static void dup_labels(struct extres_driver_info *d, size_t n,
		       const char *(*field)(const void *, size_t, int),
		       const void *from, int *failed)
{
	size_t i;

	if (n == 0)
		return;
	d->labels = calloc(n, sizeof(*d->labels));
	if (!d->labels) {
		*failed = 1;
		return;
	}
	d->n_labels = n;
	for (i = 0; i < n; i++) {
		d->labels[i].label = dup_opt(field(from, i, 0), failed);
		d->labels[i].property = dup_opt(field(from, i, 1), failed);
		d->labels[i].prefix = dup_opt(
			field(from, i, 2) ? field(from, i, 2) : "", failed);
	}
}

static const char *ops_label(const void *from, size_t i, int which)
{
	const struct extres_metric_label *l = from;

	return which == 0 ? l[i].label :
	       which == 1 ? l[i].property :
			    l[i].prefix;
}

static const char *info_label(const void *from, size_t i, int which)
{
	const struct extres_driver_label *l = from;

	return which == 0 ? l[i].label :
	       which == 1 ? l[i].property :
			    l[i].prefix;
}

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
	d.env_id_prefix = dup_opt(x->env_id_prefix, &failed);
	d.coord_file = dup_opt(coord_file, &failed);
	d.coord_how = dup_opt(coord_how, &failed);
	if (failed) {
		extres_driver_info_clear(&d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

/* fill() and then the labels; 0 or -ENOMEM with *ret untouched. */
static int fill_labels(struct extres_driver_info *ret, size_t n,
		       const char *(*field)(const void *, size_t, int),
		       const void *from)
{
	int failed = 0;

	dup_labels(ret, n, field, from, &failed);
	if (failed) {
		extres_driver_info_clear(ret);
		return -ENOMEM;
	}
	return 0;
}

int extres_driver_info_from_ops(const struct extres_driver_ops *ops,
				struct extres_driver_info *ret)
{
	struct declared x = { ops->identity_keys, ops->env_fixed,
			      ops->control_nodes, ops->cdi_base_specs,
			      ops->cdi_base_hint, ops->node_keys,
			      ops->env_id_prefix };
	uint32_t form = ops->env_form;
	struct extres_driver_info d;
	size_t n = 0;
	int r;

	/* Modules built before env_id_prefix had one hex form, whose prefix
	 * the ABI fixed; from here on there is one form, the prefix data. */
	if (form == EXTRES_ENV_FORM_GPU_HEX_ID) {
		form = EXTRES_ENV_FORM_HEX_ID;
		x.env_id_prefix = "GPU-";
	}
	r = fill(&d, ops->env_var, ops->env_property, form, &x, NULL, NULL);
	while (r == 0 && ops->metric_labels && ops->metric_labels[n].label)
		n++;
	if (r == 0)
		r = fill_labels(&d, n, ops_label, ops->metric_labels);
	if (r == 0)
		*ret = d;
	return r;
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
		src->env_id_prefix,
	};
	struct extres_driver_info d;
	int r;

	r = fill(&d, src->env_var, src->env_property, src->env_form, &x,
		 src->coord_file, src->coord_how);
	if (r == 0)
		r = fill_labels(&d, src->n_labels, info_label, src->labels);
	if (r == 0)
		*ret = d;
	return r;
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
	free(info->env_id_prefix);
	free(info->coord_file);
	free(info->coord_how);
	for (i = 0; i < info->n_labels; i++) {
		free(info->labels[i].label);
		free(info->labels[i].property);
		free(info->labels[i].prefix);
	}
	free(info->labels);
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
