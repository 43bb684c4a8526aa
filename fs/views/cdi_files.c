/* SPDX-License-Identifier: MIT */
/* CDI spec files in a directory; see views/cdi_files.h. */
#include "views/cdi_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/text.h"
#include "config/name.h"
#include "os/trust.h"

/* One resource's spec: its name, decoded, and the spec's text in the
 * view (not NUL-terminated). */
struct spec {
	char *name;
	const char *text;
	size_t len;
};

static int hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* A code point below U+10000 (what \uXXXX carries) in UTF-8. */
static void put_utf8(FILE *f, unsigned cp)
{
	if (cp < 0x80) {
		fputc((int)cp, f);
	} else if (cp < 0x800) {
		fputc((int)(0xc0 | cp >> 6), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	} else {
		fputc((int)(0xe0 | cp >> 12), f);
		fputc((int)(0x80 | ((cp >> 6) & 0x3f)), f);
		fputc((int)(0x80 | (cp & 0x3f)), f);
	}
}

/* The JSON string at *p (at its opening quote) decoded into *ret; *p moves
 * past the closing quote. Only what base/json.c writes is decoded: its
 * escapes, and \uXXXX for controls and U+2028/9 (nothing past U+FFFF, which
 * it writes as UTF-8). 0, -EINVAL or -ENOMEM. */
static int json_string(const char **p, char **ret)
{
	static const char esc[] = "\"\"\\\\b\bf\fn\nr\rt\t";
	const char *s = *p, *e;
	unsigned cp;
	size_t len = 0;
	char *out = NULL;
	FILE *f;

	if (*s++ != '"')
		return -EINVAL;
	f = open_memstream(&out, &len);
	if (!f)
		return -ENOMEM;
	while (*s && *s != '"') {
		if (*s != '\\') {
			fputc(*s++, f);
			continue;
		}
		s++;
		if (*s == 'u' && hex4(s + 1, &cp) == 0) {
			s += 5;
			put_utf8(f, cp);
			continue;
		}
		for (e = esc; *e && *e != *s; e += 2)
			;
		if (!*s || !*e)
			break;
		fputc(e[1], f);
		s++;
	}
	if (extres_memstream_close(f, &out) < 0)
		return -ENOMEM;
	if (*s != '"') {
		free(out);
		return -EINVAL;
	}
	*p = s + 1;
	*ret = out;
	return 0;
}

static void specs_free(struct spec *specs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(specs[i].name);
	free(specs);
}

/* The view's members: a line "NAME": SPEC[,] each, between "{" and "}". */
static int split_view(const char *view, struct spec **ret, size_t *ret_n,
		      struct extres_err *err)
{
	const char *line, *nl, *p, *end;
	struct spec *specs = NULL, *grown;
	size_t n = 0;
	int r = 0;

	if (!extres_starts_with(view, "{\n"))
		return extres_err_set(err, EINVAL,
				      ".meta/cdi.json does not start with '{'");
	for (line = view + 2; r == 0 && *line && *line != '}'; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		p = line;
		grown = realloc(specs, (n + 1) * sizeof(*specs));
		if (!grown) {
			r = extres_err_set(err, ENOMEM, "out of memory");
			break;
		}
		specs = grown;
		r = json_string(&p, &specs[n].name);
		if (r == -ENOMEM)
			r = extres_err_set(err, ENOMEM, "out of memory");
		if (r < 0 || strncmp(p, ": {", 3) != 0) {
			if (r == 0)
				free(specs[n].name);
			r = extres_err_set(
				err, EINVAL,
				".meta/cdi.json: line %zu is no \"NAME\": SPEC",
				n + 2);
			break;
		}
		end = nl;
		if (end[-1] == ',')
			end--;
		specs[n].text = p + 2;
		specs[n].len = (size_t)(end - specs[n].text);
		n++;
	}
	if (r == 0 && strcmp(line, "}\n") != 0)
		r = extres_err_set(err, EINVAL,
				   ".meta/cdi.json does not end with '}'");
	if (r < 0) {
		specs_free(specs, n);
		return r;
	}
	*ret = specs;
	*ret_n = n;
	return 0;
}

/* DIR/extres-NAME.json, through a temporary file in DIR. */
static int write_spec(const char *dir, const struct spec *s, FILE *report,
		      struct extres_err *err)
{
	char *tmp = NULL, *path = NULL;
	int fd = -1, r = 0;

	if (asprintf(&path,
		     "%s/" EXTRES_CDI_FILE_PREFIX "%s" EXTRES_CDI_FILE_SUFFIX,
		     dir, s->name) < 0) {
		path = NULL;
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	/* Hidden and without the suffix: runtimes skip it until renamed. No
	 * resource name in it, which could make it longer than NAME_MAX. */
	if (asprintf(&tmp, "%s/." EXTRES_CDI_FILE_PREFIX "XXXXXX", dir) < 0) {
		tmp = NULL;
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = extres_err_set(err, errno, "%s: %s", tmp, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	r = extres_write_all(fd, s->text, s->len);
	if (r == 0)
		r = extres_write_all(fd, "\n", 1);
	if (r == 0 && (fchmod(fd, 0644) < 0 || fsync(fd) < 0))
		r = -errno;
	if (r < 0) {
		r = extres_err_set(err, -r, "%s: %s", tmp, strerror(-r));
		goto out;
	}
	r = close(fd);
	fd = -1;
	if (r < 0) {
		r = extres_err_set(err, errno, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, path) < 0) {
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	if (report)
		fprintf(report, "%s\n", path);
out:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(path);
	return r;
}

/* The resource of a file name of ours, or NULL. */
static const char *resource_of(const char *file, size_t *ret_len)
{
	size_t len = strlen(file), pre = strlen(EXTRES_CDI_FILE_PREFIX),
	       suf = strlen(EXTRES_CDI_FILE_SUFFIX);

	if (len <= pre + suf ||
	    !extres_starts_with(file, EXTRES_CDI_FILE_PREFIX) ||
	    strcmp(file + len - suf, EXTRES_CDI_FILE_SUFFIX) != 0)
		return NULL;
	*ret_len = len - pre - suf;
	return file + pre;
}

/* Remove DIR/extres-*.json of resources no longer in the view: a runtime
 * would still give containers devices that are no longer ours. */
static int remove_stale(const char *dir, const struct spec *specs, size_t n,
			FILE *report, struct extres_err *err)
{
	const char *name;
	struct dirent *de;
	size_t len, i;
	DIR *d;
	int r = 0;

	d = opendir(dir);
	if (!d)
		return extres_err_set(err, errno, "%s: %s", dir,
				      strerror(errno));
	while ((de = readdir(d))) {
		name = resource_of(de->d_name, &len);
		if (!name)
			continue;
		for (i = 0; i < n; i++)
			if (strlen(specs[i].name) == len &&
			    memcmp(specs[i].name, name, len) == 0)
				break;
		if (i < n)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT) {
			r = extres_err_set(err, errno, "%s/%s: %s", dir,
					   de->d_name, strerror(errno));
			break;
		}
		if (report)
			fprintf(report, "removed %s/%s\n", dir, de->d_name);
	}
	closedir(d);
	return r;
}

/* The spec of `name` among specs, or NULL. */
static const struct spec *find_spec(const struct spec *specs, size_t n,
				    const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(specs[i].name, name) == 0)
			return &specs[i];
	return NULL;
}

/* DIR/extres-NAME.json gone; 0 when it was not there. */
static int remove_spec(const char *dir, const char *name, FILE *report,
		       struct extres_err *err)
{
	char *path;
	int r = 0;

	if (asprintf(&path,
		     "%s/" EXTRES_CDI_FILE_PREFIX "%s" EXTRES_CDI_FILE_SUFFIX,
		     dir, name) < 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	if (unlink(path) == 0) {
		if (report)
			fprintf(report, "removed %s\n", path);
	} else if (errno != ENOENT) {
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
	}
	free(path);
	return r;
}

/* The view's specs, every name one a file can be named after. */
static int checked_specs(const char *view, struct spec **ret, size_t *ret_n,
			 struct extres_err *err)
{
	const char *problem;
	size_t i;
	int r;

	r = split_view(view, ret, ret_n, err);
	for (i = 0; r == 0 && i < *ret_n; i++) {
		/* The daemon's names are entries of the mount already; a
		 * name that is no file name is no view of ours. */
		problem = extres_name_problem((*ret)[i].name);
		if (problem ||
		    strlen((*ret)[i].name) >
			    EXTRES_MAX_NAME_LEN -
				    strlen(EXTRES_CDI_FILE_PREFIX
						   EXTRES_CDI_FILE_SUFFIX))
			r = extres_err_set(
				err, EINVAL, ".meta/cdi.json: resource '%s' %s",
				(*ret)[i].name,
				problem ?
					problem :
					"is too long to be part of a file name");
	}
	if (r < 0) {
		specs_free(*ret, *ret_n);
		*ret = NULL;
		*ret_n = 0;
	}
	return r;
}

int extres_cdi_files_write(const char *dir, const char *view,
			   const char *old_view, int prune, FILE *report,
			   struct extres_err *err)
{
	struct spec *specs = NULL, *old = NULL;
	const struct spec *was;
	size_t n = 0, n_old = 0, i;
	int r;

	/* A fresh node has no /var/run/cdi yet; the walk below judges
	 * whatever is there, made now or before. */
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return extres_err_set(err, errno, "CDI directory %s: %s", dir,
				      strerror(errno));
	r = extres_check_trusted(dir, "CDI directory", err);
	if (r == 0)
		r = checked_specs(view, &specs, &n, err);
	if (r == 0 && old_view)
		r = checked_specs(old_view, &old, &n_old, err);
	for (i = 0; r == 0 && i < n; i++) {
		was = find_spec(old, n_old, specs[i].name);
		if (was && was->len == specs[i].len &&
		    memcmp(was->text, specs[i].text, was->len) == 0)
			continue;
		r = write_spec(dir, &specs[i], report, err);
	}
	for (i = 0; r == 0 && i < n_old; i++)
		if (!find_spec(specs, n, old[i].name))
			r = remove_spec(dir, old[i].name, report, err);
	if (r == 0 && prune)
		r = remove_stale(dir, specs, n, report, err);
	specs_free(specs, n);
	specs_free(old, n_old);
	return r;
}

int extres_cdi_files_remove(const char *dir, const char *view,
			    struct extres_err *err)
{
	struct spec *specs = NULL;
	size_t n = 0, i;
	int r;

	r = checked_specs(view, &specs, &n, err);
	for (i = 0; r == 0 && i < n; i++)
		r = remove_spec(dir, specs[i].name, NULL, err);
	specs_free(specs, n);
	return r;
}
