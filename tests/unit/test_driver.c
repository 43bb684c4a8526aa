/* SPDX-License-Identifier: MIT */
/*
 * Driver loading and running, against the mock modules in tests/mock: the
 * ABI checks, the host and sink callbacks, and how failures are reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/instance.h"
#include "host/module.h"
#include "extres_build.h"

#define MOCK(name) EXTRES_MOCK_DIR "/" name ".so"

/* A resource "gpu" as the config loader would make it, built by hand. */
struct fixture {
	struct extres_config config;
	struct extres_resource_config res;
	struct extres_param params;
};

static void fixture_init(struct fixture *f, const char *driver,
			 const struct extres_param *items, uint32_t count)
{
	memset(f, 0, sizeof(*f));
	f->config.path = "/etc/extres/extres.yaml";
	f->config.dir = "/etc/extres";
	f->res.name = "gpu";
	f->res.amount = (struct extres_amount){ 2, 2 };
	f->res.driver = (char *)driver;
	f->params.kind = EXTRES_PARAM_MAPPING;
	f->params.count = count;
	f->params.items = items;
	f->res.params = &f->params;
}

/* One scalar param, e.g. `external-resource.gpu.param.mode: slash`. */
#define SCALAR(k, v)                                                   \
	{                                                              \
		.kind = EXTRES_PARAM_SCALAR, .key = (k), .value = (v), \
		.line = 3, .column = 5                                 \
	}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static char *read_file(const char *path)
{
	char *buf = calloc(1, 65536);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_non_null(buf);
	assert_true(fd >= 0);
	n = read(fd, buf, 65535);
	assert_true(n >= 0);
	close(fd);
	return buf;
}

static void make_tmpdir(char *out, size_t size)
{
	char tmpl[] = "/tmp/extres-test-driver-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, out));
	assert_true(strlen(out) < size);
}

/* --- extres_module_load ------------------------------------------------ */

static void test_load_good(void **state)
{
	struct extres_module *m = NULL;
	struct extres_err err = { "" };
	const struct extres_driver_ops *ops;

	assert_int_equal(extres_module_load(MOCK("mock_good"), &m, &err), 0);
	assert_non_null(m);
	assert_string_equal(err.msg, "");
	ops = extres_module_ops(m);
	assert_int_equal(ops->abi_version, EXTRES_DRIVER_ABI_VERSION);
	assert_int_equal(ops->struct_size, sizeof(struct extres_driver_ops));
	assert_string_equal(ops->name, "mock_good");
	assert_non_null(ops->open);
	assert_non_null(ops->discover);
	assert_non_null(ops->close);
	extres_module_unload(m);
}

/* A module built against a later header, with members appended. */
static void test_load_future(void **state)
{
	struct extres_module *m = NULL;
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	assert_int_equal(extres_module_load(MOCK("mock_future"), &m, &err), 0);
	assert_string_equal(extres_module_ops(m)->name, "mock_future");
	assert_true(extres_module_ops(m)->struct_size >
		    sizeof(struct extres_driver_ops));
	extres_module_unload(m);

	fixture_init(&f, MOCK("mock_future"), NULL, 0);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_int_equal(infos->n, 1);
	assert_string_equal(extres_info_get(&infos->items[0], "index"), "7");
	extres_infos_free(infos);
	extres_driver_close(drv);
}

static void expect_load_error(const char *path, int errnum, const char *msg)
{
	struct extres_module *m = (struct extres_module *)0x1;
	struct extres_err err = { "" };

	assert_int_equal(extres_module_load(path, &m, &err), -errnum);
	assert_string_equal(err.msg, msg);
	/* Untouched on failure. */
	assert_ptr_equal(m, (struct extres_module *)0x1);
}

