/* SPDX-License-Identifier: MIT */
/* The variables of the env view: each resource's, and the rules across
 * resources (config.h, "Environment variables"). */
#include "config/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int extres_check_env_var_name(const char *name)
{
	const char *p;

	if (!((*name >= 'A' && *name <= 'Z') ||
	      (*name >= 'a' && *name <= 'z') || *name == '_'))
		return -EINVAL;
	for (p = name + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return -EINVAL;
	return 0;
}

const char *extres_env_var(const char *driver_default, const char *env_var)
{
	if (env_var)
		return *env_var ? env_var : NULL;
	return driver_default;
}

int extres_env_indexes_var(const char *name, char **ret_var)
{
	static const char prefix[] = "EXTRES_", suffix[] = "_INDEXES";
	size_t len = strlen(name), i;
	char *var, *p;

	var = malloc(sizeof(prefix) - 1 + len + sizeof(suffix));
	if (!var)
		return -ENOMEM;
	p = stpcpy(var, prefix);
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		*p++ = c;
	}
	strcpy(p, suffix);
	*ret_var = var;
	return 0;
}

struct env_names {
	const char *var; /* the device variable, or NULL */
	int configured; /* var comes from env-var, not the driver */
	char *indexes; /* EXTRES_<NAME>_INDEXES */
	uint32_t line, column; /* of env-var's value, else of the name */
};

static int env_names_init(struct loader *l, const char *const *defaults,
			  struct env_names *names)
{
	const struct extres_config *c = l->config;
	size_t i;

	for (i = 0; i < c->n_resources; i++) {
		const struct extres_resource_config *res = &c->resources[i];
		int configured = res->env_var != NULL;

		names[i].var = extres_env_var(defaults ? defaults[i] : NULL,
					      res->env_var);
		names[i].configured = configured;
		names[i].line = configured ? res->env_var_line : res->line;
		names[i].column =
			configured ? res->env_var_column : res->column;
		if (extres_env_indexes_var(res->name, &names[i].indexes) < 0)
			return extres_cfg_oom(l);
	}
	return 0;
}

/* Resource `b` (listed after `a`) may not set what `a` sets. */
static int env_pair(struct loader *l, const struct env_names *names, size_t a,
		    size_t b)
{
	const struct extres_resource_config *ra = &l->config->resources[a];
	const struct extres_resource_config *rb = &l->config->resources[b];
	const struct env_names *na = &names[a], *nb = &names[b];

	if (strcmp(na->indexes, nb->indexes) == 0)
		return extres_cfg_fail(
			l, EINVAL, rb->line, rb->column,
			"resource names '%s' and '%s' (line %u, column %u) both make the variable %s; rename one",
			rb->name, ra->name, ra->line, ra->column, nb->indexes);
	if (na->var && nb->var && strcmp(na->var, nb->var) == 0)
		return extres_cfg_fail(
			l, EINVAL, nb->line, nb->column,
			"resource '%s' would set %s%s%s%s, as resource '%s' does (line %u, column %u); set " RESOURCE_PREFIX
			"%s.env-var to another name, or to \"\" for none",
			rb->name, nb->var, nb->configured ? "" : " (the ",
			nb->configured ? "" : rb->driver,
			nb->configured ? "" : " driver's default)", ra->name,
			na->line, na->column, rb->name);
	if (nb->var && strcmp(nb->var, na->indexes) == 0)
		return extres_cfg_fail(
			l, EINVAL, nb->line, nb->column,
			"resource '%s' would set %s, which holds the indexes of resource '%s'; set " RESOURCE_PREFIX
			"%s.env-var to another name",
			rb->name, nb->var, ra->name, rb->name);
	if (na->var && strcmp(na->var, nb->indexes) == 0)
		return extres_cfg_fail(
			l, EINVAL, na->line, na->column,
			"resource '%s' would set %s, which holds the indexes of resource '%s'; set " RESOURCE_PREFIX
			"%s.env-var to another name",
			ra->name, na->var, rb->name, ra->name);
	return 0;
}

/* A sourced file keeps only the last of two assignments: refuse them.
 * `defaults`: each resource's driver default, or NULL while unknown. */
int extres_cfg_check_env_vars(struct loader *l, const char *const *defaults)
{
	const struct extres_config *c = l->config;
	struct env_names *names;
	size_t i, j;
	int r;

	names = calloc(c->n_resources, sizeof(*names));
	if (!names)
		return extres_cfg_oom(l);
	r = env_names_init(l, defaults, names);
	for (i = 0; i < c->n_resources && r == 0; i++) {
		if (names[i].var && strcmp(names[i].var, names[i].indexes) == 0)
			r = extres_cfg_fail(
				l, EINVAL, names[i].line, names[i].column,
				"resource '%s' already sets %s to its indexes; set " RESOURCE_PREFIX
				"%s.env-var to another name",
				c->resources[i].name, names[i].var,
				c->resources[i].name);
		for (j = 0; j < i && r == 0; j++)
			r = env_pair(l, names, j, i);
	}
	for (i = 0; i < c->n_resources; i++)
		free(names[i].indexes);
	free(names);
	return r;
}

int extres_config_check_env(const struct extres_config *config,
			    const char *const *defaults, struct extres_err *err)
{
	/* Only the message's file, the error and the (read-only) config of
	 * a loader are used past loading. */
	struct loader l = { .file = config->path,
			    .err = err,
			    .config = (struct extres_config *)config };

	return extres_cfg_check_env_vars(&l, defaults);
}
