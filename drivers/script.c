/* SPDX-License-Identifier: MIT */
/*
 * The script driver: Flink's GPU discovery-script contract.
 *
 * Params:
 *   discovery-script.path     required; a relative path resolves against
 *                             $FLINK_HOME when set and non-empty, else the
 *                             config file's directory.
 *   discovery-script.args     optional; a string split into words on
 *                             whitespace (no shell quoting, as Flink), or a
 *                             sequence of scalars, one argument each.
 *   discovery-script.timeout  optional; a duration from 1 ms to 86400 s:
 *                             seconds ("10", "0.5", at most 3 decimals,
 *                             "10s") or milliseconds ("500ms"). Default 10 s,
 *                             Flink's fixed discovery timeout.
 *
 * discover() runs the script without a shell as `path amount args...`, stdin
 * from /dev/null, in its own process group, and parses its standard output
 * with script_output.c: Flink's comma list or Spark's JSON object. Each item
 * becomes one info with the single property "index", in output order.
 */
#include <extres/driver.h>
#include <extres/driver_util.h>

#include "lib/process.h"
#include "text_scan.h"
#include "script_output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARAM_PATH "discovery-script.path"
#define PARAM_ARGS "discovery-script.args"
#define PARAM_TIMEOUT "discovery-script.timeout"

#define DEFAULT_TIMEOUT_MS 10000u
#define MAX_TIMEOUT_MS (86400u * 1000u)
/* How much of the script's stderr a message quotes: its end, where scripts
 * (and shells, and Python) put the reason they failed. */
#define STDERR_QUOTE_MAX 1000u
/* How much of the script's stdout a message about it quotes: its start,
 * where a message printed instead of the indexes is. */
#define STDOUT_QUOTE_MAX 256u

struct script {
	const struct extres_host *host;
	char *path;
	char **argv; /* path, amount, args..., NULL */
	size_t argc;
	uint64_t timeout_ms;
};

