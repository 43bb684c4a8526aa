/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the script driver, drivers/script.so, loaded with dlopen and
 * driven through <extres/driver.h> alone, with the fixture scripts in
 * tests/fixtures/scripts/.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <extres/driver.h>

#define MODULE EXTRES_DRIVERS_BUILD_DIR "/script.so"
#define SCRIPTS EXTRES_FIXTURES "/scripts"

#define MAX_LOG 16
#define MAX_INFOS 8
#define MAX_PARAMS 8

struct test_host {
	struct extres_host host; /* first: the driver sees only this */
	char error[4096];
	int nerror;
	int nlog;
	int32_t log_level[MAX_LOG];
	char log[MAX_LOG][1024];
	/* check_trusted_path(): the calls seen, and what it answers. */
	int ntrust;
	char trust_path[512];
	char trust_what[64];
	int32_t trust_result;
	/* coordinated_by(): the calls seen, and the last file and flag. */
	int ncoord;
	char coord_file[512];
	char coord_how[64];
};

struct test_sink {
	struct extres_sink sink; /* first */
	int ninfos;
	int nprops[MAX_INFOS];
	char key[MAX_INFOS][32];
	char *value[MAX_INFOS];
	int fail_add; /* make add_property fail with -ENOMEM */
};

struct fixture {
	void *dl;
	const struct extres_driver_ops *ops;
	struct test_host th;
	struct extres_param items[MAX_PARAMS];
	struct extres_param root;
	char tmp[64];
	char file[128]; /* a file in tmp for scripts to write to */
};

static void host_log(const struct extres_host *h, int32_t level,
		     const char *fmt, ...)
{
	struct test_host *th = (struct test_host *)h;
	va_list ap;

	assert_true(th->nlog < MAX_LOG);
	th->log_level[th->nlog] = level;
	va_start(ap, fmt);
	vsnprintf(th->log[th->nlog], sizeof(th->log[0]), fmt, ap);
	va_end(ap);
	th->nlog++;
}

static int32_t host_error(const struct extres_host *h, const char *fmt, ...)
{
	struct test_host *th = (struct test_host *)h;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(th->error, sizeof(th->error), fmt, ap);
	va_end(ap);
	th->nerror++;
	return -EINVAL;
}

/* The core's rule is fs/os/trust.c's, tested there; here only whether the
 * driver asks, about what, and passes a refusal on. */
static int32_t host_check_trusted(const struct extres_host *h, const char *path,
				  const char *what)
{
	struct test_host *th = (struct test_host *)h;

	th->ntrust++;
	snprintf(th->trust_path, sizeof(th->trust_path), "%s", path);
	snprintf(th->trust_what, sizeof(th->trust_what), "%s", what);
	if (th->trust_result == 0)
		return 0;
	host_error(h, "%s %s could be modified by another user: test", what,
		   path);
	return th->trust_result;
}

static int32_t host_coordinated_by(const struct extres_host *h,
				   const char *file, const char *how)
{
	struct test_host *th = (struct test_host *)h;

	th->ncoord++;
	snprintf(th->coord_file, sizeof(th->coord_file), "%s", file);
	snprintf(th->coord_how, sizeof(th->coord_how), "%s", how);
	return 0;
}

/* Set where a short host says the member is not there. */
static int32_t host_check_trusted_unexpected(const struct extres_host *h,
					     const char *path, const char *what)
{
	fail_msg("check_trusted_path() called past the host's struct_size");
	return -EIO;
}

static int32_t sink_begin(struct extres_sink *s)
{
	struct test_sink *ts = (struct test_sink *)s;

	assert_true(ts->ninfos < MAX_INFOS);
	ts->nprops[ts->ninfos++] = 0;
	return 0;
}

static int32_t sink_add(struct extres_sink *s, const char *key,
			const char *value)
{
	struct test_sink *ts = (struct test_sink *)s;
	int i = ts->ninfos - 1;

	if (ts->fail_add)
		return -ENOMEM;
	assert_true(i >= 0);
	/* The driver gives exactly one property per info. */
	assert_int_equal(ts->nprops[i], 0);
	ts->nprops[i]++;
	snprintf(ts->key[i], sizeof(ts->key[i]), "%s", key);
	ts->value[i] = strdup(value);
	assert_non_null(ts->value[i]);
	return 0;
}

static void sink_init(struct test_sink *ts)
{
	memset(ts, 0, sizeof(*ts));
	ts->sink.struct_size = sizeof(ts->sink);
	ts->sink.begin_info = sink_begin;
	ts->sink.add_property = sink_add;
}

