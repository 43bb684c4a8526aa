/* SPDX-License-Identifier: MIT */
/*
 * Reading a whole file into memory: the config, the coordination file,
 * /proc/self/mountinfo and a mount's property files all need the same
 * bounded loop; and writing a whole buffer. And finding the files that come with the running program.
 */
#ifndef EXTRES_FILEIO_H
#define EXTRES_FILEIO_H

#include <stddef.h>

/*
 * Read `fd` from its offset to the end into *ret_buf (free() it), with a NUL
 * after the *ret_len bytes read. 0, -EFBIG past `max` bytes, -ENOMEM, or
 * read()'s -errno (EINTR is retried); on failure nothing is returned.
 */
int extres_read_all(int fd, size_t max, char **ret_buf, size_t *ret_len);

/* The same from offset 0 with pread(): fd's offset does not move. */
int extres_pread_all(int fd, size_t max, char **ret_buf, size_t *ret_len);

/* Write all `len` bytes of `buf` to `fd` (EINTR is retried): 0, or
 * write()'s -errno. */
int extres_write_all(int fd, const void *buf, size_t len);

/*
 * "<directory of the running program>/../<name>" in *ret (free() it), for
 * the build tree: meson puts builddir/fs/extresd and extresctl beside
 * builddir/drivers and builddir/scripts, so that it runs without installing.
 * *ret is NULL when there is no such place (no /proc, a program in "/").
 * Nothing says the place exists. 0 or -ENOMEM.
 */
int extres_exe_sibling(const char *name, char **ret);

#endif
