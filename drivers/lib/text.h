/* SPDX-License-Identifier: MIT */
/* Text helpers for drivers: ASCII classes that do not depend on the locale,
 * and whitespace word splitting. */
#ifndef EXTRES_DRIVERS_TEXT_H
#define EXTRES_DRIVERS_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* 1 for the C locale's whitespace (' ', '\t', '\n', '\v', '\f', '\r'). */
int text_is_space(char c);

/* 1 if `s` begins with `prefix`. */
int text_starts_with(const char *s, const char *prefix);

/* The decimal number that is all of [s, s + len): 0 with *ret set, or
 * -EINVAL for anything else (empty, a sign, a blank, past 2^64 - 1, or
 * longer than 23 characters). */
int text_parse_u64(const char *s, size_t len, uint64_t *ret);

/*
 * The next whitespace-separated word of [*p, end): 1 with *ret_word and
 * *ret_len set and *p moved past the word, or 0 when none is left. This is
 * how Java's Runtime.exec() splits a command string, so Flink's args.
 */
int text_next_word(const char **p, const char *end, const char **ret_word,
		   size_t *ret_len);

#endif
