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

#include "os/mountpoint.h"

static const char MOUNTINFO[] =
	"22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	"30 22 0:25 / /run rw,nosuid shared:5 - tmpfs tmpfs rw\n"
	"41 30 0:40 / /run/extres ro,nosuid,nodev shared:9 - fuse.extresd extres rw,user_id=0\n"
	"42 30 0:41 / /run/with\\040space ro - fuse.extresd extres rw\n"
	"43 41 0:42 / /run/extres rw - tmpfs none rw\n"
	"44 30 0:43 / /run/opt ro shared:2 master:3 - fuse.extresd extres rw\n"
	"45 30 0:44 / /run/user1 ro - fuse.extresd extres rw,user_id=1000,group_id=1000\n"
	"46 30 0:45 / /run/odd ro - fuse.extresd extres rw,user_id=x\n"
	/* Mounted beneath 47, whose parent it became: listed after it. */
	"47 48 0:46 / /run/beneath ro - fuse.extresd dead rw\n"
	"48 30 0:47 / /run/beneath ro - tmpfs new rw\n"
	"garbage line\n";

static void test_lookup_owner(void **state)
{
	char *fstype = NULL;
	long owner = 7;

	(void)state;
	assert_int_equal(extres_mountinfo_lookup_owner(MOUNTINFO, "/run/user1",
						       &fstype, &owner),
			 1);
	assert_int_equal(owner, 1000);
	free(fstype);
	/* The topmost mount's owner: the tmpfs on top has none. */
	assert_int_equal(extres_mountinfo_lookup_owner(MOUNTINFO, "/run/extres",
						       &fstype, &owner),
			 1);
	assert_int_equal(owner, -1);
	free(fstype);
	assert_int_equal(extres_mountinfo_lookup_owner(MOUNTINFO, "/run/odd",
						       &fstype, &owner),
			 1);
	assert_int_equal(owner, -1);
	free(fstype);
	assert_int_equal(extres_mountinfo_lookup_owner(MOUNTINFO, "/run/none",
						       &fstype, &owner),
			 0);
}

static void test_lookup(void **state)
{
	char *fstype = NULL;

	assert_int_equal(extres_mountinfo_lookup(MOUNTINFO, "/run", &fstype),
			 1);
	assert_string_equal(fstype, "tmpfs");
	free(fstype);
	/* The topmost mount wins: the one no other is mounted on, whether
	 * listed later or (mounted beneath it) earlier. */
	assert_int_equal(
		extres_mountinfo_lookup(MOUNTINFO, "/run/extres", &fstype), 1);
	assert_string_equal(fstype, "tmpfs");
	free(fstype);
	assert_int_equal(
		extres_mountinfo_lookup(MOUNTINFO, "/run/beneath", &fstype), 1);
	assert_string_equal(fstype, "fuse.extresd");
	free(fstype);
	/* Octal escapes are decoded. */
	assert_int_equal(
		extres_mountinfo_lookup(MOUNTINFO, "/run/with space", &fstype),
		1);
	assert_string_equal(fstype, "fuse.extresd");
	free(fstype);
	/* Several optional fields before the separator. */
	assert_int_equal(
		extres_mountinfo_lookup(MOUNTINFO, "/run/opt", &fstype), 1);
	assert_string_equal(fstype, "fuse.extresd");
	free(fstype);
	fstype = NULL;
	assert_int_equal(
		extres_mountinfo_lookup(MOUNTINFO, "/run/ext", &fstype), 0);
	assert_null(fstype);
	assert_int_equal(extres_mountinfo_lookup(
				 MOUNTINFO, "/run/with\\040space", &fstype),
			 0);
	assert_int_equal(extres_mountinfo_lookup("", "/", &fstype), 0);
}

static void test_prepare(void **state)
{
	char tmpl[] = "/tmp/extres-mp.XXXXXX", path[600], file[256];
	struct extres_err err;
	char *abs = NULL;
	int dead = -1;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	/* create: missing directories are made, the result is absolute. */
	snprintf(path, sizeof(path), "%s/a/b/../c", tmpl);
	assert_int_equal(extres_mountpoint_resolve(path, 1, &abs, &err), 0);
	snprintf(path, sizeof(path), "%s/a/c", tmpl);
	assert_string_equal(abs, path);
	assert_int_equal(extres_mountpoint_prepare(abs, NULL, &dead, &err), 0);
	assert_int_equal(dead, 0);
	free(abs);
	abs = NULL;
	/* Without create, a missing path is an error naming it. */
	snprintf(path, sizeof(path), "%s/missing", tmpl);
	assert_int_equal(extres_mountpoint_resolve(path, 0, &abs, &err),
			 -ENOENT);
	assert_non_null(strstr(err.msg, path));
	assert_null(abs);
	/* A file is not a mount point. */
	snprintf(file, sizeof(file), "%s/file", tmpl);
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(extres_mountpoint_prepare(file, NULL, &dead, &err),
			 -ENOTDIR);
	snprintf(path, sizeof(path), "mount point %s is not a directory", file);
	assert_string_equal(err.msg, path);
	/* Something else mounted there is refused: "/" always is one. */
	assert_int_equal(extres_mountpoint_prepare("/", NULL, &dead, &err),
			 -EBUSY);
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

static int stop_calls;

static int stop_now(void)
{
	stop_calls++;
	return 1;
}

/* The lock of one mount point is taken once; a second taker waits while
 * nothing is mounted, gives up with the "already served" error, and stops
 * waiting when asked to. */
static void test_lock(void **state)
{
	char tmpl[] = "/tmp/extres-lock.XXXXXX", mnt[] = "/tmp/extres-lock-mnt";
	struct extres_runlock a = { .fd = -1 }, b = { .fd = -1 },
			      c = { .fd = -1 };
	struct extres_err err;

	assert_non_null(mkdtemp(tmpl));
	assert_int_equal(extres_mountpoint_lock(mnt, tmpl, 0, NULL, &a, &err),
			 0);
	assert_true(a.fd >= 0);
	assert_int_equal(extres_mountpoint_lock(mnt, tmpl, 60, NULL, &b, &err),
			 -EBUSY);
	assert_string_equal(
		err.msg,
		"/tmp/extres-lock-mnt is already served by a running extresd");
	assert_int_equal(b.fd, -1);
	stop_calls = 0;
	assert_int_equal(
		extres_mountpoint_lock(mnt, tmpl, 1000, stop_now, &b, &err),
		-EINTR);
	assert_int_equal(stop_calls, 1);
	assert_int_equal(b.fd, -1);
	/* Something else mounted there ends no wait: "/" is taken the same
	 * way and given up on once the wait is spent. */
	assert_int_equal(extres_mountpoint_lock("/", tmpl, 0, NULL, &b, &err),
			 0);
	assert_int_equal(extres_mountpoint_lock("/", tmpl, 40, NULL, &c, &err),
			 -EBUSY);
	assert_int_equal(c.fd, -1);
	extres_runlock_release(&b);
	extres_runlock_release(&a);
	assert_int_equal(extres_mountpoint_lock(mnt, tmpl, 0, NULL, &b, &err),
			 0);
	extres_runlock_release(&b);
	assert_int_equal(rmdir(tmpl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_owner),
		cmocka_unit_test(test_prepare),
		cmocka_unit_test(test_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
