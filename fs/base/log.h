/* SPDX-License-Identifier: MIT */
/*
 * The daemon's and extresctl's one logging entry point. Levels are syslog's
 * (EXTRES_LOG_* in <extres/driver.h>). Messages go to stderr, prefixed with the
 * program name, until extres_log_use_syslog() switches to syslog (a daemon that
 * left its terminal). Thread-safe: one write per message.
 */
#ifndef EXTRES_LOG_H
#define EXTRES_LOG_H

#include <stdarg.h>

#include <extres/driver.h>

/* Set the program name shown in front of messages (default "extres"). */
void extres_log_init(const char *progname);
/* Drop messages above `level` (default EXTRES_LOG_INFO). */
void extres_log_set_level(int level);
/* From now on, send messages to syslog instead of stderr: 0, or -ENOENT
 * (and messages still go to stderr) when no syslog daemon listens on
 * /dev/log. Calling it again changes nothing. */
int extres_log_use_syslog(void);

void extres_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void extres_logv(int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
