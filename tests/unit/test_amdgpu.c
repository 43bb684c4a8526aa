/* SPDX-License-Identifier: MIT */
/*
 * The amdgpu driver, drivers/amdgpu.so, run through the host side on fake
 * sysfs trees (param.sysfs-root) shaped like a host with AMD Instinct MI300X
 * GPUs: KFD topology nodes 0 (CPU), 1 and 2 (GPUs), DRM render nodes linked
 * to their PCI functions. Once on this machine's /sys as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_tree.h"

#define AMDGPU_SO EXTRES_DRIVERS_BUILD_DIR "/amdgpu.so"
#define PREFIX "resource 'gpu': driver 'amdgpu': "
#define WARN "extres: warning: " PREFIX
#define NODES "class/kfd/kfd/topology/nodes"

/* A KFD node's properties as the kernel prints them (MI300X values).
 * A NULL field leaves its line out. */
struct node_props {
	const char *simd_count;
	const char *gfx_target_version;
	const char *drm_render_minor;
	const char *unique_id;
	const char *location_id;
};

static const struct node_props cpu_node = { "0", "0", "0", "0", "0" };

static void put_node(const char *root, unsigned node,
		     const struct node_props *p)
{
	char rel[PATH_MAX], text[4096], *o = text;
	size_t left = sizeof(text);
	int n;

#define LINE(...)                                        \
	do {                                             \
		n = snprintf(o, left, __VA_ARGS__);      \
		assert_true(n >= 0 && (size_t)n < left); \
		o += n;                                  \
		left -= (size_t)n;                       \
	} while (0)
#define FIELD(name, value)                            \
	do {                                          \
		if (value)                            \
			LINE("%s %s\n", name, value); \
	} while (0)

	LINE("cpu_cores_count %s\n", strcmp(p->simd_count, "0") ? "0" : "96");
	FIELD("simd_count", p->simd_count);
	LINE("mem_banks_count 1\ncaches_count 546\nio_links_count 1\n"
	     "p2p_links_count 7\ncpu_core_id_base 0\nsimd_id_base 2147488032\n"
	     "max_waves_per_simd 8\nlds_size_in_kb 64\ngds_size_in_kb 0\n"
	     "num_gws 64\nwave_front_size 64\narray_count 32\n"
	     "simd_arrays_per_engine 1\ncu_per_simd_array 10\nsimd_per_cu 4\n"
	     "max_slots_scratch_cu 32\n");
	FIELD("gfx_target_version", p->gfx_target_version);
	LINE("vendor_id %s\ndevice_id %s\n",
	     strcmp(p->simd_count, "0") ? "4098" : "0",
	     strcmp(p->simd_count, "0") ? "29856" : "0");
	FIELD("location_id", p->location_id);
	LINE("domain 0\n");
	FIELD("drm_render_minor", p->drm_render_minor);
	LINE("hive_id 9182018427468935468\nnum_sdma_engines 2\n"
	     "num_sdma_xgmi_engines 14\nnum_sdma_queues_per_engine 8\n"
	     "num_cp_queues 24\nmax_engine_clk_fcompute 2100\n"
	     "local_mem_size 0\nfw_version 177\ncapability 1009500800\n"
	     "debug_prop 1495\nsdma_fw_version 22\n");
	FIELD("unique_id", p->unique_id);
	LINE("num_xcc 8\nmax_engine_clk_ccompute 3250\n");
#undef FIELD
#undef LINE
	fake_fmt(rel, sizeof(rel), NODES "/%u/properties", node);
	fake_put(root, rel, text);
	fake_fmt(rel, sizeof(rel), NODES "/%u/gpu_id", node);
	fake_put(root, rel, strcmp(p->simd_count, "0") ? "45412\n" : "0\n");
}

/* The CPUs near each socket of a two-socket host, as local_cpulist says. */
#define CPUS0 "0-47,96-143"
#define CPUS1 "48-95,144-191"

