/* SPDX-License-Identifier: MIT */
/*
 * The contents of the mount's hidden views, as pure functions of the
 * allocated resources: no FUSE, no files. The daemon puts the text under
 * /run/extres/.meta/ and rebuilds it on reload.
 *
 * Each function takes the resources in configuration order and returns 0
 * with *ret_text (malloc'd, NUL-terminated, for free()) and *ret_len (its
 * length without the NUL), or a negative errno with both untouched:
 *
 *   -ENOMEM  out of memory
 *   -EINVAL  (extres_view_env only) an env_var that is not a shell
 *            identifier; the config loader rules this out
 *
 * `res` may be NULL when n is 0. Thread-safe: nothing is shared.
 */
#ifndef EXTRES_VIEWS_H
#define EXTRES_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "config/amount.h"
#include "host/driver_info.h"
#include "host/infos.h"

struct extres_view_resource {
	const char *name; /* the resource name, as in the mount */
	const char *driver; /* as configured: a module name or path */
	/* As configured (struct extres_resource_config.env_var): NULL = the
	 * driver's default, "" = none. config.h names the variables. */
	const char *env_var;
	uint64_t amount; /* the number of devices taken */
	/* As configured (config/amount.h): a range or `all` adds
	 * "amount-form" to .meta/extres.json. */
	struct extres_amount configured;
	const struct extres_info *infos; /* allocated, in allocation order */
	size_t n_infos;
	/* What the driver declares (extres_allocation.driver): its default
	 * variable and the property that fills it; NULL = nothing. */
	const struct extres_driver_info *driver_info;
};

/*
 * .meta/env: shell code to source (`. /run/extres/.meta/env`), one line per
 * variable, each resource's lines in turn:
 *
 *   export EXTRES_GPU_INDEXES='0,1'
 *   export GPU_DEVICES='GPU-5e1b...,GPU-9a0c...'
 *
 * `export`, so that the programs a sourcing shell starts see them. Every
 * value is in single quotes, safe or not, with each ' written as '\'' ; the
 * text ends with a newline (and is empty when there are no resources).
 *
 * EXTRES_<NAME>_INDEXES (the name as extres_env_indexes_var() makes it):
 * the infos' `index` values joined by ','. An info without `index` adds
 * nothing; no infos give ''.
 *
 * The device variable (extres_env_var(): configured, or the driver's
 * extres_driver_ops.env_var), when there is one, holds the devices in the
 * form that survives renumbering where the driver declares one
 * (env_property, written in env_form) and every info has it; else the
 * indexes:
 *
 *   EXTRES_ENV_FORM_AS_IS   the property's value as it is (a `uuid`)
 *   EXTRES_ENV_FORM_HEX_ID  the property's "0x..." value as the driver's
 *                           env_id_prefix and 16 lower-case hex digits,
 *                           when every info has a non-zero one
 *   no env_property         the indexes
 *
 * A driver without env_var sets no variable unless one is configured.
 * After a device variable come the driver's fixed variables
 * (extres_driver_ops.env_fixed), each once, e.g. an order that makes the
 * device runtime number devices as the driver does.
 *
 * (the indexes as in EXTRES_<NAME>_INDEXES). No infos give ''.
 */
int extres_view_env(const struct extres_view_resource *res, size_t n,
		    char **ret_text, size_t *ret_len);

/* The device variable of `r` in .meta/env (configured, else the driver's
 * default), or NULL when it has none. Points into `r`. */
const char *extres_view_device_var(const struct extres_view_resource *r);

/* The form r's device variable takes, chosen over all of r's infos as
 * .meta/env chooses it: the driver's (env_property) when every info has
 * it, else NULL for indexes. A scan of every info: ask once per resource. */
const struct extres_driver_info *
extres_view_device_form(const struct extres_view_resource *r);

/*
 * The values .meta/env would give r's variables if r held only its infos
 * [first, first + count), unquoted: *ret_indexes for EXTRES_<NAME>_INDEXES
 * and *ret_devices for the device variable, or NULL when there is none.
 * `form` is extres_view_device_form(r), so that a device reads the same
 * here and there. Both malloc'd; 0, or -ENOMEM with both untouched.
 */
int extres_view_env_values(const struct extres_view_resource *r,
			   const struct extres_driver_info *form, size_t first,
			   size_t count, char **ret_indexes,
			   char **ret_devices);

/*
 * .meta/resources.json: Spark's resources file (a list of Spark's
 * ResourceAllocation), one entry per resource for each of Spark's
 * components in turn, spark.executor, spark.driver, spark.worker (Spark
 * keeps the entries whose componentName is the reader's, so that
 * spark.executor.resourcesFile, spark.driver.resourcesFile and
 * spark.worker.resourcesFile can all name this file), addresses being the
 * infos' `index` values in allocation order (an info without `index` adds
 * nothing):
 *
 *   [{"id": {"componentName": "spark.executor", "resourceName": "gpu"},
 *     "addresses": ["0", "1"]},
 *    {"id": {"componentName": "spark.driver", "resourceName": "gpu"}, ...},
 *    {"id": {"componentName": "spark.worker", "resourceName": "gpu"}, ...}]
 *
 * on one line, in the JSON writer's layout (json.h), ending in "\n".
 */
int extres_view_spark(const struct extres_view_resource *res, size_t n,
		      char **ret_text, size_t *ret_len);

/*
 * .meta/extres.json: everything in the mount in one document, in the one
 * shape views/json_view.h describes, with "infos" and no "candidates".
 */
int extres_view_json(const struct extres_view_resource *res, size_t n,
		     char **ret_text, size_t *ret_len);

struct extres_holders;

/* The same with the "holders" array (views/holders.h) when `holders` is not
 * NULL, and "pool": true (with the number of devices served as "amount")
 * for each resource i where pools[i] is non-zero (`pools` may be NULL):
 * what the daemon serves. */
int extres_view_json_holders(const struct extres_view_resource *res, size_t n,
			     const unsigned char *pools,
			     const struct extres_holders *holders,
			     char **ret_text, size_t *ret_len);

#endif
