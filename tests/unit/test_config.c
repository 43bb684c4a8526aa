/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <grp.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "extres_build.h"

/* Buffers are loaded as if read from here, so messages are predictable. */
#define BUF_PATH "/etc/extres/extres.yaml"
#define FIXTURE(name) EXTRES_FIXTURES "/config/" name
/* Where extres installs its NVIDIA script; a unit test has no build-tree
 * copy beside it. */
#define SHIPPED_SCRIPT EXTRES_SCRIPT_DIR "/nvidia-gpu-discovery.sh"
#define FLINK_SCRIPT "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"

/* A minimal valid resource, for tests about something else. */
#define GPU_OK                              \
	"external-resources: gpu\n"         \
	"external-resource.gpu.amount: 1\n" \
	"external-resource.gpu.driver: script\n"

static struct extres_config *load_ok(const char *yaml)
{
	struct extres_config *c = NULL;
	struct extres_err err = { "" };
	int r;

	r = extres_config_load_buffer(BUF_PATH, yaml, strlen(yaml), &c, &err);
	if (r != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_int_equal(r, 0);
	assert_non_null(c);
	return c;
}

static struct extres_config *load_file_ok(const char *path)
{
	struct extres_config *c = NULL;
	struct extres_err err = { "" };
	int r;

