/* SPDX-License-Identifier: MIT */
#include "daemon/fuse_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <fuse_log.h>

#include "base/log.h"

/*
 * libfuse writes some lines in pieces (its option errors: one call per
 * argument) and ends each line with "\n": pieces are gathered up to it, so
 * that each line is one message. Per thread, since a line is one thread's.
 */
static __thread struct {
	char text[1024];
	size_t len;
} line;

static void fuse_log_func(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	size_t room = sizeof(line.text) - line.len;
	int n;

	n = vsnprintf(line.text + line.len, room, fmt, ap);
	if (n < 0)
		return;
	line.len += (size_t)n < room ? (size_t)n : room - 1;
	/* A piece without its "\n" waits for the rest, unless no room is
	 * left for it. */
	if (line.len < sizeof(line.text) - 1 &&
	    (line.len == 0 || line.text[line.len - 1] != '\n'))
		return;
	while (line.len > 0 && line.text[line.len - 1] == '\n')
		line.text[--line.len] = '\0';
	/* libfuse's levels are syslog's, as ours are. */
	if (line.len > 0)
		extres_log((int)level, "%s", line.text);
	line.len = 0;
}

void extresd_fuse_log_init(int debug)
{
	if (debug)
		extres_log_set_level(EXTRES_LOG_DEBUG);
	fuse_set_log_func(fuse_log_func);
}
