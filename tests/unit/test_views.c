/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "views/views.h"

typedef int view_fn(const struct extres_view_resource *res, size_t n,
		    char **ret_text, size_t *ret_len);

/* A property from literals; values hold no NUL, so sizeof gives the length. */
/* clang-format off */
#define P(k, v) { (char *)(k), (char *)(v), sizeof(v) - 1 }
#define INFO(props) { sizeof(props) / sizeof(props[0]), props }
/* clang-format on */
#define N(a) (sizeof(a) / sizeof(a[0]))

static struct extres_property nv0[] = {
	P("index", "0"),
	P("uuid", "GPU-5e1b0c1a-0000-4000-8000-000000000001"),
	P("name", "NVIDIA H100"),
};
static struct extres_property nv1[] = {
	P("index", "3"),
	P("uuid", "GPU-9a0c2d3e-0000-4000-8000-000000000002"),
	P("name", "NVIDIA H100"),
};
static struct extres_property nv_no_uuid[] = { P("index", "5") };
static const struct extres_info nv_gpus[] = { INFO(nv0), INFO(nv1) };
static const struct extres_info nv_mixed[] = { INFO(nv0), INFO(nv_no_uuid) };

static struct extres_property idx0[] = { P("index", "0") };
static struct extres_property idx1[] = { P("index", "1") };
static struct extres_property no_index[] = { P("name", "lonely") };
static const struct extres_info two[] = { INFO(idx0), INFO(idx1) };
static const struct extres_info holey[] = { INFO(no_index), INFO(idx1) };

/* The view succeeds with exactly `want`, NUL-terminated. */
static void expect_view(view_fn *fn, const struct extres_view_resource *res,
			size_t n, const char *want)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	r = fn(res, n, &text, &len);
	assert_int_equal(r, 0);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
}

/* What the nvml and amdgpu modules declare (extres_driver_ops). */
static const struct extres_driver_info nvml_info = {
	.env_var = (char *)"CUDA_VISIBLE_DEVICES",
	.env_property = (char *)"uuid",
};
static const struct extres_driver_info amdgpu_info = {
	.env_var = (char *)"ROCR_VISIBLE_DEVICES",
	.env_property = (char *)"unique_id",
	.env_form = EXTRES_ENV_FORM_HEX_ID,
	.env_id_prefix = (char *)"GPU-",
};

/* ---- .meta/env ---- */

static void test_env_no_resources(void **state)
{
	expect_view(extres_view_env, NULL, 0, "");
}

static void test_env_indexes_only(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu", "script", NULL, 2, { 0, 0 }, two, N(two), NULL },
		{ "fpga", "static", NULL, 1, { 0, 0 }, two, 1, NULL },
	};

	expect_view(extres_view_env, res, N(res),
		    "export EXTRES_GPU_INDEXES='0,1'\n"
		    "export EXTRES_FPGA_INDEXES='0'\n");
}

static void test_env_nvml_uuids(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "nvml",
		  NULL,
		  2,
		  { 0, 0 },
		  nv_gpus,
		  N(nv_gpus),
		  &nvml_info },
	};

	expect_view(
		extres_view_env, res, N(res),
		"export EXTRES_GPU_INDEXES='0,3'\n"
		"export CUDA_VISIBLE_DEVICES='GPU-5e1b0c1a-0000-4000-8000-000000000001,GPU-9a0c2d3e-0000-4000-8000-000000000002'\n");
}

/* One GPU without a uuid: the indexes name them all the same way. */
static void test_env_nvml_missing_uuid(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "nvml",
		  NULL,
		  2,
		  { 0, 0 },
		  nv_mixed,
		  N(nv_mixed),
		  &nvml_info },
	};

	expect_view(extres_view_env, res, N(res),
		    "export EXTRES_GPU_INDEXES='0,5'\n"
		    "export CUDA_VISIBLE_DEVICES='0,5'\n");
}

