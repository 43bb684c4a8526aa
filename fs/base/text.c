/* SPDX-License-Identifier: MIT */
#include "base/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text_scan.h"

int extres_is_space(char c)
{
	return text_is_space(c);
}

int extres_is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!extres_is_space(s[i]))
			return 0;
	return 1;
}

int extres_starts_with(const char *s, const char *prefix)
{
	return text_starts_with(s, prefix);
}

int extres_next_word(const char **p, const char *end, const char **ret_word,
		     size_t *ret_len)
{
	return text_next_word(p, end, ret_word, ret_len);
}

int extres_parse_dec(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	return text_parse_dec(s, len, max, ret);
}

int extres_parse_ms(const char *text, unsigned long long min_ms,
		    unsigned long long max_ms, unsigned long long *ret_ms)
{
	unsigned long long whole = 0, ms;
	const char *p = text;
	int decimals = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (unsigned long long)(*p - '0');
		if (whole > max_ms / 1000 + 1)
			return -EINVAL;
	}
	ms = whole * 1000;
	if (*p == '.') {
		unsigned long long scale = 100;

		for (p++; *p >= '0' && *p <= '9' && decimals < 3;
		     p++, decimals++, scale /= 10)
			ms += (unsigned long long)(*p - '0') * scale;
		if (decimals == 0)
			return -EINVAL;
	}
	if (*p != '\0' || ms < min_ms || ms > max_ms)
		return -EINVAL;
	*ret_ms = ms;
	return 0;
}

int extres_same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int extres_memstream_close(FILE *f, char **buf)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}

size_t extres_utf8_char(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return n;
}

size_t extres_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp)
{
	size_t n = extres_utf8_char(s, len, ret_cp);

	if (n)
		return n;
	*ret_cp = EXTRES_UTF8_REPLACEMENT;
	return 1;
}

int extres_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 ||
	       cp == 0x2029;
}

/* What the character at `s` shows as in a line: *ret_piece, *ret_len
 * bytes long. Returns how many bytes of `s` it takes. */
static size_t line_piece(const char *s, size_t len, const char **ret_piece,
			 size_t *ret_len)
{
	uint32_t cp;
	size_t n = extres_utf8_next((const unsigned char *)s, len, &cp);

	if (extres_is_control(cp)) {
		*ret_piece = "?";
		*ret_len = 1;
	} else if (cp == EXTRES_UTF8_REPLACEMENT) {
		*ret_piece = EXTRES_UTF8_REPLACEMENT_TEXT;
		*ret_len = sizeof(EXTRES_UTF8_REPLACEMENT_TEXT) - 1;
	} else {
		*ret_piece = s;
		*ret_len = n;
	}
	return n;
}

void extres_put_line_text(FILE *f, const char *s, size_t len)
{
	const char *piece;
	size_t i = 0, n;

	while (i < len) {
		i += line_piece(s + i, len - i, &piece, &n);
		fwrite(piece, 1, n, f);
	}
}

size_t extres_line_text(char *buf, size_t size, const char *s, size_t len)
{
	const char *piece;
	size_t i = 0, out = 0, took, n;

	while (i < len) {
		took = line_piece(s + i, len - i, &piece, &n);
		if (n >= size - out)
			break;
		memcpy(buf + out, piece, n);
		out += n;
		i += took;
	}
	buf[out] = '\0';
	return out;
}

size_t extres_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, d, *rows;
	size_t *pp, *prev, *cur;

	if (la > EXTRES_EDIT_MAX || lb > EXTRES_EDIT_MAX)
		return SIZE_MAX;
	/* Three rows: the swap looks two rows back. */
	rows = calloc(3 * (lb + 1), sizeof(*rows));
	if (!rows)
		return SIZE_MAX;
	pp = rows;
	prev = rows + (lb + 1);
	cur = rows + 2 * (lb + 1);
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			d = prev[j - 1] + cost;
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
		}
		t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	d = prev[lb];
	free(rows);
	return d;
}

const char *extres_nearest(const char *word, const char *const *cands, size_t n)
{
	size_t i, d, best_d = SIZE_MAX, longer;
	const char *best = NULL;

	for (i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		d = extres_edit_distance(word, cands[i]);
		longer = strlen(word) > strlen(cands[i]) ? strlen(word) :
							   strlen(cands[i]);
		if (d <= 2 && 2 * d < longer && d < best_d) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}

/* A value that climbs out with ".." must not make a runtime pass another
 * file. */
int extres_is_dev_path(const char *p)
{
	const char *c;
	size_t len;

	if (!extres_starts_with(p, "/dev/"))
		return 0;
	for (c = p + 5;; c += len + 1) {
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (c[len] == '\0')
			return 1;
	}
}
