/* SPDX-License-Identifier: MIT */
/* What a lease's command gets: the variables of .meta/env for its devices,
 * and the CPUs near them. */
#include "lease/lease.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/share.h"
#include "views/views.h"
#include "os/cpus.h"

void extres_lease_env_free(char **env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/*
 * One line of .meta/env, "export NAME='v'\''alue'\n", at *p: "NAME=value"
 * (malloc'd) into *ret and *p past the line. extres_view_env() writes
 * every line so (views.h); anything else is -EINVAL.
 */
static int unquote_line(const char **p, char **ret)
{
	static const char export[] = "export ";
	const char *s = *p, *eq;
	char *out, *o;

	if (strncmp(s, export, sizeof(export) - 1) != 0)
		return -EINVAL;
	s += sizeof(export) - 1;
	eq = strchr(s, '=');
	if (!eq || eq[1] != '\'')
		return -EINVAL;
	/* The value is never longer than its quoted form. */
	out = malloc(strlen(s) + 1);
	if (!out)
		return -ENOMEM;
	o = out;
	memcpy(o, s, (size_t)(eq - s + 1));
	o += eq - s + 1;
	s = eq + 2;
	for (;;) {
		if (*s == '\0')
			goto bad;
		if (*s != '\'') {
			*o++ = *s++;
			continue;
		}
		/* A quote ends the value, or starts '\'' (a quote in it). */
		if (strncmp(s, "'\\''", 4) == 0) {
			*o++ = '\'';
			s += 4;
			continue;
		}
		if (s[1] != '\n')
			goto bad;
		*o = '\0';
		*p = s + 2;
		*ret = out;
		return 0;
	}
bad:
	free(out);
	return -EINVAL;
}

int extres_lease_env(const struct extres_lease *l,
		     const struct extres_lease_want *wants, char ***ret)
{
	struct extres_view_resource *view = NULL;
	char *text = NULL, **env = NULL;
	const char *p;
	size_t i, len, lines = 0, n = 0;
	int r;

	view = calloc(l->n ? l->n : 1, sizeof(*view));
	if (!view)
		return -ENOMEM;
	for (i = 0; i < l->n; i++)
		view[i] = (struct extres_view_resource){
			.name = wants[i].res->name,
			.driver = wants[i].res->driver,
			.env_var = wants[i].res->env_var,
			.amount = wants[i].n,
			.infos = l->parts[i]->infos,
			.n_infos = l->parts[i]->n,
			.driver_info = &l->parts[i]->driver,
		};
	/* The one place that says what the variables hold. */
	r = extres_view_env(view, l->n, &text, &len);
	if (r < 0)
		goto out;
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	env = calloc(lines + 2 + l->n * EXTRES_SHARE_ENV_MAX, sizeof(*env));
	if (!env) {
		r = -ENOMEM;
		goto out;
	}
	for (p = text; *p && r == 0;) {
		r = unquote_line(&p, &env[n]);
		if (r == 0)
			n++;
	}
	for (i = 0; i < l->n && r == 0; i++) {
		size_t added = 0;

		if (l->parts[i]->share_n)
			r = extres_share_env(wants[i].res, l->parts[i], &env[n],
					     &added);
		n += added;
	}
	if (r == 0 && asprintf(&env[n], "EXTRES_LEASE=%s", l->id) < 0) {
		env[n] = NULL;
		r = -ENOMEM;
	}
	if (r == 0) {
		*ret = env;
		env = NULL;
	}
out:
	extres_lease_env_free(env);
	free(text);
	free(view);
	return r;
}

int extres_lease_local_cpus(const struct extres_lease *l, void *ret,
			    struct extres_err *err)
{
	cpu_set_t set;
	const char *v;
	size_t i, j;

	CPU_ZERO(&set);
	for (i = 0; i < l->n; i++) {
		const struct extres_allocation *a = l->parts[i];

		for (j = 0; j < a->n; j++) {
			v = extres_info_get(&a->infos[j], "local_cpulist");
			if (!v)
				return extres_err_set(
					err, ENOENT,
					"resource '%s': device %s %s has no local_cpulist property",
					a->resource, a->coordination_key,
					extres_info_get(&a->infos[j],
							a->coordination_key));
			if (extres_cpulist_parse(v, &set) < 0)
				return extres_err_set(
					err, EINVAL,
					"resource '%s': device %s %s has local_cpulist '%s', which is not a CPU list",
					a->resource, a->coordination_key,
					extres_info_get(&a->infos[j],
							a->coordination_key),
					v);
		}
	}
	memcpy(ret, &set, sizeof(set));
	return 0;
}
