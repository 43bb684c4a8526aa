/* SPDX-License-Identifier: MIT */
/*
 * extres-bench-floor: the floor scripts/bench compares extresd with, a
 * low-level FUSE server as small as one can be that serves like extresd:
 * open and opendir declined (so the kernel keeps the page cache), a day of
 * attribute and entry caching, the same mount options, the multi-threaded
 * loop. It implements nothing else; an ioctl gets libfuse's ENOSYS.
 *
 *   extres-bench-floor MOUNTPOINT CONTENT
 *
 * serves MOUNTPOINT/f holding CONTENT in the foreground until SIGTERM or
 * SIGINT, then unmounts and exits 0. Exit 1 when it cannot mount.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fuse_lowlevel.h>

#define FLOOR_INO 2
#define FLOOR_TIMEOUT 86400.0

struct floor {
	const char *data;
	size_t size;
};

static void floor_stat(const struct floor *fl, fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)fl->size;
	}
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct floor *fl = fuse_req_userdata(req);
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, "f") != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = FLOOR_INO;
	e.attr_timeout = FLOOR_TIMEOUT;
	e.entry_timeout = FLOOR_TIMEOUT;
	floor_stat(fl, FLOOR_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct stat st;

	if (ino != FUSE_ROOT_ID && ino != FLOOR_INO) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	floor_stat(fuse_req_userdata(req), ino, &st);
	fuse_reply_attr(req, &st, FLOOR_TIMEOUT);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	fuse_reply_err(req, ENOSYS);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	const struct floor *fl = fuse_req_userdata(req);

	if (ino != FLOOR_INO || off < 0 || (size_t)off >= fl->size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > fl->size - (size_t)off)
		size = fl->size - (size_t)off;
	fuse_reply_buf(req, fl->data + off, size);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.lookup = floor_lookup,
	.getattr = floor_getattr,
	.open = floor_open,
	.opendir = floor_open,
	.read = floor_read,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0],
			  "-odefault_permissions,fsname=floor,subtype=floor",
			  "-oro,nosuid,nodev,noexec", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se = NULL;
	struct fuse_loop_config *loop = NULL;
	struct floor fl;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s MOUNTPOINT CONTENT\n", argv[0]);
		return 2;
	}
	fl.data = argv[2];
	fl.size = strlen(argv[2]);
	se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), &fl);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_destroy;
	if (fuse_session_mount(se, argv[1]) != 0)
		goto out_signals;
	loop = fuse_loop_cfg_create();
	/* A signal ends the loop with its number: a clean stop. */
	if (loop)
		rc = fuse_session_loop_mt(se, loop) < 0 ? 1 : 0;
	fuse_loop_cfg_destroy(loop);
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
out:
	return rc;
}
