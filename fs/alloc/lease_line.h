/* SPDX-License-Identifier: MIT */
/*
 * The lease word of a coordination line (alloc/coord.h) and how the
 * process a line names proves it stands behind it. Leases write such lines
 * (lease/lease.h); garbage collection, the holders view and extresctl read
 * them, so what a line means lives here, below all of them.
 *
 * A lease's line carries lease=ID, ID being `PID-STARTTIME` of its owner
 * in decimal; a waiter's line in a queue carries lease=waiting. A line
 * counts only while the process it names proves it, with a POSIX read
 * lock (fcntl F_SETLK, not an OFD lock) on a byte of the file of its own,
 * BASE + its PID, which the kernel names it as the holder of (os/locks.h):
 * a writer of the file can name any process, but cannot make it take a
 * lock. A waiter holds EXTRES_LEASE_WAITER_PROOF + PID of its queue; a
 * lease's command holds EXTRES_LEASE_HOLDER_PROOF + PID of each of its
 * coordination files.
 */
#ifndef EXTRES_ALLOC_LEASE_LINE_H
#define EXTRES_ALLOC_LEASE_LINE_H

#include <stdint.h>
#include <sys/types.h>

#include "alloc/coord.h"

/* A waiter's line in a queue carries this as its lease word. */
#define EXTRES_LEASE_WAITING "waiting"

/* Where the proofs lie: one byte per PID, far past any line. */
#define EXTRES_LEASE_WAITER_PROOF (UINT64_C(1) << 61)
#define EXTRES_LEASE_HOLDER_PROOF (UINT64_C(1) << 62)

/* 1 if `e`, a line of the queue open at fd, is a waiter's that its
 * process proves; 0 otherwise. */
int extres_lease_waiter_proven(int fd, const struct extres_coord_entry *e);

/* 1 if `e`, a line of the coordination file open at fd, is a lease's
 * line (lease=ID, ID naming the line's PID and start time) that the
 * lease's command proves; 0 otherwise. */
int extres_lease_line_proven(int fd, const struct extres_coord_entry *e);

/* 1 if process `pid` holds a lease command's proof on some file
 * (/proc/locks). */
int extres_lease_command_proven(pid_t pid);

/* "PID-STARTTIME" (malloc'd) into *ret. 0 or -ENOMEM. */
int extres_lease_id(pid_t pid, uint64_t starttime, char **ret);

/*
 * A lease's id, "PID-STARTTIME" (the command's PID and start time): 0 with
 * both set, or -EINVAL when `id` is anything else. Pure.
 */
int extres_lease_id_parse(const char *id, pid_t *ret_pid,
			  uint64_t *ret_starttime);

#endif
