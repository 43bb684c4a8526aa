/* SPDX-License-Identifier: MIT */
/* Listing and garbage-collecting a coordination file (coord_gc.c): real
 * files in a mkdtemp directory, real processes for every owner state. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc_files.h"

#include "alloc/coord_gc.h"

#define REFUSE "; refusing to use it as a coordination file"
/* An unlikely pointer, to see that out-parameters stay untouched. */
#define SENTINEL ((struct extres_coord_item *)(uintptr_t)0x5e5e)

struct fixture {
	char dir[TF_DIR_LEN];
	char path[TF_PATH_LEN]; /* dir/coord, not created */
	pid_t zombie; /* exited, not reaped until teardown; 0 when none */
	char lines[8][128];
	char content[1024]; /* every line of `lines`, in order */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || tf_coord_dir("coord-gc", f->dir, f->path) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = tf_remove_tree(f->dir);

	if (f->zombie > 0 && waitpid(f->zombie, NULL, 0) != f->zombie)
		r = -1;
	free(f);
	return r;
}

/* Back-date the file so that any write would show in its mtime. */
static void backdate(const char *path, struct stat *ret)
{
	const struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, path, old, AT_SYMLINK_NOFOLLOW),
			 0);
	assert_int_equal(lstat(path, ret), 0);
}

static void assert_untouched(const char *path, const struct stat *before,
			     const char *content)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_ino, before->st_ino);
	assert_int_equal(st.st_mtim.tv_sec, before->st_mtim.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, before->st_mtim.tv_nsec);
	assert_int_equal(st.st_ctim.tv_sec, before->st_ctim.tv_sec);
	assert_int_equal(st.st_ctim.tv_nsec, before->st_ctim.tv_nsec);
	assert_string_equal(tf_read_file(path), content);
}

/*
 * The file the tests start from, one line per owner state: live (our PID
 * and start time), dead, reused (our PID, a wrong start time), zombie,
 * Flink's two fields (our PID), garbage with a tab and a control byte, and
 * a dead owner in two fields.
 */
enum {
	L_LIVE,
	L_DEAD,
	L_REUSED,
	L_ZOMBIE,
	L_FLINK,
	L_GARBAGE,
	L_DEAD2,
	N_LINES
};

static void write_mixed(struct fixture *f)
{
	pid_t me = getpid(), dead = tf_dead_pid();
	uint64_t st = tf_starttime(me);
	size_t i;

	f->zombie = tf_zombie_pid();
	snprintf(f->lines[L_LIVE], sizeof(f->lines[0]), "0 %d %" PRIu64,
		 (int)me, st);
	snprintf(f->lines[L_DEAD], sizeof(f->lines[0]), "1 %d %" PRIu64,
		 (int)dead, st);
	snprintf(f->lines[L_REUSED], sizeof(f->lines[0]), "2 %d %" PRIu64,
		 (int)me, st + 1);
	snprintf(f->lines[L_ZOMBIE], sizeof(f->lines[0]), "3 %d %" PRIu64,
		 (int)f->zombie, tf_starttime(f->zombie));
	snprintf(f->lines[L_FLINK], sizeof(f->lines[0]), "4 %d", (int)me);
	snprintf(f->lines[L_GARBAGE], sizeof(f->lines[0]),
		 "not\ta coordination \x01line");
	snprintf(f->lines[L_DEAD2], sizeof(f->lines[0]), "5 %d", (int)dead);
	f->content[0] = '\0';
	for (i = 0; i < N_LINES; i++) {
		strcat(f->content, f->lines[i]);
		strcat(f->content, "\n");
	}
	tf_write_file(f->path, f->content);
}

static void assert_item(const struct extres_coord_item *it, const char *line,
			int state)
{
	assert_string_equal(it->entry.line, line);
	assert_int_equal(it->entry.line_len, strlen(line));
	assert_int_equal(it->state, state);
}

/* What gc must remove from the mixed file, in file order. */
static void assert_removed_mixed(const struct fixture *f,
				 const struct extres_coord_item *removed,
				 size_t n)
{
	assert_int_equal(n, 4);
	assert_item(&removed[0], f->lines[L_DEAD], EXTRES_OWNER_DEAD);
	assert_item(&removed[1], f->lines[L_REUSED], EXTRES_OWNER_REUSED);
	assert_item(&removed[2], f->lines[L_ZOMBIE], EXTRES_OWNER_ZOMBIE);
	assert_item(&removed[3], f->lines[L_DEAD2], EXTRES_OWNER_DEAD);
	assert_string_equal(removed[0].entry.key, "1");
	assert_int_equal(removed[0].entry.has_starttime, 1);
	assert_string_equal(removed[3].entry.key, "5");
	assert_int_equal(removed[3].entry.has_starttime, 0);
}

