/* SPDX-License-Identifier: MIT */
/*
 * Inside the config layer: the state of one load, shared by the steps that
 * read the file (config.c drives them in order). Not for other layers.
 *
 * Every step returns 0 or a negative errno; on failure l->err says why,
 * starting "file:line:col: ". Warnings collect in the loader and reach the
 * config, in file order, only when the load succeeds.
 */
#ifndef EXTRES_CONFIG_LOADER_H
#define EXTRES_CONFIG_LOADER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/err.h"
#include "config/config.h"
#include "config/yaml_doc.h"
#include "config/yaml_load.h"

#define LIST_KEY "external-resources"
#define OLD_LIST_KEY "external-resource.list"
#define RESOURCE_PREFIX "external-resource."
#define EXTRES_PREFIX "extres."

enum slot {
	SLOT_AMOUNT,
	SLOT_DRIVER,
	SLOT_FACTORY_CLASS,
	SLOT_DRIVER_CLASS,
	SLOT_KUBERNETES,
	SLOT_KUBERNETES_OLD,
	SLOT_YARN,
	SLOT_YARN_OLD,
	SLOT_COORD_FILE,
	SLOT_COORD_KEY,
	SLOT_ENV_VAR,
	SLOT_REFRESH,
	SLOT_POOL,
	SLOT_CDI_KIND,
	SLOT_CDI_BASE,
	SLOT_REPLICAS,
	SLOT_SHARING,
	SLOT_MPS_PIPE,
	SLOT_MPS_LOG,
	N_SLOTS,
};

/* The keys under external-resource.<name>. other than param.*, and what
 * each one's value must be, for messages (keys.c). */
extern const char *const extres_cfg_slot_keys[N_SLOTS];
extern const char *const extres_cfg_slot_expected[N_SLOTS];
#define LIST_EXPECTED "a list of resource names"
#define MOUNTPOINT_EXPECTED "a path"
#define LOCK_TIMEOUT_EXPECTED "a number of seconds"
#define COORD_GROUP_KEY EXTRES_PREFIX "coordination-group"
#define TRANSPORT_KEY EXTRES_PREFIX "transport"
#define TRANSPORT_EXPECTED "auto, uring or dev"
#define COORD_GROUP_EXPECTED "a group name"

struct resource_keys {
	const struct extres_flat *slot[N_SLOTS];
};

/* A key under external-resource.<name>. for a name that is not listed. */
struct unlisted {
	const char *name; /* points into the flat key */
	size_t len;
	size_t seq; /* file order */
	uint32_t line, column;
};

struct warning {
	uint32_t line, column;
	size_t seq;
	char *text;
};

struct loader {
	const char *file; /* as the caller named it, for messages */
	struct extres_err *err;
	struct extres_yaml yaml;
	struct extres_flat_list flat;
	const char *list_key; /* the key the resources were listed under */
	const struct extres_flat *mountpoint;
	const struct extres_flat *cdi_spec_dir;
	const struct extres_flat *lock_timeout;
	const struct extres_flat *coordination_group;
	const struct extres_flat *transport;
	/* Why another user could modify the file (config->untrusted), or
	 * NULL: such a file may not widen whom we trust. */
	const char *untrusted;
	struct resource_keys *keys; /* parallel to config->resources */
	struct unlisted *unlisted;
	size_t n_unlisted;
	struct warning *warnings;
	size_t n_warnings;
	struct extres_config *config;
};

/*
 * Room for one more item in an array of `n`, doubling at powers of two so
 * that the capacity need not be stored. NULL (array intact) without memory.
 */
static inline void *extres_cfg_grow(void *array, size_t n, size_t size)
{
	if (n & (n - 1))
		return array;
	return realloc(array, (n ? n * 2 : 1) * size);
}

static inline int extres_cfg_is_absolute(const char *path)
{
	return path[0] == '/';
}

/* `path` when absolute, else `dir`/`path`; malloc'd, NULL without memory. */
char *extres_cfg_resolve(const char *dir, const char *path);

/* ---- messages (message.c) ---- */

/* Sets l->err to "file:line:col: " and the message, control characters
 * escaped; returns -errnum. */
