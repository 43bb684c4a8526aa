/* SPDX-License-Identifier: MIT */
/*
 * .meta/cdi.json: a Container Device Interface spec per resource, so that a
 * container runtime (podman --device, containerd, CRI-O) gives a container
 * the devices extres allocated, with their device nodes and the variable
 * that names them. A pure function of the allocation, as views/views.h's
 * views are; the daemon rebuilds it with them on every reload.
 */
#ifndef EXTRES_CDI_VIEW_H
#define EXTRES_CDI_VIEW_H

#include <stddef.h>

#include "views/views.h"

/* The spec version written: the least that its fields need, which is
 * 0.5.0 (device names that start with a digit), the newest that Debian
 * 12's podman (4.3, vendoring CDI 0.5) takes; it refuses "0.6.0". A
 * vendor's edits with additionalGIDs need 0.7.0. */
#define EXTRES_CDI_VERSION "0.5.0"
#define EXTRES_CDI_VERSION_GIDS "0.7.0"

struct extres_cdi_base;

struct extres_cdi_resource {
	const struct extres_view_resource *view;
	/* A valid CDI kind (config/cdi_name.h), or NULL for
	 * EXTRES_CDI_VENDOR "/<name>". */
	const char *kind;
	/* The property that names a device (the coordination key), or NULL
	 * for "index". */
	const char *key;
	/* The vendor's generated spec to build on (config/cdi_base.h), or
	 * NULL. */
	const struct extres_cdi_base *base;
	/* The resource's configuration, for its sharing (replicas,
	 * sharing-strategy; alloc/share.h), or NULL: whole devices only. */
	const struct extres_resource_config *config;
};

/* 1 if `path` is a device node on this host (a character device, not a
 * link to one), else 0: called for the control nodes that every device of
 * a kind needs and for `device` properties, in the caller's thread. */
typedef int extres_cdi_exists_fn(const char *path, void *arg);

/*
 * The text of .meta/cdi.json for `res` (n of them, in configuration order):
 * a JSON object with one member per line, its key a resource name and its
 * value that resource's spec (a document of views/json_view.h's JSON writer,
 * on one line), so that a reader can split the specs without parsing JSON:
 *
 *   {
 *   "gpu": {"cdiVersion": "0.5.0", "kind": "extres.dev/gpu", "devices": [...]},
 *   "fpga": {...}
 *   }
 *
 * Each spec has, for each info i (in allocation order), a device named "i"
 * and, when the info's key property is a CDI device name that is no other
 * device's name, a device named by that value (the same edits); then a
 * device "all" with every info's edits. For a resource with replicas N > 1,
 * each info i also has devices "i-share-K" for K in 1..N: info i's edits,
 * and in env what extres_share_env() gives share K of N (EXTRES_<NAME>_SHARE
 * and, for mps, the MPS client's variables), and for mps a bind mount of
 * the pipe directory at the same path, where the client finds the control
 * daemon. A device's containerEdits:
 *
 *   env          EXTRES_<NAME>_INDEXES and the device variable with the
 *                values .meta/env gives them for that device alone
 *                (extres_view_env_values()), when not empty; with the
 *                device variable, the driver's fixed variables
 *                (extres_driver_ops.env_fixed)
 *   deviceNodes  {"path": P} for the info's `device` property, when an
 *                absolute path under /dev/ with no "." or ".." in it that
 *                `exists` says is a device node
 *
 * The spec's own containerEdits, applied with any of its devices, hold the
 * nodes its driver says every device needs (extres_driver_ops
 * .control_nodes) where `exists` says they exist, when a device has a node
 * of its own.
 *
 * With a vendor's spec (`base`), each device's edits are followed by those
 * of the vendor's device named by the info's `uuid` (env, deviceNodes,
 * mounts, hooks, additionalGIDs), and the spec's own containerEdits by the
 * vendor's common ones: the libraries, binaries and hooks a program needs
 * to use the device. cdiVersion is the least that the fields written need
 * (EXTRES_CDI_VERSION, or EXTRES_CDI_VERSION_GIDS with additionalGIDs).
 *
 * Left out, since a runtime refuses a whole spec for them: a device with
 * nothing to edit, a resource with no device left or with no valid kind (a
 * default one from a name that is no CDI class). The text ends with "\n".
 * 0, or -ENOMEM with *ret_text and *ret_len untouched. Thread-safe.
 */
int extres_view_cdi(const struct extres_cdi_resource *res, size_t n,
		    extres_cdi_exists_fn *exists, void *arg, char **ret_text,
		    size_t *ret_len);

#endif
