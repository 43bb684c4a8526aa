/* SPDX-License-Identifier: MIT */
/* The YAML writer: exact text, strings that stay strings, misuse refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/yaml_write.h"

/* Finish `w` and require exactly `want`. */
static void expect_text(struct extres_yaml_write *w, const char *want)
{
	struct extres_err err = { "" };
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_yaml_write_finish(w, &text, &len, &err), 0);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
	extres_yaml_write_free(w);
}

/* Nested block mappings, no document markers, as a container spec wants. */
static void block_mappings(void **state)
{
	struct extres_yaml_write *w = NULL;

	(void)state;
	assert_int_equal(extres_yaml_write_new(&w), 0);
	assert_int_equal(extres_yaml_write_begin_mapping(w), 0);
	assert_int_equal(extres_yaml_write_string(w, "resources"), 0);
	assert_int_equal(extres_yaml_write_begin_mapping(w), 0);
	assert_int_equal(extres_yaml_write_string(w, "limits"), 0);
	assert_int_equal(extres_yaml_write_begin_mapping(w), 0);
	assert_int_equal(extres_yaml_write_string(w, "nvidia.com/gpu"), 0);
	assert_int_equal(extres_yaml_write_plain(w, "2"), 0);
	assert_int_equal(extres_yaml_write_end_mapping(w), 0);
	assert_int_equal(extres_yaml_write_end_mapping(w), 0);
	assert_int_equal(extres_yaml_write_end_mapping(w), 0);
	expect_text(w, "resources:\n"
		       "  limits:\n"
		       "    nvidia.com/gpu: 2\n");
}

/* A string whose plain form would read back as a number, a boolean or
 * null, under YAML 1.1 or 1.2, is quoted; other strings are not. */
static void strings_stay_strings(void **state)
{
	static const char *const quoted[] = { "1",    "1.5", "-2",  ".5",
					      "true", "No",  "OFF", "y",
					      "null", "~",   ".inf" };
	static const char *const plain[] = { "gpu", "yes-please", "a1", "a-b" };
	struct extres_yaml_write *w = NULL;
	char want[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++) {
		assert_int_equal(extres_yaml_write_new(&w), 0);
		assert_int_equal(extres_yaml_write_string(w, quoted[i]), 0);
		snprintf(want, sizeof(want), "\"%s\"\n", quoted[i]);
		expect_text(w, want);
	}
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		assert_int_equal(extres_yaml_write_new(&w), 0);
		assert_int_equal(extres_yaml_write_string(w, plain[i]), 0);
		snprintf(want, sizeof(want), "%s\n", plain[i]);
		expect_text(w, want);
	}
}

/* A long name stays on one line. */
static void no_folding(void **state)
{
	struct extres_yaml_write *w = NULL;
	char name[301], want[320];

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (size_t i = 10; i < sizeof(name) - 1; i += 11)
		name[i] = ' ';
	assert_int_equal(extres_yaml_write_new(&w), 0);
	assert_int_equal(extres_yaml_write_string(w, name), 0);
	snprintf(want, sizeof(want), "%s\n", name);
	expect_text(w, want);
}

/* A mapping left open fails at finish with libyaml's reason; the error is
 * sticky and nothing is handed over. */
static void misuse(void **state)
{
	struct extres_yaml_write *w = NULL;
	struct extres_err err = { "" };
	char *text = (char *)"untouched";
	size_t len = 7;

	(void)state;
	assert_int_equal(extres_yaml_write_new(&w), 0);
	assert_int_equal(extres_yaml_write_begin_mapping(w), 0);
	assert_int_equal(extres_yaml_write_string(w, "key"), 0);
	assert_int_equal(extres_yaml_write_finish(w, &text, &len, &err),
			 -EINVAL);
	assert_string_equal(text, "untouched");
	assert_int_equal(len, 7);
	assert_true(err.msg[0] != '\0');
	/* After finish, every call fails. */
	assert_int_equal(extres_yaml_write_plain(w, "1"), -EINVAL);
	extres_yaml_write_free(w);
	extres_yaml_write_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(block_mappings),
		cmocka_unit_test(strings_stay_strings),
		cmocka_unit_test(no_folding),
		cmocka_unit_test(misuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
