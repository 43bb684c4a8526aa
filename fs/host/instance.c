/* SPDX-License-Identifier: MIT */
#include "host/instance.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "config/param.h"
#include "host/module.h"
#include "os/stop.h"
#include "os/trust.h"
#include "base/text.h"

/* The module's table, zero-filled past what the module has. */
#define OPS(drv) extres_module_ops((drv)->module)

struct extres_driver {
	struct extres_module *module;
	/* request_refresh() may come from any thread of the driver's. */
	atomic_int refresh_wanted;
	atomic_int wake_fd;
	/* Holders: each calls extres_driver_close() once. */
	unsigned refs;
	/* What the instance was opened with, copied: a reload that keeps it
	 * frees the config it came from, and the driver holds on to its
	 * params and the host's strings. Of `settings`, only what
	 * extres_resource_config_same() compares is set; its params are
	 * `params`. */
	struct extres_resource_config settings;
	struct extres_param params;
	char *config_path, *config_dir;
	/* The config's untrusted: why nothing it names may run, or NULL. */
	char *config_untrusted;
	/* The files open() had the host vet (check_trusted_path()), checked
	 * again before each discover(): a new open() would have, and the
	 * driver may run them again (a script). */
	struct vetted {
		char *path, *what;
	} * vetted;
	size_t n_vetted;
	int opening;
	/* Handed to the driver; must live as long as the instance. */
	struct extres_host host;
	void *handle;
	/* The driver's host->error() message for the call in progress. */
	int has_error;
	char error[EXTRES_ERR_MAX];
	/* What the module declares and open() reported; discover() hands a
	 * copy over with each list. */
	struct extres_driver_info info;
};

/* What the sink callbacks work on during one discover() call. */
struct discovery {
	struct extres_infos *infos;
	int failed; /* the first sink failure (-errno), 0 if none */
	struct extres_err err;
};

/* Given to a driver whose resource has no params at all. */
static const struct extres_param no_params = { .kind = EXTRES_PARAM_MAPPING };

