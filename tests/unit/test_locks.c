/* SPDX-License-Identifier: MIT */
/* os/locks.c: proofs by POSIX read locks, one byte per PID. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/locks.h"

#define BASE (UINT64_C(1) << 61)

static void test_line(void **state)
{
	char line[160];

	(void)state;
	snprintf(line, sizeof(line),
		 "7: POSIX  ADVISORY  READ 1234 fe:00:10953385 %llu %llu",
		 (unsigned long long)(BASE + 1234),
		 (unsigned long long)(BASE + 1234));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 1);
	/* Another PID, another byte, another base. */
	assert_int_equal(extres_lock_proof_line(line, 1235, BASE), 0);
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE * 2), 0);
	/* Not a read lock, not POSIX, a range, a waiter, EOF. */
	snprintf(line, sizeof(line),
		 "7: POSIX  ADVISORY  WRITE 1234 fe:00:1 %llu %llu",
		 (unsigned long long)(BASE + 1234),
		 (unsigned long long)(BASE + 1234));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 0);
	snprintf(line, sizeof(line),
		 "7: OFDLCK ADVISORY  READ 1234 fe:00:1 %llu %llu",
		 (unsigned long long)(BASE + 1234),
		 (unsigned long long)(BASE + 1234));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 0);
	snprintf(line, sizeof(line),
		 "7: POSIX  ADVISORY  READ 1234 fe:00:1 %llu %llu",
		 (unsigned long long)(BASE + 1234),
		 (unsigned long long)(BASE + 1235));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 0);
	snprintf(line, sizeof(line),
		 "7: -> POSIX  ADVISORY  READ 1234 fe:00:1 %llu %llu",
		 (unsigned long long)(BASE + 1234),
		 (unsigned long long)(BASE + 1234));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 0);
	snprintf(line, sizeof(line),
		 "7: POSIX  ADVISORY  READ 1234 fe:00:1 %llu EOF",
		 (unsigned long long)(BASE + 1234));
	assert_int_equal(extres_lock_proof_line(line, 1234, BASE), 0);
}

/* A child's proof is seen by its parent, on the file and in /proc/locks;
 * gone with the child. */
static void test_take_and_check(void **state)
{
	char path[] = "/tmp/extres-locks-XXXXXX", c;
	int fd = mkstemp(path), p[2];
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int own = open(path, O_RDONLY);

		close(p[0]);
		if (own < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
		    extres_lock_proof_take(own, BASE) < 0 ||
		    write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	assert_int_equal(extres_lock_proof_on(fd, pid, BASE), 1);
	assert_int_equal(extres_lock_proof_on(fd, pid, BASE * 2), 0);
	assert_int_equal(extres_lock_proof_on(fd, 1, BASE), 0);
	assert_int_equal(extres_lock_proof_anywhere(pid, BASE), 1);
	assert_int_equal(extres_lock_proof_anywhere(1, BASE), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(extres_lock_proof_on(fd, pid, BASE), 0);
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_take_and_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
