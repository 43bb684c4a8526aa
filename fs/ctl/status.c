/* SPDX-License-Identifier: MIT */
/*
 * extresctl status: what a running extresd serves, read back through its
 * mount as any program would: each resource, its infos and their
 * properties. Names starting with '.' (the daemon's hidden views) are not
 * resources, infos or properties, and are skipped.
 *
 * The whole tree is read before anything is printed, so that a mount that
 * dies half-way gives an error rather than half an answer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "base/err.h"
#include "base/fileio.h"
#include "host/infos.h"
#include "base/log.h"
#include "os/mountpoint.h"

/* A property file holds at most its value and a newline. */
#define MAX_PROPERTY_FILE (EXTRES_MAX_VALUE_LEN + 1)

/* Depths of the tree under the mount point. */
enum level { LEVEL_ROOT, LEVEL_RESOURCE, LEVEL_INFO };

/* A resource, an info or a property: directories have children, property
 * files a value. */
struct node {
	char *name;
	char *value; /* the file's content less its final newline */
	size_t value_len;
	size_t n;
	struct node *kids;
};

static void usage_status(FILE *out)
{
	fprintf(out,
		"usage: extresctl status [--json] [--timeout SECONDS] [MOUNTPOINT]\n"
		"\n"
		"Show what the extresd serving MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		") serves,\n"
		"read through the mount: each resource, its infos and their\n"
		"properties, in the daemon's order. Hidden names (starting with\n"
		"'.') are skipped. Exit 1 when MOUNTPOINT is not an extresd mount,\n"
		"or its daemon is gone (a dead mount: 'Transport endpoint is not\n"
		"connected'), and when another live process holds a device it\n"
		"serves (each such conflict is printed on stderr), and when the\n"
		"daemon does not answer an access within the deadline: 'extresd at\n"
		"MOUNTPOINT is not responding'.\n"
		"\n"
		"Then who holds each device of the coordination files it follows\n"
		"(MOUNTPOINT/.meta/holders), when any is recorded.\n"
		"When its last reload failed, a warning says when, and why to root.\n"
		"\n"
		"    --json       the daemon's MOUNTPOINT/.meta/extres.json instead:\n"
		"                   {\"resources\": {\"RESOURCE\": {\"driver\": \"DRIVER\",\n"
		"                    \"amount\": N, \"infos\": [{\"KEY\": \"VALUE\", ...},\n"
		"                    ...]}, ...}}\n"
		"                 Bytes that JSON text cannot carry show as U+FFFD.\n"
		"    --timeout SECONDS\n"
		"                 how long the daemon may take to answer each\n"
		"                 access before it is called not responding\n"
		"                 (exit 1; default %d)\n"
		"    -h, --help   this help\n",
		CTL_MOUNT_TIMEOUT_S);
}

static void node_clear(struct node *node)
{
	size_t i;

	for (i = 0; i < node->n; i++)
		node_clear(&node->kids[i]);
	free(node->kids);
	free(node->name);
	free(node->value);
	*node = (struct node){ 0 };
}

/* A new, empty child named `name`, or NULL without memory. */
static struct node *node_add(struct node *node, const char *name)
{
	struct node *kids;
	char *copy;

	/* Doubling at powers of two: the capacity need not be stored. */
	if ((node->n & (node->n - 1)) == 0) {
		kids = realloc(node->kids,
			       (node->n ? node->n * 2 : 1) * sizeof(*kids));
		if (!kids)
			return NULL;
		node->kids = kids;
	}
	copy = strdup(name);
	if (!copy)
		return NULL;
	node->kids[node->n] = (struct node){ .name = copy };
	return &node->kids[node->n++];
}

/* The error for `errnum` at `dir`/`name` (name may be NULL). */
static int path_error(const char *mnt, const char *dir, const char *name,
		      int errnum, struct extres_err *err)
{
	/* A daemon that died while we read: say so as for any dead mount. */
	if (extres_mountpoint_gone_errno(errnum) &&
	    extres_mountpoint_check_live(mnt, err) < 0)
		return -ENOTCONN;
	return extres_err_set(err, errnum, "%s%s%s: %s", dir, name ? "/" : "",
			      name ? name : "", strerror(errnum));
}

/* A property file's content into `prop`; 1 when it is no regular file (not
 * a property), 0, or -errno. */
static int read_property(int fd, struct node *prop)
{
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 1;
	r = extres_read_all(fd, MAX_PROPERTY_FILE, &prop->value,
			    &prop->value_len);
	if (r < 0)
		return r;
	if (prop->value_len > 0 && prop->value[prop->value_len - 1] == '\n')
		prop->value[--prop->value_len] = '\0';
	return 0;
}

static int read_dir(struct extres_ctl_mount *m, int dfd, const char *path,
		    enum level level, struct node *node,
		    struct extres_err *err);

/*
 * One entry `name` of the directory `dfd` (at `path`, of `level`) into a new
 * child of `node`. Entries that vanished (a reload in between) or are not
 * what the level holds (a file among resources) are not added.
 */
