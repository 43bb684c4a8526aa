/* SPDX-License-Identifier: MIT */
/*
 * extresctl: inspect a configuration and the coordination file without
 * mounting anything.
 *
 *   extresctl [-c CONFIG] check              validate, list resources
 *   extresctl [-c CONFIG] discover [NAME]    run the drivers, list candidates
 *   extresctl coord list FILE [--json]       entries and their owners' states
 *   extresctl coord gc FILE [--json] [--dry-run]
 *                                            drop entries of owners gone
 *
 * Exit 0 on success, 1 when the config, a driver or the file fails, 2 on
 * usage errors. The coordination logic lives in coord_gc.c; this file parses
 * arguments and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "extres_build.h"

#include "config.h"
#include "coord_gc.h"
#include "log.h"
#include "startup.h"

#define DEFAULT_CONFIG "/etc/extres/extres.yaml"

/* Exit statuses. */
#define EXIT_USAGE 2

/* Long-only options: values no short option can have, so that a usage
 * error can tell them from an unknown short option. */
#define OPT_JSON 256
#define OPT_DRY_RUN 257

static void usage(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] COMMAND [ARGS]\n"
		"\n"
		"commands:\n"
		"    check              load and validate CONFIG, list its resources\n"
		"    discover [NAME]    run the drivers and list every candidate info\n"
		"                       (nothing is allocated or mounted)\n"
		"    coord list FILE [--json]\n"
		"                       show each entry of a coordination file and\n"
		"                       whether its owner is live, dead, reused,\n"
		"                       zombie or unparsable (the file is not written)\n"
		"    coord gc FILE [--json] [--dry-run]\n"
		"                       remove the entries whose owner is gone (dead,\n"
		"                       reused or zombie), rewriting FILE in place\n"
		"\n"
		"options:\n"
		"    -c, --config=FILE  configuration for check and discover\n"
		"                       (default " DEFAULT_CONFIG ")\n"
		"    -h, --help         this help; 'extresctl COMMAND --help' for one\n"
		"    -V, --version      print the version\n"
		"\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n");
}

static void usage_check(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] check\n"
		"\n"
		"Load and validate CONFIG (default " DEFAULT_CONFIG
		") and print\n"
		"each resource: amount, driver, coordination file, Kubernetes and\n"
		"YARN resource names. Warnings name unknown keys; an error names the\n"
		"file, line and column and exits 1.\n"
		"\n"
		"    -h, --help   this help\n");
}

static void usage_discover(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] discover [NAME]\n"
		"\n"
		"Run the driver of every resource in CONFIG (default\n" DEFAULT_CONFIG
		"), or of resource NAME only, and print\n"
		"every candidate info with its properties. Nothing is allocated,\n"
		"recorded in a coordination file or mounted. Exit 1 when a driver\n"
		"fails or there is no resource NAME.\n"
		"\n"
		"    -h, --help   this help\n");
}

static void usage_coord(FILE *out)
{
	fprintf(out,
		"usage: extresctl coord list FILE [--json]\n"
		"       extresctl coord gc FILE [--json] [--dry-run]\n"
		"\n"
		"Inspect or clean a coordination file: one 'KEY PID [STARTTIME]' line\n"
		"per taken device, shared with Flink's discovery scripts. Both commands\n"
		"take the file's lock, as an allocator does, and wait while another\n"
		"process holds it. A missing FILE, a symbolic link (never followed),\n"
		"anything but a regular file, or a file with hard links is refused\n"
		"with exit status 1.\n"
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
		"    -h, --help this help\n");
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

/* Print a usage error and a pointer to the help; returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3))) static int
usage_error(const char *help_cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	extres_log(EXTRES_LOG_ERR, "%s", msg);
	fprintf(stderr, "Try 'extresctl %s%s--help'.\n", help_cmd,
		help_cmd[0] ? " " : "");
	return EXIT_USAGE;
}

/*
 * getopt_long() over one command's arguments (argv[0] is the command). Its
 * own messages would name argv[0], so they are off and ours name the
 * argument at fault. Returns the option, -1 at the end, or '?' after a
 * usage error was printed.
 */
static int next_opt(const char *cmd, const char *help_cmd, int argc,
		    char *argv[], const char *shortopts,
		    const struct option *longopts)
{
	const char *prefix = cmd[0] ? ": " : "";
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == ':') {
		usage_error(help_cmd, "%s%soption '%s' needs an argument", cmd,
			    prefix, argv[optind - 1]);
		return '?';
	}
	if (c != '?')
		return c;
	/* optopt: 0 for an unknown long option, the character of an unknown
	 * short one, or our option's value when it was given an argument. */
	if (optopt == 0)
		usage_error(help_cmd, "%s%sunknown option '%s'", cmd, prefix,
			    argv[optind - 1]);
	else if (optopt < 256 && !strchr(shortopts, optopt))
		usage_error(help_cmd, "%s%sunknown option '-%c'", cmd, prefix,
			    optopt);
	else
		usage_error(help_cmd, "%s%soption '%s' takes no argument", cmd,
			    prefix, argv[optind - 1]);
	return '?';
}

