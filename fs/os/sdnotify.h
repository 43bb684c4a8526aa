/* SPDX-License-Identifier: MIT */
/*
 * systemd's readiness protocol without libsystemd: one datagram with
 * "READY=1" (or "RELOADING=1", "STOPPING=1", ...) to $NOTIFY_SOCKET.
 */
#ifndef EXTRES_SDNOTIFY_H
#define EXTRES_SDNOTIFY_H

/*
 * Send `state` to $NOTIFY_SOCKET (a path, or "@name" for the abstract
 * namespace). 0 when sent or when the variable is unset (not run by a
 * service manager), else a negative errno.
 */
int extres_sd_notify(const char *state);

#endif
