/* SPDX-License-Identifier: MIT */
/*
 * What extresctl's command files share. Each command takes its own argv
 * (argv[0] is the command's name), prints its output on stdout and its
 * errors through extres_log(), and returns the exit status: 0 success,
 * 1 failure, CTL_EXIT_USAGE for a usage error.
 */
#ifndef EXTRES_CTL_H
#define EXTRES_CTL_H

#include <getopt.h>

#include "json.h"

#define CTL_DEFAULT_CONFIG "/etc/extres/extres.yaml"
#define CTL_DEFAULT_MOUNTPOINT "/run/extres"

#define CTL_EXIT_USAGE 2

/* Long-only options: values no short option can have, so that a usage
 * error can tell them from an unknown short option. */
#define CTL_OPT_JSON 256
#define CTL_OPT_DRY_RUN 257
#define CTL_OPT_KUBERNETES 258
#define CTL_OPT_YARN 259
#define CTL_OPT_DROP_UNPARSABLE 260

/* Print a usage error and a pointer to 'extresctl HELP_CMD --help' (the
 * top-level help when HELP_CMD is ""); returns CTL_EXIT_USAGE. */
int extres_ctl_usage_error(const char *help_cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * getopt_long() over one command's arguments (argv[0] is the command; set
 * optind to 0 before the first call). Its own messages would name argv[0],
 * so they are off and ours, prefixed with "CMD: " unless CMD is "", name the
 * argument at fault. Returns the option, -1 at the end, or '?' after a
 * usage error was printed.
 */
int extres_ctl_next_opt(const char *cmd, const char *help_cmd, int argc,
			char *argv[], const char *shortopts,
			const struct option *longopts);

/* Finish the document in `json` and write it to stdout (whose errors main()
 * catches at its final flush). 0, or -EIO when the document could not be
 * made, after saying why. */
int extres_ctl_print_json(struct extres_json *json);

/* A whole number of seconds from min to max; 0 or -EINVAL. */
int extres_ctl_parse_seconds(const char *arg, long min, long max, long *ret);

struct extres_config;

/* Load CONFIG and print its warnings; 0, or -1 after printing the error. */
int extres_ctl_load_config(const char *path, struct extres_config **ret);

/* The commands. */
int extres_ctl_check(const char *config_path, int argc, char *argv[]);
int extres_ctl_discover(const char *config_path, int argc, char *argv[]);
int extres_ctl_coord(int argc, char *argv[]);
int extres_ctl_request(const char *config_path, int argc, char *argv[]);
int extres_ctl_status(int argc, char *argv[]);
int extres_ctl_reload(int argc, char *argv[]);

#endif
