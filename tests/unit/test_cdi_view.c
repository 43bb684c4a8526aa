/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/cdi_base.h"
#include "config/cdi_name.h"
#include "views/cdi_view.h"

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

static char *cuda_fixed[] = { (char *)"CUDA_DEVICE_ORDER=PCI_BUS_ID", NULL };
static char *nvidia_control[] = { (char *)"/dev/nvidiactl",
				  (char *)"/dev/nvidia-uvm",
				  (char *)"/dev/nvidia-uvm-tools", NULL };
static char *kfd[] = { (char *)"/dev/kfd", NULL };
static const struct extres_driver_info nvml_info = {
	.env_var = (char *)"CUDA_VISIBLE_DEVICES",
	.env_property = (char *)"uuid",
	.env_fixed = cuda_fixed,
	.control_nodes = nvidia_control,
};
static const struct extres_driver_info amdgpu_info = {
	.env_var = (char *)"ROCR_VISIBLE_DEVICES",
	.env_property = (char *)"unique_id",
	.env_form = EXTRES_ENV_FORM_HEX_ID,
	.env_id_prefix = (char *)"GPU-",
	.control_nodes = kfd,
};

/* NVIDIA: a node from `device` (minor_number alone names none: the driver
 * names its nodes), the variable from uuid, a device by its key (index
 * "3": "0" is the first device's number already), and the control nodes
 * the driver declares that this host has. */
static void test_nvidia(void **state)
{
	struct extres_property g0[] = { P("index", "0"), P("uuid", "GPU-a"),
					P("minor_number", "0"),
					P("device", "/dev/nvidia0") };
	struct extres_property g1[] = { P("index", "3"), P("uuid", "GPU-b"),
					P("minor_number", "2"),
					P("device", "/dev/nvidia2") };
	const struct extres_info infos[] = { INFO(g0), INFO(g1) };
	const struct extres_view_resource view = { "gpu",    "nvml",	NULL,
						   2,	     { 2, 2 },	infos,
						   N(infos), &nvml_info };
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, NULL,
						     NULL } };
	static const char *const have[] = { "/dev/nvidiactl", "/dev/nvidia-uvm",
					    "/dev/nvidia0",   "/dev/nvidia2",
					    "/dev/kfd",	      NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}]}}, "
		"{\"name\": \"1\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=3\", \"CUDA_VISIBLE_DEVICES=GPU-b\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia2\"}]}}, "
		"{\"name\": \"3\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=3\", \"CUDA_VISIBLE_DEVICES=GPU-b\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia2\"}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0,3\", \"CUDA_VISIBLE_DEVICES=GPU-a,GPU-b\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}, {\"path\": \"/dev/nvidia2\"}]}}], "
		"\"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/nvidiactl\"}, {\"path\": \"/dev/nvidia-uvm\"}]}}\n"
		"}\n");
}

/* AMD: the render node from `device`, /dev/kfd where it is, the
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
		{ &view, "vendor.example/rocm", "unique_id", NULL, NULL }
	};
	static const char *const have[] = { "/dev/kfd", "/dev/nvidiactl",
					    "/dev/dri/renderD129", NULL };

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
		{ &views[0], NULL, NULL, NULL, NULL },
		{ &views[1], NULL, NULL, NULL, NULL },
		{ &views[2], NULL, NULL, NULL, NULL },
		{ &views[3], NULL, NULL, NULL, NULL },
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

/* A MIG instance: its GPU's node and its caps nodes (the driver's
 * node_keys), those the host has. */
static void test_mig_nodes(void **state)
{
	static char *keys[] = { (char *)"mig.gi.device",
				(char *)"mig.ci.device", NULL };
	const struct extres_driver_info info = {
		.env_var = (char *)"CUDA_VISIBLE_DEVICES",
		.env_property = (char *)"uuid",
		.node_keys = keys,
	};
	struct extres_property m0[] = {
		P("index", "MIG-c"),
		P("uuid", "MIG-c"),
		P("device", "/dev/nvidia1"),
		P("mig.gi.device", "/dev/nvidia-caps/nvidia-cap12"),
		P("mig.ci.device", "/dev/nvidia-caps/nvidia-cap13"),
	};
	const struct extres_info infos[] = { INFO(m0) };
	const struct extres_view_resource view = { "gpu",    "nvml",   NULL,
						   1,	     { 1, 1 }, infos,
						   N(infos), &info };
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, NULL,
						     NULL } };
	static const char *const have[] = { "/dev/nvidia1",
					    "/dev/nvidia-caps/nvidia-cap12",
					    NULL };
	const char *edits =
		"{\"env\": [\"EXTRES_GPU_INDEXES=MIG-c\", \"CUDA_VISIBLE_DEVICES=MIG-c\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia1\"}, {\"path\": \"/dev/nvidia-caps/nvidia-cap12\"}]}";
	char want[2048];

	snprintf(
		want, sizeof(want),
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": %s}, "
		"{\"name\": \"MIG-c\", \"containerEdits\": %s}, "
		"{\"name\": \"all\", \"containerEdits\": %s}]}\n"
		"}\n",
		edits, edits, edits);
	expect_cdi(res, N(res), have, want);
}

