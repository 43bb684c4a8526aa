/* SPDX-License-Identifier: MIT */
/*
 * Loading driver modules and running them (the host side of
 * <extres/driver.h>).
 *
 * A resource's `driver` is either a bare name ([A-Za-z0-9_-]+), looked up as
 * <dir>/<name>.so in the driver directories (the build tree's drivers/ next to
 * the running program first, then EXTRES_DRIVER_DIR), or an absolute path to a
 * module. Loading refuses a module that a user other than root or ours could
 * modify (fs/trust.h), then checks the entry symbol, the ABI version, that
 * struct_size covers every member this core needs, and that the required ops
 * are set; the ops table is copied by size and zero-filled past what the
 * module has.
 */
#ifndef EXTRES_FS_DRIVER_H
#define EXTRES_FS_DRIVER_H

#include <extres/driver.h>

#include "config/config.h"
#include "base/err.h"
#include "host/driver_info.h"
#include "host/infos.h"

struct extres_driver;

/*
 * Load the module named `driver` and open it for `res` of `config`. On
 * success *ret is an open instance to close with extres_driver_close(). On
 * failure returns a negative errno with a message in `err` naming the
 * resource, the module path and dlerror() or the driver's own message; nothing
 * stays loaded or open.
 *
 * The instance keeps its own copy of what open() was given (the resource's
 * settings and params, the config's path and trust), so that it may outlive
 * `config`: a daemon keeps it open across refreshes and across reloads that
 * leave the resource as it was (extres_driver_serves()), and calls discover()
 * on it each time. An instance is not thread-safe: the caller uses it from
 * one thread at a time, and hands it to another thread only through
 * something that orders memory (starting or joining that thread, a lock).
 */
int extres_driver_open(const struct extres_config *config,
		       const struct extres_resource_config *res,
		       struct extres_driver **ret, struct extres_err *err);

/*
 * Run the driver's discover() into a new candidate list. Every property is
 * checked (see extres_infos_add()): a driver that breaks the rules or fails
 * fails the whole discovery, even if it ignored the sink's refusal and
 * returned 0. Zero infos is not an error here (the allocator reports
 * "wanted N, found 0"). On failure, nothing is returned and `err` names the
 * resource and the driver.
 */
int extres_driver_discover(struct extres_driver *drv,
			   struct extres_infos **ret_infos,
			   struct extres_err *err);

/*
 * 1 if `drv` was opened for what `res` of `config` says now, so that it can
 * serve `res` in its stead: the same settings (extres_resource_config_same())
 * and the same config path and trust. Else 0: open a new instance.
 */
int extres_driver_serves(const struct extres_driver *drv,
			 const struct extres_config *config,
			 const struct extres_resource_config *res);

/* Another holder of `drv`, which closes it once more: the instance is
 * closed by the last extres_driver_close(). Returns `drv`. */
struct extres_driver *extres_driver_ref(struct extres_driver *drv);

/* Drop one holder; the last one closes the instance and unloads the module.
 * Accepts NULL. */
void extres_driver_close(struct extres_driver *drv);

/*
 * Where the driver's host->request_refresh() is heard: a non-blocking
 * eventfd that the caller keeps open until the last extres_driver_close()
 * (the driver may call from its own threads until then), or -1 for nowhere.
 * A request marks the instance and writes 1 to the fd.
 */
void extres_driver_set_wake_fd(struct extres_driver *drv, int fd);

/* 1 if the driver asked for a refresh since the last call, else 0; clears
 * the request. Any thread. */
int extres_driver_take_refresh_request(struct extres_driver *drv);

/* The module's display name, ops->name, for messages. */
const char *extres_driver_name(const struct extres_driver *drv);

/* What the open instance's module declares, and the coordination its
 * open() reported; valid until extres_driver_close(). Each discovered list
 * carries a copy (extres_infos.driver). */
const struct extres_driver_info *
extres_driver_get_info(const struct extres_driver *drv);

/*
 * Resolve a driver name to a module path, as extres_driver_open() does.
 * Returns 0 with a malloc'd path, -ENOENT with a message listing the places
 * looked in, or -EINVAL for a name that is neither safe nor absolute.
 */
int extres_driver_find(const char *driver, char **ret_path,
		       struct extres_err *err);

/* Lower level, for tests: load a module by path and return its checked,
 * size-normalised ops table. */
struct extres_module;
int extres_module_load(const char *path, struct extres_module **ret,
		       struct extres_err *err);
const struct extres_driver_ops *
extres_module_ops(const struct extres_module *m);
void extres_module_unload(struct extres_module *m);

#endif
