/* SPDX-License-Identifier: MIT */
/*
 * The "sysfs" driver: devices found by a glob, properties read from their
 * attribute files (RDMA NICs, FPGAs, anything sysfs describes).
 *
 *   param.glob: /sys/class/infiniband/mlx5_*  required; glob(3) syntax. A
 *                                           relative pattern is taken from
 *                                           the config file's directory.
 *   param.attributes: node_guid,fw_ver       optional; comma list, or a YAML
 *                                           sequence of names
 *
 * Each match is one info, in the natural order of the matches' base names
 * ("mlx5_2" before "mlx5_10"; PCI addresses by their hex fields,
 * "0000:07:00.0" before "0000:0f:00.0"; equal names in path order), with:
 *
 *   index   its position in that order, from 0
 *   name    the match's base name ("mlx5_0")
 *   path    the match as glob(3) returned it
 *   <attr>  per listed attribute, the content of <path>/<attr> trimmed of
 *           surrounding whitespace. An attribute in a subdirectory
 *           ("device/numa_node") becomes a property with each '/' replaced
 *           by '.' ("device.numa_node"), since a property is one file name.
 *
 * An attribute that cannot be read on a device (missing, unreadable, not a
 * regular file, empty, more than one line, over 4096 bytes - a sysfs page -)
 * is absent from that device's info, with a warning naming the device and
 * the attribute; the other devices and attributes are unaffected.
 *
 * A pattern that matches nothing gives no infos and no error of our own: the
 * core then reports how many it wanted and found. A directory on the way that
 * does not exist counts as no match; one that cannot be read (permissions, a
 * symlink loop, I/O) fails discovery with a message naming the pattern.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#include "sysfs_util.h"
#include "lib/identity.h"
#include "lib/param_list.h"
#include "text_scan.h"

#define PARAM_GLOB "glob"
#define PARAM_ATTRIBUTES "attributes"

static const char *const known_params[] = { PARAM_GLOB, PARAM_ATTRIBUTES,
					    NULL };
static const char *const list_params[] = { PARAM_ATTRIBUTES, NULL };

/* A property name is a file name in the mount, and the core's limit. */
#define PROPERTY_MAX 255

struct attribute {
	char *file; /* relative to the match: "device/numa_node" */
	char *property; /* "device.numa_node" */
};

struct sysfs_driver {
	const struct extres_host *host;
	char *pattern; /* absolute, or as given when the config has no dir */
	size_t n_attrs;
	struct attribute *attrs;
};

struct match {
	const char *path; /* into the glob result */
	char *name;
};

/* The properties every info has; an attribute may not take their names. */
static const char *const builtin[] = { "index", "name", "path" };

static void sysfs_free(struct sysfs_driver *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_attrs; i++) {
		free(d->attrs[i].file);
		free(d->attrs[i].property);
	}
	free(d->attrs);
	free(d->pattern);
	free(d);
}

/* Why `file` cannot name an attribute, or NULL if it can. */
static const char *bad_attribute(const char *file, size_t len)
{
	const char *c = file, *end = file + len, *slash;
	size_t i;

	if (file[0] == '/')
		return "is an absolute path; attributes are relative to each match";
	for (i = 0; i < len; i++)
		if (text_is_space(file[i]) || (unsigned char)file[i] < 0x20)
			return "contains whitespace or a control character";
	for (;; c = slash + 1) {
		slash = memchr(c, '/', (size_t)(end - c));
		if (!slash)
			slash = end;
		if (slash == c)
			return "has an empty path component";
		if ((slash - c == 1 && c[0] == '.') ||
		    (slash - c == 2 && c[0] == '.' && c[1] == '.'))
			return "has a '.' or '..' path component";
		if (slash == end)
			break;
	}
	if (file[0] == '.')
		return "starts with '.', and would make a hidden property name";
	if (len > PROPERTY_MAX)
		return "is longer than 255 bytes";
	return NULL;
}

