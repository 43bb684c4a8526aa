/* SPDX-License-Identifier: MIT */
/*
 * extresctl: inspect a configuration, a running daemon's mount and the
 * coordination file, without mounting anything.
 *
 *   extresctl [-c CONFIG] check              validate, list resources
 *   extresctl [-c CONFIG] discover [NAME] [--json]
 *                                            run the drivers, list candidates
 *   extresctl [-c CONFIG] request --kubernetes [--json] | --yarn
 *                                            scheduler resource requests
 *   extresctl status [--json] [--timeout S] [MOUNTPOINT]
 *                                            what a running extresd serves
 *   extresctl reload [--timeout S] [MOUNTPOINT]
 *                                            re-read its config, say if it took
 *   extresctl leases [--kill LEASE] [--timeout S] [MOUNTPOINT]
 *                                            live leases, or end one
 *   extresctl watch [--follow] [--timeout S] FILE
 *                                            wait for a file to change
 *   extresctl [-c CONFIG] coord list FILE [--json] [--timeout S]
 *                                            entries, owners' states
 *   extresctl [-c CONFIG] coord gc FILE [--json] [--dry-run] [--drop-unparsable]
 *                                            drop entries of owners gone
 *   extresctl [-c CONFIG] run [--wait[=S]] [--bind-cpus] RES[=N]... -- CMD
 *                                            CMD with a lease of devices
 *   extresctl cdi [--output DIR] [--timeout S] [MOUNTPOINT]
 *                                            CDI specs for container runtimes
 *
 * Exit 0 on success, 1 when the config, a driver, the mount or the file
 * fails (a daemon that does not answer within a deadline too: see
 * ctl_mount.c), 2 on usage errors. This file holds the global options and the
 * dispatch; each command lives in ctl_config.c (check, discover),
 * ctl_request.c, ctl_status.c, ctl_reload.c or ctl_coord.c (coord).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "extres_build.h"

#include "ctl/ctl.h"
#include "base/log.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] COMMAND [ARGS]\n"
		"\n"
		"commands:\n"
		"    check              load and validate CONFIG, list its resources\n"
		"    discover [NAME] [--json]\n"
		"                       run the drivers and list every candidate info\n"
		"                       (nothing is allocated or mounted)\n"
		"    request --kubernetes [--json]\n"
		"    request --yarn\n"
		"                       print the resource requests for CONFIG's\n"
		"                       devices: Kubernetes YAML (or JSON) limits and\n"
		"                       requests, or YARN NAME=AMOUNT lines\n"
		"    status [--json] [--timeout SECONDS] [MOUNTPOINT]\n"
		"                       show what the extresd at MOUNTPOINT (default\n"
		"                       /run/extres) serves: resources, infos and\n"
		"                       their properties\n"
		"    reload [--timeout SECONDS] [MOUNTPOINT]\n"
		"                       make that extresd re-read its configuration\n"
		"                       and say whether the reload took\n"
		"    leases [--kill LEASE] [--timeout SECONDS] [MOUNTPOINT]\n"
		"                       list the live leases (extresctl run) in the\n"
		"                       coordination files that extresd follows, or\n"
		"                       end one: SIGTERM to its command\n"
		"    watch [--follow] [--timeout SECONDS] FILE\n"
		"                       wait until a file of the mount changes (a\n"
		"                       device's health) and print its new value\n"
		"    coord list FILE [--json] [--timeout SECONDS]\n"
		"                       show each entry of a coordination file and\n"
		"                       whether its owner is live, dead, reused,\n"
		"                       zombie or unparsable (the file is not written)\n"
		"    coord gc FILE [--json] [--dry-run] [--drop-unparsable]\n"
		"            [--timeout SECONDS]\n"
		"                       remove the entries whose owner is gone (dead,\n"
		"                       reused or zombie), rewriting FILE in place\n"
		"    run [--wait[=SECONDS]] [--bind-cpus] RESOURCE[=N]... -- COMMAND [ARG...]\n"
		"                       run COMMAND with a lease of N devices of each\n"
		"                       RESOURCE, taken through its coordination file\n"
		"                       and held as long as COMMAND runs\n"
		"    cdi [--output DIR] [--timeout SECONDS] [MOUNTPOINT]\n"
		"                       write the CDI specs of that extresd's devices\n"
		"                       to DIR (default /var/run/cdi) for podman,\n"
		"                       containerd and CRI-O\n"
		"    top [--once] [--sort KEY] [--filter RESOURCE] [MOUNTPOINT]\n"
		"                       live view of that extresd's devices, holders,\n"
		"                       waiters, conflicts and reloads\n"
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

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = EXTRES_DEFAULT_CONFIG, *cmd;
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
	if (strcmp(cmd, "check") == 0)
		status = extres_ctl_check(config_path, argc, argv);
	else if (strcmp(cmd, "discover") == 0)
		status = extres_ctl_discover(config_path, argc, argv);
	else if (strcmp(cmd, "request") == 0)
		status = extres_ctl_request(config_path, argc, argv);
	else if (strcmp(cmd, "status") == 0)
		status = extres_ctl_status(argc, argv);
	else if (strcmp(cmd, "reload") == 0)
		status = extres_ctl_reload(argc, argv);
	else if (strcmp(cmd, "coord") == 0)
		status = extres_ctl_coord(config_path, argc, argv);
	else if (strcmp(cmd, "run") == 0)
		status = extres_ctl_run(config_path, argc, argv);
	else if (strcmp(cmd, "leases") == 0)
		status = extres_ctl_leases(argc, argv);
	else if (strcmp(cmd, "watch") == 0)
		status = extres_ctl_watch(argc, argv);
	else if (strcmp(cmd, "cdi") == 0)
		status = extres_ctl_cdi(argc, argv);
	else if (strcmp(cmd, "top") == 0)
		status = extres_ctl_top(argc, argv);
	else
		status =
			extres_ctl_usage_error("", "unknown command '%s'", cmd);
	return extres_ctl_flush_stdout(status);
}
