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
#include <stddef.h>
#include <stdio.h>

#include "extres_build.h"

#include "base/json.h"

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

/* Flush stdout; output that did not reach its destination is a failure,
 * not a success with nothing to show. Returns `status`, or 1 when it was 0
 * and the flush failed (said on stderr). */
int extres_ctl_flush_stdout(int status);

/*
 * Work on a running extresd's mount, with a deadline.
 *
 * extres_ctl_on_mount() runs `fn` in a child process, after it found the
 * live extresd mount at `path` (extres_mountpoint_check_live(): errors are
 * printed, exit status 1); `m->mnt` is its absolute path. `fn` calls
 * extres_ctl_mount_step() after each access to the mount that was
 * answered, and extres_ctl_mount_done() after the last one, before it
 * prints what it found (printing has no deadline: stdout may be a slow
 * pipe). When an access takes more than `step_s` seconds, or the work is
 * not done after `total_s` (0: no such limit), the child is killed and
 * "extresd at PATH is not responding" printed. Returns fn's return value
 * (the exit status; 128 + N when signal N ended the child), or 1.
 */
#define CTL_MOUNT_TIMEOUT_S 5

struct extres_deadline_child;

struct extres_ctl_mount {
	char *mnt;
	struct extres_deadline_child *child;
};

int extres_ctl_on_mount(const char *path, long step_s, long total_s,
			int (*fn)(struct extres_ctl_mount *m, void *arg),
			void *arg);
void extres_ctl_mount_step(struct extres_ctl_mount *m);
void extres_ctl_mount_done(struct extres_ctl_mount *m);

/* The whole file .meta/NAME of the mount `mnt` (up to 1 MiB, NUL-ended;
 * free() it), or NULL with errno set. */
char *extres_ctl_read_meta(const char *mnt, const char *name);

struct extres_config;

/* Load CONFIG and print its warnings; 0, or -1 after printing the error. */
int extres_ctl_load_config(const char *path, struct extres_config **ret);

/* Say that CONFIG has no resource of that name (`len` bytes at `name`),
 * listing those it has, as a usage error of CMD; returns CTL_EXIT_USAGE. */
int extres_ctl_no_such_resource(const char *cmd,
				const struct extres_config *cfg,
				const char *name, size_t len);

/*
 * The commands that parse their own arguments: argv[0] is the command's
 * name; the exit status.
 */
int extres_ctl_check(const char *config_path, int argc, char *argv[]);
int extres_ctl_discover(const char *config_path, int argc, char *argv[]);
int extres_ctl_coord(const char *config_path, int argc, char *argv[]);
int extres_ctl_request(const char *config_path, int argc, char *argv[]);
int extres_ctl_run(const char *config_path, int argc, char *argv[]);
int extres_ctl_watch(int argc, char *argv[]);

/*
 * The commands on a running extresd's mount. They share the tail
 * `[--timeout SECONDS] [MOUNTPOINT]` and --help, which extresctl.c's verb
 * table parses once, with each command's own options, and hands over as:
 */
struct extres_ctl_mount_args {
	const char *mountpoint; /* never "" (EXTRES_DEFAULT_MOUNTPOINT) */
	long timeout; /* seconds, within the verb's bounds */
};

struct extres_ctl_mount_verb {
	/* Its own long options, NULL-ended, without --timeout and --help; a
	 * value under 256 is a short option too only if `shortopts` (its own,
	 * "" for none, in getopt's form) lists it. */
	const struct option *options;
	const char *shortopts;
	/* --timeout's default and highest value, in seconds (the lowest is 1). */
	long timeout_default, timeout_max;
	/* Zeroed storage for its options, handed to option() and run(). */
	size_t opts_size;
	/* 'extresctl CMD --help', onto `out`. */
	void (*usage)(FILE *out);
	/* Take one of its own options, in the order given: 0, or
	 * CTL_EXIT_USAGE after extres_ctl_usage_error(). NULL when it has
	 * none. */
	int (*option)(void *opts, int c, const char *arg);
	/* Do the work, once every argument was taken: the exit status. */
	int (*run)(void *opts, const struct extres_ctl_mount_args *args);
};

extern const struct extres_ctl_mount_verb extres_ctl_status;
extern const struct extres_ctl_mount_verb extres_ctl_reload;
extern const struct extres_ctl_mount_verb extres_ctl_leases;
extern const struct extres_ctl_mount_verb extres_ctl_cdi;
extern const struct extres_ctl_mount_verb extres_ctl_top;

#endif