static void sink_clear(struct test_sink *ts)
{
	int i;

	for (i = 0; i < ts->ninfos; i++)
		free(ts->value[i]);
	ts->ninfos = 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	extres_driver_entry_fn entry;

	assert_non_null(f);
	f->dl = dlopen(MODULE, RTLD_NOW | RTLD_LOCAL);
	if (!f->dl)
		fail_msg("dlopen %s: %s", MODULE, dlerror());
	entry = (extres_driver_entry_fn)dlsym(f->dl,
					      EXTRES_DRIVER_ENTRY_SYMBOL);
	assert_non_null(entry);
	f->ops = entry();
	assert_non_null(f->ops);

	f->th.host.abi_version = EXTRES_DRIVER_ABI_VERSION;
	f->th.host.struct_size = sizeof(struct extres_host);
	f->th.host.resource = "gpu";
	f->th.host.config_path = EXTRES_FIXTURES "/extres.yaml";
	f->th.host.config_dir = EXTRES_FIXTURES;
	f->th.host.amount = 2;
	f->th.host.log = host_log;
	f->th.host.error = host_error;
	f->th.host.coordinated_by = host_coordinated_by;

	f->root.kind = EXTRES_PARAM_MAPPING;
	f->root.items = f->items;

	strcpy(f->tmp, "/tmp/test_script.XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
	snprintf(f->file, sizeof(f->file), "%s/out", f->tmp);
	unsetenv("FLINK_HOME");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char path[512];
	DIR *d = opendir(f->tmp);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", f->tmp, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(f->tmp);
	dlclose(f->dl);
	unsetenv("FLINK_HOME");
	free(f);
	return 0;
}

static void add_scalar(struct fixture *f, const char *key, const char *value)
{
	struct extres_param *p = &f->items[f->root.count++];

	assert_true(f->root.count <= MAX_PARAMS);
	memset(p, 0, sizeof(*p));
	p->kind = EXTRES_PARAM_SCALAR;
	p->key = key;
	p->value = value;
	p->line = f->root.count;
	p->column = 3;
}

static void add_node(struct fixture *f, const char *key, uint32_t kind,
		     const struct extres_param *items, uint32_t count)
{
	struct extres_param *p = &f->items[f->root.count++];

	assert_true(f->root.count <= MAX_PARAMS);
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->key = key;
	p->items = items;
	p->count = count;
	p->line = f->root.count;
	p->column = 3;
}

/* Open, expecting success. */
static void *open_ok(struct fixture *f)
{
	void *h = (void *)0x1;

	f->th.nerror = 0;
	assert_int_equal(f->ops->open(&f->th.host, &f->root, &h), 0);
	assert_int_equal(f->th.nerror, 0);
	return h;
}

/* Open, expecting `err` and exactly `msg`, with *ret_handle untouched. */
static void open_fails(struct fixture *f, int err, const char *msg)
{
	void *h = (void *)0x1;
	int fds = count_fds();

	f->th.nerror = 0;
	assert_int_equal(f->ops->open(&f->th.host, &f->root, &h), err);
	assert_ptr_equal(h, (void *)0x1);
	assert_int_equal(f->th.nerror, 1);
	assert_string_equal(f->th.error, msg);
	assert_int_equal(count_fds(), fds);
}

/* One discovery into a fresh sink; checks no fd is left behind. */
static int discover(struct fixture *f, void *h, struct test_sink *ts)
{
	int fds = count_fds(), r;

	sink_init(ts);
	f->th.nerror = 0;
	f->th.error[0] = '\0';
	r = f->ops->discover(h, &ts->sink);
	assert_int_equal(count_fds(), fds);
	return r;
}

static void expect_indexes(struct test_sink *ts, int n, ...)
{
	va_list ap;
	int i;

	assert_int_equal(ts->ninfos, n);
	va_start(ap, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(ts->nprops[i], 1);
		assert_string_equal(ts->key[i], "index");
		assert_string_equal(ts->value[i], va_arg(ap, const char *));
	}
	va_end(ap);
}

/* A process is gone, or a zombie that nobody of ours will reap (an orphan
 * now init's). Waits up to 2 s, because SIGKILL lands asynchronously. */
static int process_dead(long pid)
{
	char path[64], buf[512];
	double until = now_s() + 2;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	for (;;) {
		FILE *fp = fopen(path, "re");
		char *p;
		size_t n;

		if (!fp)
			return 1;
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && (p[2] == 'Z' || p[2] == 'X'))
			return 1;
		if (now_s() > until)
			return 0;
		usleep(10000);
	}
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	size_t n;

	assert_non_null(fp);
	n = fread(buf, 1, len - 1, fp);
	fclose(fp);
	buf[n] = '\0';
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)),
			 (ssize_t)strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_entry(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->ops->abi_version, EXTRES_DRIVER_ABI_VERSION);
	assert_int_equal(f->ops->struct_size, sizeof(struct extres_driver_ops));
	assert_string_equal(f->ops->name, "script");
	assert_non_null(f->ops->open);
	assert_non_null(f->ops->discover);
	assert_non_null(f->ops->close);
}

