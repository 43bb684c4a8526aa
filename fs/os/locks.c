/* SPDX-License-Identifier: MIT */
#include "os/locks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int extres_lock_proof_take(int fd, uint64_t base)
{
	struct flock l = {
		.l_type = F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)(base + (uint64_t)getpid()),
		.l_len = 1,
	};

	return fcntl(fd, F_SETLK, &l) < 0 ? -errno : 0;
}

int extres_lock_proof_on(int fd, pid_t pid, uint64_t base)
{
	struct flock l = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)(base + (uint64_t)pid),
		.l_len = 1,
	};

	/* A write lock would conflict with any lock on the byte: the
	 * kernel names its holder. */
	if (pid <= 0 || fcntl(fd, F_GETLK, &l) < 0)
		return 0;
	return l.l_type != F_UNLCK && l.l_pid == pid;
}

int extres_lock_proof_line(const char *line, pid_t pid, uint64_t base)
{
	char cls[16], mode[16], type[16], end[32];
	unsigned long long start, last;
	int holder, used = 0;

	/* "1: POSIX  ADVISORY  READ 1234 08:01:5678 2305843009213693952
	 * 2305843009213693952"; a waiter for a lock has "->" after the
	 * number and holds nothing. */
	if (strstr(line, "->") ||
	    sscanf(line, "%*d: %15s %15s %15s %d %*x:%*x:%*u %llu %31s%n", cls,
		   mode, type, &holder, &start, end, &used) != 6 ||
	    line[used] != '\0' || sscanf(end, "%llu", &last) != 1)
		return 0;
	return strcmp(cls, "POSIX") == 0 && strcmp(mode, "ADVISORY") == 0 &&
	       strcmp(type, "READ") == 0 && pid > 0 && holder == (int)pid &&
	       start == base + (uint64_t)pid && last == start;
}

int extres_lock_proof_anywhere(pid_t pid, uint64_t base)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = extres_lock_proof_line(line, pid, base);
	}
	fclose(f);
	return found;
}
