/* SPDX-License-Identifier: MIT */
/*
 * Leases (extresctl run): devices taken through coordination files for one
 * process, the command a lease was made for, which is recorded as their
 * owner. A lease lives exactly as long as that process: its lines name the
 * process's PID and start time, so once it is gone every allocator (extresd,
 * another lease, Flink's scripts) takes the devices as free, whoever
 * removes the lines.
 *
 * A lease's line is `KEY PID<TAB>STARTTIME<TAB>lease=ID` (alloc/coord.h),
 * ID being `PID-STARTTIME` of the owner in decimal. Devices are picked as
 * extresd's allocator picks them: candidates in the driver's order, a
 * device recorded by a live owner skipped, dead owners' lines reclaimed.
 *
 * Waiting (extresctl run --wait) is first come, first served through a
 * queue file beside each coordination file, FILE.queue, in the
 * coordination file's own format and under the same rules (lock with a
 * deadline, trust checks, in-place rewrites): one line per waiter,
 * `TICKET PID<TAB>STARTTIME<TAB>lease=waiting`, PID being the waiting
 * process. A waiter whose process is gone counts for nothing and is
 * dropped by the next one who looks. TICKET orders the waiters: one more
 * than any ticket in the queues it enters, all of them locked at once, so
 * that waiters ordered in one queue are ordered alike in every other.
 *
 * A line counts only while the process it names proves it, with a POSIX
 * read lock (fcntl F_SETLK, not an OFD lock) on a byte of the file of
 * its own, BASE + its PID, which the kernel names it as the holder of
 * (os/locks.h, alloc/lease_line.h): a writer of the file can name any process, but cannot
 * make it take a lock. A waiter holds byte EXTRES_LEASE_WAITER_PROOF +
 * PID of its queue from before its line is written (under the queue's
 * lock) until it leaves; a waiter line without it
 * (forged, or a dead or older waiter's) counts for nothing and is dropped
 * by the next waiter and by `extresctl coord gc`. A lease's command holds
 * byte EXTRES_LEASE_HOLDER_PROOF + PID of each of its coordination files, taken
 * in its own process before the lease's lines are written and kept
 * through exec() (a descriptor left open for it, O_RDONLY). An unproven
 * lease line still holds its device (nothing is ever allocated twice),
 * but is no lease: `extresctl leases` does not list it, `--kill` does not
 * signal it, self/ does not show it. A command that closes that
 * descriptor, or a coordination file replaced by rename (`sed -i`),
 * loses the proof the same way.
 *
 * A waiter whose process is stopped (state T or t: Ctrl-Z, SIGSTOP, a
 * debugger) keeps its ticket but is passed over while stopped: the
 * waiters behind it take what comes free. As a stop changes no file, a
 * waiter behind a running one looks again every EXTRES_LEASE_RELOOK_MS.
 *
 * Locks are taken in one order by every lease: the queue files by path,
 * then the coordination files by path, each at most once (files reached by
 * two paths are told apart by device and inode). extresd holds one
 * coordination file's lock at a time and never a queue's, so no two
 * processes wait for each other.
 */
#ifndef EXTRES_LEASE_H
#define EXTRES_LEASE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "config/config.h"
#include "alloc/alloc.h"
#include "alloc/lease_line.h"
#include "host/infos.h"

/* One resource of a lease: `n` devices of `res` (which must have a
 * coordination file) out of `candidates`. */
struct extres_lease_want {
	const struct extres_resource_config *res;
	uint64_t n;
	const struct extres_infos *candidates;
	/* 1: one share of one device (n is 1) of a resource with replicas
	 * > 1, by alloc/share.h's rules, on a line with share=I/N; 0: n
	 * devices whole. */
	int share;
};

struct extres_lease {
	char *id; /* "PID-STARTTIME" */
	pid_t owner;
	uint64_t starttime;
	size_t n;
	/* One per want, in the wants' order: the devices taken (infos in
	 * allocation order), coordination_file and owner set. */
	struct extres_allocation **parts;
};

/* Who stood in the way of a take that found its devices busy. */
struct extres_lease_busy {
	/* One line per obstacle, each ending in '\n': "resource 'gpu':
	 * wanted 2, 1 free of 8 (coordination file F); held by: index 0 by
	 * PID 12 (cmd), ...", "waiting behind N earlier waiters: PID 34
	 * (cmd), ..." (malloc'd, NULL when none). */
	char *text;
	/* The live holders of the wanted resources' devices and the live
	 * waiters ahead: when one of them ends, it is worth trying again.
	 * At most EXTRES_LEASE_MAX_WATCH, distinct. */
	pid_t *pids;
	size_t n_pids;
	/* A running waiter is ahead: it may stop without a word, so look
	 * again within EXTRES_LEASE_RELOOK_MS. */
	int relook;
	/* What a take without a waiter passed by (a queue it could not
	 * read), whatever the outcome: malloc'd, or NULL. */
	char *warning;
};

#define EXTRES_LEASE_MAX_WATCH 64

/* How often a waiter behind a running waiter looks whether it stopped. */
#define EXTRES_LEASE_RELOOK_MS 2000

/* The process that waits in the queues for a lease (extresctl itself, not
 * the command): its lines go with it. It keeps each queue open for the
 * whole wait (fds, one per distinct queue of the wants, in their order;
 * -1 until opened): closing one would drop its proof. */
