/* SPDX-License-Identifier: MIT */
#include "daemon/owner.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/coord.h"

int extres_owner_parse(const char *arg, pid_t *ret, struct extres_err *err)
{
	struct extres_coord_entry owner = { .parsed = 1 };
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v == 0 || v > INT_MAX)
		return extres_err_set(err, EINVAL,
				      "--owner-pid: '%s' is not a process ID",
				      arg);
	/* A zombie or a dying process is an owner that every allocator
	 * counts as gone: recorded, its devices would go to the next comer
	 * while we serve them. So the same rule decides, through the same
	 * code. */
	owner.pid = (pid_t)v;
	if (extres_coord_owner_state(&owner) != EXTRES_OWNER_LIVE)
		return extres_err_set(err, ESRCH,
				      "--owner-pid: no process %llu", v);
	*ret = (pid_t)v;
	return 0;
}

int extres_owner_open(pid_t pid, int *ret_fd, struct extres_err *err)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		return extres_err_set(err, errno,
				      "--owner-pid %d: pidfd_open: %s",
				      (int)pid, strerror(errno));
	/* pidfd_open sets close-on-exec itself. */
	*ret_fd = fd;
	return 0;
}