static void test_env_amdgpu_unique_ids(void **state)
{
	struct extres_property a0[] = { P("index", "0"),
					P("unique_id", "0x5f6c2b8a1d3e4f70") };
	struct extres_property a1[] = { P("index", "1"),
					P("unique_id", "0x1A") };
	const struct extres_info gpus[] = { INFO(a0), INFO(a1) };
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "amdgpu",
		  NULL,
		  2,
		  { 0, 0 },
		  gpus,
		  N(gpus),
		  &amdgpu_info },
	};

	expect_view(
		extres_view_env, res, N(res),
		"export EXTRES_GPU_INDEXES='0,1'\n"
		"export ROCR_VISIBLE_DEVICES='GPU-5f6c2b8a1d3e4f70,GPU-000000000000001a'\n");
}

/* The hex form writes the driver's prefix, and a module built before the
 * prefix existed (env_form 1, no prefix) still gets the "GPU-" it had. */
static void env_from_ops(uint32_t form, const char *prefix, const char *want)
{
	struct extres_driver_ops ops = {
		.env_var = "DEV_IDS",
		.env_property = "id",
		.env_form = form,
		.env_id_prefix = prefix,
	};
	struct extres_property d0[] = { P("index", "0"), P("id", "0x1A") };
	const struct extres_info devs[] = { INFO(d0) };
	struct extres_driver_info info;
	const struct extres_view_resource res[] = {
		{ "dev", "mock", NULL, 1, { 0, 0 }, devs, N(devs), &info },
	};

	assert_int_equal(extres_driver_info_from_ops(&ops, &info), 0);
	expect_view(extres_view_env, res, N(res), want);
	extres_driver_info_clear(&info);
}

static void test_env_hex_id_prefix(void **state)
{
	env_from_ops(EXTRES_ENV_FORM_HEX_ID, "dev:",
		     "export EXTRES_DEV_INDEXES='0'\n"
		     "export DEV_IDS='dev:000000000000001a'\n");
	env_from_ops(EXTRES_ENV_FORM_HEX_ID, NULL,
		     "export EXTRES_DEV_INDEXES='0'\n"
		     "export DEV_IDS='000000000000001a'\n");
	env_from_ops(EXTRES_ENV_FORM_GPU_HEX_ID, NULL,
		     "export EXTRES_DEV_INDEXES='0'\n"
		     "export DEV_IDS='GPU-000000000000001a'\n");
	env_from_ops(EXTRES_ENV_FORM_AS_IS, "dev:",
		     "export EXTRES_DEV_INDEXES='0'\n"
		     "export DEV_IDS='0x1A'\n");
}

/* Any unique_id that is not a non-zero "0x<hex>" of 64 bits: indexes. */
static void test_env_amdgpu_fallback(void **state)
{
	static const char *const bad[] = {
		"0x0",	  "0x",	   "1a",
		"0X1a",	  "0x 1a", "0x-1",
		"0x0x1a", "0x1g",  "0x10000000000000000",
		"0x1a ",
	};
	struct extres_property a0[] = { P("index", "0"),
					P("unique_id", "0x5f6c2b8a1d3e4f70") };
	struct extres_property a1[] = { P("index", "2"), P("unique_id", "") };
	const struct extres_info gpus[] = { INFO(a0), INFO(a1) };
	const struct extres_info missing[] = { INFO(a0), INFO(idx1) };
	struct extres_view_resource res[] = {
		{ "gpu",
		  "amdgpu",
		  NULL,
		  2,
		  { 0, 0 },
		  gpus,
		  N(gpus),
		  &amdgpu_info },
	};
	size_t i;

	for (i = 0; i < N(bad); i++) {
		a1[1].value = (char *)bad[i];
		a1[1].value_len = strlen(bad[i]);
		expect_view(extres_view_env, res, N(res),
			    "export EXTRES_GPU_INDEXES='0,2'\n"
			    "export ROCR_VISIBLE_DEVICES='0,2'\n");
	}
	res[0].infos = missing;
	expect_view(extres_view_env, res, N(res),
		    "export EXTRES_GPU_INDEXES='0,1'\n"
		    "export ROCR_VISIBLE_DEVICES='0,1'\n");
}

