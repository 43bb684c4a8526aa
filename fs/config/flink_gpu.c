/* SPDX-License-Identifier: MIT */
/* Flink's GPU driver factory without discovery-script.path: the default
 * script, made a param. */
#include "config/loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "extres_build.h"
#include "base/fileio.h"

/* Its param for the script, and the default Flink gives it (relative to
 * FLINK_HOME); extres ships a script of the same name and arguments. */
#define GPU_SCRIPT_PARAM "discovery-script.path"
#define GPU_SCRIPT_FLINK "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"
#define GPU_SCRIPT_SHIPPED "nvidia-gpu-discovery.sh"

/*
 * The shipped NVIDIA script: beside the running program in a build tree, as
 * the driver modules are, else where it is installed. *ret is malloc'd.
 */
static int shipped_gpu_script(char **ret)
{
	char *dir = NULL;
	struct stat st;
	int r;

	r = extres_exe_sibling("scripts", &dir);
	if (r < 0)
		return r;
	if (dir && asprintf(ret, "%s/" GPU_SCRIPT_SHIPPED, dir) >= 0) {
		free(dir);
		if (stat(*ret, &st) == 0)
			return 0;
		free(*ret);
	} else {
		free(dir);
	}
	*ret = strdup(EXTRES_SCRIPT_DIR "/" GPU_SCRIPT_SHIPPED);
	return *ret ? 0 : -ENOMEM;
}

/*
 * Flink's GPU driver without discovery-script.path runs Flink's NVIDIA
 * script under FLINK_HOME. Where Flink is installed, run that one, as Flink
 * would; elsewhere extres' own, which takes the same arguments. The path is
 * made a param, as if configured at the factory class's line, so that the
 * driver needs no default of its own; the choice and its reason are kept
 * for extresctl check.
 */
int extres_cfg_default_gpu_script(struct loader *l,
				  struct extres_resource_config *res,
				  const struct extres_flat *at)
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

	if (extres_param_get(res->params, GPU_SCRIPT_PARAM))
		return 0;
	if (home && *home) {
		/* Absolute, or the driver would resolve it against FLINK_HOME
		 * a second time. */
		flink = extres_cfg_resolve(home, GPU_SCRIPT_FLINK);
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
		r = shipped_gpu_script(&path);
		if (r < 0)
			goto oom;
		if (asprintf(&why, "the script shipped with extres; %s%s",
			     flink ? "there is no " : "FLINK_HOME is not set",
			     flink ? flink : "") < 0)
			why = NULL;
	}
	if (!why || asprintf(&res->param_default, GPU_SCRIPT_PARAM ": %s (%s)",
			     path, why) < 0) {
		res->param_default = NULL;
		goto oom;
	}
	member.key = strdup(GPU_SCRIPT_PARAM);
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
