/* SPDX-License-Identifier: MIT */
/*
 * A FUSE mount whose daemon died without unmounting must fail fast
 * (ENOTCONN), not hang. The kernel aborts the connection when the last
 * descriptor of /dev/fuse goes, but a daemon thread that was itself waiting
 * on the mount when the daemon was killed (a lookup through it; over
 * io_uring the request was taken by a queue whose thread is gone) waits
 * for good, uninterruptibly: the process never finishes dying, its
 * descriptors stay open, and every access to the mount hangs until
 * someone aborts the connection by hand.
 *
 * The sentinel is a small process, forked at mount time, that holds none
 * of the daemon's descriptors (so never keeps /dev/fuse open itself): it
 * sleeps on a pidfd of the daemon's main thread, on its parent-death
 * signal (sent when the main thread exits, even while another thread is
 * stuck, which the pidfd does not report) and on a pipe, and when
 * the daemon dies without saying that the mount is gone, it writes the
 * connection's abort file (/sys/fs/fuse/connections/N/abort, opened at
 * start on a mount of fusectl of its own, so that it can only ever abort
 * this connection), then exits.
 */
#ifndef EXTRES_SENTINEL_H
#define EXTRES_SENTINEL_H

#include <sys/types.h>

#include "base/err.h"

struct extres_sentinel {
	pid_t pid; /* 0: none */
	int fd; /* our end of the pipe; -1: none */
};

/*
 * From the main thread of the daemon, with the FUSE connection `minor`
 * mounted: start the sentinel. Only async-signal-safe calls run in the
 * child, so any other thread may be running. `args`, `args_len`: the
 * process's argument strings (main()'s argv[0] up to the end of the last
 * one), which the sentinel overwrites with its own name in its copy, so
 * that ps and /proc/PID/cmdline tell it from the daemon (NULL: left as
 * they are). 0 once it is watching, or a negative errno with the reason in
 * *err (nothing left running).
 */
int extres_sentinel_start(struct extres_sentinel *s, unsigned minor, char *args,
			  size_t args_len, struct extres_err *err);

/*
 * The mount is gone (unmounted): the sentinel exits without aborting
 * anything, and is reaped (waited for a short while at most). Safe when
 * none was started, and twice.
 */
void extres_sentinel_release(struct extres_sentinel *s);

#endif
