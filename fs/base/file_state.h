/* SPDX-License-Identifier: MIT */
/*
 * A file as read at one moment through a descriptor: which file it was
 * (device, inode, type and mode, owner, links) and every byte it held.
 *
 * Two states are the same file unchanged when both match; timestamps
 * are not compared, because they cannot tell. Most file systems take them
 * from a clock that moves once a tick (4 ms at HZ=250): all before Linux
 * 6.13, and since then all without fine-grained ("multigrain") times,
 * which only ext4, xfs, btrfs and tmpfs have. A rewrite of the same length
 * within the tick of the last change leaves fstat() exactly as it was, so
 * only the bytes show it.
 */
#ifndef EXTRES_FILE_STATE_H
#define EXTRES_FILE_STATE_H

#include <stddef.h>
#include <sys/stat.h>

struct extres_file_state {
	struct stat st; /* st_ino 0: nothing taken */
	char *data; /* malloc'd: `len` bytes, then a NUL */
	size_t len;
};

/*
 * fstat(fd) and the bytes from offset 0 to the end, read with pread(), so
 * fd's offset does not move. 0; -EFBIG past `max` bytes; -ENOMEM; or
 * fstat()'s or pread()'s -errno (EINTR is retried). *ret is untouched on
 * failure; on success it holds memory for extres_file_state_clear().
 */
int extres_file_state_take(int fd, size_t max, struct extres_file_state *ret);

/* A copy of `s` in *ret (untouched on failure): 0 or -ENOMEM. */
int extres_file_state_copy(const struct extres_file_state *s,
			   struct extres_file_state *ret);

/* 1 when `a` and `b` are the same file with the same bytes (times aside),
 * else 0; 0 when either holds nothing. */
int extres_file_state_same(const struct extres_file_state *a,
			   const struct extres_file_state *b);

/* Free what `s` holds and empty it. Accepts an empty (zeroed) one. */
void extres_file_state_clear(struct extres_file_state *s);

#endif