static void test_env_configured(void **state)
{
	const struct extres_view_resource res[] = {
		/* Another name for nvml keeps the uuids. */
		{ "gpu",
		  "nvml",
		  "NVIDIA_VISIBLE_DEVICES",
		  2,
		  { 0, 0 },
		  nv_gpus,
		  N(nv_gpus),
		  &nvml_info },
		/* "" turns the default off. */
		{ "gpu2", "nvml", "", 1, { 0, 0 }, nv_gpus, 1, &nvml_info },
		/* Other drivers give indexes, and nothing unless asked. */
		{ "fpga",
		  "static",
		  "FPGA_DEVICES",
		  2,
		  { 0, 0 },
		  two,
		  N(two),
		  NULL },
		{ "nic", "sysfs", NULL, 1, { 0, 0 }, two, 1, NULL },
		{ "rocm",
		  "amdgpu",
		  "HIP_VISIBLE_DEVICES",
		  1,
		  { 0, 0 },
		  two,
		  1,
		  &amdgpu_info },
	};

	expect_view(
		extres_view_env, res, N(res),
		"export EXTRES_GPU_INDEXES='0,3'\n"
		"export NVIDIA_VISIBLE_DEVICES='GPU-5e1b0c1a-0000-4000-8000-000000000001,GPU-9a0c2d3e-0000-4000-8000-000000000002'\n"
		"export EXTRES_GPU2_INDEXES='0'\n"
		"export EXTRES_FPGA_INDEXES='0,1'\n"
		"export FPGA_DEVICES='0,1'\n"
		"export EXTRES_NIC_INDEXES='0'\n"
		"export EXTRES_ROCM_INDEXES='0'\n"
		"export HIP_VISIBLE_DEVICES='0'\n");
}

static void test_env_names(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu-a.0", "static", NULL, 1, { 0, 0 }, two, 1, NULL },
		{ "Fpga_x", "static", NULL, 1, { 0, 0 }, two, 1, NULL },
		{ "g\xc3\xbc",
		  "static",
		  NULL,
		  1,
		  { 0, 0 },
		  two,
		  1,
		  NULL }, /* "gü" */
	};

	expect_view(extres_view_env, res, N(res),
		    "export EXTRES_GPU_A_0_INDEXES='0'\n"
		    "export EXTRES_FPGA_X_INDEXES='0'\n"
		    "export EXTRES_G___INDEXES='0'\n");
}

/* No infos give ''; an info without `index` adds nothing. */
static void test_env_empty_and_holes(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu", "nvml", NULL, 2, { 0, 0 }, NULL, 0, &nvml_info },
		{ "fpga",
		  "static",
		  "FPGAS",
		  2,
		  { 0, 0 },
		  holey,
		  N(holey),
		  NULL },
		{ "none", "static", "NONE", 1, { 0, 0 }, holey, 1, NULL },
	};

	expect_view(extres_view_env, res, N(res),
		    "export EXTRES_GPU_INDEXES=''\n"
		    "export CUDA_VISIBLE_DEVICES=''\n"
		    "export EXTRES_FPGA_INDEXES='1'\n"
		    "export FPGAS='1'\n"
		    "export EXTRES_NONE_INDEXES=''\n"
		    "export NONE=''\n");
}

/*
 * Hostile values stay data: exact bytes, and /bin/sh reads back each value
 * as it was, exported to the programs it starts.
 */
