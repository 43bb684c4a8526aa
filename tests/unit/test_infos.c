/* SPDX-License-Identifier: MIT */
/* The candidate list: what a driver may report and what the core refuses. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host/infos.h"

static int setup(void **state)
{
	struct extres_infos *infos = NULL;

	if (extres_infos_new(&infos) < 0)
		return -1;
	*state = infos;
	return 0;
}

static int teardown(void **state)
{
	extres_infos_free(*state);
	return 0;
}

/* A string of `len` copies of `c`, for the length limits. */
static char *repeat(char c, size_t len)
{
	char *s = malloc(len + 1);

	assert_non_null(s);
	memset(s, c, len);
	s[len] = '\0';
	return s;
}

static void test_begin_add(void **state)
{
	struct extres_infos *infos = *state;
	struct extres_err err = { "" };

	assert_int_equal(infos->n, 0);
	assert_int_equal(extres_infos_begin(infos, &err), 0);
	assert_int_equal(extres_infos_add(infos, "index", "0", &err), 0);
	assert_int_equal(extres_infos_add(infos, "uuid", "GPU-a", &err), 0);
	assert_int_equal(extres_infos_begin(infos, &err), 0);
	assert_int_equal(extres_infos_add(infos, "index", "1", &err), 0);
	/* Keys repeat freely across infos; "a.b" is not a leading dot. */
	assert_int_equal(
		extres_infos_add(infos, "pci.bus_id", "0000:01:00.0", &err), 0);
	assert_int_equal(extres_infos_begin(infos, &err), 0);
	assert_string_equal(err.msg, "");

	assert_int_equal(infos->n, 3);
	assert_int_equal(infos->items[0].n_props, 2);
	assert_string_equal(infos->items[0].props[0].key, "index");
	assert_string_equal(infos->items[0].props[0].value, "0");
	assert_int_equal(infos->items[0].props[0].value_len, 1);
	assert_string_equal(infos->items[0].props[1].key, "uuid");
	assert_string_equal(infos->items[0].props[1].value, "GPU-a");
	assert_int_equal(infos->items[0].props[1].value_len, 5);
	assert_int_equal(infos->items[1].n_props, 2);
	assert_string_equal(infos->items[1].props[1].key, "pci.bus_id");
	assert_string_equal(infos->items[1].props[1].value, "0000:01:00.0");
	assert_int_equal(infos->items[1].props[1].value_len, 12);
	/* An info may have no properties (the core decides what that means). */
	assert_int_equal(infos->items[2].n_props, 0);
}

/* The list owns copies, not the caller's strings. */
static void test_add_copies(void **state)
{
	struct extres_infos *infos = *state;
	char key[] = "index", value[] = "3";

	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_int_equal(extres_infos_add(infos, key, value, NULL), 0);
	key[0] = 'X';
	value[0] = '9';
	assert_string_equal(infos->items[0].props[0].key, "index");
	assert_string_equal(infos->items[0].props[0].value, "3");
}

/* Every rejection: exact errno and message, and the info is unchanged. */
static void expect_reject(struct extres_infos *infos, const char *key,
			  const char *value, int errnum, const char *msg)
{
	struct extres_err err = { "" };
	size_t n = infos->n ? infos->items[infos->n - 1].n_props : 0;

	assert_int_equal(extres_infos_add(infos, key, value, &err), -errnum);
	assert_string_equal(err.msg, msg);
	if (infos->n)
		assert_int_equal(infos->items[infos->n - 1].n_props, n);
	/* No message is kept without a place to keep it, and no crash. */
	assert_int_equal(extres_infos_add(infos, key, value, NULL), -errnum);
}

static void test_reject(void **state)
{
	struct extres_infos *infos = *state;

	expect_reject(infos, "index", "0", EINVAL,
		      "property 'index' given before any info");
	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_int_equal(extres_infos_add(infos, "index", "0", NULL), 0);

	expect_reject(infos, "", "x", EINVAL, "empty property name");
	expect_reject(infos, "a/b", "x", EINVAL,
		      "property name 'a/b' contains '/'");
	expect_reject(infos, "/", "x", EINVAL,
		      "property name '/' contains '/'");
	expect_reject(infos, ".x", "x", EINVAL,
		      "property name '.x' starts with '.'");
	expect_reject(infos, ".", "x", EINVAL,
		      "property name '.' starts with '.'");
	expect_reject(infos, "..", "x", EINVAL,
		      "property name '..' starts with '.'");
	expect_reject(infos, "a\tb", "x", EINVAL,
		      "property name 'a\tb' contains a control character");
	expect_reject(infos, "a\nb", "x", EINVAL,
		      "property name 'a\nb' contains a control character");
	expect_reject(infos, "index", "1", EINVAL,
		      "property 'index' given twice in info 0");
	expect_reject(
		infos, "index", "", EINVAL,
		"property 'index' has an empty value (it names the device)");
	expect_reject(infos, "name", "two\nlines", EINVAL,
		      "property 'name' has a value with a newline");
	expect_reject(infos, "name", "\n", EINVAL,
		      "property 'name' has a value with a newline");

	assert_int_equal(infos->n, 1);
	assert_int_equal(infos->items[0].n_props, 1);
	/* Any other key may be empty: a file of just "\n". */
	assert_int_equal(extres_infos_add(infos, "name", "", NULL), 0);
	assert_string_equal(extres_info_get(&infos->items[0], "name"), "");
}

