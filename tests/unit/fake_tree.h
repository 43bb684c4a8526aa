/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for the drivers that read sysfs (test_sysfs.c, test_amdgpu.c):
 * fake sysfs trees in a mkdtemp directory, and a driver run through the host
 * side (extres_driver_open/discover) with its warnings captured.
 *
 * Include after <cmocka.h>. Everything is static inline so that a test that
 * uses only part of it compiles without warnings.
 */
#ifndef EXTRES_TEST_FAKE_TREE_H
#define EXTRES_TEST_FAKE_TREE_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"

#define FAKE_CONFIG "/etc/extres/extres.yaml"

#define SCALAR(k, v, l, c)                                             \
	{                                                              \
		.kind = EXTRES_PARAM_SCALAR, .key = (k), .value = (v), \
		.line = (l), .column = (c)                             \
	}
#define SEQUENCE(k, it, l, c)                                             \
	{                                                                 \
		.kind = EXTRES_PARAM_SEQUENCE, .key = (k), .items = (it), \
		.count = sizeof(it) / sizeof((it)[0]), .line = (l),       \
		.column = (c)                                             \
	}
#define MAPPING(k, it, l, c)                                             \
	{                                                                \
		.kind = EXTRES_PARAM_MAPPING, .key = (k), .items = (it), \
		.count = sizeof(it) / sizeof((it)[0]), .line = (l),      \
		.column = (c)                                            \
	}
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* snprintf() that fails the test rather than cut the text. */
static inline void fake_fmt(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void fake_fmt(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("text too long for its buffer: %s", fmt);
}

/* "<dir>/<fmt...>" into a PATH_MAX buffer; fails the test if it is cut. */
static inline void fake_path(char *dst, const char *dir, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void fake_path(char *dst, const char *dir, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(rel));
	fake_fmt(dst, PATH_MAX, "%s/%s", dir, rel);
}

/* mkdir -p of `path` (absolute). */
static inline void fake_mkdirs(const char *path)
{
	char p[PATH_MAX];
	size_t i;

	assert_true(strlen(path) < sizeof(p));
	strcpy(p, path);
	for (i = 1; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", p, strerror(errno));
		p[i] = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

static inline void fake_parent(const char *path)
{
	char p[PATH_MAX];
	char *slash;

	strcpy(p, path);
	slash = strrchr(p, '/');
	assert_non_null(slash);
	*slash = '\0';
	fake_mkdirs(p);
}

/* Write `len` bytes to `dir`/`rel`, making the directories on the way. */
static inline void fake_write(const char *dir, const char *rel,
			      const char *content, size_t len)
{
	char path[PATH_MAX];
	int fd;

	fake_path(path, dir, "%s", rel);
	fake_parent(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail_msg("create %s: %s", path, strerror(errno));
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static inline void fake_put(const char *dir, const char *rel,
			    const char *content)
{
	fake_write(dir, rel, content, strlen(content));
}

/* `dir`/`rel` -> `target`, as is (relative targets stay relative). */
static inline void fake_symlink(const char *dir, const char *rel,
				const char *target)
{
	char path[PATH_MAX];

	fake_path(path, dir, "%s", rel);
	fake_parent(path);
	if (symlink(target, path) < 0)
		fail_msg("symlink %s: %s", path, strerror(errno));
}

static inline char *fake_tmpdir(const char *name)
{
	char tmpl[PATH_MAX];
	char *dir;

	fake_fmt(tmpl, sizeof(tmpl), "/tmp/extres-test-%s-XXXXXX", name);
	assert_non_null(mkdtemp(tmpl));
	dir = strdup(tmpl);
	assert_non_null(dir);
	return dir;
}

static inline int fake_rm_one(const char *path, const struct stat *st, int flag,
			      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

/* rm -rf of a tree made by fake_tmpdir(), then free its name. */
static inline void fake_rmdir(char *dir)
{
	if (!dir)
		return;
	if (nftw(dir, fake_rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		fail_msg("cannot remove %s: %s", dir, strerror(errno));
	free(dir);
}

/* cmocka fixtures: *state is a fresh temporary directory, removed after the
 * test whether it passed or not. */
static inline int fake_setup(void **state)
{
	*state = fake_tmpdir("sysfs-tree");
	return 0;
}

static inline int fake_teardown(void **state)
{
	fake_rmdir(*state);
	return 0;
}

/* One driver run: what discovery found, or why it failed, and every line
 * the driver logged. */
struct fake_run {
	int open_r;
	int discover_r;
	struct extres_infos *infos; /* NULL unless both succeeded */
	struct extres_err err;
	char log[16384];
};

/*
 * Open `so` for resource `resource` with params `items`, discover, close,
 * all with stderr (where extres_log writes) going to a memfd. `config_dir`
 * stands in for the config file's directory.
 */
static inline void fake_run(const char *so, const char *resource,
			    const char *config_dir,
			    const struct extres_param *items, uint32_t count,
			    struct fake_run *run)
{
	struct extres_config config = { 0 };
	struct extres_resource_config res = { 0 };
	struct extres_param params = { 0 };
	struct extres_driver *drv = NULL;
	int fd, saved;
	ssize_t n;

	memset(run, 0, sizeof(*run));
	config.path = (char *)FAKE_CONFIG;
	config.dir = (char *)config_dir;
	res.name = (char *)resource;
	res.amount = 1;
	res.driver = (char *)so;
	params.kind = EXTRES_PARAM_MAPPING;
	params.count = count;
	params.items = items;
	res.params = &params;

	fd = memfd_create("stderr", MFD_CLOEXEC);
	assert_true(fd >= 0);
	saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);

	run->open_r = extres_driver_open(&config, &res, &drv, &run->err);
	run->discover_r = -1;
	if (run->open_r == 0) {
		run->discover_r =
			extres_driver_discover(drv, &run->infos, &run->err);
		extres_driver_close(drv);
	}

	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, run->log, sizeof(run->log) - 1, 0);
	assert_true(n >= 0 && (size_t)n < sizeof(run->log) - 1);
	run->log[n] = '\0';
	close(fd);
}

/* A run that must succeed; returns its infos (the caller frees them). */
static inline struct extres_infos *
fake_discover(const char *so, const char *resource, const char *config_dir,
	      const struct extres_param *items, uint32_t count, char *log,
	      size_t log_len)
{
	struct fake_run *run = calloc(1, sizeof(*run));
	struct extres_infos *infos;

	assert_non_null(run);
	fake_run(so, resource, config_dir, items, count, run);
	if (run->open_r < 0)
		fail_msg("open: %s", run->err.msg);
	if (run->discover_r < 0)
		fail_msg("discover: %s", run->err.msg);
	fake_fmt(log, log_len, "%s", run->log);
	infos = run->infos;
	free(run);
	return infos;
}

/* info must be exactly `count` key, value pairs, in order. */
static inline void expect_props(const struct extres_info *info,
				const char *const *kv, size_t count)
{
	size_t i;

	for (i = 0; i < count && i < info->n_props; i++) {
		assert_string_equal(info->props[i].key, kv[2 * i]);
		assert_string_equal(info->props[i].value, kv[2 * i + 1]);
	}
	assert_int_equal(info->n_props, count);
}

#define EXPECT_PROPS(info, ...)                                              \
	do {                                                                 \
		const char *const kv_[] = { __VA_ARGS__ };                   \
		expect_props((info), kv_, sizeof(kv_) / sizeof(kv_[0]) / 2); \
	} while (0)

#endif