static void test_env_quoting(void **state)
{
	static const char hostile[] = "it's $HOME `id` \"q\" \\ ; a b";
	struct extres_property q0[] = { P("index", "it's"), P("uuid", "'") };
	struct extres_property q1[] = { P("index", "1"), P("uuid", hostile) };
	const struct extres_info infos[] = { INFO(q0), INFO(q1) };
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "nvml",
		  NULL,
		  2,
		  { 0, 0 },
		  infos,
		  N(infos),
		  &nvml_info },
	};
	const char *want_env =
		"export EXTRES_GPU_INDEXES='it'\\''s,1'\n"
		"export CUDA_VISIBLE_DEVICES=''\\'',it'\\''s $HOME `id` \"q\" \\ ; a b'\n";
	const char *want_out = "it's,1\n',"
			       "it's $HOME `id` \"q\" \\ ; a b\n";
	char out[512], *text = NULL, *cmd = NULL;
	size_t len = 0, got;
	FILE *f;

	expect_view(extres_view_env, res, N(res), want_env);

	assert_int_equal(extres_view_env(res, N(res), &text, &len), 0);
	assert_true(
		asprintf(
			&cmd,
			"%sexec printenv EXTRES_GPU_INDEXES CUDA_VISIBLE_DEVICES",
			text) > 0);
	f = popen(cmd, "r");
	assert_non_null(f);
	got = fread(out, 1, sizeof(out) - 1, f);
	out[got] = '\0';
	assert_int_equal(pclose(f), 0);
	assert_string_equal(out, want_out);
	free(cmd);
	free(text);
}

/* The variable's name is shell code: anything but an identifier is refused. */
static void test_env_bad_variable(void **state)
{
	static const char *const bad[] = {
		"1GPU", "A-B", "A B", "X;rm -rf /;Y", "A=B", "\xc3\xa9",
	};
	struct extres_view_resource res[] = {
		{ "gpu", "static", NULL, 2, { 0, 0 }, two, N(two), NULL },
	};
	char sentinel, *text = &sentinel;
	size_t len = 42, i;

	for (i = 0; i < N(bad); i++) {
		res[0].env_var = bad[i];
		assert_int_equal(extres_view_env(res, N(res), &text, &len),
				 -EINVAL);
		assert_ptr_equal(text, &sentinel);
		assert_int_equal(len, 42);
	}
}

/* ---- .meta/resources.json ---- */

static void test_spark(void **state)
{
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "nvml",
		  NULL,
		  2,
		  { 0, 0 },
		  nv_gpus,
		  N(nv_gpus),
		  &nvml_info },
		{ "fpga", "static", NULL, 2, { 0, 0 }, holey, N(holey), NULL },
		{ "nic", "sysfs", NULL, 1, { 0, 0 }, NULL, 0, NULL },
	};

	expect_view(
		extres_view_spark, res, N(res),
		"[{\"id\": {\"componentName\": \"spark.executor\", \"resourceName\": \"gpu\"}, \"addresses\": [\"0\", \"3\"]}, "
		"{\"id\": {\"componentName\": \"spark.executor\", \"resourceName\": \"fpga\"}, \"addresses\": [\"1\"]}, "
		"{\"id\": {\"componentName\": \"spark.executor\", \"resourceName\": \"nic\"}, \"addresses\": []}, "
		"{\"id\": {\"componentName\": \"spark.driver\", \"resourceName\": \"gpu\"}, \"addresses\": [\"0\", \"3\"]}, "
		"{\"id\": {\"componentName\": \"spark.driver\", \"resourceName\": \"fpga\"}, \"addresses\": [\"1\"]}, "
		"{\"id\": {\"componentName\": \"spark.driver\", \"resourceName\": \"nic\"}, \"addresses\": []}, "
		"{\"id\": {\"componentName\": \"spark.worker\", \"resourceName\": \"gpu\"}, \"addresses\": [\"0\", \"3\"]}, "
		"{\"id\": {\"componentName\": \"spark.worker\", \"resourceName\": \"fpga\"}, \"addresses\": [\"1\"]}, "
		"{\"id\": {\"componentName\": \"spark.worker\", \"resourceName\": \"nic\"}, \"addresses\": []}]\n");
}

static void test_spark_escaping(void **state)
{
	struct extres_property e0[] = { P("index", "a\"b\\c\td") };
	const struct extres_info infos[] = { INFO(e0) };
	const struct extres_view_resource res[] = {
		{ "g\"p\\u",
		  "static",
		  NULL,
		  1,
		  { 0, 0 },
		  infos,
		  N(infos),
		  NULL },
	};

	expect_view(
		extres_view_spark, res, N(res),
		"[{\"id\": {\"componentName\": \"spark.executor\", \"resourceName\": \"g\\\"p\\\\u\"}, \"addresses\": [\"a\\\"b\\\\c\\td\"]}, "
		"{\"id\": {\"componentName\": \"spark.driver\", \"resourceName\": \"g\\\"p\\\\u\"}, \"addresses\": [\"a\\\"b\\\\c\\td\"]}, "
		"{\"id\": {\"componentName\": \"spark.worker\", \"resourceName\": \"g\\\"p\\\\u\"}, \"addresses\": [\"a\\\"b\\\\c\\td\"]}]\n");
}

