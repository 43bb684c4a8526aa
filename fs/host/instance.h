/* SPDX-License-Identifier: MIT */
/*
 * Driver instances: a loaded module (module.h) opened for one
 * resource, the host and sink callbacks it is given, and what it keeps of
 * the settings it was opened with. What the rest of extres calls to run a
 * driver.
 */
#ifndef EXTRES_INSTANCE_H
#define EXTRES_INSTANCE_H

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

#endif
