/* SPDX-License-Identifier: MIT */
#include "daemon/served.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Inodes waiting for their bytes. A listing learns a directory's files
 * at once, and the notifier keeps up with listings (a push costs a few
 * microseconds, a listing request tens): this is slack for bursts. What
 * does not fit is read as it would be without a push. */
#define PUSH_QUEUE 16384

/* The retired tree with this serial, or NULL. Call with the lock held. */
static const struct extres_tree *retired_tree(const struct extres_fs *fs,
					      uint64_t serial)
{
	size_t i;

	for (i = 0; i < EXTRES_FS_RETIRED; i++)
		if (fs->retired[i] && (extres_tree_serial(fs->retired[i]) &
				       EXTRES_FS_SERIAL_MASK) == serial)
			return fs->retired[i];
	return NULL;
}

const struct extres_node *extres_fs_node(const struct extres_fs *fs,
					 uint64_t ino)
{
	const struct extres_node *n = extres_tree_get(fs->tree, ino);
	size_t i, k;

	for (i = 1; !n && i <= EXTRES_FS_RETIRED; i++) {
		k = (fs->next_retired + EXTRES_FS_RETIRED - i) %
		    EXTRES_FS_RETIRED;
		if (fs->retired[k])
			n = extres_tree_get(fs->retired[k], ino);
	}
	return n;
}

/*
 * A retired tree keeps only the directories whose listing the next tree
 * changed (see extres_tree_retire()), so one it lacks lists as in the next
 * tree of the line: look there, up to the current tree.
 */
const struct extres_tree *extres_fs_listing(const struct extres_fs *fs,
					    uint64_t serial, uint64_t ino)
{
	const struct extres_tree *t;
	size_t i;

	for (i = 0; i <= EXTRES_FS_RETIRED; i++) {
		if ((extres_tree_serial(fs->tree) & EXTRES_FS_SERIAL_MASK) ==
		    serial)
			return fs->tree;
		t = retired_tree(fs, serial);
		if (!t)
			return NULL;
		if (extres_tree_get(t, ino))
			return t;
		serial = (serial + 1) & EXTRES_FS_SERIAL_MASK;
	}
	return NULL;
}

/* Files handed to the kernel ahead of their reads: values, which fit a
 * page; not the larger views, which few read and which would fill the page
 * cache of every `find`. */
#define PUSH_MAX 4096

static int pushed(const struct extres_node *n)
{
	return S_ISREG(n->mode) && n->size > 0 && n->size <= PUSH_MAX;
}

int extres_fs_given(struct extres_fs *fs, const struct extres_node *n)
{
	return extres_known_add(&fs->known, n->ino) == 1 && pushed(n);
}

void extres_fs_push(struct extres_fs *fs, uint64_t ino)
{
	extres_pusher_queue(&fs->pusher, ino);
}

void extres_fs_forget(struct extres_fs *fs, uint64_t ino, uint64_t n)
{
	extres_known_forget(&fs->known, ino, n);
}

static int store(struct fuse_session *se, const struct extres_node *n)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(n->size);

	buf.buf[0].mem = (void *)n->data;
	return fuse_lowlevel_notify_store(se, n->ino, 0, &buf, 0);
}

/*
 * The notifier thread's work: hand the kernel the bytes of `ino` as the
 * current tree has them. A file's bytes never change under its number, so
 * what is stored is never stale; the lock only keeps the tree alive.
 */
static int push_one(void *ctx, uint64_t ino)
{
	struct extres_fs *fs = ctx;
	const struct extres_node *n;
	int r = 0;

	pthread_rwlock_rdlock(&fs->lock);
	n = extres_tree_get(fs->tree, ino);
	if (n && pushed(n)) {
		r = store(fs->se, n);
		/* The reply that named it may not be processed yet. */
		if (r == -ENOENT && extres_known_has(&fs->known, ino))
			r = EXTRES_PUSH_LATER;
	}
	pthread_rwlock_unlock(&fs->lock);
	return r;
}

int extres_fs_init(struct extres_fs *fs, struct extres_tree *tree)
{
	int r;

	memset(fs, 0, sizeof(*fs));
	r = extres_known_init(&fs->known);
	if (r < 0)
		return r;
	r = extres_pusher_init(&fs->pusher, PUSH_QUEUE, push_one, fs);
	if (r < 0)
		goto fail_known;
	r = extres_polled_init(&fs->polled);
	if (r < 0)
		goto fail_pusher;
	r = extres_proc_cache_init(&fs->procs);
	if (r < 0)
		goto fail_polled;
	r = -pthread_rwlock_init(&fs->lock, NULL);
	if (r < 0)
		goto fail_procs;
	fs->tree = tree;
	return 0;
fail_procs:
	extres_proc_cache_destroy(&fs->procs);
fail_polled:
	extres_polled_destroy(&fs->polled);
fail_pusher:
	extres_pusher_destroy(&fs->pusher);
fail_known:
	extres_known_destroy(&fs->known);
	return r;
}

int extres_fs_start_push(struct extres_fs *fs, struct fuse_session *se,
			 const char *mountpoint)
{
	fs->se = se;
	fs->mountpoint = mountpoint;
	return extres_pusher_start(&fs->pusher);
}

void extres_fs_stop_push(struct extres_fs *fs)
{
	extres_pusher_destroy(&fs->pusher);
}

