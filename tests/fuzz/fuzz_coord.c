/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the coordination file parser, on a line and on a file.
 *
 * Every line of the input (split on '\n') goes through
 * extres_coord_parse_line() and is compared with a direct reading of the
 * contract in coord.h: fields split on whitespace; parsed when there are two
 * and the second is a decimal PID in 1..INT_MAX; a start time when the third
 * is a decimal number that fits in 64 bits; a line with a NUL is kept
 * verbatim. Then the whole input is written to a file in a fresh temporary
 * directory and read with extres_coord_lock() (the file parser, which is
 * not exported on its own): every non-blank line must come back in order,
 * byte for byte. An entry is added, the file rewritten in place with
 * extres_coord_write(), and it must then hold exactly the entries' lines,
 * and read back the same. Owner states are not checked: they depend on the
 * processes of the host, and a fuzz target must be deterministic.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/coord.h"
#include "fuzz.h"

struct expect {
	int parsed;
	const char *key;
	size_t key_len;
	uint64_t pid;
	int has_starttime;
	uint64_t starttime;
};

static int is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_space(s[i]))
			return 0;
	return 1;
}

/* Splits [*p, end) at whitespace: the next field, or 0 when none is left. */
static int field(const char **p, const char *end, const char **ret,
		 size_t *ret_len)
{
	const char *s = *p;

	while (s < end && is_space(*s))
		s++;
	if (s == end)
		return 0;
	*ret = s;
	while (s < end && !is_space(*s))
		s++;
	*ret_len = (size_t)(s - *ret);
	*p = s;
	return 1;
}

/* A decimal number of any length (leading zeros included) up to `max`. */
static int decimal(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9')
			return 0;
		if (v > (max - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*ret = v;
	return 1;
}

static struct expect expect_line(const char *line, size_t len)
{
	struct expect x = { 0 };
	const char *p = line, *end = line + len, *pid, *start;
	size_t pid_len, start_len;

	if (memchr(line, '\0', len) || !field(&p, end, &x.key, &x.key_len) ||
	    !field(&p, end, &pid, &pid_len) ||
	    !decimal(pid, pid_len, INT_MAX, &x.pid) || x.pid == 0)
		return (struct expect){ 0 };
	x.parsed = 1;
	if (field(&p, end, &start, &start_len))
		x.has_starttime =
			decimal(start, start_len, UINT64_MAX, &x.starttime);
	return x;
}

static void check_entry(const struct extres_coord_entry *e, const char *line,
			size_t len)
{
	struct expect x = expect_line(line, len);

	FUZZ_CHECK(e->line && e->line_len == len);
	FUZZ_CHECK(memcmp(e->line, line, len) == 0 && e->line[len] == '\0');
	FUZZ_CHECK(e->parsed == x.parsed);
	if (!x.parsed) {
		FUZZ_CHECK(e->key == NULL);
		return;
	}
	FUZZ_CHECK(e->key && strlen(e->key) == x.key_len);
	FUZZ_CHECK(memcmp(e->key, x.key, x.key_len) == 0);
	FUZZ_CHECK((uint64_t)e->pid == x.pid);
	FUZZ_CHECK(e->has_starttime == x.has_starttime);
	FUZZ_CHECK(!x.has_starttime || e->starttime == x.starttime);
}

static void check_line(const char *line, size_t len)
{
	struct extres_coord_entry e;

	FUZZ_CHECK(extres_coord_parse_line(line, len, &e) == 0);
	check_entry(&e, line, len);
	extres_coord_entry_clear(&e);
	FUZZ_CHECK(e.line == NULL && e.key == NULL);
}

/* The length of the line at `p` (without its '\n'). */
static size_t line_len(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return (size_t)((nl ? nl : end) - p);
}

/* The start of the line after the one of `n` bytes at `p`, or `end`; never
 * past `end`, where a last line lacks its '\n'. */
static const char *next_line(const char *p, size_t n, const char *end)
{
	return p + n < end ? p + n + 1 : end;
}

/* Every non-blank line of [buf, buf + len) is entry k of `c`, in order. */
static void check_entries(const struct extres_coord *c, const char *buf,
			  size_t len)
{
	const char *p = buf, *end = buf + len;
	size_t k = 0, n;

	for (; p < end; p = next_line(p, n, end)) {
		n = line_len(p, end);
		if (is_blank(p, n))
			continue;
		FUZZ_CHECK(k < c->n);
		check_entry(&c->entries[k], p, n);
		FUZZ_CHECK(c->entries[k].parsed == 0 ||
			   extres_coord_has_key(c, c->entries[k].key) == 1);
		k++;
	}
	FUZZ_CHECK(k == c->n);
}

static void write_file(const char *path, const void *data, size_t size)
{
	size_t off = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FUZZ_CHECK(fd >= 0);
	while (off < size) {
		n = write(fd, (const char *)data + off, size - off);
		FUZZ_CHECK(n > 0);
		off += (size_t)n;
	}
	FUZZ_CHECK(close(fd) == 0);
}

/* The file's content, in a buffer of its size + 1 (NUL-terminated). */
static char *read_file(const char *path, size_t *ret_len)
{
	struct stat st;
	size_t off = 0;
	ssize_t n;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size + 1);
	FUZZ_CHECK(buf);
	while (off < (size_t)st.st_size) {
		n = pread(fd, buf + off, (size_t)st.st_size - off, (off_t)off);
		FUZZ_CHECK(n > 0);
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*ret_len = off;
	return buf;
}

/* Add an entry like the first parsed one (a line extres writes itself),
 * and check that it parses back to what was given. */
static void add_entry(struct extres_coord *c)
{
	const char *key = "fuzz";
	pid_t pid = 1;
	uint64_t starttime = 0;
	const struct extres_coord_entry *added;
	struct extres_coord_entry back;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->entries[i].parsed) {
			key = c->entries[i].key;
			pid = c->entries[i].pid;
			starttime = c->entries[i].starttime;
			break;
		}
	}
	/* A parsed key is never empty and holds no whitespace. */
	FUZZ_CHECK(extres_coord_add(c, key, pid, starttime) == 0);
	added = &c->entries[c->n - 1];
	FUZZ_CHECK(extres_coord_parse_line(added->line, added->line_len,
					   &back) == 0);
	FUZZ_CHECK(back.parsed && strcmp(back.key, key) == 0);
	FUZZ_CHECK(back.pid == pid && back.has_starttime &&
		   back.starttime == starttime);
	extres_coord_entry_clear(&back);
}

