/* SPDX-License-Identifier: MIT */
/*
 * The keeper: a small process between the daemon and a discovery script, so
 * that nothing the script starts outlives the discovery, whatever happens to
 * the daemon.
 *
 * The driver forks the keeper and the keeper forks the script. The keeper is
 * a child subreaper (PR_SET_CHILD_SUBREAPER), so a process that leaves the
 * script's process group (setsid) and loses its parent becomes the keeper's
 * child, not init's; the script gets PR_SET_PDEATHSIG(SIGKILL), so it dies
 * with the keeper. The keeper waits on a pipe whose write end only the
 * daemon holds ("the lifeline"): a byte written there, or the daemon's death
 * (even by SIGKILL, which closes the pipe), makes it kill the script's
 * process group, then every process left under it, reap them all and exit.
 *
 * Everything here between fork() and exit is async-signal-safe: the daemon
 * that forks has other threads.
 */
#ifndef EXTRES_SCRIPT_KEEPER_H
#define EXTRES_SCRIPT_KEEPER_H

#include <stdint.h>

/* What the keeper (and the script, for a failed exec) tells the driver,
 * one struct script_keeper_msg per write, on the status pipe. */
enum {
	KEEPER_EXEC_FAILED = 1, /* value: the exec's errno */
	KEEPER_FORK_FAILED, /* value: fork's errno; no script ran */
	KEEPER_EXITED, /* value: the script's exit status */
	KEEPER_KILLED, /* value: the signal that killed it */
	/* After the lifeline: value is how many processes outside the
	 * script's process group were killed, or -1 when they could not be
	 * looked for (no /proc/thread-self/children). Last message. */
	KEEPER_SWEPT,
};

struct script_keeper_msg {
	int32_t kind;
	int32_t value;
};

/* The keeper's ends of its pipes, all above 2, all O_CLOEXEC. */
struct script_keeper_fds {
	int out; /* the script's stdout */
	int err; /* the script's stderr */
	int status; /* messages to the driver */
	int life; /* read end of the lifeline */
};

/* Run as the keeper of `argv` (argv[0] is the path to exec) in a process
 * just forked; never returns. */
void script_keeper_run(char *const argv[], const struct script_keeper_fds *fds)
	__attribute__((noreturn));

#endif