static void test_flink_amount_and_args(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	f->th.host.amount = 3;
	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	add_scalar(
		f, "discovery-script.args",
		"  --enable-coordination-mode\t--coordination-file /var/tmp/x ");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 4, "amount=3", "--enable-coordination-mode",
		       "--coordination-file", "/var/tmp/x");
	sink_clear(&ts);
	/* discover() may run again on the same handle (reloads). */
	assert_int_equal(discover(f, h, &ts), 0);
	assert_int_equal(ts.ninfos, 4);
	sink_clear(&ts);
	assert_int_equal(f->th.nlog, 0);
	f->ops->close(h);
}

static void test_args_absent_and_empty(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 1, "amount=2");
	sink_clear(&ts);
	f->ops->close(h);

	add_scalar(f, "discovery-script.args", " \t ");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 1, "amount=2");
	sink_clear(&ts);
	f->ops->close(h);
}

static void test_args_sequence(void **state)
{
	struct fixture *f = *state;
	struct extres_param args[3] = {
		{ .kind = EXTRES_PARAM_SCALAR, .value = "a b" },
		{ .kind = EXTRES_PARAM_SCALAR, .value = "--x" },
		{ .kind = EXTRES_PARAM_SCALAR, .value = "" },
	};
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	add_node(f, "discovery-script.args", EXTRES_PARAM_SEQUENCE, args, 3);
	h = open_ok(f);
	/* One argument per item, spaces kept (so "a b" is no index); the
	 * empty one is passed too. */
	assert_int_equal(discover(f, h, &ts), -EINVAL);
	assert_string_equal(
		f->th.error,
		"discovery script " SCRIPTS
		"/flink.sh: index \"a b\" contains whitespace; its output: \"amount=2,a b,--x,\\x0a\"");
	assert_int_equal(ts.ninfos, 0);
	f->ops->close(h);
}

static void test_args_bad_kind(void **state)
{
	struct fixture *f = *state;
	struct extres_param inner[1] = {
		{ .kind = EXTRES_PARAM_SCALAR, .key = "k", .value = "v" },
	};
	struct extres_param seq[2] = {
		{ .kind = EXTRES_PARAM_SCALAR, .value = "ok" },
		{ .kind = EXTRES_PARAM_MAPPING, .items = inner, .count = 1 },
	};

	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	add_node(f, "discovery-script.args", EXTRES_PARAM_MAPPING, inner, 1);
	open_fails(
		f, -EINVAL,
		"param discovery-script.args must be a string or a sequence of strings");

	f->root.count = 1;
	add_node(f, "discovery-script.args", EXTRES_PARAM_SEQUENCE, seq, 2);
	open_fails(f, -EINVAL,
		   "param discovery-script.args: item 2 is not a string");
}

static void test_spark_json(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/spark.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 3, "0", "1", "2");
	sink_clear(&ts);
	f->ops->close(h);
}

static void test_path_not_set(void **state)
{
	struct fixture *f = *state;
	struct extres_param seq[1] = {
		{ .kind = EXTRES_PARAM_SCALAR, .value = "/bin/true" },
	};

	add_scalar(f, "discovery-script.args", "x");
	open_fails(f, -EINVAL, "param discovery-script.path is not set");

	add_scalar(f, "discovery-script.path", "");
	open_fails(f, -EINVAL,
		   "param discovery-script.path must be a non-empty string");

	f->root.count = 0;
	add_node(f, "discovery-script.path", EXTRES_PARAM_SEQUENCE, seq, 1);
	open_fails(f, -EINVAL,
		   "param discovery-script.path must be a non-empty string");

	f->th.nerror = 0;
	assert_int_equal(f->ops->open(&f->th.host, NULL, &(void *){ NULL }),
			 -EINVAL);
	assert_string_equal(f->th.error,
			    "param discovery-script.path is not set");
}

static void test_unknown_param_warns(void **state)
{
	struct fixture *f = *state;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	add_scalar(f, "discovery-script.timeut", "5");
	add_scalar(f, "vendor", "nvidia");
	h = open_ok(f);
	assert_int_equal(f->th.nlog, 2);
	assert_int_equal(f->th.log_level[0], EXTRES_LOG_WARNING);
	assert_string_equal(
		f->th.log[0], EXTRES_FIXTURES
		"/extres.yaml:2:3: unknown key param.discovery-script.timeut ignored");
	assert_string_equal(
		f->th.log[1], EXTRES_FIXTURES
		"/extres.yaml:3:3: unknown key param.vendor ignored");
	f->ops->close(h);
}

