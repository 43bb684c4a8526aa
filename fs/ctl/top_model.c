/* SPDX-License-Identifier: MIT */
/*
 * extresctl top's snapshot of a mount: the devices it serves with their
 * key properties (read from the tree, as any program would), who holds
 * each device of a coordination file (.meta/holders), the reload and
 * conflict lines of .meta/status, and the processes waiting in the queue
 * files beside the coordination files (FILE.queue, lease/lease.h), which
 * the mount does not show. Queue files are other users' files: they are
 * only read, bounded, never followed through a symlink.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/err.h"
#include "base/fileio.h"
#include "base/text.h"
#include "config/config.h"
#include "alloc/coord.h"
#include "lease/lease.h"
#include "ctl/top.h"
#include "os/proc.h"

#define VALUE_MAX (64 * 1024 + 1)
#define META_MAX (1024 * 1024)

/* The whole file `name` under `dfd`, without a last newline; NULL when it
 * cannot be read. */
static char *read_at(int dfd, const char *name, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	if (extres_read_all(fd, max, &buf, &len) < 0)
		buf = NULL;
	close(fd);
	if (buf && len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	return buf;
}

static void dev_clear(struct top_dev *d)
{
	free(d->res);
	free(d->info);
	free(d->key);
	free(d->name);
	free(d->health);
	free(d->mem);
	free(d->command);
	free(d->user);
	free(d->since);
	free(d->kind);
	free(d->lease);
	free(d->state);
}

static struct top_dev *add_dev(struct top_snap *s)
{
	struct top_dev *d;

	d = realloc(s->devs, (s->n_devs + 1) * sizeof(*d));
	if (!d)
		return NULL;
	s->devs = d;
	d = &s->devs[s->n_devs++];
	memset(d, 0, sizeof(*d));
	return d;
}

static int compare_names(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	/* Infos are numbers: 2 before 10. */
	if (lx != ly && x[0] >= '0' && x[0] <= '9' && y[0] >= '0' &&
	    y[0] <= '9')
		return lx < ly ? -1 : 1;
	return strcmp(x, y);
}

/* The visible directories under `dfd`, sorted; *ret_n of them. */
static char **list_dirs(int dfd, size_t *ret_n)
{
	char **names = NULL, **more;
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int fd;

	*ret_n = 0;
	fd = dup(dfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more)
			break;
		names = more;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), compare_names);
	*ret_n = n;
	return names;
}

