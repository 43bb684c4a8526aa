/* SPDX-License-Identifier: MIT */
#include "sysfs_util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/text.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int read_all(int fd, struct sysfs_buf *buf)
{
	ssize_t n;

	buf->len = 0;
	/* One byte more than allowed tells a full page from a longer file. */
	while (buf->len < sizeof(buf->data)) {
		n = read(fd, buf->data + buf->len,
			 sizeof(buf->data) - buf->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		buf->len += (size_t)n;
	}
	if (buf->len > SYSFS_VALUE_MAX)
		return -EFBIG;
	buf->data[buf->len] = '\0';
	return 0;
}

int sysfs_read(const char *path, struct sysfs_buf *buf, const char **ret_why)
{
	struct stat st;
	int fd, r;

	/* stat() first: opening a device node can have effects of its own. */
	if (stat(path, &st) < 0) {
		r = -errno;
		*ret_why = strerror(-r);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_why = "not a regular file";
		return -EINVAL;
	}
	/* O_NONBLOCK: should a FIFO take the file's place in between, the open
	 * does not wait for a writer, and fstat() below refuses it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		*ret_why = strerror(-r);
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		*ret_why = strerror(-r);
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		*ret_why = "not a regular file";
	} else {
		r = read_all(fd, buf);
		if (r == -EFBIG) {
			*ret_why = "longer than 4096 bytes";
		} else if (r < 0) {
			*ret_why = strerror(-r);
		} else if (memchr(buf->data, '\0', buf->len)) {
			/* Text, as sysfs shows it: no caller can use a NUL. */
			r = -EBADMSG;
			*ret_why = "holds a NUL byte";
		}
	}
	close(fd);
	return r;
}

int sysfs_read_value(const char *path, struct sysfs_buf *buf,
		     const char **ret_value, const char **ret_why)
{
	char *start, *end;
	int r;

	r = sysfs_read(path, buf, ret_why);
	if (r < 0)
		return r;
	start = buf->data;
	end = buf->data + buf->len;
	while (start < end && text_is_space(*start))
		start++;
	while (end > start && text_is_space(end[-1]))
		end--;
	*end = '\0';
	if (start == end) {
		*ret_why = "empty";
		return -ENODATA;
	}
	/* A file serves one value: a list over several lines is no value. */
	if (strpbrk(start, "\n\r")) {
		*ret_why = "more than one line";
		return -EBADMSG;
	}
	*ret_value = start;
	return 0;
}

int sysfs_natcmp(const char *a, const char *b)
{
	const char *x = a, *y = b;

	while (*x && *y) {
		if (is_digit(*x) && is_digit(*y)) {
			size_t nx = 0, ny = 0;
			int c;

			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			while (is_digit(x[nx]))
				nx++;
			while (is_digit(y[ny]))
				ny++;
			/* Without leading zeros, the longer number is larger. */
			if (nx != ny)
				return nx < ny ? -1 : 1;
			c = memcmp(x, y, nx);
			if (c != 0)
				return c < 0 ? -1 : 1;
			x += nx;
			y += ny;
			continue;
		}
		if (*x != *y)
			return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
		x++;
		y++;
	}
	if (*x || *y)
		return *x ? 1 : -1;
	return strcmp(a, b);
}
