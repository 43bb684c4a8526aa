/* SPDX-License-Identifier: MIT */
/*
 * Going to the background so that the command returns only once the mount is
 * ready, while the process that stays (and is recorded as the devices' owner)
 * is the daemon itself.
 *
 * extres_daemonize_start() forks. The parent waits, and exits 0 when the
 * child reports ready or 1 when the child reports failure or dies; it never
 * returns. SIGINT or SIGTERM to the waiting parent calls the start off: it
 * sends the child SIGTERM (a stop: release everything, mount nothing),
 * waits for it to exit (5 s at most), says so on stderr and exits 130 or
 * 143. SIGHUP to the waiting parent is passed on to the child (a reload
 * request, which the child keeps pending until it serves). The caller
 * must have blocked SIGINT, SIGTERM and SIGHUP. The child starts a new
 * session and carries on: it prints its own start-up errors to the
 * still-shared stderr, then calls extres_daemonize_finish() with the
 * result.
 */
#ifndef EXTRES_DAEMONIZE_H
#define EXTRES_DAEMONIZE_H

struct extres_daemonize {
	int fd; /* write end to the waiting parent; -1 when not daemonized */
};

/* 0 in the child, a negative errno if fork or pipe failed (in the caller,
 * nothing changed). */
int extres_daemonize_start(struct extres_daemonize *d);

/*
 * Tell the parent the outcome (ok != 0: ready) and, when ready, detach from
 * the terminal: cwd to /, stdin and stdout to /dev/null, and the log to
 * syslog (extres_log_use_syslog()); without a syslog daemon, the log stays
 * on stderr, which is kept unless it is a pipe (the caller may wait for its
 * end; a warning says so first). No-op when d->fd is -1.
 */
void extres_daemonize_finish(struct extres_daemonize *d, int ok);

#endif
