/* SPDX-License-Identifier: MIT */
/*
 * POSIX byte-range locks as proof. A process that writes a line into a
 * shared file can name any PID it likes, but it cannot make another
 * process take a lock; so a lock held by the named PID on an agreed byte
 * proves that the process itself stands behind the line (lease/lease.h
 * says which bytes). Each claimant locks a byte of its own (BASE + its
 * PID), so that the kernel can name the one holder of each byte.
 *
 * POSIX (fcntl F_SETLK) locks belong to a process: they survive exec(),
 * not fork(), and go when the process closes any descriptor of the file.
 */
#ifndef EXTRES_LOCKS_H
#define EXTRES_LOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Take this process's proof: a read lock on byte `base` + getpid() of the
 * file open at fd (for reading). 0 or a negative errno (-EAGAIN: someone
 * write-locks that byte). */
int extres_lock_proof_take(int fd, uint64_t base);

/*
 * 1 if process `pid` holds its proof `base` on the file open at fd, as
 * the kernel says (F_GETLK, one query, no /proc); 0 if not, or when the
 * caller is `pid` itself (a process never conflicts with its own locks).
 */
int extres_lock_proof_on(int fd, pid_t pid, uint64_t base);

/*
 * 1 if /proc/locks shows `pid` holding its proof `base` on some file (a
 * granted "POSIX ADVISORY READ" lock of exactly that one byte), 0 if not,
 * -errno when /proc/locks cannot be read. A list that changes while it is
 * read may hide a lock: a 0 can be wrong, a 1 cannot.
 */
int extres_lock_proof_anywhere(pid_t pid, uint64_t base);

/* The same test on one line of /proc/locks (without its '\n'). Pure. */
int extres_lock_proof_line(const char *line, pid_t pid, uint64_t base);

#endif