/* A spec in the shape `nvidia-ctk cdi generate` writes: common edits with
 * the driver's libraries and hooks, and devices named by index and UUID. */
static const char nvidia_spec[] =
	"---\n"
	"cdiVersion: 0.5.0\n"
	"containerEdits:\n"
	"  deviceNodes:\n"
	"  - path: /dev/nvidiactl\n"
	"  env:\n"
	"  - NVIDIA_VISIBLE_DEVICES=void\n"
	"  hooks:\n"
	"  - args:\n"
	"    - nvidia-cdi-hook\n"
	"    - update-ldcache\n"
	"    - --folder\n"
	"    - /usr/lib/x86_64-linux-gnu\n"
	"    hookName: createContainer\n"
	"    path: /usr/bin/nvidia-cdi-hook\n"
	"  mounts:\n"
	"  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
	"    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n"
	"    options:\n"
	"    - ro\n"
	"    - nosuid\n"
	"    - nodev\n"
	"    - rbind\n"
	"    - rprivate\n"
	"devices:\n"
	"- containerEdits:\n"
	"    deviceNodes:\n"
	"    - path: /dev/nvidia0\n"
	"  name: \"0\"\n"
	"- containerEdits:\n"
	"    deviceNodes:\n"
	"    - path: /dev/nvidia0\n"
	"      major: 195\n"
	"      minor: 0\n"
	"  name: GPU-a\n"
	"- containerEdits:\n"
	"    deviceNodes:\n"
	"    - path: /dev/nvidia1\n"
	"    - path: /dev/nvidia-caps/nvidia-cap12\n"
	"  name: MIG-b\n"
	"kind: nvidia.com/gpu\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static struct extres_cdi_base *load_base(char *dir, const char *text)
{
	struct extres_cdi_base *b = NULL;
	struct extres_err err = { "" };
	char path[128];

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nvidia.yaml", dir);
	write_file(path, text);
	assert_int_equal(extres_cdi_base_load(path, &b, &err), 0);
	unlink(path);
	rmdir(dir);
	return b;
}

/* Composed with the vendor's spec: each device gets the vendor's edits of
 * the device with its uuid (numbers stay numbers), one the vendor does not
 * list gets only ours, and the spec's common edits follow our control
 * nodes. */
static void test_base_spec(void **state)
{
	char dir[] = "/tmp/extres-cdi-XXXXXX";
	struct extres_cdi_base *b = load_base(dir, nvidia_spec);
	struct extres_property g0[] = { P("index", "0"), P("uuid", "GPU-a"),
					P("device", "/dev/nvidia0") };
	struct extres_property m0[] = { P("index", "MIG-b"),
					P("uuid", "MIG-b") };
	struct extres_property g2[] = { P("index", "2"), P("uuid", "GPU-x") };
	const struct extres_info infos[] = { INFO(g0), INFO(m0), INFO(g2) };
	const struct extres_view_resource view = { "gpu",    "nvml",	NULL,
						   3,	     { 3, 3 },	infos,
						   N(infos), &nvml_info };
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, b,
						     NULL } };
	static const char *const have[] = { "/dev/nvidia0", "/dev/nvidia-uvm",
					    NULL };

	expect_cdi(
		res, N(res), have,
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}, {\"path\": \"/dev/nvidia0\", \"major\": 195, \"minor\": 0}]}}, "
		"{\"name\": \"1\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=MIG-b\", \"CUDA_VISIBLE_DEVICES=MIG-b\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia1\"}, {\"path\": \"/dev/nvidia-caps/nvidia-cap12\"}]}}, "
		"{\"name\": \"MIG-b\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=MIG-b\", \"CUDA_VISIBLE_DEVICES=MIG-b\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia1\"}, {\"path\": \"/dev/nvidia-caps/nvidia-cap12\"}]}}, "
		"{\"name\": \"2\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=2\", \"CUDA_VISIBLE_DEVICES=GPU-x\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0,MIG-b,2\", \"CUDA_VISIBLE_DEVICES=GPU-a,MIG-b,GPU-x\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia0\"}, {\"path\": \"/dev/nvidia0\", \"major\": 195, \"minor\": 0}, {\"path\": \"/dev/nvidia1\"}, {\"path\": \"/dev/nvidia-caps/nvidia-cap12\"}]}}], "
		"\"containerEdits\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=void\"], \"deviceNodes\": [{\"path\": \"/dev/nvidia-uvm\"}, {\"path\": \"/dev/nvidiactl\"}], "
		"\"mounts\": [{\"containerPath\": \"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\", \"hostPath\": \"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\", \"options\": [\"ro\", \"nosuid\", \"nodev\", \"rbind\", \"rprivate\"]}], "
		"\"hooks\": [{\"args\": [\"nvidia-cdi-hook\", \"update-ldcache\", \"--folder\", \"/usr/lib/x86_64-linux-gnu\"], \"hookName\": \"createContainer\", \"path\": \"/usr/bin/nvidia-cdi-hook\"}]}}\n"
		"}\n");
	extres_cdi_base_free(b);
}