	r = extres_config_load(path, &c, &err);
	if (r != 0)
		print_error("unexpected failure: %s\n", err.msg);
	assert_int_equal(r, 0);
	assert_non_null(c);
	return c;
}

/* The load fails with exactly -errnum and `msg`, and leaves *ret alone. */
static void expect_error(const char *yaml, int errnum, const char *msg)
{
	struct extres_config sentinel, *c = &sentinel;
	struct extres_err err = { "" };
	int r;

	r = extres_config_load_buffer(BUF_PATH, yaml, strlen(yaml), &c, &err);
	assert_int_equal(r, -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(c, &sentinel);
}

static void expect_file_error(const char *path, int errnum, const char *msg)
{
	struct extres_config sentinel, *c = &sentinel;
	struct extres_err err = { "" };
	int r;

	r = extres_config_load(path, &c, &err);
	assert_int_equal(r, -errnum);
	assert_string_equal(err.msg, msg);
	assert_ptr_equal(c, &sentinel);
}

/* The config's warnings are exactly the NULL-terminated list given. */
static void expect_warnings(const struct extres_config *c, ...)
{
	const char *want;
	size_t n = 0;
	va_list ap;

	va_start(ap, c);
	while ((want = va_arg(ap, const char *))) {
		if (n >= c->n_warnings) {
			print_error("missing warning: %s\n", want);
			fail();
		}
		assert_string_equal(c->warnings[n], want);
		n++;
	}
	va_end(ap);
	for (size_t i = n; i < c->n_warnings; i++)
		print_error("unexpected warning: %s\n", c->warnings[i]);
	assert_int_equal(c->n_warnings, n);
}

static void expect_scalar(const struct extres_param *p, const char *key,
			  const char *value, uint32_t line, uint32_t column)
{
	assert_int_equal(p->kind, EXTRES_PARAM_SCALAR);
	if (key)
		assert_string_equal(p->key, key);
	else
		assert_null(p->key);
	assert_string_equal(p->value, value);
	assert_int_equal(p->count, 0);
	assert_int_equal(p->line, line);
	assert_int_equal(p->column, column);
}

static char *real(const char *path)
{
	char *r = realpath(path, NULL);

	assert_non_null(r);
	return r;
}

/* ---- whole files ---- */

static void test_flink_conf_flat(void **state)
{
	struct extres_config *c = load_file_ok(FIXTURE("flink-conf.yaml"));
	const struct extres_resource_config *gpu;
	char *path = real(FIXTURE("flink-conf.yaml"));
	char *dir = real(EXTRES_FIXTURES "/config");

	assert_string_equal(c->path, path);
	assert_string_equal(c->dir, dir);
	assert_null(c->mountpoint);
	assert_int_equal(c->n_resources, 1);
	gpu = &c->resources[0];
	assert_string_equal(gpu->name, "gpu");
	assert_int_equal(gpu->amount.max, 2);
	assert_string_equal(gpu->driver, "script");
	assert_string_equal(gpu->yarn_key, "yarn.io/gpu");
	assert_string_equal(gpu->kubernetes_key, "nvidia.com/gpu");
	assert_null(gpu->coordination_file);
	assert_string_equal(gpu->coordination_key, "index");
	assert_int_equal(gpu->line, 12);
	assert_int_equal(gpu->column, 21);
	assert_int_equal(gpu->params->kind, EXTRES_PARAM_MAPPING);
	assert_int_equal(gpu->params->count, 2);
	expect_scalar(&gpu->params->items[0], "discovery-script.path",
		      "plugins/external-resource-gpu/nvidia-gpu-discovery.sh",
		      15, 52);
	expect_scalar(&gpu->params->items[1], "discovery-script.args",
		      "--enable-coordination", 16, 52);
	assert_string_equal(
		extres_param_scalar(gpu->params, "discovery-script.args"),
		"--enable-coordination");
	/* taskmanager.*, jobmanager.*, rest.port: Flink's, ignored silently */
	expect_warnings(c, NULL);
	free(path);
	free(dir);
	extres_config_free(c);
}

static void test_flink_config_nested(void **state)
{
	struct extres_config *c = load_file_ok(FIXTURE("config.yaml"));
	const struct extres_resource_config *gpu = &c->resources[0];

	assert_int_equal(c->n_resources, 1);
	assert_string_equal(gpu->name, "gpu");
	assert_int_equal(gpu->amount.max, 2);
	assert_string_equal(gpu->driver, "script");
	assert_string_equal(gpu->yarn_key, "yarn.io/gpu");
	assert_string_equal(gpu->kubernetes_key, "nvidia.com/gpu");
	assert_int_equal(gpu->line, 11);
	assert_int_equal(gpu->column, 21);
	assert_int_equal(gpu->params->count, 2);
	/* Nested param mappings flatten like every other key. */
	expect_scalar(&gpu->params->items[0], "discovery-script.path",
		      "plugins/external-resource-gpu/nvidia-gpu-discovery.sh",
		      19, 15);
	expect_scalar(&gpu->params->items[1], "discovery-script.args",
		      "--enable-coordination", 20, 15);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_extres_own_file(void **state)
{
	struct extres_config *c = load_file_ok(FIXTURE("extres.yaml"));
	const struct extres_resource_config *fpga = &c->resources[0];
	const struct extres_param *devices, *dev;
	struct extres_param *held;
	char *dir = real(EXTRES_FIXTURES "/config");
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want), "%s/mnt/extres", dir);
	assert_string_equal(c->mountpoint, want);
	assert_int_equal(c->n_resources, 1);
	assert_string_equal(fpga->name, "fpga");
	assert_int_equal(fpga->line, 4);
	assert_int_equal(fpga->column, 22);
	assert_string_equal(fpga->driver, "static");
	assert_int_equal(fpga->amount.max, 1);
	snprintf(want, sizeof(want), "%s/run/fpga.coord", dir);
	assert_string_equal(fpga->coordination_file, want);
	assert_string_equal(fpga->coordination_key, "serial");
	assert_null(fpga->kubernetes_key);
	assert_null(fpga->yarn_key);

	assert_int_equal(fpga->params->count, 1);
	devices = extres_param_get(fpga->params, "devices");
	assert_ptr_equal(devices, &fpga->params->items[0]);
	assert_int_equal(devices->kind, EXTRES_PARAM_SEQUENCE);
	assert_int_equal(devices->count, 2);
	assert_int_equal(devices->line, 13);
	assert_int_equal(devices->column, 9);
	/* Mappings inside a sequence stay as written: "pci.bus_id" is one
	 * key, not a flattened path. */
	dev = &devices->items[1];
	assert_int_equal(dev->kind, EXTRES_PARAM_MAPPING);
	assert_null(dev->key);
	assert_int_equal(dev->count, 2);
	assert_int_equal(dev->line, 15);
	assert_int_equal(dev->column, 11);
	expect_scalar(&dev->items[0], "serial", "XFL1B", 15, 19);
	expect_scalar(&dev->items[1], "pci.bus_id", "0000:d8:00.0", 16, 23);
	assert_string_equal(extres_param_scalar(&devices->items[0], "serial"),
			    "XFL1A");
	expect_warnings(c, NULL);
	/* One tree, shared: what a driver holds outlives the config. */
	assert_int_equal(c->params_packed, 1);
	held = extres_param_ref(fpga->params);
	free(dir);
	extres_config_free(c);
	devices = extres_param_get(held, "devices");
	assert_non_null(devices);
	assert_string_equal(extres_param_scalar(&devices->items[1], "serial"),
			    "XFL1B");
	extres_param_unref(held);
}

static void test_legacy_names(void **state)
{
	struct extres_config *c = load_file_ok(FIXTURE("legacy.yaml"));

	assert_int_equal(c->n_resources, 2);
	assert_string_equal(c->resources[0].name, "gpu");
	assert_int_equal(c->resources[0].line, 2);
	assert_int_equal(c->resources[0].column, 25);
	assert_string_equal(c->resources[0].driver, "script");
	assert_int_equal(c->resources[0].amount.max, 1);
	assert_string_equal(c->resources[0].kubernetes_key, "amd.com/gpu");
	assert_string_equal(c->resources[0].yarn_key, "yarn.io/gpu");
	assert_int_equal(c->resources[0].params->kind, EXTRES_PARAM_MAPPING);
	/* Flink's GPU driver has a default script (test_gpu_default_script). */
	assert_int_equal(c->resources[0].params->count, 1);
	expect_scalar(&c->resources[0].params->items[0],
		      "discovery-script.path", SHIPPED_SCRIPT, 4, 37);
	assert_null(c->resources[1].param_default);
	assert_string_equal(c->resources[1].name, "fpga");
	assert_int_equal(c->resources[1].line, 2);
	assert_int_equal(c->resources[1].column, 30);
	assert_string_equal(c->resources[1].driver, "sysfs");
	assert_int_equal(c->resources[1].amount.max, 4);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

/* ---- the resource list ---- */

static void test_both_lists_warn(void **state)
{
	struct extres_config *c =
		load_ok("external-resource.list: fpga\n"
			"external-resources: gpu\n"
			"external-resource.gpu.amount: 1\n"
			"external-resource.gpu.driver: script\n");

	assert_int_equal(c->n_resources, 1);
	assert_string_equal(c->resources[0].name, "gpu");
	expect_warnings(
		c,
		BUF_PATH
		":1:1: external-resource.list is ignored because external-resources is set",
		NULL);
	extres_config_free(c);
}

static void test_list_items_trimmed(void **state)
{
	struct extres_config *c =
		load_ok("external-resources: gpu; ;fpga ;;nic\n"
			"external-resource.gpu.amount: 1\n"
			"external-resource.gpu.driver: script\n"
			"external-resource.fpga.amount: 1\n"
			"external-resource.fpga.driver: static\n"
			"external-resource.nic.amount: 1\n"
			"external-resource.nic.driver: sysfs\n");

	assert_int_equal(c->n_resources, 3);
	assert_string_equal(c->resources[0].name, "gpu");
	assert_int_equal(c->resources[0].column, 21);
	assert_string_equal(c->resources[1].name, "fpga");
	assert_int_equal(c->resources[1].column, 27);
	assert_string_equal(c->resources[2].name, "nic");
	assert_int_equal(c->resources[2].column, 34);
	assert_int_equal(c->resources[2].line, 1);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_list_quoted_and_sequence(void **state)
{
	struct extres_config *c =
		load_ok("external-resources: \"gpu;fpga\"\n"
			"external-resource.gpu.amount: 1\n"
			"external-resource.gpu.driver: script\n"
			"external-resource.fpga.amount: 1\n"
			"external-resource.fpga.driver: static\n");

	/* A quoted scalar may hold escapes: names point at its start. */
	assert_int_equal(c->resources[1].column, 21);
	extres_config_free(c);

	c = load_ok("external-resource:\n"
		    "  list:\n"
		    "    - gpu\n"
		    "    - fpga\n"
		    "external-resource.gpu.amount: 1\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.fpga.amount: 1\n"
		    "external-resource.fpga.driver: static\n");
	assert_int_equal(c->n_resources, 2);
	assert_string_equal(c->resources[1].name, "fpga");
	assert_int_equal(c->resources[1].line, 4);
	assert_int_equal(c->resources[1].column, 7);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_list_errors(void **state)
{
	expect_error(
		"external-resources: gpu;fpga;gpu\n", EINVAL,
		BUF_PATH
		":1:30: resource 'gpu' is listed twice in external-resources (first at line 1, column 21)");
	expect_error(
		"external-resource.list: [gpu, gpu]\n", EINVAL,
		BUF_PATH
		":1:31: resource 'gpu' is listed twice in external-resource.list (first at line 1, column 26)");
	expect_error("external-resources: ' ; ;'\n", EINVAL,
		     BUF_PATH ":1:21: external-resources lists no resources");
	expect_error(
		"external-resources:\n  - gpu\n  - {a: b}\n", EINVAL,
		BUF_PATH
		":3:5: external-resources: an item must be a resource name, not a mapping");
	expect_error("taskmanager.numberOfTaskSlots: 2\n", EINVAL,
		     BUF_PATH ": no resources listed (set external-resources)");
	/* Null: everything under it commented out. */
	expect_error("external-resources:\n", EINVAL,
		     BUF_PATH ": no resources listed (set external-resources)");
}

static void test_bad_resource_names(void **state)
{
	static const struct {
		const char *yaml, *msg;
	} cases[] = {
		{ "external-resources: ['']\n", BUF_PATH
		  ":1:22: resource name '' in external-resources is empty" },
		{ "external-resources: gpu;.\n", BUF_PATH
		  ":1:25: resource name '.' in external-resources starts with '.'" },
		{ "external-resources: ..\n", BUF_PATH
		  ":1:21: resource name '..' in external-resources starts with '.'" },
		{ "external-resources: .hidden\n", BUF_PATH
		  ":1:21: resource name '.hidden' in external-resources starts with '.'" },
		{ "external-resource.list: gpu,a/b\n", BUF_PATH
		  ":1:29: resource name 'a/b' in external-resource.list contains '/'" },
		{ "external-resources: [\"a\\tb\"]\n", BUF_PATH
		  ":1:22: resource name 'a\\x09b' in external-resources contains a control character" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].yaml, EINVAL, cases[i].msg);
}

static void test_too_many_resources(void **state)
{
	char yaml[8192], msg[256];
	size_t len = 0, column = 0;
	int i;

	len += (size_t)snprintf(yaml + len, sizeof(yaml) - len,
				"external-resources: ");
	for (i = 0; i <= EXTRES_MAX_RESOURCES; i++) {
		if (i == EXTRES_MAX_RESOURCES)
			column = len + 1;
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, "r%d;",
					i);
	}
	snprintf(msg, sizeof(msg),
		 BUF_PATH
		 ":1:%zu: external-resources lists more than 256 resources",
		 column);
	expect_error(yaml, E2BIG, msg);
}

static void test_check_name(void **state)
{
	char name[300];

	assert_int_equal(extres_check_name("gpu"), 0);
	assert_int_equal(extres_check_name("gpu-0.a_b"), 0);
	memset(name, 'x', 255);
	name[255] = '\0';
	assert_int_equal(extres_check_name(name), 0);
	name[255] = 'x';
	name[256] = '\0';
	assert_int_equal(extres_check_name(name), -EINVAL);
	assert_int_equal(extres_check_name(""), -EINVAL);
	assert_int_equal(extres_check_name("."), -EINVAL);
	assert_int_equal(extres_check_name(".."), -EINVAL);
	assert_int_equal(extres_check_name(".gpu"), -EINVAL);
	assert_int_equal(extres_check_name("a/b"), -EINVAL);
	assert_int_equal(extres_check_name("a\nb"), -EINVAL);
	assert_int_equal(extres_check_name("a\x7f"), -EINVAL);
}

/* ---- amount ---- */

static void test_amount_missing(void **state)
{
	expect_error(
		"external-resources: fpga;gpu\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n"
		"external-resource.gpu.driver: script\n",
		EINVAL,
		BUF_PATH
		":1:26: resource 'gpu': external-resource.gpu.amount is not set");
	/* A misspelt amount is named where it is, with the key meant. */
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.driver: script\n"
		"external-resource.gpu.amout: 1\n"
		"external-resource.gpu.param.amout: 1\n",
		EINVAL,
		BUF_PATH
		":3:1: unknown key 'external-resource.gpu.amout'; did you mean external-resource.gpu.amount? (resource 'gpu': external-resource.gpu.amount is not set)");
}

/* pool: a boolean; amount optional with it; coordination-file required. */
static void test_pool(void **state)
{
	struct extres_config *c;

	c = load_ok("external-resources: gpu;nic\n"
		    "external-resource.gpu.pool: true\n"
		    "external-resource.gpu.driver: static\n"
		    "external-resource.gpu.coordination-file: /run/gpu.coord\n"
		    "external-resource.nic.pool: False\n"
		    "external-resource.nic.amount: 1\n"
		    "external-resource.nic.driver: static\n");
	assert_int_equal(c->resources[0].pool, 1);
	assert_int_equal(c->resources[0].amount.max, 0);
	assert_int_equal(c->resources[1].pool, 0);
	assert_int_equal(c->resources[1].amount.max, 1);
	assert_false(extres_resource_config_same(&c->resources[0],
						 &c->resources[1]));
	extres_config_free(c);
	c = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.pool: TRUE\n"
		    "external-resource.gpu.amount: 2\n"
		    "external-resource.gpu.driver: static\n"
		    "external-resource.gpu.coordination-file: gpu.coord\n");
	assert_int_equal(c->resources[0].pool, 1);
	assert_int_equal(c->resources[0].amount.max, 2);
	extres_config_free(c);
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.pool: true\n"
		"external-resource.gpu.driver: static\n",
		EINVAL,
		BUF_PATH
		":2:29: external-resource.gpu.pool is true, but external-resource.gpu.coordination-file is not set: a pool's devices are shared through its coordination file");
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.pool: 1\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: static\n",
		EINVAL,
		BUF_PATH
		":2:29: external-resource.gpu.pool is '1'; expected true or false");
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.pool: false\n"
		"external-resource.gpu.driver: static\n",
		EINVAL,
		BUF_PATH
		":1:21: resource 'gpu': external-resource.gpu.amount is not set");
}

