/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mountpoint.h"

static const char MOUNTINFO[] =
	"22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"30 22 0:25 / /run rw,nosuid shared:5 - tmpfs tmpfs rw\n"
	"41 30 0:40 / /run/extres ro,nosuid,nodev shared:9 - fuse.extresd extres rw,user_id=0\n"
	"42 30 0:41 / /run/with\\040space ro - fuse.extresd extres rw\n"
	"43 41 0:42 / /run/extres rw - tmpfs none rw\n"
	"44 30 0:43 / /run/opt ro shared:2 master:3 - fuse.extresd extres rw\n"
	"garbage line\n";

static void test_lookup(void **state)
{
	char *fstype = NULL;

	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run", &fstype), 1);
	assert_string_equal(fstype, "tmpfs");
	free(fstype);
	/* The topmost (last) mount wins. */
	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run/extres", &fstype), 1);
	assert_string_equal(fstype, "tmpfs");
	free(fstype);
	/* Octal escapes are decoded. */
	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run/with space", &fstype), 1);
	assert_string_equal(fstype, "fuse.extresd");
	free(fstype);
	/* Several optional fields before the separator. */
	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run/opt", &fstype), 1);
	assert_string_equal(fstype, "fuse.extresd");
	free(fstype);
	fstype = NULL;
	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run/ext", &fstype), 0);
	assert_null(fstype);
	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run/with\\040space", &fstype), 0);
	assert_int_equal(extres_mountinfo_lookup("", "/", &fstype), 0);
}

static void test_prepare(void **state)
{
	char tmpl[] = "/tmp/extres-mp.XXXXXX", path[600], file[256];
	struct extres_err err;
	char *abs = NULL;
	int detached = -1;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	/* create: missing directories are made, the result is absolute. */
	snprintf(path, sizeof(path), "%s/a/b/../c", tmpl);
	assert_int_equal(extres_mountpoint_prepare(path, 1, &abs, &detached, &err), 0);
	snprintf(path, sizeof(path), "%s/a/c", tmpl);
	assert_string_equal(abs, path);
	assert_int_equal(detached, 0);
	free(abs);
	abs = NULL;
	/* Without create, a missing path is an error naming it. */
	snprintf(path, sizeof(path), "%s/missing", tmpl);
	assert_int_equal(extres_mountpoint_prepare(path, 0, &abs, &detached, &err), -ENOENT);
	assert_non_null(strstr(err.msg, path));
	assert_null(abs);
	/* A file is not a mount point. */
	snprintf(file, sizeof(file), "%s/file", tmpl);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(extres_mountpoint_prepare(file, 0, &abs, &detached, &err), -ENOTDIR);
	snprintf(path, sizeof(path), "mount point %s is not a directory", file);
	assert_string_equal(err.msg, path);
	/* Something else mounted there is refused: "/" always is one. */
	assert_int_equal(extres_mountpoint_prepare("/", 0, &abs, &detached, &err), -EBUSY);
	assert_non_null(strstr(err.msg, "/ is already a mount point ("));
	assert_non_null(strstr(err.msg, "refusing to mount over it"));
	unlink(file);
	snprintf(path, sizeof(path), "%s/a/c", tmpl);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a/b", tmpl);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", tmpl);
	rmdir(path);
	rmdir(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_prepare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
