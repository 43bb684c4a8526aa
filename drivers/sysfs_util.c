/* SPDX-License-Identifier: MIT */
#include "sysfs_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "text_scan.h"

#include <extres/driver_util.h>

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

int32_t sysfs_root_param(const struct extres_host *host,
			 const struct extres_param *params, char **ret_root)
{
	return sysfs_dir_param(host, params, SYSFS_PARAM_ROOT, "/sys",
			       ret_root);
}

int32_t sysfs_dir_param(const struct extres_host *host,
			const struct extres_param *params, const char *key,
			const char *dflt, char **ret_root)
{
	const struct extres_param *p;
	const char *root = dflt, *why = NULL;
	char *s = NULL;
	struct stat st;
	size_t n;
	int32_t r;

	p = extres_param_get(params, key);
	if (p && (p->kind != EXTRES_PARAM_SCALAR || p->value[0] == '\0')) {
		r = extres_param_error(
			host, p, "param.%s must be a directory such as %s", key,
			dflt);
		goto out;
	}
	if (p)
		root = p->value;
	if (root[0] != '/' && host->config_dir && host->config_dir[0])
		r = asprintf(&s, "%s/%s", host->config_dir, root);
	else
		r = asprintf(&s, "%s", root);
	if (r < 0) {
		s = NULL;
		r = -ENOMEM;
		goto out;
	}
	r = 0;
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	/* A sysfs-root that is not there is a typo, not a host without the
	 * devices. */
	if (p && stat(s, &st) < 0)
		why = strerror(errno);
	else if (p && !S_ISDIR(st.st_mode))
		why = "not a directory";
	if (why)
		r = extres_param_error(host, p, "param.%s '%s': %s", key, s,
				       why);
out:
	if (r == 0)
		*ret_root = s;
	else
		free(s);
	return r;
}

/* The hex number of exactly `min` to `max` digits at *p, moving *p past it;
 * -1 when there is none. */
static long hex_field(const char **p, size_t min, size_t max)
{
	const char *s = *p;
	long v = 0;
	size_t n;
	int d;

	for (n = 0; n < max; n++) {
		if (is_digit(s[n]))
			d = s[n] - '0';
		else if ((s[n] | 0x20) >= 'a' && (s[n] | 0x20) <= 'f')
			d = (s[n] | 0x20) - 'a' + 10;
		else
			break;
		v = v * 16 + d;
	}
	if (n < min || is_digit(s[n]) ||
	    ((s[n] | 0x20) >= 'a' && (s[n] | 0x20) <= 'f'))
		return -1;
	*p = s + n;
	return v;
}

/*
 * The key a name sorts by: itself, or for a PCI address (the kernel's
 * dddd:bb:dd.f, domain 4 to 8 hex digits) the same fields in decimal,
 * "0000:0f:00.0" -> "0:15:0.0". Natural order reads a hex field as decimal
 * runs and letters, putting "0f" before "07"; one key for every name, rather
 * than a second comparison for PCI names alone, keeps the order transitive
 * when PCI and other names are sorted together, as qsort() needs.
 */
static const char *sort_key(const char *name, char *buf, size_t size)
{
	const char *p = name;
	long f[4];

	f[0] = hex_field(&p, 4, 8);
	if (f[0] < 0 || *p++ != ':')
		return name;
	f[1] = hex_field(&p, 2, 2);
	if (f[1] < 0 || *p++ != ':')
		return name;
	f[2] = hex_field(&p, 2, 2);
	if (f[2] < 0 || *p++ != '.')
		return name;
	f[3] = hex_field(&p, 1, 1);
	if (f[3] < 0 || *p != '\0')
		return name;
	snprintf(buf, size, "%ld:%ld:%ld.%ld", f[0], f[1], f[2], f[3]);
	return buf;
}

static int natcmp(const char *a, const char *b)
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

int sysfs_natcmp(const char *a, const char *b)
{
	char key_a[40], key_b[40];
	int c;

	c = natcmp(sort_key(a, key_a, sizeof(key_a)),
		   sort_key(b, key_b, sizeof(key_b)));
	return c != 0 ? c : strcmp(a, b);
}
