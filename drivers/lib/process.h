/* SPDX-License-Identifier: MIT */
/*
 * Running a program to completion for a driver: without a shell, stdin from
 * /dev/null, in its own process group, both output pipes read into memory,
 * with a timeout, a way to be asked to stop, and nothing it started left
 * behind afterwards (process_keeper.h).
 *
 * Use: process_init(), process_start(), then (when exec_errno is 0)
 * process_pump(), then always process_finish() after a successful start,
 * and process_clear() at the end. One thread; the caller's SIGCHLD
 * disposition must let waitid() see the child (the default does).
 */
#ifndef EXTRES_DRIVERS_PROCESS_H
#define EXTRES_DRIVERS_PROCESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most of stdout kept (more is `overflow`); stderr keeps its last
 * PROCESS_OUTPUT_MAX bytes, where the reason for a failure is. */
#define PROCESS_OUTPUT_MAX (64u * 1024u)
/* After the program exits, how long a background child of it may keep the
 * pipes open before we stop reading and kill its process group. */
#define PROCESS_EXIT_GRACE_MS 100
/* How often a wait looks whether it is asked to stop. */
#define PROCESS_STOP_SLICE_MS 50

enum { PROCESS_OUT, PROCESS_ERR };

/* One run, from start to reap. The fields after `buf` are the outcome. */
struct process {
	pid_t pid; /* the program's */
	int pidfd; /* -1 when the kernel has no pidfd_open */
	pid_t keeper; /* process_keeper.h; -1 when none */
	int status; /* read end: the exec's errno, then the keeper's count */
	int life; /* write end of the keeper's lifeline */
	int fd[2]; /* read ends of stdout and stderr; -1 once at EOF */
	char *buf[2]; /* PROCESS_OUTPUT_MAX bytes each */
	size_t len[2];
	int exited; /* a zombie: waited for, not reaped */
	int timed_out;
	int stopped; /* stop_requested() said so */
	int overflow; /* stdout went past PROCESS_OUTPUT_MAX */
	int lingering; /* a pipe was still open after the grace period */
	int exec_errno; /* the program could not be started */
	int exit_code; /* once exited: its exit status, */
	int exit_signal; /* or the signal that killed it */
	int escaped; /* killed outside its group; -1: unknown */
	int holder_left; /* after all that, the output is still held open */
};

/* Empty run with its output buffers: 0 or -ENOMEM. process_clear() it
 * either way. */
int process_init(struct process *p);

/*
 * Start argv[0] (a path; argv NULL-terminated) and its keeper. 0 or a
 * negative errno (nothing started then); on 0, exec_errno is set when the
 * exec itself failed (ENOENT, EACCES, ENOEXEC), and process_finish() must
 * follow.
 */
int process_start(struct process *p, char *const argv[]);

/*
 * Read both pipes until both are at EOF and the program has exited, or
 * `timeout_ms` passes (timed_out), stdout overflows (overflow),
 * stop_requested(arg) returns non-zero (stopped; polled every
 * PROCESS_STOP_SLICE_MS), or the program has exited and the grace period
 * for its pipes is over (lingering). 0 or a negative errno.
 */
int process_pump(struct process *p, uint64_t timeout_ms,
		 int (*stop_requested)(void *arg), void *arg);

/*
 * Kill what is left of the run (its group, and through the keeper what left
 * the group) and reap it: no zombie, no fd, no process left. Sets escaped
 * and holder_left.
 */
void process_finish(struct process *p);

/* Free the buffers. */
void process_clear(struct process *p);

#endif
