/* SPDX-License-Identifier: MIT */
/* base/text.c: the edit distance and the nearest candidate, which the
 * "did you mean" of unknown keys and drivers rest on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/macro.h"
#include "base/text.h"

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
		cmocka_unit_test(test_edit_distance),
		cmocka_unit_test(test_nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
