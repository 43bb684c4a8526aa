/* SPDX-License-Identifier: MIT */
#include "base/file_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

int extres_file_state_take(int fd, size_t max, struct extres_file_state *ret)
{
	struct stat st;
	size_t len;
	char *buf;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	r = extres_pread_all(fd, max, &buf, &len);
	if (r < 0)
		return r;
	ret->st = st;
	ret->data = buf;
	ret->len = len;
	return 0;
}

int extres_file_state_copy(const struct extres_file_state *s,
			   struct extres_file_state *ret)
{
	char *data = malloc(s->len + 1);

	if (!data)
		return -ENOMEM;
	if (s->data)
		memcpy(data, s->data, s->len);
	data[s->len] = '\0';
	ret->st = s->st;
	ret->data = data;
	ret->len = s->len;
	return 0;
}

int extres_file_state_same(const struct extres_file_state *a,
			   const struct extres_file_state *b)
{
	const struct stat *x = &a->st, *y = &b->st;

	if (!x->st_ino || !y->st_ino || !a->data || !b->data)
		return 0;
	return x->st_dev == y->st_dev && x->st_ino == y->st_ino &&
	       x->st_mode == y->st_mode && x->st_uid == y->st_uid &&
	       x->st_gid == y->st_gid && x->st_nlink == y->st_nlink &&
	       a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

void extres_file_state_clear(struct extres_file_state *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}