static void check_file(const uint8_t *data, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], path[PATH_MAX + 16], *content, *expected;
	struct extres_coord *c = NULL, *again = NULL;
	struct extres_err err = { "" };
	size_t len, off = 0, i;

	FUZZ_CHECK(snprintf(dir, sizeof(dir), "%s/extres-fuzz-coord.XXXXXX",
			    tmp && tmp[0] ? tmp : "/tmp") < (int)sizeof(dir));
	FUZZ_CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/coord", dir);
	write_file(path, data, size);

	FUZZ_CHECK(extres_coord_lock(path, 1000, EXTRES_NO_GROUP, &c, &err) ==
		   0);
	FUZZ_CHECK(c->fd >= 0 && strcmp(c->path, path) == 0);
	check_entries(c, (const char *)data, size);

	add_entry(c);
	FUZZ_CHECK(extres_coord_write(c, &err) == 0);
	expected = malloc(size + c->entries[c->n - 1].line_len + 2);
	FUZZ_CHECK(expected);
	for (i = 0; i < c->n; i++) {
		memcpy(expected + off, c->entries[i].line,
		       c->entries[i].line_len);
		off += c->entries[i].line_len;
		expected[off++] = '\n';
	}
	content = read_file(path, &len);
	FUZZ_CHECK(len == off && memcmp(content, expected, off) == 0);
	extres_coord_close(c);

	FUZZ_CHECK(extres_coord_lock(path, 1000, EXTRES_NO_GROUP, &again,
				     &err) == 0);
	check_entries(again, content, len);
	extres_coord_close(again);

	free(content);
	free(expected);
	FUZZ_CHECK(unlink(path) == 0);
	FUZZ_CHECK(rmdir(dir) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	size_t n;

	for (; p < end; p = next_line(p, n, end)) {
		n = line_len(p, end);
		check_line(p, n);
	}
	check_file(data, size);
	return 0;
}