/*
 * The PCI function `bdf` behind root port `port`, with render node
 * renderD<minor> linked both ways as in real sysfs. `vram` NULL: no
 * mem_info_vram_total.
 */
static void put_pci_gpu(const char *root, const char *port, const char *bdf,
			unsigned minor, const char *vram, const char *numa)
{
	char dev[PATH_MAX], rel[PATH_MAX], target[PATH_MAX];

	fake_fmt(dev, sizeof(dev), "devices/pci%.7s/%s/%s", port, port, bdf);
	fake_fmt(rel, sizeof(rel), "%s/drm/renderD%u/device", dev, minor);
	fake_fmt(target, sizeof(target), "../../../%s", bdf);
	fake_symlink(root, rel, target);
	fake_fmt(rel, sizeof(rel), "%s/drm/renderD%u/dev", dev, minor);
	fake_put(root, rel, "226:128\n");
	fake_fmt(rel, sizeof(rel), "class/drm/renderD%u", minor);
	fake_fmt(target, sizeof(target), "../../%s/drm/renderD%u", dev, minor);
	fake_symlink(root, rel, target);
	if (vram) {
		fake_fmt(rel, sizeof(rel), "%s/mem_info_vram_total", dev);
		fake_put(root, rel, vram);
	}
	fake_fmt(rel, sizeof(rel), "%s/numa_node", dev);
	fake_put(root, rel, numa);
	fake_fmt(rel, sizeof(rel), "%s/local_cpulist", dev);
	fake_put(root, rel, strcmp(numa, "0\n") ? CPUS1 "\n" : CPUS0 "\n");
	fake_fmt(rel, sizeof(rel), "%s/vendor", dev);
	fake_put(root, rel, "0x1002\n");
}

static const struct node_props gpu1 = { "1216", "90402", "128",
					"3230446468412483091", "49408" };
static const struct node_props gpu2 = { "1216", "90402", "136",
					"13579246801357924680", "16640" };

/* Node 0 a CPU, 1 and 2 GPUs on 0000:c1:00.0 and 0000:41:00.0. */
static void make_mi300x(const char *root, int with_vram2)
{
	put_node(root, 0, &cpu_node);
	put_node(root, 1, &gpu1);
	put_node(root, 2, &gpu2);
	put_pci_gpu(root, "0000:c0:01.1", "0000:c1:00.0", 128, "206141652992\n",
		    "0\n");
	put_pci_gpu(root, "0000:40:01.1", "0000:41:00.0", 136,
		    with_vram2 ? "206141652992\n" : NULL, "1\n");
}

/* The driver's real path for the fake root: /tmp may be a link. */
static void real_root(const char *root, char *ret)
{
	assert_non_null(realpath(root, ret));
}

static struct extres_infos *discover_root(const char *root, char *log,
					  size_t log_len)
{
	struct extres_param items[] = { SCALAR("sysfs-root", NULL, 4, 15) };

	items[0].value = root;
	return fake_discover(AMDGPU_SO, "gpu", "/etc/extres", items, N(items),
			     log, log_len);
}

#define GPU0_PROPS                                                     \
	"index", "0", "unique_id", "0x2cd4d9f287a42613", "vendor_id",  \
		"0x1002", "device_id", "0x74a0", "gfx_target_version", \
		"90402", "drm_render_minor", "128", "device",          \
		"/dev/dri/renderD128"

/* Both GPUs with every property, the CPU node left out; the second GPU
 * without mem_info_vram_total loses memory.total only. */
