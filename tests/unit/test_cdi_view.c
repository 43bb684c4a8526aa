/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/cdi_name.h"
#include "core/cdi_view.h"

/* clang-format off */
#define P(k, v) { (char *)(k), (char *)(v), sizeof(v) - 1 }
#define INFO(props) { sizeof(props) / sizeof(props[0]), props }
/* clang-format on */
#define N(a) (sizeof(a) / sizeof(a[0]))

/* The nodes this fake host has, NULL-terminated. */
static int exists_in(const char *path, void *arg)
{
	const char *const *have = arg;

	for (; *have; have++)
		if (strcmp(*have, path) == 0)
			return 1;
	return 0;
}

static void expect_cdi(const struct extres_cdi_resource *res, size_t n,
		       const char *const *have, const char *want)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(
		extres_view_cdi(res, n, exists_in, (void *)have, &text, &len),
		0);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
}

static const char *const no_nodes[] = { NULL };

static const struct extres_driver_info nvml_info = {
	.env_var = (char *)"CUDA_VISIBLE_DEVICES",
	.env_property = (char *)"uuid",
};
static const struct extres_driver_info amdgpu_info = {
	.env_var = (char *)"ROCR_VISIBLE_DEVICES",
	.env_property = (char *)"unique_id",
	.env_form = EXTRES_ENV_FORM_ROCM_UUID,
};

/* NVIDIA: a node from minor_number (the same as `device`), the variable
 * from uuid, a device by its key (index "3": "0" is the first device's
 * number already), and the control nodes that this host has. */
static void test_nvidia(void **state)
{
	struct extres_property g0[] = { P("index", "0"), P("uuid", "GPU-a"),
					P("minor_number", "0"),
					P("device", "/dev/nvidia0") };
	struct extres_property g1[] = { P("index", "3"), P("uuid", "GPU-b"),
					P("minor_number", "2") };
	const struct extres_info infos[] = { INFO(g0), INFO(g1) };
	const struct extres_view_resource view = { "gpu",    "nvml",	NULL,
						   2,	     { 2, 2 },	infos,
						   N(infos), &nvml_info };
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL,
						     NULL } };
	static const char *const have[] = { "/dev/nvidiactl", "/dev/nvidia-uvm",
					    NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}]}}, "
		"{\"name\": \"1\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=3\", \"CUDA_VISIBLE_DEVICES=GPU-b\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia2\"}]}}, "
		"{\"name\": \"3\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=3\", \"CUDA_VISIBLE_DEVICES=GPU-b\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia2\"}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0,3\", \"CUDA_VISIBLE_DEVICES=GPU-a,GPU-b\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}, {\"path\": \"/dev/nvidia2\"}]}}], "
		"\"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/nvidiactl\"}, {\"path\": \"/dev/nvidia-uvm\"}]}}\n"
		"}\n");
}

/* AMD: the render node from drm_render_minor, /dev/kfd where it is, the
 * ROCm form of the variable; the key is uuid-like (coordination-key). */
static void test_amd(void **state)
{
	struct extres_property a0[] = { P("index", "1"), P("unique_id", "0x1a"),
					P("drm_render_minor", "129"),
					P("device", "/dev/dri/renderD129") };
	const struct extres_info infos[] = { INFO(a0) };
	const struct extres_view_resource view = { "amd",    "amdgpu",	  NULL,
						   1,	     { 1, 1 },	  infos,
						   N(infos), &amdgpu_info };
	const struct extres_cdi_resource res[] = {
		{ &view, "vendor.example/rocm", "unique_id", NULL }
	};
	static const char *const have[] = { "/dev/kfd", "/dev/nvidiactl",
					    NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"amd\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"vendor.example/rocm\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_AMD_INDEXES=1\", \"ROCR_VISIBLE_DEVICES=GPU-000000000000001a\"], \"deviceNodes\": [{\"path\": \"/dev/dri/renderD129\"}]}}, "
		"{\"name\": \"0x1a\", \"containerEdits\": {\"env\": [\"EXTRES_AMD_INDEXES=1\", \"ROCR_VISIBLE_DEVICES=GPU-000000000000001a\"], \"deviceNodes\": [{\"path\": \"/dev/dri/renderD129\"}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_AMD_INDEXES=1\", \"ROCR_VISIBLE_DEVICES=GPU-000000000000001a\"], \"deviceNodes\": [{\"path\": \"/dev/dri/renderD129\"}]}}], "
		"\"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/kfd\"}]}}\n"
		"}\n");
}

