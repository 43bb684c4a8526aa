/* SPDX-License-Identifier: MIT */
#include "proc_files.h"

#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "alloc/coord.h"

void tf_write_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(content);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

char *tf_read_file(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

int tf_coord_dir(const char *name, char dir[TF_DIR_LEN], char path[TF_PATH_LEN])
{
	int n = snprintf(dir, TF_DIR_LEN, "/tmp/extres-test-%s-XXXXXX", name);

	if (n < 0 || n >= TF_DIR_LEN || !mkdtemp(dir))
		return -1;
	snprintf(path, TF_PATH_LEN, "%s/coord", dir);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

int tf_remove_tree(const char *dir)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

uint64_t tf_starttime(pid_t pid)
{
	uint64_t st = 0;

	assert_int_equal(extres_proc_starttime(pid, &st), 0);
	return st;
}

pid_t tf_dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* waitid(WNOWAIT) returns once the child is a zombie and leaves it one. */
pid_t tf_zombie_pid(void)
{
	siginfo_t info;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	memset(&info, 0, sizeof(info));
	assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(info.si_pid, pid);
	return pid;
}

pid_t tf_live_pid(void)
{
	pid_t parent = getpid(), pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* The parent may be gone before the death signal is asked. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		for (;;)
			pause();
	}
	return pid;
}

void tf_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}