static void test_load_errors(void **state)
{
	expect_load_error(
		MOCK("mock_wrong_abi"), EPROTO,
		MOCK("mock_wrong_abi") ": driver ABI version 999, this extres speaks 1");
	expect_load_error(
		MOCK("mock_short"), ELIBBAD,
		MOCK("mock_short") ": driver ops table is 8 bytes, this extres needs at least 40");
	expect_load_error(
		MOCK("mock_missing_op"), ELIBBAD,
		MOCK("mock_missing_op") ": driver does not set the required op 'discover'");
	expect_load_error(
		MOCK("mock_no_entry"), ELIBBAD,
		MOCK("mock_no_entry") ": not a driver module: no symbol 'extres_driver_entry' (" MOCK(
			"mock_no_entry") ": undefined symbol: extres_driver_entry)");
	expect_load_error(
		MOCK("mock_null_ops"), ELIBBAD,
		MOCK("mock_null_ops") ": extres_driver_entry() returned no ops table");
	expect_load_error(MOCK("mock_no_name"), ELIBBAD,
			  MOCK("mock_no_name") ": driver has no name");
	expect_load_error(
		MOCK("mock_bad_env"), ELIBBAD,
		MOCK("mock_bad_env") ": driver's env_fixed entry 'X=a'b' is not NAME=VALUE with a shell variable name other than env_var and a value of letters, digits and \"_.,:+-\"");
	expect_load_error(
		MOCK("mock_bad_prefix"), ELIBBAD,
		MOCK("mock_bad_prefix") ": driver's env_id_prefix 'a'b' is not 1 to 15 letters, digits and \"_.:-\"");
	expect_load_error(
		MOCK("mock_absent"), ENOENT,
		"cannot load driver module '" MOCK("mock_absent") "': " MOCK(
			"mock_absent") ": cannot open shared object file: No such file or directory");
	/* Still untouched when no message is wanted. */
	{
		struct extres_module *m = NULL;

		assert_int_equal(
			extres_module_load(MOCK("mock_short"), &m, NULL),
			-ELIBBAD);
		assert_null(m);
	}
}

/* A file that is there but is no shared object: the message says which
 * file and what dlopen() thought of it. */
