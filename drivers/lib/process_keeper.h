/* SPDX-License-Identifier: MIT */
/*
 * Running a discovery script so that nothing it starts outlives the
 * discovery, whatever happens to the daemon.
 *
 * The script is the daemon's own child (Flink's coordinating scripts record
 * $PPID as the devices' owner), in its own process group, with
 * PR_SET_PDEATHSIG(SIGKILL): it dies with the daemon. What it starts in its
 * group is killed with the group. What leaves the group (setsid) is found by
 * the keeper: a second child, in a session of its own, that walks the
 * script's tree every few milliseconds and remembers every process outside
 * the group (pid and start time). When the daemon writes a byte on the
 * lifeline, or dies (even by SIGKILL, which closes it), the keeper stops
 * the whole tree, kills it and every process it remembers, kills the group,
 * reports how many processes outside the group it killed, and exits.
 *
 * A process that leaves the group and whose ancestors in the tree all exit
 * within one walk (PROCESS_KEEPER_WALK_MS) can be missed; and only the
 * children of each process's main thread are walked.
 *
 * Everything here runs between fork() and exit or exec, so it is
 * async-signal-safe: the daemon that forks has other threads.
 */
#ifndef EXTRES_PROCESS_KEEPER_H
#define EXTRES_PROCESS_KEEPER_H

#include <stdint.h>
#include <sys/types.h>

#define PROCESS_KEEPER_WALK_MS 20

/* The keeper's ends of its pipes, both above 2, both O_CLOEXEC. */
struct process_keeper_fds {
	int status; /* write end: one int32_t, the count killed (-1: none
		     * could be looked for), then EOF */
	int life; /* read end of the lifeline */
};

/* Run as the keeper of the script `pid` (its process group too) in a
 * process just forked; never returns. */
void process_keeper_run(pid_t pid, const struct process_keeper_fds *fds)
	__attribute__((noreturn));

/* In the script's child just forked by `parent`: die with the parent, own
 * process group, stdout and stderr to `out` and `err` (stdin is set by the
 * caller), every other fd above 2 closed but `status` (O_CLOEXEC; gets the
 * exec's errno as an int32_t if it fails), default signals; then exec. */
void process_keeper_exec(char *const argv[], pid_t parent, int out, int err,
			 int status) __attribute__((noreturn));

#endif
