/* SPDX-License-Identifier: MIT */
/*
 * Loading driver modules (the host side of <extres/driver.h>); running
 * them is instance.h's.
 *
 * A resource's `driver` is either a bare name ([A-Za-z0-9_-]+), looked up as
 * <dir>/<name>.so in the driver directories (the build tree's drivers/ next to
 * the running program first, then EXTRES_DRIVER_DIR), or an absolute path to a
 * module. Loading refuses a module that a user other than root or ours could
 * modify (os/trust.h), then checks the entry symbol, the ABI version, that
 * struct_size covers every member this core needs, and that the required ops
 * are set; the ops table is copied by size and zero-filled past what the
 * module has.
 */
#ifndef EXTRES_MODULE_H
#define EXTRES_MODULE_H

#include <extres/driver.h>

#include "base/err.h"

/*
 * Resolve a driver name to a module path, as extres_driver_open() does.
 * Returns 0 with a malloc'd path, -ENOENT with a message listing the places
 * looked in, or -EINVAL for a name that is neither safe nor absolute.
 */
int extres_driver_find(const char *driver, char **ret_path,
		       struct extres_err *err);

/* Load a module by path and return its checked, size-normalised ops
 * table (extres_driver_open() does, and tests). */
struct extres_module;
int extres_module_load(const char *path, struct extres_module **ret,
		       struct extres_err *err);
const struct extres_driver_ops *
extres_module_ops(const struct extres_module *m);
void extres_module_unload(struct extres_module *m);

#endif