void extres_fs_destroy(struct extres_fs *fs)
{
	size_t i;

	extres_fs_stop_push(fs);
	extres_polled_destroy(&fs->polled);
	extres_known_destroy(&fs->known);
	extres_proc_cache_destroy(&fs->procs);
	pthread_rwlock_destroy(&fs->lock);
	extres_tree_free(fs->tree);
	fs->tree = NULL;
	for (i = 0; i < EXTRES_FS_RETIRED; i++) {
		extres_tree_free(fs->retired[i]);
		fs->retired[i] = NULL;
	}
}

/* `n`'s path under the mount point into buf, or -ENAMETOOLONG. */
static int path_of(const struct extres_fs *fs, const struct extres_tree *t,
		   const struct extres_node *n, char *buf, size_t size)
{
	size_t len, at = size - 1;

	buf[at] = '\0';
	while (n && n->ino != EXTRES_ROOT_INO) {
		len = strlen(n->name);
		if (len + 1 > at)
			return -ENAMETOOLONG;
		at -= len;
		memcpy(buf + at, n->name, len);
		buf[--at] = '/';
		n = extres_tree_get(t, n->parent);
	}
	if (!n)
		return -ENOENT;
	len = strlen(fs->mountpoint);
	if (len > at)
		return -ENAMETOOLONG;
	memmove(buf + len, buf + at, size - at);
	memcpy(buf, fs->mountpoint, len);
	return 0;
}

/*
 * Look the changed file up through the mount, as the next reader would,
 * so that the kernel holds its new inode, then store its bytes there. From
 * the swapping thread, never a handler: the lookup is answered by the
 * session's threads. A path that leads elsewhere (something mounted over
 * ours) is left alone.
 */
static void prime(struct extres_fs *fs, struct fuse_session *se,
		  const struct extres_tree *t, const struct extres_node *n)
{
	char path[4096];
	struct stat st;

	if (path_of(fs, t, n, path, sizeof(path)) < 0 || lstat(path, &st) < 0 ||
	    st.st_ino != n->ino)
		return;
	store(se, n);
}

struct swap_ctx {
	struct extres_fs *fs;
	struct fuse_session *se;
	const struct extres_tree *new;
	size_t n_primed; /* see extres_fs_swap() */
};

static int notify(void *ctx, int what, const struct extres_node *o,
		  const struct extres_node *n)
{
	struct swap_ctx *c = ctx;
	const struct extres_node *now;

	(void)n;
	/* -ENOENT: the kernel never looked it up, so has nothing to drop. */
	if (what != EXTRES_TREE_REMOVED) {
		fuse_lowlevel_notify_inval_inode(c->se, o->ino, 0, 0);
		return 0;
	}
	fuse_lowlevel_notify_inval_entry(c->se, o->parent, o->name,
					 strlen(o->name));
	/* Primed here, in tree order, so that .meta/status, last in the
	 * tree, says the new generation only once the values before it are
	 * in place. */
	if (S_ISDIR(o->mode) || c->n_primed == EXTRES_FS_PRIME ||
	    !c->fs->mountpoint || !extres_known_has(&c->fs->known, o->ino))
		return 0;
	now = extres_tree_lookup(c->new, o->parent, o->name);
	if (now && pushed(now)) {
		prime(c->fs, c->se, c->new, now);
		c->n_primed++;
	}
	return 0;
}

static int in_use(void *ctx, uint64_t ino)
{
	return extres_known_has(ctx, ino);
}

/* Only this thread changes trees: the new one is read unlocked. */
static int served_now(uint64_t ino, void *tree)
{
	return extres_tree_get(tree, ino) != NULL;
}

void extres_fs_swap(struct extres_fs *fs, struct fuse_session *se,
		    struct extres_tree *tree)
{
	struct extres_tree *old, *evicted = NULL, *kept = NULL;
	struct swap_ctx c = { .fs = fs, .se = se, .new = tree };
	size_t slot = 0, i;

	pthread_rwlock_wrlock(&fs->lock);
	old = fs->tree;
	fs->tree = tree;
	if (old) {
		slot = fs->next_retired;
		evicted = fs->retired[slot];
		fs->retired[slot] = old;
		fs->next_retired = (fs->next_retired + 1) % EXTRES_FS_RETIRED;
	}
	pthread_rwlock_unlock(&fs->lock);
	/* No handler holds the lock now, so none uses the evicted tree. */
	extres_tree_free(evicted);
	if (!old)
		return;
	/* The new tree is in place first, so whatever the kernel asks after
	 * an invalidation is answered from it. */
	if (se)
		extres_tree_diff(old, tree, notify, &c);
	/* After the invalidations: a woken reader who opens the path again
	 * finds the new value. */
	extres_polled_wake(&fs->polled, served_now, tree);
	/* Retired, the old tree needs only what the new one lost and the
	 * kernel still knows: keep that and free the rest (short of memory,
	 * keep it whole: it answers the same). The kernel forgets what it no
	 * longer holds after the invalidations above, so older retired
	 * trees let go of bytes nobody can ask for now. Only this thread
	 * changes trees, so it reads `old` unlocked. */
	if (extres_tree_retire(old, tree, in_use, &fs->known, &kept) < 0)
		kept = NULL;
	pthread_rwlock_wrlock(&fs->lock);
	if (kept)
		fs->retired[slot] = kept;
	for (i = 0; i < EXTRES_FS_RETIRED; i++)
		if (i != slot && fs->retired[i])
			extres_tree_shed(fs->retired[i], in_use, &fs->known);
	pthread_rwlock_unlock(&fs->lock);
	if (kept)
		extres_tree_free(old);
}
