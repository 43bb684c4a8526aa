/* SPDX-License-Identifier: MIT */
/*
 * extresctl cdi [--output DIR] [--timeout SECONDS] [MOUNTPOINT]
 *
 * Write the CDI specs of the extresd serving MOUNTPOINT into DIR, where
 * container runtimes look for them: one file extres-<resource>.json per
 * resource. The specs are the daemon's .meta/cdi.json, split on its lines
 * (core/cdi_view.h promises one member per line), so that the command and
 * the view never disagree and the command needs no driver or config.
 *
 * DIR is root's: a runtime gives a container every node a spec names, so
 * a directory another user could write is refused. Each file is written to
 * a temporary name in DIR and renamed over the old one, so that a runtime
 * reading the directory sees the old spec or the new one, never half.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "base/err.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"
#include "config/name.h"
#include "os/mountpoint.h"
#include "os/trust.h"

#define DEFAULT_DIR "/var/run/cdi"
#define FILE_PREFIX "extres-"
#define FILE_SUFFIX ".json"

struct cdi_opts {
	const char *dir;
	int prune;
};

/* One resource's spec: its name, decoded, and the spec's text in the
 * view (not NUL-terminated). */
struct spec {
	char *name;
	const char *text;
	size_t len;
};

static void usage_cdi(FILE *out)
{
	fprintf(out,
		"usage: extresctl cdi [--output DIR] [--prune] [--timeout SECONDS]\n"
		"                     [MOUNTPOINT]\n"
		"\n"
		"Write a CDI (Container Device Interface) spec for each resource that\n"
		"the extresd serving MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		") allocated,\n"
		"as in MOUNTPOINT/.meta/cdi.json, to DIR/" FILE_PREFIX
		"RESOURCE" FILE_SUFFIX ", so that\n"
		"'podman run --device extres.dev/RESOURCE=N' gives a container device N.\n"
		"\n"
		"    --output DIR   where (default " DEFAULT_DIR
		"); only root or you may be\n"
		"                   able to write to it and to the directories above\n"
		"    --prune        also remove the files of that form that name no\n"
		"                   resource of this mount any more; only where this\n"
		"                   is the one extresd that writes to DIR (another's\n"
		"                   files have the same form)\n"
		"    --timeout SECONDS\n"
		"                   how long the daemon may take to answer each\n"
		"                   access (default %d)\n"
		"    -h, --help     this help\n"
		"\n"
		"Exit status: 0 when every file was written, 1 otherwise, 2 on usage\n"
		"errors.\n",
		CTL_MOUNT_TIMEOUT_S);
}

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
static int write_spec(const char *dir, const struct spec *s,
		      struct extres_err *err)
{
	char *tmp = NULL, *path = NULL;
	int fd = -1, r = 0;

	if (asprintf(&path, "%s/" FILE_PREFIX "%s" FILE_SUFFIX, dir, s->name) <
	    0) {
		path = NULL;
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	/* Hidden and without the suffix: runtimes skip it until renamed. No
	 * resource name in it, which could make it longer than NAME_MAX. */
	if (asprintf(&tmp, "%s/." FILE_PREFIX "XXXXXX", dir) < 0) {
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
	printf("%s\n", path);
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
	size_t len = strlen(file), pre = strlen(FILE_PREFIX),
	       suf = strlen(FILE_SUFFIX);

	if (len <= pre + suf || !extres_starts_with(file, FILE_PREFIX) ||
	    strcmp(file + len - suf, FILE_SUFFIX) != 0)
		return NULL;
	*ret_len = len - pre - suf;
	return file + pre;
}

/* Remove DIR/extres-*.json of resources no longer in the view: a runtime
 * would still give containers devices that are no longer ours. */
static int remove_stale(const char *dir, const struct spec *specs, size_t n,
			struct extres_err *err)
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
		printf("removed %s/%s\n", dir, de->d_name);
	}
	closedir(d);
	return r;
}

