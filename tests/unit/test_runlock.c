/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/runlock.h"

static char tmpl[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpl, sizeof(tmpl), "/tmp/extres-runlock.XXXXXX");
	return mkdtemp(tmpl) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	return system(cmd) == 0 ? 0 : -1;
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;

	assert_true(asprintf(&s, "%s/%s", a, b) > 0);
	return s;
}

/* A user other than root: root itself stands in for one by chown(). */
static uid_t other_uid(void)
{
	return geteuid() == 0 ? 4242 : geteuid();
}

static void make_dir(const char *path, uid_t uid, mode_t mode)
{
	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chmod(path, mode), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(path, uid, (gid_t)-1), 0);
}

static void test_dir_xdg(void **state)
{
	uid_t uid = other_uid();
	char *xdg = join(tmpl, "xdg"), *sub = join(xdg, "extresd");
	char *elsewhere = join(tmpl, "elsewhere"), *dir = NULL;
	struct extres_err err;

	(void)state;
	assert_int_equal(extres_runlock_dir(uid, NULL, &dir, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "XDG_RUNTIME_DIR is not set"));
	assert_int_equal(extres_runlock_dir(uid, "", &dir, &err), -ENOENT);
	assert_int_equal(extres_runlock_dir(uid, "run/user", &dir, &err),
			 -EINVAL);
	assert_string_equal(err.msg,
			    "XDG_RUNTIME_DIR=run/user is not an absolute path");
	/* A missing $XDG_RUNTIME_DIR is not created. */
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), -ENOENT);
	assert_non_null(strstr(err.msg, xdg));

	make_dir(xdg, uid, 0700);
	if (geteuid() != 0) {
		/* Created as promised, whatever the umask. */
		mode_t old = umask(0077);

		assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), 0);
		umask(old);
		assert_string_equal(dir, sub);
		free(dir);
		dir = NULL;
		assert_int_equal(rmdir(sub), 0);
	}
	make_dir(sub, uid, 0700);
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), 0);
	assert_string_equal(dir, sub);
	free(dir);
	dir = NULL;

	/* Writable by others: the subdirectory, then $XDG_RUNTIME_DIR. */
	assert_int_equal(chmod(sub, 0770), 0);
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), -EPERM);
	assert_non_null(strstr(err.msg, sub));
	assert_non_null(
		strstr(err.msg, "writable by group or others (mode 0770)"));
	assert_int_equal(chmod(sub, 0700), 0);
	assert_int_equal(chmod(xdg, 0701 | S_IWOTH), 0);
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), -EPERM);
	assert_non_null(strstr(err.msg, "(mode 0703)"));
	assert_int_equal(chmod(xdg, 0700), 0);

	/* Owned by someone else. */
	if (geteuid() == 0) {
		assert_int_equal(chown(sub, uid + 1, (gid_t)-1), 0);
		assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err),
				 -EPERM);
		assert_non_null(
			strstr(err.msg, "is owned by uid 4243, not 4242"));
		assert_int_equal(chown(sub, uid, (gid_t)-1), 0);
	}

	/* A symlink, even to a good directory, and a file. */
	assert_int_equal(rmdir(sub), 0);
	make_dir(elsewhere, uid, 0700);
	assert_int_equal(symlink(elsewhere, sub), 0);
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), -ELOOP);
	assert_non_null(strstr(err.msg, "is a symbolic link"));
	assert_int_equal(unlink(sub), 0);
	assert_int_equal(close(open(sub, O_CREAT | O_WRONLY | O_CLOEXEC, 0600)),
			 0);
	assert_int_equal(extres_runlock_dir(uid, xdg, &dir, &err), -ENOTDIR);
	assert_null(dir);
	free(xdg);
	free(sub);
	free(elsewhere);
}

static char *read_text(const char *path)
{
	char buf[PATH_MAX + 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return strdup(buf);
}

static void test_try_release(void **state)
{
	struct extres_runlock a = { .fd = -1 }, b = { .fd = -1 },
			      c = { .fd = -1 };
	char *text, *long_key, *link;
	struct extres_err err;
	struct stat st;
	size_t len = PATH_MAX - 1;

	(void)state;
	assert_int_equal(extres_runlock_try(&a, tmpl, "/run/extres", &err), 0);
	/* Named by a hash, in the directory given; holding the key. */
	assert_int_equal(strncmp(a.path, tmpl, strlen(tmpl)), 0);
	assert_int_equal(strlen(a.path), strlen(tmpl) + 1 + 16 + 5);
	assert_string_equal(a.path + strlen(a.path) - 5, ".lock");
	text = read_text(a.path);
	assert_string_equal(text, "/run/extres\n");
	free(text);
	assert_int_equal(stat(a.path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* Programs the daemon runs never inherit it. */
	assert_true(fcntl(a.fd, F_GETFD) & FD_CLOEXEC);

	/* Taken: no message, nothing changed. */
	assert_int_equal(extres_runlock_try(&b, tmpl, "/run/extres", &err),
			 -EWOULDBLOCK);
	assert_int_equal(b.fd, -1);
	assert_null(b.path);
	/* Another key, another lock; one past NAME_MAX too. */
	assert_int_equal(extres_runlock_try(&b, tmpl, "/run/extres2", &err), 0);
	assert_string_not_equal(a.path, b.path);
	long_key = malloc(len + 1);
	assert_non_null(long_key);
	memset(long_key, 'x', len);
	long_key[0] = '/';
	long_key[len] = '\0';
	assert_int_equal(extres_runlock_try(&c, tmpl, long_key, &err), 0);
	text = read_text(c.path);
	assert_int_equal(strlen(text), len + 1);
	free(text);
	free(long_key);
	extres_runlock_release(&c);
	extres_runlock_release(&b);

	/* Released: the file is gone and the next one takes it. */
	link = strdup(a.path);
	extres_runlock_release(&a);
	assert_int_equal(a.fd, -1);
	assert_null(a.path);
	assert_int_equal(access(link, F_OK), -1);
	assert_int_equal(extres_runlock_try(&b, tmpl, "/run/extres", &err), 0);
	extres_runlock_release(&b);
	extres_runlock_release(&b);

	/* A symlink where the file goes is not followed. */
	assert_int_equal(symlink("/dev/null", link), 0);
	assert_int_equal(extres_runlock_try(&b, tmpl, "/run/extres", &err),
			 -ELOOP);
	assert_non_null(strstr(err.msg, link));
	assert_int_equal(b.fd, -1);
	assert_int_equal(unlink(link), 0);
	free(link);
}

/* As after daemonizing: the child shares the lock, which outlives the
 * parent's copy and goes with the child. */
static void test_fork(void **state)
{
	struct extres_runlock a = { .fd = -1 }, b = { .fd = -1 };
	struct extres_err err;
	int go[2], status;
	char c = 0;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(extres_runlock_try(&a, tmpl, "/mnt/x", &err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(2);
		_exit(0);
	}
	close(go[0]);
	/* The parent goes (its descriptor closed, the file kept). */
	close(a.fd);
	assert_int_equal(extres_runlock_try(&b, tmpl, "/mnt/x", &err),
			 -EWOULDBLOCK);
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(extres_runlock_try(&b, tmpl, "/mnt/x", &err), 0);
	extres_runlock_release(&b);
	free(a.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dir_xdg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_try_release, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fork, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
