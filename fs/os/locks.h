/* SPDX-License-Identifier: MIT */
/*
 * /proc/locks, read as proof: whether one process holds one exact POSIX
 * byte-range lock on one file. A process that writes a line into a shared
 * file can name any PID it likes, but it cannot make another process take
 * a lock; so a lock held by the named PID on agreed bytes proves that the
 * process itself stands behind the line (core/lease.h says which bytes).
 */
#ifndef EXTRES_LOCKS_H
#define EXTRES_LOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One POSIX read lock to look for: held by `pid` on the file `dev`:`ino`
 * (any file when `any_file` is set), covering exactly [start, start]. */
struct extres_lock_proof {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	int any_file;
	uint64_t start;
};

/*
 * 1 if /proc/locks shows `p` (a granted "POSIX ADVISORY READ" lock of
 * exactly that PID, file and one-byte range), 0 if not, -errno when
 * /proc/locks cannot be read. A lock merged with a neighbour or an OFD
 * lock does not count.
 */
int extres_lock_proof_held(const struct extres_lock_proof *p);

/* The same test on one line of /proc/locks (without its '\n'). Pure. */
int extres_lock_proof_line(const char *line, const struct extres_lock_proof *p);

/*
 * Take the proof `start` on fd for this process: a POSIX read lock of one
 * byte (fd open for reading). It lasts until this process closes any
 * descriptor of that file or exits; it survives exec(), not fork(). 0 or
 * a negative errno.
 */
int extres_lock_proof_take(int fd, uint64_t start);

#endif