int extres_cfg_fail(struct loader *l, int errnum, uint32_t line,
		    uint32_t column, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int extres_cfg_oom(struct loader *l);
/* Adds a warning at line:column; 0 or -ENOMEM (then l->err is set). */
int extres_cfg_warn(struct loader *l, uint32_t line, uint32_t column,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int extres_cfg_warn_unknown(struct loader *l, const struct extres_flat *e);
/* The same, adding "did you mean NEAR?" when `near` (a whole key) is not
 * NULL. */
int extres_cfg_warn_unknown_near(struct loader *l, const struct extres_flat *e,
				 const char *near);
/*
 * The known key nearest to `key`, an unknown one, as a typo of it (see
 * extres_nearest()): a key of its resource, or of extres.; in *ret (free
 * it), NULL when none is near. 0 or -ENOMEM.
 */
int extres_cfg_near_key(const struct loader *l, const char *key, char **ret);
/* The key of resource `name` that looks like a typo of its `slot` key (one
 * of extres_cfg_slot_keys, the very pointer), or NULL. */
const struct extres_flat *
extres_cfg_typo_of(const struct loader *l, const char *name, const char *slot);
uint32_t extres_cfg_value_line(const struct extres_flat *e);
uint32_t extres_cfg_value_column(const struct extres_flat *e);
/* A key that takes one value, given a mapping (flattened into keys of its
 * own, which would leave the key itself unset): an error. */
int extres_cfg_wrong_kind(struct loader *l, const struct extres_flat *e,
			  const char *expected);
/* Refuses a section named `key`. */
int extres_cfg_refuse_section(struct loader *l, const char *key,
			      const char *expected);
/* The text of a key that takes one value (`expected`, for messages), in
 * *ret_text; NULL when the key is absent, empty or null (not set). */
int extres_cfg_scalar_of(struct loader *l, const struct extres_flat *e,
			 const char *expected, const char **ret_text);
/* Of a newer key and its older spelling, the text of the one in effect;
 * warns when both are set. */
int extres_cfg_pick(struct loader *l, const struct extres_flat *newer,
		    const struct extres_flat *older, const char *expected,
		    const char **ret_text,
		    const struct extres_flat **ret_entry);
/* Hand the warnings, in file order, to the config. */
int extres_cfg_move_warnings(struct loader *l);

/* ---- the steps, in the order config.c runs them ---- */

/* keys.c: marks all but the last of a repeated key superseded. */
int extres_cfg_mark_repeats(struct loader *l);
/* keys.c: the entry of `key` in effect, or NULL. */
const struct extres_flat *extres_cfg_find_key(const struct loader *l,
					      const char *key);
/* resource_list.c: the listed resources, into l->config. */
int extres_cfg_read_list(struct loader *l);
/* keys.c: each key to its resource's slot or params, or a warning. */
int extres_cfg_sort_keys(struct loader *l);
/* resource.c: the settings of resource `index` from its keys. */
int extres_cfg_finish_resource(struct loader *l, size_t index);
/* sharing.c: replicas, sharing-strategy and mps.* of `res`. */
int extres_cfg_set_sharing(struct loader *l, struct extres_resource_config *res,
			   const struct resource_keys *keys);
/* factory_class.c: the driver Flink's driver factory `class_name` (at
 * key `at`) stands for into *ret_driver (static), with its default
 * discovery-script.path made a param of `res` when none is set: 0,
 * -ENOENT (an unknown class, *ret_driver untouched) or as
 * extres_cfg_oom(). */
int extres_cfg_factory_class(struct loader *l,
			     struct extres_resource_config *res,
			     const struct extres_flat *at,
			     const char *class_name, const char **ret_driver);
/* env_vars.c: no two resources set one variable. */
int extres_cfg_check_env_vars(struct loader *l, const char *const *defaults);
/* keys.c: one warning per resource configured but not listed. */
int extres_cfg_warn_unlisted(struct loader *l);
/* resource.c: *ret = a copy of `text`, or NULL for NULL. */
int extres_cfg_copy_opt(struct loader *l, const char *text, char **ret);

#endif
