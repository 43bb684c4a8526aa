/* SPDX-License-Identifier: MIT */
#include "host/module.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extres_build.h"
#include "base/fileio.h"
#include "base/macro.h"
#include "base/text.h"
#include "host/driver_info.h"
#include "os/trust.h"

/* The smallest ops table a version-1 module can have: everything up to and
 * including close(). Members appended later are optional by construction. */
#define OPS_MIN_SIZE \
	(offsetof(struct extres_driver_ops, close) + sizeof(void (*)(void)))

/* Bare names become file names "<name>.so" in a directory. */
#define NAME_MAX_LEN (NAME_MAX - 3)

struct extres_module {
	void *dl;
	char *path;
	/* A copy of the module's table, zero-filled past its struct_size so
	 * that members a module predates read as NULL. */
	struct extres_driver_ops ops;
};

static int valid_name(const char *name)
{
	size_t n;

	for (n = 0; name[n]; n++) {
		char c = name[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return 0;
	}
	return n > 0 && n <= NAME_MAX_LEN;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The drivers in `dir` ("NAME" of each regular NAME.so), sorted, joined by
 * ", " onto `f`; the names seen also go to names[*n] (at most `max`, the
 * caller frees them). Nothing when the directory cannot be read: the
 * message then says "none".
 */
static void list_dir(const char *dir, FILE *f, char **names, size_t *n,
		     size_t max)
{
	size_t first = *n, i, len;
	struct dirent *de;
	struct stat st;
	DIR *d;

	d = opendir(dir);
	while (d && (de = readdir(d)) && *n < max) {
		len = strlen(de->d_name);
		if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		names[*n] = strndup(de->d_name, len - 3);
		if (names[*n] && valid_name(names[*n]))
			(*n)++;
		else
			free(names[*n]);
	}
	if (d)
		closedir(d);
	qsort(names + first, *n - first, sizeof(*names), compare_names);
	for (i = first; i < *n; i++)
		fprintf(f, "%s%s", i > first ? ", " : "", names[i]);
	fprintf(f, "%s in %s", *n > first ? "" : "none", dir);
}

/* "not found", with the drivers that are there, and the one `driver` may
 * be a typo of: what the user most likely meant to write. */
static int not_found(const char *driver, const char *const *dirs, size_t n_dirs,
		     struct extres_err *err)
{
	char *names[64], *found = NULL;
	const char *near;
	size_t n = 0, size, i;
	FILE *f;
	int r;

	f = open_memstream(&found, &size);
	if (!f)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < n_dirs; i++) {
		fputs(i ? "; " : "", f);
		list_dir(dirs[i], f, names, &n, ARRAY_SIZE(names));
	}
	if (extres_memstream_close(f, &found) < 0) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	near = extres_nearest(driver, (const char *const *)names, n);
	r = extres_err_set(err, ENOENT,
			   "driver '%s' not found; %s%s%sdrivers found: %s",
			   driver, near ? "did you mean " : "",
			   near ? near : "", near ? "? " : "", found);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(found);
	return r;
}

int extres_driver_find(const char *driver, char **ret_path,
		       struct extres_err *err)
{
	const char *dirs[2];
	size_t n_dirs = 0, i;
	char *exe_dir = NULL, *path = NULL;
	int r;

	if (!driver)
		driver = "";
	if (driver[0] == '/') {
		path = strdup(driver);
		if (!path)
			return extres_err_set(err, ENOMEM, "out of memory");
		*ret_path = path;
		return 0;
	}
	if (!valid_name(driver))
		return extres_err_set(
			err, EINVAL,
			"invalid driver name '%s': neither a name of "
			"letters, digits, '_' and '-' nor an absolute path",
			driver);

	r = extres_exe_sibling("drivers", &exe_dir);
	if (r < 0)
		return extres_err_set(err, -r, "out of memory");
	if (exe_dir)
		dirs[n_dirs++] = exe_dir;
	if (!exe_dir || strcmp(exe_dir, EXTRES_DRIVER_DIR) != 0)
		dirs[n_dirs++] = EXTRES_DRIVER_DIR;

	for (i = 0; i < n_dirs; i++) {
		struct stat st;

		if (asprintf(&path, "%s/%s.so", dirs[i], driver) < 0) {
			path = NULL;
			r = extres_err_set(err, ENOMEM, "out of memory");
			goto out;
		}
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			*ret_path = path;
			path = NULL;
			r = 0;
			goto out;
		}
		free(path);
		path = NULL;
	}
	r = not_found(driver, dirs, n_dirs, err);
out:
	free(exe_dir);
	return r;
}

/* A prefix goes unquoted into specs and single-quoted into .meta/env. */
static int id_prefix_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.:-", s[i])))
			return 0;
	return i >= 1 && i <= EXTRES_ENV_ID_PREFIX_MAX;
}

/* An env_fixed entry that breaks <extres/driver.h>'s rules, in *ret_bad
 * (-EINVAL), else 0. Values are written unquoted in CDI specs and between
 * single quotes in .meta/env: only harmless bytes. */
static int env_fixed_problem(const struct extres_driver_ops *ops,
			     const char **ret_bad)
{
	const char *const *e;
	const char *eq;
	char name[256];
	size_t len;

	for (e = ops->env_fixed; e && *e; e++) {
		*ret_bad = *e;
		eq = strchr(*e, '=');
		len = eq ? (size_t)(eq - *e) : 0;
		if (!eq || len == 0 || len >= sizeof(name) || !eq[1] ||
		    strlen(eq + 1) > 255 ||
		    strspn(eq + 1, "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_.,:+-") != strlen(eq + 1))
			return -EINVAL;
		memcpy(name, *e, len);
		name[len] = '\0';
		if (extres_check_env_var_name(name) < 0 ||
		    (ops->env_var && strcmp(name, ops->env_var) == 0))
			return -EINVAL;
	}
	return 0;
}