/* Open with args (a string, or a two-item sequence when a1 is set), and
 * return how many times the script reported its own coordination. */
static int coordination_of(struct fixture *f, const char *a0, const char *a1)
{
	struct extres_param seq[2] = {
		{ .kind = EXTRES_PARAM_SCALAR, .value = a0 },
		{ .kind = EXTRES_PARAM_SCALAR, .value = a1 },
	};
	void *h;

	f->root.count = 0;
	f->th.ncoord = 0;
	f->th.coord_file[0] = f->th.coord_how[0] = '\0';
	add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
	if (a1)
		add_node(f, "discovery-script.args", EXTRES_PARAM_SEQUENCE, seq,
			 2);
	else
		add_scalar(f, "discovery-script.args", a0);
	h = open_ok(f);
	f->ops->close(h);
	return f->th.ncoord;
}

/* Flink's flags make the script coordinate by itself: open() says so, with
 * the file (--coordination-file, else Flink's) and the flag. */
static void test_coordination_reported(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(coordination_of(f, "--enable-coordination-mode", NULL),
			 1);
	assert_string_equal(f->th.coord_file,
			    "/var/tmp/flink-gpu-coordination");
	assert_string_equal(f->th.coord_how, "--enable-coordination-mode");
	assert_int_equal(
		coordination_of(
			f,
			"--coordination-file /var/tmp/x\t--enable-coordination ",
			NULL),
		1);
	assert_string_equal(f->th.coord_file, "/var/tmp/x");
	assert_string_equal(f->th.coord_how, "--enable-coordination");
	assert_int_equal(
		coordination_of(
			f, "--enable-coordination-modes --enable-coordinationX",
			NULL),
		0);
	assert_int_equal(coordination_of(f, "", NULL), 0);

	assert_int_equal(coordination_of(f, "--coordination-file",
					 "--enable-coordination"),
			 1);
	/* The item after the file flag is the file, whatever it looks like. */
	assert_string_equal(f->th.coord_file, "--enable-coordination");
	assert_int_equal(coordination_of(f, "--enable-coordination-mode", "x"),
			 1);
	assert_string_equal(f->th.coord_file,
			    "/var/tmp/flink-gpu-coordination");
	/* A sequence item is one argument: this one is not the flag. */
	assert_int_equal(coordination_of(f, "--enable-coordination --x", "y"),
			 0);

	/* A core without the hook coordinates by itself: nothing is said. */
	f->th.host.struct_size = offsetof(struct extres_host, coordinated_by);
	assert_int_equal(coordination_of(f, "--enable-coordination", NULL), 0);
}

static void test_timeout_values(void **state)
{
	static const char *const good[] = { "10",   "10s",   "500ms", "0.25",
					    "1.5s", "0.001", "86400", "1ms" };
	static const char *const bad[] = {
		"0",  "0s",    "0ms",	    "-1",
		"+1", " 1",    "1 ",	    "abc",
		"1.", ".5",    "0.0001",    "1.5ms",
		"5m", "86401", "86400.001", "99999999999999999999",
		""
	};
	struct fixture *f = *state;
	char msg[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		f->root.count = 0;
		add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
		add_scalar(f, "discovery-script.timeout", good[i]);
		f->ops->close(open_ok(f));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f->root.count = 0;
		add_scalar(f, "discovery-script.path", SCRIPTS "/flink.sh");
		add_scalar(f, "discovery-script.timeout", bad[i]);
		snprintf(
			msg, sizeof(msg),
			"param discovery-script.timeout: invalid value \"%s\" (expected a duration from 1 ms to 86400 s: 10, 0.5, 10s or 500ms)",
			bad[i]);
		open_fails(f, -EINVAL, msg);
	}
}

static void test_failing_script_quotes_stderr(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/fail.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EIO);
	assert_int_equal(ts.ninfos, 0);
	assert_int_equal(f->th.nerror, 1);
	assert_string_equal(
		f->th.error,
		"discovery script " SCRIPTS
		"/fail.sh exited with status 3: nvidia-smi: command not found no GPU found");
	f->ops->close(h);
}

static void test_failing_script_silent(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char path[128], msg[256];
	void *h;

	snprintf(path, sizeof(path), "%s/silent.sh", f->tmp);
	write_file(path, "#!/bin/sh\necho 0,1\nexit 1\n", 0755);
	add_scalar(f, "discovery-script.path", path);
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EIO);
	snprintf(msg, sizeof(msg), "discovery script %s exited with status 1",
		 path);
	assert_string_equal(f->th.error, msg);
	f->ops->close(h);
}

