/* SPDX-License-Identifier: MIT */
/*
 * Whether this process has been asked to stop.
 *
 * extresd blocks SIGTERM and SIGINT in every thread and reads them from a
 * signalfd (daemon/control.h); until that read they stay pending. Work that may
 * wait long (a lock another process holds, a discovery script) asks here,
 * so that a stop is obeyed within a second whatever the daemon is doing. In
 * a process that does not block them (extresctl), the signals act at once
 * and this is always 0.
 */
#ifndef EXTRES_STOP_H
#define EXTRES_STOP_H

/* 1 if SIGTERM or SIGINT is pending for this process or thread, else 0. */
int extres_stop_pending(void);

#endif
