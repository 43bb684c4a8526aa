/* SPDX-License-Identifier: MIT */
/*
 * extresctl cdi [--output DIR] [--timeout SECONDS] [MOUNTPOINT]
 *
 * Write the CDI specs of the extresd serving MOUNTPOINT into DIR, where
 * container runtimes look for them: one file extres-<resource>.json per
 * resource. The specs are the daemon's .meta/cdi.json, split on its lines
 * (views/cdi_view.h promises one member per line), so that the command and
 * the view never disagree and the command needs no driver or config.
 *
 * DIR is root's: a runtime gives a container every node a spec names, so
 * a directory another user could write is refused. Each file is written to
 * a temporary name in DIR and renamed over the old one, so that a runtime
 * reading the directory sees the old spec or the new one, never half.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/ctl.h"
#include "base/err.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"
#include "views/cdi_files.h"
#include "os/mountpoint.h"
#include "os/trust.h"

#define DEFAULT_DIR "/var/run/cdi"

struct cdi_opts {
	const char *dir;
	int prune;
};

static void usage_cdi(FILE *out)
{
	fprintf(out,
		"usage: extresctl cdi [--output DIR] [--prune] [--timeout SECONDS]\n"
		"                     [MOUNTPOINT]\n"
		"\n"
		"Write a CDI (Container Device Interface) spec for each resource that\n"
		"the extresd serving MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		") allocated,\n"
		"as in MOUNTPOINT/.meta/cdi.json, to DIR/" EXTRES_CDI_FILE_PREFIX
		"RESOURCE" EXTRES_CDI_FILE_SUFFIX ", so that\n"
		"'podman run --device extres.dev/RESOURCE=N' gives a container device N.\n"
		"\n"
		"    --output DIR   where (default " DEFAULT_DIR
		"); only root or you may be\n"
		"                   able to write to it and to the directories above\n"
		"    --prune        also remove the files of that form that name no\n"
		"                   resource of this mount any more; only where this\n"
		"                   is the one extresd that writes to DIR (another's\n"
		"                   files have the same form)\n"
		"    --timeout SECONDS\n"
		"                   how long the daemon may take to answer each\n"
		"                   access (default %d)\n"
		"    -h, --help     this help\n"
		"\n"
		"Exit status: 0 when every file was written, 1 otherwise, 2 on usage\n"
		"errors.\n",
		CTL_MOUNT_TIMEOUT_S);
}

/* The daemon's "cdi-base-missing RESOURCE COMMAND" lines of .meta/status:
 * a spec written without the vendor's gives a container the devices'
 * nodes and variables, not the driver's libraries. */
static void warn_missing_bases(const char *status)
{
	const char *p, *nl, *name, *sp;

	for (p = status; p && (nl = strchr(p, '\n')); p = nl + 1) {
		if (strncmp(p, "cdi-base-missing ", 17) != 0)
			continue;
		name = p + 17;
		sp = memchr(name, ' ', (size_t)(nl - name));
		if (!sp)
			continue;
		extres_log(
			EXTRES_LOG_WARNING,
			"resource '%.*s': no CDI spec from its devices' vendor on this node: a container given its devices gets their nodes and variables, not the driver's libraries; make one with: %.*s, then extresctl reload",
			(int)(sp - name), name, (int)(nl - sp - 1), sp + 1);
	}
}

/* In extres_ctl_on_mount()'s child: read the view, then write. */
static int cdi_job(struct extres_ctl_mount *m, void *arg)
{
	const struct cdi_opts *o = arg;
	struct extres_err err;
	long owner = -1;
	char *view, *status;
	int r;

	/* A runtime does as root what a spec says: only a mount root made
	 * (or the caller, who could write the files anyway) is listened
	 * to, not any user's own extresd or FUSE file system. */
	r = extres_mountpoint_owner(m->mnt, &owner, &err);
	if (r == 0 && owner != 0 && owner != (long)getuid())
		r = extres_err_set(
			&err, EPERM,
			"refusing the CDI specs of %s: it was mounted by uid %ld, not by root or you",
			m->mnt, owner);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	view = extres_ctl_read_meta(m->mnt, "cdi.json");
	r = view ? 0 : -errno;
	status = r == 0 ? extres_ctl_read_meta(m->mnt, "status") : NULL;
	extres_ctl_mount_step(m);
	extres_ctl_mount_done(m);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s/.meta/cdi.json: %s", m->mnt,
			   strerror(-r));
		return 1;
	}
	/* An older daemon's status says nothing of it: nothing to warn. */
	warn_missing_bases(status);
	free(status);
	r = extres_cdi_files_write(o->dir, view, NULL, o->prune, stdout, &err);
	free(view);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	return 0;
}

static int cdi_option(void *opts, int c, const char *arg)
{
	struct cdi_opts *o = opts;

	switch (c) {
	case 'o':
		if (!*arg)
			return extres_ctl_usage_error(
				"cdi", "cdi: --output is an empty string");
		o->dir = arg;
		return 0;
	case 'p':
		o->prune = 1;
		return 0;
	default:
		return CTL_EXIT_USAGE;
	}
}

static int cdi_run(void *opts, const struct extres_ctl_mount_args *args)
{
	struct cdi_opts *o = opts;

	if (!o->dir)
		o->dir = DEFAULT_DIR;
	return extres_ctl_on_mount(args->mountpoint, args->timeout, 0, cdi_job,
				   o);
}

const struct extres_ctl_mount_verb extres_ctl_cdi = {
	.options =
		(const struct option[]){
			{ "output", required_argument, NULL, 'o' },
			{ "prune", no_argument, NULL, 'p' },
			{ NULL, 0, NULL, 0 },
		},
	.shortopts = "o:",
	.timeout_default = CTL_MOUNT_TIMEOUT_S,
	.timeout_max = 86400,
	.opts_size = sizeof(struct cdi_opts),
	.usage = usage_cdi,
	.option = cdi_option,
	.run = cdi_run,
};