static void test_stderr_on_success_logged(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char path[128], msg[256];
	void *h;

	snprintf(path, sizeof(path), "%s/chatty.sh", f->tmp);
	write_file(path, "#!/bin/sh\necho 'warning: slow' >&2\necho 0\n", 0755);
	add_scalar(f, "discovery-script.path", path);
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 1, "0");
	sink_clear(&ts);
	assert_int_equal(f->th.nlog, 1);
	assert_int_equal(f->th.log_level[0], EXTRES_LOG_INFO);
	snprintf(msg, sizeof(msg),
		 "discovery script %s wrote to stderr: warning: slow", path);
	assert_string_equal(f->th.log[0], msg);
	f->ops->close(h);
}

/* Run a script of `body` that exits 0; expect -EINVAL and the message
 * "discovery script PATH: `why`; its output: `shown`". */
static void expect_bad_output(struct fixture *f, const char *body,
			      const char *why, const char *shown)
{
	struct test_sink ts;
	char path[128], script[1024], msg[2048];
	void *h;

	snprintf(path, sizeof(path), "%s/garbage.sh", f->tmp);
	snprintf(script, sizeof(script), "#!/bin/sh\n%s\n", body);
	write_file(path, script, 0755);
	f->root.count = 0;
	add_scalar(f, "discovery-script.path", path);
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EINVAL);
	snprintf(msg, sizeof(msg), "discovery script %s: %s; its output: %s",
		 path, why, shown);
	assert_string_equal(f->th.error, msg);
	assert_int_equal(ts.ninfos, 0);
	f->ops->close(h);
}

/* Output that breaks the contract fails discovery with the reason and what
 * the script printed, escaped. */
static void test_bad_output_reported(void **state)
{
	struct fixture *f = *state;
	char big[400], want[400];

	expect_bad_output(
		f, "printf '{\"addresses\": [\"0\"'",
		"invalid JSON output: did not find expected ',' or ']' at the end of the output",
		"\"{\\\"addresses\\\": [\\\"0\\\"\"");
	expect_bad_output(f, "echo 1,2,1", "duplicate index \"1\"",
			  "\"1,2,1\\x0a\"");
	/* Spark's getGpusResources.sh when nvidia-smi cannot reach the
	 * driver: its exit status is 0. */
	expect_bad_output(
		f,
		"echo '{\"name\": \"gpu\", \"addresses\":[\"NVIDIA-SMI has failed because it couldn'\\''t communicate with the NVIDIA driver.\",\"\"]}'",
		"index \"NVIDIA-SMI has failed because it couldn't communicate with the N\"... contains whitespace",
		"\"{\\\"name\\\": \\\"gpu\\\", \\\"addresses\\\":[\\\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\\\",\\\"\\\"]}\\x0a\"");
	/* The host's resource is "gpu". */
	expect_bad_output(
		f, "echo '{\"name\": \"fpga\", \"addresses\": [\"0\"]}'",
		"JSON output is for resource \"fpga\", not for this resource \"gpu\"",
		"\"{\\\"name\\\": \\\"fpga\\\", \\\"addresses\\\": [\\\"0\\\"]}\\x0a\"");
	expect_bad_output(
		f, "printf '0,1\\n\\033[31mmore\\n'",
		"line 2 of the output is not blank: \"\\x1b[31mmore\" (the indexes must be on the first line, and nothing else may follow)",
		"\"0,1\\x0a\\x1b[31mmore\\x0a\"");
	/* The output is quoted up to 256 bytes. */
	memset(big, 'x', 300);
	memcpy(big, "echo ", 5);
	big[300] = '\0';
	memset(want, 'x', 258);
	want[0] = '"';
	memcpy(want + 257, "\"...", 5);
	expect_bad_output(
		f, big,
		"index \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"... is longer than 255 bytes",
		want);
}

static void test_killed_by_signal(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/signal.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EIO);
	assert_string_equal(
		f->th.error,
		"discovery script " SCRIPTS
		"/signal.sh killed by signal 15 (SIGTERM): about to die");
	f->ops->close(h);
}

static void test_stderr_tail_quoted(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	const char *e;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/stderr_flood.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EIO);
	e = strstr(f->th.error, "exited with status 1: ...");
	assert_non_null(e);
	e += strlen("exited with status 1: ...");
	/* The last 1000 bytes of stderr, the reason at the end. */
	assert_int_equal(strlen(e), 1000);
	assert_string_equal(e + strlen(e) - strlen("padding the real reason"),
			    "padding the real reason");
	f->ops->close(h);
}

