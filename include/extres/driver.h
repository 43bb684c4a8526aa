/* SPDX-License-Identifier: MIT */
/*
 * extres driver ABI: the whole contract between extresd and a driver module.
 *
 * A driver turns the `external-resource.<name>.param.*` keys of one resource
 * into a list of candidate infos, each a set of property key -> string value.
 * The core (not the driver) chooses `amount` of the candidates, records them in
 * the coordination file and serves them as files; the driver never sees the
 * file system. examples/hello/ in the source tree is a complete module to copy.
 *
 * Building and finding a module
 *
 * A module is a shared object that exports exactly one symbol,
 * EXTRES_DRIVER_ENTRY_SYMBOL: a function returning a pointer to one
 * `static const struct extres_driver_ops`. Build it with
 *
 *     cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags extres-driver)
 *
 * and mark the entry point with EXTRES_DRIVER_EXPORT. `driver: NAME` in the
 * config loads "<driverdir>/NAME.so" (NAME of letters, digits, '_' and '-';
 * driverdir is `pkg-config --variable=driverdir extres-driver`); an extresd
 * run from its build tree looks in the build's drivers/ first. `driver:` may
 * also be the absolute path of a module anywhere.
 *
 * The core loads a module with dlopen(RTLD_NOW | RTLD_LOCAL): every symbol
 * must resolve at load time, and the module sees none of the core's own
 * functions. Link the module against every library it uses, or dlopen() them
 * yourself (as the nvml driver does with libnvidia-ml.so.1), and reach the core
 * only through struct extres_host and struct extres_sink.
 *
 * A module is refused, and its resource fails start-up with the path and the
 * reason, when: a user other than root or the daemon's could modify it (the
 * rule of extres_host.check_trusted_path, applied before dlopen(), since
 * loading runs the module's code); dlopen() fails (dlerror() is quoted); the
 * entry symbol is missing or returns NULL; abi_version is not this header's
 * EXTRES_DRIVER_ABI_VERSION (EPROTO); struct_size is smaller than a version-1
 * table (up to and including close); or name, open, discover or close is NULL.
 *
 * Lifecycle, per configured resource that names the driver:
 *
 *     entry()                 right after dlopen(); may run once per resource
 *     open(host, params)      once per resource and settings; returns a handle
 *     discover(handle, sink)  any number of times on that handle
 *     close(handle)           once, always, if open succeeded; then dlclose()
 *
 * A handle lives as long as its resource's settings: extresd opens it at
 * start-up (after it has gone to the background, before it mounts), one
 * resource after the other, and may keep it across refreshes and across
 * reloads that leave the resource's settings unchanged, calling discover()
 * again each time; changed settings close the old handle and open a new one.
 * `extresctl check` only opens and closes; `extresctl discover` opens,
 * discovers once and closes, without mounting. Every discover() call must
 * report the devices as they are now, from scratch.
 *
 * Each resource gets its own open() and handle, even when two resources name
 * the same module: the module is loaded once (dlopen counts references), so
 * its global variables are shared. Keep state in the handle, not in globals.
 *
 * Threads: one thread at a time per handle: the core never calls two
 * callbacks of one handle at the same time, though successive calls may come
 * from different threads (start-up runs on the main thread, refreshes and
 * reloads on the daemon's control thread); and never from inside a
 * file-system request, so a callback may block (run a
 * program, read sysfs, talk to a device library). It should bound how long:
 * the core does not interrupt it, and a callback that hangs hangs start-up;
 * a wait that may be long also asks host->stop_requested(), so that the
 * daemon stops when it is told to.
 * Callbacks of different handles may run on different threads in a later
 * core, so module-global mutable state, if any, needs its own lock. Threads a
 * driver starts must be joined before close() returns.
 *
 * The process belongs to the core: a driver does not print to stdout or
 * stderr (use host->log, which follows the daemon to syslog), does not call
 * exit(), change signal dispositions or masks, or reap children it did not
 * start (waitpid() on its own PIDs only). Every fd it opens has O_CLOEXEC and
 * is closed by the time close() returns. Nothing may outlive close(): after
 * the last close() the module is unloaded, so no atexit() handlers, thread
 * keys with destructors or callbacks registered with other libraries.
 *
 * Compatibility: EXTRES_DRIVER_ABI_VERSION changes only when an existing member
 * changes meaning, and the core loads only modules built for its own version.
 * New members are only ever appended to the structs below; a struct carries
 * its own size so that both sides use only what the other has: the core
 * copies a module's ops table by its struct_size and reads members past it as
 * NULL; a driver must check `host->struct_size` (or `sink->struct_size`)
 * against offsetof(struct, member) + sizeof(member) before using a member
 * that was appended (check_trusted_path is one), since an older core lacks
 * it: EXTRES_HAS_MEMBER() in <extres/driver_util.h> does that, and
 * EXTRES_DRIVER_REGISTER() there fills abi_version and struct_size. All ABI
 * structs use fixed-width types only (no bool, enum or off_t);
 * tests/unit/test_abi.c pins every size and offset.
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
 * A configuration value, as read from YAML. The root handed to open() is a
 * MAPPING whose members are the resource's parameters with the
 * `external-resource.<name>.param.` prefix removed, in file order; a resource
 * without parameters gets an empty MAPPING, never NULL. Nested
 * mappings are flattened into dotted keys, exactly as for every other key, so
 * `param: {discovery-script: {path: x}}` and `param.discovery-script.path: x`
 * both arrive as the member "discovery-script.path". Inside a sequence nothing
 * is flattened: a sequence of mappings arrives as written (the static
 * driver's `devices`).
 *
 * A key given twice appears twice, in file order; the core has already warned
 * about it, and the last one wins (extres_param_get() does this). Scalars
 * arrive as their text, whatever YAML would make of them: `0`, `true` and
 * `"0"` are all strings, for the driver to parse and check, and a null (`~`,
 * nothing after the colon) is the empty string. An unknown member
 * deserves a host->log() warning naming it, as the shipped drivers do.
 *
 * The whole tree is owned by the core, read-only, and stays valid from open()
 * until close() returns, so a driver may keep pointers into it in its handle.
 * Strings are NUL-terminated UTF-8. `line` and `column` make messages
 * precise: "<host->config_path>:<line>:<column>: ...".
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
 * Where discover() puts its candidates. Each info starts with begin_info()
 * and collects properties with add_property() until the next begin_info()
 * or the end of discover(). The core copies keys and values before the call
 * returns; the driver keeps ownership of its strings. The sink is owned by
 * the core and valid only during the discover() call it was passed to: do
 * not keep it, and call it only on the thread that runs discover().
 *
 * What the core accepts, in one discovery (fs/host/infos.h has the numbers):
 *   - at most 4096 infos, each with at most 256 properties;
 *   - keys of 1 to 255 bytes, not starting with '.', without '/' or control
 *     characters (bytes below 0x20 and 0x7f), unique within an info: each
 *     key is a file name in the info's directory;
 *   - values of 0 to 65536 bytes without '\n': the file's content is the
 *     value plus the newline the core adds. Values are served as given;
 *     trim what a device or program returns. An empty value says a fact
 *     ("no NVLink peers"); a property the driver cannot tell is better
 *     left out. `index` may not be empty.
 *   - add_property() only after a begin_info(); NULL key or value refused.
 * An info with no properties is allowed and shows as an empty directory.
 *
 * Both return 0, or -ENOMEM, -E2BIG (too many infos or properties) or
 * -EINVAL (any other rule above), with a message naming the key and value.
 * The first failure fails the whole discovery: every later call returns the
 * same error, the core reports the sink's message rather than the driver's,
 * and nothing of the partial list is used. On failure discover() should stop
 * and return that value.
 *
 * A resource with a coordination file records one property of each info
 * taken, `coordination-key`, default "index", as the first field of an
 * "INDEX PID" line: give every info an `index` that names its device
 * stably, uniquely and without whitespace (a device number, as Flink does).
 *
 * Health: a driver that knows whether a device works gives it a `health`
 * property, "ok" or a short reason without spaces ("xid-79"). The core does
 * not hand a device whose `health` is not "ok" to a new allocation or lease;
 * one already held stays held, shows its new `health` to the process using
 * it (a poll() on the file wakes), and is listed in .meta/status. A driver
 * that hears of a change by itself calls host->request_refresh().
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
	 * starts the resource (see "Threads" above). On success
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