static void host_log(const struct extres_host *host, int32_t level,
		     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void host_log(const struct extres_host *host, int32_t level,
		     const char *fmt, ...)
{
	const struct extres_driver *drv = host->core;
	char msg[EXTRES_ERR_MAX];
	va_list ap;

	/* A driver cannot raise an alert or emergency on the host's behalf. */
	if (level < EXTRES_LOG_ERR)
		level = EXTRES_LOG_ERR;
	if (level > EXTRES_LOG_DEBUG)
		level = EXTRES_LOG_DEBUG;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	extres_log(level, "resource '%s': driver '%s': %s", host->resource,
		   OPS(drv)->name, msg);
}

static int32_t host_error(const struct extres_host *host, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int32_t host_error(const struct extres_host *host, const char *fmt, ...)
{
	struct extres_driver *drv = host->core;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(drv->error, sizeof(drv->error), fmt, ap);
	va_end(ap);
	drv->has_error = 1;
	return -EINVAL;
}

static int remember_vetted(struct extres_driver *drv, const char *path,
			   const char *what)
{
	struct vetted *v;

	v = realloc(drv->vetted, (drv->n_vetted + 1) * sizeof(*v));
	if (!v)
		goto oom;
	drv->vetted = v;
	v = &drv->vetted[drv->n_vetted];
	v->path = strdup(path);
	v->what = strdup(what ? what : "file");
	if (!v->path || !v->what) {
		free(v->path);
		free(v->what);
		goto oom;
	}
	drv->n_vetted++;
	return 0;
oom:
	snprintf(drv->error, sizeof(drv->error), "out of memory");
	drv->has_error = 1;
	return -ENOMEM;
}

static int32_t host_check_trusted(const struct extres_host *host,
				  const char *path, const char *what)
{
	struct extres_driver *drv = host->core;
	struct extres_err err;
	int r;

	/* The file may be root's (/usr/bin/timeout) and still do another
	 * user's bidding through the args that user's config gives it. */
	if (drv->config_untrusted) {
		extres_err_set(
			&err, EPERM,
			"refusing %s %s, named by a config root does not trust: %s",
			what, path, drv->config_untrusted);
		r = -EPERM;
	} else {
		r = extres_check_trusted(path, what, &err);
	}
	if (r < 0) {
		snprintf(drv->error, sizeof(drv->error), "%s", err.msg);
		drv->has_error = 1;
	} else if (drv->opening) {
		r = remember_vetted(drv, path, what);
	}
	return r;
}

/* Every file open() had vetted must still pass; 0 or -errno with `err`. */
static int check_vetted(const struct extres_driver *drv, struct extres_err *err)
{
	struct extres_err why;
	size_t i;
	int r;

	for (i = 0; i < drv->n_vetted; i++) {
		r = extres_check_trusted(drv->vetted[i].path,
					 drv->vetted[i].what, &why);
		if (r < 0)
			return extres_err_set(
				err, -r, "resource '%s': driver '%s': %s",
				drv->host.resource, OPS(drv)->name, why.msg);
	}
	return 0;
}

/* The signals stay pending until the control thread reads them (or main()
 * gives up the start-up): asking is enough, and never consumes one. */
static int32_t host_stop_requested(const struct extres_host *host)
{
	(void)host;
	return extres_stop_pending();
}

static int32_t host_coordinated_by(const struct extres_host *host,
				   const char *file, const char *how)
{
	struct extres_driver *drv = host->core;

	return extres_driver_info_set_coordination(&drv->info, file, how);
}

static int32_t host_request_refresh(const struct extres_host *host)
{
	struct extres_driver *drv = host->core;
	uint64_t one = 1;
	int fd;

	atomic_store(&drv->refresh_wanted, 1);
	fd = atomic_load(&drv->wake_fd);
	/* A full eventfd (EAGAIN) is already readable: nothing is lost. */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
	}
	return 0;
}

void extres_driver_set_wake_fd(struct extres_driver *drv, int fd)
{
	atomic_store(&drv->wake_fd, fd);
}

int extres_driver_take_refresh_request(struct extres_driver *drv)
{
	return atomic_exchange(&drv->refresh_wanted, 0);
}

/* Turn a driver callback's result into our error, with the driver's own
 * message if it gave one. */
static int driver_failed(struct extres_driver *drv, const char *op, int32_t r,
			 struct extres_err *err)
{
	const char *resource = drv->host.resource, *name = OPS(drv)->name;

	if (r > 0)
		return extres_err_set(
			err, EPROTO,
			"resource '%s': driver '%s': %s() returned %d, not 0 or a negative errno",
			resource, name, op, r);
	/* Anything past the errno range is a driver bug; keep it negative. */
	if (r < -4095)
		r = -EIO;
	if (drv->has_error)
		return extres_err_set(err, -r, "resource '%s': driver '%s': %s",
				      resource, name, drv->error);
	return extres_err_set(err, -r, "resource '%s': driver '%s': %s",
			      resource, name, strerror(-r));
}

/* A deep copy of `src` into *dst, which extres_param_clear() frees. */
static int param_copy(const struct extres_param *src, struct extres_param *dst)
{
	struct extres_param *items;
	uint32_t i;

	*dst = (struct extres_param){ .kind = src->kind,
				      .line = src->line,
				      .column = src->column };
	if ((src->key && !(dst->key = strdup(src->key))) ||
	    (src->value && !(dst->value = strdup(src->value))))
		goto fail;
	if (src->count) {
		items = calloc(src->count, sizeof(*items));
		if (!items)
			goto fail;
		dst->items = items;
		/* Counted as copied, so that a failure frees exactly those. */
		for (i = 0; i < src->count; i++, dst->count++)
			if (param_copy(&src->items[i], &items[i]) < 0)
				goto fail;
	}
	return 0;
fail:
	extres_param_clear(dst);
	return -ENOMEM;
}

static int copy_text(const char *src, char **ret)
{
	*ret = NULL;
	if (src && !(*ret = strdup(src)))
		return -ENOMEM;
	return 0;
}

/* Frees what an instance owns besides the module and the handle. */
static void driver_free(struct extres_driver *drv)
{
	size_t i;

	free(drv->settings.name);
	free(drv->settings.driver);
	free(drv->settings.coordination_file);
	free(drv->settings.coordination_key);
	extres_param_clear(&drv->params);
	free(drv->config_path);
	free(drv->config_dir);
	free(drv->config_untrusted);
	for (i = 0; i < drv->n_vetted; i++) {
		free(drv->vetted[i].path);
		free(drv->vetted[i].what);
	}
	free(drv->vetted);
	extres_driver_info_clear(&drv->info);
	free(drv);
}

static int copy_settings(struct extres_driver *drv,
			 const struct extres_config *config,
			 const struct extres_resource_config *res)
{
	struct extres_resource_config *s = &drv->settings;

	if (copy_text(res->name, &s->name) < 0 ||
	    copy_text(res->driver, &s->driver) < 0 ||
	    copy_text(res->coordination_file, &s->coordination_file) < 0 ||
	    copy_text(res->coordination_key, &s->coordination_key) < 0 ||
	    copy_text(config->path, &drv->config_path) < 0 ||
	    copy_text(config->dir, &drv->config_dir) < 0 ||
	    copy_text(config->untrusted, &drv->config_untrusted) < 0 ||
	    param_copy(res->params ? res->params : &no_params, &drv->params) <
		    0)
		return -ENOMEM;
	s->amount = res->amount;
	s->pool = res->pool;
	s->params = &drv->params;
	return 0;
}

int extres_driver_open(const struct extres_config *config,
		       const struct extres_resource_config *res,
		       struct extres_driver **ret, struct extres_err *err)
{
	struct extres_driver *drv;
	void *handle = NULL;
	char *path = NULL;
	int r;

	r = extres_driver_find(res->driver, &path, err);
	if (r < 0)
		return extres_err_prefix(err, -r, "resource '%s'", res->name);

	drv = calloc(1, sizeof(*drv));
	if (!drv || copy_settings(drv, config, res) < 0) {
		r = extres_err_set(err, ENOMEM, "resource '%s': out of memory",
				   res->name);
		goto fail;
	}
	/* A module by name is one of ours; by path, the config chose it. */
	if (res->driver && res->driver[0] == '/' && config->untrusted) {
		r = extres_err_set(
			err, EPERM,
			"resource '%s': refusing driver module %s, named by a config root does not trust: %s",
			res->name, path, config->untrusted);
		goto fail;
	}
	r = extres_module_load(path, &drv->module, err);
	if (r < 0) {
		extres_err_prefix(err, -r, "resource '%s'", res->name);
		goto fail;
	}

	drv->host = (struct extres_host){
		.abi_version = EXTRES_DRIVER_ABI_VERSION,
		.struct_size = sizeof(struct extres_host),
		.resource = drv->settings.name,
		.config_path = drv->config_path ? drv->config_path : "",
		.config_dir = drv->config_dir ? drv->config_dir : "",
		/* A pool asks for every device, a range for its most (a
		 * script prints at most its amount). */
		.amount = res->pool ? EXTRES_MAX_AMOUNT : res->amount.max,
		.log = host_log,
		.error = host_error,
		.core = drv,
		.check_trusted_path = host_check_trusted,
		.stop_requested = host_stop_requested,
		.coordinated_by = host_coordinated_by,
		.request_refresh = host_request_refresh,
	};
	atomic_init(&drv->wake_fd, -1);
	atomic_init(&drv->refresh_wanted, 0);
	if (extres_driver_info_from_ops(OPS(drv), &drv->info) < 0) {
		r = extres_err_set(err, ENOMEM, "resource '%s': out of memory",
				   res->name);
		goto fail;
	}

	drv->has_error = 0;
	drv->opening = 1;
	r = OPS(drv)->open(&drv->host, &drv->params, &handle);
	drv->opening = 0;
	if (r != 0) {
		/* A positive result is no success either: the driver broke
		 * the contract and may not have made a handle to close. */
		r = driver_failed(drv, "open", r, err);
		goto fail;
	}
	drv->handle = handle;
	drv->refs = 1;
	free(path);
	*ret = drv;
	return 0;
fail:
	if (drv) {
		extres_module_unload(drv->module);
		driver_free(drv);
	}
	free(path);
	return r;
}

int extres_driver_serves(const struct extres_driver *drv,
			 const struct extres_config *config,
			 const struct extres_resource_config *res)
{
	struct extres_resource_config want = *res;

	if (!want.params)
		want.params = (struct extres_param *)&no_params;
	/* The host's strings and what the driver may run (the config's
	 * trust) are part of what open() was given. */
	return extres_resource_config_same(&drv->settings, &want) &&
	       extres_same_text(drv->config_path, config->path) &&
	       extres_same_text(drv->config_dir, config->dir) &&
	       extres_same_text(drv->config_untrusted, config->untrusted);
}

struct extres_driver *extres_driver_ref(struct extres_driver *drv)
{
	drv->refs++;
	return drv;
}

static int32_t sink_begin_info(struct extres_sink *sink)
{
	struct discovery *d = sink->core;
	int r;

	/* After a failure nothing more is taken, whether or not the driver
	 * noticed: the whole discovery fails with the first message. */
	if (d->failed)
		return d->failed;
	r = extres_infos_begin(d->infos, &d->err);
	if (r < 0)
		d->failed = r;
	return r;
}

static int32_t sink_add_property(struct extres_sink *sink, const char *key,
				 const char *value)
{
	struct discovery *d = sink->core;
	int r;

	if (d->failed)
		return d->failed;
	if (!key || !value)
		r = extres_err_set(
			&d->err, EINVAL, "property '%s' given with a NULL %s",
			key ? key : "(null)", key ? "value" : "name");
	else
		r = extres_infos_add(d->infos, key, value, &d->err);
	if (r < 0)
		d->failed = r;
	return r;
}

int extres_driver_discover(struct extres_driver *drv,
			   struct extres_infos **ret_infos,
			   struct extres_err *err)
{
	struct discovery d = { 0 };
	struct extres_sink sink = {
		.struct_size = sizeof(struct extres_sink),
		.begin_info = sink_begin_info,
		.add_property = sink_add_property,
		.core = &d,
	};
	int r;

	r = check_vetted(drv, err);
	if (r < 0)
		return r;
	r = extres_infos_new(&d.infos);
	if (r < 0)
		return extres_err_set(err, -r, "resource '%s': out of memory",
				      drv->host.resource);

	drv->has_error = 0;
	r = OPS(drv)->discover(drv->handle, &sink);
	/* The sink's complaint comes first: it is the cause, and a driver
	 * that went on regardless must not get away with a partial list. */
	if (d.failed)
		r = extres_err_set(
			err, -d.failed, "resource '%s': driver '%s': %s",
			drv->host.resource, OPS(drv)->name, d.err.msg);
	else if (r != 0)
		r = driver_failed(drv, "discover", r, err);
	if (r == 0 && extres_driver_info_copy(&drv->info, &d.infos->driver) < 0)
		r = extres_err_set(err, ENOMEM, "resource '%s': out of memory",
				   drv->host.resource);
	if (r < 0) {
		extres_infos_free(d.infos);
		return r;
	}
	*ret_infos = d.infos;
	return 0;
}

void extres_driver_close(struct extres_driver *drv)
{
	if (!drv || --drv->refs > 0)
		return;
	OPS(drv)->close(drv->handle);
	extres_module_unload(drv->module);
	driver_free(drv);
}

const char *extres_driver_name(const struct extres_driver *drv)
{
	return OPS(drv)->name;
}

const struct extres_driver_info *
extres_driver_get_info(const struct extres_driver *drv)
{
	return &drv->info;
}
