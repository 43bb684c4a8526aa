/* SPDX-License-Identifier: MIT */
/*
 * Who holds each device recorded in a coordination file: the node's view
 * that .meta/holders, the "holders" array of .meta/extres.json, `extresctl
 * status` and `extresctl leases` show.
 *
 * Every parsed line of a coordination file is one holder (a line that does
 * not parse names no device and is left out), in the file's order, with:
 *
 *   state   live, or dead / reused / zombie: the owner is gone and the next
 *           allocator reclaims the line (see coord.h). A line that is not
 *           live is "stale": it is shown, so that what the file says stays
 *           visible, but nothing about its PID is (whoever has that PID now
 *           is not the holder): no user, command or since.
 *   kind    daemon   the line was recorded for this extresd's owner (its
 *                    PID and start time; a line without a start time for
 *                    that PID, as a script writes, counts too);
 *           lease    the line carries lease=ID (extresctl run) and, while
 *                    its owner lives, the lease's command proves it
 *                    (alloc/lease_line.h; an unproven one is "other");
 *           extresd  another extres daemon: the live owner's comm or exe is
 *                    "extresd";
 *           other    anything else: Flink's scripts, unknown writers, and
 *                    stale lines that are not a lease's.
 *   user    the live owner's real uid, and its name when the user database
 *           has one (else the number);
 *   command the live owner's /proc/PID/comm (at most 15 bytes, shown as
 *           extres_proc_comm() does); it changes when the owner execs,
 *           which is why a holder read before (extresctl run records its
 *           command before the exec) is read again (daemon/holders.c);
 *   since   the live owner's start time, as seconds since the epoch.
 */
#ifndef EXTRES_HOLDERS_H
#define EXTRES_HOLDERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/json.h"
#include "alloc/coord.h"

#define EXTRES_HOLDER_DAEMON 0
#define EXTRES_HOLDER_LEASE 1
#define EXTRES_HOLDER_EXTRESD 2
#define EXTRES_HOLDER_OTHER 3

struct extres_holder {
	char *resource;
	char *key;
	pid_t pid;
	int has_starttime; /* as recorded on the line */
	uint64_t starttime;
	int state; /* EXTRES_OWNER_LIVE, _DEAD, _REUSED or _ZOMBIE */
	int kind; /* EXTRES_HOLDER_* */
	char *lease; /* the lease's id, or NULL */
	char *uuid; /* the device's uuid as the line records it, or NULL */
	unsigned share_i, share_n; /* share=I/N (alloc/share.h), or 0/0 */
	/* Of a live owner only; unknown otherwise. */
	int has_uid;
	uid_t uid;
	char *user; /* NULL: unknown */
	char *command; /* NULL: unknown */
	int64_t since; /* -1: unknown */
};

struct extres_holders {
	size_t n;
	struct extres_holder *items;
};

/* This extresd's identity in coordination files: its owner and the
 * owner's start time; the boot time and clock ticks turn start times into
 * dates. */
struct extres_holders_ctx {
	pid_t self;
	uint64_t self_starttime;
	uint64_t boot_time; /* seconds since the epoch; 0: no dates */
	long ticks; /* sysconf(_SC_CLK_TCK) */
};

/*
 * The kind of line `e`, whose owner is in `state`, for a daemon whose
 * owner is self/self_starttime; `comm` and `exe` (either may be NULL) are
 * the live owner's. Pure.
 */
int extres_holder_kind(const struct extres_coord_entry *e, int state,
		       pid_t self, uint64_t self_starttime, const char *comm,
		       const char *exe);

/* "daemon", "lease", "extresd", "other". */
const char *extres_holder_kind_name(int kind);

/*
 * Append a holder for every parsed line of `c` (read under its lock),
 * for resource `resource`, looking at each owner in /proc and the user
 * database. 0 or -ENOMEM (then `h` holds what was added before).
 */
int extres_holders_add_file(struct extres_holders *h, const char *resource,
			    const struct extres_coord *c,
			    const struct extres_holders_ctx *ctx);

/* Empty `h`. Accepts a zeroed one. */
void extres_holders_clear(struct extres_holders *h);

/*
 * .meta/holders: one line per holder, fields separated by one tab:
 *
 *   RESOURCE KEY PID USER COMMAND SINCE KIND LEASE STATE SHARE
 *
 * SINCE as 2025-01-31T12:00:00Z (UTC); SHARE as I/N for a line holding
 * share I of N of the device (alloc/share.h); USER, COMMAND, SINCE, LEASE
 * and SHARE are "-" when unknown or none. SHARE came last, after the nine
 * fields readers knew, so that they read on. Each field shows as extres_put_line_text()
 * writes it: tabs, newlines and other control characters as '?', bytes
 * that are not UTF-8 as U+FFFD, so the text is valid UTF-8 and its lines
 * and fields are as above. Empty text when there are none. 0 with *ret_text
 * (malloc'd, NUL-ended) and *ret_len, or -ENOMEM. Pure.
 */
int extres_holders_text(const struct extres_holders *h, char **ret_text,
			size_t *ret_len);

/*
 * The same as a JSON array of objects, into `json`:
 *
 *   [{"resource": "gpu", "key": "0", "pid": 123, "uid": 0, "user": "root",
 *     "command": "extresd", "since": "2025-01-31T12:00:00Z",
 *     "kind": "daemon", "lease": null, "state": "live",
 *     "share": null or {"index": I, "of": N}}, ...]
 *
 * with null for what is unknown or none. Pure.
 */
void extres_holders_json(struct extres_json *json,
			 const struct extres_holders *h);

#endif
