/* SPDX-License-Identifier: MIT */
#include "fuse_ops.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/*
 * Values change only on reload, which invalidates the kernel's cache
 * explicitly, so the kernel may trust what it has for a day.
 */
#define CACHE_TIMEOUT 86400.0

static struct extres_tree *current_tree(fuse_req_t req)
{
	struct extres_fs *fs = fuse_req_userdata(req);

	return atomic_load_explicit(&fs->tree, memory_order_acquire);
}

static void fill_entry(const struct extres_tree *t, const struct extres_node *n,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = n->ino;
	e->generation = 1;
	e->attr_timeout = CACHE_TIMEOUT;
	e->entry_timeout = CACHE_TIMEOUT;
	extres_tree_stat(t, n, &e->attr);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct extres_fs *fs = userdata;

	/* Declining open/opendir (ENOSYS) is how we keep hot reads out of
	 * the daemon; the kernel then also keeps the page cache. */
	fs->no_open = !!(conn->capable & FUSE_CAP_NO_OPEN_SUPPORT);
	fs->no_opendir = !!(conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT);
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	/* Nothing here is ever written, so no write-back or locking. */
	conn->want &= ~(unsigned)(FUSE_CAP_WRITEBACK_CACHE |
				  FUSE_CAP_POSIX_LOCKS | FUSE_CAP_FLOCK_LOCKS);
}

static int do_lookup(fuse_req_t req, fuse_ino_t parent, const char *name,
		     struct fuse_entry_param *e)
{
	const struct extres_tree *t = current_tree(req);
	const struct extres_node *dir = extres_tree_get(t, parent), *n;

	if (!dir)
		return -ESTALE;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	n = extres_tree_lookup(t, parent, name);
	if (!n)
		return -ENOENT;
	fill_entry(t, n, e);
	return 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int r = do_lookup(req, parent, name, &e);

	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	const struct extres_tree *t = current_tree(req);
	const struct extres_node *n = extres_tree_get(t, ino);
	struct stat st;

	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	extres_tree_stat(t, n, &st);
	fuse_reply_attr(req, &st, CACHE_TIMEOUT);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_node *n = extres_tree_get(current_tree(req), ino);

	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (S_ISDIR(n->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (fs->no_open) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct extres_fs *fs = fuse_req_userdata(req);
	const struct extres_node *n = extres_tree_get(current_tree(req), ino);

	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (!S_ISDIR(n->mode)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (fs->no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->keep_cache = 1;
	fi->cache_readdir = 1;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	const struct extres_node *n = extres_tree_get(current_tree(req), ino);

	if (!n) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (S_ISDIR(n->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (off < 0 || (size_t)off >= n->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > n->size - (size_t)off)
		size = n->size - (size_t)off;
	fuse_reply_buf(req, n->data + off, size);
}

/*
 * Entry i of a directory is "." (0), ".." (1) or child i - 2; it carries
 * offset i + 1, the entry to resume from.
 */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       int plus)
{
	const struct extres_tree *t = current_tree(req);
	const struct extres_node *dir = extres_tree_get(t, ino);
	char *buf;
	size_t used = 0;
	off_t i;

	if (!dir) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (!S_ISDIR(dir->mode)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = off; i < (off_t)dir->n_children + 2; i++) {
		const struct extres_node *n = NULL;
		const char *name;
		struct fuse_entry_param e;
		size_t len;

		if (i == 0) {
			name = ".";
			extres_tree_stat(t, dir, &e.attr);
		} else if (i == 1) {
			const struct extres_node *p =
				extres_tree_get(t, dir->parent);

			name = "..";
			extres_tree_stat(t, p ? p : dir, &e.attr);
		} else {
			n = dir->children[i - 2];
			name = n->name;
		}
		if (plus) {
			if (n) {
				fill_entry(t, n, &e);
			} else {
				/* No lookup count for the dot entries. */
				e.ino = 0;
				e.generation = 0;
				e.attr_timeout = 0;
				e.entry_timeout = 0;
			}
			len = fuse_add_direntry_plus(req, buf + used,
						     size - used, name, &e,
						     i + 1);
		} else {
			if (n)
				extres_tree_stat(t, n, &e.attr);
			len = fuse_add_direntry(req, buf + used, size - used,
						name, &e.attr, i + 1);
		}
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, 0);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, 1);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	const struct extres_tree *t = current_tree(req);
	struct statvfs st;

	memset(&st, 0, sizeof(st));
	st.f_bsize = 4096;
	st.f_frsize = 4096;
	st.f_files = extres_tree_size(t);
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

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
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
};

const struct fuse_lowlevel_ops *extres_fuse_ops(void)
{
	return &ops;
}
