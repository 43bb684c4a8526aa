/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the drivers that read sysfs (sysfs.c, amdgpu.c): reading
 * a small attribute file safely, and the natural order of device names.
 * Compiled into each module; hidden like everything but the entry point.
 */
#ifndef EXTRES_SYSFS_UTIL_H
#define EXTRES_SYSFS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <extres/driver.h>

/* The most an attribute may hold: one page, which is all a sysfs attribute
 * can show. A longer file (outside sysfs) is refused, never cut. */
#define SYSFS_VALUE_MAX 4096

struct sysfs_buf {
	char data[SYSFS_VALUE_MAX + 1]; /* NUL-terminated */
	size_t len;
};

/*
 * Read the whole of the regular file `path` into `buf`. Anything else (a
 * FIFO, a device node, a directory) is refused without being opened for
 * reading, so that a stray match cannot block or have side effects; so is
 * content with a NUL byte, which is no text. Returns 0, or a negative errno
 * with a short reason for a message in *ret_why (strerror's text, or "not a
 * regular file" (-EINVAL), "longer than 4096 bytes" (-EFBIG), "holds a NUL
 * byte" (-EBADMSG)). `buf` is clobbered either way.
 */
int sysfs_read(const char *path, struct sysfs_buf *buf, const char **ret_why);

/*
 * sysfs_read() for a one-value attribute: *ret_value points into `buf` at the
 * content trimmed of surrounding whitespace. Also refused, as nothing a file
 * could serve: an empty value (-ENODATA, "empty"), one of several lines
 * (-EBADMSG, "more than one line").
 */
int sysfs_read_value(const char *path, struct sysfs_buf *buf,
		     const char **ret_value, const char **ret_why);

/*
 * param.sysfs-root, as the amdgpu and nvml drivers take it: where sysfs is
 * mounted, "/sys" by default (a fake tree in tests); a relative one is taken
 * from the config file's directory. *ret_root is malloc'd, without a
 * trailing '/'. Returns 0, -ENOMEM, or -EINVAL after the host's error for a
 * value that is not a directory.
 */
#define SYSFS_PARAM_ROOT "sysfs-root"
int32_t sysfs_root_param(const struct extres_host *host,
			 const struct extres_param *params, char **ret_root);

/* The same for any such directory param `key`, `dflt` by default
 * (nvml's proc-root, "/proc"). */
int32_t sysfs_dir_param(const struct extres_host *host,
			const struct extres_param *params, const char *key,
			const char *dflt, char **ret_root);

/*
 * Natural order: runs of digits compare as numbers, so "mlx5_2" < "mlx5_10";
 * everything else byte by byte. A name shaped like a PCI address
 * (dddd:bb:dd.f, hex) compares as its four numbers, so "0000:07:00.0" <
 * "0000:0f:00.0" < "0000:10:00.0". Names equal as numbers ("a01", "a1") fall
 * back to strcmp(), so the order is total. Returns <0, 0, >0 like strcmp().
 */
int sysfs_natcmp(const char *a, const char *b);

#endif