static void test_mi300x(void **state)
{
	const char *root = *state;
	char real[PATH_MAX], want[PATH_MAX + 512], log[4096];
	struct extres_infos *infos;

	make_mi300x(root, 0);
	real_root(root, real);
	infos = discover_root(root, log, sizeof(log));

	fake_fmt(
		want, sizeof(want),
		WARN
		"GPU 1 (KFD node 2): %s/devices/pci0000:40/0000:40:01.1/0000:41:00.0/mem_info_vram_total: No such file or directory; memory.total left out\n",
		real);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], GPU0_PROPS, "pci.bus_id", "0000:c1:00.0",
		     "memory.total", "196592", "numa_node", "0",
		     "local_cpulist", CPUS0);
	EXPECT_PROPS(&infos->items[1], "index", "1", "unique_id",
		     "0xbc732d05184c6948", "vendor_id", "0x1002", "device_id",
		     "0x74a0", "gfx_target_version", "90402",
		     "drm_render_minor", "136", "device", "/dev/dri/renderD136",
		     "pci.bus_id", "0000:41:00.0", "numa_node", "1",
		     "local_cpulist", CPUS1);
	extres_infos_free(infos);
}

/* health from the RAS files: uncorrectable counts per block (umc is the
 * memory: ecc-ue), bad pages pending or failed to retire; ok when all are
 * clear, and again once they clear; absent without a ras directory. */
static void test_ras_health(void **state)
{
	const char *root = *state;
	const char *dev0 = "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0/ras",
		   *dev1 = "devices/pci0000:40/0000:40:01.1/0000:41:00.0/ras";
	char rel[PATH_MAX], log[4096];
	struct extres_infos *infos;

	make_mi300x(root, 1);
	infos = discover_root(root, log, sizeof(log));
	assert_null(extres_info_get(&infos->items[0], "health"));
	extres_infos_free(infos);

	fake_fmt(rel, sizeof(rel), "%s/umc_err_count", dev0);
	fake_put(root, rel, "ue: 0\nce: 3\nde: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/gfx_err_count", dev0);
	fake_put(root, rel, "ue: 0\nce: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/gpu_vram_bad_pages", dev0);
	fake_put(root, rel, "0x00000001 : 0x00001000 : R\n");
	fake_fmt(rel, sizeof(rel), "%s/umc_err_count", dev1);
	fake_put(root, rel, "ue: 2\nce: 0\nde: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/sdma_err_count", dev1);
	fake_put(root, rel, "ue: 1\nce: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/gfx_err_count", dev1);
	fake_put(root, rel, "ue: 0\nce: 7\n");
	fake_fmt(rel, sizeof(rel), "%s/gpu_vram_bad_pages", dev1);
	fake_put(root, rel,
		 "0x00000001 : 0x00001000 : R\n0x00000002 : 0x00001000 : P\n"
		 "0x00000003 : 0x00001000 : F\n");
	infos = discover_root(root, log, sizeof(log));
	assert_int_equal(infos->n, 2);
	assert_string_equal(extres_info_get(&infos->items[0], "health"), "ok");
	assert_string_equal(
		extres_info_get(&infos->items[1], "health"),
		"ecc-ue,ue-sdma,bad-pages-pending,bad-pages-failed");
	/* Last, after local_cpulist. */
	expect_prop(&infos->items[1], infos->items[1].n_props - 1, "health",
		    "ecc-ue,ue-sdma,bad-pages-pending,bad-pages-failed");
	extres_infos_free(infos);

	fake_fmt(rel, sizeof(rel), "%s/umc_err_count", dev1);
	fake_put(root, rel, "ue: 0\nce: 0\nde: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/sdma_err_count", dev1);
	fake_put(root, rel, "ue: 0\nce: 0\n");
	fake_fmt(rel, sizeof(rel), "%s/gpu_vram_bad_pages", dev1);
	fake_put(root, rel, "0x00000001 : 0x00001000 : R\n");
	infos = discover_root(root, log, sizeof(log));
	assert_string_equal(extres_info_get(&infos->items[1], "health"), "ok");
	extres_infos_free(infos);
}

/* No local_cpulist (an older kernel, a PCI function without one): only that
 * property is left out, with a warning naming the file. */
