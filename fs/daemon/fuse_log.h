/* SPDX-License-Identifier: MIT */
/*
 * libfuse's own messages (option errors, -d's request trace, session
 * errors) through extres' log, so that they go where ours go: stderr, or
 * syslog once the daemon is in the background.
 */
#ifndef EXTRESD_FUSE_LOG_H
#define EXTRESD_FUSE_LOG_H

/* Route libfuse's messages; call before any other libfuse call. With
 * `debug`, debug messages (libfuse's and the drivers') are logged too. */
void extresd_fuse_log_init(int debug);

#endif
