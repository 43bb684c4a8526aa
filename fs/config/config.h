/* SPDX-License-Identifier: MIT */
/*
 * The configuration: any YAML file read as Flink's flat key space.
 *
 * The loader flattens nested mappings into dotted keys (a Flink
 * flink-conf.yaml, a Flink 1.19+ config.yaml and extres' own file read the
 * same), then interprets the keys it knows:
 *
 *   external-resources: a;b            (or the older external-resource.list: a,b)
 *   external-resource.<name>.amount          (N, N-M, N- or all: config/amount.h)
 *   external-resource.<name>.driver             (extres driver name or path)
 *   external-resource.<name>.driver-factory.class / .driver.class (Flink's)
 *   external-resource.<name>.param.<key>        (handed to the driver)
 *   external-resource.<name>.kubernetes.config-key / .kubernetes.key
 *   external-resource.<name>.yarn.config-key / .yarn.key
 *   external-resource.<name>.coordination-file
 *   external-resource.<name>.coordination-key   (default "index")
 *   external-resource.<name>.refresh-interval   (seconds, e.g. 30 or 0.5)
 *   external-resource.<name>.env-var            (see "Environment variables")
 *   external-resource.<name>.pool               (true: a node pool, below)
 *   external-resource.<name>.cdi.kind           (CDI kind of .meta/cdi.json,
 *                                                default extres.dev/<name>)
 *   external-resource.<name>.cdi.base-spec      (a vendor's generated CDI
 *                                                spec to build on)
 *   external-resource.<name>.replicas           (shares per device, 1 to
 *                                                EXTRES_MAX_REPLICAS; default 1)
 *   external-resource.<name>.sharing-strategy   (time-slicing or mps)
 *   external-resource.<name>.mps.pipe-directory / .mps.log-directory
 *   extres.mountpoint
 *   extres.cdi-spec-dir        (a directory: extresd keeps a CDI spec per
 *                               resource there, extres-<name>.json)
 *   extres.lock-timeout        (seconds, default 10: the longest wait for a
 *                               coordination file's lock)
 *   extres.coordination-group  (a group name: its members may write
 *                               coordination files; see os/trust.h)
 *   extres.transport           (auto, uring or dev: see daemon/transport.h)
 *
 * Everything else outside `external-resource.`/`extres.` is ignored silently;
 * an unknown key inside them is a warning that names it with file:line:col.
 * No logging happens here: errors come back in struct extres_err, warnings in
 * the config's warnings list.
 *
 * A node pool (pool: true) serves every device the driver finds and takes
 * none: the mount lists the node's inventory and .meta/holders who holds
 * each device, leased out through the coordination file (extresctl run).
 * It needs coordination-file; amount is then optional and takes no part in
 * allocation (a Flink file sets it for Flink; extresctl request still
 * prints it), and drivers are asked for up to EXTRES_MAX_AMOUNT devices.
 *
 * Environment variables (the mount's hidden .meta/env file;
 * extres_view_env() writes the values): every resource sets
 * EXTRES_<NAME>_INDEXES, and may set one more variable that names its
 * devices the way a runtime takes them:
 *
 *   env-var absent        the driver's default (its module declares it:
 *                         extres_driver_ops.env_var), or none
 *   env-var: NAME         NAME, a shell identifier ([A-Za-z_][A-Za-z0-9_]*);
 *                         anything else is an error at the value
 *   env-var: ""           (or no value at all) no variable, not even the
 *                         driver's default
 *
 * No two resources may set the same variable, whether configured or by
 * default (two resources of one driver both want its variable): the loader
 * fails naming both for configured variables, and
 * extres_config_check_env() once the drivers' defaults are known, as a
 * sourced file would keep only the last value. A
 * variable may not be another resource's EXTRES_<NAME>_INDEXES either, and
 * two resource names may not map to the same EXTRES_<NAME>_INDEXES
 * ("gpu-a" and "gpu.a").
 */
#ifndef EXTRES_CONFIG_H
#define EXTRES_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <extres/driver.h>

#include "base/err.h"
#include "config/amount.h"
#include "config/param.h"
#include "os/trust.h" /* EXTRES_NO_GROUP */

/* refresh-interval bounds, in milliseconds: 0.1 s to a day. */
#define EXTRES_MIN_REFRESH_MS 100ULL
#define EXTRES_MAX_REFRESH_MS 86400000ULL
#define EXTRES_MAX_RESOURCES 256
/* extres.lock-timeout, in milliseconds: default 10 s, at most an hour. */
#define EXTRES_LOCK_TIMEOUT_DEFAULT_MS 10000ULL
#define EXTRES_MAX_LOCK_TIMEOUT_MS 3600000ULL
/* replicas: shares per device. */
#define EXTRES_MAX_REPLICAS 64
#define EXTRES_SHARING_TIME_SLICING 0
#define EXTRES_SHARING_MPS 1
/* NVIDIA's defaults for the MPS control daemon's directories. */
#define EXTRES_MPS_PIPE_DEFAULT "/tmp/nvidia-mps"
#define EXTRES_MPS_LOG_DEFAULT "/var/log/nvidia-mps"