/* Check and keep one attribute name of `len` bytes (trimmed by the caller). */
static int32_t add_attribute(struct sysfs_driver *d,
			     const struct extres_param *at, const char *file,
			     size_t len)
{
	const struct extres_host *host = d->host;
	struct attribute *a;
	const char *why;
	char *p;
	size_t i;

	why = bad_attribute(file, len);
	if (why)
		return extres_param_error(
			host, at, "param.attributes: attribute '%.*s' %s",
			(int)len, file, why);
	a = &d->attrs[d->n_attrs];
	a->file = strndup(file, len);
	a->property = strndup(file, len);
	if (!a->file || !a->property) {
		free(a->file);
		free(a->property);
		return -ENOMEM;
	}
	d->n_attrs++;
	for (p = a->property; *p; p++)
		if (*p == '/')
			*p = '.';
	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (strcmp(a->property, builtin[i]) == 0)
			return extres_param_error(
				host, at,
				"param.attributes: attribute '%s' would replace the built-in property '%s' (index, name and path are given for every device)",
				a->file, a->property);
	for (i = 0; i + 1 < d->n_attrs; i++)
		if (strcmp(d->attrs[i].property, a->property) == 0)
			return extres_param_error(
				host, at,
				"param.attributes: attributes '%s' and '%s' both make the property '%s'",
				d->attrs[i].file, a->file, a->property);
	return 0;
}

static const struct param_list_words attributes_words = {
	.name = PARAM_ATTRIBUTES,
	.example = "node_guid,fw_ver",
	.items = "names",
	.item = "an attribute name",
};