static void free_names(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int read_tree(int root, struct top_snap *s)
{
	size_t n_res, n_info, i, j;
	char **res, **infos;
	struct top_dev *d;
	int rfd, ifd, r = 0;

	res = list_dirs(root, &n_res);
	for (i = 0; i < n_res && r == 0; i++) {
		rfd = openat(root, res[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			continue;
		infos = list_dirs(rfd, &n_info);
		for (j = 0; j < n_info && r == 0; j++) {
			ifd = openat(rfd, infos[j],
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (ifd < 0)
				continue;
			d = add_dev(s);
			if (!d || !(d->res = strdup(res[i])) ||
			    !(d->info = strdup(infos[j]))) {
				r = -ENOMEM;
			} else {
				d->key = read_at(ifd, "index", VALUE_MAX);
				d->name = read_at(ifd, "name", VALUE_MAX);
				d->health = read_at(ifd, "health", VALUE_MAX);
				d->mem =
					read_at(ifd, "memory.total", VALUE_MAX);
			}
			close(ifd);
		}
		free_names(infos, n_info);
		close(rfd);
	}
	free_names(res, n_res);
	return r;
}

static char *dup_or_null(const char *s)
{
	return s && strcmp(s, "-") != 0 ? strdup(s) : NULL;
}

/* .meta/holders: RESOURCE KEY PID USER COMMAND SINCE KIND LEASE STATE. */
static int read_holders(int meta, struct top_snap *s)
{
	char *text, *line, *next, *f[9], *p;
	struct top_dev *d;
	size_t i, n;
	int r = 0;

	text = read_at(meta, "holders", META_MAX);
	for (line = text; line && *line && r == 0; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		for (n = 0, p = line; n < 9 && p; n++) {
			f[n] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = '\0';
		}
		if (n != 9)
			continue;
		for (i = 0, d = NULL; i < s->n_devs; i++)
			if (s->devs[i].info && !s->devs[i].state &&
			    strcmp(s->devs[i].res, f[0]) == 0 &&
			    extres_same_text(s->devs[i].key, f[1]))
				d = &s->devs[i];
		if (!d) {
			d = add_dev(s);
			if (!d || !(d->res = strdup(f[0])) ||
			    !(d->key = strdup(f[1]))) {
				r = -ENOMEM;
				break;
			}
		}
		d->user = dup_or_null(f[3]);
		d->command = dup_or_null(f[4]);
		d->since = dup_or_null(f[5]);
		d->kind = dup_or_null(f[6]);
		d->lease = dup_or_null(f[7]);
		d->state = strdup(f[8]);
		if (!d->state)
			r = -ENOMEM;
	}
	free(text);
	return r;
}

static int push_line(char ***v, size_t *n, const char *text)
{
	char **more = realloc(*v, (*n + 1) * sizeof(**v));

	if (!more)
		return -ENOMEM;
	*v = more;
	more[*n] = strdup(text);
	if (!more[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int read_status(int meta, struct top_snap *s)
{
	char *text, *line, *next, *sp;
	char **field;
	int r = 0;

	text = read_at(meta, "status", META_MAX);
	if (!text)
		return -errno;
	for (line = text; *line && r == 0; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = '\0';
		field = NULL;
		if (strcmp(line, "generation") == 0)
			field = &s->generation;
		else if (strcmp(line, "reloads") == 0)
			field = &s->reloads;
		else if (strcmp(line, "last-reload") == 0)
			field = &s->last_reload;
		else if (strcmp(line, "config") == 0)
			field = &s->config;
		else if (strcmp(line, "conflicts") == 0)
			field = &s->conflicts;
		else if (strcmp(line, "unhealthy") == 0)
			field = &s->unhealthy;
		else if (strcmp(line, "conflict") == 0)
			r = push_line(&s->conflict, &s->n_conflict, sp);
		if (field && !*field && !(*field = strdup(sp)))
			r = -ENOMEM;
	}
	free(text);
	return r;
}

static const char *user_of(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && pw->pw_name)
		return pw->pw_name;
	snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

/* The live waiters of one queue file. */
static int read_queue(const char *res, const char *path, struct top_snap *s)
{
	struct extres_coord_entry e;
	struct extres_proc_info pi;
	struct top_waiter *w;
	char *text, *line, *next, ubuf[16];
	struct stat st;
	int fd, r = 0;

	text = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		size_t len;

		if (extres_read_all(fd, EXTRES_COORD_MAX_SIZE, &text, &len) < 0)
			text = NULL;
	}
	close(fd);
	for (line = text; line && *line && r == 0; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (extres_coord_parse_line(line, strlen(line), &e) < 0) {
			r = -ENOMEM;
			break;
		}
		if (e.parsed &&
		    extres_coord_owner_state(&e) == EXTRES_OWNER_LIVE &&
		    extres_proc_info(e.pid, &pi) == 0) {
			w = realloc(s->waiters,
				    (s->n_waiters + 1) * sizeof(*w));
			if (w) {
				s->waiters = w;
				w = &w[s->n_waiters++];
				w->res = strdup(res);
				w->ticket = strdup(e.key);
				w->user = strdup(pi.has_uid ?
							 user_of(pi.uid, ubuf,
								 sizeof(ubuf)) :
							 "?");
				w->command = strdup(pi.comm);
				w->pid = e.pid;
			}
			if (!w || !w->res || !w->ticket || !w->user ||
			    !w->command)
				r = -ENOMEM;
		}
		extres_coord_entry_clear(&e);
	}
	free(text);
	return r;
}

/* The queues of the config the daemon serves; a config that cannot be read
 * (another user's, since removed) shows no waiters. */
static int read_queues(struct top_snap *s)
{
	struct extres_config *cfg = NULL;
	struct extres_err err;
	char *path;
	size_t i;
	int r = 0;

	if (!s->config || extres_config_load(s->config, &cfg, &err) < 0)
		return 0;
	for (i = 0; i < cfg->n_resources && r == 0; i++) {
		const struct extres_resource_config *rc = &cfg->resources[i];

		if (!rc->coordination_file)
			continue;
		if (extres_lease_queue_path(rc->coordination_file, &path) < 0) {
			r = -ENOMEM;
			break;
		}
		r = read_queue(rc->name, path, s);
		if (r == 0 && push_line(&s->queues, &s->n_queues, path) < 0)
			r = -ENOMEM;
		free(path);
	}
	extres_config_free(cfg);
	return r;
}

int top_snap_read(const char *mnt, struct top_snap *s)
{
	int root, meta = -1, r = 0;

	memset(s, 0, sizeof(*s));
	root = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0)
		meta = openat(root, ".meta",
			      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (meta < 0 || read_status(meta, s) < 0) {
		r = asprintf(&s->error, "%s: %s", mnt, strerror(errno)) < 0 ?
			    -ENOMEM :
			    0;
		goto out;
	}
	r = read_tree(root, s);
	if (r == 0)
		r = read_holders(meta, s);
	if (r == 0)
		r = read_queues(s);
out:
	if (meta >= 0)
		close(meta);
	if (root >= 0)
		close(root);
	return r;
}

void top_snap_clear(struct top_snap *s)
{
	size_t i;

	for (i = 0; i < s->n_devs; i++)
		dev_clear(&s->devs[i]);
	free(s->devs);
	for (i = 0; i < s->n_waiters; i++) {
		free(s->waiters[i].res);
		free(s->waiters[i].ticket);
		free(s->waiters[i].user);
		free(s->waiters[i].command);
	}
	free(s->waiters);
	for (i = 0; i < s->n_conflict; i++)
		free(s->conflict[i]);
	free(s->conflict);
	for (i = 0; i < s->n_queues; i++)
		free(s->queues[i]);
	free(s->queues);
	free(s->generation);
	free(s->reloads);
	free(s->last_reload);
	free(s->config);
	free(s->conflicts);
	free(s->unhealthy);
	free(s->error);
	memset(s, 0, sizeof(*s));
}
