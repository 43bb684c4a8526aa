/* SPDX-License-Identifier: MIT */
/*
 * extresctl: inspect a configuration, a running daemon's mount and the
 * coordination file, without mounting anything.
 *
 * Exit 0 on success, 1 when the config, a driver, the mount or the file
 * fails (a daemon that does not answer within a deadline too: see
 * extres_ctl_on_mount() in ctl/ctl.h), 2 on usage errors.
 *
 * This file holds the global options and the verb table (verbs[]): each
 * verb's name, its lines in --help, which of the common options it takes
 * and its handler, which lives in the file named after the verb (check.c
 * holds discover too). The verbs on a running extresd share the tail
 * `[--timeout S] [MOUNTPOINT]`, parsed here once for all of them, so that
 * they cannot drift apart.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extres_build.h"

#include "ctl/ctl.h"
#include "base/log.h"

/* Which of the common options a verb takes. */
enum {
	/* -c CONFIG: its handler gets the config's path. */
	TAKES_CONFIG = 1,
	/* [--timeout SECONDS] [MOUNTPOINT] and its own options, parsed here
	 * (mount_verb()); its handler gets what they say. */
	TAKES_MOUNT = 2,
};

struct verb {
	const char *name;
	unsigned takes;
	/* One handler, as `takes` says: */
	int (*run_config)(const char *config_path, int argc, char *argv[]);
	const struct extres_ctl_mount_verb *mount;
	int (*run)(int argc, char *argv[]);
	/* Its lines under "commands:" in 'extresctl --help'. */
	const char *help;
};