static void test_lengths(void **state)
{
	struct extres_infos *infos = *state;
	char *key_ok = repeat('k', EXTRES_MAX_KEY_LEN);
	char *key_long = repeat('k', EXTRES_MAX_KEY_LEN + 1);
	char *value_ok = repeat('v', EXTRES_MAX_VALUE_LEN);
	char *value_long = repeat('v', EXTRES_MAX_VALUE_LEN + 1);

	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_int_equal(extres_infos_add(infos, key_ok, "x", NULL), 0);
	assert_int_equal(extres_infos_add(infos, "big", value_ok, NULL), 0);
	assert_int_equal(infos->items[0].props[1].value_len,
			 EXTRES_MAX_VALUE_LEN);

	expect_reject(
		infos, key_long, "x", EINVAL,
		"property name 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...' "
		"is longer than 255 bytes");
	expect_reject(
		infos, "bigger", value_long, EINVAL,
		"property 'bigger' has a value of 65537 bytes (limit 65536)");
	assert_int_equal(infos->items[0].n_props, 2);

	free(key_ok);
	free(key_long);
	free(value_ok);
	free(value_long);
}

static void test_too_many_properties(void **state)
{
	struct extres_infos *infos = *state;
	char key[16];
	int i;

	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	for (i = 0; i < EXTRES_MAX_PROPERTIES; i++) {
		snprintf(key, sizeof(key), "p%d", i);
		assert_int_equal(extres_infos_add(infos, key, "x", NULL), 0);
	}
	expect_reject(infos, "one-more", "x", E2BIG,
		      "info 1 has more than 256 properties");
	assert_int_equal(infos->items[1].n_props, EXTRES_MAX_PROPERTIES);
}

static void test_too_many_infos(void **state)
{
	struct extres_infos *infos = *state;
	struct extres_err err = { "" };
	int i;

	for (i = 0; i < EXTRES_MAX_INFOS; i++)
		assert_int_equal(extres_infos_begin(infos, &err), 0);
	assert_int_equal(extres_infos_begin(infos, &err), -E2BIG);
	assert_string_equal(err.msg, "more than 4096 infos (the limit)");
	assert_int_equal(infos->n, EXTRES_MAX_INFOS);
	/* The last info is still usable. */
	assert_int_equal(extres_infos_add(infos, "index", "4095", NULL), 0);
}

/* 1024 infos of 255 properties are the 262144 entries extres serves: one
 * more info or property is refused, and the list stays as it was. */
static void test_too_many_entries(void **state)
{
	struct extres_infos *infos = *state;
	struct extres_err err = { "" };
	char key[16];
	int i, k;

	for (i = 0; i < 1024; i++) {
		assert_int_equal(extres_infos_begin(infos, &err), 0);
		for (k = 0; k < 255; k++) {
			snprintf(key, sizeof(key), "p%d", k);
			assert_int_equal(
				extres_infos_add(infos, key, "x", &err), 0);
		}
	}
	assert_int_equal(infos->size.entries, EXTRES_MAX_ENTRIES);
	assert_int_equal(extres_infos_begin(infos, &err), -E2BIG);
	assert_string_equal(
		err.msg,
		"262145 infos and properties, more than the 262144 extres serves");
	assert_int_equal(infos->n, 1024);
	expect_reject(
		infos, "p255", "x", E2BIG,
		"property 'p255' of info 1023: 262145 infos and properties, more than the 262144 extres serves");
	assert_int_equal(infos->size.entries, EXTRES_MAX_ENTRIES);
}

/* 256 values of 65532 bytes under 4-byte names are the 16 MiB extres
 * serves: one byte more is refused, and the list stays as it was. */
