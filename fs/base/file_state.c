/* SPDX-License-Identifier: MIT */
#include "base/file_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int extres_file_state_take(int fd, size_t max, struct extres_file_state *ret)
{
	struct stat st;
	size_t len = 0, cap;
	char *buf = NULL, *p;
	ssize_t n;
	int r = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* The size is a hint: the file may grow while it is read (an
	 * unlocked writer), and then it is read to its new end. */
	cap = st.st_size > 0 && (size_t)st.st_size <= max ?
		      (size_t)st.st_size + 1 :
		      4096;
	for (;;) {
		if (len == cap || !buf) {
			if (buf)
				cap *= 2;
			p = realloc(buf, cap + 1);
			if (!p) {
				r = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = pread(fd, buf + len, cap - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			r = -EFBIG;
			goto out;
		}
	}
	buf[len] = '\0';
	ret->st = st;
	ret->data = buf;
	ret->len = len;
	buf = NULL;
out:
	free(buf);
	return r;
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