/* additionalGIDs, from the vendor's edits, need cdiVersion 0.7.0. */
static void test_base_version(void **state)
{
	char dir[] = "/tmp/extres-cdi-XXXXXX";
	struct extres_cdi_base *b =
		load_base(dir, "kind: v.example/c\n"
			       "devices:\n"
			       "- name: U1\n"
			       "  containerEdits:\n"
			       "    additionalGIDs: [44]\n");
	struct extres_property a0[] = { P("index", "0"), P("uuid", "U1") };
	const struct extres_info infos[] = { INFO(a0) };
	const struct extres_view_resource view = { "acc",    "x",      NULL,
						   1,	     { 1, 1 }, infos,
						   N(infos), NULL };
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, b,
						     NULL } };

	expect_cdi(
		res, N(res), no_nodes,
		"{\n"
		"\"acc\": {\"cdiVersion\": \"0.7.0\", \"kind\": \"extres.dev/acc\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_ACC_INDEXES=0\"], \"additionalGIDs\": [44]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_ACC_INDEXES=0\"], \"additionalGIDs\": [44]}}]}\n"
		"}\n");
	extres_cdi_base_free(b);
}

/* What is no spec is refused, naming the file and the place. */
static void test_base_bad(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "- a\n", "not a CDI spec" },
		{ "devices: []\n", ":1:1: a CDI spec needs a kind" },
		{ "kind: a/b\ndevices: x\n",
		  ":2:10: a CDI spec needs a devices sequence" },
		{ "kind: a/b\ndevices:\n- containerEdits: {}\n",
		  ":3:3: a CDI device needs a name" },
		{ "kind: a/b\ndevices:\n- name: x\n  containerEdits:\n    env: A=1\n",
		  ":5:10: containerEdits.env is no sequence" },
		{ "kind: [\n", "" },
	};
	struct extres_cdi_base *b = NULL;
	struct extres_err err;
	char dir[] = "/tmp/extres-cdi-XXXXXX", path[128];
	size_t i;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.yaml", dir);
	for (i = 0; i < N(cases); i++) {
		write_file(path, cases[i].text);
		assert_int_equal(extres_cdi_base_load(path, &b, &err), -EINVAL);
		assert_null(b);
		assert_true(strncmp(err.msg, path, strlen(path)) == 0);
		assert_non_null(strstr(err.msg, cases[i].msg));
	}
	unlink(path);
	rmdir(dir);
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
	const struct extres_cdi_resource res[] = { { &view, NULL, NULL, NULL,
						     &rc } };

	(void)state;
	expect_cdi(
		res, N(res), no_nodes,
		"{\n"
		"\"gpu\": {\"cdiVersion\": \"0.5.0\", \"kind\": \"extres.dev/gpu\", \"devices\": ["
		"{\"name\": \"0\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"]}}, "
		"{\"name\": \"0-share-1\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\", \"EXTRES_GPU_SHARE=1/2\", \"CUDA_MPS_PIPE_DIRECTORY=/run/mps\", \"CUDA_MPS_LOG_DIRECTORY=/var/log/mps\", \"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\", \"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=500M\"], "
		"\"mounts\": [{\"hostPath\": \"/run/mps\", \"containerPath\": \"/run/mps\", \"options\": [\"rbind\"]}]}}, "
		"{\"name\": \"0-share-2\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\", \"EXTRES_GPU_SHARE=2/2\", \"CUDA_MPS_PIPE_DIRECTORY=/run/mps\", \"CUDA_MPS_LOG_DIRECTORY=/var/log/mps\", \"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\", \"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=500M\"], "
		"\"mounts\": [{\"hostPath\": \"/run/mps\", \"containerPath\": \"/run/mps\", \"options\": [\"rbind\"]}]}}, "
		"{\"name\": \"all\", \"containerEdits\": {\"env\": [\"EXTRES_GPU_INDEXES=0\", \"CUDA_VISIBLE_DEVICES=GPU-a\", \"CUDA_DEVICE_ORDER=PCI_BUS_ID\"]}}]}\n"
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
						     NULL, NULL } };
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
		cmocka_unit_test(test_mig_nodes),
		cmocka_unit_test(test_base_spec),
		cmocka_unit_test(test_base_version),
		cmocka_unit_test(test_base_bad),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_no_resources),
		cmocka_unit_test(test_name_escaped),
		cmocka_unit_test(test_kind_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
