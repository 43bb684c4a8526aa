/* SPDX-License-Identifier: MIT */
/*
 * extres driver ABI: the ops table a driver module exports and what the core
 * hands it. A driver turns one resource's `param.*` keys into candidate
 * infos (property key -> string value); the core chooses, records and serves
 * them. The contract (building and loading a module, lifecycle, threads,
 * ownership, errors, what the sink accepts, versioning) is written once, in
 * extres-driver(3) (man/extres-driver.3); the comments below are each
 * member's promise. examples/hello/ is a complete module to copy.
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

/* Mark the entry point, so that it stays visible under -fvisibility=hidden. */
#define EXTRES_DRIVER_EXPORT __attribute__((visibility("default")))

/* Log levels for extres_host.log, the same numbers as syslog's. */
#define EXTRES_LOG_ERR 3
#define EXTRES_LOG_WARNING 4
#define EXTRES_LOG_NOTICE 5
#define EXTRES_LOG_INFO 6
#define EXTRES_LOG_DEBUG 7

/* Forms of extres_driver_ops.env_form. */
/* The property's value, as it is. */
#define EXTRES_ENV_FORM_AS_IS 0u
/* What modules built before EXTRES_ENV_FORM_HEX_ID and env_id_prefix
 * declared for the one form they had: EXTRES_ENV_FORM_HEX_ID with the prefix
 * "GPU-". Still read so; a new module says EXTRES_ENV_FORM_HEX_ID. */
#define EXTRES_ENV_FORM_GPU_HEX_ID 1u
/* A hexadecimal "0x..." number (amdgpu's unique_id), written as
 * extres_driver_ops.env_id_prefix and 16 lower-case hex digits (amdgpu's
 * prefix "GPU-" makes the UUID its runtime's device variable takes). A
 * value that is not such a non-zero number counts as missing. */
#define EXTRES_ENV_FORM_HEX_ID 2u

/*
 * A label of the metric extres_device_info taken from a property, so that
 * the series joins a vendor exporter's series on that exporter's own label
 * names (extres_driver_ops.metric_labels).
 */
struct extres_metric_label {
	/* The label's name: [A-Za-z_][A-Za-z0-9_]*, not starting with "__",
	 * and none of the labels extres_device_info has of itself (resource,
	 * info, index, uuid, pci_bus_id, name). NULL ends the list. */
	const char *label;
	/* The property whose value the label takes; a device without it has
	 * no such label, unless a later entry for the same label applies:
	 * the first entry for a label whose property the device has wins.
	 * NULL: the node's name instead (the daemon's NODE_NAME, as
	 * Kubernetes sets it, else the host name). */
	const char *property;
	/* Put before the value ("nvidia" makes "nvidia0" of "0"); NULL for
	 * none. */
	const char *prefix;
	uint32_t reserved[2]; /* 0 */
};

/* Kinds of configuration value (extres_param.kind). */
#define EXTRES_PARAM_SCALAR 1u
#define EXTRES_PARAM_SEQUENCE 2u
#define EXTRES_PARAM_MAPPING 3u

/*
 * A configuration value, as read from YAML (extres-driver(3), PARAMETERS).
 * The root handed to open() is a MAPPING of the resource's params, prefix
 * `external-resource.<name>.param.` removed, nested mappings flattened into
 * dotted keys, never NULL; scalars are their text. Owned by the core,
 * read-only, valid from open() until close() returns.
 */
struct extres_param {
	uint32_t kind; /* EXTRES_PARAM_* */
	uint32_t count; /* number of items (SEQUENCE, MAPPING); 0 for SCALAR */
	const char *key; /* member name inside a MAPPING; NULL otherwise */
	const char *value; /* SCALAR text; NULL otherwise */
	const struct extres_param *items; /* `count` children */
	uint32_t line; /* 1-based position in the config file, for messages */
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
static inline const char *extres_param_scalar(const struct extres_param *map,
					      const char *key)
{
	const struct extres_param *p = extres_param_get(map, key);

	return p && p->kind == EXTRES_PARAM_SCALAR ? p->value : NULL;
}

/*
 * What the core offers a driver. Owned by the core, read-only, and valid
 * (at the same address) from open() until close() returns, so a driver may
 * keep the pointer in its handle. Its strings are never NULL.
 */
struct extres_host {
	uint32_t abi_version; /* EXTRES_DRIVER_ABI_VERSION of the core */
	uint32_t struct_size; /* sizeof(struct extres_host) in the core */
	const char *resource; /* resource name, e.g. "gpu" */
	const char *config_path; /* absolute path of the config file */
	const char *config_dir; /* its directory, for relative paths */
	/* The most devices the resource may take, >= 1: its amount, a
	 * range's maximum, or 4096 for "N-", "all" and a pool. */
	uint64_t amount;