static void test_hanging_script_times_out(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char pids[64];
	long script, child;
	double t0;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/hang.sh");
	add_scalar(f, "discovery-script.args", f->file);
	add_scalar(f, "discovery-script.timeout", "2");
	h = open_ok(f);
	t0 = now_s();
	assert_int_equal(discover(f, h, &ts), -ETIMEDOUT);
	/* Never early; the upper bound only catches a hang, with room for a
	 * loaded machine under a sanitizer. */
	assert_true(now_s() - t0 >= 2.0);
	assert_true(now_s() - t0 < 6.0);
	assert_string_equal(f->th.error,
			    "discovery script " SCRIPTS
			    "/hang.sh timed out after 2 s: started");

	/* The whole process group is dead: the script and its child. */
	read_file(f->file, pids, sizeof(pids));
	assert_int_equal(sscanf(pids, "%ld %ld", &script, &child), 2);
	assert_true(process_dead(script));
	assert_true(process_dead(child));
	/* And the script was reaped by the driver: no child of ours left. */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	f->ops->close(h);
}

/* Says "stop" once 0.3 s have passed since `stop_after` was set. */
static double stop_after;

static int32_t host_stop_requested(const struct extres_host *h)
{
	(void)h;
	return stop_after > 0 && now_s() >= stop_after;
}

static void test_stop_requested(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char pids[64];
	long script, child;
	double t0;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/hang.sh");
	add_scalar(f, "discovery-script.args", f->file);
	add_scalar(f, "discovery-script.timeout", "60");
	f->th.host.stop_requested = host_stop_requested;
	h = open_ok(f);
	t0 = now_s();
	stop_after = t0 + 0.3;
	assert_int_equal(discover(f, h, &ts), -EINTR);
	stop_after = 0;
	/* Well before the timeout: a stop is obeyed within a second. */
	assert_true(now_s() - t0 < 2.0);
	assert_string_equal(
		f->th.error,
		"discovery script " SCRIPTS
		"/hang.sh stopped: asked to stop; killed it and its process group");
	read_file(f->file, pids, sizeof(pids));
	assert_int_equal(sscanf(pids, "%ld %ld", &script, &child), 2);
	assert_true(process_dead(script));
	assert_true(process_dead(child));
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);

	/* Already asked before it starts: the script is not run at all. */
	stop_after = now_s();
	assert_int_equal(discover(f, h, &ts), -EINTR);
	stop_after = 0;
	assert_string_equal(f->th.error, "discovery script " SCRIPTS
					 "/hang.sh not run: asked to stop");
	f->ops->close(h);
}

static void test_timeout_in_ms(void **state)
{
	struct fixture *f = *state;
	const char *want =
		"discovery script " SCRIPTS "/hang.sh timed out after 0.25 s";
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/hang.sh");
	add_scalar(f, "discovery-script.args", f->file);
	add_scalar(f, "discovery-script.timeout", "250ms");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -ETIMEDOUT);
	/* Only the prefix: whether the script had written "started" within
	 * 250 ms depends on the machine's load. */
	assert_memory_equal(f->th.error, want, strlen(want));
	f->ops->close(h);
}

static void test_background_child_keeps_pipe(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char pid[32];
	double t0;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/background.sh");
	add_scalar(f, "discovery-script.args", f->file);
	h = open_ok(f);
	t0 = now_s();
	assert_int_equal(discover(f, h, &ts), 0);
	assert_true(now_s() - t0 < 5.0);
	expect_indexes(&ts, 2, "0", "1");
	sink_clear(&ts);
	assert_int_equal(f->th.nlog, 1);
	assert_int_equal(f->th.log_level[0], EXTRES_LOG_WARNING);
	assert_string_equal(
		f->th.log[0],
		"discovery script " SCRIPTS
		"/background.sh exited but left a process holding its output open; killed its process group");
	read_file(f->file, pid, sizeof(pid));
	assert_true(process_dead(strtol(pid, NULL, 10)));
	f->ops->close(h);
}

static void test_closes_stdout_early(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	double t0;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/close_early.sh");
	h = open_ok(f);
	t0 = now_s();
	assert_int_equal(discover(f, h, &ts), 0);
	/* The exit status counts, so the driver waited for the exit. */
	assert_true(now_s() - t0 >= 0.3);
	expect_indexes(&ts, 2, "4", "5");
	sink_clear(&ts);
	assert_int_equal(f->th.nlog, 0);
	f->ops->close(h);
}

