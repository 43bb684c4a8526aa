/* SPDX-License-Identifier: MIT */
/*
 * The coordination file: who holds which device on this host, shared with
 * Flink's discovery scripts.
 *
 * One line per taken device: `KEY PID[\tSTARTTIME[\tNAME=VALUE...]]`. KEY is
 * the coordination key's value (a GPU index by default), PID the owner,
 * STARTTIME field 22 of /proc/PID/stat when the owner was recorded (extres
 * writes it; Flink does not). After STARTTIME come `name=value` words in any
 * order: `lease=ID` on a lease's lines (extresctl run); `uuid=UUID` on the
 * line of a device that has a uuid property, so that a reader can tell
 * when the key has come to name another device; `share=I/N` on a line that
 * holds share I of N of the device (alloc/share.h), beside other shares of
 * it, where a line without it holds the whole device. Words with other
 * names are ignored (a newer extres may write more). Flink's scripts read
 * only KEY PID, so to them a shared device is taken. extres writes a tab
 * before each field after PID and reads any whitespace between fields
 * (older versions wrote a space). Lines that do not parse are kept verbatim
 * and ignored.
 *
 * Every read-decide-write happens under an exclusive flock() on the file
 * itself, and the file is rewritten in place (pwrite + ftruncate on the locked
 * descriptor), never replaced by rename, so every process locks the same
 * inode. The file is opened with O_NOFOLLOW|O_CLOEXEC and must be a regular
 * file with one link that passes extres_check_trusted_shared() (os/trust.h):
 * no user but root and the daemon's own (and members of its groups, or of
 * the trusted group extres.coordination-group names) could write it or
 * replace it. It is created 0660 if missing, in that group when one is
 * named and the caller may give it: a file others can open, they can hold
 * a shared lock on forever.
 *
 * A lock is never waited for without a deadline: anyone who can open the
 * file can hold a lock on it forever.
 */
#ifndef EXTRES_COORD_H
#define EXTRES_COORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "os/proc.h" /* extres_proc_starttime(), extres_proc_describe() */
#include "os/trust.h" /* EXTRES_NO_GROUP */

/* State of a recorded owner. */
#define EXTRES_OWNER_LIVE 0
#define EXTRES_OWNER_DEAD 1 /* no such process */
#define EXTRES_OWNER_REUSED 2 /* PID exists with another start time */
#define EXTRES_OWNER_ZOMBIE 3
#define EXTRES_OWNER_UNPARSABLE 4
/* A queue's waiter line that its live process does not prove (alloc/lease_line.h):
 * forged, or an older extresctl's. Judged by extresctl coord only. */
#define EXTRES_OWNER_UNPROVEN 5

struct extres_coord_entry {
	char *line; /* the line as read, without '\n' */
	size_t line_len; /* bytes in `line` (a garbage line may hold NULs) */
	int parsed; /* 0 for lines kept verbatim */
	char *key; /* parsed: the device key */
	pid_t pid;
	int has_starttime;
	uint64_t starttime;
	char *lease; /* parsed: the lease's id, or NULL for other owners */
	char *uuid; /* parsed: the device's uuid as recorded, or NULL */
	/* parsed: share=I/N, share I (1..N) of N of the device; 0/0 for a
	 * line that holds the whole device. */
	unsigned share_i, share_n;
};

struct extres_coord {
	int fd; /* locked; -1 once closed */
	int kept; /* fd is the caller's (extres_coord_lock_kept()) */
	char *path;
	size_t n;
	struct extres_coord_entry *entries;
};

/* The largest file read, and written: one limit both ways, so that every
 * file extres wrote can be read back (and its lines released). */
#define EXTRES_COORD_MAX_SIZE (16u << 20)

/*
 * Open (creating 0660 if missing) and lock `path` exclusively, then read all
 * entries. Refuses symlinks, non-regular files and files with more than one
 * link (-ELOOP, -EINVAL, -EMLINK) with a message naming the path, without
 * opening them; a file or directory another user could write is -EPERM
 * naming the entry, its owner and mode. If the file was replaced (renamed
 * over, as `sed -i` does) while we waited, locks the new one instead. A file
 * over EXTRES_COORD_MAX_SIZE is -EFBIG. Blank lines are dropped.
 *
 * Waits at most `timeout_ms` for the lock: then -ETIMEDOUT, naming the file
 * and the processes holding a lock on it (from /proc/locks). A SIGTERM or
 * SIGINT pending (blocked) in this process ends the wait at once with
 * -EINTR (see os/stop.h). On success *ret holds the lock until
 * extres_coord_close(). `group` is the trusted group (config->coordination_gid, EXTRES_NO_GROUP
 * for none; see extres_check_trusted_shared()).
 */
int extres_coord_lock(const char *path, unsigned timeout_ms, gid_t group,
		      struct extres_coord **ret, struct extres_err *err);

/* The same for a file that must exist already (inspecting, releasing):
 * -ENOENT ("PATH: No such file or directory") instead of creating it. */
int extres_coord_lock_existing(const char *path, unsigned timeout_ms,
			       gid_t group, struct extres_coord **ret,
			       struct extres_err *err);

