/* SPDX-License-Identifier: MIT */
/* base/fileio.c's bounded reads to the end of a file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"

/* A pipe holding `n` bytes of 'x'; its read end in fds[0]. */
static void filled_pipe(int fds[2], size_t n)
{
	char buf[256];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(pipe(fds), 0);
	assert_true(n <= sizeof(buf));
	assert_int_equal(write(fds[1], buf, n), (ssize_t)n);
	close(fds[1]);
}

/* Past `max`, the read stops one byte after it: a file another writer
 * keeps growing is not read on (the rest stays in the pipe). */
static void test_past_max(void **state)
{
	char *buf = NULL, rest[256];
	size_t len = 0;
	int fds[2];

	filled_pipe(fds, 200);
	assert_int_equal(extres_read_all(fds[0], 10, &buf, &len), -EFBIG);
	assert_null(buf);
	assert_int_equal(read(fds[0], rest, sizeof(rest)), 200 - 11);
	close(fds[0]);
}

/* Up to `max` bytes, and no bound at all, read everything. */
static void test_whole(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	int fds[2];

	filled_pipe(fds, 200);
	assert_int_equal(extres_read_all(fds[0], 200, &buf, &len), 0);
	assert_int_equal(len, 200);
	assert_int_equal(buf[len], '\0');
	free(buf);
	close(fds[0]);

	filled_pipe(fds, 3);
	assert_int_equal(extres_read_all(fds[0], SIZE_MAX, &buf, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(buf, "xxx", 3);
	free(buf);
	close(fds[0]);
}

/* pread() from 0: the whole file whatever the offset, which stays. */
static void test_pread_keeps_offset(void **state)
{
	char path[] = "/tmp/extres-fileio.XXXXXX", *buf = NULL;
	size_t len = 0;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, "0 123\n", 6), 6);
	assert_int_equal(lseek(fd, 2, SEEK_SET), 2);
	assert_int_equal(extres_pread_all(fd, 64, &buf, &len), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(buf, "0 123\n", 6);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 2);
	free(buf);
	assert_int_equal(extres_pread_all(fd, 5, &buf, &len), -EFBIG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_past_max),
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_pread_keeps_offset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
