/* SPDX-License-Identifier: MIT */
/*
 * The lock file that makes one extresd per mount point.
 *
 * Daemons started at once on one mount point would all find it free and all
 * mount, each on top of the last, the hidden ones holding devices nobody can
 * see. So a daemon takes an exclusive flock(2) on a file named after its
 * mount point before it runs any driver, and holds it for its whole life.
 *
 * The file lives in a directory only the daemon's user can write (root:
 * /run/extresd; anyone else: $XDG_RUNTIME_DIR/extresd), never in a
 * world-writable one such as /run/lock or /tmp, where another user could
 * take the lock first or plant a file of their own under its name. Its name
 * is a hash of the mount point (a path may be longer than a file name); it
 * holds the mount point, for people.
 *
 * A flock belongs to the open file description: a forked child shares it
 * and it lasts until the last descriptor is closed, so it survives
 * daemonizing and goes with a crashed daemon. The descriptor is O_CLOEXEC,
 * so programs the daemon runs (discovery scripts, fusermount3) never hold
 * it. A clean release removes the file; whoever locks one checks that its
 * name still leads to it, so the removal never lets two processes hold it.
 */
#ifndef EXTRES_RUNLOCK_H
#define EXTRES_RUNLOCK_H

#include <sys/types.h>

#include "base/err.h"

#define EXTRES_RUNLOCK_ROOT_DIR "/run/extresd"

struct extres_runlock {
	int fd; /* holds the lock; -1 when not held */
	char *path; /* the lock file; NULL when not held */
};

/*
 * The directory for the lock files of user `uid`, created when missing:
 * EXTRES_RUNLOCK_ROOT_DIR (mode 0755) for root, else `xdg_runtime_dir`
 * (the caller's $XDG_RUNTIME_DIR; NULL when unset) + "/extresd" (0700).
 * Refused unless each of these (and, for non-root, $XDG_RUNTIME_DIR
 * itself) is a directory, not a symlink, owned by `uid` and not writable by
 * group or others. On success *ret is the malloc'd path; errors name the
 * directory and the reason, or say that $XDG_RUNTIME_DIR is unset.
 */
int extres_runlock_dir(uid_t uid, const char *xdg_runtime_dir, char **ret,
		       struct extres_err *err);

/*
 * Try once, without waiting, to lock the file for `key` (the canonical
 * mount point) in `dir` (from extres_runlock_dir()), creating it 0644.
 * 0: *l holds the lock and the file holds `key` and a newline. -EWOULDBLOCK:
 * another open file description holds it (no message; *l untouched). Else a
 * negative errno with a message naming the file.
 */
int extres_runlock_try(struct extres_runlock *l, const char *dir,
		       const char *key, struct extres_err *err);

/*
 * Remove the file and let the lock go, if held; then *l is {-1, NULL}.
 * Safe on an unheld lock. Call it only once the daemon has let go of
 * everything it took: until then, the next daemon must not start.
 */
void extres_runlock_release(struct extres_runlock *l);

#endif