static int write_specs(const char *dir, const char *view, int prune,
		       struct extres_err *err)
{
	struct spec *specs = NULL;
	const char *problem;
	size_t n = 0, i;
	int r;

	/* A fresh node has no /var/run/cdi yet; the walk below judges
	 * whatever is there, made now or before. */
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return extres_err_set(err, errno, "CDI directory %s: %s", dir,
				      strerror(errno));
	r = extres_check_trusted(dir, "CDI directory", err);
	if (r == 0)
		r = split_view(view, &specs, &n, err);
	for (i = 0; r == 0 && i < n; i++) {
		/* The daemon's names are entries of the mount already; a
		 * name that is no file name is no view of ours. */
		problem = extres_name_problem(specs[i].name);
		if (problem || strlen(specs[i].name) >
				       EXTRES_MAX_NAME_LEN -
					       strlen(FILE_PREFIX FILE_SUFFIX))
			r = extres_err_set(
				err, EINVAL, ".meta/cdi.json: resource '%s' %s",
				specs[i].name,
				problem ?
					problem :
					"is too long to be part of a file name");
	}
	for (i = 0; r == 0 && i < n; i++)
		r = write_spec(dir, &specs[i], err);
	if (r == 0 && prune)
		r = remove_stale(dir, specs, n, err);
	specs_free(specs, n);
	return r;
}

/* In extres_ctl_on_mount()'s child: read the view, then write. */
static int cdi_job(struct extres_ctl_mount *m, void *arg)
{
	const struct cdi_opts *o = arg;
	struct extres_err err;
	long owner = -1;
	char *view;
	int r;

	/* A runtime does as root what a spec says: only a mount root made
	 * (or the caller, who could write the files anyway) is listened
	 * to, not any user's own extresd or FUSE file system. */
	r = extres_mountpoint_owner(m->mnt, &owner, &err);
	if (r == 0 && owner != 0 && owner != (long)getuid())
		r = extres_err_set(
			&err, EPERM,
			"refusing the CDI specs of %s: it was mounted by uid %ld, not by root or you",
			m->mnt, owner);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	view = extres_ctl_read_meta(m->mnt, "cdi.json");
	r = view ? 0 : -errno;
	extres_ctl_mount_step(m);
	extres_ctl_mount_done(m);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s/.meta/cdi.json: %s", m->mnt,
			   strerror(-r));
		return 1;
	}
	r = write_specs(o->dir, view, o->prune, &err);
	free(view);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	return 0;
}

int extres_ctl_cdi(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "prune", no_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = EXTRES_DEFAULT_MOUNTPOINT;
	struct cdi_opts o = { DEFAULT_DIR, 0 };
	long timeout = CTL_MOUNT_TIMEOUT_S;
	int c;

	optind = 0;
	while ((c = extres_ctl_next_opt("cdi", "cdi", argc, argv,
					":ho:", longopts)) != -1) {
		if (c == 'o') {
			if (!*optarg)
				return extres_ctl_usage_error(
					"cdi",
					"cdi: --output is an empty string");
			o.dir = optarg;
			continue;
		}
		if (c == 'p') {
			o.prune = 1;
			continue;
		}
		if (c == 't') {
			if (extres_ctl_parse_seconds(optarg, 1, 86400,
						     &timeout) < 0)
				return extres_ctl_usage_error(
					"cdi",
					"cdi: --timeout '%s' is not a number of seconds from 1 to 86400",
					optarg);
			continue;
		}
		if (c != 'h')
			return CTL_EXIT_USAGE;
		usage_cdi(stdout);
		return 0;
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return extres_ctl_usage_error(
			"cdi", "cdi: unexpected argument '%s'", argv[optind]);
	if (!*path)
		return extres_ctl_usage_error(
			"cdi", "cdi: MOUNTPOINT is an empty string");
	return extres_ctl_on_mount(path, timeout, 0, cdi_job, &o);
}
