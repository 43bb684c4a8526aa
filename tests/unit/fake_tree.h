/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for the drivers that read sysfs (test_sysfs.c, test_amdgpu.c):
 * fake sysfs trees in a mkdtemp directory. Running the driver on them is
 * driver_run.h's, included here.
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
#include <sys/stat.h>
#include <unistd.h>

#include "driver_run.h"

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

#endif