struct extres_resource_config {
	char *name; /* safe directory name */
	/* The least and the most devices to take (config/amount.h): min ==
	 * max for Flink's integer; {0, 0} only for a pool without amount. */
	struct extres_amount amount;
	int pool; /* serve every device, take none (see above) */
	char *driver; /* a driver module's name, or an absolute module path */
	/* MAPPING of param.* (prefix removed); never NULL (may be empty). */
	struct extres_param *params;
	/* A param the loader filled in, as "KEY: VALUE (why)", for extresctl
	 * check; NULL when none was. Only Flink's GPU driver factory without
	 * discovery-script.path has one: Flink's default script. */
	char *param_default;
	char *coordination_file; /* NULL: no coordination */
	char *coordination_key; /* never NULL; "index" by default */
	char *kubernetes_key; /* NULL when unset */
	char *yarn_key; /* NULL when unset */
	/* env-var as configured: NULL when absent (the driver's default), ""
	 * when set empty (no variable), else a shell identifier. */
	char *env_var;
	uint32_t env_var_line, env_var_column; /* of its value, when set */
	/* external-resource.<name>.refresh-interval in ms: re-read the
	 * allocated devices' properties this often; 0 = never. */
	uint64_t refresh_ms;
	/* extres.lock-timeout in ms (the same for every resource). */
	unsigned lock_timeout_ms;
	/* extres.coordination-group's gid (the same for every resource), or
	 * EXTRES_NO_GROUP. */
	gid_t coordination_gid;
	/* cdi.kind: a valid CDI kind (config/cdi_name.h), or NULL when unset
	 * (EXTRES_CDI_VENDOR "/<name>"). */
	char *cdi_kind;
	/* cdi.base-spec: the vendor's generated CDI spec to build on
	 * (absolute), or NULL for the driver's cdi_base_specs. */
	char *cdi_base_spec;
	/* Sharing (extresctl run RES=FRACTION): shares per device (1: whole
	 * devices only) and how they share it, EXTRES_SHARING_*. For mps,
	 * the directories of the MPS control daemon's pipes and logs
	 * (mps.pipe-directory, mps.log-directory; never NULL when mps). */
	unsigned replicas;
	int sharing;
	char *mps_pipe_dir, *mps_log_dir;
	uint32_t line, column; /* where the name was listed */
};

struct extres_config {
	char *path; /* absolute path of the file read */
	char *dir; /* its directory */
	/*
	 * Why another user could modify the file (extres_check_trusted()'s
	 * message), or NULL. Root must not run or load anything such a file
	 * names, whatever the file it names: /usr/bin/timeout is root's, its
	 * args are not. Set by extres_config_load(); NULL from a buffer.
	 */
	char *untrusted;
	char *mountpoint; /* extres.mountpoint, or NULL */
	char *cdi_spec_dir; /* extres.cdi-spec-dir (absolute), or NULL */
	unsigned lock_timeout_ms; /* extres.lock-timeout */
	/*
	 * extres.coordination-group: the group trusted to write coordination
	 * files (os/trust.h), by name and gid; NULL and EXTRES_NO_GROUP when
	 * unset, and when the file is untrusted (then a warning says the key
	 * was ignored: a file another user could change must not widen whom
	 * root trusts). A name that is no group is an error at its value.
	 */
	char *coordination_group;
	char *transport; /* extres.transport, or NULL */
	gid_t coordination_gid;
	size_t n_resources;
	struct extres_resource_config *resources; /* in list order */
	size_t n_warnings;
	char **warnings; /* "file:line:col: ..." each */
};

/*
 * Read and validate `path`. On success *ret_config is a complete config that
 * the caller frees with extres_config_free(). On failure returns a negative
 * errno, leaves *ret_config untouched, and puts into `err` a message starting
 * "file:line:col: " (or "file: " when no position applies) that names the key
 * or value at fault. Nothing is allocated on failure.
 */
int extres_config_load(const char *path, struct extres_config **ret_config,
		       struct extres_err *err);

/* Same, from a buffer; `path` is used for messages and for config->dir. */
int extres_config_load_buffer(const char *path, const char *buf, size_t len,
			      struct extres_config **ret_config,
			      struct extres_err *err);

/* Accepts NULL. */
void extres_config_free(struct extres_config *config);

/* 1 if two resource configurations would discover and allocate alike: same
 * name, amount, pool, driver, coordination file and key, and params
 * (compared deeply, in order). */
int extres_resource_config_same(const struct extres_resource_config *a,
				const struct extres_resource_config *b);

/* 0 if `name` is usable as a directory name in the mount (non-empty, at most
 * 255 bytes, no '/', no leading '.', no control characters), else -EINVAL. */
int extres_check_name(const char *name);

/* 0 if `name` is a shell identifier ([A-Za-z_][A-Za-z0-9_]*), else -EINVAL. */
int extres_check_env_var_name(const char *name);

/*
 * The variable that names a resource's devices, from its driver's default
 * (`driver_default`, NULL for none) and its env_var as configured (see
 * above): env_var when set and not empty, NULL when set empty, else
 * driver_default. Points into one of them.
 */
const char *extres_env_var(const char *driver_default, const char *env_var);

/*
 * The rules of "Environment variables" above again, now that `defaults`
 * (one per resource, in config order: the driver's default variable or
 * NULL) are known. 0, or -EINVAL with a message "file:line:col: ..." naming
 * both resources (a default is named as "the <driver> driver's default"),
 * or -ENOMEM.
 */
int extres_config_check_env(const struct extres_config *config,
			    const char *const *defaults,
			    struct extres_err *err);

/*
 * "EXTRES_<NAME>_INDEXES" for resource `name`: each byte of the name
 * upper-cased, or '_' when it is not an ASCII letter or digit ("gpu-a.0" ->
 * EXTRES_GPU_A_0_INDEXES). *ret_var is malloc'd; 0 or -ENOMEM (then
 * untouched).
 */
int extres_env_indexes_var(const char *name, char **ret_var);

#endif