static void free_argv(char **argv, size_t argc)
{
	size_t i;

	if (!argv)
		return;
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static void script_free(struct script *s)
{
	if (!s)
		return;
	free_argv(s->argv, s->argc);
	free(s->path);
	free(s);
}

/* Append a copy of `len` bytes of `str`, keeping argv NULL-terminated. */
static int argv_push(struct script *s, const char *str, size_t len)
{
	char **argv = reallocarray(s->argv, s->argc + 2, sizeof(*argv));
	char *copy;

	if (!argv)
		return -ENOMEM;
	s->argv = argv;
	copy = strndup(str, len);
	if (!copy)
		return -ENOMEM;
	argv[s->argc++] = copy;
	argv[s->argc] = NULL;
	return 0;
}

static int parse_args(struct script *s, const struct extres_param *p)
{
	const struct extres_host *host = s->host;
	const char *w, *e;
	size_t len;
	uint32_t i;
	int r;

	if (!p)
		return 0;
	if (p->kind == EXTRES_PARAM_SEQUENCE) {
		for (i = 0; i < p->count; i++) {
			const struct extres_param *item = &p->items[i];

			if (item->kind != EXTRES_PARAM_SCALAR || !item->value) {
				host->error(host,
					    "param " PARAM_ARGS
					    ": item %" PRIu32
					    " is not a string",
					    i + 1);
				return -EINVAL;
			}
			r = argv_push(s, item->value, strlen(item->value));
			if (r < 0)
				goto oom;
		}
		return 0;
	}
	if (p->kind != EXTRES_PARAM_SCALAR || !p->value) {
		host->error(host, "param " PARAM_ARGS
				  " must be a string or a sequence of strings");
		return -EINVAL;
	}
	/* Flink splits on whitespace with no quoting; so do we. */
	for (e = p->value; text_next_word(&e, e + strlen(e), &w, &len);) {
		r = argv_push(s, w, len);
		if (r < 0)
			goto oom;
	}
	return 0;
oom:
	host->error(host, "out of memory");
	return r;
}

/* "10", "0.5", "10s", "1.25s", "500ms" -> milliseconds, 1 ms .. 1 day. */
static int parse_timeout(const char *text, uint64_t *ret_ms)
{
	unsigned long long whole;
	uint64_t frac = 0, scale = 1000, ms;
	int has_frac = 0;
	char *end;

	/* strtoull would take a sign or leading blanks; a duration has none. */
	if (!(*text >= '0' && *text <= '9'))
		return -EINVAL;
	errno = 0;
	whole = strtoull(text, &end, 10);
	if (errno != 0 || whole > MAX_TIMEOUT_MS)
		return -ERANGE;
	if (*end == '.') {
		has_frac = 1;
		end++;
		if (!(*end >= '0' && *end <= '9'))
			return -EINVAL;
		while (*end >= '0' && *end <= '9') {
			if (scale == 1)
				return -EINVAL; /* finer than 1 ms */
			scale /= 10;
			frac += (uint64_t)(*end - '0') * scale;
			end++;
		}
	}
	if (strcmp(end, "ms") == 0) {
		if (has_frac)
			return -EINVAL;
		ms = whole;
	} else if (*end == '\0' || strcmp(end, "s") == 0) {
		ms = (uint64_t)whole * 1000 + frac;
	} else {
		return -EINVAL;
	}
	if (ms == 0)
		return -EINVAL;
	if (ms > MAX_TIMEOUT_MS)
		return -ERANGE;
	*ret_ms = ms;
	return 0;
}

/* The timeout as an operator wrote it, in seconds: "10 s", "0.5 s". */
static void format_timeout(char *dst, size_t len, uint64_t ms)
{
	char frac[4];
	int n;

	if (ms % 1000 == 0) {
		snprintf(dst, len, "%" PRIu64 " s", ms / 1000);
		return;
	}
	snprintf(frac, sizeof(frac), "%03" PRIu64, ms % 1000);
	for (n = 3; n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	snprintf(dst, len, "%" PRIu64 ".%s s", ms / 1000, frac);
}

static int resolve_path(const struct extres_host *host, const char *path,
			char **ret_path)
{
	const char *base = getenv("FLINK_HOME");
	char *full;
	size_t n;

	if (path[0] == '/')
		base = NULL;
	else if (!base || !*base)
		base = host->config_dir;

	if (!base || !*base) {
		full = strdup(path);
	} else {
		n = strlen(base);
		if (asprintf(&full, "%s%s%s", base,
			     base[n - 1] == '/' ? "" : "/", path) < 0)
			full = NULL;
	}
	if (!full)
		return -ENOMEM;
	*ret_path = full;
	return 0;
}

/* Fail at open(), where the operator looks, not at the first discovery. */
static int check_script(const struct extres_host *host, const char *path)
{
	struct stat st;
	int r;

	if (stat(path, &st) < 0) {
		r = -errno;
		host->error(host, "discovery script %s: %s", path,
			    strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		host->error(host, "discovery script %s is not a regular file",
			    path);
		return -EINVAL;
	}
	if (access(path, X_OK) < 0) {
		r = -errno;
		host->error(host, "discovery script %s is not executable: %s",
			    path, strerror(-r));
		return r;
	}
	return 0;
}

static const char *const known_params[] = { PARAM_PATH, PARAM_ARGS,
					    PARAM_TIMEOUT, NULL };

/* The flags of Flink's GPU scripts that make them record what they take. */
static const char *const coordination_flags[] = { "--enable-coordination-mode",
						  "--enable-coordination",
						  NULL };
#define COORDINATION_FILE_FLAG "--coordination-file"
/* Where Flink's scripts coordinate when not told otherwise. */
#define FLINK_COORDINATION_FILE "/var/tmp/flink-gpu-coordination"

/*
 * A script asked to coordinate takes its devices through its own file:
 * tell the core, which then checks every line rather than taking devices
 * itself. The file is the argument after --coordination-file, else
 * Flink's default. A core without the hook coordinates on its own.
 */
static int report_coordination(struct script *s)
{
	const struct extres_host *host = s->host;
	const char *flag = NULL, *file = NULL;
	size_t i;
	int r;

	/* argv[0] and [1] are the path and the amount. */
	for (i = 2; i < s->argc; i++) {
		const char *const *f;

		for (f = coordination_flags; *f && !flag; f++)
			if (strcmp(s->argv[i], *f) == 0)
				flag = *f;
		if (!file && i + 1 < s->argc &&
		    strcmp(s->argv[i], COORDINATION_FILE_FLAG) == 0)
			file = s->argv[i + 1];
	}
	if (!flag || !EXTRES_HAS_MEMBER(host, coordinated_by) ||
	    !host->coordinated_by)
		return 0;
	r = host->coordinated_by(host, file ? file : FLINK_COORDINATION_FILE,
				 flag);
	if (r < 0)
		host->error(host, "discovery script %s, run with %s: %s",
			    s->path, flag, strerror(-r));
	return r;
}

static int32_t script_open(const struct extres_host *host,
			   const struct extres_param *params, void **ret_handle)
{
	const struct extres_param *p;
	const char *path, *timeout;
	struct script *s;
	char amount[24];
	int r;

	s = calloc(1, sizeof(*s));
	if (!s) {
		host->error(host, "out of memory");
		return -ENOMEM;
	}
	s->host = host;
	s->timeout_ms = DEFAULT_TIMEOUT_MS;

	extres_params_warn_unknown(host, params, known_params);

	p = extres_param_get(params, PARAM_PATH);
	if (!p) {
		r = host->error(host, "param " PARAM_PATH " is not set");
		goto fail;
	}
	path = extres_param_scalar(params, PARAM_PATH);
	if (!path || !*path) {
		r = host->error(host, "param " PARAM_PATH
				      " must be a non-empty string");
		goto fail;
	}

	p = extres_param_get(params, PARAM_TIMEOUT);
	if (p) {
		timeout = extres_param_scalar(params, PARAM_TIMEOUT);
		if (!timeout || parse_timeout(timeout, &s->timeout_ms) < 0) {
			r = host->error(
				host,
				"param " PARAM_TIMEOUT
				": invalid value \"%s\" (expected a duration from 1 ms to 86400 s: 10, 0.5, 10s or 500ms)",
				timeout ? timeout : "(not a string)");
			goto fail;
		}
	}

	r = resolve_path(host, path, &s->path);
	if (r < 0) {
		host->error(host, "out of memory");
		goto fail;
	}
	r = check_script(host, s->path);
	if (r < 0)
		goto fail;
	/* The script runs with the daemon's rights: nobody else may be able
	 * to change it. A core older than the check cannot make it. */
	if (EXTRES_HAS_MEMBER(host, check_trusted_path) &&
	    host->check_trusted_path) {
		r = host->check_trusted_path(host, s->path, "discovery script");
		if (r < 0)
			goto fail;
	}

	snprintf(amount, sizeof(amount), "%" PRIu64, host->amount);
	r = argv_push(s, s->path, strlen(s->path));
	if (r == 0)
		r = argv_push(s, amount, strlen(amount));
	if (r < 0) {
		host->error(host, "out of memory");
		goto fail;
	}
	r = parse_args(s, extres_param_get(params, PARAM_ARGS));
	if (r == 0)
		r = report_coordination(s);
	if (r < 0)
		goto fail;

	*ret_handle = s;
	return 0;
fail:
	script_free(s);
	return r;
}

/* Whether the daemon is asked to stop (`arg` is the host): a stop is obeyed
 * within a second, script killed and all. */
static int stop_requested(void *arg)
{
	const struct extres_host *host = arg;

	if (host->struct_size < offsetof(struct extres_host, stop_requested) +
					sizeof(host->stop_requested) ||
	    !host->stop_requested)
		return 0;
	return host->stop_requested(host) != 0;
}

/* The end of stderr for a message: control characters blanked, at most
 * STDERR_QUOTE_MAX bytes, cut on a UTF-8 character boundary. */
static void quote_stderr(char *dst, size_t dst_len, const char *buf, size_t len)
{
	size_t start = 0, o = 0, i;

	while (len > 0 && text_is_space(buf[len - 1]))
		len--;
	while (start < len && text_is_space(buf[start]))
		start++;
	if (len - start > STDERR_QUOTE_MAX) {
		start = len - STDERR_QUOTE_MAX;
		while (start < len &&
		       ((unsigned char)buf[start] & 0xc0) == 0x80)
			start++;
		o = (size_t)snprintf(dst, dst_len, "...");
	}
	for (i = start; i < len && o + 1 < dst_len; i++) {
		unsigned char c = (unsigned char)buf[i];

		dst[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	dst[o] = '\0';
}

static int report_sink(struct script *s, struct extres_sink *sink,
		       const struct script_output *out)
{
	size_t i;
	int r;

	for (i = 0; i < out->n; i++) {
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", out->items[i]);
		if (r < 0) {
			s->host->error(s->host, "cannot record index %s: %s",
				       out->items[i], strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Say what the script left behind and what became of it: a process that
 * left its group (setsid) is not killed with the group, but by the keeper. */
static void report_leftovers(struct script *s, const struct process *run)
{
	const struct extres_host *host = s->host;
	char killed[96] = "";

	if (run->escaped > 0)
		snprintf(killed, sizeof(killed),
			 " and %d process%s that had left it (setsid)",
			 run->escaped, run->escaped == 1 ? "" : "es");
	if (run->lingering && run->holder_left)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s exited but left a process holding its output open; killed its process group%s, but a process outside it still holds the output",
			s->path, killed);
	else if (run->lingering)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s exited but left a process holding its output open; killed its process group%s",
			s->path, killed);
	else if (run->escaped > 0)
		host->log(
			host, EXTRES_LOG_WARNING,
			"discovery script %s left %d process%s running outside its process group (setsid); killed %s",
			s->path, run->escaped, run->escaped == 1 ? "" : "es",
			run->escaped == 1 ? "it" : "them");
}

static int32_t script_discover(void *handle, struct extres_sink *sink)
{
	struct script *s = handle;
	const struct extres_host *host = s->host;
	struct process run;
	struct script_output out = { 0 };
	char err[STDERR_QUOTE_MAX + 8], why[1024], tmo[32];
	char shown[SCRIPT_OUTPUT_QUOTED_SIZE(STDOUT_QUOTE_MAX)];
	const char *sep;
	int r;

	if (process_init(&run) < 0) {
		host->error(host, "out of memory");
		r = -ENOMEM;
		goto out_free;
	}
	if (stop_requested((void *)host)) {
		host->error(host, "discovery script %s not run: asked to stop",
			    s->path);
		r = -EINTR;
		goto out_free;
	}

	r = process_start(&run, s->argv);
	if (r < 0) {
		host->error(host, "cannot set up discovery script %s: %s",
			    s->path, strerror(-r));
		goto out_free;
	}
	if (run.exec_errno) {
		process_finish(&run);
		host->error(host, "cannot run discovery script %s: %s", s->path,
			    strerror(run.exec_errno));
		r = -run.exec_errno;
		goto out_free;
	}
	r = process_pump(&run, s->timeout_ms, stop_requested, (void *)host);
	process_finish(&run);
	report_leftovers(s, &run);

	quote_stderr(err, sizeof(err), run.buf[PROCESS_ERR],
		     run.len[PROCESS_ERR]);
	sep = err[0] ? ": " : "";
	if (r < 0) {
		host->error(host, "discovery script %s: reading its output: %s",
			    s->path, strerror(-r));
		goto out_free;
	}
	if (run.stopped) {
		host->error(
			host,
			"discovery script %s stopped: asked to stop; killed it and its process group",
			s->path);
		r = -EINTR;
		goto out_free;
	}
	if (run.exec_errno) {
		host->error(host, "cannot run discovery script %s: %s", s->path,
			    strerror(run.exec_errno));
		r = -run.exec_errno;
		goto out_free;
	}
	if (run.timed_out) {
		format_timeout(tmo, sizeof(tmo), s->timeout_ms);
		host->error(host, "discovery script %s timed out after %s%s%s",
			    s->path, tmo, sep, err);
		r = -ETIMEDOUT;
		goto out_free;
	}
	if (run.overflow) {
		host->error(host, "discovery script %s: output exceeds %u KiB",
			    s->path, PROCESS_OUTPUT_MAX / 1024);
		r = -EFBIG;
		goto out_free;
	}
	if (run.exit_signal != 0) {
		const char *name = sigabbrev_np(run.exit_signal);
		char sig[32] = "";

		if (name)
			snprintf(sig, sizeof(sig), " (SIG%s)", name);
		host->error(host,
			    "discovery script %s killed by signal %d%s%s%s",
			    s->path, run.exit_signal, sig, sep, err);
		r = -EIO;
		goto out_free;
	}
	if (run.exit_code != 0) {
		host->error(host,
			    "discovery script %s exited with status %d%s%s",
			    s->path, run.exit_code, sep, err);
		r = -EIO;
		goto out_free;
	}

	if (err[0])
		host->log(host, EXTRES_LOG_INFO,
			  "discovery script %s wrote to stderr: %s", s->path,
			  err);

	r = script_output_parse(run.buf[PROCESS_OUT], run.len[PROCESS_OUT],
				host->resource, &out, why, sizeof(why));
	if (r < 0) {
		/* The reason alone hides what the script meant to say (Spark's
		 * prints nvidia-smi's complaint as an address, with exit 0). */
		script_output_quote(shown, run.buf[PROCESS_OUT],
				    run.len[PROCESS_OUT], STDOUT_QUOTE_MAX);
		host->error(host, "discovery script %s: %s; its output: %s",
			    s->path, why, shown);
		goto out_free;
	}
	r = report_sink(s, sink, &out);
	script_output_clear(&out);
out_free:
	process_clear(&run);
	return r;
}

static void script_close(void *handle)
{
	script_free(handle);
}

/* Indexes only: nothing that identifies a device across refreshes. */
EXTRES_DRIVER_REGISTER(.name = "script", .open = script_open,
		       .discover = script_discover, .close = script_close)