	/*
	 * Log a message at an EXTRES_LOG_* level (ERR is the highest a driver
	 * may use; anything outside ERR..DEBUG is clamped to it). The core
	 * prefixes "resource '<name>': driver '<ops->name>': ", adds the
	 * newline, and sends it wherever the daemon logs (stderr, or syslog
	 * once in the background); messages less severe than the daemon's
	 * level (INFO) are dropped. Use it for warnings a driver can carry on
	 * after: an unknown param, a device skipped. Why a callback fails
	 * belongs in error(), not here. Callable from any thread, during any
	 * callback; messages past about 2 KiB are cut.
	 */
	void (*log)(const struct extres_host *host, int32_t level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

	/*
	 * Say why the callback that is about to fail failed. The core keeps the
	 * last message per call and shows it, prefixed with the resource and
	 * driver, in the start-up error; a failing callback that gave none is
	 * shown as strerror() of its result. Name what is at fault (the param
	 * with file:line:column, the device, the program). Returns -EINVAL for
	 * convenience, so a driver may write `return host->error(host, "...")`,
	 * or call it and then return a more exact errno if it has one. Call it
	 * only from inside open() or discover(), on the thread that runs them;
	 * a message followed by a successful return is dropped. Messages past
	 * about 2 KiB are cut.
	 */
	int32_t (*error)(const struct extres_host *host, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));

	/* Core-private state; do not touch. */
	void *core;

	/*
	 * Since ABI 1, present when struct_size >= offsetof(struct
	 * extres_host, check_trusted_path) + sizeof(check_trusted_path), and
	 * then never NULL. Refuse a file that a user other than root or the
	 * daemon's user could modify: `path` (a relative one from the working
	 * directory) is walked from "/", following symlinks, and refused when
	 * the file, a directory on the way or a symlink followed is owned by
	 * another user, when the file is group- or world-writable, or when a
	 * directory on the way is group- or world-writable without the sticky
	 * bit. The core applies the same rule to driver modules before it loads
	 * them. Drivers that run or load files (scripts, libraries) call it
	 * from open(), after their own checks, with `what` naming the file for
	 * the message ("discovery script"). Returns 0, or a negative errno
	 * (-EPERM when refused, -ENOENT and the like when the lookup fails)
	 * after setting the message as error() does:
	 * "<what> <path> could be modified by another user: <reason>".
	 */
	int32_t (*check_trusted_path)(const struct extres_host *host,
				      const char *path, const char *what);

	/*
	 * Since ABI 1, present when struct_size >= offsetof(struct
	 * extres_host, stop_requested) + sizeof(stop_requested), and then
	 * never NULL. 1 once the daemon has been asked to stop (SIGTERM,
	 * SIGINT), else 0; it stays 1. extresd obeys a stop within a second,
	 * whatever it is doing: a callback that waits (a program it runs, a
	 * device that is slow to answer) asks at least every 100 ms and, on 1,
	 * ends what it started (kills the program and what that started),
	 * calls error() and returns -EINTR. The core then rolls back what the
	 * start-up or reload took and exits 0. Cheap (no system call beyond
	 * sigpending()); callable from any thread, during any callback.
	 */
	int32_t (*stop_requested)(const struct extres_host *host);

	/*
	 * Since ABI 1, present when EXTRES_HAS_MEMBER(host, coordinated_by)
	 * (<extres/driver_util.h>), and then never NULL. For a driver that
	 * takes its devices through a coordination file by itself, as a
	 * Flink discovery script run with --enable-coordination does: call it
	 * from open() to say so. `file` is the coordination file it uses, `how`
	 * a few words for messages naming what made it coordinate (the flag,
	 * "--enable-coordination"). The core then checks, not trusts: under
	 * that file's lock every device discover() returned must be recorded
	 * as the daemon's (by the driver, whose "INDEX PID" lines name the
	 * daemon's PID, or else by the core), devices another live process
	 * holds are skipped, the resource's own coordination-file is not used,
	 * and discover() is not called again while the devices are held (it
	 * would take more). The core copies both strings. Returns 0, -EINVAL
	 * for a NULL or empty `file`, or -ENOMEM. A core without this member
	 * coordinates through the resource's coordination-file only.
	 */
	int32_t (*coordinated_by)(const struct extres_host *host,
				  const char *file, const char *how);

