/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for fs/os/trust.c: which files the daemon may run or load. Each
 * test builds a small tree in a mkdtemp directory under /tmp (itself root's,
 * in a sticky /tmp) and hands parts of it to another user (uid 65534) with
 * chown, so the tests that need that run as root only.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/trust.h"

#define NOBODY 65534
#define UNTOUCHED "untouched"

struct fixture {
	char tmp[64];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->tmp, "/tmp/test_trust.XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
	*state = f;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(nftw(f->tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(f);
	return 0;
}

/* "<tmp>/<rel>" into buf. */
static const char *at(const struct fixture *f, const char *rel, char *buf,
		      size_t len)
{
	int n = snprintf(buf, len, "%s/%s", f->tmp, rel);

	assert_true(n > 0 && (size_t)n < len);
	return buf;
}

static void make_dir(const struct fixture *f, const char *rel, mode_t mode)
{
	char path[256];

	at(f, rel, path, sizeof(path));
	assert_int_equal(mkdir(path, 0700), 0);
	/* chmod, not mkdir's mode: the umask must not decide the test. */
	assert_int_equal(chmod(path, mode), 0);
}

static void make_file(const struct fixture *f, const char *rel, mode_t mode)
{
	char path[256];
	int fd;

	at(f, rel, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void make_link(const struct fixture *f, const char *rel,
		      const char *target)
{
	char path[256];

	assert_int_equal(symlink(target, at(f, rel, path, sizeof(path))), 0);
}

static void give_away(const struct fixture *f, const char *rel)
{
	char path[256];

	assert_int_equal(lchown(at(f, rel, path, sizeof(path)), NOBODY, NOBODY),
			 0);
}

static void expect_ok(const struct fixture *f, const char *rel)
{
	struct extres_err err;
	char path[256];

	strcpy(err.msg, UNTOUCHED);
	assert_int_equal(extres_check_trusted(at(f, rel, path, sizeof(path)),
					      "discovery script", &err),
			 0);
	assert_string_equal(err.msg, UNTOUCHED);
}

/* Expect `errnum` and exactly `fmt`, in which every "%1$s" is the temp
 * directory. */
static void expect_fail(const struct fixture *f, const char *rel, int errnum,
			const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void expect_fail(const struct fixture *f, const char *rel, int errnum,
			const char *fmt, ...)
{
	struct extres_err err;
	char path[256], want[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	strcpy(err.msg, UNTOUCHED);
	assert_int_equal(extres_check_trusted(at(f, rel, path, sizeof(path)),
					      "discovery script", &err),
			 -errnum);
	assert_string_equal(err.msg, want);
}

static void skip_unless_root(void)
{
	if (geteuid() != 0)
		skip();
}

static void test_trusted_file(void **state)
{
	struct fixture *f = *state;

	make_file(f, "run.sh", 0755);
	make_file(f, "lib.so", 0644);
	make_file(f, "private", 0700);
	expect_ok(f, "run.sh");
	expect_ok(f, "lib.so");
	expect_ok(f, "private");
	/* Spellings that resolve to the same file. */
	expect_ok(f, "./run.sh");
	expect_ok(f, "/run.sh");
	make_dir(f, "d", 0755);
	expect_ok(f, "d/../run.sh");
	expect_ok(f, "d/./.././run.sh");
}

static void test_relative_path(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char want[256];

	assert_true(cwd >= 0);
	make_file(f, "run.sh", 0755);
	make_file(f, "open.sh", 0757);
	assert_int_equal(chdir(f->tmp), 0);
	assert_int_equal(extres_check_trusted("run.sh", "x", &err), 0);
	assert_int_equal(
		extres_check_trusted("open.sh", "discovery script", &err),
		-EPERM);
	/* The path as given, and where it led. */
	snprintf(
		want, sizeof(want),
		"discovery script open.sh (resolved to %s/open.sh) could be modified by another user: it is world-writable (mode 0757)",
		f->tmp);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	assert_string_equal(err.msg, want);
}

static void test_writable_file(void **state)
{
	struct fixture *f = *state;

	make_file(f, "o.sh", 0757);
	make_file(f, "g.sh", 0775);
	make_file(f, "both.sh", 0666);
	make_file(f, "sticky.sh", 01777);
	expect_fail(
		f, "o.sh", EPERM,
		"discovery script %1$s/o.sh could be modified by another user: it is world-writable (mode 0757)",
		f->tmp);
	expect_fail(
		f, "g.sh", EPERM,
		"discovery script %1$s/g.sh could be modified by another user: it is group-writable (mode 0775)",
		f->tmp);
	expect_fail(
		f, "both.sh", EPERM,
		"discovery script %1$s/both.sh could be modified by another user: it is world-writable (mode 0666)",
		f->tmp);
	/* The sticky bit protects entries of a directory, not a file. */
	expect_fail(
		f, "sticky.sh", EPERM,
		"discovery script %1$s/sticky.sh could be modified by another user: it is world-writable (mode 1777)",
		f->tmp);
}

static void test_file_owner(void **state)
{
	struct fixture *f = *state;

	skip_unless_root();
	make_file(f, "theirs.sh", 0555);
	give_away(f, "theirs.sh");
	expect_fail(
		f, "theirs.sh", EPERM,
		"discovery script %1$s/theirs.sh could be modified by another user: it is owned by uid 65534 (mode 0555)",
		f->tmp);
}

static void test_writable_dir(void **state)
{
	struct fixture *f = *state;

	make_dir(f, "world", 0777);
	make_file(f, "world/run.sh", 0755);
	make_dir(f, "group", 0770);
	make_file(f, "group/run.sh", 0755);
	expect_fail(
		f, "world/run.sh", EPERM,
		"discovery script %1$s/world/run.sh could be modified by another user: directory %1$s/world is world-writable without the sticky bit (mode 0777)",
		f->tmp);
	expect_fail(
		f, "group/run.sh", EPERM,
		"discovery script %1$s/group/run.sh could be modified by another user: directory %1$s/group is group-writable without the sticky bit (mode 0770)",
		f->tmp);
}

static void test_sticky_dir(void **state)
{
	struct fixture *f = *state;

	make_dir(f, "tmp", 01777);
	make_file(f, "tmp/run.sh", 0755);
	make_dir(f, "shared", 01770);
	make_file(f, "shared/run.sh", 0755);
	expect_ok(f, "tmp/run.sh");
	expect_ok(f, "shared/run.sh");
}

/* In a sticky directory another user's entry is still theirs to replace. */
static void test_sticky_dir_foreign_entry(void **state)
{
	struct fixture *f = *state;

	skip_unless_root();
	make_dir(f, "tmp", 01777);
	make_file(f, "tmp/theirs.sh", 0755);
	give_away(f, "tmp/theirs.sh");
	make_dir(f, "tmp/sub", 0755);
	make_file(f, "tmp/sub/run.sh", 0755);
	give_away(f, "tmp/sub");
	expect_fail(
		f, "tmp/theirs.sh", EPERM,
		"discovery script %1$s/tmp/theirs.sh could be modified by another user: it is owned by uid 65534 (mode 0755)",
		f->tmp);
	expect_fail(
		f, "tmp/sub/run.sh", EPERM,
		"discovery script %1$s/tmp/sub/run.sh could be modified by another user: directory %1$s/tmp/sub is owned by uid 65534",
		f->tmp);
}

static void test_dir_owner(void **state)
{
	struct fixture *f = *state;

	skip_unless_root();
	make_dir(f, "theirs", 0755);
	make_file(f, "theirs/run.sh", 0755);
	give_away(f, "theirs");
	expect_fail(
		f, "theirs/run.sh", EPERM,
		"discovery script %1$s/theirs/run.sh could be modified by another user: directory %1$s/theirs is owned by uid 65534",
		f->tmp);
}

/* Whoever can rename a directory higher up can swap the whole subtree. */
static void test_ancestor(void **state)
{
	struct fixture *f = *state;

	make_dir(f, "open", 0777);
	make_dir(f, "open/safe", 0755);
	make_file(f, "open/safe/run.sh", 0755);
	expect_fail(
		f, "open/safe/run.sh", EPERM,
		"discovery script %1$s/open/safe/run.sh could be modified by another user: directory %1$s/open is world-writable without the sticky bit (mode 0777)",
		f->tmp);
}

static void test_symlink_to_trusted(void **state)
{
	struct fixture *f = *state;
	char target[256];

	make_dir(f, "bin", 0755);
	make_file(f, "bin/run.sh", 0755);
	make_link(f, "rel", "bin/run.sh");
	make_link(f, "abs", at(f, "bin/run.sh", target, sizeof(target)));
	make_link(f, "chain", "rel");
	make_link(f, "bindir", "bin");
	make_link(f, "bin/up", "../bin/run.sh");
	expect_ok(f, "rel");
	expect_ok(f, "abs");
	expect_ok(f, "chain");
	expect_ok(f, "bindir/run.sh");
	expect_ok(f, "bindir/up");
	expect_ok(f, "bindir/../bin/run.sh");
}

/* A link in a directory others may write can be pointed elsewhere later,
 * however safe its target is now. */
static void test_symlink_in_writable_dir(void **state)
{
	struct fixture *f = *state;

	make_file(f, "run.sh", 0755);
	make_dir(f, "open", 0777);
	make_link(f, "open/link", "../run.sh");
	make_dir(f, "open/sub", 0755);
	make_link(f, "via", "open/sub");
	make_file(f, "open/sub/x.sh", 0755);
	expect_fail(
		f, "open/link", EPERM,
		"discovery script %1$s/open/link could be modified by another user: directory %1$s/open is world-writable without the sticky bit (mode 0777)",
		f->tmp);
	/* The directory a link leads through counts, not only the link. */
	expect_fail(
		f, "via/x.sh", EPERM,
		"discovery script %1$s/via/x.sh could be modified by another user: directory %1$s/open is world-writable without the sticky bit (mode 0777)",
		f->tmp);
}

static void test_symlink_to_untrusted(void **state)
{
	struct fixture *f = *state;

	make_file(f, "open.sh", 0757);
	make_link(f, "link", "open.sh");
	expect_fail(
		f, "link", EPERM,
		"discovery script %1$s/link (resolved to %1$s/open.sh) could be modified by another user: it is world-writable (mode 0757)",
		f->tmp);
}

static void test_symlink_owner(void **state)
{
	struct fixture *f = *state;

	skip_unless_root();
	make_file(f, "run.sh", 0755);
	make_dir(f, "tmp", 01777);
	make_link(f, "tmp/mine", "../run.sh");
	make_link(f, "tmp/theirs", "../run.sh");
	give_away(f, "tmp/theirs");
	expect_ok(f, "tmp/mine");
	expect_fail(
		f, "tmp/theirs", EPERM,
		"discovery script %1$s/tmp/theirs could be modified by another user: symlink %1$s/tmp/theirs is owned by uid 65534",
		f->tmp);
}

static void test_lookup_errors(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;

	make_file(f, "run.sh", 0755);
	make_link(f, "loop", "loop");
	make_link(f, "dangling", "nowhere");
	expect_fail(
		f, "missing.sh", ENOENT,
		"discovery script %1$s/missing.sh: No such file or directory",
		f->tmp);
	expect_fail(f, "dangling", ENOENT,
		    "discovery script %1$s/dangling: No such file or directory",
		    f->tmp);
	expect_fail(
		f, "no/such/dir", ENOENT,
		"discovery script %1$s/no/such/dir: No such file or directory",
		f->tmp);
	expect_fail(f, "run.sh/x", ENOTDIR,
		    "discovery script %1$s/run.sh/x: Not a directory", f->tmp);
	expect_fail(f, "run.sh/..", ENOTDIR,
		    "discovery script %1$s/run.sh/..: Not a directory", f->tmp);
	expect_fail(
		f, "loop", ELOOP,
		"discovery script %1$s/loop: Too many levels of symbolic links",
		f->tmp);

	assert_int_equal(extres_check_trusted("", "driver module", &err),
			 -EINVAL);
	assert_string_equal(err.msg, "driver module: empty path");
	assert_int_equal(extres_check_trusted(NULL, "driver module", &err),
			 -EINVAL);
	assert_string_equal(err.msg, "driver module: empty path");
}

static void test_long_path(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	char *path;
	size_t n = strlen(f->tmp);

	/* Past PATH_MAX before any lookup: refused, not cut short. */
	path = malloc(PATH_MAX + 16);
	assert_non_null(path);
	memcpy(path, f->tmp, n);
	memset(path + n, '/', PATH_MAX + 15 - n);
	path[PATH_MAX + 15] = '\0';
	assert_int_equal(extres_check_trusted(path, "x", &err), -ENAMETOOLONG);
	free(path);
}

/* err may be NULL: the result alone. */
static void test_null_err(void **state)
{
	struct fixture *f = *state;
	char path[256];

	make_file(f, "run.sh", 0755);
	make_file(f, "open.sh", 0757);
	assert_int_equal(
		extres_check_trusted(at(f, "run.sh", path, sizeof(path)), NULL,
				     NULL),
		0);
	assert_int_equal(
		extres_check_trusted(at(f, "open.sh", path, sizeof(path)), NULL,
				     NULL),
		-EPERM);
	assert_int_equal(extres_check_trusted(at(f, "none", path, sizeof(path)),
					      NULL, NULL),
			 -ENOENT);
}

/* The shared-file rule (coordination files): `rel` under the temp dir,
 * trusting `group` besides our own. */
static int shared_with(const struct fixture *f, const char *rel, gid_t group,
		       struct extres_err *err)
{
	char path[256];

	return extres_check_trusted_shared(at(f, rel, path, sizeof(path)),
					   "coordination file", group, err);
}

static int shared(const struct fixture *f, const char *rel,
		  struct extres_err *err)
{
	return shared_with(f, rel, EXTRES_NO_GROUP, err);
}

/* The hint a refusal of a file that group `gid` may write ends with. */
static void group_hint(gid_t gid, char *buf, size_t len)
{
	const struct group *gr = getgrgid(gid);
	int n;

	if (gr)
		n = snprintf(
			buf, len,
			"; if members of group %s may write coordination files, set extres.coordination-group: %s (see extres.yaml(5))",
			gr->gr_name, gr->gr_name);
	else
		n = snprintf(
			buf, len,
			"; if members of group %u may write coordination files, name that group in extres.coordination-group (see extres.yaml(5))",
			(unsigned)gid);
	assert_true(n > 0 && (size_t)n < len);
}

static void chgrp_to(const struct fixture *f, const char *rel, gid_t gid)
{
	char path[256];

	assert_int_equal(lchown(at(f, rel, path, sizeof(path)), (uid_t)-1, gid),
			 0);
}

/* Group-writable is fine for a shared file only when the group is ours. */
static void test_shared_group(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	char want[768], hint[256];

	make_dir(f, "ours", 0775);
	make_file(f, "ours/coord", 0664);
	chgrp_to(f, "ours", getegid());
	chgrp_to(f, "ours/coord", getegid());
	assert_int_equal(shared(f, "ours/coord", &err), 0);
	/* Scripts stay strict. */
	expect_fail(
		f, "ours/coord", EPERM,
		"discovery script %1$s/ours/coord could be modified by another user: directory %1$s/ours is group-writable without the sticky bit (mode 0775)",
		f->tmp);

	skip_unless_root();
	chgrp_to(f, "ours/coord", NOBODY);
	assert_int_equal(shared(f, "ours/coord", &err), -EPERM);
	group_hint(NOBODY, hint, sizeof(hint));
	snprintf(
		want, sizeof(want),
		"coordination file %s/ours/coord could be modified by another user: it is group-writable (mode 0664)%s",
		f->tmp, hint);
	assert_string_equal(err.msg, want);
}

/*
 * The group the config names (extres.coordination-group) is trusted like
 * one of ours, for a shared file and the directories above it, and for
 * nothing else: not a world-writable entry, not another user's, not a
 * script.
 */
static void test_shared_named_group(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	char want[768], hint[256];

	skip_unless_root();
	/* Root is in no group but its own; 65534 is not one of them. */
	make_dir(f, "dir", 0770);
	chgrp_to(f, "dir", NOBODY);
	make_file(f, "dir/coord", 0660);
	chgrp_to(f, "dir/coord", NOBODY);
	assert_int_equal(shared_with(f, "dir/coord", NOBODY, &err), 0);
	assert_int_equal(shared_with(f, "dir/missing", NOBODY, &err), 0);
	/* Not trusted without the setting, with a hint at it. */
	assert_int_equal(shared(f, "dir/coord", &err), -EPERM);
	group_hint(NOBODY, hint, sizeof(hint));
	snprintf(
		want, sizeof(want),
		"coordination file %1$s/dir/coord could be modified by another user: directory %1$s/dir is group-writable without the sticky bit (mode 0770)%2$s",
		f->tmp, hint);
	assert_string_equal(err.msg, want);
	/* Another group: refused. */
	assert_int_equal(shared_with(f, "dir/coord", NOBODY - 1, &err), -EPERM);
	assert_non_null(strstr(err.msg, hint));

	/* Trust in a group is no trust in the world or in another user. */
	make_file(f, "dir/open", 0666);
	chgrp_to(f, "dir/open", NOBODY);
	assert_int_equal(shared_with(f, "dir/open", NOBODY, &err), -EPERM);
	snprintf(
		want, sizeof(want),
		"coordination file %s/dir/open could be modified by another user: it is world-writable (mode 0666)",
		f->tmp);
	assert_string_equal(err.msg, want);
	make_file(f, "dir/theirs", 0660);
	give_away(f, "dir/theirs");
	assert_int_equal(shared_with(f, "dir/theirs", NOBODY, &err), -EPERM);
	snprintf(
		want, sizeof(want),
		"coordination file %s/dir/theirs could be modified by another user: it is owned by uid 65534 (mode 0660)",
		f->tmp);
	assert_string_equal(err.msg, want);
	/* Scripts stay strict, and their refusals name no setting. */
	make_file(f, "run.sh", 0775);
	chgrp_to(f, "run.sh", NOBODY);
	assert_int_equal(
		extres_check_trusted(at(f, "run.sh", want, sizeof(want)),
				     "discovery script", &err),
		-EPERM);
	assert_null(strstr(err.msg, "coordination-group"));
}

static void test_group_gid(void **state)
{
	const struct group *gr = getgrgid(0);
	gid_t gid = 4242;

	(void)state;
	assert_non_null(gr);
	assert_int_equal(extres_group_gid(gr->gr_name, &gid), 0);
	assert_int_equal(gid, 0);
	gid = 4242;
	assert_int_equal(extres_group_gid("no-such-group.extres", &gid),
			 -ENOENT);
	assert_int_equal(extres_group_gid("", &gid), -EINVAL);
	assert_int_equal(extres_group_gid(NULL, &gid), -EINVAL);
	/* Untouched on failure. */
	assert_int_equal(gid, 4242);
}

/* A file not made yet is judged by its directory. */
static void test_shared_missing(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	char want[512];

	make_dir(f, "mine", 0755);
	make_dir(f, "sticky", 01777);
	make_dir(f, "open", 0777);
	assert_int_equal(shared(f, "mine/coord", &err), 0);
	assert_int_equal(shared(f, "sticky/coord", &err), 0);
	assert_int_equal(shared(f, "open/coord", &err), -EPERM);
	snprintf(
		want, sizeof(want),
		"coordination file %1$s/open/coord could be modified by another user: directory %1$s/open is world-writable without the sticky bit (mode 0777)",
		f->tmp);
	assert_string_equal(err.msg, want);
	/* Only the last entry may be missing. */
	assert_int_equal(shared(f, "none/coord", &err), -ENOENT);
}

/* Another user's file in a sticky directory: made before we came. */
static void test_shared_foreign_file(void **state)
{
	struct fixture *f = *state;
	struct extres_err err;
	char want[512];

	skip_unless_root();
	make_dir(f, "sticky", 01777);
	make_file(f, "sticky/coord", 0666);
	give_away(f, "sticky/coord");
	assert_int_equal(shared(f, "sticky/coord", &err), -EPERM);
	snprintf(
		want, sizeof(want),
		"coordination file %s/sticky/coord could be modified by another user: it is owned by uid 65534 (mode 0666)",
		f->tmp);
	assert_string_equal(err.msg, want);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_trusted_file),
		T(test_relative_path),
		T(test_writable_file),
		T(test_file_owner),
		T(test_writable_dir),
		T(test_sticky_dir),
		T(test_sticky_dir_foreign_entry),
		T(test_dir_owner),
		T(test_ancestor),
		T(test_symlink_to_trusted),
		T(test_symlink_in_writable_dir),
		T(test_symlink_to_untrusted),
		T(test_symlink_owner),
		T(test_lookup_errors),
		T(test_long_path),
		T(test_null_err),
		T(test_shared_group),
		T(test_shared_missing),
		T(test_shared_foreign_file),
		T(test_shared_named_group),
		cmocka_unit_test(test_group_gid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