static void test_no_local_cpulist(void **state)
{
	const char *root = *state;
	char real[PATH_MAX], path[PATH_MAX], want[PATH_MAX + 512], log[4096];
	struct extres_infos *infos;

	make_mi300x(root, 1);
	real_root(root, real);
	fake_path(path, root,
		  "devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0/local_cpulist");
	assert_int_equal(unlink(path), 0);
	infos = discover_root(root, log, sizeof(log));

	fake_fmt(
		want, sizeof(want),
		WARN
		"GPU 0 (KFD node 1): %s/devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0/local_cpulist: No such file or directory; local_cpulist left out\n",
		real);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], GPU0_PROPS, "pci.bus_id", "0000:c1:00.0",
		     "memory.total", "196592", "numa_node", "0");
	assert_string_equal(extres_info_get(&infos->items[1], "local_cpulist"),
			    CPUS1);
	extres_infos_free(infos);
}

/* A node whose properties cannot be read is skipped and not counted. */
static void test_missing_properties(void **state)
{
	const char *root = *state;
	char path[PATH_MAX], want[PATH_MAX + 512], log[4096];
	struct extres_infos *infos;

	make_mi300x(root, 1);
	fake_path(path, root, NODES "/1/properties");
	assert_int_equal(unlink(path), 0);
	infos = discover_root(root, log, sizeof(log));

	fake_fmt(want, sizeof(want),
		 WARN
		 "KFD node 1: %s: No such file or directory; node skipped\n",
		 path);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 1);
	EXPECT_PROPS(&infos->items[0], "index", "0", "unique_id",
		     "0xbc732d05184c6948", "vendor_id", "0x1002", "device_id",
		     "0x74a0", "gfx_target_version", "90402",
		     "drm_render_minor", "136", "device", "/dev/dri/renderD136",
		     "pci.bus_id", "0000:41:00.0", "memory.total", "196592",
		     "numa_node", "1", "local_cpulist", CPUS1);
	extres_infos_free(infos);
}

/* A render node link that leads nowhere: the GPU keeps what KFD says and
 * loses what the PCI function would have said. */
static void test_render_link(void **state)
{
	const char *root = *state;
	char link0[PATH_MAX], link1[PATH_MAX], want[2 * PATH_MAX + 512];
	char log[4096], dev[PATH_MAX];
	struct extres_infos *infos;

	put_node(root, 0, &cpu_node);
	put_node(root, 1, &gpu1);
	put_node(root, 2, &gpu2);
	/* GPU 0: no renderD128 at all; GPU 1: a link to itself. */
	fake_path(link0, root, "class/drm/renderD128/device");
	fake_path(dev, root, "class/drm/renderD136");
	fake_mkdirs(dev);
	fake_symlink(root, "class/drm/renderD136/device", "device");
	fake_path(link1, root, "class/drm/renderD136/device");
	infos = discover_root(root, log, sizeof(log));

	fake_fmt(
		want, sizeof(want),
		WARN
		"GPU 0 (KFD node 1): cannot resolve %s: No such file or directory; pci.bus_id, memory.total, numa_node and local_cpulist left out\n" WARN
		"GPU 1 (KFD node 2): cannot resolve %s: Too many levels of symbolic links; pci.bus_id, memory.total, numa_node and local_cpulist left out\n",
		link0, link1);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], GPU0_PROPS);
	EXPECT_PROPS(&infos->items[1], "index", "1", "unique_id",
		     "0xbc732d05184c6948", "vendor_id", "0x1002", "device_id",
		     "0x74a0", "gfx_target_version", "90402",
		     "drm_render_minor", "136", "device",
		     "/dev/dri/renderD136");
	extres_infos_free(infos);
}

/* ROCm's order is the node number's, not the directory listing's: node 10
 * comes after node 9. CPU nodes in between are not counted. */
