/* SPDX-License-Identifier: MIT */
/*
 * Inside extresctl run (run.c, run_child.c, run_take.c): the command's
 * process, which waits for its lease before it execs, and the wait for
 * that lease. Not for other commands.
 */
#ifndef EXTRES_CTL_RUN_H
#define EXTRES_CTL_RUN_H

#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "lease/lease.h"

/* EX_TEMPFAIL: the devices are busy; try again later. */
#define RUN_EXIT_BUSY 75

struct run_child {
	pid_t pid; /* -1 before the fork */
	uint64_t starttime; /* /proc/PID/stat field 22 */
	int go_fd; /* our end: what the child needs, then EOF; -1 once sent */
	int status_fd; /* our end: the errno of a failed exec, or EOF */
	int reaped;
	int status; /* waitpid()'s, once reaped */
};

/*
 * Fork the command's process. It first takes a lease command's proof
 * (lease/lease.h) on each of `files` (NULL-terminated: the coordination
 * files, which must exist), and this returns only once it has. Then it
 * waits for what run_child_go() sends; at EOF without it (we failed, or
 * died) it exits 127 without running anything. Just before exec it
 * drops a pending SIGTSTP and restores `old_mask`: the caller has blocked
 * the signals it reads from a signalfd, SIGCHLD and SIGPIPE. Call it
 * before any driver is loaded: the child of a single-threaded process may
 * use malloc. 0, or a negative errno with `err` set.
 */
int run_child_spawn(char *const argv[], char *const files[],
		    const sigset_t *old_mask, struct run_child *ch,
		    struct extres_err *err);

/*
 * Hand the child its environment (NULL-terminated "NAME=VALUE", set over
 * what it inherited) and CPUs (`cpus` NULL: as inherited), and let it
 * exec. 0 once the exec succeeded; a negative errno when it failed (its
 * errno; the child has then exited 126 or 127 and is reaped) or when the
 * child could not be told (it died), with `err` set.
 */
int run_child_go(struct run_child *ch, char *const env[], const cpu_set_t *cpus,
		 struct extres_err *err);

/* 1 once the child has ended (reaped now or before), else 0. */
int run_child_ended(struct run_child *ch);

/* SIGKILL the child if it has not ended, and reap it. */
void run_child_kill(struct run_child *ch);

/* The shell's way of saying how the child ended: its exit status, or
 * 128 + the signal that killed it. */
int run_child_exit_status(const struct run_child *ch);

/*
 * Wait for the child's end, forwarding SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT read from `sigfd` to it (not those the terminal sent our whole
 * process group, which reached the child already). `sigfd` also reads
 * SIGCHLD, and SIGTSTP, on which we stop ourselves. 0 once the child is reaped, or a negative errno.
 */
int run_child_wait(struct run_child *ch, int sigfd);

/* The take, waiting or not; run_take.c. */
struct run_take {
	const struct extres_lease_want *wants;
	size_t n;
	struct run_child *child;
	struct extres_lease_waiter waiter; /* this process */
	int wait; /* --wait given */
	long long deadline_ms; /* --wait=SECONDS: when to give up; else -1 */
	unsigned lock_timeout_ms;
	int sigfd; /* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGTSTP */
};

/*
 * Take the lease for the child, waiting as told. 0 with *ret; otherwise
 * an exit status for extresctl, after saying why on stderr:
 * RUN_EXIT_BUSY (busy, holders listed; after the wait when there was
 * one), 128 + N when signal N stopped the wait, 1 for another failure.
 * Nothing of the waiter stays in a queue when this does not return 0.
 */
int run_take(const struct run_take *t, struct extres_lease **ret);

#endif
