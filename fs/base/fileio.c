/* SPDX-License-Identifier: MIT */
#include "base/fileio.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int extres_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* From the offset (`at`: from 0, with pread(), the offset left as it is). */
static int read_to_end(int fd, int at, size_t max, char **ret_buf,
		       size_t *ret_len)
{
	size_t len = 0, cap = 0, want;
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
		/* Never more than one byte past `max`: a file that grows
		 * under us (another writer) is not read on and on. */
		want = cap - len - 1;
		if (max - len < want)
			want = max - len + 1;
		n = at ? pread(fd, buf + len, want, (off_t)len) :
			 read(fd, buf + len, want);
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

int extres_read_all(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	return read_to_end(fd, 0, max, ret_buf, ret_len);
}

int extres_pread_all(int fd, size_t max, char **ret_buf, size_t *ret_len)
{
	return read_to_end(fd, 1, max, ret_buf, ret_len);
}

int extres_exe_sibling(const char *name, char **ret)
{
	char exe[PATH_MAX];
	char *slash;
	ssize_t n;

	*ret = NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(exe) - 1)
		return 0;
	exe[n] = '\0';
	/* /proc/self/exe has no symlinks left in it, so cutting the last
	 * directory is the same as "..". */
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	if (asprintf(ret, "%s/%s", exe, name) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}