/* In the order of 'extresctl --help'. */
static const struct verb verbs[] = {
	{ "check", TAKES_CONFIG, .run_config = extres_ctl_check,
	  .help = "    check              load and validate CONFIG, list its resources\n" },
	{ "discover", TAKES_CONFIG, .run_config = extres_ctl_discover,
	  .help = "    discover [NAME] [--json]\n"
		  "                       run the drivers and list every candidate info\n"
		  "                       (nothing is allocated or mounted)\n" },
	{ "request", TAKES_CONFIG, .run_config = extres_ctl_request,
	  .help = "    request --kubernetes [--json]\n"
		  "    request --yarn\n"
		  "                       print the resource requests for CONFIG's\n"
		  "                       devices: Kubernetes YAML (or JSON) limits and\n"
		  "                       requests, or YARN NAME=AMOUNT lines\n" },
	{ "status", TAKES_MOUNT, .mount = &extres_ctl_status,
	  .help = "    status [--json] [--timeout SECONDS] [MOUNTPOINT]\n"
		  "                       show what the extresd at MOUNTPOINT (default\n"
		  "                       /run/extres) serves: resources, infos and\n"
		  "                       their properties\n" },
	{ "reload", TAKES_MOUNT, .mount = &extres_ctl_reload,
	  .help = "    reload [--timeout SECONDS] [MOUNTPOINT]\n"
		  "                       make that extresd re-read its configuration\n"
		  "                       and say whether the reload took\n" },
	{ "leases", TAKES_MOUNT, .mount = &extres_ctl_leases,
	  .help = "    leases [--kill LEASE] [--timeout SECONDS] [MOUNTPOINT]\n"
		  "                       list the live leases (extresctl run) in the\n"
		  "                       coordination files that extresd follows, or\n"
		  "                       end one: SIGTERM to its command\n" },
	{ "watch", 0, .run = extres_ctl_watch,
	  .help = "    watch [--follow] [--timeout SECONDS] FILE\n"
		  "                       wait until a file of the mount changes (a\n"
		  "                       device's health) and print its new value\n" },
	{ "coord", TAKES_CONFIG, .run_config = extres_ctl_coord,
	  .help = "    coord list FILE [--json] [--timeout SECONDS]\n"
		  "                       show each entry of a coordination file and\n"
		  "                       whether its owner is live, dead, reused,\n"
		  "                       zombie or unparsable (the file is not written)\n"
		  "    coord gc FILE [--json] [--dry-run] [--drop-unparsable]\n"
		  "            [--timeout SECONDS]\n"
		  "                       remove the entries whose owner is gone (dead,\n"
		  "                       reused or zombie), rewriting FILE in place\n" },
	{ "run", TAKES_CONFIG, .run_config = extres_ctl_run,
	  .help = "    run [--wait[=SECONDS]] [--bind-cpus] RESOURCE[=N]... -- COMMAND [ARG...]\n"
		  "                       run COMMAND with a lease of N devices of each\n"
		  "                       RESOURCE, taken through its coordination file\n"
		  "                       and held as long as COMMAND runs\n" },
	{ "cdi", TAKES_MOUNT, .mount = &extres_ctl_cdi,
	  .help = "    cdi [--output DIR] [--timeout SECONDS] [MOUNTPOINT]\n"
		  "                       write the CDI specs of that extresd's devices\n"
		  "                       to DIR (default /var/run/cdi) for podman,\n"
		  "                       containerd and CRI-O\n" },
	{ "top", TAKES_MOUNT, .mount = &extres_ctl_top,
	  .help = "    top [--once] [--sort KEY] [--filter RESOURCE] [MOUNTPOINT]\n"
		  "                       live view of that extresd's devices, holders,\n"
		  "                       waiters, conflicts and reloads\n" },
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(FILE *out)
{
	size_t i;

	fputs("usage: extresctl [-c CONFIG] COMMAND [ARGS]\n"
	      "\n"
	      "commands:\n",
	      out);
	for (i = 0; i < N_VERBS; i++)
		fputs(verbs[i].help, out);
	fprintf(out,
		"\n"
		"options:\n"
		"    -c, --config=FILE  configuration for check, discover, request, run\n"
		"                       and coord (its extres.coordination-group)\n"
		"                       (default " EXTRES_DEFAULT_CONFIG ")\n"
		"    -h, --help         this help; 'extresctl COMMAND --help' for one\n"
		"    -V, --version      print the version\n"
		"\n"
		"Every access to a mount has a deadline (default %d s, --timeout):\n"
		"a daemon that does not answer is reported as not responding.\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n",
		CTL_MOUNT_TIMEOUT_S);
}

/*
 * Run a TAKES_MOUNT verb: its own options (v->mount->option()), --timeout,
 * --help and MOUNTPOINT, in any order, as getopt_long() permutes them.
 */
static int mount_verb(const struct verb *v, int argc, char *argv[])
{
	const struct extres_ctl_mount_verb *m = v->mount;
	struct extres_ctl_mount_args args = { EXTRES_DEFAULT_MOUNTPOINT,
					      m->timeout_default };
	struct option *longopts = NULL;
	char *shortopts = NULL;
	void *opts = NULL;
	size_t n = 0;
	int c, r = 1;

	while (m->options[n].name)
		n++;
	longopts = calloc(n + 3, sizeof(*longopts));
	opts = calloc(1, m->opts_size ? m->opts_size : 1);
	if (!longopts || !opts ||
	    asprintf(&shortopts, ":h%s", m->shortopts) < 0) {
		shortopts = NULL;
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out;
	}
	memcpy(longopts, m->options, n * sizeof(*longopts));
	longopts[n++] =
		(struct option){ "timeout", required_argument, NULL, 't' };
	longopts[n] = (struct option){ "help", no_argument, NULL, 'h' };

	optind = 0;
	while ((c = extres_ctl_next_opt(v->name, v->name, argc, argv, shortopts,
					longopts)) != -1) {
		if (c == 't') {
			r = extres_ctl_parse_seconds(optarg, 1, m->timeout_max,
						     &args.timeout);
			if (r < 0) {
				r = extres_ctl_usage_error(
					v->name,
					"%s: --timeout '%s' is not a number of seconds from 1 to %ld",
					v->name, optarg, m->timeout_max);
				goto out;
			}
			continue;
		}
		if (c == 'h') {
			m->usage(stdout);
			r = 0;
			goto out;
		}
		r = c == '?' || !m->option ? CTL_EXIT_USAGE :
					     m->option(opts, c, optarg);
		if (r != 0)
			goto out;
	}
	if (optind < argc)
		args.mountpoint = argv[optind++];
	if (optind < argc) {
		r = extres_ctl_usage_error(v->name,
					   "%s: unexpected argument '%s'",
					   v->name, argv[optind]);
		goto out;
	}
	if (!*args.mountpoint) {
		r = extres_ctl_usage_error(
			v->name, "%s: MOUNTPOINT is an empty string", v->name);
		goto out;
	}
	r = m->run(opts, &args);
out:
	free(opts);
	free(shortopts);
	free(longopts);
	return r;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = EXTRES_DEFAULT_CONFIG, *cmd;
	const struct verb *v;
	int c, status;

	extres_log_init("extresctl");
	while ((c = extres_ctl_next_opt("", "", argc, argv, "+:c:hV",
					longopts)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("extresctl %s\n", EXTRES_VERSION);
			return 0;
		default:
			return CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return extres_ctl_usage_error("", "missing COMMAND");
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	for (v = verbs; v < verbs + N_VERBS; v++)
		if (strcmp(cmd, v->name) == 0)
			break;
	if (v == verbs + N_VERBS)
		status =
			extres_ctl_usage_error("", "unknown command '%s'", cmd);
	else if (v->takes & TAKES_MOUNT)
		status = mount_verb(v, argc, argv);
	else if (v->takes & TAKES_CONFIG)
		status = v->run_config(config_path, argc, argv);
	else
		status = v->run(argc, argv);
	return extres_ctl_flush_stdout(status);
}
