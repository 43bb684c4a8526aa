/* SPDX-License-Identifier: MIT */
/* extresctl: option parsing and usage errors, and JSON onto stdout. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "base/log.h"

int extres_ctl_usage_error(const char *help_cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	extres_log(EXTRES_LOG_ERR, "%s", msg);
	fprintf(stderr, "Try 'extresctl %s%s--help'.\n", help_cmd,
		help_cmd[0] ? " " : "");
	return CTL_EXIT_USAGE;
}

int extres_ctl_next_opt(const char *cmd, const char *help_cmd, int argc,
			char *argv[], const char *shortopts,
			const struct option *longopts)
{
	const char *prefix = cmd[0] ? ": " : "";
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == ':') {
		extres_ctl_usage_error(help_cmd,
				       "%s%soption '%s' needs an argument", cmd,
				       prefix, argv[optind - 1]);
		return '?';
	}
	if (c != '?')
		return c;
	/* optopt: 0 for an unknown long option, the character of an unknown
	 * short one, or our option's value when it was given an argument. */
	if (optopt == 0)
		extres_ctl_usage_error(help_cmd, "%s%sunknown option '%s'", cmd,
				       prefix, argv[optind - 1]);
	else if (optopt < 256 && !strchr(shortopts, optopt))
		extres_ctl_usage_error(help_cmd, "%s%sunknown option '-%c'",
				       cmd, prefix, optopt);
	else
		extres_ctl_usage_error(help_cmd,
				       "%s%soption '%s' takes no argument", cmd,
				       prefix, argv[optind - 1]);
	return '?';
}

int extres_ctl_print_json(struct extres_json *json)
{
	char *text;
	size_t len;
	int r;

	r = extres_json_finish(json, &text, &len);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot write JSON: %s",
			   strerror(-r));
		return -EIO;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

int extres_ctl_parse_seconds(const char *arg, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end || errno || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int extres_ctl_flush_stdout(int status)
{
	errno = EIO;
	if (fflush(stdout) == EOF || ferror(stdout)) {
		extres_log(EXTRES_LOG_ERR,
			   "cannot write to standard output: %s",
			   strerror(errno));
		if (status == 0)
			status = 1;
	}
	return status;
}
