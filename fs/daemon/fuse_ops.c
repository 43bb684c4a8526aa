/* SPDX-License-Identifier: MIT */
#include "daemon/fuse_ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "daemon/self.h"

/*
 * Values change only on reload, which invalidates the kernel's cache
 * explicitly, so the kernel may trust what it has for a day.
 */
#define CACHE_TIMEOUT 86400.0

/*
 * Every handler takes the tree with lock_tree() and gives it back with
 * unlock_tree() only after replying. The reply copies the bytes into the
 * kernel, so nothing refers to the tree afterwards; and a swap, which takes
 * the lock for writing before it invalidates, then knows that every entry
 * the kernel got from the old tree is already there to be invalidated.
 * (The request itself is gone after the reply: take fs from it first.)
 */
static const struct extres_tree *lock_tree(struct extres_fs *fs)
{
	pthread_rwlock_rdlock(&fs->lock);
	return fs->tree;
}

static void unlock_tree(struct extres_fs *fs)
{
	pthread_rwlock_unlock(&fs->lock);
}

static void fill_entry(const struct extres_node *n, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1;
	e->attr_timeout = CACHE_TIMEOUT;
	e->entry_timeout = CACHE_TIMEOUT;
	extres_tree_stat(n, &e->attr);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct extres_fs *fs = userdata;

	/* Declining open/opendir (ENOSYS) is how we keep hot reads out of
	 * the daemon; the kernel then also keeps the page cache. */
	fs->no_open = !!(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	fs->no_opendir = !!(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	/* Every listing returns its entries whole (names, numbers,
	 * attributes), so that walking a directory never costs a lookup per
	 * name: not the "auto" mode, which lists later pages names only. */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/* Nothing here is ever written, so no write-back or locking. And
	 * the page cache is ours to invalidate: a value changed in place
	 * gets its new bytes stored along with a new time stamp, which
	 * "auto" invalidation would throw away at the next stat. */
	conn->want &=
		~(unsigned)(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_POSIX_LOCKS |
			    FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_READDIRPLUS_AUTO |
			    FUSE_CAP_AUTO_INVAL_DATA);
	/* /self leads each caller elsewhere: the kernel must ask each time. */
	conn->want &= ~(unsigned)FUSE_CAP_CACHE_SYMLINKS;
}

static int do_lookup(const struct extres_tree *t, fuse_ino_t parent,
		     const char *name, struct fuse_entry_param *e,
		     const struct extres_node **ret)
{
	const struct extres_node *dir = extres_tree_get(t, parent), *n;

	if (!dir)
		return -ESTALE;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	n = extres_tree_lookup(t, parent, name);
	if (!n)
		return -ENOENT;
	fill_entry(n, e);
	*ret = n;
	return 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_node *n = NULL;
	struct fuse_entry_param e;
	int r = do_lookup(lock_tree(fs), parent, name, &e, &n);

	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		int push = extres_fs_given(fs, n);

		if (fuse_reply_entry(req, &e) != 0)
			extres_fs_forget(fs, n->ino, 1);
		else if (push)
			extres_fs_push(fs, n->ino);
	}
	unlock_tree(fs);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	extres_fs_forget(fuse_req_userdata(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	size_t i;

	for (i = 0; i < count; i++)
		extres_fs_forget(fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_node *n;
	struct stat st;

	lock_tree(fs);
	n = extres_fs_node(fs, ino);
	if (n) {
		extres_tree_stat(n, &st);
		fuse_reply_attr(req, &st, CACHE_TIMEOUT);
	} else {
		fuse_reply_err(req, ESTALE);
	}
	unlock_tree(fs);
}

/* 0 to open (keeping the cache), or a negative errno to answer. Call with
 * the lock held. */
static int do_open(const struct extres_fs *fs, fuse_ino_t ino, int dir,
		   struct fuse_file_info *fi)
{
	const struct extres_node *n = extres_fs_node(fs, ino);
	int r = 0;

	if (!n)
		r = -ESTALE;
	else if (dir && !S_ISDIR(n->mode))
		r = -ENOTDIR;
	else if (!dir && S_ISDIR(n->mode))
		r = -EISDIR;
	else if (!dir && (fi->flags & O_ACCMODE) != O_RDONLY)
		r = -EROFS;
	else if (dir ? fs->no_opendir : fs->no_open)
		r = -ENOSYS;
	if (r == 0) {
		fi->keep_cache = 1;
		fi->cache_readdir = dir;
	}
	return r;
}

static void reply_open(fuse_req_t req, fuse_ino_t ino, int dir,
		       struct fuse_file_info *fi)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	int r;

	lock_tree(fs);
	r = do_open(fs, ino, dir, fi);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_open(req, fi);
	unlock_tree(fs);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	reply_open(req, ino, 0, fi);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	reply_open(req, ino, 1, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_node *n;

	lock_tree(fs);
	n = extres_fs_node(fs, ino);
	if (!n) {
		fuse_reply_err(req, ESTALE);
	} else if (S_ISDIR(n->mode)) {
		fuse_reply_err(req, EISDIR);
	} else if (off < 0 || (size_t)off >= n->size) {
		fuse_reply_buf(req, NULL, 0);
	} else {
		if (size > n->size - (size_t)off)
			size = n->size - (size_t)off;
		fuse_reply_buf(req, n->data + off, size);
	}
	unlock_tree(fs);
}

/*
 * A listing is a snapshot of one tree, as an open file is: a listing that
 * a reload interrupts goes on with the tree it started with, not the middle
 * of the new one. Since opendir is declined there is no handle to keep that
 * tree in, so the offset carries it: the tree's serial in the high bits,
 * the position in the low ones. A tree retired since is still found; one
 * freed since (EXTRES_FS_RETIRED reloads later) answers ESTALE, as a file
 * opened in it does.
 */
#define OFF_POS_BITS 32
#define OFF_POS_MASK 0xffffffffULL

static uint64_t serial_of(const struct extres_tree *t)
{
	/* Keeps every offset positive. */
	return extres_tree_serial(t) & EXTRES_FS_SERIAL_MASK;
}

/*
 * Fill `buf` (`size` bytes) with the entries of directory `ino` from offset
 * `off` on, as many as fit, and set *ret_used. Entry i of a directory is
 * "." (0), ".." (1) or child i - 2; it carries offset i + 1, the entry to
 * resume from, with the tree's serial above it (see extres_fs_listing()).
 * The nodes whose entries the kernel will count as looked up go to `given`
 * (at most max_given; the reply stops there), their number to *ret_given.
 * 0, or a negative errno. Call with the lock held.
 */
static int do_readdir(fuse_req_t req, const struct extres_fs *fs,
		      fuse_ino_t ino, char *buf, size_t size, off_t off,
		      int plus, size_t *ret_used,
		      const struct extres_node **given, size_t max_given,
		      size_t *ret_given)
{
	uint64_t serial =
		off == 0 ? serial_of(fs->tree) : (uint64_t)off >> OFF_POS_BITS;
	const struct extres_tree *t = extres_fs_listing(fs, serial, ino);
	const struct extres_node *dir = t ? extres_tree_get(t, ino) : NULL;
	/* Entries of a tree no longer served must not become the kernel's
	 * cached names (they may be gone now): no lookups for them. */
	int past = t != fs->tree;
	size_t used = 0, n_given = 0;
	off_t i;
	int r = 0;

	if (!dir)
		r = -ESTALE;
	else if (!S_ISDIR(dir->mode))
		r = -ENOTDIR;
	off = (off_t)((uint64_t)off & OFF_POS_MASK);
	for (i = off; r == 0 && i < (off_t)dir->n_children + 2; i++) {
		const struct extres_node *n = NULL;
		const char *name;
		struct fuse_entry_param e;
		size_t len;

		if (i == 0) {
			name = ".";
			extres_tree_stat(dir, &e.attr);
		} else if (i == 1) {
			/* A retired tree may not hold the parent. */
			const struct extres_node *p =
				extres_tree_get(t, dir->parent);

			if (!p)
				p = extres_fs_node(fs, dir->parent);

			name = "..";
			extres_tree_stat(p ? p : dir, &e.attr);
		} else {
			n = dir->children[i - 2];
			name = n->name;
		}
		if (plus) {
			if (n && !past && n_given == max_given)
				break;
			if (n && !past) {
				fill_entry(n, &e);
			} else if (n) {
				memset(&e, 0, sizeof(e));
				extres_tree_stat(n, &e.attr);
			} else {
				/* No lookup count for the dot entries. */
				e.ino = 0;
				e.generation = 0;
				e.attr_timeout = 0;
				e.entry_timeout = 0;
			}
			len = fuse_add_direntry_plus(
				req, buf + used, size - used, name, &e,
				(off_t)(serial << OFF_POS_BITS |
					(uint64_t)(i + 1)));
		} else {
			if (n)
				extres_tree_stat(n, &e.attr);
			len = fuse_add_direntry(req, buf + used, size - used,
						name, &e.attr,
						(off_t)(serial << OFF_POS_BITS |
							(uint64_t)(i + 1)));
		}
		if (len > size - used)
			break;
		used += len;
		if (plus && n && !past)
			given[n_given++] = n;
	}
	if (r == 0) {
		*ret_used = used;
		*ret_given = n_given;
	}
	return r;
}

/* Bytes of directory entries per reply: as much as the kernel asks for
 * (up to the 32 KiB getdents buffer of glibc's readdir()), so that a
 * directory of a few hundred entries lists in one request. */
#define READDIR_BUF 32768
/* Entries per reply: one takes at least 152 bytes with its attributes. */
#define READDIR_MAX_PLUS (READDIR_BUF / 128)

static void reply_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			  off_t off, int plus)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	/* A shorter reply than asked is fine (the kernel goes on from the
	 * last offset), so no request allocates. */
	char buf[READDIR_BUF];
	const struct extres_node *given[READDIR_MAX_PLUS];
	char push[READDIR_MAX_PLUS];
	size_t used = 0, n_given = 0, i;
	int r;

	if (size > sizeof(buf))
		size = sizeof(buf);
	lock_tree(fs);
	r = do_readdir(req, fs, ino, buf, size, off, plus, &used, given,
		       READDIR_MAX_PLUS, &n_given);
	if (r < 0) {
		fuse_reply_err(req, -r);
	} else {
		/* Counted first, pushed after, as a lookup's (see
		 * extres_fs_given()). */
		for (i = 0; i < n_given; i++)
			push[i] = (char)extres_fs_given(fs, given[i]);
		if (fuse_reply_buf(req, buf, used) != 0) {
			for (i = 0; i < n_given; i++)
				extres_fs_forget(fs, given[i]->ino, 1);
		} else {
			for (i = 0; i < n_given; i++)
				if (push[i])
					extres_fs_push(fs, given[i]->ino);
		}
	}
	unlock_tree(fs);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	reply_readdir(req, ino, size, off, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	reply_readdir(req, ino, size, off, 1);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	struct statvfs st;

	memset(&st, 0, sizeof(st));
	st.f_bsize = 4096;
	st.f_frsize = 4096;
	st.f_files = extres_tree_size(lock_tree(fs));
	unlock_tree(fs);
	st.f_namemax = 255;
	st.f_flag = ST_RDONLY | ST_NOSUID | ST_NODEV;
	fuse_reply_statfs(req, &st);
}

/* The tree is read-only: every change answers EROFS, even if a mount
 * without `ro` lets the request through. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	fuse_reply_err(req, EROFS);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	fuse_reply_err(req, EROFS);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EROFS);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	fuse_reply_err(req, EROFS);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	fuse_reply_err(req, EROFS);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	fuse_reply_err(req, EROFS);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	fuse_reply_err(req, EROFS);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, EROFS);
}

static const struct extres_tree *lock_ctx(void *fs)
{
	return lock_tree(fs);
}

static void unlock_ctx(void *fs)
{
	unlock_tree(fs);
}

/*
 * /self is answered for the process that asks (daemon/self.h), which reads
 * its ancestry from /proc (or the cache of it, whose own lock is never held
 * across a read) between short holds of the tree's lock, so that a swap
 * never waits on /proc. Any other symlink reads as stored.
 */
static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	char target[EXTRES_SELF_TARGET_MAX];
	const struct extres_node *n;
	size_t len;
	int self;

	lock_tree(fs);
	n = extres_fs_node(fs, ino);
	self = n && S_ISLNK(n->mode) && n->parent == EXTRES_ROOT_INO &&
	       strcmp(n->name, "self") == 0;
	if (!n || !S_ISLNK(n->mode))
		fuse_reply_err(req, n ? EINVAL : ESTALE);
	else if (!self)
		fuse_reply_buf(req, n->data, n->size);
	unlock_tree(fs);
	if (!self)
		return;
	/* The target is ours, not the tree's: no lock for the reply. */
	len = extres_self_resolve(&fs->procs, fuse_req_ctx(req)->pid, lock_ctx,
				  unlock_ctx, fs, target);
	fuse_reply_buf(req, target, len);
}

/*
 * Nothing here is a terminal or a device: every ioctl is ENOTTY. The kernel
 * sends each one (CPython's open() asks isatty() every time before 3.14) and
 * does not remember any answer, so this one goes out at once, without the
 * tree or its lock. ENOSYS would reach the caller as ENOTTY too, but only
 * after the kernel's translation; ENOTTY is the true answer.
 */
static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd,
		     void *arg, struct fuse_file_info *fi, unsigned flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	fuse_reply_err(req, ENOTTY);
}

/*
 * poll(), as sysfs answers it: always readable, and POLLPRI|POLLERR once
 * the value changed. A value never changes in place (a changed value is a
 * new inode), so "changed" is "this inode is no longer in the tree"; until
 * then a waiter for POLLPRI has its handle kept, to be woken by the swap.
 */
static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_tree *t = lock_tree(fs);
	const struct extres_node *n = extres_tree_get(t, ino);

	if (n && ph && (fi->poll_events & POLLPRI)) {
		/* Kept before the reply, under the lock a swap takes first:
		 * no change can fall between the answer and the handle. */
		extres_polled_add(&fs->polled, ino, ph);
		ph = NULL;
	}
	fuse_reply_poll(req, n ? EXTRES_POLL_UNCHANGED : EXTRES_POLL_CHANGED);
	if (ph)
		fuse_pollhandle_destroy(ph);
	unlock_tree(fs);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.opendir = op_opendir,
	.read = op_read,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.statfs = op_statfs,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_unlink,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.write = op_write,
	.create = op_create,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
	.ioctl = op_ioctl,
	.poll = op_poll,
};

const struct fuse_lowlevel_ops *extres_fuse_ops(void)
{
	return &ops;
}