static int read_entry(struct extres_ctl_mount *m, int dfd, const char *path,
		      enum level level, const char *name, struct node *node,
		      struct extres_err *err)
{
	const char *mnt = m->mnt;
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW;
	struct node *kid;
	char *kid_path;
	int fd, r;

	/* O_NONBLOCK: a FIFO among properties must not hang us. */
	flags |= level == LEVEL_INFO ? O_NONBLOCK : O_DIRECTORY;
	fd = openat(dfd, name, flags);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return 0;
		return path_error(mnt, path, name, errno, err);
	}
	extres_ctl_mount_step(m);
	kid = node_add(node, name);
	if (!kid) {
		close(fd);
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	if (level == LEVEL_INFO) {
		r = read_property(fd, kid);
		close(fd);
		extres_ctl_mount_step(m);
		if (r < 0)
			return r == -EFBIG ?
				       extres_err_set(
					       err, EFBIG,
					       "%s/%s: larger than a property value can be",
					       path, name) :
				       path_error(mnt, path, name, -r, err);
		if (r > 0) /* Not a property: forget it again. */
			node_clear(&node->kids[--node->n]);
		return 0;
	}
	if (asprintf(&kid_path, "%s/%s", path, name) < 0) {
		close(fd);
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	/* read_dir() takes fd over. */
	r = read_dir(m, fd, kid_path, level + 1, kid, err);
	free(kid_path);
	return r;
}

/* Every visible entry of the directory `fd` (closed here), in readdir
 * order: the daemon's order. */
static int read_dir(struct extres_ctl_mount *m, int fd, const char *path,
		    enum level level, struct node *node, struct extres_err *err)
{
	const char *mnt = m->mnt;
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = fdopendir(fd);
	if (!dir) {
		r = path_error(mnt, path, NULL, errno, err);
		close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno)
				r = path_error(mnt, path, NULL, errno, err);
			break;
		}
		extres_ctl_mount_step(m);
		if (de->d_name[0] == '.')
			continue;
		r = read_entry(m, dirfd(dir), path, level, de->d_name, node,
			       err);
		if (r < 0)
			break;
	}
	closedir(dir);
	return r;
}

static int read_tree(struct extres_ctl_mount *m, struct node *root,
		     struct extres_err *err)
{
	int fd;

