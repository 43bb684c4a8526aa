/* SPDX-License-Identifier: MIT */
/* A resource's sharing: how many leases may share one device, and how. */
#include "config/loader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

static int set_replicas(struct loader *l, struct extres_resource_config *res,
			const struct extres_flat *e)
{
	const char *text;
	uint64_t n;
	int r;

	res->replicas = 1;
	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_REPLICAS],
				 &text);
	if (r < 0 || !text)
		return r;
	if (extres_parse_dec(text, strlen(text), EXTRES_MAX_REPLICAS, &n) < 0 ||
	    n < 1)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; expected a whole number of shares per device from 1 to %d",
			e->key, text, EXTRES_MAX_REPLICAS);
	res->replicas = (unsigned)n;
	return 0;
}

static int set_strategy(struct loader *l, struct extres_resource_config *res,
			const struct extres_flat *e)
{
	const char *text;
	int r;

	r = extres_cfg_scalar_of(l, e, extres_cfg_slot_expected[SLOT_SHARING],
				 &text);
	if (r < 0 || !text)
		return r;
	if (strcmp(text, "time-slicing") == 0)
		res->sharing = EXTRES_SHARING_TIME_SLICING;
	else if (strcmp(text, "mps") == 0)
		res->sharing = EXTRES_SHARING_MPS;
	else
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; expected time-slicing or mps", e->key,
			text);
	return 0;
}

/* An MPS directory: absolute, for a program started anywhere. */
static int set_dir(struct loader *l, const struct extres_flat *e,
		   const char *fallback, char **ret)
{
	const char *text;
	int r;

	r = extres_cfg_scalar_of(l, e, "an absolute path", &text);
	if (r < 0)
		return r;
	if (text &&
	    (!extres_cfg_is_absolute(text) || strpbrk(text, "\n\t ") != NULL))
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; expected an absolute path without whitespace",
			e->key, text);
	return extres_cfg_copy_opt(l, text ? text : fallback, ret);
}

/* Keys that say something only with others: a warning each, naming why. */
static int warn_unused(struct loader *l,
		       const struct extres_resource_config *res,
		       const struct resource_keys *keys)
{
	static const enum slot mps[] = { SLOT_MPS_PIPE, SLOT_MPS_LOG };
	const struct extres_flat *e = keys->slot[SLOT_SHARING];
	size_t i;
	int r = 0;

	if (e && res->replicas < 2)
		r = extres_cfg_warn(l, e->line, e->column,
				    "%s is ignored: " RESOURCE_PREFIX
				    "%s.replicas is not above 1",
				    e->key, res->name);
	for (i = 0; r == 0 && i < 2; i++) {
		e = keys->slot[mps[i]];
		if (e && res->sharing != EXTRES_SHARING_MPS)
			r = extres_cfg_warn(l, e->line, e->column,
					    "%s is ignored: " RESOURCE_PREFIX
					    "%s.sharing-strategy is not mps",
					    e->key, res->name);
	}
	return r;
}

int extres_cfg_set_sharing(struct loader *l, struct extres_resource_config *res,
			   const struct resource_keys *keys)
{
	const struct extres_flat *rep = keys->slot[SLOT_REPLICAS];
	int r;

	r = set_replicas(l, res, rep);
	if (r == 0)
		r = set_strategy(l, res, keys->slot[SLOT_SHARING]);
	if (r == 0 && res->sharing == EXTRES_SHARING_MPS)
		r = set_dir(l, keys->slot[SLOT_MPS_PIPE],
			    EXTRES_MPS_PIPE_DEFAULT, &res->mps_pipe_dir);
	if (r == 0 && res->sharing == EXTRES_SHARING_MPS)
		r = set_dir(l, keys->slot[SLOT_MPS_LOG], EXTRES_MPS_LOG_DEFAULT,
			    &res->mps_log_dir);
	if (r < 0)
		return r;
	r = warn_unused(l, res, keys);
	if (r < 0)
		return r;
	/* Shares are leases, which are taken only through the file. */
	if (res->replicas > 1 && !res->coordination_file)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(rep),
			extres_cfg_value_column(rep),
			"%s is %u, but " RESOURCE_PREFIX
			"%s.coordination-file is not set: shares are leased through the coordination file",
			rep->key, res->replicas, res->name);
	return 0;
}
