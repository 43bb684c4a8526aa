/* SPDX-License-Identifier: MIT */
/*
 * extresctl reload [--timeout SECONDS] [MOUNTPOINT]
 *
 * Ask the extresd serving MOUNTPOINT to re-read its configuration (SIGHUP)
 * and say whether that took. The daemon's .meta/status counts reload
 * attempts and tells the last one's outcome: we wait until the count moves
 * past what it was before the signal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "base/err.h"
#include "base/log.h"
#include "base/clock.h"

#define DEFAULT_TIMEOUT_S 60

struct status {
	long pid;
	unsigned long generation;
	unsigned long reloads;
	char last[600];
};

static void usage_reload(FILE *out)
{
	fprintf(out,
		"usage: extresctl reload [--timeout SECONDS] [MOUNTPOINT]\n"
		"\n"
		"Make the extresd serving MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		")\n"
		"re-read its configuration, as SIGHUP does, and wait for the outcome.\n"
		"A reload is all or nothing: if the new configuration or a driver fails,\n"
		"the daemon keeps serving what it served and keeps its devices.\n"
		"\n"
		"    --timeout SECONDS  how long to wait (default %d); the daemon must\n"
		"                       also answer each access within %d s (or\n"
		"                       SECONDS, if fewer), else it is reported as not\n"
		"                       responding\n"
		"\n"
		"Exit status: 0 when the reload took, 1 when it failed or no answer\n"
		"came, 2 on usage errors. The reason a reload failed is shown to root\n"
		"only: other users find it in the daemon's log.\n",
		DEFAULT_TIMEOUT_S, CTL_MOUNT_TIMEOUT_S);
}

/* Parse .meta/status: "key value" lines. */
static int parse_status(const char *text, struct status *st)
{
	const char *line = text;
	int have = 0;

	memset(st, 0, sizeof(*st));
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (sscanf(line, "pid %ld", &st->pid) == 1)
			have |= 1;
		else if (sscanf(line, "generation %lu", &st->generation) == 1)
			have |= 2;
		else if (sscanf(line, "reloads %lu", &st->reloads) == 1)
			have |= 4;
		else if (strncmp(line, "last-reload ", 12) == 0 &&
			 len - 12 < sizeof(st->last)) {
			memcpy(st->last, line + 12, len - 12);
			st->last[len - 12] = '\0';
			have |= 8;
		}
		line += len + (end ? 1 : 0);
	}
	return have == 15 && st->pid > 0 ? 0 : -EINVAL;
}

static int read_status(const char *mnt, struct status *st,
		       struct extres_err *err)
{
	char *text;
	int r;

	text = extres_ctl_read_meta(mnt, "status");
	if (!text)
		return extres_err_set(err, errno, "%s/.meta/status: %s", mnt,
				      strerror(errno));
	r = parse_status(text, st);
	free(text);
	if (r < 0)
		return extres_err_set(
			err, EINVAL,
			"%s/.meta/status does not look like an extresd status file",
			mnt);
	return 0;
}

/* Say that the reload failed, and why where we may read it (root). */
static void report_failure(const char *mnt, const struct status *st,
			   const char *why, int why_errno)
{
	if (why && why[0])
		extres_log(EXTRES_LOG_ERR,
			   "%s: reload %s: %s; still serving generation %lu",
			   mnt, st->last, why, st->generation);
	else
		extres_log(
			EXTRES_LOG_ERR,
			"%s: reload %s (why: in the daemon's log, and in %s/.meta/error for root%s%s); still serving generation %lu",
			mnt, st->last, mnt, why_errno ? ": " : "",
			why_errno ? strerror(why_errno) : "", st->generation);
}

/* In extres_ctl_on_mount()'s child: signal, wait for the outcome, say it. */
static int reload_job(struct extres_ctl_mount *m, void *arg)
{
	const struct timespec pause = { 0, 20 * 1000 * 1000 };
	const long *timeout = arg;
	long long start = extres_now_ms();
	struct status before, now;
	struct extres_err err;
	char *why = NULL, *nl;
	int why_errno = 0, r;

	r = read_status(m->mnt, &before, &err);
	extres_ctl_mount_step(m);
	if (r == 0 && kill((pid_t)before.pid, SIGHUP) < 0)
		r = extres_err_set(&err, errno,
				   "cannot signal extresd (pid %ld): %s",
				   before.pid, strerror(errno));
	while (r == 0) {
		r = read_status(m->mnt, &now, &err);
		extres_ctl_mount_step(m);
		if (r < 0 || now.reloads != before.reloads)
			break;
		if (extres_now_ms() - start >= *timeout * 1000) {
			r = extres_err_set(
				&err, ETIMEDOUT,
				"extresd (pid %ld) did not report a reload within %ld s",
				before.pid, *timeout);
			break;
		}
		nanosleep(&pause, NULL);
	}
	if (r == 0 && strncmp(now.last, "ok", 2) != 0) {
		why = extres_ctl_read_meta(m->mnt, "error");
		why_errno = why ? 0 : errno;
		if (why && (nl = strchr(why, '\n')))
			*nl = '\0';
	}
	extres_ctl_mount_done(m);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	} else if (strncmp(now.last, "ok", 2) == 0) {
		printf("%s: reloaded, generation %lu\n", m->mnt,
		       now.generation);
	} else {
		report_failure(m->mnt, &now, why, why_errno);
		r = -EINVAL;
	}
	free(why);
	return r < 0 ? 1 : 0;
}

static int reload_run(void *opts, const struct extres_ctl_mount_args *args)
{
	long timeout = args->timeout;

	(void)opts;
	/* Each access has the usual deadline, or less when the whole wait
	 * is shorter; the child's own wait ends first when the daemon
	 * answers but the reload takes too long. */
	return extres_ctl_on_mount(
		args->mountpoint,
		timeout < CTL_MOUNT_TIMEOUT_S ? timeout : CTL_MOUNT_TIMEOUT_S,
		timeout + 1, reload_job, &timeout);
}

const struct extres_ctl_mount_verb extres_ctl_reload = {
	.options = (const struct option[]){ { NULL, 0, NULL, 0 } },
	.shortopts = "",
	.timeout_default = DEFAULT_TIMEOUT_S,
	.timeout_max = 86400,
	.usage = usage_reload,
	.run = reload_run,
};
