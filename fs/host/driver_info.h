/* SPDX-License-Identifier: MIT */
/*
 * What a driver module says about itself through the ABI, so that the core
 * never guesses from a driver's name: the device variable of .meta/env and
 * the property that fills it, the properties that identify a device across
 * refreshes, and the coordination file a driver used by itself. Plain data,
 * copied out of the module so that it outlives it.
 */
#ifndef EXTRES_DRIVER_INFO_H
#define EXTRES_DRIVER_INFO_H

#include <stdint.h>

#include <extres/driver.h>

#include "base/err.h"
#include "config/config.h"

struct extres_info;

/* The longest extres_driver_ops.env_id_prefix a module may declare. */
#define EXTRES_ENV_ID_PREFIX_MAX 15

/* A copied struct extres_metric_label: property NULL for the node's name,
 * prefix never NULL ("" for none). */
struct extres_driver_label {
	char *label;
	char *property;
	char *prefix;
};

struct extres_driver_info {
	char *env_var; /* the default device variable, or NULL */
	char *env_property; /* the property that fills it, or NULL: `index` */
	/* EXTRES_ENV_FORM_AS_IS or _HEX_ID (a module's GPU_HEX_ID is read
	 * as HEX_ID with the prefix "GPU-"). */
	uint32_t env_form;
	char *env_id_prefix; /* written before HEX_ID's digits, or NULL */
	/* "NAME=VALUE" set beside the device variable (checked at load),
	 * NULL-terminated, or NULL for none. */
	char **env_fixed;
	/* Nodes every device needs besides its own (checked at load),
	 * NULL-terminated, or NULL for none. */
	char **control_nodes;
	/* Where the vendor's generated CDI spec may be (absolute paths,
	 * NULL-terminated), or NULL; the command that makes one, or NULL. */
	char **cdi_base_specs;
	char *cdi_base_hint;
	/* Properties besides `device` that name nodes a device needs,
	 * NULL-terminated, or NULL for none. */
	char **node_keys;
	char **identity_keys; /* NULL-terminated, or NULL for none */
	/* The driver took its devices through this coordination file by
	 * itself (extres_host.coordinated_by), or NULL; `coord_how` says
	 * what made it, for messages. */
	char *coord_file;
	char *coord_how;
	/* extres_driver_ops.metric_labels, checked; n_labels 0: none. */
	struct extres_driver_label *labels;
	size_t n_labels;
};

/* 0 if `labels` (a module's metric_labels, NULL: none) keeps the rules of
 * struct extres_metric_label; else -ELIBBAD with `err` naming the module
 * at `path` and the entry. */
int extres_driver_info_check_labels(const struct extres_metric_label *labels,
				    const char *path, struct extres_err *err);

/* Copy the static facts of a checked, size-normalised ops table. 0 or
 * -ENOMEM, with *ret left empty on failure. */
int extres_driver_info_from_ops(const struct extres_driver_ops *ops,
				struct extres_driver_info *ret);

/* Deep copy; 0 or -ENOMEM, with *ret left empty on failure. */
int extres_driver_info_copy(const struct extres_driver_info *src,
			    struct extres_driver_info *ret);

/* Record the driver's own coordination; 0, -EINVAL (no file) or -ENOMEM. */
int extres_driver_info_set_coordination(struct extres_driver_info *info,
					const char *file, const char *how);

/* Free the strings and zero *info. Accepts an empty one. */
void extres_driver_info_clear(struct extres_driver_info *info);

/* The vendor's CDI spec a resource's spec builds on: `configured` (its
 * cdi.base-spec) when set, else the first of info's cdi_base_specs that
 * exists, else NULL, with *ret_missing 1 when the driver names some. */
const char *extres_driver_info_cdi_base(const struct extres_driver_info *info,
					const char *configured,
					int *ret_missing);

/* 1 if `fresh` may be the device `held` was: every identity property that
 * both carry agrees (`info` NULL: no identity properties). */
int extres_driver_info_same_device(const struct extres_driver_info *info,
				   const struct extres_info *held,
				   const struct extres_info *fresh);

/*
 * The env-var rules across resources (extres_config_check_env()) with the
 * drivers' defaults: `drivers[i]` is what resource i's driver declares, or
 * NULL when not known. 0, or a negative errno with `err` set.
 */
int extres_driver_info_check_env(
	const struct extres_config *config,
	const struct extres_driver_info *const *drivers,
	struct extres_err *err);

#endif