static void test_list_states(void **state)
{
	struct fixture *f = *state;
	struct extres_coord_item *items = NULL;
	struct extres_err err;
	struct stat before;
	size_t n = 0;

	write_mixed(f);
	backdate(f->path, &before);
	assert_int_equal(extres_coord_list(f->path, 10000, EXTRES_NO_GROUP,
					   &items, &n, &err),
			 0);
	assert_int_equal(n, N_LINES);
	assert_item(&items[0], f->lines[L_LIVE], EXTRES_OWNER_LIVE);
	assert_item(&items[1], f->lines[L_DEAD], EXTRES_OWNER_DEAD);
	assert_item(&items[2], f->lines[L_REUSED], EXTRES_OWNER_REUSED);
	assert_item(&items[3], f->lines[L_ZOMBIE], EXTRES_OWNER_ZOMBIE);
	assert_item(&items[4], f->lines[L_FLINK], EXTRES_OWNER_LIVE);
	assert_item(&items[5], f->lines[L_GARBAGE], EXTRES_OWNER_UNPARSABLE);
	assert_item(&items[6], f->lines[L_DEAD2], EXTRES_OWNER_DEAD);
	assert_int_equal(items[0].entry.pid, getpid());
	assert_int_equal(items[4].entry.has_starttime, 0);
	assert_int_equal(items[5].entry.parsed, 0);
	assert_untouched(f->path, &before, f->content);
	extres_coord_items_free(items, n);
}

static void test_list_empty(void **state)
{
	struct fixture *f = *state;
	struct extres_coord_item *items = SENTINEL;
	struct extres_err err;
	struct stat before;
	size_t n = 99;

	tf_write_file(f->path, "");
	backdate(f->path, &before);
	assert_int_equal(extres_coord_list(f->path, 10000, EXTRES_NO_GROUP,
					   &items, &n, &err),
			 0);
	assert_null(items);
	assert_int_equal(n, 0);
	assert_untouched(f->path, &before, "");
}

