/* SPDX-License-Identifier: MIT */
/*
 * extresctl leases: the live leases (extresctl run) recorded in the
 * coordination files a running extresd follows, read from its
 * .meta/holders; and --kill LEASE, which sends SIGTERM to a lease's
 * command.
 *
 * A lease's id is its command's PID and start time, so the signal goes to
 * that process only: through a pidfd opened before the start time is
 * checked, a PID reused after the check names a process that is gone, and
 * the signal fails rather than reach the newcomer. The process must hold
 * a lease command's lock (lease/lease.h), which a forged line cannot give
 * it; the daemon lists only such leases. Only root or the
 * command's owner may end it (the kernel's own rule is wider: it also
 * lets a process signal one whose saved uid matches).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "views/holders.h"
#include "lease/lease.h"
#include "ctl/ctl.h"
#include "os/proc.h"

#define HOLDER_FIELDS 10

static void usage_leases(FILE *out)
{
	fprintf(out,
		"usage: extresctl leases [--timeout SECONDS] [MOUNTPOINT]\n"
		"       extresctl leases --kill LEASE [--timeout SECONDS] [MOUNTPOINT]\n"
		"\n"
		"List the live leases (extresctl run) in the coordination files\n"
		"that the extresd serving MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		")\n"
		"follows, one line per lease and resource:\n"
		"\n"
		"    LEASE PID USER COMMAND RESOURCE DEVICES\n"
		"\n"
		"DEVICES being the devices' keys joined by ','; a share of a device\n"
		"shows as KEY[I/N], share I of its N (extres.yaml(5): replicas).\n"
		"\n"
		"    --kill LEASE   send SIGTERM to the lease's command, which then\n"
		"                   releases its devices; only root or the user who\n"
		"                   runs it may, and only while the lease is live and\n"
		"                   its PID still belongs to the process that took it\n"
		"    --timeout SECONDS\n"
		"                   how long the daemon may take to answer (default %d)\n"
		"    -h, --help     this help\n",
		CTL_MOUNT_TIMEOUT_S);
}

/* One line of .meta/holders, split in place. */
struct holder_line {
	/* RESOURCE KEY PID USER COMMAND SINCE KIND LEASE STATE SHARE; SHARE
	 * "-" when an older extresd wrote nine. */
	char *f[HOLDER_FIELDS];
};

static int split_line(char *line, struct holder_line *h)
{
	size_t n;
	char *p;

	for (n = 0, p = line; n < HOLDER_FIELDS && p; n++) {
		h->f[n] = p;
		p = strchr(p, '\t');
		if (p)
			*p++ = '\0';
	}
	if (n == HOLDER_FIELDS - 1)
		h->f[n++] = "-";
	/* Fields a newer extresd adds are skipped. */
	return n == HOLDER_FIELDS ? 0 : -EINVAL;
}

/* A live lease's line. */
static int is_live_lease(const struct holder_line *h)
{
	return strcmp(h->f[6], "lease") == 0 && strcmp(h->f[8], "live") == 0;
}

/* The live leases' lines of `text`, split, in *ret (n of them). */
static int lease_lines(char *text, struct holder_line **ret, size_t *ret_n)
{
	struct holder_line *v = NULL, *grown, h;
	char *line, *save = NULL;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (split_line(line, &h) < 0 || !is_live_lease(&h))
			continue;
		grown = realloc(v, (n + 1) * sizeof(*v));
		if (!grown) {
			free(v);
			return -ENOMEM;
		}
		v = grown;
		v[n++] = h;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* One line per lease and resource, in the order first seen. */
static void print_leases(const struct holder_line *v, size_t n)
{
	unsigned char *done = calloc(n ? n : 1, 1);
	size_t i, j;

	if (!done) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return;
	}
	for (i = 0; i < n; i++) {
		if (done[i])
			continue;
		printf("%s %s %s %s %s %s", v[i].f[7], v[i].f[2], v[i].f[3],
		       v[i].f[4], v[i].f[0], v[i].f[1]);
		if (strcmp(v[i].f[9], "-") != 0)
			printf("[%s]", v[i].f[9]);
		for (j = i + 1; j < n; j++) {
			if (done[j] || strcmp(v[j].f[7], v[i].f[7]) != 0 ||
			    strcmp(v[j].f[0], v[i].f[0]) != 0)
				continue;
			printf(",%s", v[j].f[1]);
			if (strcmp(v[j].f[9], "-") != 0)
				printf("[%s]", v[j].f[9]);
			done[j] = 1;
		}
		printf("\n");
	}
	free(done);
}

