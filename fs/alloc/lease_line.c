/* SPDX-License-Identifier: MIT */
/* Whether the process a queue or lease line names stands behind it: the
 * POSIX read lock it holds on agreed bytes of the file. */
#include "alloc/lease_line.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "os/locks.h"

/* Whether e->pid holds its proof `base` on the file open at fd. */
static int proven(int fd, const struct extres_coord_entry *e, uint64_t base)
{
	return extres_lock_proof_on(fd, e->pid, base) == 1;
}

int extres_lease_waiter_proven(int fd, const struct extres_coord_entry *e)
{
	return e->parsed && e->has_starttime && e->lease &&
	       strcmp(e->lease, EXTRES_LEASE_WAITING) == 0 &&
	       proven(fd, e, EXTRES_LEASE_WAITER_PROOF);
}

int extres_lease_line_proven(int fd, const struct extres_coord_entry *e)
{
	char *id = NULL;
	int named;

	if (!e->parsed || !e->has_starttime || !e->lease ||
	    extres_lease_id(e->pid, e->starttime, &id) < 0)
		return 0;
	named = strcmp(id, e->lease) == 0;
	free(id);
	return named && proven(fd, e, EXTRES_LEASE_HOLDER_PROOF);
}

int extres_lease_command_proven(pid_t pid)
{
	int i, r = 0;

	/* /proc/locks read while locks come and go may skip one: a miss is
	 * asked again before it is believed. */
	for (i = 0; i < 3 && r != 1; i++)
		r = extres_lock_proof_anywhere(pid, EXTRES_LEASE_HOLDER_PROOF);
	return r == 1;
}

int extres_lease_id(pid_t pid, uint64_t starttime, char **ret)
{
	return asprintf(ret, "%d-%" PRIu64, (int)pid, starttime) < 0 ? -ENOMEM :
								       0;
}

int extres_lease_id_parse(const char *id, pid_t *ret_pid,
			  uint64_t *ret_starttime)
{
	const char *dash = id ? strchr(id, '-') : NULL;
	uint64_t pid, st;

	if (!dash ||
	    extres_parse_dec(id, (size_t)(dash - id), INT_MAX, &pid) < 0 ||
	    pid == 0 ||
	    extres_parse_dec(dash + 1, strlen(dash + 1), UINT64_MAX, &st) < 0)
		return -EINVAL;
	*ret_pid = (pid_t)pid;
	*ret_starttime = st;
	return 0;
}