/*
 * Other drivers: a `device` under /dev/ that the host has as a device node
 * and nothing else (a path that climbs out, lies elsewhere, or is no node
 * on the host, as /dev/zero here, names no node); no device variable unless
 * configured; keys that are no CDI name, another device's number or
 * another info's key name no second device. An info with nothing to edit
 * is no device, and a resource with none, or whose name makes no kind,
 * has no spec. The second resource follows on its own line.
 */
static void test_other_drivers(void **state)
{
	struct extres_property s0[] = { P("index", "1"),
					P("device", "/dev/null") };
	struct extres_property s1[] = { P("index", "x y"),
					P("device", "/dev/../etc/shadow") };
	struct extres_property s2[] = { P("name", "nothing"),
					P("device", "/tmp/dev") };
	struct extres_property s3[] = { P("index", "7"),
					P("device", "/dev/./null") };
	struct extres_property s4[] = { P("index", "7"),
					P("device", "/dev/zero") };
	const struct extres_info infos[] = { INFO(s0), INFO(s1), INFO(s2),
					     INFO(s3), INFO(s4) };
	struct extres_property f0[] = { P("index", "fpga-0") };
	const struct extres_info fpgas[] = { INFO(f0) };
	const struct extres_info bare[] = { INFO(s2) };
	const struct extres_view_resource views[] = {
		{ "dev", "static", NULL, 5, { 5, 5 }, infos, N(infos), NULL },
		{ "0bad", "static", NULL, 1, { 1, 1 }, fpgas, N(fpgas), NULL },
		{ "empty", "static", NULL, 1, { 1, 1 }, bare, N(bare), NULL },
		{ "fpga",
		  "static",
		  "FPGA",
		  1,
		  { 1, 1 },
		  fpgas,
		  N(fpgas),
		  NULL },
	};
	const struct extres_cdi_resource res[] = {
		{ &views[0], NULL, NULL, NULL },
		{ &views[1], NULL, NULL, NULL },
		{ &views[2], NULL, NULL, NULL },
		{ &views[3], NULL, NULL, NULL },
	};

	static const char *const have[] = { "/dev/null", NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"dev\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/dev\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_DEV_INDEXES=1\"], \"deviceNodes\": [{\"path\": \"/dev/null\"}]}}, "
		"{\"name\": \"1\", \"containerEdits\": {\"env\": [\"EXTRES_DEV_INDEXES=x y\"]}}, "
		"{\"name\": \"3\", \"containerEdits\": {\"env\": [\"EXTRES_DEV_INDEXES=7\"]}}, "
		"{\"name\": \"4\", \"containerEdits\": {\"env\": [\"EXTRES_DEV_INDEXES=7\"]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_DEV_INDEXES=1,x y,7,7\"], \"deviceNodes\": [{\"path\": \"/dev/null\"}]}}]},\n"
		"\"fpga\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/fpga\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_FPGA_INDEXES=fpga-0\", \"FPGA=fpga-0\"]}}, "
		"{\"name\": \"fpga-0\", \"containerEdits\": {\"env\": [\"EXTRES_FPGA_INDEXES=fpga-0\", \"FPGA=fpga-0\"]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_FPGA_INDEXES=fpga-0\", \"FPGA=fpga-0\"]}}]}\n"
		"}\n");
}

/* A shared resource: devices "i-share-K" for every share, with the
 * share's variables and, for mps, the pipe directory mounted. */
