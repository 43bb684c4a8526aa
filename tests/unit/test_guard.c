/* SPDX-License-Identifier: MIT */
/*
 * The coordination-file guard (daemon/guard.h) on a file in a temp dir: it
 * must tell our own writes from anyone else's by what the file holds, not
 * by its times, which a coarse clock leaves as they were.
 */
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
#include <unistd.h>

#include <cmocka.h>

#include "base/file_state.h"
#include "daemon/guard.h"
#include "proc_files.h"

#define OURS "0 100\t5000\n1 100\t5000\n"
#define THEIRS "0 200\t5000\n1 100\t5000\n"

struct fixture {
	char dir[TF_DIR_LEN];
	char path[TF_PATH_LEN];
	struct extres_guard g;
};

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	const char *files[1];
	struct extres_err err;

	if (!x || tf_coord_dir("guard", x->dir, x->path) < 0)
		return -1;
	files[0] = x->path;
	if (extres_guard_open(&x->g, &err) < 0 ||
	    extres_guard_watch(&x->g, files, 1, &err) < 0)
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;
	int r;

	extres_guard_close(&x->g);
	r = tf_remove_tree(x->dir);
	free(x);
	return r;
}

/* The file as it is now. */
static void take(struct fixture *x, struct extres_file_state *s)
{
	int fd = open(x->path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(extres_file_state_take(fd, 1 << 20, s), 0);
	close(fd);
}

/* Write `text` as the daemon does, and tell the guard so. */
static void write_ours(struct fixture *x, const char *text,
		       struct extres_file_state *ret)
{
	tf_write_file(x->path, text);
	take(x, ret);
	extres_guard_seen(&x->g, x->path, ret);
}

/* The events of our own write wake nothing. */
static void test_own_write(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state ours = { 0 };

	write_ours(x, OURS, &ours);
	assert_int_equal(extres_guard_changed(&x->g), 0);
	assert_int_equal(extres_guard_known(&x->g, x->path, &ours), 1);
	extres_file_state_clear(&ours);
}

/* Someone rewrites the file in place with as many bytes, within the clock
 * tick of our write: stat() finds it as we left it (told so here, as a
 * coarse clock leaves it on any file system). A change all the same. */
static void test_same_length_rewrite(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state ours = { 0 }, now = { 0 };

	write_ours(x, OURS, &ours);
	assert_int_equal(extres_guard_changed(&x->g), 0);
	tf_write_file(x->path, THEIRS);
	take(x, &now);
	assert_int_equal(now.len, ours.len);
	ours.st = now.st;
	extres_guard_seen(&x->g, x->path, &ours);
	assert_int_equal(extres_guard_known(&x->g, x->path, &now), 0);
	assert_int_equal(extres_guard_changed(&x->g), 1);
	extres_file_state_clear(&ours);
	extres_file_state_clear(&now);
}

/* New times alone change nothing that matters; a new mode does, and so
 * does the same content in another file renamed over ours. */
static void test_times_mode_inode(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state ours = { 0 };
	struct timespec times[2] = { { .tv_sec = 1 }, { .tv_sec = 1 } };
	char other[TF_PATH_LEN + 8];

	write_ours(x, OURS, &ours);
	assert_int_equal(extres_guard_changed(&x->g), 0);
	assert_int_equal(utimensat(AT_FDCWD, x->path, times, 0), 0);
	assert_int_equal(extres_guard_changed(&x->g), 0);

	assert_int_equal(chmod(x->path, 0600), 0);
	assert_int_equal(extres_guard_changed(&x->g), 1);
	extres_file_state_clear(&ours);
	write_ours(x, OURS, &ours);
	assert_int_equal(extres_guard_changed(&x->g), 0);

	snprintf(other, sizeof(other), "%s.new", x->path);
	tf_write_file(other, OURS);
	assert_int_equal(chmod(other, ours.st.st_mode & 07777), 0);
	assert_int_equal(rename(other, x->path), 0);
	assert_int_equal(extres_guard_changed(&x->g), 1);
	extres_file_state_clear(&ours);
}

/* A file the guard does not watch is not its business. */
static void test_not_watched(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state ours = { 0 };

	write_ours(x, OURS, &ours);
	extres_guard_seen(&x->g, "/nonexistent/coord", &ours);
	assert_int_equal(extres_guard_known(&x->g, "/nonexistent/coord", &ours),
			 1);
	extres_file_state_clear(&ours);
}

/* A state is read from the start without moving the descriptor's offset,
 * up to a limit; an empty one is the same as nothing. */
static void test_file_state(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state a = { 0 }, b = { 0 };
	int fd;

	tf_write_file(x->path, OURS);
	fd = open(x->path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(lseek(fd, 3, SEEK_SET), 3);
	assert_int_equal(extres_file_state_take(fd, strlen(OURS) - 1, &a),
			 -EFBIG);
	assert_null(a.data);
	assert_int_equal(extres_file_state_take(fd, strlen(OURS), &a), 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 3);
	assert_int_equal(a.len, strlen(OURS));
	assert_string_equal(a.data, OURS);
	assert_int_equal(extres_file_state_copy(&a, &b), 0);
	assert_int_equal(extres_file_state_same(&a, &b), 1);
	b.data[0] = '9';
	assert_int_equal(extres_file_state_same(&a, &b), 0);
	extres_file_state_clear(&b);
	assert_int_equal(extres_file_state_same(&a, &b), 0);
	assert_int_equal(extres_file_state_same(&b, &b), 0);
	extres_file_state_clear(&a);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_own_write, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_same_length_rewrite, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_times_mode_inode, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_watched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_state, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
