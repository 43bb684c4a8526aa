/* SPDX-License-Identifier: MIT */
#include "daemon/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD_EVENTS                                                       \
	(IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | \
	 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

struct extres_guard_watch {
	int wd;
	char *name; /* the file's name in the watched directory */
	char *path;
	/* How we left it (empty when not known), and whether an event named
	 * it in the read going on. */
	struct extres_file_state left;
	int touched;
};

int extres_guard_open(struct extres_guard *g, struct extres_err *err)
{
	g->n = 0;
	g->watches = NULL;
	g->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (g->fd < 0)
		return extres_err_set(err, errno, "inotify_init1: %s",
				      strerror(errno));
	return 0;
}

static void forget(struct extres_guard *g)
{
	size_t i, j;

	for (i = 0; i < g->n; i++) {
		/* One watch per directory: remove it once. */
		for (j = 0; j < i; j++)
			if (g->watches[j].wd == g->watches[i].wd)
				break;
		if (j == i && g->fd >= 0)
			inotify_rm_watch(g->fd, g->watches[i].wd);
		free(g->watches[i].name);
		free(g->watches[i].path);
		extres_file_state_clear(&g->watches[i].left);
	}
	free(g->watches);
	g->watches = NULL;
	g->n = 0;
}

/* Add the watch for `path`'s directory, remembering its name. */
static int add(struct extres_guard *g, const char *path, struct extres_err *err)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct extres_guard_watch *w;
	size_t len;
	int wd;

	if (!slash) {
		strcpy(dir, ".");
	} else {
		len = slash == path ? 1 : (size_t)(slash - path);
		if (len >= sizeof(dir))
			return extres_err_set(err, ENAMETOOLONG,
					      "cannot watch %s: %s", path,
					      strerror(ENAMETOOLONG));
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	wd = inotify_add_watch(g->fd, dir, GUARD_EVENTS | IN_ONLYDIR);
	if (wd < 0)
		return extres_err_set(
			err, errno,
			"cannot watch directory %s of coordination file %s: %s",
			dir, path, strerror(errno));
	w = realloc(g->watches, (g->n + 1) * sizeof(*w));
	if (!w)
		return extres_err_set(err, ENOMEM, "out of memory");
	g->watches = w;
	memset(&w[g->n], 0, sizeof(w[g->n]));
	w[g->n].wd = wd;
	w[g->n].name = strdup(slash ? slash + 1 : path);
	w[g->n].path = strdup(path);
	if (!w[g->n].name || !w[g->n].path) {
		free(w[g->n].name);
		free(w[g->n].path);
		return extres_err_set(err, ENOMEM, "out of memory");
	}
	g->n++;
	return 0;
}

int extres_guard_watch(struct extres_guard *g, const char *const *files,
		       size_t n, struct extres_err *err)
{
	size_t i, j;
	int first = 0, r;

	if (g->fd < 0)
		return 0;
	forget(g);
	for (i = 0; i < n; i++) {
		if (!files[i])
			continue;
		/* Two resources may share a file: one watch is enough. */
		for (j = 0; j < i; j++)
			if (files[j] && strcmp(files[j], files[i]) == 0)
				break;
		if (j < i)
			continue;
		r = add(g, files[i], first ? NULL : err);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

void extres_guard_seen(struct extres_guard *g, const char *path,
		       const struct extres_file_state *s)
{
	struct extres_file_state copy;
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (strcmp(g->watches[i].path, path) != 0)
			continue;
		extres_file_state_clear(&g->watches[i].left);
		if (extres_file_state_copy(s, &copy) == 0)
			g->watches[i].left = copy;
	}
}

/* Whether the file is as we left it: then the events were ours. Read
 * without its lock: a writer caught half-way reads as a change, which the
 * check under the lock then looks at. */
static int as_left(const struct extres_guard_watch *w)
{
	struct extres_file_state now = { 0 };
	struct stat st;
	int fd, same;

	/* Only what is still the file we left is opened (never a FIFO or
	 * a device put in its place), and read no further than our bytes
	 * and one more. */
	if (!w->left.st.st_ino || lstat(w->path, &st) < 0 ||
	    st.st_dev != w->left.st.st_dev || st.st_ino != w->left.st.st_ino ||
	    st.st_mode != w->left.st.st_mode ||
	    st.st_size != (off_t)w->left.len)
		return 0;
	fd = open(w->path,
		  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	same = extres_file_state_take(fd, w->left.len, &now) == 0 &&
	       extres_file_state_same(&now, &w->left);
	extres_file_state_clear(&now);
	close(fd);
	return same;
}

int extres_guard_known(const struct extres_guard *g, const char *path,
		       const struct extres_file_state *s)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (strcmp(g->watches[i].path, path) == 0)
			return extres_file_state_same(s, &g->watches[i].left);
	return 1;
}

/* Mark the watches `ev` names; 1 when it counts whatever the files say. */
static int concerns(struct extres_guard *g, const struct inotify_event *ev)
{
	size_t i;

	if (ev->mask & IN_Q_OVERFLOW)
		return 1;
	for (i = 0; i < g->n; i++) {
		if (g->watches[i].wd != ev->wd)
			continue;
		/* The directory itself went or moved: check, and fail. */
		if (ev->len == 0)
			return 1;
		if (strcmp(ev->name, g->watches[i].name) == 0)
			g->watches[i].touched = 1;
	}
	return 0;
}

int extres_guard_changed(struct extres_guard *g)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	int changed = 0;
	ssize_t n;
	size_t i;
	char *p;

	if (g->fd < 0)
		return 0;
	for (;;) {
		n = read(g->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (p = buf; p < buf + n;
		     p += sizeof(struct inotify_event) + ev->len) {
			ev = (const struct inotify_event *)p;
			changed |= concerns(g, ev);
		}
	}
	for (i = 0; i < g->n; i++) {
		if (g->watches[i].touched && !as_left(&g->watches[i]))
			changed = 1;
		g->watches[i].touched = 0;
	}
	return changed;
}

void extres_guard_close(struct extres_guard *g)
{
	forget(g);
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
}