static void test_too_many_bytes(void **state)
{
	struct extres_infos *infos = *state;
	struct extres_err err = { "" };
	char *value = repeat('v', 65532), key[16];
	int i;

	for (i = 0; i < 256; i++) {
		if (i % 128 == 0)
			assert_int_equal(extres_infos_begin(infos, &err), 0);
		snprintf(key, sizeof(key), "k%03d", i);
		assert_int_equal(extres_infos_add(infos, key, value, &err), 0);
	}
	assert_int_equal(infos->size.bytes, EXTRES_MAX_BYTES);
	expect_reject(
		infos, "z", "v", E2BIG,
		"property 'z' of info 1: 16777218 bytes of property names and values, more than the 16777216 extres serves");
	assert_int_equal(infos->size.bytes, EXTRES_MAX_BYTES);
	/* An info without properties adds no bytes. */
	assert_int_equal(extres_infos_begin(infos, &err), 0);
	free(value);
}

/* The sum over several lists (the whole tree) is checked as it grows. */
static void test_size_add(void **state)
{
	struct extres_property props[] = { { "index", "0", 1 },
					   { "uuid", "GPU-a", 5 } };
	struct extres_info info = { 2, props };
	struct extres_infos_size size = { EXTRES_MAX_ENTRIES - 3,
					  EXTRES_MAX_BYTES - 15 };
	struct extres_err err = { "" };

	assert_int_equal(extres_infos_size_add(&size, &info, 1, &err), 0);
	assert_int_equal(size.entries, EXTRES_MAX_ENTRIES);
	assert_int_equal(size.bytes, EXTRES_MAX_BYTES);
	assert_int_equal(extres_infos_size_add(&size, NULL, 0, &err), 0);
	assert_int_equal(extres_infos_size_add(&size, &info, 1, &err), -E2BIG);
	assert_string_equal(
		err.msg,
		"262147 infos and properties, more than the 262144 extres serves");
	size = (struct extres_infos_size){ 0, EXTRES_MAX_BYTES - 14 };
	assert_int_equal(extres_infos_size_add(&size, &info, 1, NULL), -E2BIG);
	assert_int_equal(size.bytes, EXTRES_MAX_BYTES + 1);
}

static void test_info_get(void **state)
{
	struct extres_infos *infos = *state;

	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_null(extres_info_get(&infos->items[0], "index"));
	assert_int_equal(extres_infos_add(infos, "index", "0", NULL), 0);
	assert_int_equal(extres_infos_add(infos, "indexes", "1", NULL), 0);
	assert_string_equal(extres_info_get(&infos->items[0], "index"), "0");
	assert_string_equal(extres_info_get(&infos->items[0], "indexes"), "1");
	assert_null(extres_info_get(&infos->items[0], "inde"));
	assert_null(extres_info_get(&infos->items[0], "Index"));
}

static void test_info_copy(void **state)
{
	struct extres_infos *infos = *state;
	struct extres_info copy = { 0 }, empty = { 0 };
	const struct extres_info *src;
	size_t i;

	assert_int_equal(extres_infos_begin(infos, NULL), 0);
	assert_int_equal(extres_infos_add(infos, "index", "2", NULL), 0);
	assert_int_equal(extres_infos_add(infos, "uuid", "GPU-c", NULL), 0);
	src = &infos->items[0];

	assert_int_equal(extres_info_copy(src, &copy), 0);
	assert_int_equal(copy.n_props, 2);
	for (i = 0; i < 2; i++) {
		assert_ptr_not_equal(copy.props[i].key, src->props[i].key);
		assert_ptr_not_equal(copy.props[i].value, src->props[i].value);
		assert_string_equal(copy.props[i].key, src->props[i].key);
		assert_string_equal(copy.props[i].value, src->props[i].value);
		assert_int_equal(copy.props[i].value_len,
				 src->props[i].value_len);
	}
	/* The copy outlives the list it came from. */
	extres_infos_free(infos);
	*state = NULL;
	assert_string_equal(extres_info_get(&copy, "uuid"), "GPU-c");
	extres_info_clear(&copy);
	assert_int_equal(copy.n_props, 0);
	assert_null(copy.props);

	assert_int_equal(extres_info_copy(&empty, &copy), 0);
	assert_int_equal(copy.n_props, 0);
	extres_info_clear(&copy);
}

static void test_free_null(void **state)
{
	extres_infos_free(NULL);
	extres_info_clear(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_begin_add, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_add_copies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lengths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_properties, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many_infos, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_too_many_bytes, setup,
						teardown),
		cmocka_unit_test(test_size_add),
		cmocka_unit_test_setup_teardown(test_info_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_copy, setup,
						teardown),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