int extres_module_load(const char *path, struct extres_module **ret,
		       struct extres_err *err)
{
	const struct extres_driver_ops *ops;
	const char *bad = NULL, *const * node;
	struct extres_module *m;
	extres_driver_entry_fn entry;
	const char *missing = NULL;
	void *sym;
	size_t size;
	int r;

	m = calloc(1, sizeof(*m));
	if (!m)
		return extres_err_set(err, ENOMEM, "out of memory");
	m->path = strdup(path);
	if (!m->path) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}

	/* dlopen() runs the module's constructors: with our rights, so it
	 * must be ours. A missing file is never handed to dlopen(): a
	 * directory missing on the way may be made by anyone before the
	 * loader looks. The message is the loader's own. */
	r = extres_check_trusted(path, "driver module", err);
	if (r == -ENOENT) {
		r = extres_err_set(
			err, ENOENT,
			"cannot load driver module '%s': %s: cannot open shared object file: %s",
			path, path, strerror(ENOENT));
		goto fail;
	}
	if (r < 0)
		goto fail;

	m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!m->dl) {
		const char *why = dlerror();

		/* dlopen() sets no errno; tell a missing file from a bad one. */
		r = extres_err_set(err,
				   access(path, F_OK) == 0 ? ELIBBAD : ENOENT,
				   "cannot load driver module '%s': %s", path,
				   why ? why : "unknown error");
		goto fail;
	}

	dlerror();
	sym = dlsym(m->dl, EXTRES_DRIVER_ENTRY_SYMBOL);
	if (!sym) {
		const char *why = dlerror();

		r = extres_err_set(
			err, ELIBBAD,
			"%s: not a driver module: no symbol '%s' (%s)", path,
			EXTRES_DRIVER_ENTRY_SYMBOL,
			why ? why : "its value is NULL");
		goto fail;
	}
	entry = (extres_driver_entry_fn)sym;

	ops = entry();
	if (!ops) {
		r = extres_err_set(err, ELIBBAD,
				   "%s: %s() returned no ops table", path,
				   EXTRES_DRIVER_ENTRY_SYMBOL);
		goto fail;
	}
	/* The first two members are the same in every version. */
	if (ops->abi_version != EXTRES_DRIVER_ABI_VERSION) {
		r = extres_err_set(
			err, EPROTO,
			"%s: driver ABI version %u, this extres speaks %u",
			path, ops->abi_version, EXTRES_DRIVER_ABI_VERSION);
		goto fail;
	}
	if (ops->struct_size < OPS_MIN_SIZE) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver ops table is %u bytes, this extres needs at least %zu",
			path, ops->struct_size, OPS_MIN_SIZE);
		goto fail;
	}
	size = ops->struct_size < sizeof(m->ops) ? ops->struct_size :
						   sizeof(m->ops);
	memcpy(&m->ops, ops, size);

	if (!m->ops.open)
		missing = "open";
	else if (!m->ops.discover)
		missing = "discover";
	else if (!m->ops.close)
		missing = "close";
	if (missing) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver does not set the required op '%s'", path,
			missing);
		goto fail;
	}
	if (!m->ops.name) {
		r = extres_err_set(err, ELIBBAD, "%s: driver has no name",
				   path);
		goto fail;
	}
	/* .meta/env writes the name unquoted: it must be an identifier. */
	if (m->ops.env_var && extres_check_env_var_name(m->ops.env_var) < 0) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver's env_var '%s' is not a shell variable name",
			path, m->ops.env_var);
		goto fail;
	}
	if (env_fixed_problem(&m->ops, &bad) < 0) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver's env_fixed entry '%s' is not NAME=VALUE with a shell variable name other than env_var and a value of letters, digits and \"_.,:+-\"",
			path, bad);
		goto fail;
	}
	for (node = m->ops.control_nodes; node && *node; node++)
		if (!extres_is_dev_path(*node)) {
			r = extres_err_set(
				err, ELIBBAD,
				"%s: driver's control node '%s' is not a path under /dev/",
				path, *node);
			goto fail;
		}
	for (node = m->ops.cdi_base_specs; node && *node; node++)
		if ((*node)[0] != '/') {
			r = extres_err_set(
				err, ELIBBAD,
				"%s: driver's CDI base spec '%s' is not an absolute path",
				path, *node);
			goto fail;
		}
	if (m->ops.env_form > EXTRES_ENV_FORM_HEX_ID) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver's env_form %u is unknown to this extres",
			path, m->ops.env_form);
		goto fail;
	}
	if (m->ops.env_id_prefix && !id_prefix_ok(m->ops.env_id_prefix)) {
		r = extres_err_set(
			err, ELIBBAD,
			"%s: driver's env_id_prefix '%s' is not 1 to %d letters, digits and \"_.:-\"",
			path, m->ops.env_id_prefix, EXTRES_ENV_ID_PREFIX_MAX);
		goto fail;
	}
	r = extres_driver_info_check_labels(m->ops.metric_labels, path, err);
	if (r < 0)
		goto fail;

	*ret = m;
	return 0;
fail:
	extres_module_unload(m);
	return r;
}

const struct extres_driver_ops *extres_module_ops(const struct extres_module *m)
{
	return &m->ops;
}

void extres_module_unload(struct extres_module *m)
{
	if (!m)
		return;
	if (m->dl)
		dlclose(m->dl);
	free(m->path);
	free(m);
}