	fd = open(m->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return path_error(m->mnt, m->mnt, NULL, errno, err);
	return read_dir(m, fd, m->mnt, LEVEL_ROOT, root, err);
}

static void print_text(const char *mnt, const struct node *root)
{
	const struct node *res, *info, *prop;
	size_t i, k, p;

	printf("%s: %zu resource%s\n", mnt, root->n, root->n == 1 ? "" : "s");
	for (i = 0; i < root->n; i++) {
		res = &root->kids[i];
		printf("%s: %zu info%s\n", res->name, res->n,
		       res->n == 1 ? "" : "s");
		for (k = 0; k < res->n; k++) {
			info = &res->kids[k];
			printf("  %s:", info->name);
			for (p = 0; p < info->n; p++) {
				prop = &info->kids[p];
				printf(" %s=", prop->name);
				fwrite(prop->value, 1, prop->value_len, stdout);
			}
			printf("\n");
		}
	}
}

/* What the daemon says besides the tree: its .meta/status, and why its
 * last reload failed (from .meta/error, which only root may read). */
struct remarks {
	char *status;
	char *holders; /* .meta/holders, or NULL */
	char *failed; /* "failed at TIME" of the last reload, or NULL */
	char *why;
	int why_errno;
};

static void remarks_clear(struct remarks *rm)
{
	free(rm->status);
	free(rm->holders);
	free(rm->failed);
	free(rm->why);
	*rm = (struct remarks){ 0 };
}

/* Read them; none is no error: the tree was read, which is the answer
 * asked for. */
static void read_remarks(struct extres_ctl_mount *m, struct remarks *rm)
{
	const char *p, *nl;
	char *cut;

	rm->status = extres_ctl_read_meta(m->mnt, "status");
	extres_ctl_mount_step(m);
	rm->holders = extres_ctl_read_meta(m->mnt, "holders");
	extres_ctl_mount_step(m);
	for (p = rm->status; p && (nl = strchr(p, '\n')); p = nl + 1)
		if (strncmp(p, "last-reload failed", 18) == 0)
			rm->failed = strndup(p + 12, (size_t)(nl - p) - 12);
	if (!rm->failed)
		return;
	rm->why = extres_ctl_read_meta(m->mnt, "error");
	rm->why_errno = rm->why ? 0 : errno;
	extres_ctl_mount_step(m);
	if (rm->why && (cut = strchr(rm->why, '\n')))
		*cut = '\0';
}

/*
 * Who holds each device of the coordination files the daemon follows, one
 * line each: "  RESOURCE KEY: PID N USER COMMAND since SINCE (KIND[ LEASE])"
 * for a live holder, "  RESOURCE KEY: PID N (KIND[ LEASE], STATE)" for a
 * stale line.
 */
static void print_holders(const char *text)
{
	char *copy, *line, *save = NULL, *f[9], *p;
	size_t n;

	if (!text || !*text || !(copy = strdup(text)))
		return;
	printf("holders:\n");
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		for (n = 0, p = line; n < 9 && p; n++) {
			f[n] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		if (n < 9)
			continue;
		printf("  %s %s: PID %s", f[0], f[1], f[2]);
		if (strcmp(f[8], "live") == 0)
			printf(" %s %s since %s (%s", f[3], f[4], f[5], f[6]);
		else
			printf(" (%s", f[6]);
		if (strcmp(f[7], "-") != 0)
			printf(" %s", f[7]);
		if (strcmp(f[8], "live") != 0)
			printf(", %s", f[8]);
		printf(")\n");
	}
	free(copy);
}

/* How requests reach the daemon (daemon/transport.h), and why not over
 * io_uring where it could not be. */
static void print_transport(const char *status)
{
	const char *p, *nl;

	for (p = status; p && (nl = strchr(p, '\n')); p = nl + 1)
		if (strncmp(p, "transport ", 10) == 0)
			printf("transport: %.*s\n", (int)(nl - p) - 10, p + 10);
}

/*
 * Print the daemon's "conflict ..." lines as errors (a device it serves
 * that another live process holds too), and its "unhealthy-device ..."
 * lines and a failed last reload as warnings. Returns how many conflicts.
 */
static int print_remarks(const char *mnt, const struct remarks *rm)
{
	const char *p, *nl;
	int n = 0;

	for (p = rm->status; p && (nl = strchr(p, '\n')); p = nl + 1)
		if (strncmp(p, "conflict ", 9) == 0) {
			extres_log(EXTRES_LOG_ERR, "conflict: %.*s",
				   (int)(nl - p) - 9, p + 9);
			n++;
		}
	for (p = rm->status; p && (nl = strchr(p, '\n')); p = nl + 1)
		if (strncmp(p, "unhealthy-device ", 17) == 0)
			extres_log(
				EXTRES_LOG_WARNING,
				"held, but its driver says it is not healthy: %.*s",
				(int)(nl - p) - 17, p + 17);
	if (rm->failed && rm->why && rm->why[0])
		extres_log(EXTRES_LOG_WARNING, "%s: last reload %s: %s", mnt,
			   rm->failed, rm->why);
	else if (rm->failed)
		extres_log(
			EXTRES_LOG_WARNING,
			"%s: last reload %s (why: in the daemon's log, and in %s/.meta/error for root%s%s)",
			mnt, rm->failed, mnt, rm->why_errno ? ": " : "",
			rm->why_errno ? strerror(rm->why_errno) : "");
	return n;
}

struct status_opts {
	int json;
};

/* In extres_ctl_on_mount()'s child: read everything, then print. */
static int status_job(struct extres_ctl_mount *m, void *arg)
{
	const struct status_opts *o = arg;
	struct remarks rm = { 0 };
	struct node root = { 0 };
	struct extres_err err;
	char *json = NULL;
	int r;

	r = read_tree(m, &root, &err);
	if (r == 0)
		read_remarks(m, &rm);
	/* The daemon's own document, written by the one function that
	 * writes every extres JSON (views/json_view.h): the tree read above
	 * still says whether the mount serves. */
	if (r == 0 && o->json) {
		json = extres_ctl_read_meta(m->mnt, "extres.json");
		if (!json)
			r = path_error(m->mnt, m->mnt, ".meta/extres.json",
				       errno, &err);
		extres_ctl_mount_step(m);
	}
	extres_ctl_mount_done(m);
	if (r < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	else if (o->json)
		fputs(json, stdout);
	else
		print_text(m->mnt, &root);
	if (r == 0 && !o->json) {
		print_holders(rm.holders);
		print_transport(rm.status);
	}
	if (r == 0 && print_remarks(m->mnt, &rm) > 0)
		r = -EBUSY;
	remarks_clear(&rm);
	node_clear(&root);
	free(json);
	return r < 0 ? 1 : 0;
}

static int status_option(void *opts, int c, const char *arg)
{
	struct status_opts *o = opts;

	(void)arg;
	if (c != CTL_OPT_JSON)
		return CTL_EXIT_USAGE;
	o->json = 1;
	return 0;
}

static int status_run(void *opts, const struct extres_ctl_mount_args *args)
{
	return extres_ctl_on_mount(args->mountpoint, args->timeout, 0,
				   status_job, opts);
}

const struct extres_ctl_mount_verb extres_ctl_status = {
	.options =
		(const struct option[]){
			{ "json", no_argument, NULL, CTL_OPT_JSON },
			{ NULL, 0, NULL, 0 },
		},
	.shortopts = "",
	.timeout_default = CTL_MOUNT_TIMEOUT_S,
	.timeout_max = 86400,
	.opts_size = sizeof(struct status_opts),
	.usage = usage_status,
	.option = status_option,
	.run = status_run,
};