static void test_spark_no_resources(void **state)
{
	expect_view(extres_view_spark, NULL, 0, "[]\n");
}

/* ---- .meta/extres.json ---- */

static void test_json(void **state)
{
	/* The driver's order, not sorted. */
	struct extres_property f0[] = { P("uuid", "F-1"), P("index", "7"),
					P("bitstream", "a\"b\\c\x01") };
	const struct extres_info fpgas[] = { INFO(f0) };
	const struct extres_view_resource res[] = {
		{ "gpu",
		  "nvml",
		  NULL,
		  2,
		  { 0, 0 },
		  nv_gpus,
		  N(nv_gpus),
		  &nvml_info },
		{ "fpga",
		  "/opt/extres/fpga.so",
		  "",
		  1,
		  { 0, 0 },
		  fpgas,
		  N(fpgas),
		  NULL },
		{ "nic", "sysfs", NULL, 4096, { 0, 0 }, NULL, 0, NULL },
	};

	expect_view(
		extres_view_json, res, N(res),
		"{\"resources\": {"
		"\"gpu\": {\"driver\": \"nvml\", \"amount\": 2, \"infos\": ["
		"{\"index\": \"0\", \"uuid\": \"GPU-5e1b0c1a-0000-4000-8000-000000000001\", \"name\": \"NVIDIA H100\"}, "
		"{\"index\": \"3\", \"uuid\": \"GPU-9a0c2d3e-0000-4000-8000-000000000002\", \"name\": \"NVIDIA H100\"}]}, "
		"\"fpga\": {\"driver\": \"/opt/extres/fpga.so\", \"amount\": 1, \"infos\": ["
		"{\"uuid\": \"F-1\", \"index\": \"7\", \"bitstream\": \"a\\\"b\\\\c\\u0001\"}]}, "
		"\"nic\": {\"driver\": \"sysfs\", \"amount\": 4096, \"infos\": []}}}\n");
}

/* value_len, not strlen, says where a value ends. */
static void test_json_value_len(void **state)
{
	struct extres_property v0[] = { { (char *)"index", (char *)"12", 1 } };
	const struct extres_info infos[] = { INFO(v0) };
	const struct extres_view_resource res[] = {
		{ "gpu", "static", NULL, 1, { 0, 0 }, infos, N(infos), NULL },
	};

	expect_view(
		extres_view_json, res, N(res),
		"{\"resources\": {\"gpu\": {\"driver\": \"static\", \"amount\": 1, \"infos\": [{\"index\": \"1\"}]}}}\n");
}

static void test_json_no_resources(void **state)
{
	expect_view(extres_view_json, NULL, 0, "{\"resources\": {}}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_no_resources),
		cmocka_unit_test(test_env_indexes_only),
		cmocka_unit_test(test_env_nvml_uuids),
		cmocka_unit_test(test_env_nvml_missing_uuid),
		cmocka_unit_test(test_env_amdgpu_unique_ids),
		cmocka_unit_test(test_env_amdgpu_fallback),
		cmocka_unit_test(test_env_hex_id_prefix),
		cmocka_unit_test(test_env_configured),
		cmocka_unit_test(test_env_names),
		cmocka_unit_test(test_env_empty_and_holes),
		cmocka_unit_test(test_env_quoting),
		cmocka_unit_test(test_env_bad_variable),
		cmocka_unit_test(test_spark),
		cmocka_unit_test(test_spark_escaping),
		cmocka_unit_test(test_spark_no_resources),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_value_len),
		cmocka_unit_test(test_json_no_resources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
