/* SPDX-License-Identifier: MIT */
/*
 * extresctl coord list|gc: a coordination file's entries and their owners'
 * states, as an aligned table or as JSON. The logic lives in coord_gc.c;
 * this file parses arguments and prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "alloc/coord_gc.h"
#include "ctl/ctl.h"
#include "base/json.h"
#include "base/log.h"

static void usage_coord(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] coord list FILE [--json] [--timeout SECONDS]\n"
		"       extresctl [-c CONFIG] coord gc FILE [--json] [--dry-run] [--timeout SECONDS]\n"
		"                              [--drop-unparsable]\n"
		"\n"
		"Inspect or clean a coordination file: one 'KEY PID [STARTTIME]' line\n"
		"per taken device, shared with Flink's discovery scripts. Both commands\n"
		"take the file's lock, as an allocator does, and wait at most\n"
		"--timeout seconds (default 10) while another process holds it, then\n"
		"fail naming the holders. A missing FILE, a symbolic link (never\n"
		"followed), anything but a regular file, a file with hard links, or one\n"
		"another user could write is refused with exit status 1; a file that\n"
		"the group named by CONFIG's extres.coordination-group may write is\n"
		"trusted (CONFIG, default " EXTRES_DEFAULT_CONFIG
		", is read for\n"
		"that key alone, and only when it exists).\n"
		"\n"
		"    list       print every entry with its owner's state:\n"
		"                 live        the process runs (with the recorded\n"
		"                             start time, when there is one)\n"
		"                 dead        no such process\n"
		"                 reused      the PID runs with another start time\n"
		"                 zombie      the process exited, not reaped yet\n"
		"                 unparsable  not 'KEY PID [STARTTIME]'; kept as it is\n"
		"               in a table KEY, PID, STARTTIME ('-' when not recorded),\n"
		"               STATE; an unparsable line is shown quoted after its\n"
		"               state. FILE is never written.\n"
		"    gc         remove the entries of dead, reused and zombie owners and\n"
		"               rewrite FILE in place (same inode); live entries and\n"
		"               unparsable lines stay byte for byte, in order. Prints\n"
		"               the removed entries as list does, then a summary.\n"
		"\n"
		"    --json     print JSON instead: list, an array of objects\n"
		"               {\"key\", \"pid\", \"starttime\", \"state\", \"line\"}\n"
		"               (null where a field is absent); gc,\n"
		"               {\"removed\": [such objects], \"kept\": N}. Bytes that\n"
		"               JSON text cannot carry show as U+FFFD.\n"
		"    --dry-run  (gc) print what would be removed; write nothing\n"
		"    --drop-unparsable\n"
		"               (gc) remove unparsable lines too: a file that other\n"
		"               writers filled up to the 16 MiB limit becomes usable\n"
		"               again\n"
		"    -h, --help this help\n");
}

/* ---------------------------------------------------------------------- */
/* The table */

/*
 * `s` between double quotes, with '"', '\\' and every byte that is not
 * printable ASCII escaped (\t, \xNN): a garbage line must not send control
 * sequences to the terminal, and must still show exactly what it holds.
 */
static char *quote(const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *q = malloc(len * 4 + 3), *p = q;
	unsigned char ch;
	size_t i;

	if (!q)
		return NULL;
	*p++ = '"';
	for (i = 0; i < len; i++) {
		ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			*p++ = '\\';
			*p++ = (char)ch;
		} else if (ch == '\t') {
			*p++ = '\\';
			*p++ = 't';
		} else if (ch < 0x20 || ch >= 0x7f) {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = hex[ch >> 4];
			*p++ = hex[ch & 0xf];
		} else {
			*p++ = (char)ch;
		}
	}
	*p++ = '"';
	*p = '\0';
	return q;
}

