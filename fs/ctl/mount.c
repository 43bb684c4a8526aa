/* SPDX-License-Identifier: MIT */
/*
 * extresctl's access to a running daemon's mount, with a deadline.
 *
 * A daemon that does not answer (a deadlock, SIGSTOP) blocks every request
 * to its mount for good, and nothing but a fatal signal frees the thread
 * that made it. So every command's work on a mount runs in a child process
 * (deadline.h) that reports each answered access; the parent kills it when
 * one takes too long and says which daemon does not respond.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "os/deadline.h"
#include "base/fileio.h"
#include "base/log.h"
#include "os/mountpoint.h"

struct job {
	const char *path;
	int (*fn)(struct extres_ctl_mount *m, void *arg);
	void *arg;
};

/* The mount point, absolute; a missing path is named as "no extresd". */
static int absolute(const char *path, char **ret, struct extres_err *err)
{
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return extres_err_set(err, ENOENT,
				      "%s does not exist: no extresd serves it",
				      path);
	return extres_mountpoint_absolute(path, ret, err);
}

/* In the child: find the mount, then the command's work. main() is not
 * there to flush stdout after us, so that is done here. */
static int run_job(void *arg, struct extres_deadline_child *c)
{
	struct job *job = arg;
	struct extres_ctl_mount m = { .child = c };
	struct extres_err err;
	int status = 1;

	if (absolute(job->path, &m.mnt, &err) < 0 ||
	    extres_mountpoint_check_live(m.mnt, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	extres_ctl_mount_step(&m);
	status = job->fn(&m, job->arg);
	extres_ctl_mount_done(&m);
	status = extres_ctl_flush_stdout(status);
out:
	free(m.mnt);
	fflush(stderr);
	return status;
}

int extres_ctl_on_mount(const char *path, long step_s, long total_s,
			int (*fn)(struct extres_ctl_mount *m, void *arg),
			void *arg)
{
	struct job job = { path, fn, arg };
	struct extres_deadline dl = {
		.step_ms = (unsigned)step_s * 1000,
		.total_ms = (unsigned)total_s * 1000,
		.keep_stdio = 1,
	};
	int r;

	/* What is buffered would be written twice: by us and the child. */
	fflush(NULL);
	r = extres_deadline_run(&dl, run_job, &job);
	if (r == -ETIMEDOUT) {
		extres_log(
			EXTRES_LOG_ERR,
			"extresd at %s is not responding (no answer within %ld s)",
			path, step_s);
		return 1;
	}
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot start a process: %s",
			   strerror(-r));
		return 1;
	}
	return r;
}

void extres_ctl_mount_step(struct extres_ctl_mount *m)
{
	extres_deadline_step(m->child);
}

void extres_ctl_mount_done(struct extres_ctl_mount *m)
{
	extres_deadline_done(m->child);
}

char *extres_ctl_read_meta(const char *mnt, const char *name)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0;
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/.meta/%s", mnt, name) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	r = extres_read_all(fd, 1 << 20, &buf, &len);
	close(fd);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return buf;
}