/* ---------------------------------------------------------------------- */
/* check and discover */

static int load_config(const char *path, struct extres_config **ret)
{
	struct extres_err err;
	size_t i;

	if (extres_config_load(path, ret, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return -1;
	}
	for (i = 0; i < (*ret)->n_warnings; i++)
		extres_log(EXTRES_LOG_WARNING, "%s", (*ret)->warnings[i]);
	return 0;
}

static int cmd_check(const char *config_path, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct extres_config *cfg;
	size_t i;
	int c;

	optind = 0;
	while ((c = next_opt("check", "check", argc, argv, ":h", longopts)) !=
	       -1) {
		if (c != 'h')
			return EXIT_USAGE;
		usage_check(stdout);
		return 0;
	}
	if (optind < argc)
		return usage_error("check", "check: unexpected argument '%s'",
				   argv[optind]);
	if (load_config(config_path, &cfg) < 0)
		return 1;

	printf("%s: %zu resource%s\n", cfg->path, cfg->n_resources,
	       cfg->n_resources == 1 ? "" : "s");
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *r = &cfg->resources[i];

		printf("%s: amount %llu, driver %s, coordination-file %s, "
		       "kubernetes %s, yarn %s\n",
		       r->name, (unsigned long long)r->amount, r->driver,
		       or_dash(r->coordination_file),
		       or_dash(r->kubernetes_key), or_dash(r->yarn_key));
	}
	extres_config_free(cfg);
	return 0;
}

