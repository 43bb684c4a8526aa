/* SPDX-License-Identifier: MIT */
/* Flink's driver factory classes that extres stands in for: the driver
 * each one means, and the discovery script it runs when none is configured,
 * made a param. */
#include "config/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "extres_build.h"
#include "base/fileio.h"
#include "base/macro.h"

/* The param for the script, as Flink's script-based drivers name it. */
#define SCRIPT_PARAM "discovery-script.path"

/*
 * A factory class and what it stands for. The driver and the scripts are
 * named by the build (extres_build.h), where the drivers and the shipped
 * scripts are listed, so that the config layer names none of them.
 */
struct factory {
	const char *class_name;
	const char *driver;
	/* The default Flink gives the script, relative to FLINK_HOME. */
	const char *flink_script;
	/* extres' own script of the same contract, in its script dir. */
	const char *shipped_script;
};

static const struct factory factories[] = {
	{ "org.apache.flink.externalresource.gpu.GPUDriverFactory",
	  EXTRES_FLINK_GPU_DRIVER, EXTRES_FLINK_GPU_SCRIPT,
	  EXTRES_FLINK_GPU_SCRIPT_SHIPPED },
	{ "org.apache.flink.externalresource.gpu.GPUDriver",
	  EXTRES_FLINK_GPU_DRIVER, EXTRES_FLINK_GPU_SCRIPT,
	  EXTRES_FLINK_GPU_SCRIPT_SHIPPED },
};

/*
 * The shipped script `name`: beside the running program in a build tree,
 * as the driver modules are, else where it is installed. *ret is malloc'd.
 */
static int shipped_script(const char *name, char **ret)
{
	char *dir = NULL;
	struct stat st;
	int r;

	r = extres_exe_sibling("scripts", &dir);
	if (r < 0)
		return r;
	if (dir && asprintf(ret, "%s/%s", dir, name) >= 0) {
		free(dir);
		if (stat(*ret, &st) == 0)
			return 0;
		free(*ret);
	} else {
		free(dir);
	}
	if (asprintf(ret, "%s/%s", EXTRES_SCRIPT_DIR, name) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * A factory class without discovery-script.path runs Flink's default
 * script under FLINK_HOME. Where Flink is installed, run that one, as Flink
 * would; elsewhere extres' own, which takes the same arguments. The path is
 * made a param, as if configured at the factory class's line, so that the
 * driver needs no default of its own; the choice and its reason are kept
 * for extresctl check.
 */
static int default_script(struct loader *l, struct extres_resource_config *res,
			  const struct extres_flat *at,
			  const struct factory *fac)
{
	const char *home = getenv("FLINK_HOME");
	struct extres_param member = {
		.kind = EXTRES_PARAM_SCALAR,
		.line = extres_cfg_value_line(at),
		.column = extres_cfg_value_column(at),
	};
	char *path = NULL, *flink = NULL, *why = NULL;
	struct stat st;
	int r = 0;

	if (extres_param_get(res->params, SCRIPT_PARAM))
		return 0;
	if (home && *home) {
		/* Absolute, or the driver would resolve it against FLINK_HOME
		 * a second time. */
		flink = extres_cfg_resolve(home, fac->flink_script);
		if (flink && !extres_cfg_is_absolute(flink)) {
			path = realpath(flink, NULL);
		} else if (flink && stat(flink, &st) == 0) {
			path = flink;
			flink = NULL;
		}
		if (!flink && !path)
			goto oom;
	}
	if (path) {
		why = strdup("Flink's default under FLINK_HOME");
	} else {
		r = shipped_script(fac->shipped_script, &path);
		if (r < 0)
			goto oom;
		if (asprintf(&why, "the script shipped with extres; %s%s",
			     flink ? "there is no " : "FLINK_HOME is not set",
			     flink ? flink : "") < 0)
			why = NULL;
	}
	if (!why || asprintf(&res->param_default, SCRIPT_PARAM ": %s (%s)",
			     path, why) < 0) {
		res->param_default = NULL;
		goto oom;
	}
	member.key = strdup(SCRIPT_PARAM);
	member.value = path;
	if (!member.key || extres_param_append(res->params, &member) < 0)
		goto oom;
	path = NULL;
	goto out;
oom:
	free((char *)member.key);
	r = extres_cfg_oom(l);
out:
	free(path);
	free(flink);
	free(why);
	return r;
}

int extres_cfg_factory_class(struct loader *l,
			     struct extres_resource_config *res,
			     const struct extres_flat *at,
			     const char *class_name, const char **ret_driver)
{
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(factories); i++) {
		if (strcmp(class_name, factories[i].class_name) != 0)
			continue;
		r = default_script(l, res, at, &factories[i]);
		if (r == 0)
			*ret_driver = factories[i].driver;
		return r;
	}
	return -ENOENT;
}