static void test_node_order(void **state)
{
	const char *root = *state;
	char minor[12][8], want[8], log[16384];
	struct node_props p[12];
	struct extres_infos *infos;
	unsigned i, gpu;

	/* Created from the last, so a listing is unlikely to be in order. */
	for (i = 12; i-- > 0;) {
		p[i] = gpu1;
		fake_fmt(minor[i], sizeof(minor[i]), "%u", 128 + 8 * i);
		p[i].drm_render_minor = minor[i];
		put_node(root, i, i == 0 || i == 5 ? &cpu_node : &p[i]);
	}
	infos = discover_root(root, log, sizeof(log));
	assert_int_equal(infos->n, 10);
	for (i = 0, gpu = 0; i < 12; i++) {
		if (i == 0 || i == 5)
			continue;
		fake_fmt(want, sizeof(want), "%u", gpu);
		assert_string_equal(
			extres_info_get(&infos->items[gpu], "index"), want);
		assert_string_equal(
			extres_info_get(&infos->items[gpu], "drm_render_minor"),
			minor[i]);
		gpu++;
	}
	extres_infos_free(infos);
}

/* What a node's properties lack or get wrong is left out, with a warning;
 * a unique_id of 0 is the kernel saying "none", so no warning. */
static void test_odd_nodes(void **state)
{
	const char *root = *state;
	char props[3][PATH_MAX], nodes[PATH_MAX], want[4 * PATH_MAX + 1024];
	char log[8192];
	struct node_props bad_simd = gpu1, partial = gpu2, bad_minor = gpu1;
	struct extres_infos *infos;

	bad_simd.simd_count = "1216x";
	partial.unique_id = "0";
	partial.gfx_target_version = NULL;
	partial.drm_render_minor = "4294967295";
	bad_minor.unique_id = NULL;
	bad_minor.drm_render_minor = NULL;
	put_node(root, 0, &bad_simd);
	put_node(root, 1, &partial);
	put_node(root, 2, &bad_minor);
	fake_put(root, NODES "/stray", "x\n");
	fake_path(props[0], root, NODES "/0/properties");
	fake_path(props[1], root, NODES "/1/properties");
	fake_path(props[2], root, NODES "/2/properties");
	fake_path(nodes, root, NODES);
	infos = discover_root(root, log, sizeof(log));

	fake_fmt(
		want, sizeof(want),
		WARN
		"%s/stray: not a KFD node number; ignored\n" WARN
		"KFD node 0: no valid simd_count in %s; node skipped\n" WARN
		"GPU 0 (KFD node 1): no valid gfx_target_version in %s; property gfx_target_version left out\n" WARN
		"GPU 0 (KFD node 1): no valid drm_render_minor in %s; drm_render_minor, device, pci.bus_id, memory.total, numa_node and local_cpulist left out\n" WARN
		"GPU 1 (KFD node 2): no valid unique_id in %s; property unique_id left out\n" WARN
		"GPU 1 (KFD node 2): no valid drm_render_minor in %s; drm_render_minor, device, pci.bus_id, memory.total, numa_node and local_cpulist left out\n",
		nodes, props[0], props[1], props[1], props[2], props[2]);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], "index", "0", "vendor_id", "0x1002",
		     "device_id", "0x74a0");
	EXPECT_PROPS(&infos->items[1], "index", "1", "vendor_id", "0x1002",
		     "device_id", "0x74a0", "gfx_target_version", "90402");
	extres_infos_free(infos);
}

/* No KFD (no amdgpu kernel driver): no GPUs and a warning that says where
 * it looked; the core turns zero into "wanted N, found 0". */
static void test_no_kfd(void **state)
{
	const char *root = *state;
	char want[PATH_MAX + 256], log[4096];
	struct extres_infos *infos;

	fake_put(root, "class/drm/version", "drm 1.1.0 20060810\n");
	infos = discover_root(root, log, sizeof(log));
	fake_fmt(want, sizeof(want),
		 WARN
		 "no KFD topology at %s/" NODES
		 " (is the amdgpu kernel driver loaded?); no AMD GPUs found\n",
		 root);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
}

/* A relative sysfs-root is taken from the config file's directory; a
 * trailing '/' changes nothing. */
static void test_relative_root(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("sysfs-root", "fake/sys/", 4, 15),
	};
	const char *dir = *state;
	char root[PATH_MAX], log[4096];
	struct extres_infos *infos;

	fake_path(root, dir, "fake/sys");
	make_mi300x(root, 1);
	infos = fake_discover(AMDGPU_SO, "gpu", dir, items, N(items), log,
			      sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], GPU0_PROPS, "pci.bus_id", "0000:c1:00.0",
		     "memory.total", "196592", "numa_node", "0",
		     "local_cpulist", CPUS0);
	extres_infos_free(infos);
}