static void test_gc_removes_gone_owners(void **state)
{
	struct fixture *f = *state;
	struct extres_coord_item *removed = NULL;
	struct extres_err err;
	struct stat before, after;
	size_t n = 0, kept = 0;
	char want[1024];

	write_mixed(f);
	assert_int_equal(lstat(f->path, &before), 0);
	assert_int_equal(extres_coord_gc(f->path, 0, 10000, EXTRES_NO_GROUP,
					 &removed, &n, &kept, &err),
			 0);
	assert_removed_mixed(f, removed, n);
	assert_int_equal(kept, 3);
	snprintf(want, sizeof(want), "%s\n%s\n%s\n", f->lines[L_LIVE],
		 f->lines[L_FLINK], f->lines[L_GARBAGE]);
	assert_string_equal(tf_read_file(f->path), want);
	assert_int_equal(lstat(f->path, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_dev, before.st_dev);
	assert_int_equal(after.st_mode & 07777, 0644);
	extres_coord_items_free(removed, n);

	/* A second pass finds nothing more and writes nothing. */
	backdate(f->path, &before);
	assert_int_equal(extres_coord_gc(f->path, 0, 10000, EXTRES_NO_GROUP,
					 &removed, &n, &kept, &err),
			 0);
	assert_null(removed);
	assert_int_equal(n, 0);
	assert_int_equal(kept, 3);
	assert_untouched(f->path, &before, want);
}

static void test_gc_dry_run(void **state)
{
	struct fixture *f = *state;
	struct extres_coord_item *removed = NULL;
	struct extres_err err;
	struct stat before;
	size_t n = 0, kept = 0;

	write_mixed(f);
	backdate(f->path, &before);
	assert_int_equal(extres_coord_gc(f->path, 1, 10000, EXTRES_NO_GROUP,
					 &removed, &n, &kept, &err),
			 0);
	assert_removed_mixed(f, removed, n);
	assert_int_equal(kept, 3);
	assert_untouched(f->path, &before, f->content);
	extres_coord_items_free(removed, n);
}

/* Blank lines are not entries: they go when the file is rewritten. */
static void test_gc_blank_lines(void **state)
{
	struct fixture *f = *state;
	struct extres_coord_item *removed = NULL;
	struct extres_err err;
	size_t n = 0, kept = 0;
	char content[256], want[256];
	pid_t me = getpid(), dead = tf_dead_pid();

	snprintf(content, sizeof(content), "\n7 %d\n  \n8 %d\n", (int)me,
		 (int)dead);
	snprintf(want, sizeof(want), "7 %d\n", (int)me);
	tf_write_file(f->path, content);
	assert_int_equal(extres_coord_gc(f->path, 0, 10000, EXTRES_NO_GROUP,
					 &removed, &n, &kept, &err),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(kept, 1);
	assert_string_equal(removed[0].entry.key, "8");
	assert_string_equal(tf_read_file(f->path), want);
	extres_coord_items_free(removed, n);
}

static void assert_both_fail(const char *path, int errnum, const char *msg)
{
	struct extres_coord_item *items = SENTINEL;
	struct extres_err err;
	size_t n = 42, kept = 43;

	memset(&err, 0, sizeof(err));
	assert_int_equal(extres_coord_list(path, 10000, EXTRES_NO_GROUP, &items,
					   &n, &err),
			 -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(items, SENTINEL);
	assert_int_equal(n, 42);

	memset(&err, 0, sizeof(err));
	assert_int_equal(extres_coord_gc(path, 0, 10000, EXTRES_NO_GROUP,
					 &items, &n, &kept, &err),
			 -errnum);
	assert_string_equal(err.msg, msg);
	memset(&err, 0, sizeof(err));
	assert_int_equal(extres_coord_gc(path, 1, 10000, EXTRES_NO_GROUP,
					 &items, &n, &kept, &err),
			 -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(items, SENTINEL);
	assert_int_equal(n, 42);
	assert_int_equal(kept, 43);
}

/* Neither creates a missing file, unlike an allocator. */
static void test_missing(void **state)
{
	struct fixture *f = *state;
	struct stat st;
	char path[256], msg[512];

	snprintf(msg, sizeof(msg), "%s: No such file or directory", f->path);
	assert_both_fail(f->path, ENOENT, msg);
	assert_int_equal(lstat(f->path, &st), -1);
	assert_int_equal(errno, ENOENT);

	snprintf(path, sizeof(path), "%s/no-dir/coord", f->dir);
	snprintf(msg, sizeof(msg), "%s: No such file or directory", path);
	assert_both_fail(path, ENOENT, msg);
}

/* A symlink is refused, never followed: the target (full of dead owners)
 * stays as it was, and a dangling one does not create its target. */
static void test_refuse_symlink(void **state)
{
	struct fixture *f = *state;
	struct stat before, st;
	char target[256], dangling[256], msg[512];

	write_mixed(f);
	snprintf(target, sizeof(target), "%s/link", f->dir);
	assert_int_equal(symlink(f->path, target), 0);
	backdate(f->path, &before);
	snprintf(msg, sizeof(msg), "%s is a symbolic link" REFUSE, target);
	assert_both_fail(target, ELOOP, msg);
	assert_untouched(f->path, &before, f->content);

	snprintf(target, sizeof(target), "%s/nowhere", f->dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", f->dir);
	assert_int_equal(symlink(target, dangling), 0);
	snprintf(msg, sizeof(msg), "%s is a symbolic link" REFUSE, dangling);
	assert_both_fail(dangling, ELOOP, msg);
	assert_int_equal(lstat(target, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* A FIFO is refused without being opened, so nothing blocks. */
static void test_refuse_fifo(void **state)
{
	struct fixture *f = *state;
	char msg[512];

	assert_int_equal(mkfifo(f->path, 0644), 0);
	snprintf(msg, sizeof(msg), "%s is a FIFO" REFUSE, f->path);
	assert_both_fail(f->path, EINVAL, msg);
}

static void test_refuse_directory(void **state)
{
	struct fixture *f = *state;
	char msg[512];

	snprintf(msg, sizeof(msg), "%s is a directory" REFUSE, f->dir);
	assert_both_fail(f->dir, EINVAL, msg);
}

static void test_refuse_hardlink(void **state)
{
	struct fixture *f = *state;
	struct stat before;
	char other[256], msg[512];

	write_mixed(f);
	snprintf(other, sizeof(other), "%s/other", f->dir);
	assert_int_equal(link(f->path, other), 0);
	backdate(f->path, &before);
	snprintf(msg, sizeof(msg), "%s has 2 hard links" REFUSE, f->path);
	assert_both_fail(f->path, EMLINK, msg);
	assert_untouched(f->path, &before, f->content);
}

static void test_items_free_null(void **state)
{
	extres_coord_items_free(NULL, 0);
	extres_coord_items_free(NULL, 3);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_list_states),
		T(test_list_empty),
		T(test_gc_removes_gone_owners),
		T(test_gc_dry_run),
		T(test_gc_blank_lines),
		T(test_missing),
		T(test_refuse_symlink),
		T(test_refuse_fifo),
		T(test_refuse_directory),
		T(test_refuse_hardlink),
		cmocka_unit_test(test_items_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
