/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "views/json_view.h"

/* clang-format off */
#define P(k, v) { (char *)(k), (char *)(v), sizeof(v) - 1 }
#define INFO(props) { sizeof(props) / sizeof(props[0]), props }
/* clang-format on */

static struct extres_property a[] = { P("index", "0"), P("uuid", "GPU-a") };
static struct extres_property b[] = { P("index", "1"), P("name", "x\"y") };
static struct extres_info ab[] = { INFO(a), INFO(b) };

static void expect_doc(const struct extres_json_resource *res, size_t n,
		       const char *want)
{
	size_t len = 0;
	char *text = NULL;

	assert_int_equal(extres_json_view(res, n, &text, &len), 0);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
}

/* What the daemon serves: infos, no candidates. */
static void test_infos(void **state)
{
	struct extres_json_resource r[] = {
		{ .name = "gpu",
		  .driver = "nvml",
		  .amount = 2,
		  .infos = ab,
		  .n_infos = 2 },
		{ .name = "nic",
		  .driver = "static",
		  .amount = 1,
		  .infos = ab,
		  .n_infos = 0 },
	};

	expect_doc(
		r, 2,
		"{\"resources\": {\"gpu\": {\"driver\": \"nvml\", \"amount\": 2, "
		"\"infos\": [{\"index\": \"0\", \"uuid\": \"GPU-a\"}, "
		"{\"index\": \"1\", \"name\": \"x\\\"y\"}]}, "
		"\"nic\": {\"driver\": \"static\", \"amount\": 1, \"infos\": []}}}\n");
}

/* What discover finds: the same shape, candidates instead of infos. */
static void test_candidates(void **state)
{
	struct extres_infos found = { .n = 2, .cap = 2, .items = ab };
	struct extres_infos none = { 0 };
	struct extres_json_resource r[] = {
		{ .name = "gpu",
		  .driver = "static",
		  .amount = 1,
		  .candidates = &found },
		{ .name = "fpga",
		  .driver = "script",
		  .amount = 3,
		  .candidates = &none },
	};

	expect_doc(
		r, 2,
		"{\"resources\": {\"gpu\": {\"driver\": \"static\", \"amount\": 1, "
		"\"candidates\": [{\"index\": \"0\", \"uuid\": \"GPU-a\"}, "
		"{\"index\": \"1\", \"name\": \"x\\\"y\"}]}, "
		"\"fpga\": {\"driver\": \"script\", \"amount\": 3, \"candidates\": []}}}\n");
}

/* A range or `all` says its form after the number taken; an exact count
 * (Flink's integer) does not. */
static void test_amount_form(void **state)
{
	static const struct extres_amount range = { 2, 4 }, all = { 1, 4096 },
					  exact = { 2, 2 };
	struct extres_json_resource r[] = {
		{ .name = "a",
		  .driver = "static",
		  .amount = 3,
		  .configured = &range,
		  .infos = ab,
		  .n_infos = 0 },
		{ .name = "b",
		  .driver = "static",
		  .amount = 8,
		  .configured = &all,
		  .infos = ab,
		  .n_infos = 0 },
		{ .name = "c",
		  .driver = "static",
		  .amount = 2,
		  .configured = &exact,
		  .infos = ab,
		  .n_infos = 0 },
	};

	expect_doc(
		r, 3,
		"{\"resources\": {\"a\": {\"driver\": \"static\", \"amount\": 3, "
		"\"amount-form\": \"2-4\", \"infos\": []}, "
		"\"b\": {\"driver\": \"static\", \"amount\": 8, "
		"\"amount-form\": \"all\", \"infos\": []}, "
		"\"c\": {\"driver\": \"static\", \"amount\": 2, \"infos\": []}}}\n");
}

static void test_empty(void **state)
{
	expect_doc(NULL, 0, "{\"resources\": {}}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_infos),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_amount_form),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
