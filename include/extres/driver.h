/* SPDX-License-Identifier: MIT */
/*
 * extres driver ABI: the whole contract between extresd and a driver module.
 *
 * A driver turns the `external-resource.<name>.param.*` keys of one resource
 * into a list of candidate infos, each a set of property key -> string value.
 * The core (not the driver) chooses `amount` of the candidates, records them in
 * the coordination file and serves them as files; the driver never sees the
 * file system.
 *
 * A module is a shared object loaded with dlopen(RTLD_NOW | RTLD_LOCAL). It
 * exports exactly one symbol, EXTRES_DRIVER_ENTRY_SYMBOL, a function returning
 * a pointer to one `static const struct extres_driver_ops`. Build modules with
 * -fvisibility=hidden and mark the entry point with EXTRES_DRIVER_EXPORT.
 *
 * Lifecycle, per configured resource that names the driver:
 *
 *     entry()                 once per module, right after dlopen
 *     open(host, params)      once per resource; returns a driver handle
 *     discover(handle, sink)  one or more times (start-up, dry runs, reloads)
 *     close(handle)           once, always, if open succeeded
 *
 * All callbacks are called from one thread at a time per handle: start-up and
 * reload work runs on the daemon's control thread, never inside a file-system
 * request. A callback may block (run a program, read sysfs) but should bound
 * how long; the core does not interrupt it.
 *
 * Compatibility: EXTRES_DRIVER_ABI_VERSION changes only when an existing member
 * changes meaning. New members are only ever appended to the structs below; a
 * struct carries its own size so that both sides use only what the other has.
 * All ABI structs use fixed-width types only (no bool, enum or off_t).
 */
#ifndef EXTRES_DRIVER_H
#define EXTRES_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EXTRES_DRIVER_ABI_VERSION 1u

/* Name of the one symbol a module exports; see extres_driver_entry_fn. */
#define EXTRES_DRIVER_ENTRY_SYMBOL "extres_driver_entry"

#define EXTRES_DRIVER_EXPORT __attribute__((visibility("default")))

/* Log levels for extres_host.log, the same numbers as syslog's. */
#define EXTRES_LOG_ERR 3
#define EXTRES_LOG_WARNING 4
#define EXTRES_LOG_NOTICE 5
#define EXTRES_LOG_INFO 6
#define EXTRES_LOG_DEBUG 7

/* Kinds of configuration value (extres_param.kind). */
#define EXTRES_PARAM_SCALAR 1u
#define EXTRES_PARAM_SEQUENCE 2u
#define EXTRES_PARAM_MAPPING 3u

/*
 * A configuration value, as read from YAML. The root handed to open() is a
 * MAPPING whose members are the resource's parameters with the
 * `external-resource.<name>.param.` prefix removed, in file order. Nested
 * mappings are flattened into dotted keys, exactly as for every other key, so
 * `param: {discovery-script: {path: x}}` and `param.discovery-script.path: x`
 * both arrive as the member "discovery-script.path". Inside a sequence nothing
 * is flattened: a sequence of mappings arrives as written (the static
 * driver's `devices`).
 *
 * The whole tree is owned by the core and stays valid from open() until
 * close() returns. Strings are NUL-terminated UTF-8.
 */
struct extres_param {
	uint32_t kind;   /* EXTRES_PARAM_* */
	uint32_t count;  /* number of items (SEQUENCE, MAPPING); 0 for SCALAR */
	const char *key; /* member name inside a MAPPING; NULL otherwise */
	const char *value; /* SCALAR text; NULL otherwise */
	const struct extres_param *items; /* `count` children */
	uint32_t line;   /* 1-based position in the config file, for messages */
	uint32_t column;
};

