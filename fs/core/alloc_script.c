/* SPDX-License-Identifier: MIT */
/*
 * A script that coordinates by itself: Flink's coordination flags in the
 * script driver's discovery-script.args, and the file it then uses.
 */
#include "core/alloc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/text.h"

static const char *const coordination_flags[] = { "--enable-coordination-mode",
						  "--enable-coordination" };

/* 1 + the index in coordination_flags of the flag s[0..len), or 0. */
static int is_coordination_flag(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(coordination_flags); i++)
		if (strlen(coordination_flags[i]) == len &&
		    memcmp(coordination_flags[i], s, len) == 0)
			return (int)i + 1;
	return 0;
}

static int words_have_flag(const char *s)
{
	const char *end = s + strlen(s), *w;
	size_t len;
	int f;

	while (extres_next_word(&s, end, &w, &len))
		if ((f = is_coordination_flag(w, len)))
			return f;
	return 0;
}

int extres_alloc_script_flag(const struct extres_resource_config *res)
{
	const struct extres_param *args;
	uint32_t i;

	if (!res->driver || strcmp(res->driver, "script") != 0)
		return 0;
	args = extres_param_get(res->params, "discovery-script.args");
	if (!args)
		return 0;
	if (args->kind == EXTRES_PARAM_SCALAR)
		return args->value ? words_have_flag(args->value) : 0;
	if (args->kind != EXTRES_PARAM_SEQUENCE)
		return 0;
	/* Each item is one argument, passed as it is. */
	for (i = 0; i < args->count; i++) {
		const struct extres_param *item = &args->items[i];
		int f;

		if (item->kind == EXTRES_PARAM_SCALAR && item->value &&
		    (f = is_coordination_flag(item->value,
					      strlen(item->value))))
			return f;
	}
	return 0;
}

int extres_alloc_script_coordinates(const struct extres_resource_config *res)
{
	return extres_alloc_script_flag(res) != 0;
}

#define FLINK_COORDINATION_FILE "/var/tmp/flink-gpu-coordination"

char *extres_alloc_script_file(const struct extres_resource_config *res)
{
	const struct extres_param *args =
		extres_param_get(res->params, "discovery-script.args");
	static const char flag[] = "--coordination-file";
	const char *s, *w;
	size_t len;
	uint32_t i;

	if (args && args->kind == EXTRES_PARAM_SEQUENCE) {
		for (i = 0; i + 1 < args->count; i++)
			if (args->items[i].kind == EXTRES_PARAM_SCALAR &&
			    args->items[i].value &&
			    strcmp(args->items[i].value, flag) == 0 &&
			    args->items[i + 1].kind == EXTRES_PARAM_SCALAR &&
			    args->items[i + 1].value)
				return strdup(args->items[i + 1].value);
	} else if (args && args->kind == EXTRES_PARAM_SCALAR && args->value) {
		int after_flag = 0;

		for (s = args->value;
		     extres_next_word(&s, s + strlen(s), &w, &len);) {
			if (after_flag)
				return strndup(w, len);
			after_flag = len == sizeof(flag) - 1 &&
				     memcmp(w, flag, len) == 0;
		}
	}
	return strdup(FLINK_COORDINATION_FILE);
}

int extres_alloc_describe(const struct extres_resource_config *res, char **ret)
{
	int flag = extres_alloc_script_flag(res), n;
	const char *unused = NULL;
	char *file;

	if (flag) {
		file = extres_alloc_script_file(res);
		if (!file)
			return -ENOMEM;
		if (res->coordination_file &&
		    strcmp(res->coordination_file, file) != 0)
			unused = res->coordination_file;
		n = asprintf(
			ret,
			"the discovery script is asked to record its devices in %s (%s); extresd records any it did not%s%s%s",
			file, coordination_flags[flag - 1],
			unused ? "; coordination-file " : "",
			unused ? unused : "", unused ? " is not used" : "");
		free(file);
	} else if (res->coordination_file) {
		n = asprintf(ret, "extresd records its devices in %s",
			     res->coordination_file);
	} else {
		n = asprintf(
			ret,
			"none: no coordination-file, so other processes on this host may take the same devices");
	}
	return n < 0 ? -ENOMEM : 0;
}