static int discover_one(const struct extres_config *cfg,
			const struct extres_resource_config *res)
{
	struct extres_infos *infos;
	struct extres_err err;
	size_t i, k;

	if (extres_discover_resource(cfg, res, &infos, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return -1;
	}
	printf("%s: driver %s, %zu candidate%s, amount %llu\n", res->name,
	       res->driver, infos->n, infos->n == 1 ? "" : "s",
	       (unsigned long long)res->amount);
	for (i = 0; i < infos->n; i++) {
		printf("  %zu:", i);
		for (k = 0; k < infos->items[i].n_props; k++)
			printf(" %s=%s", infos->items[i].props[k].key,
			       infos->items[i].props[k].value);
		printf("\n");
	}
	extres_infos_free(infos);
	return 0;
}

static int cmd_discover(const char *config_path, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct extres_config *cfg;
	const char *name = NULL;
	int c, failed = 0, found = 0;
	size_t i;

	optind = 0;
	while ((c = next_opt("discover", "discover", argc, argv, ":h",
			     longopts)) != -1) {
		if (c != 'h')
			return EXIT_USAGE;
		usage_discover(stdout);
		return 0;
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return usage_error("discover",
				   "discover: unexpected argument '%s'",
				   argv[optind]);
	if (load_config(config_path, &cfg) < 0)
		return 1;

	for (i = 0; i < cfg->n_resources; i++) {
		if (name && strcmp(cfg->resources[i].name, name) != 0)
			continue;
		found = 1;
		if (discover_one(cfg, &cfg->resources[i]) < 0)
			failed = 1;
	}
	if (name && !found) {
		extres_log(EXTRES_LOG_ERR, "no resource '%s' in %s", name,
			   cfg->path);
		failed = 1;
	}
	extres_config_free(cfg);
	return failed;
}

/* ---------------------------------------------------------------------- */
/* coord: the table */

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
/* coord: JSON through libyaml's emitter */

/* Flow style with double-quoted strings is JSON; `ok` turns 0 at the first
 * failure and every later call does nothing. */
struct json {
	yaml_emitter_t emitter;
	int ok;
};

/*
 * Length of the valid UTF-8 sequence at `s` (`len` bytes left) and its code
 * point in *ret_cp; 0 when the bytes there are not valid UTF-8 (overlong,
 * surrogate, beyond U+10FFFF, cut short).
 */
static size_t utf8_char(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return n;
}

/*
 * Whether libyaml writes `cp` in a double-quoted scalar in a form JSON reads
 * as the same character: itself, or \" \\ \b \t \n \f \r. It escapes other
 * controls, DEL, C1 controls, U+2028/9 and characters beyond the BMP in
 * YAML-only forms (\0, \x7F, \N, \L, \U0001F600).
 */
static int json_carries(uint32_t cp)
{
	if (cp < 0x20)
		return cp == '\b' || cp == '\t' || cp == '\n' || cp == '\f' ||
		       cp == '\r';
	if (cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	if (cp == 0x2028 || cp == 0x2029)
		return 0;
	return cp < 0x10000;
}

/* `s` with everything json_carries() refuses, and every byte that is not
 * valid UTF-8, replaced by U+FFFD. */
static char *json_text(const char *s, size_t len, size_t *ret_len)
{
	const unsigned char *u = (const unsigned char *)s;
	char *t = malloc(len * 3 + 1), *p = t;
	uint32_t cp;
	size_t i = 0, n;

	if (!t)
		return NULL;
	while (i < len) {
		n = utf8_char(u + i, len - i, &cp);
		if (n && json_carries(cp)) {
			memcpy(p, s + i, n);
			p += n;
		} else {
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
		}
		i += n ? n : 1;
	}
	*p = '\0';
	*ret_len = (size_t)(p - t);
	return t;
}

static void json_event(struct json *j, int initialized, yaml_event_t *ev)
{
	/* yaml_emitter_emit() owns the event from here, even on failure. */
	if (!initialized || !yaml_emitter_emit(&j->emitter, ev))
		j->ok = 0;
}

static void json_scalar(struct json *j, const char *s, size_t len,
			yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (j->ok)
		json_event(j,
			   yaml_scalar_event_initialize(&ev, NULL, NULL,
							(yaml_char_t *)s,
							(int)len, 1, 1, style),
			   &ev);
}

/* A number or null: plain style. */
static void json_plain(struct json *j, const char *s)
{
	json_scalar(j, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
}

static void json_string(struct json *j, const char *s, size_t len)
{
	size_t tlen;
	char *t;

	if (!j->ok)
		return;
	t = json_text(s, len, &tlen);
	if (!t) {
		j->ok = 0;
		return;
	}
	json_scalar(j, t, tlen, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	free(t);
}

static void json_key(struct json *j, const char *key)
{
	json_string(j, key, strlen(key));
}

static void json_uint(struct json *j, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	json_plain(j, buf);
}

static void json_seq(struct json *j, int start)
{
	yaml_event_t ev;
	int made;

	if (!j->ok)
		return;
	made = start ? yaml_sequence_start_event_initialize(
			       &ev, NULL, NULL, 1, YAML_FLOW_SEQUENCE_STYLE) :
		       yaml_sequence_end_event_initialize(&ev);
	json_event(j, made, &ev);
}

static void json_map(struct json *j, int start)
{
	yaml_event_t ev;
	int made;

	if (!j->ok)
		return;
	made = start ? yaml_mapping_start_event_initialize(
			       &ev, NULL, NULL, 1, YAML_FLOW_MAPPING_STYLE) :
		       yaml_mapping_end_event_initialize(&ev);
	json_event(j, made, &ev);
}

/* Start one JSON document on stdout: no "---", no line width limit, and
 * UTF-8 written as itself rather than in YAML's \x escapes. */
static int json_begin(struct json *j)
{
	yaml_event_t ev;

	j->ok = yaml_emitter_initialize(&j->emitter);
	if (!j->ok)
		return -ENOMEM;
	yaml_emitter_set_output_file(&j->emitter, stdout);
	yaml_emitter_set_width(&j->emitter, -1);
	yaml_emitter_set_unicode(&j->emitter, 1);
	json_event(j,
		   yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING),
		   &ev);
	if (j->ok)
		json_event(j,
			   yaml_document_start_event_initialize(&ev, NULL, NULL,
								NULL, 1),
			   &ev);
	return 0;
}

/* End the document, flush, free; 0 or -EIO with the emitter's reason. */
static int json_end(struct json *j)
{
	yaml_event_t ev;
	int r = 0;

	if (j->ok)
		json_event(j, yaml_document_end_event_initialize(&ev, 1), &ev);
	if (j->ok)
		json_event(j, yaml_stream_end_event_initialize(&ev), &ev);
	if (j->ok)
		j->ok = yaml_emitter_flush(&j->emitter);
	if (!j->ok) {
		extres_log(EXTRES_LOG_ERR, "cannot write JSON: %s",
			   j->emitter.problem ? j->emitter.problem :
						"out of memory");
		r = -EIO;
	}
	yaml_emitter_delete(&j->emitter);
	return r;
}

static void json_item(struct json *j, const struct extres_coord_item *it)
{
	const struct extres_coord_entry *e = &it->entry;
	const char *state = extres_coord_owner_state_name(it->state);

	json_map(j, 1);
	json_key(j, "key");
	if (e->parsed)
		json_string(j, e->key, strlen(e->key));
	else
		json_plain(j, "null");
	json_key(j, "pid");
	if (e->parsed)
		json_uint(j, (uint64_t)e->pid);
	else
		json_plain(j, "null");
	json_key(j, "starttime");
	if (e->parsed && e->has_starttime)
		json_uint(j, e->starttime);
	else
		json_plain(j, "null");
	json_key(j, "state");
	json_string(j, state, strlen(state));
	json_key(j, "line");
	json_string(j, e->line, e->line_len);
	json_map(j, 0);
}

static void json_items(struct json *j, const struct extres_coord_item *items,
		       size_t n)
{
	size_t i;

	json_seq(j, 1);
	for (i = 0; i < n; i++)
		json_item(j, &items[i]);
	json_seq(j, 0);
}

/* ---------------------------------------------------------------------- */
/* coord: the commands */

static int coord_list(const char *path, int json)
{
	struct extres_coord_item *items = NULL;
	struct extres_err err;
	struct json j;
	size_t n = 0;
	int r;

	r = extres_coord_list(path, &items, &n, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	if (json) {
		r = json_begin(&j);
		if (r == 0) {
			json_items(&j, items, n);
			r = json_end(&j);
		}
	} else {
		r = print_table(items, n);
	}
	extres_coord_items_free(items, n);
	if (r == -ENOMEM)
		extres_log(EXTRES_LOG_ERR, "out of memory");
	return r < 0 ? 1 : 0;
}

static int coord_gc(const char *path, int json, int dry_run)
{
	struct extres_coord_item *removed = NULL;
	struct extres_err err;
	size_t n = 0, kept = 0;
	struct json j;
	int r;

	r = extres_coord_gc(path, dry_run, &removed, &n, &kept, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	if (json) {
		r = json_begin(&j);
		if (r == 0) {
			json_map(&j, 1);
			json_key(&j, "removed");
			json_items(&j, removed, n);
			json_key(&j, "kept");
			json_uint(&j, kept);
			json_map(&j, 0);
			r = json_end(&j);
		}
	} else {
		if (n)
			r = print_table(removed, n);
		if (r == 0 && dry_run)
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
static int cmd_coord(int argc, char *argv[])
{
	static const struct option list_opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option gc_opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sub, *cmd, *path;
	int c, json = 0, dry_run = 0, gc;

	if (argc < 2)
		return usage_error("coord",
				   "coord: missing command: list or gc");
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
		return usage_error("coord",
				   "coord: unknown command '%s' (list or gc)",
				   sub);
	gc = strcmp(sub, "gc") == 0;

	argc--;
	argv++;
	optind = 0;
	while ((c = next_opt(cmd, "coord", argc, argv, ":h",
			     gc ? gc_opts : list_opts)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = 1;
			break;
		case OPT_DRY_RUN:
			dry_run = 1;
			break;
		case 'h':
			usage_coord(stdout);
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("coord", "%s: missing FILE", cmd);
	path = argv[optind++];
	if (optind < argc)
		return usage_error("coord", "%s: unexpected argument '%s'", cmd,
				   argv[optind]);
	if (!path[0])
		return usage_error("coord", "%s: FILE is an empty string", cmd);
	return gc ? coord_gc(path, json, dry_run) : coord_list(path, json);
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = DEFAULT_CONFIG, *cmd;
	int c, status;

	extres_log_init("extresctl");
	while ((c = next_opt("", "", argc, argv, "+:c:hV", longopts)) != -1) {
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
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("", "missing COMMAND");
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	if (strcmp(cmd, "check") == 0)
		status = cmd_check(config_path, argc, argv);
	else if (strcmp(cmd, "discover") == 0)
		status = cmd_discover(config_path, argc, argv);
	else if (strcmp(cmd, "coord") == 0)
		status = cmd_coord(argc, argv);
	else
		status = usage_error("", "unknown command '%s'", cmd);
	/* Output that did not reach its destination is a failure, not a
	 * success with nothing to show. */
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
