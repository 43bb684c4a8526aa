/* SPDX-License-Identifier: MIT */
/* The JSON writer: exact text, escaping, UTF-8 repair, misuse refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/json.h"

static int setup(void **state)
{
	struct extres_json *j = NULL;

	if (extres_json_new(&j) < 0)
		return -1;
	*state = j;
	return 0;
}

static int teardown(void **state)
{
	extres_json_free(*state);
	return 0;
}

/* Finish `j` and require exactly `want_len` bytes `want`, NUL-terminated. */
static void assert_text_len(struct extres_json *j, const char *want,
			    size_t want_len)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_json_finish(j, &text, &len), 0);
	assert_non_null(text);
	if (len != want_len || memcmp(text, want, len) != 0)
		fail_msg("wanted '%.*s' (%zu bytes), got '%.*s' (%zu bytes)",
			 (int)want_len, want, want_len, (int)len, text, len);
	assert_int_equal(text[len], '\0');
	free(text);
}

static void assert_text(struct extres_json *j, const char *want)
{
	assert_text_len(j, want, strlen(want));
}

/* A document whose only value is the string `s` of `len` bytes. */
static void assert_string_text(const char *s, size_t len, const char *want)
{
	struct extres_json *j = NULL;

	assert_int_equal(extres_json_new(&j), 0);
	assert_int_equal(extres_json_string_len(j, s, len), 0);
	assert_text(j, want);
	extres_json_free(j);
}

static void test_nested(void **state)
{
	struct extres_json *j = *state;

	assert_int_equal(extres_json_begin_object(j), 0);
	assert_int_equal(extres_json_key(j, "a"), 0);
	assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_uint(j, 1), 0);
	assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_end_array(j), 0);
	assert_int_equal(extres_json_begin_object(j), 0);
	assert_int_equal(extres_json_end_object(j), 0);
	assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_null(j), 0);
	assert_int_equal(extres_json_string(j, "x"), 0);
	assert_int_equal(extres_json_end_array(j), 0);
	assert_int_equal(extres_json_end_array(j), 0);
	assert_int_equal(extres_json_key(j, "b"), 0);
	assert_int_equal(extres_json_begin_object(j), 0);
	assert_int_equal(extres_json_key(j, "c"), 0);
	assert_int_equal(extres_json_begin_object(j), 0);
	assert_int_equal(extres_json_key(j, "d"), 0);
	assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_end_array(j), 0);
	assert_int_equal(extres_json_key(j, "e"), 0);
	assert_int_equal(extres_json_string(j, ""), 0);
	assert_int_equal(extres_json_end_object(j), 0);
	assert_int_equal(extres_json_end_object(j), 0);
	assert_int_equal(extres_json_end_object(j), 0);
	assert_text(j, "{\"a\": [1, [], {}, [null, \"x\"]], "
		       "\"b\": {\"c\": {\"d\": [], \"e\": \"\"}}}\n");
}

/* extresctl's coord list output has this shape: keep it byte for byte. */
static void test_coord_shape(void **state)
{
	struct extres_json *j = *state;

	extres_json_begin_object(j);
	extres_json_key(j, "removed");
	extres_json_begin_array(j);
	extres_json_begin_object(j);
	extres_json_key(j, "key");
	extres_json_string(j, "1");
	extres_json_key(j, "pid");
	extres_json_uint(j, 4242);
	extres_json_key(j, "starttime");
	extres_json_null(j);
	extres_json_end_object(j);
	extres_json_end_array(j);
	extres_json_key(j, "kept");
	extres_json_uint(j, 3);
	extres_json_end_object(j);
	assert_text(j, "{\"removed\": [{\"key\": \"1\", \"pid\": 4242, "
		       "\"starttime\": null}], \"kept\": 3}\n");
}

static void test_empty_roots(void **state)
{
	struct extres_json *j = *state, *k = NULL;

	assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_end_array(j), 0);
	assert_text(j, "[]\n");

	assert_int_equal(extres_json_new(&k), 0);
	assert_int_equal(extres_json_begin_object(k), 0);
	assert_int_equal(extres_json_end_object(k), 0);
	assert_text(k, "{}\n");
	extres_json_free(k);
}

/* A lone scalar is a whole document too. */
static void test_scalar_roots(void **state)
{
	struct extres_json *j = *state, *k = NULL;

	assert_int_equal(extres_json_null(j), 0);
	assert_text(j, "null\n");
	assert_int_equal(extres_json_new(&k), 0);
	assert_int_equal(extres_json_uint(k, 42), 0);
	assert_text(k, "42\n");
	extres_json_free(k);
	assert_string_text("x", 1, "\"x\"\n");
}

static void test_big_numbers(void **state)
{
	struct extres_json *j = *state;

	extres_json_begin_array(j);
	extres_json_uint(j, 0);
	extres_json_uint(j, 4294967296ULL);
	extres_json_uint(j, UINT64_MAX);
	extres_json_end_array(j);
	assert_text(j, "[0, 4294967296, 18446744073709551615]\n");
}

