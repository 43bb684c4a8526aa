/* SPDX-License-Identifier: MIT */
/*
 * Text helpers without extres concepts: ASCII character classes that do not
 * depend on the locale, whitespace word splitting, checked integers, text
 * built in a memory stream, UTF-8 that any bytes can be turned into. The
 * scanning that drivers need too is common/include/text_scan.h's, which
 * extres_is_space(), extres_starts_with(), extres_next_word() and
 * extres_parse_dec() give fs/ under its own names.
 */
#ifndef EXTRES_TEXT_H
#define EXTRES_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1 for the C locale's whitespace (' ', '\t', '\n', '\v', '\f', '\r'). */
int extres_is_space(char c);

/* 1 if `len` bytes at `s` are all whitespace (or none). */
int extres_is_blank(const char *s, size_t len);

/* 1 if `s` begins with `prefix`. */
int extres_starts_with(const char *s, const char *prefix);

/* 1 if `a` and `b` are both NULL or both the same text. */
int extres_same_text(const char *a, const char *b);

/*
 * The next whitespace-separated word of [*p, end): 1 with *ret_word and
 * *ret_len set and *p moved past the word, or 0 when none is left (nothing
 * is set then). This is how Java's Runtime.exec() splits a command string.
 */
int extres_next_word(const char **p, const char *end, const char **ret_word,
		     size_t *ret_len);

/*
 * The `len` bytes at `s` as a decimal number of at most `max`: digits only
 * (no sign or blanks, which strtoull would take). 0, -EINVAL when not
 * digits (or empty), -ERANGE when above `max`; *ret untouched on failure.
 */
int extres_parse_dec(const char *s, size_t len, uint64_t max, uint64_t *ret);

/*
 * Seconds with up to three decimals ("30", "0.5") into milliseconds: 0, or
 * -EINVAL when the text is anything else or falls outside [min_ms, max_ms]
 * (*ret_ms untouched then).
 */
int extres_parse_ms(const char *text, unsigned long long min_ms,
		    unsigned long long max_ms, unsigned long long *ret_ms);

/*
 * Close `f`, a stream from open_memstream(&*buf, ...): 0 with the text in
 * *buf, or -ENOMEM when a write or the close failed, with *buf freed and
 * NULL (a short text is never taken for the whole).
 */
int extres_memstream_close(FILE *f, char **buf);

/*
 * Length of the valid UTF-8 sequence at `s` (`len` >= 1 bytes left) and its
 * code point in *ret_cp; 0 when the bytes there are not valid UTF-8
 * (overlong, surrogate, beyond U+10FFFF, cut short), *ret_cp untouched.
 */
size_t extres_utf8_char(const unsigned char *s, size_t len, uint32_t *ret_cp);

/* U+FFFD, what a byte that is not valid UTF-8 shows as, in UTF-8. */
#define EXTRES_UTF8_REPLACEMENT 0xfffdu
#define EXTRES_UTF8_REPLACEMENT_TEXT "\xef\xbf\xbd"

/*
 * The next character of the `len` >= 1 bytes at `s` for a writer whose text
 * must be valid UTF-8 whatever bytes it is given: the length of the valid
 * sequence there with its code point in *ret_cp, or 1 with U+FFFD in
 * *ret_cp for a byte that begins none (each such byte becomes one U+FFFD).
 */
size_t extres_utf8_next(const unsigned char *s, size_t len, uint32_t *ret_cp);

/*
 * 1 for a code point that can break a line-based text or a terminal: C0
 * controls (tab and newline among them), DEL, C1 controls (U+0085 ends a
 * line for some readers), U+2028 and U+2029.
 */
int extres_is_control(uint32_t cp);

/*
 * The `len` bytes at `s` (any bytes) as one field of a line of UTF-8 text,
 * written to `f`: what is not valid UTF-8 becomes U+FFFD, a control
 * character (extres_is_control) '?', the rest is copied.
 */
void extres_put_line_text(FILE *f, const char *s, size_t len);

/*
 * The same into `buf` (`size` >= 1 bytes), NUL-ended and cut before the
 * first character that does not fit (never inside one): the length
 * written, without the NUL.
 */
size_t extres_line_text(char *buf, size_t size, const char *s, size_t len);

/*
 * The optimal string alignment distance between `a` and `b`: insertions,
 * deletions, substitutions and swaps of two neighbours, each costing 1
 * (so "amout" is 1 from "amount", "drievr" 1 from "driver"). Texts longer
 * than EXTRES_EDIT_MAX bytes, and an allocation failure, give SIZE_MAX.
 */
#define EXTRES_EDIT_MAX 256
size_t extres_edit_distance(const char *a, const char *b);

/*
 * The one of `n` candidates nearest to `word`, close enough to be a typo
 * of it (at most 2 edits, and fewer than half of the longer text), or NULL.
 * The first of equally near ones wins. NULL candidates are skipped.
 */
const char *extres_nearest(const char *word, const char *const *cands,
			   size_t n);

/* 1 if `p` is an absolute path under /dev/ whose every component is a name
 * (no empty, "." or ".." component), else 0. Looks at the text only. */
int extres_is_dev_path(const char *p);

#endif