struct extres_lease_waiter {
	pid_t pid;
	uint64_t starttime;
	int *fds;
	size_t n_fds;
};

/* Ready `w` for n wants' queues (fds -1): 0 or -ENOMEM. Clearing closes
 * them, which ends the proofs; accepts a zeroed one. */
int extres_lease_waiter_init(struct extres_lease_waiter *w, size_t n);
void extres_lease_waiter_clear(struct extres_lease_waiter *w);

/* FILE.queue for coordination file `file` (malloc'd). 0 or -ENOMEM. */
int extres_lease_queue_path(const char *file, char **ret);

/*
 * Check `wants` before any take: each resource has a coordination file
 * (-EINVAL naming it otherwise), asks for 1 to its number of candidates
 * (-ERANGE naming it, the number asked and found), every candidate has
 * the coordination key without whitespace (-EINVAL naming the info), and
 * no resource is named twice (-EINVAL).
 */
int extres_lease_check(const struct extres_lease_want *wants, size_t n,
		       struct extres_err *err);

/*
 * One attempt to take every want for `owner` (with start time
 * `starttime`, as /proc says), all or nothing.
 *
 * Under the locks of every coordination file involved (each waited for
 * at most `lock_timeout_ms`: -ETIMEDOUT naming its holders; -EINTR when a
 * SIGTERM or SIGINT is pending, see os/stop.h), the dead owners' lines are
 * reclaimed and each want gets its first `n` candidates that no line
 * records. When every want has them, their lines are written, *ret is the
 * lease (free with extres_lease_free()), and 0 is returned.
 *
 * With `waiter` (NULL: none), the attempt goes through the queues too,
 * locked first: the waiter is put in each queue it is not in yet, and
 * takes only when it is first among the live waiters of every queue;
 * taking removes its lines from the queues; the waiter proves its lines
 * (see above) on the descriptors it keeps. Without a waiter, live
 * waiters in a queue that exists stand in the way as well: a run that
 * does not wait does not overtake those that do. Only proven waiters
 * count, and stopped ones are passed over. A run without a waiter needs
 * no queue's consent: a queue it cannot lock (refused by the trust
 * checks, or its lock not had in time) is passed by, and
 * busy->warning says so (set whatever the result; clear *busy always).
 *
 * When the devices (or earlier waiters) stand in the way, nothing but the
 * waiter's queue lines is written, *busy says who, and -EBUSY is
 * returned (free *busy with extres_lease_busy_clear()). Other errors leave
 * nothing recorded and *busy empty. Messages start "resource 'NAME': "
 * where one resource is at fault.
 */
int extres_lease_try(const struct extres_lease_want *wants, size_t n,
		     pid_t owner, uint64_t starttime,
		     const struct extres_lease_waiter *waiter,
		     unsigned lock_timeout_ms, struct extres_lease **ret,
		     struct extres_lease_busy *busy, struct extres_err *err);

/*
 * Remove the waiter's lines from the queues of `wants` (those that exist),
 * waiting at most `lock_timeout_ms` for each lock. 0 or a negative errno
 * with `err` set; a line left behind names a process that is about to
 * end, which the next waiter drops.
 */
int extres_lease_queue_leave(const struct extres_lease_want *wants, size_t n,
			     const struct extres_lease_waiter *waiter,
			     unsigned lock_timeout_ms, struct extres_err *err);

/*
 * Remove exactly this lease's lines (its id, owner PID and start time)
 * from its coordination files, waiting at most `lock_timeout_ms` for each
 * lock; lines of every other owner stay byte for byte. Carries on past a
 * file that fails and returns the first error. Safe to call twice.
 */
int extres_lease_release(struct extres_lease *l, unsigned lock_timeout_ms,
			 struct extres_err *err);

/*
 * The lease's environment for its command, as NULL-terminated "NAME=VALUE"
 * strings (malloc'd, the array too; free with extres_lease_env_free()):
 * per resource, in the wants' order, exactly the variables .meta/env
 * would export for those devices (views/views.h: EXTRES_<NAME>_INDEXES and
 * the device variable), then for a share what alloc/share.h's
 * extres_share_env() adds, then EXTRES_LEASE=ID. `wants` are those the lease
 * was taken for. 0, -ENOMEM, or -EINVAL for a device variable that is not
 * a shell identifier.
 */
int extres_lease_env(const struct extres_lease *l,
		     const struct extres_lease_want *wants, char ***ret);
void extres_lease_env_free(char **env);

/*
 * The CPUs local to the lease's devices: the union of every device's
 * `local_cpulist` property (kernel cpulist format, "0-3,8-11") into *ret
 * (a cpu_set_t, passed as void * to keep <sched.h>'s feature macros out of
 * this header). -ENOENT when a device has no such property, with `err`
 * naming it; -EINVAL when one does not parse.
 */
int extres_lease_local_cpus(const struct extres_lease *l, void *ret,
			    struct extres_err *err);

/* 1 if `e` (a parsed queue line) is the line of waiter `w`. */
int extres_lease_is_waiter_line(const struct extres_coord_entry *e,
				const struct extres_lease_waiter *w);

/* Accept NULL / an empty one. */
void extres_lease_free(struct extres_lease *l);
void extres_lease_busy_clear(struct extres_lease_busy *b);

#endif