static void test_output_limit(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/big.sh");
	add_scalar(f, "discovery-script.args", "65536");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 1, "7");
	sink_clear(&ts);
	f->ops->close(h);

	f->root.count = 1;
	add_scalar(f, "discovery-script.args", "65537");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EFBIG);
	assert_int_equal(ts.ninfos, 0);
	assert_string_equal(f->th.error, "discovery script " SCRIPTS
					 "/big.sh: output exceeds 64 KiB");
	f->ops->close(h);

	f->root.count = 1;
	add_scalar(f, "discovery-script.args", "10000000");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EFBIG);
	f->ops->close(h);
}

static void test_no_indexes(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/empty.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -EINVAL);
	assert_string_equal(
		f->th.error,
		"discovery script " SCRIPTS
		"/empty.sh: no indexes in output; its output: \"\"");
	f->ops->close(h);
}

static void test_stdin_null_and_no_fd_leak(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char fdarg[16];
	struct extres_param args[2] = {
		{ .kind = EXTRES_PARAM_SCALAR, .value = fdarg },
		{ .kind = EXTRES_PARAM_SCALAR, .value = f->file },
	};
	int fd;
	void *h;

	/* An fd without O_CLOEXEC, as a careless library might leave; the
	 * script looks for it by the file it is open on. */
	write_file(f->file, "x", 0644);
	fd = open(f->file, O_RDONLY);
	assert_true(fd >= 0);
	snprintf(fdarg, sizeof(fdarg), "%d", fd);
	add_scalar(f, "discovery-script.path", SCRIPTS "/stdin_fd.sh");
	add_node(f, "discovery-script.args", EXTRES_PARAM_SEQUENCE, args, 2);
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 2, "stdin-eof", "fd-closed");
	sink_clear(&ts);
	f->ops->close(h);
	close(fd);
}

static void test_not_executable(void **state)
{
	struct fixture *f = *state;
	char path[128], msg[256];

	snprintf(path, sizeof(path), "%s/plain.sh", f->tmp);
	write_file(path, "#!/bin/sh\necho 0\n", 0644);
	add_scalar(f, "discovery-script.path", path);
	snprintf(msg, sizeof(msg),
		 "discovery script %s is not executable: Permission denied",
		 path);
	open_fails(f, -EACCES, msg);

	f->root.count = 0;
	add_scalar(f, "discovery-script.path", f->tmp);
	snprintf(msg, sizeof(msg), "discovery script %s is not a regular file",
		 f->tmp);
	open_fails(f, -EINVAL, msg);
}

static void test_exec_format_error(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char path[128], msg[256];
	void *h;

	/* Executable, but no "#!" line: without a shell, exec refuses it. */
	snprintf(path, sizeof(path), "%s/noshebang", f->tmp);
	write_file(path, "echo 0\n", 0755);
	add_scalar(f, "discovery-script.path", path);
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), -ENOEXEC);
	snprintf(msg, sizeof(msg),
		 "cannot run discovery script %s: Exec format error", path);
	assert_string_equal(f->th.error, msg);
	f->ops->close(h);
}

static void test_missing_file(void **state)
{
	struct fixture *f = *state;

	add_scalar(f, "discovery-script.path", SCRIPTS "/no-such-script.sh");
	open_fails(f, -ENOENT,
		   "discovery script " SCRIPTS
		   "/no-such-script.sh: No such file or directory");
}

static void test_script_removed_after_open(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	char path[128], msg[256];
	void *h;

	snprintf(path, sizeof(path), "%s/gone.sh", f->tmp);
	write_file(path, "#!/bin/sh\necho 0\n", 0755);
	add_scalar(f, "discovery-script.path", path);
	h = open_ok(f);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(discover(f, h, &ts), -ENOENT);
	snprintf(msg, sizeof(msg),
		 "cannot run discovery script %s: No such file or directory",
		 path);
	assert_string_equal(f->th.error, msg);
	f->ops->close(h);
}

