/* SPDX-License-Identifier: MIT */
/*
 * A CDI spec that a device vendor's own tools generated on the node (the
 * driver names where: extres_driver_ops.cdi_base_specs), read so that
 * extres's specs give a container everything the vendor's would for the
 * same device: the spec's common containerEdits (the user-space driver
 * libraries, binaries, sockets and the hooks that set them up) and the
 * per-device edits of the device named by its uuid. extres does not find
 * those libraries itself: the vendor's tool knows them.
 *
 * YAML or JSON (JSON is YAML), read with libyaml under the limits of
 * config/yaml_load.h. Only the containerEdits members a runtime merges
 * are kept: env, deviceNodes, mounts, hooks and additionalGIDs; others
 * (intelRdt) are left out.
 */
#ifndef EXTRES_CDI_BASE_H
#define EXTRES_CDI_BASE_H

#include <stddef.h>

#include "base/err.h"
#include "base/json.h"

/* The largest spec read. */
#define EXTRES_CDI_BASE_MAX_SIZE (16u << 20)

struct extres_cdi_base;
/* One containerEdits mapping of a base spec. */
struct extres_cdi_edits;

/*
 * Read the spec at `path`. It must be a mapping with a string `kind` and a
 * `devices` sequence of mappings with a string `name` (a `containerEdits`
 * mapping is optional, at the top and in each device); else -EINVAL naming
 * the file, line and column. A file another user could modify is refused
 * (-EPERM, os/trust.h's rule): a runtime applies its edits as root. 0, or
 * a negative errno with `err` set; *ret untouched on failure.
 */
int extres_cdi_base_load(const char *path, struct extres_cdi_base **ret,
			 struct extres_err *err);

/* Accepts NULL. */
void extres_cdi_base_free(struct extres_cdi_base *b);

/* The file it was read from. */
const char *extres_cdi_base_path(const struct extres_cdi_base *b);

/* The spec's common containerEdits, or NULL when it has none. */
const struct extres_cdi_edits *
extres_cdi_base_common(const struct extres_cdi_base *b);

/* The containerEdits of the device named `name`, or NULL (no such device,
 * or one without edits). */
const struct extres_cdi_edits *
extres_cdi_base_device(const struct extres_cdi_base *b, const char *name);

/* The containerEdits members carried over, in the order written. */
#define EXTRES_CDI_EDIT_KEYS                                              \
	{                                                                 \
		"env", "deviceNodes", "mounts", "hooks", "additionalGIDs" \
	}

/* How many items `edits` has under `key` (0 for NULL edits). */
size_t extres_cdi_edits_count(const struct extres_cdi_base *b,
			      const struct extres_cdi_edits *edits,
			      const char *key);

/* Write the items `edits` has under `key` into the array open in `json`,
 * as JSON: scalars as strings, but numbers where CDI wants one (major,
 * minor, fileMode, uid, gid, timeout, additionalGIDs). 0 or -ENOMEM. */
int extres_cdi_edits_write(struct extres_json *json,
			   const struct extres_cdi_base *b,
			   const struct extres_cdi_edits *edits,
			   const char *key);

#endif