static void test_escape_ascii(void **state)
{
	(void)state;
	assert_string_text("say \"hi\"", 8, "\"say \\\"hi\\\"\"\n");
	assert_string_text("C:\\dir\\", 7, "\"C:\\\\dir\\\\\"\n");
	assert_string_text("/ok/", 4, "\"/ok/\"\n");
	assert_string_text("\b\t\n\f\r", 5, "\"\\b\\t\\n\\f\\r\"\n");
	/* Other controls, DEL and NUL: \u00XX, nothing lost. */
	assert_string_text("\x01\x1b[31m\x1f\x7f", 8,
			   "\"\\u0001\\u001b[31m\\u001f\\u007f\"\n");
	assert_string_text("a\0b", 3, "\"a\\u0000b\"\n");
}

static void test_non_ascii(void **state)
{
	(void)state;
	/* Written as themselves: Latin, the euro sign, beyond the BMP, a BOM,
	 * the last code point. */
	assert_string_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
			   "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"\n");
	assert_string_text("\xef\xbb\xbf\xf4\x8f\xbf\xbf", 7,
			   "\"\xef\xbb\xbf\xf4\x8f\xbf\xbf\"\n");
	/* C1 controls (U+0085, U+009B: a terminal's CSI), U+2028, U+2029. */
	assert_string_text("\xc2\x85\xc2\x9b\xe2\x80\xa8\xe2\x80\xa9", 10,
			   "\"\\u0085\\u009b\\u2028\\u2029\"\n");
	/* Just past the C1 range: itself. */
	assert_string_text("\xc2\xa0", 2, "\"\xc2\xa0\"\n");
}

#define FFFD "\xef\xbf\xbd"

/* Each byte that is not valid UTF-8 becomes one U+FFFD; what follows it is
 * read afresh. */