static void test_relative_to_config_dir(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	add_scalar(f, "discovery-script.path", "scripts/flink.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 1, "amount=2");
	sink_clear(&ts);
	f->ops->close(h);

	/* The message shows the resolved path; a trailing '/' is not doubled. */
	f->root.count = 0;
	f->th.host.config_dir = SCRIPTS "/";
	add_scalar(f, "discovery-script.path", "nope.sh");
	open_fails(f, -ENOENT,
		   "discovery script " SCRIPTS
		   "/nope.sh: No such file or directory");

	/* An empty FLINK_HOME counts as unset. */
	setenv("FLINK_HOME", "", 1);
	f->th.host.config_dir = EXTRES_FIXTURES;
	f->root.count = 0;
	add_scalar(f, "discovery-script.path", "scripts/spark.sh");
	f->ops->close(open_ok(f));
}

static void test_relative_to_flink_home(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	void *h;

	setenv("FLINK_HOME", EXTRES_FIXTURES, 1);
	f->th.host.config_dir = "/nonexistent";
	add_scalar(f, "discovery-script.path", "scripts/spark.sh");
	h = open_ok(f);
	assert_int_equal(discover(f, h, &ts), 0);
	expect_indexes(&ts, 3, "0", "1", "2");
	sink_clear(&ts);
	f->ops->close(h);

	f->root.count = 0;
	add_scalar(f, "discovery-script.path",
		   "plugins/nvidia-gpu-discovery.sh");
	open_fails(
		f, -ENOENT,
		"discovery script " EXTRES_FIXTURES
		"/plugins/nvidia-gpu-discovery.sh: No such file or directory");

	/* An absolute path ignores both. */
	f->root.count = 0;
	add_scalar(f, "discovery-script.path", SCRIPTS "/spark.sh");
	f->ops->close(open_ok(f));
}

static void test_sink_failure(void **state)
{
	struct fixture *f = *state;
	struct test_sink ts;
	int fds = count_fds();
	void *h;

	add_scalar(f, "discovery-script.path", SCRIPTS "/spark.sh");
	h = open_ok(f);
	sink_init(&ts);
	ts.fail_add = 1;
	assert_int_equal(f->ops->discover(h, &ts.sink), -ENOMEM);
	assert_string_equal(f->th.error,
			    "cannot record index 0: Cannot allocate memory");
	assert_int_equal(count_fds(), fds);
	f->ops->close(h);
}

/* A core with the check: the resolved path is checked at open(), after the
 * driver's own checks, and a refusal fails open() with the core's errno and
 * message. */
static void test_trusted_path_checked(void **state)
{
	struct fixture *f = *state;
	void *h;

	f->th.host.check_trusted_path = host_check_trusted;
	add_scalar(f, "discovery-script.path", "scripts/spark.sh");
	h = open_ok(f);
	assert_int_equal(f->th.ntrust, 1);
	assert_string_equal(f->th.trust_path, SCRIPTS "/spark.sh");
	assert_string_equal(f->th.trust_what, "discovery script");
	f->ops->close(h);

	f->th.ntrust = 0;
	f->th.trust_result = -EPERM;
	open_fails(f, -EPERM,
		   "discovery script " SCRIPTS
		   "/spark.sh could be modified by another user: test");
	assert_int_equal(f->th.ntrust, 1);

	/* A missing script is reported as before, without asking. */
	f->th.ntrust = 0;
	f->root.count = 0;
	add_scalar(f, "discovery-script.path", SCRIPTS "/no-such-script.sh");
	open_fails(f, -ENOENT,
		   "discovery script " SCRIPTS
		   "/no-such-script.sh: No such file or directory");
	assert_int_equal(f->th.ntrust, 0);
}

/* A core older than the member, or one that leaves it NULL: no check. */
static void test_trusted_path_absent(void **state)
{
	struct fixture *f = *state;

	f->th.host.struct_size =
		offsetof(struct extres_host, check_trusted_path);
	f->th.host.check_trusted_path = host_check_trusted_unexpected;
	add_scalar(f, "discovery-script.path", SCRIPTS "/spark.sh");
	f->ops->close(open_ok(f));

	f->th.host.struct_size = sizeof(struct extres_host);
	f->th.host.check_trusted_path = NULL;
	f->ops->close(open_ok(f));
}

static void test_close_null(void **state)
{
	struct fixture *f = *state;

	f->ops->close(NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_entry),
		T(test_flink_amount_and_args),
		T(test_args_absent_and_empty),
		T(test_args_sequence),
		T(test_args_bad_kind),
		T(test_spark_json),
		T(test_path_not_set),
		T(test_unknown_param_warns),
		T(test_coordination_reported),
		T(test_timeout_values),
		T(test_failing_script_quotes_stderr),
		T(test_failing_script_silent),
		T(test_stderr_on_success_logged),
		T(test_bad_output_reported),
		T(test_killed_by_signal),
		T(test_stderr_tail_quoted),
		T(test_hanging_script_times_out),
		T(test_timeout_in_ms),
		T(test_stop_requested),
		T(test_background_child_keeps_pipe),
		T(test_closes_stdout_early),
		T(test_output_limit),
		T(test_no_indexes),
		T(test_stdin_null_and_no_fd_leak),
		T(test_not_executable),
		T(test_exec_format_error),
		T(test_missing_file),
		T(test_script_removed_after_open),
		T(test_relative_to_config_dir),
		T(test_relative_to_flink_home),
		T(test_sink_failure),
		T(test_trusted_path_checked),
		T(test_trusted_path_absent),
		T(test_close_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