static void test_load_not_elf(void **state)
{
	struct extres_module *m = NULL;
	struct extres_err err = { "" };
	char dir[PATH_MAX], path[PATH_MAX + 16], prefix[2 * PATH_MAX + 64];

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/text.so", dir);
	write_file(path, "#!/bin/sh\necho not a module\n", 28);

	assert_int_equal(extres_module_load(path, &m, &err), -ELIBBAD);
	snprintf(prefix, sizeof(prefix),
		 "cannot load driver module '%s': %s: ", path, path);
	assert_int_equal(strncmp(err.msg, prefix, strlen(prefix)), 0);
	assert_true(strlen(err.msg) > strlen(prefix));
	assert_null(m);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* --- extres_driver_open / discover / close ------------------------------ */

static void test_open_discover(void **state)
{
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL, *again = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_good"), NULL, 0);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_non_null(drv);
	assert_string_equal(extres_driver_name(drv), "mock_good");

	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_string_equal(err.msg, "");
	assert_int_equal(infos->n, 2);
	assert_int_equal(infos->items[0].n_props, 2);
	assert_string_equal(infos->items[0].props[0].key, "index");
	assert_string_equal(infos->items[0].props[0].value, "0");
	assert_string_equal(infos->items[0].props[1].key, "name");
	assert_string_equal(infos->items[0].props[1].value, "mock0");
	assert_int_equal(infos->items[1].n_props, 2);
	assert_string_equal(infos->items[1].props[0].value, "1");
	assert_string_equal(infos->items[1].props[1].value, "mock1");

	/* Discovery runs again (reloads), into a new list. */
	assert_int_equal(extres_driver_discover(drv, &again, &err), 0);
	assert_ptr_not_equal(again, infos);
	assert_int_equal(again->n, 2);
	assert_string_equal(extres_info_get(&again->items[1], "name"), "mock1");

	extres_infos_free(again);
	extres_infos_free(infos);
	extres_driver_close(drv);
}

/* What the host tells open(), seen from inside the driver. */
static void test_host_fields(void **state)
{
	static const struct extres_param items[] = { SCALAR("echo-host",
							    "yes") };
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	const struct extres_info *info;
	struct fixture f;
	char size[32];

	fixture_init(&f, MOCK("mock_good"), items, 1);
	f.res.amount = (struct extres_amount){ 3, 3 };
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	info = &infos->items[0];
	assert_int_equal(info->n_props, 8);
	assert_string_equal(extres_info_get(info, "resource"), "gpu");
	assert_string_equal(extres_info_get(info, "amount"), "3");
	assert_string_equal(extres_info_get(info, "config-path"),
			    "/etc/extres/extres.yaml");
	assert_string_equal(extres_info_get(info, "config-dir"), "/etc/extres");
	assert_string_equal(extres_info_get(info, "abi-version"), "1");
	snprintf(size, sizeof(size), "%zu", sizeof(struct extres_host));
	assert_string_equal(extres_info_get(info, "host-size"), size);
	extres_infos_free(infos);
	extres_driver_close(drv);
}

/* A resource with no params at all still hands the driver a mapping. */
static void test_no_params(void **state)
{
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_good"), NULL, 0);
	f.res.params = NULL;
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_int_equal(infos->n, 2);
	extres_infos_free(infos);
	extres_driver_close(drv);
}

static void expect_open_error(struct fixture *f, int errnum, const char *msg)
{
	struct extres_driver *drv = (struct extres_driver *)0x1;
	struct extres_err err = { "" };

	assert_int_equal(extres_driver_open(&f->config, &f->res, &drv, &err),
			 -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(drv, (struct extres_driver *)0x1);
}

static void test_open_errors(void **state)
{
	static const struct extres_param bad_fail[] = { SCALAR("fail",
							       "open") };
	char expect[PATH_MAX * 2 + 256];
	char build[PATH_MAX];
	struct fixture f;

	fixture_init(&f, MOCK("mock_fail_open"), NULL, 0);
	expect_open_error(
		&f, EIO,
		"resource 'gpu': driver 'mock_fail_open': cannot open: because");

	/* host->error() returns -EINVAL for a driver to pass on. */
	fixture_init(&f, MOCK("mock_good"), bad_fail, 1);
	expect_open_error(
		&f, EINVAL,
		"resource 'gpu': driver 'mock_good': unknown fail mode 'open'");

	fixture_init(&f, MOCK("mock_wrong_abi"), NULL, 0);
	expect_open_error(
		&f, EPROTO,
		"resource 'gpu': " MOCK(
			"mock_wrong_abi") ": driver ABI version 999, this extres speaks 1");

	fixture_init(&f, MOCK("mock_absent"), NULL, 0);
	expect_open_error(
		&f, ENOENT,
		"resource 'gpu': cannot load driver module '" MOCK("mock_absent") "': " MOCK(
			"mock_absent") ": cannot open shared object file: No such file or directory");

	fixture_init(&f, "../drivers/static", NULL, 0);
	expect_open_error(
		&f, EINVAL,
		"resource 'gpu': invalid driver name '../drivers/static': neither a name "
		"of letters, digits, '_' and '-' nor an absolute path");

	assert_non_null(realpath(EXTRES_BUILD_ROOT, build));
	fixture_init(&f, "no-such", NULL, 0);
	snprintf(
		expect, sizeof(expect),
		"resource 'gpu': driver 'no-such' not found; drivers found: none in %s/tests/drivers; none in %s",
		build, EXTRES_DRIVER_DIR);
	expect_open_error(&f, ENOENT, expect);
}

/* What a config another user could modify names is neither loaded nor run,
 * however trusted the file it names. */
static void test_untrusted_config(void **state)
{
	static const struct extres_param run_sh[] = { SCALAR("run",
							     "/bin/sh") };
	static const struct extres_param run_tmp[] = { SCALAR("run", "/tmp") };
	struct extres_driver *drv = NULL;
	struct extres_err err;
	struct fixture f;

	(void)state;
	/* Trusted: the host judges the file alone. */
	fixture_init(&f, MOCK("mock_good"), run_sh, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	extres_driver_close(drv);
	fixture_init(&f, MOCK("mock_good"), run_tmp, 1);
	expect_open_error(
		&f, EPERM,
		"resource 'gpu': driver 'mock_good': test program /tmp could be modified by another user: it is world-writable (mode 1777)");

	fixture_init(&f, MOCK("mock_good"), run_sh, 1);
	f.config.untrusted =
		"config file /etc/extres/extres.yaml could be modified by another user: it is owned by uid 1000 (mode 0644)";
	expect_open_error(
		&f, EPERM,
		"resource 'gpu': refusing driver module " MOCK(
			"mock_good") ", named by a config root does not trust: config file /etc/extres/extres.yaml could be modified by another user: it is owned by uid 1000 (mode 0644)");
}

static void test_discover_fails(void **state)
{
	static const struct extres_param items[] = { SCALAR("fail",
							    "discover") };
	struct extres_infos *infos = (struct extres_infos *)0x1;
	struct extres_driver *drv = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_good"), items, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), -EIO);
	assert_string_equal(
		err.msg,
		"resource 'gpu': driver 'mock_good': discovery failed on purpose");
	assert_ptr_equal(infos, (struct extres_infos *)0x1);
	extres_driver_close(drv);
}

/* Run mock_bad_props in `mode`; expect discovery to fail as given. */
static void expect_bad_props(const char *mode, int errnum, const char *msg)
{
	const struct extres_param items[] = { SCALAR("mode", mode) };
	struct extres_infos *infos = (struct extres_infos *)0x1;
	struct extres_driver *drv = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_bad_props"), items, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(infos, (struct extres_infos *)0x1);
	extres_driver_close(drv);
}

static void test_bad_props(void **state)
{
	expect_bad_props(
		"slash", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property name 'a/b' contains '/'");
	expect_bad_props(
		"dot", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property name '.x' starts with '.'");
	expect_bad_props(
		"dup", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property 'index' given twice in info 0");
	expect_bad_props(
		"empty", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property 'index' has an empty value (it names the device)");
	expect_bad_props(
		"newline", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property 'name' has a value with a newline");
	expect_bad_props(
		"null", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property 'name' given with a NULL value");
	expect_bad_props(
		"before-begin", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property 'index' given before any info");
	expect_bad_props(
		"many", E2BIG,
		"resource 'gpu': driver 'mock_bad_props': more than 4096 infos (the limit)");
	/* Returning 0 after the sink said no does not make a partial list. */
	expect_bad_props(
		"ignore-sink-error", EINVAL,
		"resource 'gpu': driver 'mock_bad_props': property name 'a/b' contains '/'");
	/* No host->error(): the errno speaks for the driver. */
	expect_bad_props(
		"errno", ENODEV,
		"resource 'gpu': driver 'mock_bad_props': No such device");
	expect_bad_props(
		"positive", EPROTO,
		"resource 'gpu': driver 'mock_bad_props': discover() returned 1, not 0 or a negative errno");
}

/* Finding nothing is the allocator's error to report, not the driver's. */
static void test_zero_infos(void **state)
{
	static const struct extres_param items[] = { SCALAR("mode", "zero") };
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_bad_props"), items, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_non_null(infos);
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
	extres_driver_close(drv);
}

/* host->log() reaches extres_log() with the resource and driver named. */
static void test_log(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("log", "hello from the driver"),
	};
	struct extres_driver *drv = NULL;
	struct extres_err err = { "" };
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct fixture f;
	int fd, saved;
	char *out;

	make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);

	fixture_init(&f, MOCK("mock_good"), items, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	extres_driver_close(drv);

	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(fd);
	out = read_file(path);
	assert_string_equal(
		out,
		"extres: warning: resource 'gpu': driver 'mock_good': hello from the driver\n");
	free(out);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* --- extres_driver_find ------------------------------------------------- */

static void expect_find_error(const char *name, int errnum, const char *msg)
{
	char *path = (char *)0x1;
	struct extres_err err = { "" };

	assert_int_equal(extres_driver_find(name, &path, &err), -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(path, (char *)0x1);
}

static void test_find(void **state)
{
	char expect[PATH_MAX * 2 + 128], build[PATH_MAX];
	char *path = NULL;

	/* The unit test lives in builddir/tests/unit: its ../drivers is
	 * builddir/tests/drivers, which holds no modules. */
	assert_non_null(realpath(EXTRES_BUILD_ROOT, build));
	snprintf(
		expect, sizeof(expect),
		"driver 'no-such' not found; drivers found: none in %s/tests/drivers; none in %s",
		build, EXTRES_DRIVER_DIR);
	expect_find_error("no-such", ENOENT, expect);

	expect_find_error("", EINVAL,
			  "invalid driver name '': neither a name of letters, "
			  "digits, '_' and '-' nor an absolute path");
	expect_find_error("static.so", EINVAL,
			  "invalid driver name 'static.so': neither a name of "
			  "letters, digits, '_' and '-' nor an absolute path");
	expect_find_error("./static", EINVAL,
			  "invalid driver name './static': neither a name of "
			  "letters, digits, '_' and '-' nor an absolute path");
	expect_find_error(
		"..", EINVAL,
		"invalid driver name '..': neither a name of letters, "
		"digits, '_' and '-' nor an absolute path");
	expect_find_error("my driver", EINVAL,
			  "invalid driver name 'my driver': neither a name of "
			  "letters, digits, '_' and '-' nor an absolute path");
	expect_find_error(NULL, EINVAL,
			  "invalid driver name '': neither a name of letters, "
			  "digits, '_' and '-' nor an absolute path");

	/* An absolute path is taken as it is, even one that is not there:
	 * loading says what is wrong with it. */
	assert_int_equal(extres_driver_find("/opt/x/none.so", &path, NULL), 0);
	assert_string_equal(path, "/opt/x/none.so");
	free(path);
	assert_int_equal(extres_driver_find(MOCK("mock_good"), &path, NULL), 0);
	assert_string_equal(path, MOCK("mock_good"));
	free(path);
}

/* Run a copy of this program from `exe` as "exe --find NAME"; return what
 * it printed. */
static char *run_find(const char *exe, const char *name)
{
	char *out = calloc(1, 8192);
	size_t len = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	assert_non_null(out);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execl(exe, exe, "--find", name, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, 8191 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return out;
}

/*
 * A bare name is found in ../drivers beside the running program, as for
 * builddir/fs/extresd and builddir/drivers. The lookup follows the real
 * executable, so a copy of this test runs from a made-up tree:
 * DIR/bin/test_driver, DIR/drivers/good.so.
 */
static void test_find_beside_program(void **state)
{
	char dir[PATH_MAX], exe[PATH_MAX + 32], bin[PATH_MAX + 32];
	char drivers[PATH_MAX + 32], good[PATH_MAX + 32], subdir[PATH_MAX + 32];
	char expect[3 * PATH_MAX];
	char *self, *out;
	ssize_t len;

	make_tmpdir(dir, sizeof(dir));
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(exe, sizeof(exe), "%s/bin/test_driver", dir);
	snprintf(drivers, sizeof(drivers), "%s/drivers", dir);
	snprintf(good, sizeof(good), "%s/drivers/good.so", dir);
	snprintf(subdir, sizeof(subdir), "%s/drivers/subdir.so", dir);
	assert_int_equal(mkdir(bin, 0700), 0);
	assert_int_equal(mkdir(drivers, 0700), 0);
	assert_int_equal(symlink(MOCK("mock_good"), good), 0);
	/* Only a file will do, not a directory of that name. */
	assert_int_equal(mkdir(subdir, 0700), 0);

	self = malloc(64 << 20);
	assert_non_null(self);
	{
		int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

		assert_true(fd >= 0);
		len = read(fd, self, 64 << 20);
		assert_true(len > 0 && len < (64 << 20));
		close(fd);
	}
	write_file(exe, self, (size_t)len);
	free(self);

	out = run_find(exe, "good");
	snprintf(expect, sizeof(expect), "0 %s\n", good);
	assert_string_equal(out, expect);
	free(out);

	out = run_find(exe, "subdir");
	snprintf(
		expect, sizeof(expect),
		"-%d driver 'subdir' not found; drivers found: good in %s; none in %s\n",
		ENOENT, drivers, EXTRES_DRIVER_DIR);
	assert_string_equal(out, expect);
	free(out);

	assert_int_equal(unlink(exe), 0);
	assert_int_equal(unlink(good), 0);
	assert_int_equal(rmdir(subdir), 0);
	assert_int_equal(rmdir(bin), 0);
	assert_int_equal(rmdir(drivers), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_null(void **state)
{
	extres_driver_close(NULL);
	extres_module_unload(NULL);
}

/* --- instances kept across reloads --------------------------------------- */

/* An instance owns copies of what open() was given: the config it came from
 * may be freed (a reload that keeps the instance does so), and the driver
 * still sees its params and the host's strings. */
static void test_instance_outlives_config(void **state)
{
	char *name = strdup("gpu"), *path = strdup("/etc/extres/extres.yaml");
	char *dir = strdup("/etc/extres"), *key = strdup("echo-host");
	char *value = strdup("yes");
	struct extres_param *items = calloc(1, sizeof(*items));
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	assert_non_null(items);
	*items = (struct extres_param)SCALAR(key, value);
	fixture_init(&f, MOCK("mock_good"), items, 1);
	f.res.name = name;
	f.config.path = path;
	f.config.dir = dir;
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	/* Scribbled over first, so that a dangling pointer shows without
	 * the sanitizers too. */
	memset(name, 'x', strlen(name));
	memset(path, 'x', strlen(path));
	memset(dir, 'x', strlen(dir));
	memset(value, 'x', strlen(value));
	free(name);
	free(path);
	free(dir);
	free(key);
	free(value);
	free(items);

	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_string_equal(extres_info_get(&infos->items[0], "resource"),
			    "gpu");
	assert_string_equal(extres_info_get(&infos->items[0], "config-path"),
			    "/etc/extres/extres.yaml");
	assert_string_equal(extres_info_get(&infos->items[0], "config-dir"),
			    "/etc/extres");
	extres_infos_free(infos);
	extres_driver_close(drv);
}

/* An instance serves a resource whose settings are as it was opened with,
 * whatever else changed; the config's path and trust count too. */
static void test_instance_serves(void **state)
{
	static const struct extres_param items[] = { SCALAR("echo-host",
							    "yes") };
	static const struct extres_param other[] = { SCALAR("echo-host",
							    "no") };
	struct extres_driver *drv = NULL;
	struct extres_err err = { "" };
	struct fixture f, g;

	fixture_init(&f, MOCK("mock_good"), items, 1);
	f.res.coordination_key = "index";
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);

	fixture_init(&g, MOCK("mock_good"), items, 1);
	g.res.coordination_key = "index";
	g.res.refresh_ms = 100;
	g.res.env_var = "GPUS";
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 1);
	g.res.amount = (struct extres_amount){ 3, 3 };
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.res.amount = f.res.amount;
	g.params.items = other;
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.params.items = items;
	g.res.coordination_file = "/var/tmp/gpu.coord";
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.res.coordination_file = NULL;
	g.config.untrusted = "config file could be modified by another user";
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.config.untrusted = NULL;
	g.config.path = "/etc/extres/other.yaml";
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.config.path = f.config.path;
	g.res.params = NULL; /* an empty mapping */
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 0);
	g.res.params = &g.params;
	assert_int_equal(extres_driver_serves(drv, &g.config, &g.res), 1);
	extres_driver_close(drv);
}

/* Shared instances are closed by their last holder. */
static void test_instance_ref(void **state)
{
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	fixture_init(&f, MOCK("mock_good"), NULL, 0);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_ptr_equal(extres_driver_ref(drv), drv);
	extres_driver_close(drv);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	assert_int_equal(infos->n, 2);
	extres_infos_free(infos);
	extres_driver_close(drv);
}

/* A file open() had the host vet is vetted again before each discover():
 * one that turned writable by others is refused, as a new open() would. */
static void test_instance_vets_again(void **state)
{
	char dir[PATH_MAX], prog[PATH_MAX + 8];
	struct extres_param items[] = { SCALAR("run", prog) };
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fixture f;

	make_tmpdir(dir, sizeof(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	write_file(prog, "#!/bin/sh\n", 10);
	assert_int_equal(chmod(prog, 0755), 0);
	fixture_init(&f, MOCK("mock_good"), items, 1);
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
	extres_infos_free(infos);
	infos = NULL;
	assert_int_equal(chmod(prog, 0757), 0);
	assert_int_equal(extres_driver_discover(drv, &infos, &err), -EPERM);
	assert_null(infos);
	assert_non_null(strstr(
		err.msg, "resource 'gpu': driver 'mock_good': test program "));
	assert_non_null(strstr(err.msg, "could be modified by another user"));
	extres_driver_close(drv);
	unlink(prog);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_good),
		cmocka_unit_test(test_load_future),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_not_elf),
		cmocka_unit_test(test_open_discover),
		cmocka_unit_test(test_host_fields),
		cmocka_unit_test(test_no_params),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_untrusted_config),
		cmocka_unit_test(test_discover_fails),
		cmocka_unit_test(test_bad_props),
		cmocka_unit_test(test_zero_infos),
		cmocka_unit_test(test_log),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_beside_program),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_instance_outlives_config),
		cmocka_unit_test(test_instance_serves),
		cmocka_unit_test(test_instance_ref),
		cmocka_unit_test(test_instance_vets_again),
	};

	/* The helper mode of test_find_beside_program. */
	if (argc == 3 && strcmp(argv[1], "--find") == 0) {
		struct extres_err err = { "" };
		char *path = NULL;
		int r = extres_driver_find(argv[2], &path, &err);

		printf("%d %s\n", r, r < 0 ? err.msg : path);
		free(path);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
