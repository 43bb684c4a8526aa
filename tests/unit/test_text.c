/* SPDX-License-Identifier: MIT */
/* base/text.c's UTF-8 for text views: any bytes in, one line of valid
 * UTF-8 out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/text.h"

#define FFFD "\xef\xbf\xbd"

/* extres_put_line_text() of the `len` bytes at `s` must be `want`, and
 * extres_line_text() with room to spare the same. */
static void assert_line(const char *s, size_t len, const char *want)
{
	char *text = NULL, buf[256];
	size_t text_len = 0;
	FILE *f = open_memstream(&text, &text_len);

	assert_non_null(f);
	extres_put_line_text(f, s, len);
	assert_int_equal(extres_memstream_close(f, &text), 0);
	assert_string_equal(text, want);
	assert_int_equal(text_len, strlen(want));
	free(text);
	assert_int_equal(extres_line_text(buf, sizeof(buf), s, len),
			 strlen(want));
	assert_string_equal(buf, want);
}

static void test_next(void **state)
{
	uint32_t cp = 0;

	(void)state;
	assert_int_equal(extres_utf8_next((const unsigned char *)"a", 1, &cp),
			 1);
	assert_int_equal(cp, 'a');
	assert_int_equal(
		extres_utf8_next((const unsigned char *)"\xe2\x82\xac", 3, &cp),
		3);
	assert_int_equal(cp, 0x20ac);
	/* One byte at a time for what is not UTF-8, each a U+FFFD. */
	assert_int_equal(
		extres_utf8_next((const unsigned char *)"\xe2\x82\xac", 2, &cp),
		1);
	assert_int_equal(cp, EXTRES_UTF8_REPLACEMENT);
	assert_int_equal(
		extres_utf8_next((const unsigned char *)"\xff", 1, &cp), 1);
	assert_int_equal(cp, EXTRES_UTF8_REPLACEMENT);
}

static void test_control(void **state)
{
	(void)state;
	assert_true(extres_is_control(0));
	assert_true(extres_is_control('\t'));
	assert_true(extres_is_control('\n'));
	assert_true(extres_is_control(0x1f));
	assert_true(extres_is_control(0x7f));
	assert_true(extres_is_control(0x85));
	assert_true(extres_is_control(0x9f));
	assert_true(extres_is_control(0x2028));
	assert_true(extres_is_control(0x2029));
	assert_false(extres_is_control(' '));
	assert_false(extres_is_control('~'));
	assert_false(extres_is_control(0xa0));
	assert_false(extres_is_control(EXTRES_UTF8_REPLACEMENT));
}

static void test_line(void **state)
{
	(void)state;
	assert_line("", 0, "");
	assert_line("sleep", 5, "sleep");
	/* Valid UTF-8 as itself: Latin, the euro sign, beyond the BMP. */
	assert_line("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
		    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	/* Controls that would end a line or a field, or drive a terminal. */
	assert_line("a\tb\nc\rd\x1b[31m\x7f", 13, "a?b?c?d?[31m?");
	assert_line("\xc2\x85\xe2\x80\xa8\xe2\x80\xa9", 8, "???");
	assert_line("a\0b", 3, "a?b");
	/* Each byte that is not UTF-8 is one U+FFFD; what follows is read
	 * afresh. */
	assert_line("sl\xff\xfe\tep", 7, "sl" FFFD FFFD "?ep");
	assert_line("\xe2\x82x", 3, FFFD FFFD "x");
	assert_line("\xc0\xaf", 2, FFFD FFFD);
	assert_line("\xed\xa0\x80", 3, FFFD FFFD FFFD);
	assert_line("\x80\xc3\xa9", 3, FFFD "\xc3\xa9");
	/* A character cut by `len` (as the kernel cuts a comm at 15
	 * bytes). */
	assert_line("abc\xe2\x82\xac", 5, "abc" FFFD FFFD);
}

/* A buffer too small is cut between characters, never inside one. */
static void test_line_cut(void **state)
{
	char buf[8];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(extres_line_text(buf, 1, "abc", 3), 0);
	assert_string_equal(buf, "");
	assert_int_equal(extres_line_text(buf, 3, "abc", 3), 2);
	assert_string_equal(buf, "ab");
	assert_int_equal(extres_line_text(buf, 4, "abc", 3), 3);
	assert_string_equal(buf, "abc");
	/* "a" then a U+FFFD that needs 3 bytes: 4 bytes of room hold "a". */
	assert_int_equal(extres_line_text(buf, 4, "a\xff", 2), 1);
	assert_string_equal(buf, "a");
	assert_int_equal(extres_line_text(buf, 5, "a\xff", 2), 4);
	assert_string_equal(buf, "a" FFFD);
	assert_int_equal(extres_line_text(buf, 4, "\xe2\x82\xac!", 4), 3);
	assert_string_equal(buf, "\xe2\x82\xac");
	assert_int_equal(extres_line_text(buf, 3, "\xe2\x82\xac!", 4), 0);
	assert_string_equal(buf, "");
}

static void test_edit_distance(void **state)
{
	char long_text[EXTRES_EDIT_MAX + 2];

	(void)state;
	assert_int_equal(extres_edit_distance("", ""), 0);
	assert_int_equal(extres_edit_distance("amount", "amount"), 0);
	assert_int_equal(extres_edit_distance("amout", "amount"), 1);
	assert_int_equal(extres_edit_distance("amount", "amout"), 1);
	/* A swap of neighbours is one edit, not two. */
	assert_int_equal(extres_edit_distance("nvidai", "nvidia"), 1);
	assert_int_equal(extres_edit_distance("drvier", "driver"), 1);
	assert_int_equal(extres_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(extres_edit_distance("", "abc"), 3);
	memset(long_text, 'a', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	assert_int_equal(extres_edit_distance(long_text, "a"), SIZE_MAX);
}

static void test_nearest(void **state)
{
	static const char *const keys[] = { "amount", "driver", NULL,
					    "driver.class", "pool" };

	(void)state;
	assert_string_equal(extres_nearest("amout", keys, ARRAY_SIZE(keys)),
			    "amount");
	assert_string_equal(extres_nearest("drivr", keys, ARRAY_SIZE(keys)),
			    "driver");
	assert_string_equal(extres_nearest("driver", keys, ARRAY_SIZE(keys)),
			    "driver");
	/* Too far to be a typo, or too short to tell. */
	assert_null(extres_nearest("colour", keys, ARRAY_SIZE(keys)));
	assert_null(extres_nearest("pl", keys, ARRAY_SIZE(keys)));
	assert_null(extres_nearest("x", keys, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_line_cut),
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
