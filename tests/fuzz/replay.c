/* SPDX-License-Identifier: MIT */
/*
 * Replays fuzz inputs without libFuzzer, so that the corpora are regression
 * tests under any compiler and sanitizer:
 *
 *     replay-<target> PATH...
 *
 * runs LLVMFuzzerTestOneInput() on every file named and on every file in
 * every directory named (one level, in name order, hidden names skipped).
 * A broken check aborts. An input that cannot be read, or no input at all,
 * is an error (exit 1): a replay of nothing tests nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* libFuzzer's inputs are small (-max_len); a seed this big is a mistake. */
#define REPLAY_MAX_INPUT (16u << 20)

/*
 * Read all of `path` into a buffer of exactly its size, so that the
 * sanitizers catch a read one byte past the input as libFuzzer's would.
 */
static int read_input(const char *path, uint8_t **ret_buf, size_t *ret_len)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t len, off = 0;
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > REPLAY_MAX_INPUT) {
		r = -EFBIG;
		goto out;
	}
	len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (off < len) {
		n = read(fd, buf + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* A file that shrank under us is not the input. */
			r = n < 0 ? -errno : -EIO;
			goto out;
		}
		off += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return r;
}

static int replay_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	r = read_input(path, &buf, &len);
	if (r < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(-r));
		return r;
	}
	/* Named before it runs: if it crashes, the log says which one. */
	printf("replay: %s (%zu bytes)\n", path, len);
	fflush(stdout);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Replays the files of `dir`; adds how many to *count. */
static int replay_dir(const char *dir, size_t *count)
{
	struct dirent **names;
	char *path;
	int n, i, r = 0;

	n = scandir(dir, &names, not_hidden, alphasort);
	if (n < 0) {
		r = -errno;
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(-r));
		return r;
	}
	for (i = 0; i < n && r == 0; i++) {
		if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0) {
			fprintf(stderr, "replay: out of memory\n");
			r = -ENOMEM;
			break;
		}
		r = replay_file(path);
		free(path);
		if (r == 0)
			(*count)++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	struct stat st;
	int i, r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			r = replay_dir(argv[i], &count);
		} else {
			r = replay_file(argv[i]);
			if (r == 0)
				count++;
		}
		if (r < 0)
			return 1;
	}
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	printf("replay: %zu inputs, no failure\n", count);
	return 0;
}