/* A key as it is when it is plain printable ASCII, else quoted. */
static char *show_key(const char *key)
{
	const char *p;

	for (p = key; *p; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return quote(key, strlen(key));
	return strdup(key);
}

#define N_COLS 4

/* The cells of one table row, each malloc'd; -ENOMEM leaves the ones made
 * for the caller to free. */
static int row_cells(const struct extres_coord_item *it, char *cell[N_COLS])
{
	const struct extres_coord_entry *e = &it->entry;
	const char *state = extres_coord_owner_state_name(it->state);
	char *raw;
	int i, r = 0;

	if (!e->parsed) {
		raw = quote(e->line, e->line_len);
		cell[0] = strdup("-");
		cell[1] = strdup("-");
		cell[2] = strdup("-");
		if (!raw || asprintf(&cell[3], "%s %s", state, raw) < 0)
			cell[3] = NULL;
		free(raw);
	} else {
		cell[0] = show_key(e->key);
		if (asprintf(&cell[1], "%d", (int)e->pid) < 0)
			cell[1] = NULL;
		if (!e->has_starttime)
			cell[2] = strdup("-");
		else if (asprintf(&cell[2], "%" PRIu64, e->starttime) < 0)
			cell[2] = NULL;
		cell[3] = strdup(state);
	}
	for (i = 0; i < N_COLS; i++)
		if (!cell[i])
			r = -ENOMEM;
	return r;
}

/*
 * An aligned table with a header: columns two spaces apart, the last one
 * not padded so that lines carry no trailing blanks.
 */
static int print_table(const struct extres_coord_item *items, size_t n)
{
	static const char *const header[N_COLS] = { "KEY", "PID", "STARTTIME",
						    "STATE" };
	size_t width[N_COLS], i, k, len;
	char **cells = NULL;
	int r = 0;

	cells = calloc(n * N_COLS + 1, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (k = 0; k < N_COLS; k++)
		width[k] = strlen(header[k]);
	for (i = 0; i < n; i++) {
		r = row_cells(&items[i], &cells[i * N_COLS]);
		if (r < 0)
			goto out;
		for (k = 0; k < N_COLS; k++) {
			len = strlen(cells[i * N_COLS + k]);
			if (len > width[k])
				width[k] = len;
		}
	}
	for (i = 0; i <= n; i++) {
		for (k = 0; k < N_COLS - 1; k++)
			printf("%-*s  ", (int)width[k],
			       i ? cells[(i - 1) * N_COLS + k] : header[k]);
		printf("%s\n", i ? cells[(i - 1) * N_COLS + k] : header[k]);
	}
out:
	for (i = 0; i < n * N_COLS; i++)
		free(cells[i]);
	free(cells);
	return r;
}

/* ---------------------------------------------------------------------- */
/* JSON */

/* One entry as {"key", "pid", "starttime", "state", "line"}, null where a
 * field is absent. Errors stay in `j` until it is finished. */
static void json_item(struct extres_json *j, const struct extres_coord_item *it)
{
	const struct extres_coord_entry *e = &it->entry;

	extres_json_begin_object(j);
	extres_json_key(j, "key");
	if (e->parsed)
		extres_json_string(j, e->key);
	else
		extres_json_null(j);
	extres_json_key(j, "pid");
	if (e->parsed)
		extres_json_uint(j, (uint64_t)e->pid);
	else
		extres_json_null(j);
	extres_json_key(j, "starttime");
	if (e->parsed && e->has_starttime)
		extres_json_uint(j, e->starttime);
	else
		extres_json_null(j);
	extres_json_key(j, "state");
	extres_json_string(j, extres_coord_owner_state_name(it->state));
	extres_json_key(j, "line");
	extres_json_string_len(j, e->line, e->line_len);
	extres_json_end_object(j);
}

static void json_items(struct extres_json *j,
		       const struct extres_coord_item *items, size_t n)
{
	size_t i;

	extres_json_begin_array(j);
	for (i = 0; i < n; i++)
		json_item(j, &items[i]);
	extres_json_end_array(j);
}

/* ---------------------------------------------------------------------- */
/* The commands */

/*
 * The group CONFIG trusts to write coordination files, or EXTRES_NO_GROUP.
 * A missing CONFIG is none; one that cannot be read is none too, after a
 * warning: cleaning a file must not depend on a config that may itself be
 * what broke.
 */
static gid_t trusted_group(const char *config_path)
{
	struct extres_config *cfg;
	struct extres_err err;
	gid_t gid;
	size_t i;

	if (access(config_path, F_OK) < 0 && errno == ENOENT)
		return EXTRES_NO_GROUP;
	if (extres_config_load(config_path, &cfg, &err) < 0) {
		extres_log(EXTRES_LOG_WARNING,
			   "%s; no extres.coordination-group is trusted",
			   err.msg);
		return EXTRES_NO_GROUP;
	}
	/* Only the one a warning may concern. */
	for (i = 0; i < cfg->n_warnings; i++)
		if (strstr(cfg->warnings[i], "extres.coordination-group"))
			extres_log(EXTRES_LOG_WARNING, "%s", cfg->warnings[i]);
	gid = cfg->coordination_gid;
	extres_config_free(cfg);
	return gid;
}

static int coord_list(const char *path, int json, unsigned timeout_ms,
		      gid_t group)
{
	struct extres_coord_item *items = NULL;
	struct extres_json *j = NULL;
	struct extres_err err;
	size_t n = 0;
	int r;

	r = extres_coord_list(path, timeout_ms, group, &items, &n, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	if (json) {
		r = extres_json_new(&j);
		if (r == 0) {
			json_items(j, items, n);
			r = extres_ctl_print_json(j);
		}
		extres_json_free(j);
	} else {
		r = print_table(items, n);
	}
	extres_coord_items_free(items, n);
	if (r == -ENOMEM)
		extres_log(EXTRES_LOG_ERR, "out of memory");
	return r < 0 ? 1 : 0;
}

static int coord_gc(const char *path, int json, unsigned flags,
		    unsigned timeout_ms, gid_t group)
{
	struct extres_coord_item *removed = NULL;
	struct extres_json *j = NULL;
	struct extres_err err;
	size_t n = 0, kept = 0;
	int r;

	r = extres_coord_gc(path, flags, timeout_ms, group, &removed, &n, &kept,
			    &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	if (json) {
		r = extres_json_new(&j);
		if (r == 0) {
			extres_json_begin_object(j);
			extres_json_key(j, "removed");
			json_items(j, removed, n);
			extres_json_key(j, "kept");
			extres_json_uint(j, kept);
			extres_json_end_object(j);
			r = extres_ctl_print_json(j);
		}
		extres_json_free(j);
	} else {
		if (n)
			r = print_table(removed, n);
		if (r == 0 && (flags & EXTRES_COORD_GC_DRY_RUN))
			printf("%s: would remove %zu %s, keep %zu (dry run: nothing written)\n",
			       path, n, n == 1 ? "entry" : "entries", kept);
		else if (r == 0)
			printf("%s: removed %zu %s, kept %zu\n", path, n,
			       n == 1 ? "entry" : "entries", kept);
	}
	extres_coord_items_free(removed, n);
	if (r == -ENOMEM)
		extres_log(EXTRES_LOG_ERR, "out of memory");
	return r < 0 ? 1 : 0;
}

/* argv[0] is "coord". */
int extres_ctl_coord(const char *config_path, int argc, char *argv[])
{
	static const struct option list_opts[] = {
		{ "json", no_argument, NULL, CTL_OPT_JSON },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option gc_opts[] = {
		{ "json", no_argument, NULL, CTL_OPT_JSON },
		{ "dry-run", no_argument, NULL, CTL_OPT_DRY_RUN },
		{ "drop-unparsable", no_argument, NULL,
		  CTL_OPT_DROP_UNPARSABLE },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub, *cmd, *path;
	long timeout = (long)(EXTRES_LOCK_TIMEOUT_DEFAULT_MS / 1000);
	unsigned flags = 0;
	int c, json = 0, gc;
	gid_t group;

	if (argc < 2)
		return extres_ctl_usage_error(
			"coord", "coord: missing command: list or gc");
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
		usage_coord(stdout);
		return 0;
	}
	if (strcmp(sub, "list") == 0)
		cmd = "coord list";
	else if (strcmp(sub, "gc") == 0)
		cmd = "coord gc";
	else
		return extres_ctl_usage_error(
			"coord", "coord: unknown command '%s' (list or gc)",
			sub);
	gc = strcmp(sub, "gc") == 0;

	argc--;
	argv++;
	optind = 0;
	while ((c = extres_ctl_next_opt(cmd, "coord", argc, argv, ":h",
					gc ? gc_opts : list_opts)) != -1) {
		switch (c) {
		case CTL_OPT_JSON:
			json = 1;
			break;
		case CTL_OPT_DRY_RUN:
			flags |= EXTRES_COORD_GC_DRY_RUN;
			break;
		case CTL_OPT_DROP_UNPARSABLE:
			flags |= EXTRES_COORD_GC_UNPARSABLE;
			break;
		case 't':
			if (extres_ctl_parse_seconds(optarg, 0, 3600,
						     &timeout) < 0)
				return extres_ctl_usage_error(
					"coord",
					"%s: --timeout '%s' is not a number of seconds from 0 to 3600",
					cmd, optarg);
			break;
		case 'h':
			usage_coord(stdout);
			return 0;
		default:
			return CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return extres_ctl_usage_error("coord", "%s: missing FILE", cmd);
	path = argv[optind++];
	if (optind < argc)
		return extres_ctl_usage_error("coord",
					      "%s: unexpected argument '%s'",
					      cmd, argv[optind]);
	if (!path[0])
		return extres_ctl_usage_error(
			"coord", "%s: FILE is an empty string", cmd);
	group = trusted_group(config_path);
	return gc ? coord_gc(path, json, flags, (unsigned)timeout * 1000,
			     group) :
		    coord_list(path, json, (unsigned)timeout * 1000, group);
}