	/*
	 * Since ABI 1, present when EXTRES_HAS_MEMBER(host, request_refresh),
	 * and then never NULL. For a driver that learns of a change by
	 * itself (an event from a device library: a GPU's Xid error, or the
	 * end of a hold-down it keeps), so that the files show it without
	 * waiting for the resource's refresh-interval: asks the core to call
	 * discover() again soon. extresd does so on its control thread within
	 * about 100 ms, also for a resource without a refresh-interval, and
	 * updates the devices it holds from the result as a refresh does;
	 * requests made before that discover() runs are merged into it. A
	 * program that does not serve files (extresctl) ignores requests.
	 * Callable from any thread, a thread the driver started included,
	 * between open()'s start and close()'s return; it never blocks and
	 * allocates nothing. Returns 0.
	 */
	int32_t (*request_refresh)(const struct extres_host *host);
};

/*
 * Where discover() puts its candidates: begin_info() starts an info,
 * add_property() adds to it. Both copy what they are given and return 0,
 * -ENOMEM, -E2BIG or -EINVAL with a message; the first failure fails the
 * whole discovery. Valid only during the discover() call it was passed to,
 * on its thread. The limits on infos, keys and values, the coordination key
 * and `health`: extres-driver(3), THE SINK.
 */
struct extres_sink {
	uint32_t struct_size; /* sizeof(struct extres_sink) in the core */
	int32_t (*begin_info)(struct extres_sink *sink);
	int32_t (*add_property)(struct extres_sink *sink, const char *key,
				const char *value);
	void *core;
};

/*
 * A module's one table, returned by its entry point. Callbacks return 0 or a
 * negative errno; a positive result, or one below -4095, is a driver bug
 * that the core reports as such (EPROTO, EIO) and treats as failure.
 */
struct extres_driver_ops {
	/* Must be EXTRES_DRIVER_ABI_VERSION and sizeof(struct extres_driver_ops)
	 * as the module was compiled. */
	uint32_t abi_version;
	uint32_t struct_size;

	/* The driver's name, for messages, e.g. "script": by convention the
	 * NAME of NAME.so. A static string, never NULL. */
	const char *name;

	/*
	 * Validate `params` and prepare: everything that can be checked
	 * without looking for devices is best checked here, where the config
	 * positions are at hand. Called once per handle, on whichever thread
	 * starts the resource (extres-driver(3), THREADS). On success
	 * store a handle (may be NULL) in *ret_handle and return 0; on failure
	 * call host->error() and return a negative errno, leaving *ret_handle
	 * untouched and nothing to close: close() is not called, so free what
	 * open() made before returning. `host` and `params` stay valid until
	 * close(). Required.
	 */
	int32_t (*open)(const struct extres_host *host,
			const struct extres_param *params, void **ret_handle);

	/*
	 * List the candidate infos, in the order the core should prefer them,
	 * into `sink`. Need not honour host->amount (the core chooses the
	 * first `amount` free ones, and reports too few itself), but may (a
	 * Flink discovery script does). Finding no device is not an error of
	 * the driver's: return 0 with no infos. Returns 0, or a negative errno
	 * after calling host->error() (or the sink's error, passed on). May be
	 * called more than once per handle; each call starts from an empty
	 * list. Required.
	 */
	int32_t (*discover)(void *handle, struct extres_sink *sink);

	/* Release everything open() and discover() made: memory, fds,
	 * threads, child processes. Always called exactly once after a
	 * successful open(), also when discover() failed; cannot fail.
	 * Required. */
	void (*close)(void *handle);

	/*
	 * Appended in ABI 1: what the core would otherwise have to guess from
	 * the driver's name. A module built before them has a struct_size
	 * that ends at close, and the core reads them as NULL and 0: no
	 * device variable, matching by the coordination key alone. Static
	 * data, never freed.
	 */

