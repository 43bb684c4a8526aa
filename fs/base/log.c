/* SPDX-License-Identifier: MIT */
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

/*
 * Process-wide logging settings: set once by main() before any thread starts,
 * read-only afterwards; but for `syslog`, which extresd turns on once its
 * mount serves, while its other threads log (so read and set atomically).
 */
static struct {
	const char *progname;
	int level;
	int syslog;
} log_cfg = { "extres", EXTRES_LOG_INFO, 0 };

void extres_log_init(const char *progname)
{
	log_cfg.progname = progname;
}

void extres_log_set_level(int level)
{
	log_cfg.level = level;
}

/* Whether a syslog daemon listens: syslog(3) drops what it cannot send, so
 * without one, switching would lose every later message. */
static int syslog_listens(void)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t i;
	int fd, ok = 0;

	memcpy(addr.sun_path, _PATH_LOG, sizeof(_PATH_LOG));
	for (i = 0; i < sizeof(types) / sizeof(types[0]) && !ok; i++) {
		fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
		close(fd);
	}
	return ok;
}

int extres_log_use_syslog(void)
{
	if (__atomic_load_n(&log_cfg.syslog, __ATOMIC_ACQUIRE))
		return 0;
	if (!syslog_listens())
		return -ENOENT;
	openlog(log_cfg.progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	__atomic_store_n(&log_cfg.syslog, 1, __ATOMIC_RELEASE);
	return 0;
}

static const char *level_name(int level)
{
	switch (level) {
	case EXTRES_LOG_ERR:
		return "error: ";
	case EXTRES_LOG_WARNING:
		return "warning: ";
	default:
		return "";
	}
}

void extres_logv(int level, const char *fmt, va_list ap)
{
	char line[4096];
	int n;

	if (level > log_cfg.level)
		return;
	if (__atomic_load_n(&log_cfg.syslog, __ATOMIC_ACQUIRE)) {
		vsyslog(level, fmt, ap);
		return;
	}
	n = snprintf(line, sizeof(line), "%s: %s", log_cfg.progname,
		     level_name(level));
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	n = (int)strlen(line);
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write so that concurrent messages do not interleave. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void extres_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	extres_logv(level, fmt, ap);
	va_end(ap);
}
