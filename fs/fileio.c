/* SPDX-License-Identifier: MIT */
#include "fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int extres_read_all(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL, *p;
	ssize_t n;
	int r = 0;

	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			p = realloc(buf, cap);
			if (!p) {
				r = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len - 1);
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
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
out:
	free(buf);
	return r;
}