static void test_shares(void **state)
{
	struct extres_property g0[] = { P("index", "0"), P("uuid", "GPU-a"),
					P("memory.total", "1000") };
	const struct extres_info infos[] = { INFO(g0) };
	const struct extres_view_resource view = { "gpu",    "nvml",	NULL,
						   1,	     { 1, 1 },	infos,
						   N(infos), &nvml_info };
	struct extres_resource_config rc = {
		.name = "gpu",
		.replicas = 2,
		.sharing = EXTRES_SHARING_MPS,
		.mps_pipe_dir = "/run/mps",
		.mps_log_dir = "/var/log/mps",
	};
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, &rc } };

	(void)state;
	expect_cdi(
		res, N(res), no_nodes,
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\"]}}, "
		"{\"name\": \"0-share-1\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"EXTRES_GPU_SHARE=1/2\", \"CUDA_MPS_PIPE_DIRECTORY=/run/mps\", \"CUDA_MPS_LOG_DIRECTORY=/var/log/mps\", \"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\", \"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=500M\"], "
		"\"mounts\": [{\"hostPath\": \"/run/mps\", \"containerPath\": \"/run/mps\", \"options\": [\"rbind\"]}]}}, "
		"{\"name\": \"0-share-2\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"EXTRES_GPU_SHARE=2/2\", \"CUDA_MPS_PIPE_DIRECTORY=/run/mps\", \"CUDA_MPS_LOG_DIRECTORY=/var/log/mps\", \"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\", \"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=500M\"], "
		"\"mounts\": [{\"hostPath\": \"/run/mps\", \"containerPath\": \"/run/mps\", \"options\": [\"rbind\"]}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\"]}}]}\n"
		"}\n");
}

static void test_no_resources(void **state)
{
	expect_cdi(NULL, 0, no_nodes, "{\n}\n");
}

/* The resource name is a JSON string: escaped as the writer escapes. */
static void test_name_escaped(void **state)
{
	struct extres_property d0[] = { P("device", "/dev/null") };
	const struct extres_info infos[] = { INFO(d0) };
	const struct extres_view_resource view = { "a\"b",   "static", "",
						   1,	     { 1, 1 }, infos,
						   N(infos), NULL };
	const struct extres_cdi_resource res[] = { { &view, "x.io/ab", NULL,
						     NULL } };
	static const char *const have[] = { "/dev/null", NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"a\\\"b\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"x.io/ab\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/null\"}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/null\"}]}}]}\n"
		"}\n");
}

static void test_kind_rules(void **state)
{
	static const char *const good[] = {
		"extres.dev/gpu", "vendor.com/foo",	      "a/b",
		"nvidia.com/gpu", "foo.bar.baz/foo-bar123_B", "a-b.c9/X",
	};
	static const char *const bad[] = {
		"foo",
		"vendor.com/foo/",
		"vendor.com/foo/bar",
		"/gpu",
		"Vendor.com/gpu",
		"9vendor.com/gpu",
		"vendor..com/gpu",
		"vendor-.com/gpu",
		"vendor.com-/gpu",
		"vendor.com/",
		"vendor.com/9gpu",
		"vendor.com/gpu-",
		"vendor.com/g.pu",
		"vendor_x.com/gpu",
		"vendor.com/g pu",
	};
	size_t i;

	for (i = 0; i < N(good); i++)
		assert_null(extres_cdi_kind_problem(good[i]));
	for (i = 0; i < N(bad); i++) {
		assert_non_null(extres_cdi_kind_problem(bad[i]));
	}
	assert_true(extres_cdi_is_device_name("GPU-5e1b0c1a-0000"));
	assert_true(extres_cdi_is_device_name("0"));
	assert_true(extres_cdi_is_device_name("mlx5_0.a"));
	assert_false(extres_cdi_is_device_name(""));
	assert_false(extres_cdi_is_device_name("-0"));
	assert_false(extres_cdi_is_device_name("0-"));
	assert_false(extres_cdi_is_device_name("0000:3b:00.0"));
	assert_false(extres_cdi_is_device_name("a b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvidia),
		cmocka_unit_test(test_amd),
		cmocka_unit_test(test_other_drivers),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_no_resources),
		cmocka_unit_test(test_name_escaped),
		cmocka_unit_test(test_kind_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