/* SIGTERM to the lease's command: 0, or 1 after saying why not. */
static int kill_lease(const char *id)
{
	struct extres_proc_info info;
	uint64_t starttime;
	char who[320];
	pid_t pid;
	int fd, r = 1;

	if (extres_lease_id_parse(id, &pid, &starttime) < 0) {
		extres_log(EXTRES_LOG_ERR, "leases: '%s' is not a lease id",
			   id);
		return 1;
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0 || extres_proc_info(pid, &info) < 0 ||
	    info.starttime != starttime || info.state == 'Z') {
		extres_log(EXTRES_LOG_ERR,
			   "leases: lease %s has ended: its command is gone",
			   id);
		goto out;
	}
	/* A line anyone who may write the file can forge: only the
	 * command's own lock says it is a lease's (lease/lease.h). */
	if (!extres_lease_command_proven(pid)) {
		extres_log(
			EXTRES_LOG_ERR,
			"leases: PID %d holds no lease command's lock: lease %s was not made by extresctl run; not signalling it",
			(int)pid, id);
		goto out;
	}
	if (geteuid() != 0 && (!info.has_uid || info.uid != getuid())) {
		extres_log(
			EXTRES_LOG_ERR,
			"leases: lease %s belongs to uid %u; only root or that user may end it",
			id, info.has_uid ? (unsigned)info.uid : 0u);
		goto out;
	}
	extres_proc_describe(pid, who, sizeof(who));
	if (syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0) < 0) {
		extres_log(EXTRES_LOG_ERR, "leases: cannot signal %s: %s", who,
			   errno == ESRCH ? "it has exited" : strerror(errno));
		goto out;
	}
	printf("sent SIGTERM to %s, the command of lease %s\n", who, id);
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	return r;
}

struct leases_opts {
	const char *kill;
};

static int leases_job(struct extres_ctl_mount *m, void *arg)
{
	const struct leases_opts *o = arg;
	struct holder_line *v = NULL;
	char *text;
	size_t n = 0, i;
	int r = 1;

	text = extres_ctl_read_meta(m->mnt, "holders");
	extres_ctl_mount_step(m);
	extres_ctl_mount_done(m);
	if (!text) {
		extres_log(EXTRES_LOG_ERR, "%s/.meta/holders: %s", m->mnt,
			   strerror(errno));
		return 1;
	}
	if (lease_lines(text, &v, &n) < 0) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out;
	}
	if (!o->kill) {
		print_leases(v, n);
		r = 0;
		goto out;
	}
	/* Only a lease the daemon shows: this is no general kill(1). */
	for (i = 0; i < n; i++)
		if (strcmp(v[i].f[7], o->kill) == 0)
			break;
	if (i == n)
		extres_log(EXTRES_LOG_ERR, "leases: no live lease %s at %s",
			   o->kill, m->mnt);
	else
		r = kill_lease(o->kill);
out:
	free(v);
	free(text);
	return r;
}

static int leases_option(void *opts, int c, const char *arg)
{
	struct leases_opts *o = opts;

	if (c != 'k')
		return CTL_EXIT_USAGE;
	o->kill = arg;
	return 0;
}

static int leases_run(void *opts, const struct extres_ctl_mount_args *args)
{
	return extres_ctl_on_mount(args->mountpoint, args->timeout, 0,
				   leases_job, opts);
}

const struct extres_ctl_mount_verb extres_ctl_leases = {
	.options =
		(const struct option[]){
			{ "kill", required_argument, NULL, 'k' },
			{ NULL, 0, NULL, 0 },
		},
	.shortopts = "",
	.timeout_default = CTL_MOUNT_TIMEOUT_S,
	.timeout_max = 86400,
	.opts_size = sizeof(struct leases_opts),
	.usage = usage_leases,
	.option = leases_option,
	.run = leases_run,
};
