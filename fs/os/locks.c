/* SPDX-License-Identifier: MIT */
#include "os/locks.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>

int extres_lock_proof_line(const char *line, const struct extres_lock_proof *p)
{
	char cls[16], mode[16], type[16], end[32];
	unsigned maj, min;
	unsigned long long ino, start, last;
	int pid, used = 0;

	/* "1: POSIX  ADVISORY  READ 1234 08:01:5678 2305843009213693952
	 * 2305843009213693952"; a waiter for a lock has "->" after the
	 * number and holds nothing. */
	if (strstr(line, "->") ||
	    sscanf(line, "%*d: %15s %15s %15s %d %x:%x:%llu %llu %31s%n", cls,
		   mode, type, &pid, &maj, &min, &ino, &start, end,
		   &used) != 9 ||
	    line[used] != '\0')
		return 0;
	if (strcmp(cls, "POSIX") != 0 || strcmp(mode, "ADVISORY") != 0 ||
	    strcmp(type, "READ") != 0 || pid != (int)p->pid || p->pid <= 0)
		return 0;
	if (!p->any_file &&
	    (maj != major(p->dev) || min != minor(p->dev) ||
	     ino != (unsigned long long)p->ino))
		return 0;
	if (sscanf(end, "%llu", &last) != 1)
		return 0;
	return start == p->start && last == p->start;
}

int extres_lock_proof_held(const struct extres_lock_proof *p)
{
	char line[256];
	int found = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = extres_lock_proof_line(line, p);
	}
	fclose(f);
	return found;
}

int extres_lock_proof_take(int fd, uint64_t start)
{
	struct flock l = {
		.l_type = F_RDLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)start,
		.l_len = 1,
	};

	return fcntl(fd, F_SETLK, &l) < 0 ? -errno : 0;
}