static int32_t parse_attributes(struct sysfs_driver *d,
				const struct extres_param *attrs)
{
	struct param_list_cursor cursor = PARAM_LIST_START;
	const struct extres_param *at;
	const char *s;
	size_t bound, len;
	int32_t r;

	r = param_list_check(d->host, &attributes_words, attrs, &bound);
	if (r < 0)
		return r;
	d->attrs = calloc(bound, sizeof(*d->attrs));
	if (!d->attrs)
		return -ENOMEM;
	while (param_list_next(attrs, &cursor, &at, &s, &len)) {
		r = add_attribute(d, at, s, len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Prefix a relative pattern with the config directory, its glob
 * metacharacters escaped so that they match only themselves. */
static int32_t make_pattern(struct sysfs_driver *d, const char *glob_text)
{
	const char *dir = d->host->config_dir, *c;
	char *p;

	if (glob_text[0] == '/' || !dir || !*dir) {
		d->pattern = strdup(glob_text);
		return d->pattern ? 0 : -ENOMEM;
	}
	d->pattern = malloc(2 * strlen(dir) + strlen(glob_text) + 2);
	if (!d->pattern)
		return -ENOMEM;
	p = d->pattern;
	for (c = dir; *c; c++) {
		if (strchr("*?[]\\", *c))
			*p++ = '\\';
		*p++ = *c;
	}
	if (p[-1] != '/')
		*p++ = '/';
	strcpy(p, glob_text);
	return 0;
}

static int32_t sysfs_open(const struct extres_host *host,
			  const struct extres_param *params, void **ret_handle)
{
	const struct extres_param *glob_p, *attrs, *p;
	struct sysfs_driver *d = NULL;
	int32_t r;

	p = param_list_flattened(params, list_params);
	if (p)
		return extres_param_error(
			host, p,
			"param.attributes must be a list, not a mapping (found param.%s)",
			p->key);
	extres_params_warn_unknown(host, params, known_params);
	glob_p = extres_param_get(params, PARAM_GLOB);
	attrs = extres_param_get(params, PARAM_ATTRIBUTES);
	if (!glob_p)
		return host->error(
			host,
			"%s: param.glob is not set; it finds the devices, e.g. /sys/class/infiniband/*",
			host->config_path);
	if (glob_p->kind != EXTRES_PARAM_SCALAR || glob_p->value[0] == '\0')
		return extres_param_error(
			host, glob_p,
			"param.glob must be a non-empty pattern such as /sys/class/infiniband/*");

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->host = host;
	r = make_pattern(d, glob_p->value);
	if (r == 0 && attrs)
		r = parse_attributes(d, attrs);
	if (r < 0)
		goto fail;
	*ret_handle = d;
	return 0;
fail:
	sysfs_free(d);
	return r;
}

static int glob_error(const char *epath, int eerrno)
{
	/* A directory that is not there (or went away with its device) is
	 * no match; anything else would hide devices, so it stops the glob. */
	(void)epath;
	return eerrno != ENOENT && eerrno != ENOTDIR;
}

/*
 * After GLOB_ABORTED, find which directory could not be read: glob(3) does
 * not say, and its error callback has no way to hand it back. Tries each
 * leading run of the pattern without metacharacters, deepest first.
 */
static void explain_abort(const char *pattern, char *why, size_t len)
{
	char *prefix = strdup(pattern), *slash;
	DIR *dir;

	snprintf(why, len, "cannot read a directory on the way");
	if (!prefix)
		return;
	slash = strpbrk(prefix, "*?[\\");
	if (slash)
		*slash = '\0';
	while ((slash = strrchr(prefix, '/'))) {
		slash[slash == prefix] = '\0';
		dir = opendir(prefix);
		if (!dir) {
			int e = errno;

			if (e != ENOENT && e != ENOTDIR) {
				snprintf(why, len, "cannot read %s: %s", prefix,
					 strerror(e));
				break;
			}
		} else {
			closedir(dir);
			break;
		}
		if (slash == prefix)
			break;
	}
	free(prefix);
}

static int compare_matches(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	int c = sysfs_natcmp(x->name, y->name);

	return c != 0 ? c : strcmp(x->path, y->path);
}

/* The base name of a match; glob(3) may end a directory with '/'. */
static char *base_name(const char *path)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (start == end) /* "/" itself */
		return strdup(path);
	return strndup(path + start, end - start);
}

static int32_t add_attributes(const struct sysfs_driver *d,
			      const struct match *m, struct extres_sink *sink)
{
	const struct extres_host *host = d->host;
	const char *value, *why;
	struct sysfs_buf *buf;
	char *file;
	size_t i;
	int32_t r = 0;

	buf = malloc(sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (i = 0; r == 0 && i < d->n_attrs; i++) {
		const struct attribute *a = &d->attrs[i];
		size_t n = strlen(m->path);

		if (asprintf(&file, "%s%s%s", m->path,
			     n > 0 && m->path[n - 1] == '/' ? "" : "/",
			     a->file) < 0) {
			r = -ENOMEM;
			break;
		}
		if (sysfs_read_value(file, buf, &value, &why) < 0)
			host->log(
				host, EXTRES_LOG_WARNING,
				"device %s: attribute %s (%s): %s; property %s left out",
				m->name, a->file, file, why, a->property);
		else
			r = sink->add_property(sink, a->property, value);
		free(file);
	}
	free(buf);
	return r;
}

static int32_t sysfs_discover(void *handle, struct extres_sink *sink)
{
	const struct sysfs_driver *d = handle;
	const struct extres_host *host = d->host;
	struct match *matches = NULL;
	glob_t g = { 0 };
	char why[512], index[24];
	size_t i, n = 0;
	int32_t r;

	r = glob(d->pattern, GLOB_NOSORT, glob_error, &g);
	if (r == GLOB_NOMATCH) {
		r = 0;
		goto out;
	}
	if (r == GLOB_NOSPACE) {
		r = -ENOMEM;
		goto out;
	}
	if (r != 0) {
		explain_abort(d->pattern, why, sizeof(why));
		host->error(host, "param.glob '%s': %s", d->pattern, why);
		r = -EIO;
		goto out;
	}

	matches = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof(*matches));
	if (!matches) {
		r = -ENOMEM;
		goto out;
	}
	for (n = 0; n < g.gl_pathc; n++) {
		matches[n].path = g.gl_pathv[n];
		matches[n].name = base_name(g.gl_pathv[n]);
		if (!matches[n].name) {
			r = -ENOMEM;
			goto out;
		}
	}
	qsort(matches, n, sizeof(*matches), compare_matches);

	for (i = 0; i < n; i++) {
		snprintf(index, sizeof(index), "%zu", i);
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", index);
		if (r == 0)
			r = sink->add_property(sink, "name", matches[i].name);
		if (r == 0)
			r = sink->add_property(sink, "path", matches[i].path);
		if (r == 0)
			r = add_attributes(d, &matches[i], sink);
		if (r < 0)
			goto out;
	}
out:
	if (r == -ENOMEM)
		host->error(host, "out of memory");
	for (i = 0; matches && i < n; i++)
		free(matches[i].name);
	free(matches);
	globfree(&g);
	return r;
}

static void sysfs_close(void *handle)
{
	sysfs_free(handle);
}

EXTRES_DRIVER_REGISTER(.name = "sysfs", .open = sysfs_open,
		       .discover = sysfs_discover, .close = sysfs_close,
		       .identity_keys = identity_keys_usual)
