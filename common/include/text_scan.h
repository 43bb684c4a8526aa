/* SPDX-License-Identifier: MIT */
/*
 * Scanning text without the locale: whitespace, prefixes, words, decimal
 * numbers. Header-only and shared by fs/ (through base/text.h) and the
 * driver modules, which may include nothing of fs/: so it lives in
 * common/include/, as nbdkit's common/include/ serves its server and its
 * plugins alike. Plain C over libc, with no extres concept and no global
 * state; every function is static inline, so nothing is exported.
 */
#ifndef EXTRES_TEXT_SCAN_H
#define EXTRES_TEXT_SCAN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 1 for the C locale's whitespace (' ', '\t', '\n', '\v', '\f', '\r'). */
static inline int text_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/* 1 if `s` begins with `prefix`. */
static inline int text_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The next whitespace-separated word of [*p, end): 1 with *ret_word and
 * *ret_len set and *p moved past the word, or 0 when none is left (nothing
 * is set then). This is how Java's Runtime.exec() splits a command string,
 * so Flink's args.
 */
static inline int text_next_word(const char **p, const char *end,
				 const char **ret_word, size_t *ret_len)
{
	const char *s = *p, *w;

	while (s < end && text_is_space(*s))
		s++;
	if (s == end)
		return 0;
	w = s;
	while (s < end && !text_is_space(*s))
		s++;
	*ret_word = w;
	*ret_len = (size_t)(s - w);
	*p = s;
	return 1;
}

/*
 * The `len` bytes at `s` as a decimal number of at most `max`: digits only
 * (no sign or blanks, which strtoull would take). 0, -EINVAL when not
 * digits (or empty), -ERANGE when above `max`; *ret untouched on failure.
 */
static inline int text_parse_dec(const char *s, size_t len, uint64_t max,
				 uint64_t *ret)
{
	char buf[32];
	unsigned long long v;
	char *end;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	/* Leading zeros add digits, not value: 40 digits may still be 1. */
	while (len > 1 && s[0] == '0')
		s++, len--;
	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

#endif