	/*
	 * The variable .meta/env sets to the devices taken, when the resource
	 * configures no env-var of its own, e.g. "CUDA_VISIBLE_DEVICES"; a
	 * shell identifier ([A-Za-z_][A-Za-z0-9_]*), or NULL for none. Two
	 * resources may not set one variable: a second one fails start-up,
	 * and is then configured with another env-var (or "" for none).
	 */
	const char *env_var;
	/*
	 * The property whose values, joined by ',', fill that variable when
	 * every device taken has it (in env_form); otherwise, or when NULL,
	 * the devices' `index` values do. "uuid" for NVIDIA: CUDA takes
	 * "GPU-..." UUIDs, which survive renumbering.
	 */
	const char *env_property;
	/*
	 * Properties that name a device itself, not its place in a list
	 * ("uuid", "pci.bus_id"), NULL-terminated, or NULL for none. On a
	 * refresh, the device found again under the same coordination key
	 * must agree on every one of them that both the old and the new info
	 * carry; otherwise it is another device in the old one's place (a
	 * driver that numbers by position) and the old values are kept.
	 */
	const char *const *identity_keys;
	/* How env_property's value is written into the variable: an
	 * EXTRES_ENV_FORM_*; 0 (AS_IS) for a module that predates it. */
	uint32_t env_form;
	uint32_t reserved; /* 0 */

	/*
	 * Appended in ABI 1, after reserved: variables with a fixed value
	 * that go with the device variable wherever extres sets that
	 * (.meta/env, a lease's environment, a CDI spec's device), as
	 * "NAME=VALUE" strings, NULL-terminated, or NULL for none. NAME is a
	 * shell identifier, not the device variable; VALUE is 1 to 255
	 * letters, digits and "_.,:+-" (it is written unquoted into specs and
	 * single-quoted into .meta/env). A module breaking these rules is
	 * refused at load. nvml's is CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA then
	 * numbers GPUs as nvidia-smi and NVML do, so that an index extres
	 * shows means the same GPU inside the program. A module built before
	 * it has a struct_size that ends at reserved: none.
	 */
	const char *const *env_fixed;

	/*
	 * Appended in ABI 1, after env_fixed: device nodes that every device
	 * of this driver needs besides its own (a `device` property), as
	 * absolute paths under /dev/, NULL-terminated, or NULL for none: a
	 * CDI spec's common containerEdits give a container those the host
	 * has, with any of the driver's devices. nvml's are /dev/nvidiactl,
	 * /dev/nvidia-uvm and /dev/nvidia-uvm-tools; amdgpu's is /dev/kfd. A
	 * path that climbs out with "." or ".." is refused at load.
	 */
	const char *const *control_nodes;

	/*
	 * Appended in ABI 1, after control_nodes: where the device vendor's
	 * own tools write a CDI spec for the node's devices (absolute paths,
	 * the first that exists is used, NULL-terminated), or NULL for none;
	 * and the command that writes one, for messages, or NULL. extres's
	 * spec for a resource then gives a container what the vendor's
	 * would: its common containerEdits (libraries, binaries, hooks) and
	 * the edits of each device named by the `uuid` property's value,
	 * beside extres's own variables. nvml's are /etc/cdi/nvidia.yaml,
	 * /etc/cdi/nvidia.json, /var/run/cdi/nvidia.yaml and
	 * /var/run/cdi/nvidia.json, made by `nvidia-ctk cdi generate`, whose
	 * devices carry the GPUs' and MIG devices' UUIDs as names. A resource's
	 * cdi.base-spec setting takes their place.
	 */
	const char *const *cdi_base_specs;
	const char *cdi_base_hint;

	/*
	 * Appended in ABI 1, after cdi_base_hint: properties besides `device`
	 * whose values are device nodes a device needs (absolute paths under
	 * /dev/), NULL-terminated, or NULL for none: a CDI spec gives a
	 * container each one the host has. nvml's are mig.gi.device and
	 * mig.ci.device, a MIG instance's /dev/nvidia-caps/nvidia-capN nodes
	 * of its GPU and compute instance.
	 */
	const char *const *node_keys;

	/*
	 * Appended in ABI 1, after node_keys: labels extres_device_info carries for
	 * this driver's devices besides its own, ended by an entry whose
	 * label is NULL; NULL for none. A list that breaks the rules of
	 * struct extres_metric_label refuses the module, naming the entry.
	 * Static data, never freed.
	 */
	const struct extres_metric_label *metric_labels;

	/*
	 * Appended in ABI 1, after metric_labels: what EXTRES_ENV_FORM_HEX_ID
	 * writes before the 16 hex digits, 1 to 15 letters, digits and
	 * "_.:-", or NULL for none. A module breaking these rules is refused
	 * at load. A module built before it has a struct_size that ends at
	 * metric_labels: none.
	 */
	const char *env_id_prefix;
};

/* The type of the module's one exported function. It must return the same
 * pointer every time and do nothing else: no allocation, no output, no
 * looking for devices (that is open()'s and discover()'s job). */
typedef const struct extres_driver_ops *(*extres_driver_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* EXTRES_DRIVER_H */