/* Member `key` of a MAPPING, or NULL when absent or `map` is not a mapping. */
static inline const struct extres_param *
extres_param_get(const struct extres_param *map, const char *key)
{
	uint32_t i;

	if (!map || map->kind != EXTRES_PARAM_MAPPING)
		return NULL;
	/* The last one wins, as for any repeated key in the config. */
	for (i = map->count; i-- > 0;) {
		const char *k = map->items[i].key, *p = key;

		while (*k && *k == *p)
			k++, p++;
		if (*k == '\0' && *p == '\0')
			return &map->items[i];
	}
	return NULL;
}

/* The scalar text of member `key`, or NULL if absent or not a scalar. */
static inline const char *
extres_param_scalar(const struct extres_param *map, const char *key)
{
	const struct extres_param *p = extres_param_get(map, key);

	return p && p->kind == EXTRES_PARAM_SCALAR ? p->value : NULL;
}

/*
 * What the core offers a driver. Valid from open() until close() returns;
 * the driver must not modify it.
 */
struct extres_host {
	uint32_t abi_version; /* EXTRES_DRIVER_ABI_VERSION of the core */
	uint32_t struct_size; /* sizeof(struct extres_host) in the core */
	const char *resource;    /* resource name, e.g. "gpu" */
	const char *config_path; /* absolute path of the config file */
	const char *config_dir;  /* its directory, for relative paths */
	uint64_t amount;         /* external-resource.<name>.amount */

	/*
	 * Log a message; the core prefixes it with the resource and driver
	 * names. Use it for warnings a driver can carry on after. Any thread.
	 */
	void (*log)(const struct extres_host *host, int32_t level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

	/*
	 * Say why the callback that is about to fail failed. The core keeps the
	 * last message per call and shows it, prefixed with the resource and
	 * driver, in the start-up error. Returns -EINVAL for convenience, so a
	 * driver may write `return host->error(host, "...")` and then return
	 * a more exact errno if it has one.
	 */
	int32_t (*error)(const struct extres_host *host, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));

	/* Core-private state; do not touch. */
	void *core;
};

/*
 * Where discover() puts its candidates. Each info starts with begin_info()
 * and collects properties with add_property() until the next begin_info()
 * or the end of discover(). The core copies keys and values; the driver keeps
 * ownership of its strings.
 *
 * Keys must be non-empty, must not contain '/', must not start with '.', and
 * must be unique within an info; values must not contain NUL. The core
 * rejects the whole discovery (with a message naming the driver) otherwise.
 * Both return 0 or a negative errno (-ENOMEM, -EINVAL); on failure discover()
 * should return that value.
 */
struct extres_sink {
	uint32_t struct_size;
	int32_t (*begin_info)(struct extres_sink *sink);
	int32_t (*add_property)(struct extres_sink *sink, const char *key,
				const char *value);
	void *core;
};

struct extres_driver_ops {
	/* Must be EXTRES_DRIVER_ABI_VERSION and sizeof(struct extres_driver_ops)
	 * as the module was compiled. */
	uint32_t abi_version;
	uint32_t struct_size;

	/* The driver's name, for messages, e.g. "script". */
	const char *name;

	/*
	 * Validate `params` and prepare. Called on the control thread. On success
	 * store a handle (may be NULL) in *ret_handle and return 0; on failure
	 * call host->error() and return a negative errno, leaving *ret_handle
	 * untouched and nothing to close. `host` and `params` stay valid until
	 * close(). Required.
	 */
	int32_t (*open)(const struct extres_host *host,
			const struct extres_param *params, void **ret_handle);

	/*
	 * List the candidate infos, in the order the core should prefer them,
	 * into `sink`. Need not honour host->amount (the core chooses), but may
	 * (a Flink discovery script does). Returns 0, or a negative errno after
	 * calling host->error(). Required.
	 */
	int32_t (*discover)(void *handle, struct extres_sink *sink);

	/* Release everything open() made. Always called once after a
	 * successful open(). Required. */
	void (*close)(void *handle);
};

/* The type of the module's one exported function. It must return the same
 * pointer every time and do nothing else. */
typedef const struct extres_driver_ops *(*extres_driver_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* EXTRES_DRIVER_H */