static void test_invalid_utf8(void **state)
{
	(void)state;
	assert_string_text("a\x80z", 3, "\"a" FFFD "z\"\n");
	assert_string_text("\xff\xfe", 2, "\"" FFFD FFFD "\"\n");
	/* Cut short, in the middle and at the end. */
	assert_string_text("\xe2\x82x", 3, "\"" FFFD FFFD "x\"\n");
	assert_string_text("x\xf0\x9f\x98", 4, "\"x" FFFD FFFD FFFD "\"\n");
	/* Cut short by `len`: the bytes beyond it are not read. */
	assert_string_text("\xe2\x82\xac", 2, "\"" FFFD FFFD "\"\n");
	/* Overlong forms of '/' and NUL. */
	assert_string_text("\xc0\xaf\xe0\x80\x80", 5,
			   "\"" FFFD FFFD FFFD FFFD FFFD "\"\n");
	/* A surrogate; beyond U+10FFFF. */
	assert_string_text("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"\n");
	assert_string_text("\xf4\x90\x80\x80", 4,
			   "\"" FFFD FFFD FFFD FFFD "\"\n");
	/* A valid character right after an invalid byte survives. */
	assert_string_text("\x80\xc3\xa9", 3, "\"" FFFD "\xc3\xa9\"\n");
}

/* Keys are escaped as strings are, and a long key stays a plain JSON key
 * (libyaml's emitter would write YAML's "? key" past 128 bytes). */
static void test_keys(void **state)
{
	struct extres_json *j = *state;
	char key[256], want[300];

	memset(key, 'k', 255);
	key[255] = '\0';
	snprintf(want, sizeof(want),
		 "{\"a\\\"b\\\\\\t\": \"v\", \"%s\": 1, \"\xc3\xa9" FFFD
		 "\": null}\n",
		 key);
	extres_json_begin_object(j);
	extres_json_key(j, "a\"b\\\t");
	extres_json_string(j, "v");
	extres_json_key(j, key);
	extres_json_uint(j, 1);
	extres_json_key(j, "\xc3\xa9\xff");
	extres_json_null(j);
	extres_json_end_object(j);
	assert_text(j, want);
}

/* Text far beyond the first buffer: the buffer grows, nothing is lost. */
static void test_large(void **state)
{
	struct extres_json *j = *state;
	size_t n = 200000, i;
	char *s = malloc(n), *want = malloc(2 * n + 8), *p = want;

	assert_non_null(s);
	assert_non_null(want);
	*p++ = '"';
	for (i = 0; i < n; i++) {
		s[i] = (char)('a' + i % 26);
		if (i % 1000 == 999) {
			s[i] = '"';
			*p++ = '\\';
		}
		*p++ = s[i];
	}
	*p++ = '"';
	*p++ = '\n';
	assert_int_equal(extres_json_string_len(j, s, n), 0);
	assert_text_len(j, want, (size_t)(p - want));
	free(s);
	free(want);
}

static void test_depth(void **state)
{
	struct extres_json *j = *state;
	char want[2 * EXTRES_JSON_MAX_DEPTH + 2];
	int i;

	for (i = 0; i < EXTRES_JSON_MAX_DEPTH; i++)
		assert_int_equal(extres_json_begin_array(j), 0);
	assert_int_equal(extres_json_begin_array(j), -E2BIG);
	/* Sticky: the document cannot be finished after that. */
	assert_int_equal(extres_json_end_array(j), -E2BIG);

	assert_int_equal(extres_json_new((struct extres_json **)state), 0);
	extres_json_free(j);
	j = *state;
	for (i = 0; i < EXTRES_JSON_MAX_DEPTH; i++)
		extres_json_begin_array(j);
	for (i = 0; i < EXTRES_JSON_MAX_DEPTH; i++)
		extres_json_end_array(j);
	memset(want, '[', EXTRES_JSON_MAX_DEPTH);
	memset(want + EXTRES_JSON_MAX_DEPTH, ']', EXTRES_JSON_MAX_DEPTH);
	want[2 * EXTRES_JSON_MAX_DEPTH] = '\n';
	want[2 * EXTRES_JSON_MAX_DEPTH + 1] = '\0';
	assert_text(j, want);
}

/* Run `calls` on a fresh writer, expecting the last one to fail with
 * -EINVAL, every later call and finish to fail the same way, and nothing to
 * be handed over. */
#define MISUSE(...)                                                            \
	do {                                                                   \
		struct extres_json *m = NULL;                                  \
		char *text = (char *)"untouched";                              \
		size_t len = 7;                                                \
		assert_int_equal(extres_json_new(&m), 0);                      \
		__VA_ARGS__;                                                   \
		assert_int_equal(extres_json_null(m), -EINVAL);                \
		assert_int_equal(extres_json_finish(m, &text, &len), -EINVAL); \
		assert_string_equal(text, "untouched");                        \
		assert_int_equal(len, 7);                                      \
		extres_json_free(m);                                           \
	} while (0)

static void test_misuse(void **state)
{
	(void)state;
	/* A value where an object wants a key. */
	MISUSE(extres_json_begin_object(m);
	       assert_int_equal(extres_json_string(m, "v"), -EINVAL));
	/* A key outside an object, in an array, twice in a row. */
	MISUSE(assert_int_equal(extres_json_key(m, "k"), -EINVAL));
	MISUSE(extres_json_begin_array(m);
	       assert_int_equal(extres_json_key(m, "k"), -EINVAL));
	MISUSE(extres_json_begin_object(m); extres_json_key(m, "k");
	       assert_int_equal(extres_json_key(m, "k2"), -EINVAL));
	/* Ends that do not match, or leave a key without its value. */
	MISUSE(assert_int_equal(extres_json_end_array(m), -EINVAL));
	MISUSE(extres_json_begin_object(m);
	       assert_int_equal(extres_json_end_array(m), -EINVAL));
	MISUSE(extres_json_begin_array(m);
	       assert_int_equal(extres_json_end_object(m), -EINVAL));
	MISUSE(extres_json_begin_object(m); extres_json_key(m, "k");
	       assert_int_equal(extres_json_end_object(m), -EINVAL));
	/* A second top-level value. */
	MISUSE(extres_json_uint(m, 1);
	       assert_int_equal(extres_json_uint(m, 2), -EINVAL));
	MISUSE(extres_json_begin_array(m); extres_json_end_array(m);
	       assert_int_equal(extres_json_begin_object(m), -EINVAL));
}

/* finish refuses a document that is not whole, and a second finish. */
static void test_finish_incomplete(void **state)
{
	struct extres_json *j = *state, *k = NULL;
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_json_finish(j, &text, &len), -EINVAL);
	assert_null(text);
	assert_int_equal(extres_json_uint(j, 1), -EINVAL);

	assert_int_equal(extres_json_new(&k), 0);
	extres_json_begin_array(k);
	assert_int_equal(extres_json_finish(k, &text, &len), -EINVAL);
	assert_null(text);
	extres_json_free(k);

	assert_int_equal(extres_json_new(&k), 0);
	extres_json_uint(k, 7);
	assert_text(k, "7\n");
	assert_int_equal(extres_json_finish(k, &text, &len), -EINVAL);
	assert_int_equal(extres_json_uint(k, 8), -EINVAL);
	assert_null(text);
	assert_int_equal(len, 0);
	extres_json_free(k);
}

/* A writer freed half-way, or never used, leaks nothing (ASan checks). */
static void test_free_half_made(void **state)
{
	struct extres_json *j = *state;

	extres_json_begin_array(j);
	extres_json_string(j, "half");
	extres_json_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
		cmocka_unit_test_setup_teardown(test_coord_shape, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_empty_roots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_scalar_roots, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_big_numbers, setup,
						teardown),
		cmocka_unit_test(test_escape_ascii),
		cmocka_unit_test(test_non_ascii),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_depth, setup, teardown),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test_setup_teardown(test_finish_incomplete, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_free_half_made, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