static void test_amount_bad_values(void **state)
{
	static const struct {
		const char *value, *msg;
	} cases[] = {
		{ "0", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '0'; it must be at least 1" },
		{ "-1", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '-1'; it must be at least 1" },
		{ "abc", BUF_PATH
		  ":3:31: external-resource.gpu.amount is 'abc'; it must be a whole number N, a range N-M or N-, or all" },
		{ "99999", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '99999'; it must be at most 4096" },
		{ "4097", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '4097'; it must be at most 4096" },
		{ "18446744073709551617", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '18446744073709551617'; it must be at most 4096" },
		{ "1.5", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '1.5'; it must be a whole number N, a range N-M or N-, or all" },
		{ "0x2", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '0x2'; it must be a whole number N, a range N-M or N-, or all" },
		{ "+2", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '+2'; it must be a whole number N, a range N-M or N-, or all" },
		{ "' 2'", BUF_PATH
		  ":3:31: external-resource.gpu.amount is ' 2'; it must be a whole number N, a range N-M or N-, or all" },
		{ "3-2", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '3-2'; the range's minimum is above its maximum" },
		{ "1-0", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '1-0'; both ends of a range must be at least 1" },
		{ "0-3", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '0-3'; both ends of a range must be at least 1" },
		{ "0-", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '0-'; both ends of a range must be at least 1" },
		{ "all-5", BUF_PATH
		  ":3:31: external-resource.gpu.amount is 'all-5'; it must be a whole number N, a range N-M or N-, or all" },
		{ "5-all", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '5-all'; it must be a whole number N, a range N-M or N-, or all" },
		{ "ALL", BUF_PATH
		  ":3:31: external-resource.gpu.amount is 'ALL'; it must be a whole number N, a range N-M or N-, or all" },
		{ "'-'", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '-'; it must be a whole number N, a range N-M or N-, or all" },
		{ "--1", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '--1'; it must be a whole number N, a range N-M or N-, or all" },
		{ "2-4-6", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '2-4-6'; it must be a whole number N, a range N-M or N-, or all" },
		{ "'2 - 4'", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '2 - 4'; it must be a whole number N, a range N-M or N-, or all" },
		{ "' all'", BUF_PATH
		  ":3:31: external-resource.gpu.amount is ' all'; it must be a whole number N, a range N-M or N-, or all" },
		{ "-3-5", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '-3-5'; it must be a whole number N, a range N-M or N-, or all" },
		{ "1-4097", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '1-4097'; it must be at most 4096" },
		{ "4097-", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '4097-'; it must be at most 4096" },
		{ "1-99999999999999999999999", BUF_PATH
		  ":3:31: external-resource.gpu.amount is '1-99999999999999999999999'; it must be at most 4096" },
		{ "[2]", BUF_PATH
		  ":3:31: external-resource.gpu.amount is a sequence, where an amount (N, N-M, N- or all) is expected" },
	};
	char yaml[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml),
			 "external-resources: gpu\n"
			 "external-resource.gpu.driver: script\n"
			 "external-resource.gpu.amount: %s\n",
			 cases[i].value);
		expect_error(yaml, EINVAL, cases[i].msg);
	}
}

static void test_amount_good_values(void **state)
{
	struct extres_config *c;

	c = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: \"3\"\n");
	assert_int_equal(c->resources[0].amount.max, 3);
	extres_config_free(c);
	c = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: 4096\n");
	assert_int_equal(c->resources[0].amount.max, EXTRES_MAX_AMOUNT);
	extres_config_free(c);
}

/* Every form of amount, its bounds, and its shortest form back. */
static void test_amount_forms(void **state)
{
	static const struct {
		const char *value;
		uint64_t min, max;
		const char *form, *wanted;
	} cases[] = {
		{ "3", 3, 3, "3", "3" },
		{ "0003", 3, 3, "3", "3" },
		{ "2-4", 2, 4, "2-4", "at least 2 (amount 2-4)" },
		{ "4-4", 4, 4, "4", "4" },
		{ "1-4096", 1, 4096, "all", "at least 1 (amount all)" },
		{ "2-", 2, 4096, "2-", "at least 2 (amount 2-)" },
		{ "4096-", 4096, 4096, "4096", "4096" },
		{ "all", 1, 4096, "all", "at least 1 (amount all)" },
		{ "\"all\"", 1, 4096, "all", "at least 1 (amount all)" },
		{ "1-", 1, 4096, "all", "at least 1 (amount all)" },
	};
	char yaml[256], buf[EXTRES_AMOUNT_TEXT_MAX];
	struct extres_config *c;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml),
			 "external-resources: gpu\n"
			 "external-resource.gpu.driver: script\n"
			 "external-resource.gpu.amount: %s\n",
			 cases[i].value);
		c = load_ok(yaml);
		assert_int_equal(c->resources[0].amount.min, cases[i].min);
		assert_int_equal(c->resources[0].amount.max, cases[i].max);
		assert_string_equal(
			extres_amount_format(&c->resources[0].amount, buf),
			cases[i].form);
		assert_string_equal(
			extres_amount_wanted(&c->resources[0].amount, buf),
			cases[i].wanted);
		extres_config_free(c);
	}
}

/* A range or all differs from an exact count in what is taken: a reload
 * that changes only the amount's form is not "the same" resource. */
static void test_amount_same(void **state)
{
	struct extres_config *a, *b;

	a = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: 2-4\n");
	b = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: 2-5\n");
	assert_false(extres_resource_config_same(&a->resources[0],
						 &b->resources[0]));
	extres_config_free(b);
	b = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: 2-4\n");
	assert_true(extres_resource_config_same(&a->resources[0],
						&b->resources[0]));
	extres_config_free(b);
	b = load_ok("external-resources: gpu\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.gpu.amount: 2\n");
	assert_false(extres_resource_config_same(&a->resources[0],
						 &b->resources[0]));
	extres_config_free(b);
	extres_config_free(a);
}

/* ---- driver ---- */

static void test_driver_missing(void **state)
{
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.amount: 1\n",
		EINVAL,
		BUF_PATH
		":1:21: resource 'gpu' has no driver; set external-resource.gpu.driver (or external-resource.gpu.driver-factory.class)");
}

static void test_driver_unsupported_class(void **state)
{
	expect_error(
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: script\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.fpga.FPGADriverFactory\n",
		EINVAL,
		BUF_PATH
		":5:46: unsupported driver factory class 'org.apache.flink.externalresource.fpga.FPGADriverFactory' for resource 'fpga'; set external-resource.fpga.driver to an extres driver");
}

static void test_driver_bad_name(void **state)
{
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: ../evil\n",
		EINVAL,
		BUF_PATH
		":3:31: external-resource.gpu.driver is '../evil'; expected a driver name ([A-Za-z0-9_-]+) or an absolute path");
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: [script]\n",
		EINVAL,
		BUF_PATH
		":3:31: external-resource.gpu.driver is a sequence, where a driver name or path is expected");
}

static void test_driver_wins_over_class(void **state)
{
	struct extres_config *c = load_ok(
		"external-resources: gpu\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n"
		"external-resource.gpu.driver: /opt/extres/drivers/my_nvml.so\n");

	assert_string_equal(c->resources[0].driver,
			    "/opt/extres/drivers/my_nvml.so");
	expect_warnings(
		c,
		BUF_PATH
		":3:1: external-resource.gpu.driver-factory.class is ignored because external-resource.gpu.driver is set",
		NULL);
	extres_config_free(c);
}

#define GPU_CLASS                           \
	"external-resources: gpu\n"         \
	"external-resource.gpu.amount: 1\n" \
	"external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n"

/* The default param at the factory class's value, and the note. */
static void expect_default_script(const char *path, const char *why)
{
	struct extres_config *c = load_ok(GPU_CLASS);
	const struct extres_param *p = c->resources[0].params;
	char note[3 * PATH_MAX];

	assert_int_equal(p->count, 1);
	expect_scalar(&p->items[0], "discovery-script.path", path, 3, 45);
	snprintf(note, sizeof(note), "discovery-script.path: %s (%s)", path,
		 why);
	assert_string_equal(c->resources[0].param_default, note);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

/*
 * Flink's GPU driver without discovery-script.path: Flink's script under
 * FLINK_HOME when it is there, else the one shipped with extres.
 */
static void test_gpu_default_script(void **state)
{
	const char *dir = *state;
	char home[PATH_MAX], script[PATH_MAX + 64], why[2 * PATH_MAX],
		cwd[PATH_MAX];
	struct extres_config *c;
	char *real_dir;
	FILE *f;

	expect_default_script(
		SHIPPED_SCRIPT,
		"the script shipped with extres; FLINK_HOME is not set");
	setenv("FLINK_HOME", "", 1);
	expect_default_script(
		SHIPPED_SCRIPT,
		"the script shipped with extres; FLINK_HOME is not set");

	snprintf(home, sizeof(home), "%s/flink", dir);
	snprintf(script, sizeof(script), "%s/" FLINK_SCRIPT, home);
	setenv("FLINK_HOME", home, 1);
	snprintf(why, sizeof(why),
		 "the script shipped with extres; there is no %s", script);
	expect_default_script(SHIPPED_SCRIPT, why);

	assert_int_equal(mkdir(home, 0755), 0);
	snprintf(why, sizeof(why), "%s/plugins", home);
	assert_int_equal(mkdir(why, 0755), 0);
	snprintf(why, sizeof(why), "%s/plugins/external-resource-gpu", home);
	assert_int_equal(mkdir(why, 0755), 0);
	f = fopen(script, "we");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	expect_default_script(script, "Flink's default under FLINK_HOME");

	/* A relative FLINK_HOME gives an absolute path, or the driver would
	 * resolve it against FLINK_HOME again. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	setenv("FLINK_HOME", "flink/", 1);
	real_dir = real(dir);
	snprintf(why, sizeof(why), "%s/flink/" FLINK_SCRIPT, real_dir);
	free(real_dir);
	expect_default_script(why, "Flink's default under FLINK_HOME");
	assert_int_equal(chdir(cwd), 0);

	/* A configured path is left alone, and so is the script driver named
	 * directly: only Flink's class has Flink's default. */
	c = load_ok(
		GPU_CLASS
		"external-resource.gpu.param.discovery-script.path: my.sh\n");
	assert_int_equal(c->resources[0].params->count, 1);
	assert_string_equal(c->resources[0].params->items[0].value, "my.sh");
	assert_null(c->resources[0].param_default);
	extres_config_free(c);
	c = load_ok(GPU_OK);
	assert_int_equal(c->resources[0].params->count, 0);
	assert_null(c->resources[0].param_default);
	extres_config_free(c);
	unsetenv("FLINK_HOME");
}

static void test_driver_class_gpu_driver(void **state)
{
	struct extres_config *c = load_ok(
		"external-resources: gpu\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver.class: org.apache.flink.externalresource.gpu.GPUDriver\n"
		"external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory\n");

	assert_string_equal(c->resources[0].driver, "script");
	expect_warnings(
		c,
		BUF_PATH
		":3:1: external-resource.gpu.driver.class is ignored because external-resource.gpu.driver-factory.class is set",
		NULL);
	extres_config_free(c);
}

/* ---- other keys ---- */

static void test_kubernetes_yarn_keys(void **state)
{
	struct extres_config *c = load_ok(
		GPU_OK
		"external-resource.gpu.kubernetes.key: amd.com/gpu\n"
		"external-resource.gpu.kubernetes.config-key: nvidia.com/gpu\n"
		"external-resource.gpu.yarn.config-key: ''\n");

	assert_string_equal(c->resources[0].kubernetes_key, "nvidia.com/gpu");
	/* Empty is not set. */
	assert_null(c->resources[0].yarn_key);
	expect_warnings(
		c,
		BUF_PATH
		":4:1: external-resource.gpu.kubernetes.key is ignored because external-resource.gpu.kubernetes.config-key is set",
		NULL);
	extres_config_free(c);
}

static void test_relative_paths(void **state)
{
	struct extres_config *c = load_ok(
		"extres.mountpoint: run/extres\n"
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: script\n"
		"external-resource.gpu.coordination-file: ../../var/tmp/gpu.coord\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n"
		"external-resource.fpga.coordination-file: /var/tmp/fpga.coord\n");

	assert_string_equal(c->path, BUF_PATH);
	assert_string_equal(c->dir, "/etc/extres");
	assert_string_equal(c->mountpoint, "/etc/extres/run/extres");
	assert_string_equal(c->resources[0].coordination_file,
			    "/etc/extres/../../var/tmp/gpu.coord");
	assert_string_equal(c->resources[1].coordination_file,
			    "/var/tmp/fpga.coord");
	expect_warnings(c, NULL);
	extres_config_free(c);

	c = load_ok("extres: {mountpoint: /run/extres}\n" GPU_OK);
	assert_string_equal(c->mountpoint, "/run/extres");
	assert_null(c->resources[0].coordination_file);
	extres_config_free(c);
}

static void test_buffer_relative_path(void **state)
{
	struct extres_config *c = NULL;
	struct extres_err err = { "" };
	char *cwd = get_current_dir_name();
	char want[PATH_MAX + 32];

	assert_non_null(cwd);
	assert_int_equal(extres_config_load_buffer("x.yaml", GPU_OK,
						   strlen(GPU_OK), &c, &err),
			 0);
	snprintf(want, sizeof(want), "%s/x.yaml", strcmp(cwd, "/") ? cwd : "");
	assert_string_equal(c->path, want);
	assert_string_equal(c->dir, cwd);
	free(cwd);
	extres_config_free(c);
}

static void test_mountpoint_empty(void **state)
{
	expect_error(GPU_OK "extres:\n  mountpoint: ''\n", EINVAL,
		     BUF_PATH ":5:3: extres.mountpoint is empty");
}

static void test_coordination_key(void **state)
{
	struct extres_config *c;

	c = load_ok(GPU_OK "external-resource.gpu.coordination-key: uuid\n");
	assert_string_equal(c->resources[0].coordination_key, "uuid");
	extres_config_free(c);
	expect_error(
		GPU_OK "external-resource.gpu.coordination-key: pci/bus\n",
		EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.coordination-key 'pci/bus' contains '/'");
}

/* ---- env-var ---- */

static void test_refresh_interval(void **state)
{
	struct extres_config *c;

	c = load_ok(GPU_OK);
	assert_int_equal(c->resources[0].refresh_ms, 0);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.refresh-interval: 30\n");
	assert_int_equal(c->resources[0].refresh_ms, 30000);
	expect_warnings(c, NULL);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.refresh-interval: 0.25\n");
	assert_int_equal(c->resources[0].refresh_ms, 250);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.refresh-interval: 1.5\n");
	assert_int_equal(c->resources[0].refresh_ms, 1500);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.refresh-interval:\n");
	assert_int_equal(c->resources[0].refresh_ms, 0);
	extres_config_free(c);
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: 0.05\n", EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '0.05'; it must be seconds from 0.1 to 86400, with at most three decimals");
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: 10s\n", EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '10s'; it must be seconds from 0.1 to 86400, with at most three decimals");
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: 1.2345\n",
		EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '1.2345'; it must be seconds from 0.1 to 86400, with at most three decimals");
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: 86401\n",
		EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '86401'; it must be seconds from 0.1 to 86400, with at most three decimals");
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: -1\n", EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '-1'; it must be seconds from 0.1 to 86400, with at most three decimals");
	expect_error(
		GPU_OK
		"external-resource.gpu.refresh-interval: 99999999999999999999\n",
		EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is '99999999999999999999'; it must be seconds from 0.1 to 86400, with at most three decimals");
}

static void test_lock_timeout(void **state)
{
	struct extres_config *c;

	c = load_ok(GPU_OK);
	assert_int_equal(c->lock_timeout_ms, 10000);
	assert_int_equal(c->resources[0].lock_timeout_ms, 10000);
	extres_config_free(c);
	c = load_ok(GPU_OK "extres.lock-timeout: 0.5\n");
	assert_int_equal(c->lock_timeout_ms, 500);
	assert_int_equal(c->resources[0].lock_timeout_ms, 500);
	extres_config_free(c);
	c = load_ok(GPU_OK "extres:\n  lock-timeout: 0\n");
	assert_int_equal(c->resources[0].lock_timeout_ms, 0);
	extres_config_free(c);
	expect_error(
		GPU_OK "extres.lock-timeout: 3601\n", EINVAL,
		BUF_PATH
		":4:22: extres.lock-timeout is '3601'; it must be seconds from 0 to 3600, with at most three decimals");
	expect_error(
		GPU_OK "extres.lock-timeout: forever\n", EINVAL,
		BUF_PATH
		":4:22: extres.lock-timeout is 'forever'; it must be seconds from 0 to 3600, with at most three decimals");
}

/* extres.coordination-group: a group by name, the same for every
 * resource; a name that is no group is an error at its value. */
static void test_coordination_group(void **state)
{
	const struct group *gr = getgrgid(0);
	struct extres_config *c;
	char yaml[512], msg[512];

	assert_non_null(gr);
	c = load_ok(GPU_OK);
	assert_null(c->coordination_group);
	assert_int_equal(c->coordination_gid, EXTRES_NO_GROUP);
	assert_int_equal(c->resources[0].coordination_gid, EXTRES_NO_GROUP);
	extres_config_free(c);
	snprintf(yaml, sizeof(yaml), GPU_OK "extres.coordination-group: %s\n",
		 gr->gr_name);
	c = load_ok(yaml);
	assert_string_equal(c->coordination_group, gr->gr_name);
	assert_int_equal(c->coordination_gid, 0);
	assert_int_equal(c->resources[0].coordination_gid, 0);
	expect_warnings(c, NULL);
	extres_config_free(c);
	snprintf(yaml, sizeof(yaml),
		 GPU_OK "extres:\n  coordination-group: %s\n", gr->gr_name);
	c = load_ok(yaml);
	assert_int_equal(c->resources[0].coordination_gid, 0);
	extres_config_free(c);
	expect_error(
		GPU_OK "extres.coordination-group: no-such-group.extres\n",
		EINVAL,
		BUF_PATH
		":4:28: extres.coordination-group is 'no-such-group.extres', which is no group on this host");
	expect_error(
		GPU_OK "extres.coordination-group: {a: 1}\n", EINVAL,
		BUF_PATH
		":4:28: extres.coordination-group is a mapping, where a group name is expected");
	/* Misspelt: a warning, as for every key of ours. */
	c = load_ok(GPU_OK "extres.coordination-groups: x\n");
	snprintf(msg, sizeof(msg),
		 "%s:4:1: unknown key 'extres.coordination-groups' (ignored)",
		 BUF_PATH);
	expect_warnings(c, msg, NULL);
	extres_config_free(c);
}

static void test_env_var_key(void **state)
{
	struct extres_config *c;

	c = load_ok(GPU_OK);
	assert_null(c->resources[0].env_var);
	extres_config_free(c);

	c = load_ok(GPU_OK "external-resource.gpu.env-var: GPU_DEVICES\n");
	assert_string_equal(c->resources[0].env_var, "GPU_DEVICES");
	expect_warnings(c, NULL);
	extres_config_free(c);

	/* Set empty, or with no value: no variable, not the default. */
	c = load_ok(GPU_OK "external-resource.gpu.env-var: \"\"\n");
	assert_string_equal(c->resources[0].env_var, "");
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.env-var:\n");
	assert_string_equal(c->resources[0].env_var, "");
	expect_warnings(c, NULL);
	extres_config_free(c);

	c = load_ok("external-resources: gpu\n"
		    "external-resource:\n"
		    "  gpu:\n"
		    "    amount: 1\n"
		    "    driver: nvml\n"
		    "    env-var: _x9\n");
	assert_string_equal(c->resources[0].env_var, "_x9");
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_env_var_bad(void **state)
{
	expect_error(
		GPU_OK "external-resource.gpu.env-var: 1GPU\n", EINVAL,
		BUF_PATH
		":4:32: external-resource.gpu.env-var is '1GPU'; expected a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or \"\" for none");
	expect_error(
		GPU_OK "external-resource.gpu.env-var: A-B\n", EINVAL,
		BUF_PATH
		":4:32: external-resource.gpu.env-var is 'A-B'; expected a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or \"\" for none");
	expect_error(
		GPU_OK "external-resource.gpu.env-var: \"X;rm -rf /\"\n",
		EINVAL,
		BUF_PATH
		":4:32: external-resource.gpu.env-var is 'X;rm -rf /'; expected a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or \"\" for none");
	expect_error(
		GPU_OK "external-resource.gpu.env-var: [A, B]\n", EINVAL,
		BUF_PATH
		":4:32: external-resource.gpu.env-var is a sequence, where a variable name is expected");
}

/* Two assignments to one variable: a sourced file would keep the last. */
/* Loads, then fails extres_config_check_env() with the drivers' defaults. */
static void expect_env_error(const char *yaml, const char *const *defaults,
			     const char *msg)
{
	struct extres_config *c = load_ok(yaml);
	struct extres_err err = { "" };

	assert_int_equal(extres_config_check_env(c, defaults, &err), -EINVAL);
	assert_string_equal(err.msg, msg);
	extres_config_free(c);
}

/* What the nvml and amdgpu modules declare as their default variables. */
static const char *const nvml_twice[] = { "CUDA_VISIBLE_DEVICES",
					  "CUDA_VISIBLE_DEVICES" };
static const char *const amdgpu_static[] = { "ROCR_VISIBLE_DEVICES", NULL };
static const char *const nvml_nvml_amdgpu[] = { "CUDA_VISIBLE_DEVICES",
						"CUDA_VISIBLE_DEVICES",
						"ROCR_VISIBLE_DEVICES" };

static void test_env_var_clashes(void **state)
{
	struct extres_err err = { "" };
	struct extres_config *c;

	/* Drivers' defaults are known once their modules are loaded: the
	 * same rules, checked again with them. */
	expect_env_error(
		"external-resources: gpu;big\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: nvml\n"
		"external-resource.big.amount: 1\n"
		"external-resource.big.driver: nvml\n",
		nvml_twice,
		BUF_PATH
		":1:25: resource 'big' would set CUDA_VISIBLE_DEVICES (the nvml driver's default), as resource 'gpu' does (line 1, column 21); set external-resource.big.env-var to another name, or to \"\" for none");
	expect_env_error(
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: amdgpu\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n"
		"external-resource.fpga.env-var: ROCR_VISIBLE_DEVICES\n",
		amdgpu_static,
		BUF_PATH
		":6:33: resource 'fpga' would set ROCR_VISIBLE_DEVICES, as resource 'gpu' does (line 1, column 21); set external-resource.fpga.env-var to another name, or to \"\" for none");
	expect_error(
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: static\n"
		"external-resource.gpu.env-var: DEVS\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n"
		"external-resource.fpga.env-var: DEVS\n",
		EINVAL,
		BUF_PATH
		":7:33: resource 'fpga' would set DEVS, as resource 'gpu' does (line 4, column 32); set external-resource.fpga.env-var to another name, or to \"\" for none");
	/* Another resource's indexes, whichever is listed first. */
	expect_error(
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: static\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n"
		"external-resource.fpga.env-var: EXTRES_GPU_INDEXES\n",
		EINVAL,
		BUF_PATH
		":6:33: resource 'fpga' would set EXTRES_GPU_INDEXES, which holds the indexes of resource 'gpu'; set external-resource.fpga.env-var to another name");
	expect_error(
		"external-resources: gpu;fpga\n"
		"external-resource.gpu.amount: 1\n"
		"external-resource.gpu.driver: static\n"
		"external-resource.gpu.env-var: EXTRES_FPGA_INDEXES\n"
		"external-resource.fpga.amount: 1\n"
		"external-resource.fpga.driver: static\n",
		EINVAL,
		BUF_PATH
		":4:32: resource 'gpu' would set EXTRES_FPGA_INDEXES, which holds the indexes of resource 'fpga'; set external-resource.gpu.env-var to another name");
	expect_error(
		GPU_OK "external-resource.gpu.env-var: EXTRES_GPU_INDEXES\n",
		EINVAL,
		BUF_PATH
		":4:32: resource 'gpu' already sets EXTRES_GPU_INDEXES to its indexes; set external-resource.gpu.env-var to another name");
	expect_error(
		"external-resources: gpu-a;gpu.a\n"
		"external-resource.gpu-a.amount: 1\n"
		"external-resource.gpu-a.driver: static\n"
		"external-resource.gpu.a.amount: 1\n"
		"external-resource.gpu.a.driver: static\n",
		EINVAL,
		BUF_PATH
		":1:27: resource names 'gpu.a' and 'gpu-a' (line 1, column 21) both make the variable EXTRES_GPU_A_INDEXES; rename one");

	/* Turning one default off, or different drivers, clash with nothing. */
	c = load_ok("external-resources: gpu;big;amd\n"
		    "external-resource.gpu.amount: 1\n"
		    "external-resource.gpu.driver: nvml\n"
		    "external-resource.big.amount: 1\n"
		    "external-resource.big.driver: nvml\n"
		    "external-resource.big.env-var: ''\n"
		    "external-resource.amd.amount: 1\n"
		    "external-resource.amd.driver: amdgpu\n");
	assert_null(c->resources[0].env_var);
	assert_string_equal(c->resources[1].env_var, "");
	assert_null(c->resources[2].env_var);
	assert_int_equal(extres_config_check_env(c, nvml_nvml_amdgpu, &err), 0);
	extres_config_free(c);
}

static void test_env_var_names(void **state)
{
	char *var = NULL;

	/* The driver's default (what its module declares) unless configured. */
	assert_string_equal(extres_env_var("CUDA_VISIBLE_DEVICES", NULL),
			    "CUDA_VISIBLE_DEVICES");
	assert_null(extres_env_var(NULL, NULL));
	assert_null(extres_env_var("CUDA_VISIBLE_DEVICES", ""));
	assert_string_equal(extres_env_var("CUDA_VISIBLE_DEVICES",
					   "NVIDIA_VISIBLE_DEVICES"),
			    "NVIDIA_VISIBLE_DEVICES");
	assert_string_equal(extres_env_var(NULL, "X"), "X");

	assert_int_equal(extres_env_indexes_var("gpu-a.0", &var), 0);
	assert_string_equal(var, "EXTRES_GPU_A_0_INDEXES");
	free(var);
	assert_int_equal(extres_env_indexes_var("Zz9 \xc3\xa9", &var), 0);
	assert_string_equal(var, "EXTRES_ZZ9____INDEXES");
	free(var);

	assert_int_equal(extres_check_env_var_name("_"), 0);
	assert_int_equal(extres_check_env_var_name("a9_Z"), 0);
	assert_int_equal(extres_check_env_var_name(""), -EINVAL);
	assert_int_equal(extres_check_env_var_name("9a"), -EINVAL);
	assert_int_equal(extres_check_env_var_name("a-b"), -EINVAL);
	assert_int_equal(extres_check_env_var_name("a\xc3\xa9"), -EINVAL);
}

/* ---- warnings ---- */

static void test_unlisted_resource_warns_once(void **state)
{
	struct extres_config *c =
		load_ok(GPU_OK "external-resource.fpga.amount: 1\n"
			       "external-resource.fpga.driver: static\n"
			       "external-resource:\n"
			       "  nic:\n"
			       "    amount: 2\n"
			       "  empty:\n");

	assert_int_equal(c->n_resources, 1);
	expect_warnings(
		c,
		BUF_PATH
		":4:1: resource 'fpga' is configured but not listed in external-resources (ignored)",
		BUF_PATH
		":8:5: resource 'nic' is configured but not listed in external-resources (ignored)",
		NULL);
	extres_config_free(c);

	c = load_ok("external-resource.list: gpu\n"
		    "external-resource.gpu.amount: 1\n"
		    "external-resource.gpu.driver: script\n"
		    "external-resource.fpga.amount: 1\n");
	expect_warnings(
		c,
		BUF_PATH
		":4:1: resource 'fpga' is configured but not listed in external-resource.list (ignored)",
		NULL);
	extres_config_free(c);
}

static void test_misspelt_keys_warn(void **state)
{
	struct extres_config *c =
		load_ok(GPU_OK "external-resource.gpu.amout: 2\n"
			       "external-resource:\n"
			       "  gpu:\n"
			       "    kubernetes:\n"
			       "      configkey: nvidia.com/gpu\n"
			       "extres.mountpiont: /run/extres\n"
			       "extres: {coordination: x}\n"
			       "external-resources.gpu: 1\n"
			       "taskmanager.bogus: 1\n");

	expect_warnings(
		c,
		BUF_PATH
		":4:1: unknown key 'external-resource.gpu.amout' (ignored); did you mean external-resource.gpu.amount?",
		BUF_PATH
		":8:7: unknown key 'external-resource.gpu.kubernetes.configkey' (ignored); did you mean external-resource.gpu.kubernetes.config-key?",
		BUF_PATH
		":9:1: unknown key 'extres.mountpiont' (ignored); did you mean extres.mountpoint?",
		BUF_PATH ":10:10: unknown key 'extres.coordination' (ignored)",
		BUF_PATH
		":11:1: unknown key 'external-resources.gpu' (ignored)",
		NULL);
	assert_null(c->mountpoint);
	extres_config_free(c);
}

static void test_empty_sections_silent(void **state)
{
	/* A nested file with members commented out leaves null sections. */
	struct extres_config *c = load_ok("extres:\n"
					  "external-resources: gpu\n"
					  "external-resource:\n"
					  "  gpu:\n"
					  "    amount: 1\n"
					  "    driver: script\n"
					  "    param:\n"
					  "    kubernetes:\n"
					  "    yarn:\n"
					  "  fpga:\n");

	assert_int_equal(c->resources[0].params->count, 0);
	assert_null(c->resources[0].kubernetes_key);
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_repeated_key_last_wins(void **state)
{
	struct extres_config *c =
		load_ok(GPU_OK "taskmanager.numberOfTaskSlots: 1\n"
			       "taskmanager.numberOfTaskSlots: 2\n"
			       "external-resource:\n"
			       "  gpu:\n"
			       "    amount: 3\n");

	assert_int_equal(c->resources[0].amount.max, 3);
	/* Only our keys: Flink's are not ours to judge. */
	expect_warnings(
		c,
		BUF_PATH
		":8:5: key 'external-resource.gpu.amount' is set again (previously at line 2, column 1); the last value wins",
		NULL);
	extres_config_free(c);
}

/* ---- params ---- */

static void test_params_order_and_positions(void **state)
{
	struct extres_config *c =
		load_ok(GPU_OK "external-resource.gpu.param.b: 2\n"
			       "external-resource.gpu.param.a: 1\n"
			       "external-resource:\n"
			       "  gpu:\n"
			       "    param:\n"
			       "      c.d: x\n"
			       "      e: [1, \"two\"]\n"
			       "external-resource.gpu.param.z: 'quoted'\n");
	const struct extres_param *p = c->resources[0].params, *e;

	assert_int_equal(p->kind, EXTRES_PARAM_MAPPING);
	assert_null(p->key);
	assert_int_equal(p->line, 1);
	assert_int_equal(p->column, 21);
	assert_int_equal(p->count, 5);
	expect_scalar(&p->items[0], "b", "2", 4, 32);
	expect_scalar(&p->items[1], "a", "1", 5, 32);
	expect_scalar(&p->items[2], "c.d", "x", 9, 12);
	e = &p->items[3];
	assert_string_equal(e->key, "e");
	assert_int_equal(e->kind, EXTRES_PARAM_SEQUENCE);
	assert_null(e->value);
	assert_int_equal(e->count, 2);
	assert_int_equal(e->line, 10);
	assert_int_equal(e->column, 10);
	expect_scalar(&e->items[0], NULL, "1", 10, 11);
	expect_scalar(&e->items[1], NULL, "two", 10, 14);
	expect_scalar(&p->items[4], "z", "quoted", 11, 32);
	assert_null(extres_param_get(p, "missing"));
	assert_null(extres_param_scalar(p, "e"));
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_params_null_values(void **state)
{
	struct extres_config *c = load_ok(
		GPU_OK "external-resource.gpu.param.tilde: ~\n"
		       "external-resource.gpu.param.empty:\n"
		       "external-resource.gpu.param.quoted: '~'\n"
		       "external-resource.gpu.param.list: [null, '']\n");
	const struct extres_param *p = c->resources[0].params;

	assert_int_equal(p->count, 4);
	expect_scalar(&p->items[0], "tilde", "", 4, 36);
	assert_string_equal(extres_param_scalar(p, "empty"), "");
	assert_string_equal(extres_param_scalar(p, "quoted"), "~");
	expect_scalar(&p->items[3].items[0], NULL, "", 7, 36);
	expect_scalar(&p->items[3].items[1], NULL, "", 7, 42);
	extres_config_free(c);
}

/* The top-level mapping is level 1, so a param under a flat key may nest
 * 63 levels. */
static void test_params_nesting_limit(void **state)
{
	char yaml[512], msg[256];
	size_t len, prefix;
	int depth;

	for (depth = 63; depth <= 64; depth++) {
		len = (size_t)snprintf(yaml, sizeof(yaml),
				       GPU_OK
				       "external-resource.gpu.param.deep: ");
		prefix = len - strlen(GPU_OK);
		memset(yaml + len, '[', (size_t)depth);
		memset(yaml + len + depth, ']', (size_t)depth);
		strcpy(yaml + len + 2 * depth, "\n");
		if (depth == 63) {
			extres_config_free(load_ok(yaml));
			continue;
		}
		snprintf(msg, sizeof(msg),
			 BUF_PATH ":4:%zu: nested deeper than 64 levels",
			 prefix + 64);
		expect_error(yaml, EINVAL, msg);
	}
}

/*
 * The depth is checked as the parser reads: 100,000 brackets that are
 * never closed (libyaml would say so at the end of the file) end at the
 * 64th, without reading the rest. Reading them all took seconds.
 */
static void test_nesting_stops_at_limit(void **state)
{
	size_t n = 100000, len = strlen(GPU_OK "x: ");
	char *yaml = malloc(len + n + 1);
	struct timespec t0, t1;

	assert_non_null(yaml);
	strcpy(yaml, GPU_OK "x: ");
	memset(yaml + len, '[', n);
	yaml[len + n] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_error(yaml, EINVAL,
		     BUF_PATH ":4:67: nested deeper than 64 levels");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* A hang guard, not a benchmark: the parse takes microseconds. */
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	/* Block mappings too, at the key that opens level 65. */
	yaml = realloc(yaml, 65 * 70 + 64);
	assert_non_null(yaml);
	yaml[0] = '\0';
	for (len = 0; len < 65; len++)
		sprintf(yaml + strlen(yaml), "%*sk%zu:\n", (int)len, "", len);
	sprintf(yaml + strlen(yaml), "%*sv: 1\n", 65, "");
	expect_error(yaml, EINVAL,
		     BUF_PATH ":65:65: nested deeper than 64 levels");
	free(yaml);
}

static void test_alias_expansion_bounded(void **state)
{
	char yaml[4096], *p = yaml;
	int i;

	/* A billion laughs: ends at the alias that passes the node limit. */
	p += sprintf(p, GPU_OK "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (i = 1; i < 8; i++)
		p += sprintf(
			p,
			"l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n",
			i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
			i - 1, i - 1, i - 1);
	sprintf(p, "external-resource.gpu.param.bomb: *l7\n");
	expect_error(
		yaml, E2BIG,
		BUF_PATH
		":9:10: aliases expand the document to more than 131072 YAML nodes");

	/* An alias loop: the node names itself. */
	expect_error(
		GPU_OK "external-resource.gpu.param.loop: &x [*x]\n", EINVAL,
		BUF_PATH ":4:39: the alias *x names a node that contains it");
	expect_error(
		GPU_OK "external-resource.gpu.param.x: *nowhere\n", EINVAL,
		BUF_PATH
		":4:32: the alias *nowhere names no anchor defined before it");
	expect_error(
		GPU_OK "a: &x 1\nb: &x 2\n", EINVAL,
		BUF_PATH
		":5:4: the anchor &x is defined twice (first at line 4, column 4)");
	/* What an alias names counts at the depth it lands. */
	p = yaml + sprintf(yaml, GPU_OK "deep: &d ");
	memset(p, '[', 62);
	memset(p + 62, ']', 62);
	strcpy(p + 124, "\nok: [*d]\nbad: [[*d]]\n");
	expect_error(
		yaml, EINVAL,
		BUF_PATH
		":6:8: the alias *d nests deeper than 64 levels (its node is 62 levels deep, placed at level 4)");
}

/*
 * The alias bomb of issue 10: one 60 KB value shared by 1,000 devices made
 * 60 MB of params (and 238 MB in the daemon). Sharing stays free up to
 * 1 MiB of expanded text.
 */
static void test_alias_text_bounded(void **state)
{
	size_t value = 60000, devices = 1000, i;
	char *yaml = malloc(value + devices * 64 + 256), *p = yaml;
	struct extres_config *c;

	assert_non_null(yaml);
	p += sprintf(p, GPU_OK "blob: &b \"");
	memset(p, 'x', value);
	p += value;
	p += sprintf(p, "\"\nexternal-resource.gpu.param.devices:\n");
	for (i = 0; i < devices; i++)
		p += sprintf(p, "  - {index: %zu, blob: *b}\n", i);
	expect_error(
		yaml, E2BIG,
		BUF_PATH
		":23:23: aliases add more than 1 MiB of text to the document (the alias *b adds 60000 bytes)");

	/* 16 shares of 60 KB stay below it. */
	p = strstr(yaml, "  - {index: 16,");
	strcpy(p, "");
	c = load_ok(yaml);
	assert_int_equal(
		extres_param_get(c->resources[0].params, "devices")->count, 16);
	extres_config_free(c);
	free(yaml);
}

/*
 * A file big with values and no alias is refused for what it holds, never
 * for what aliases would expand to; one as big in text alone is read.
 */
static void test_big_files(void **state)
{
	size_t size = 13u << 20, len;
	char *yaml = malloc(size + 1), *p;
	struct extres_config *c;
	struct extres_err err = { "" };
	int r;

	assert_non_null(yaml);
	p = yaml + sprintf(yaml, GPU_OK);
	while ((size_t)(p - yaml) + 32 < size)
		p += sprintf(p, "k%zu: v\n", (size_t)(p - yaml));
	len = (size_t)(p - yaml);
	c = NULL;
	r = extres_config_load_buffer(BUF_PATH, yaml, len, &c, &err);
	assert_int_equal(r, -E2BIG);
	assert_null(c);
	assert_non_null(strstr(
		err.msg,
		": the file holds more than 131072 YAML nodes (keys, values, sequences and mappings)"));
	assert_null(strstr(err.msg, "alias"));

	/* A long key with keys nested under it: each of theirs repeats it. */
	p = yaml + sprintf(yaml, GPU_OK "? ");
	memset(p, 'K', 1u << 20);
	p += 1u << 20;
	p += sprintf(p, "\n:\n");
	for (len = 0; len < 20; len++)
		p += sprintf(p, "  k%zu: v\n", len);
	expect_error(
		yaml, E2BIG,
		BUF_PATH
		":20:3: the keys add up to more than 16 MiB once nested keys are joined with dots");

	/* 13 MB in one value: within every limit. */
	p = yaml + sprintf(yaml, GPU_OK "flink.blob: \"");
	len = size - (size_t)(p - yaml) - 2;
	memset(p, 'y', len);
	strcpy(p + len, "\"\n");
	c = load_ok(yaml);
	extres_config_free(c);
	free(yaml);
}

/* A tag asks for a type: extres reads text, so it takes only the core
 * schema's, and says where any other is. */
static void test_tags(void **state)
{
	struct extres_config *c;

	c = load_ok("external-resources: !!str gpu\n"
		    "external-resource.gpu.amount: !!int 2\n"
		    "external-resource.gpu.driver: ! script\n"
		    "external-resource.gpu.param: !!map\n"
		    "  a: !!float 1.5\n"
		    "  b: !!bool true\n"
		    "  c: !!null\n"
		    "  d: !!seq [!!str x]\n");
	assert_int_equal(c->resources[0].amount.max, 2);
	assert_string_equal(c->resources[0].driver, "script");
	assert_string_equal(extres_param_scalar(c->resources[0].params, "a"),
			    "1.5");
	assert_string_equal(extres_param_scalar(c->resources[0].params, "c"),
			    "");
	extres_config_free(c);

	expect_error(
		GPU_OK "flink.x: !!python/object:os.system [id]\n", EINVAL,
		BUF_PATH
		":4:10: the tag !!python/object:os.system is not one extres reads (only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)");
	expect_error(
		GPU_OK "external-resource.gpu.param.x: !secret abc\n", EINVAL,
		BUF_PATH
		":4:32: the tag !secret is not one extres reads (only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)");
	expect_error(
		GPU_OK "x: !<tag:example.com,2024:t> 1\n", EINVAL,
		BUF_PATH
		":4:4: the tag !<tag:example.com,2024:t> is not one extres reads (only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)");
	expect_error(
		GPU_OK "x: !!binary aGk=\n", EINVAL,
		BUF_PATH
		":4:4: the tag !!binary is not one extres reads (only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)");
	expect_error(GPU_OK "x: !!map [a]\n", EINVAL,
		     BUF_PATH
		     ":4:4: the tag !!map is for a mapping, not a sequence");
	expect_error(GPU_OK "x: !!str {a: 1}\n", EINVAL,
		     BUF_PATH
		     ":4:4: the tag !!str is for a scalar, not a mapping");
	/* Control bytes from %-escapes are not echoed. */
	expect_error(
		GPU_OK "x: !a%01b 1\n", EINVAL,
		BUF_PATH
		":4:4: the tag !a?b is not one extres reads (only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map)");
}

/* A mapping where a key takes one value is flattened away: say so, rather
 * than that the key is not set. */
static void test_mapping_where_value_expected(void **state)
{
	struct extres_config *c;

	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.driver: static\n"
		"external-resource.gpu.amount: {a: 1}\n",
		EINVAL,
		BUF_PATH
		":3:31: external-resource.gpu.amount is a mapping, where an amount (N, N-M, N- or all) is expected");
	expect_error(
		"external-resources: gpu\n"
		"external-resource:\n"
		"  gpu:\n"
		"    driver: static\n"
		"    amount:\n"
		"      a: 1\n",
		EINVAL,
		BUF_PATH
		":6:7: external-resource.gpu.amount is a mapping, where an amount (N, N-M, N- or all) is expected");
	expect_error(
		"external-resources: gpu\n"
		"external-resource.gpu.driver: static\n"
		"external-resource.gpu.amount: {}\n",
		EINVAL,
		BUF_PATH
		":3:31: external-resource.gpu.amount is a mapping, where an amount (N, N-M, N- or all) is expected");
	expect_error(
		"external-resources: {gpu: 1}\n", EINVAL,
		BUF_PATH
		":1:21: external-resources is a mapping, where a list of resource names is expected");
	expect_error(
		GPU_OK "external-resource.gpu.refresh-interval: {s: 1}\n",
		EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.refresh-interval is a mapping, where a number of seconds is expected");
	expect_error(
		GPU_OK "external-resource.gpu.coordination-file: {a: b}\n",
		EINVAL,
		BUF_PATH
		":4:42: external-resource.gpu.coordination-file is a mapping, where a path is expected");
	expect_error(
		GPU_OK "extres:\n  mountpoint:\n    a: b\n", EINVAL,
		BUF_PATH
		":6:5: extres.mountpoint is a mapping, where a path is expected");
	expect_error(
		GPU_OK "extres.lock-timeout: {a: 1}\n", EINVAL,
		BUF_PATH
		":4:22: extres.lock-timeout is a mapping, where a number of seconds is expected");
	/* Flink's nested forms of driver.class and kubernetes.config-key
	 * are sections, not mistakes. */
	c = load_ok(
		"external-resources: gpu\n"
		"external-resource:\n"
		"  gpu:\n"
		"    amount: 1\n"
		"    driver: {class: org.apache.flink.externalresource.gpu.GPUDriver}\n"
		"    kubernetes: {config-key: nvidia.com/gpu}\n"
		"    param: {}\n");
	assert_string_equal(c->resources[0].driver, "script");
	assert_string_equal(c->resources[0].kubernetes_key, "nvidia.com/gpu");
	expect_warnings(c, NULL);
	extres_config_free(c);
}

/* ---- YAML and files ---- */

static void test_yaml_syntax_error(void **state)
{
	expect_error(
		"external-resources: [gpu\nexternal-resource.gpu.amount: 1\n",
		EINVAL,
		BUF_PATH
		":2:29: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 21)");
	expect_file_error(
		FIXTURE("syntax-error.yaml"), EINVAL,
		FIXTURE("syntax-error.yaml") ":4:2: did not find expected key (while parsing a block mapping at line 1, column 1)");
	expect_error("a: 1\nb: \x01\n", EINVAL,
		     BUF_PATH
		     ": control characters are not allowed (#1 at byte 8)");
}

static void test_yaml_shape_errors(void **state)
{
	expect_error(
		"- gpu\n- fpga\n", EINVAL,
		BUF_PATH
		":1:1: the top level is a sequence, not a mapping of keys");
	expect_error("gpu\n", EINVAL,
		     BUF_PATH
		     ":1:1: the top level is a scalar, not a mapping of keys");
	expect_error(
		GPU_OK "---\nexternal-resources: fpga\n", EINVAL,
		BUF_PATH
		":5:1: a second YAML document starts here; a config file holds one");
	expect_error(GPU_OK "? [a, b]\n: c\n", EINVAL,
		     BUF_PATH ":4:3: a key must be a scalar, not a sequence");
	expect_error(GPU_OK "external-resource.gpu.param.x: \"a\\0b\"\n",
		     EINVAL, BUF_PATH ":4:32: a value holds a NUL character");
}

static void test_empty_file(void **state)
{
	struct extres_config sentinel, *c = &sentinel;
	struct extres_err err = { "" };

	expect_file_error(
		FIXTURE("empty.yaml"), EINVAL,
		FIXTURE("empty.yaml") ": no resources listed (set external-resources)");
	expect_error("# nothing but a comment\n", EINVAL,
		     BUF_PATH ": no resources listed (set external-resources)");
	expect_error("---\n", EINVAL,
		     BUF_PATH ": no resources listed (set external-resources)");
	assert_int_equal(extres_config_load_buffer(BUF_PATH, NULL, 0, &c, &err),
			 -EINVAL);
	assert_string_equal(err.msg, BUF_PATH
			    ": no resources listed (set external-resources)");
	assert_ptr_equal(c, &sentinel);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	return remove(path);
}

static int make_scratch(void **state)
{
	char *dir = strdup("/tmp/extres-test-config-XXXXXX");

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

/* Runs even when a test fails half-way. */
static int remove_scratch(void **state)
{
	char *dir = *state;
	int r = nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(dir);
	return r;
}

/* A scratch directory with a config, a symlink to it and a subdirectory. */
static void test_files(void **state)
{
	const char *dir = *state;
	char file[PATH_MAX], link[PATH_MAX], sub[PATH_MAX], missing[PATH_MAX];
	char big[PATH_MAX], fifo[PATH_MAX];
	char msg[PATH_MAX + 64], msg2[PATH_MAX + 64], *real_dir;
	struct extres_config *c;
	FILE *f;

	real_dir = real(dir);
	snprintf(file, sizeof(file), "%s/extres.yaml", dir);
	snprintf(link, sizeof(link), "%s/sub/link.yaml", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(missing, sizeof(missing), "%s/missing.yaml", dir);
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
	f = fopen(file, "we");
	assert_non_null(f);
	fputs(GPU_OK "external-resource.gpu.coordination-file: gpu.coord\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(symlink("../extres.yaml", link), 0);

	/* Through the link: the path and relative paths are the target's. */
	c = load_file_ok(link);
	snprintf(msg, sizeof(msg), "%s/extres.yaml", real_dir);
	assert_string_equal(c->path, msg);
	assert_string_equal(c->dir, real_dir);
	snprintf(msg, sizeof(msg), "%s/gpu.coord", real_dir);
	assert_string_equal(c->resources[0].coordination_file, msg);
	extres_config_free(c);

	snprintf(msg, sizeof(msg), "%s: No such file or directory", missing);
	expect_file_error(missing, ENOENT, msg);
	snprintf(msg, sizeof(msg), "%s: Is a directory", sub);
	expect_file_error(sub, EISDIR, msg);

	/* Sparse, so cheap to make; read until the limit, then refused. */
	f = fopen(big, "we");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), (16 << 20) + 1), 0);
	assert_int_equal(fclose(f), 0);
	snprintf(msg, sizeof(msg), "%s: larger than 16 MiB", big);
	expect_file_error(big, EFBIG, msg);
	/* Opening a FIFO with no writer must not hang. */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(msg, sizeof(msg), "%s: not a regular file", fifo);
	expect_file_error(fifo, EINVAL, msg);

	/* Ours: trusted. Another user's, or writable by others: loaded, with
	 * the reason why nothing it names may run. */
	c = load_file_ok(file);
	assert_null(c->untrusted);
	extres_config_free(c);
	/* Giving a file away takes root. */
	if (geteuid() != 0) {
		free(real_dir);
		return;
	}
	assert_int_equal(chown(file, 65534, 65534), 0);
	c = load_file_ok(file);
	snprintf(
		msg, sizeof(msg),
		"config file %s/extres.yaml could be modified by another user: it is owned by uid 65534 (mode 0644)",
		real_dir);
	assert_non_null(c->untrusted);
	assert_string_equal(c->untrusted, msg);
	extres_config_free(c);
	assert_int_equal(chown(file, 0, 0), 0);
	assert_int_equal(chmod(file, 0664), 0);
	c = load_file_ok(file);
	assert_non_null(c->untrusted);
	assert_non_null(
		strstr(c->untrusted, "it is group-writable (mode 0664)"));
	extres_config_free(c);

	/* Such a file may not widen whom root trusts: the trusted group is
	 * ignored, with a warning that says why. */
	f = fopen(file, "ae");
	assert_non_null(f);
	fprintf(f, "extres.coordination-group: %s\n", getgrgid(0)->gr_name);
	assert_int_equal(fclose(f), 0);
	c = load_file_ok(file);
	assert_null(c->coordination_group);
	assert_int_equal(c->coordination_gid, EXTRES_NO_GROUP);
	assert_int_equal(c->resources[0].coordination_gid, EXTRES_NO_GROUP);
	snprintf(msg, sizeof(msg),
		 "%s:5:28: extres.coordination-group is ignored: %s", file,
		 c->untrusted);
	expect_warnings(c, msg, NULL);
	extres_config_free(c);
	assert_int_equal(chmod(file, 0644), 0);
	c = load_file_ok(file);
	assert_null(c->untrusted);
	assert_int_equal(c->coordination_gid, 0);
	extres_config_free(c);

	/* Nor make root write CDI specs from what it names. */
	assert_int_equal(chmod(file, 0664), 0);
	f = fopen(file, "ae");
	assert_non_null(f);
	fprintf(f, "extres.cdi-spec-dir: /var/run/cdi\n");
	assert_int_equal(fclose(f), 0);
	c = load_file_ok(file);
	assert_null(c->cdi_spec_dir);
	snprintf(msg, sizeof(msg),
		 "%s:5:28: extres.coordination-group is ignored: %s", file,
		 c->untrusted);
	snprintf(msg2, sizeof(msg2),
		 "%s:6:22: extres.cdi-spec-dir is ignored: %s", file,
		 c->untrusted);
	expect_warnings(c, msg, msg2, NULL);
	extres_config_free(c);
	assert_int_equal(chmod(file, 0644), 0);
	c = load_file_ok(file);
	assert_string_equal(c->cdi_spec_dir, "/var/run/cdi");
	extres_config_free(c);

	/* Root's file, reached through a symlink in a directory anyone may
	 * write: the symlink decides what is read, so it counts. */
	assert_int_equal(chmod(file, 0644), 0);
	snprintf(sub, sizeof(sub), "%s/open", dir);
	snprintf(link, sizeof(link), "%s/open/link.yaml", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(symlink("../extres.yaml", link), 0);
	c = load_file_ok(link);
	snprintf(
		msg, sizeof(msg),
		"directory %s/open is world-writable without the sticky bit (mode 0777)",
		real_dir);
	assert_non_null(c->untrusted);
	assert_non_null(strstr(c->untrusted, msg));
	extres_config_free(c);
	free(real_dir);
}

static void test_dotted_names(void **state)
{
	/* The longest listed name owns a key. */
	struct extres_config *c =
		load_ok("external-resources: a;a.b\n"
			"external-resource.a.amount: 1\n"
			"external-resource.a.driver: script\n"
			"external-resource.a.b.amount: 2\n"
			"external-resource.a.b.driver: static\n");

	assert_int_equal(c->resources[0].amount.max, 1);
	assert_string_equal(c->resources[0].driver, "script");
	assert_int_equal(c->resources[1].amount.max, 2);
	assert_string_equal(c->resources[1].driver, "static");
	expect_warnings(c, NULL);
	extres_config_free(c);
}

static void test_free_null(void **state)
{
	extres_config_free(NULL);
	extres_param_free(NULL);
}

/* replicas and sharing-strategy: shares per device, and how. */
static void test_sharing(void **state)
{
	struct extres_config *c;

	(void)state;
	c = load_ok(GPU_OK);
	assert_int_equal(c->resources[0].replicas, 1);
	assert_null(c->resources[0].mps_pipe_dir);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.coordination-file: /c\n"
			   "external-resource.gpu:\n"
			   "  replicas: 4\n"
			   "  sharing-strategy: mps\n"
			   "  mps:\n"
			   "    pipe-directory: /run/mps\n");
	expect_warnings(c, NULL);
	assert_int_equal(c->resources[0].replicas, 4);
	assert_int_equal(c->resources[0].sharing, EXTRES_SHARING_MPS);
	assert_string_equal(c->resources[0].mps_pipe_dir, "/run/mps");
	assert_string_equal(c->resources[0].mps_log_dir,
			    EXTRES_MPS_LOG_DEFAULT);
	extres_config_free(c);
	/* Keys without the key they depend on: warned about. */
	c = load_ok(GPU_OK "external-resource.gpu.sharing-strategy: mps\n"
			   "external-resource.gpu.mps.log-directory: /x\n");
	expect_warnings(
		c,
		BUF_PATH
		":4:1: external-resource.gpu.sharing-strategy is ignored: external-resource.gpu.replicas is not above 1",
		NULL);
	extres_config_free(c);
	c = load_ok(GPU_OK "external-resource.gpu.mps.pipe-directory: /x\n");
	expect_warnings(
		c,
		BUF_PATH
		":4:1: external-resource.gpu.mps.pipe-directory is ignored: external-resource.gpu.sharing-strategy is not mps",
		NULL);
	extres_config_free(c);
	expect_error(
		GPU_OK "external-resource.gpu.replicas: 4\n", EINVAL,
		BUF_PATH
		":4:33: external-resource.gpu.replicas is 4, but external-resource.gpu.coordination-file is not set: shares are leased through the coordination file");
	expect_error(
		GPU_OK "external-resource.gpu.replicas: 0\n", EINVAL,
		BUF_PATH
		":4:33: external-resource.gpu.replicas is '0'; expected a whole number of shares per device from 1 to 64");
	expect_error(
		GPU_OK "external-resource.gpu.sharing-strategy: mig\n", EINVAL,
		BUF_PATH
		":4:41: external-resource.gpu.sharing-strategy is 'mig'; expected time-slicing or mps");
}

int main(void)
{
	/* Flink's default script depends on it (test_gpu_default_script). */
	unsetenv("FLINK_HOME");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flink_conf_flat),
		cmocka_unit_test(test_flink_config_nested),
		cmocka_unit_test(test_extres_own_file),
		cmocka_unit_test(test_legacy_names),
		cmocka_unit_test(test_both_lists_warn),
		cmocka_unit_test(test_list_items_trimmed),
		cmocka_unit_test(test_list_quoted_and_sequence),
		cmocka_unit_test(test_list_errors),
		cmocka_unit_test(test_bad_resource_names),
		cmocka_unit_test(test_too_many_resources),
		cmocka_unit_test(test_check_name),
		cmocka_unit_test(test_amount_missing),
		cmocka_unit_test(test_amount_bad_values),
		cmocka_unit_test(test_amount_good_values),
		cmocka_unit_test(test_amount_forms),
		cmocka_unit_test(test_amount_same),
		cmocka_unit_test(test_driver_missing),
		cmocka_unit_test(test_driver_unsupported_class),
		cmocka_unit_test(test_driver_bad_name),
		cmocka_unit_test(test_driver_wins_over_class),
		cmocka_unit_test(test_driver_class_gpu_driver),
		cmocka_unit_test_setup_teardown(test_gpu_default_script,
						make_scratch, remove_scratch),
		cmocka_unit_test(test_kubernetes_yarn_keys),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_buffer_relative_path),
		cmocka_unit_test(test_mountpoint_empty),
		cmocka_unit_test(test_coordination_key),
		cmocka_unit_test(test_refresh_interval),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_sharing),
		cmocka_unit_test(test_lock_timeout),
		cmocka_unit_test(test_coordination_group),
		cmocka_unit_test(test_env_var_key),
		cmocka_unit_test(test_env_var_bad),
		cmocka_unit_test(test_env_var_clashes),
		cmocka_unit_test(test_env_var_names),
		cmocka_unit_test(test_unlisted_resource_warns_once),
		cmocka_unit_test(test_misspelt_keys_warn),
		cmocka_unit_test(test_empty_sections_silent),
		cmocka_unit_test(test_repeated_key_last_wins),
		cmocka_unit_test(test_params_order_and_positions),
		cmocka_unit_test(test_params_null_values),
		cmocka_unit_test(test_params_nesting_limit),
		cmocka_unit_test(test_nesting_stops_at_limit),
		cmocka_unit_test(test_alias_expansion_bounded),
		cmocka_unit_test(test_alias_text_bounded),
		cmocka_unit_test(test_big_files),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_mapping_where_value_expected),
		cmocka_unit_test(test_yaml_syntax_error),
		cmocka_unit_test(test_yaml_shape_errors),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test_setup_teardown(test_files, make_scratch,
						remove_scratch),
		cmocka_unit_test(test_dotted_names),
		cmocka_unit_test(test_free_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