static void expect_open_error(const struct extres_param *items, uint32_t count,
			      const char *msg)
{
	struct fake_run run;

	fake_run(AMDGPU_SO, "gpu", "/etc/extres", items, count, &run);
	if (run.open_r != -EINVAL)
		fail_msg("open gave %d, not -EINVAL (%s), for: %s", run.open_r,
			 run.err.msg, msg);
	assert_string_equal(run.err.msg, msg);
	assert_string_equal(run.log, "");
}

static void test_open_errors(void **state)
{
	static const struct extres_param missing[] = {
		SCALAR("sysfs-root", "/nonexistent/extres-test/sys", 4, 15),
	};
	static const struct extres_param file[] = {
		SCALAR("sysfs-root", "/proc/self/status", 4, 15),
	};
	static const struct extres_param empty[] = {
		SCALAR("sysfs-root", "", 4, 15),
	};
	static const struct extres_param one[] = { SCALAR(NULL, "/sys", 4,
							  17) };
	static const struct extres_param seq[] = {
		SEQUENCE("sysfs-root", one, 4, 15),
	};

	expect_open_error(
		missing, N(missing),
		PREFIX FAKE_CONFIG
		":4:15: param.sysfs-root '/nonexistent/extres-test/sys': No such file or directory");
	expect_open_error(
		file, N(file),
		PREFIX FAKE_CONFIG
		":4:15: param.sysfs-root '/proc/self/status': not a directory");
	expect_open_error(
		empty, N(empty),
		PREFIX FAKE_CONFIG
		":4:15: param.sysfs-root must be a directory such as /sys");
	expect_open_error(
		seq, N(seq),
		PREFIX FAKE_CONFIG
		":4:15: param.sysfs-root must be a directory such as /sys");
}

static void test_unknown_key(void **state)
{
	const char *root = *state;
	struct extres_param items[] = {
		SCALAR("sysfs-root", NULL, 4, 15),
		SCALAR("sysfs_root", "/sys", 5, 15),
	};
	char log[4096];
	struct extres_infos *infos;

	make_mi300x(root, 1);
	items[0].value = root;
	infos = fake_discover(AMDGPU_SO, "gpu", "/etc/extres", items, N(items),
			      log, sizeof(log));
	assert_string_equal(log, WARN FAKE_CONFIG
			    ":5:15: unknown key param.sysfs_root ignored\n");
	assert_int_equal(infos->n, 2);
	extres_infos_free(infos);
}

/* This machine, with no params: /sys by default. Without KFD, the warning;
 * with it, GPUs counted from 0, each with its device node. */
static void test_this_host(void **state)
{
	char log[16384], want[16];
	struct extres_infos *infos;
	size_t i;

	infos = fake_discover(AMDGPU_SO, "gpu", "/etc/extres", NULL, 0, log,
			      sizeof(log));
	if (access("/sys/" NODES, F_OK) < 0) {
		assert_string_equal(
			log, WARN
			"no KFD topology at /sys/" NODES
			" (is the amdgpu kernel driver loaded?); no AMD GPUs found\n");
		assert_int_equal(infos->n, 0);
	}
	for (i = 0; i < infos->n; i++) {
		fake_fmt(want, sizeof(want), "%zu", i);
		assert_string_equal(extres_info_get(&infos->items[i], "index"),
				    want);
	}
	extres_infos_free(infos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mi300x, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_ras_health, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_no_local_cpulist,
						fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_missing_properties,
						fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_render_link, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_node_order, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_odd_nodes, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_no_kfd, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_relative_root, fake_setup,
						fake_teardown),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test_setup_teardown(test_unknown_key, fake_setup,
						fake_teardown),
		cmocka_unit_test(test_this_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