/*
 * The same with a descriptor that outlives the lock: *keep_fd (-1 at
 * first) is the descriptor to lock, opened here when it is -1 or no
 * longer the file at `path` (the old one is then closed), and left open
 * for the caller by extres_coord_close(), which only unlocks it. For a
 * process that must never close the file while it waits in it: closing
 * any descriptor of a file drops every POSIX lock the process holds on
 * it (alloc/lease_line.h's proofs). `create` as in extres_coord_lock(). The
 * caller closes *keep_fd when done; on failure it may be -1 or open.
 * `group` as in extres_coord_lock().
 */
int extres_coord_lock_kept(const char *path, int create, unsigned timeout_ms,
			   gid_t group, int *keep_fd, struct extres_coord **ret,
			   struct extres_err *err);

/* Append an entry for key/pid/starttime (in memory). 0, -ENOMEM, or -EINVAL
 * for an empty key, a key with whitespace or a pid <= 0. */
int extres_coord_add(struct extres_coord *c, const char *key, pid_t pid,
		     uint64_t starttime);

/* The same for a lease's line, which carries its id: a non-empty word
 * (-EINVAL otherwise). NULL: as extres_coord_add(). */
int extres_coord_add_lease(struct extres_coord *c, const char *key, pid_t pid,
			   uint64_t starttime, const char *lease);

/* The same with the device's uuid (a non-empty word, or NULL for none),
 * written as a `uuid=` word after the lease's. */
int extres_coord_add_tagged(struct extres_coord *c, const char *key, pid_t pid,
			    uint64_t starttime, const char *lease,
			    const char *uuid);
/* The same for share I of N (1 <= I <= N <= EXTRES_COORD_MAX_SHARES,
 * else -EINVAL; 0/0 for the whole device): the line carries share=I/N
 * after the lease's and uuid's words. */
#define EXTRES_COORD_MAX_SHARES 4096
int extres_coord_add_share(struct extres_coord *c, const char *key, pid_t pid,
			   uint64_t starttime, const char *lease,
			   const char *uuid, unsigned share_i,
			   unsigned share_n);

/* Remove entry i (in memory). */
void extres_coord_remove(struct extres_coord *c, size_t i);

/* Remove (in memory) every parsed entry whose owner is not live: dead,
 * reused PID or zombie. Unparsable lines stay. Returns how many went. */
size_t extres_coord_reclaim(struct extres_coord *c);

/* Rewrite the file in place from the in-memory entries. A file that would
 * be larger than EXTRES_COORD_MAX_SIZE is -EFBIG, with nothing written. */
int extres_coord_write(struct extres_coord *c, struct extres_err *err);

/* Unlock and free. Accepts NULL. Does not write. */
void extres_coord_close(struct extres_coord *c);

/* The owner state of an entry (EXTRES_OWNER_*). A two-field line (Flink's)
 * with a live PID is live. When the PID exists but /proc cannot tell more,
 * the owner counts as live: a live owner's line is never dropped. */
int extres_coord_owner_state(const struct extres_coord_entry *e);

/* "live", "dead", "reused", "zombie", "unparsable", "unproven" (for
 * extresctl). */
const char *extres_coord_owner_state_name(int state);

/* 1 if any parsed entry of `c` records `key`, else 0. Exact match. After
 * extres_coord_reclaim() every parsed entry has a live owner, so this is
 * the cheap form of extres_coord_is_taken(). */
int extres_coord_has_key(const struct extres_coord *c, const char *key);

/* 1 if `key` is held by a live owner in `c`, else 0. Exact match. */
int extres_coord_is_taken(const struct extres_coord *c, const char *key);

/* 1 if `c` has a line of owner/starttime (both recorded) for `key`. */
int extres_coord_recorded_for(const struct extres_coord *c, const char *key,
			      pid_t owner, uint64_t starttime);

/* 1 if `e` is a line recorded by `owner`: with `starttime` when the line
 * has one (a script writes none). */
int extres_coord_entry_of(const struct extres_coord_entry *e, pid_t owner,
			  uint64_t starttime);

/* 1 if `c` has a line for `key` by `owner`, with or without a start time
 * (a script's line has none). */
int extres_coord_has_line_of(const struct extres_coord *c, const char *key,
			     pid_t owner);

/*
 * The live owner other than owner/starttime recording `key` in `c`, or 0.
 * Lines of owners that are gone are judged one by one, for callers that did
 * not reclaim them first.
 */
pid_t extres_coord_other_holder(const struct extres_coord *c, const char *key,
				pid_t owner, uint64_t starttime);

/* Parse one line into *e (line copied). 0 or -ENOMEM; unparsable lines
 * come back with parsed = 0: fewer than two fields, or a PID that is not a
 * decimal number in 1..INT_MAX. The third field is the start time only when
 * it is a decimal number that fits in 64 bits; otherwise it, like any field
 * after it, is ignored, as Flink reads only the first two. After a start
 * time every word is looked at: `lease=` and `uuid=` with a value fill
 * `lease` and `uuid` (the first of each), a well-formed `share=I/N` fills
 * share_i and share_n, any other word is ignored. Free *e with
 * extres_coord_entry_clear(). */
int extres_coord_parse_line(const char *line, size_t len,
			    struct extres_coord_entry *e);
/* Accepts NULL. */
void extres_coord_entry_clear(struct extres_coord_entry *e);

#endif
