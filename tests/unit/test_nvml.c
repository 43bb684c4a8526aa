/* SPDX-License-Identifier: MIT */
/*
 * The nvml driver, loaded from the build tree and run through the host side
 * (extres_driver_open/discover) against the stand-in NVML libraries of
 * tests/mock: libnvidia-ml.so.1 (current API) and fake_nvml_legacy.so (only
 * the unversioned calls). The stand-ins read FAKE_NVML_* from the
 * environment at each first nvmlInit, so every test sets what it needs and
 * the driver's nvmlShutdown at the end of discover() makes it read again.
 * Their GPUs' PCI functions are in a fake sysfs (param.sysfs-root), so that
 * numa_node and local_cpulist do not depend on this machine's /sys.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_tree.h"

#define NVML_SO EXTRES_DRIVERS_BUILD_DIR "/nvml.so"
#define FAKE EXTRES_MOCK_DIR "/libnvidia-ml.so.1"
#define FAKE_LEGACY EXTRES_MOCK_DIR "/fake_nvml_legacy.so"
#define PREFIX "resource 'gpu': driver 'nvml': "

typedef unsigned long (*count_fn)(void);

/* One stand-in library, held open by the test so that its counters outlive
 * the driver's dlclose() and the driver's dlopen() finds the same copy. */
struct fake {
	void *dl;
	count_fn inits;
	count_fn shutdowns;
};

struct state {
	struct fake current;
	struct fake legacy;
};

/* The fake sysfs every GPU of the stand-in has its PCI function in. */
static char *sys_root;

/* The kernel's numa_node and local_cpulist of stand-in GPU `gpu`: GPUs 0, 2,
 * ... on node 0, the others on node 1. */
#define GPU_NUMA(gpu) ((gpu) % 2 ? "1" : "0")
#define GPU_CPUS(gpu) ((gpu) % 2 ? "4-7,12-15" : "0-3,8-11")

/* GPUs 0..15 as the kernel names their PCI functions: the stand-in gives GPU
 * i the bus id "00000000:%02X:00.0" of bus 0x3b + i. */
static void make_sys(const char *root)
{
	char rel[PATH_MAX], text[32];
	unsigned int gpu;

	for (gpu = 0; gpu < 16; gpu++) {
		fake_fmt(rel, sizeof(rel),
			 "bus/pci/devices/0000:%02x:00.0/numa_node",
			 0x3b + gpu);
		fake_fmt(text, sizeof(text), "%s\n", GPU_NUMA(gpu));
		fake_put(root, rel, text);
		fake_fmt(rel, sizeof(rel),
			 "bus/pci/devices/0000:%02x:00.0/local_cpulist",
			 0x3b + gpu);
		fake_fmt(text, sizeof(text), "%s\n", GPU_CPUS(gpu));
		fake_put(root, rel, text);
	}
}

static const char *const fake_env[] = {
	"FAKE_NVML_GPUS",	 "FAKE_NVML_FAIL_INIT", "FAKE_NVML_FAIL_COUNT",
	"FAKE_NVML_UNSUPPORTED", "FAKE_NVML_LOG",	"FAKE_NVML_MIG",
	"FAKE_NVML_NVLINK",	 "FAKE_NVML_EVENTS",	"FAKE_NVML_ECC",
	"FAKE_NVML_RETIRED",	 "FAKE_NVML_REMAP",
};

static void fake_load(struct fake *f, const char *path)
{
	f->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!f->dl)
		fail_msg("dlopen %s: %s", path, dlerror());
	f->inits = (count_fn)dlsym(f->dl, "fake_nvml_init_count");
	f->shutdowns = (count_fn)dlsym(f->dl, "fake_nvml_shutdown_count");
	assert_non_null(f->inits);
	assert_non_null(f->shutdowns);
}

static int group_setup(void **state)
{
	struct state *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	fake_load(&s->current, FAKE);
	fake_load(&s->legacy, FAKE_LEGACY);
	sys_root = fake_tmpdir("nvml-sys");
	make_sys(sys_root);
	*state = s;
	return 0;
}

static int group_teardown(void **state)
{
	struct state *s = *state;

	dlclose(s->current.dl);
	dlclose(s->legacy.dl);
	fake_rmdir(sys_root);
	free(s);
	return 0;
}

/* Each test starts from the stand-in's defaults and must leave NVML as it
 * found it: every successful init shut down again. */
static int setup(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(fake_env) / sizeof(fake_env[0]); i++)
		unsetenv(fake_env[i]);
	return 0;
}

static int teardown(void **state)
{
	struct state *s = *state;

	assert_int_equal(s->current.inits(), s->current.shutdowns());
	assert_int_equal(s->legacy.inits(), s->legacy.shutdowns());
	return setup(state);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Open, discover and close with config dir `dir`; the caller frees the
 * list. What the driver logged goes to `log`. */
static struct extres_infos *discover_in(const char *dir,
					const struct extres_param *items,
					uint32_t count, char *log,
					size_t log_len)
{
	return fake_discover(NVML_SO, "gpu", dir, items, count, log, log_len);
}

static struct extres_infos *discover_lib(const char *library)
{
	const struct extres_param items[] = {
		SCALAR("library", library, 4, 14),
		SCALAR("sysfs-root", sys_root, 5, 17),
	};
	char log[4096];

	return discover_in("/etc/extres", items, N(items), log, sizeof(log));
}

/* Open succeeds, discover fails with `errnum` and exactly `msg`. */
static void expect_discover_error(const char *library, int errnum,
				  const char *msg)
{
	const struct extres_param items[] = {
		SCALAR("library", library, 4, 14),
	};
	struct fake_run run;

	fake_run(NVML_SO, "gpu", "/etc/extres", items, N(items), &run);
	if (run.open_r < 0)
		fail_msg("open: %s", run.err.msg);
	assert_int_equal(run.discover_r, -errnum);
	assert_string_equal(run.err.msg, msg);
	assert_null(run.infos);
}

static void expect_open_error(const struct extres_param *items, uint32_t count,
			      int errnum, const char *msg)
{
	struct fake_run run;

	fake_run(NVML_SO, "gpu", "/etc/extres", items, count, &run);
	assert_int_equal(run.open_r, -errnum);
	assert_string_equal(run.err.msg, msg);
}

/* 1 if `key` is one of the space-separated words of `skip` (NULL: none). */
static int skipped(const char *skip, const char *key)
{
	size_t n = strlen(key);
	const char *w;

	for (w = skip; w && (w = strstr(w, key)); w += n)
		if ((w == skip || w[-1] == ' ') && (w[n] == ' ' || !w[n]))
			return 1;
	return 0;
}

/* What the legacy stand-in lacks. */
#define LEGACY_MISSING \
	"compute_cap brand architecture vbios_version cuda_version"

/* Every property of stand-in GPU `gpu` (0..9), in the driver's order,
 * leaving out those in `skip` (NULL: none). Returns the next position. */
static size_t expect_gpu(const struct extres_info *info, unsigned int gpu,
			 const char *skip)
{
	char index[4], uuid[64], serial[32], bus[32], minor[4], dev[32];
	const char *keys[] = { "index",		 "uuid",
			       "name",		 "serial",
			       "pci.bus_id",	 "numa_node",
			       "local_cpulist",	 "memory.total",
			       "driver_version", "compute_cap",
			       "minor_number",	 "device",
			       "health",	 "health.reset-required",
			       "brand",		 "architecture",
			       "vbios_version",	 "cuda_version" };
	const char *values[] = { index,
				 uuid,
				 "NVIDIA H100 80GB HBM3",
				 serial,
				 bus,
				 GPU_NUMA(gpu),
				 GPU_CPUS(gpu),
				 "81559",
				 "550.54.15",
				 "9.0",
				 minor,
				 dev,
				 "ok",
				 "no",
				 "NVIDIA",
				 "Hopper",
				 "96.00.74.00.01",
				 "12.4" };
	size_t i, at = 0;

	snprintf(index, sizeof(index), "%u", gpu);
	snprintf(uuid, sizeof(uuid),
		 "GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c000%u", gpu);
	snprintf(serial, sizeof(serial), "165492200100%u", gpu);
	snprintf(bus, sizeof(bus), "00000000:%02X:00.0", 0x3b + gpu);
	snprintf(minor, sizeof(minor), "%u", gpu);
	snprintf(dev, sizeof(dev), "/dev/nvidia%u", gpu);
	for (i = 0; i < N(keys); i++) {
		if (skipped(skip, keys[i]))
			continue;
		expect_prop(info, at++, keys[i], values[i]);
	}
	assert_int_equal(info->n_props, at);
	return at;
}

/* Three GPUs, every property exact and in NVML index order. */
static void test_three_gpus(void **state)
{
	struct extres_infos *infos;
	unsigned int i;

	setenv("FAKE_NVML_GPUS", "3", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 3);
	for (i = 0; i < 3; i++)
		expect_gpu(&infos->items[i], i, NULL);
	extres_infos_free(infos);
}

/* No GPU is no error here: the allocator says "wanted 1, found 0". */
static void test_no_gpus(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "0", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
}

/* A field NVML does not support on one board: that file is absent there,
 * and everything else present everywhere. */
static void test_unsupported_field(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_UNSUPPORTED", "serial:1", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 3);
	expect_gpu(&infos->items[0], 0, NULL);
	expect_gpu(&infos->items[1], 1, "serial");
	assert_null(extres_info_get(&infos->items[1], "serial"));
	expect_gpu(&infos->items[2], 2, NULL);
	extres_infos_free(infos);
}

/* Any other error for a field leaves it out too, and says so at info
 * level; "not supported" is only debug, which the default level hides. A
 * GPU without a handle is skipped with a warning. */
static void test_field_errors(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("sysfs-root", sys_root, 5, 17),
	};
	struct extres_infos *infos;
	char log[4096];

	setenv("FAKE_NVML_GPUS", "4", 1);
	setenv("FAKE_NVML_UNSUPPORTED",
	       "memory:0:999,pci:0,cuda:3,minor:3:15,handle:2:4,index:1:999",
	       1);
	infos = discover_in("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(
		log,
		"extres: resource 'gpu': driver 'nvml': GPU 0: no memory.total: nvmlDeviceGetMemoryInfo: Unknown Error\n"
		"extres: resource 'gpu': driver 'nvml': GPU 1: nvmlDeviceGetIndex: Unknown Error; index 1 is the one it was enumerated at\n"
		"extres: warning: resource 'gpu': driver 'nvml': GPU 2 skipped: nvmlDeviceGetHandleByIndex_v2: Insufficient Permissions\n"
		"extres: resource 'gpu': driver 'nvml': GPU 3: no minor_number and device: nvmlDeviceGetMinorNumber: GPU is lost\n");
	assert_int_equal(infos->n, 3);

	assert_int_equal(infos->items[0].n_props, 14);
	expect_prop(&infos->items[0], 3, "serial", "1654922001000");
	expect_prop(&infos->items[0], 4, "driver_version", "550.54.15");
	expect_prop(&infos->items[0], 5, "compute_cap", "9.0");
	/* No bus id, so no PCI function to ask about topology. */
	assert_null(extres_info_get(&infos->items[0], "pci.bus_id"));
	assert_null(extres_info_get(&infos->items[0], "numa_node"));
	assert_null(extres_info_get(&infos->items[0], "memory.total"));

	expect_gpu(&infos->items[1], 1, NULL);

	/* GPU 3 keeps its own index after the skipped one. */
	assert_int_equal(infos->items[2].n_props, 15);
	expect_prop(&infos->items[2], 0, "index", "3");
	expect_prop(&infos->items[2], 4, "pci.bus_id", "00000000:3E:00.0");
	expect_prop(&infos->items[2], 5, "numa_node", "1");
	expect_prop(&infos->items[2], 6, "local_cpulist", "4-7,12-15");
	expect_prop(&infos->items[2], 7, "memory.total", "81559");
	expect_prop(&infos->items[2], 8, "driver_version", "550.54.15");
	assert_null(extres_info_get(&infos->items[2], "compute_cap"));
	assert_null(extres_info_get(&infos->items[2], "device"));
	extres_infos_free(infos);
}

/* numa_node and local_cpulist come from the kernel's name for the bus id,
 * "0000:3b:00.0", and read as the kernel wrote them, "-1" (no NUMA node)
 * included. A file or PCI function that is not there leaves its property
 * out, quietly: a debug message, which the default level hides. */
static void test_topology(void **state)
{
	struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("sysfs-root", NULL, 5, 17),
	};
	char *root = fake_tmpdir("nvml-topology"), path[PATH_MAX], log[4096];
	struct extres_infos *infos;

	make_sys(root);
	fake_put(root, "bus/pci/devices/0000:3b:00.0/numa_node", "-1\n");
	fake_path(path, root, "bus/pci/devices/0000:3c:00.0/local_cpulist");
	assert_int_equal(unlink(path), 0);
	fake_path(path, root, "bus/pci/devices/0000:3d:00.0/numa_node");
	assert_int_equal(unlink(path), 0);
	fake_path(path, root, "bus/pci/devices/0000:3d:00.0/local_cpulist");
	assert_int_equal(unlink(path), 0);
	fake_path(path, root, "bus/pci/devices/0000:3d:00.0");
	assert_int_equal(rmdir(path), 0);
	items[1].value = root;
	infos = discover_in("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, 3);
	expect_prop(&infos->items[0], 4, "pci.bus_id", "00000000:3B:00.0");
	expect_prop(&infos->items[0], 5, "numa_node", "-1");
	expect_prop(&infos->items[0], 6, "local_cpulist", "0-3,8-11");
	assert_int_equal(infos->items[0].n_props, 18);
	expect_gpu(&infos->items[1], 1, "local_cpulist");
	expect_gpu(&infos->items[2], 2, "numa_node local_cpulist");
	extres_infos_free(infos);
	fake_rmdir(root);
}

/* The driver version fails for every GPU alike. */
static void test_no_driver_version(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "2", 1);
	setenv("FAKE_NVML_UNSUPPORTED", "driver:0", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 2);
	expect_gpu(&infos->items[0], 0, "driver_version");
	expect_gpu(&infos->items[1], 1, "driver_version");
	extres_infos_free(infos);
}

/* NVML failing to initialise: the library and NVML's own words. No init
 * to balance, so none is counted and no shutdown happens. */
static void test_init_fails(void **state)
{
	struct state *s = *state;
	unsigned long inits = s->current.inits();

	setenv("FAKE_NVML_FAIL_INIT", "1", 1);
	expect_discover_error(FAKE, ENODEV,
			      PREFIX FAKE
			      ": nvmlInit_v2 failed: Driver Not Loaded");
	assert_int_equal(s->current.inits(), inits);
}

/* A failure after init still shuts NVML down (the teardown checks). */
static void test_count_fails(void **state)
{
	struct state *s = *state;
	unsigned long inits = s->current.inits();

	setenv("FAKE_NVML_FAIL_COUNT", "15", 1);
	expect_discover_error(FAKE, ENODEV,
			      PREFIX FAKE
			      ": nvmlDeviceGetCount_v2 failed: GPU is lost");
	assert_int_equal(s->current.inits(), inits + 1);
	setenv("FAKE_NVML_FAIL_COUNT", "4", 1);
	expect_discover_error(
		FAKE, EACCES,
		PREFIX FAKE
		": nvmlDeviceGetCount_v2 failed: Insufficient Permissions");
	setenv("FAKE_NVML_FAIL_COUNT", "999", 1);
	expect_discover_error(FAKE, EIO,
			      PREFIX FAKE
			      ": nvmlDeviceGetCount_v2 failed: Unknown Error");
}

/* Each discover() is one init and one shutdown, and the driver holds no
 * NVML state between them but the event thread's own init, made at the
 * first discover() and shut down by close(); one open serves several
 * discoveries. */
static void test_init_shutdown_balanced(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
	};
	struct state *s = *state;
	unsigned long inits = s->current.inits(),
		      shutdowns = s->current.shutdowns();
	struct extres_driver *drv = NULL;
	struct extres_infos *infos = NULL;
	struct extres_err err = { "" };
	struct fake_resource f;
	int i;

	fake_resource_init(&f, NVML_SO, "gpu", "/etc/extres", items, N(items));
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	/* Opening loads the library but does not initialise NVML. */
	assert_int_equal(s->current.inits(), inits);
	for (i = 1; i <= 2; i++) {
		assert_int_equal(extres_driver_discover(drv, &infos, &err), 0);
		assert_int_equal(infos->n, 3);
		extres_infos_free(infos);
		assert_int_equal(s->current.inits(),
				 inits + 1 + (unsigned long)i);
		assert_int_equal(s->current.shutdowns(),
				 shutdowns + (unsigned long)i);
	}
	extres_driver_close(drv);
	assert_int_equal(s->current.shutdowns(), shutdowns + 3);
}

/* No library at the configured path: the path and dlerror(). */
static void test_missing_library(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", "/nonexistent/libnvidia-ml.so.1", 4, 14),
	};
	const struct extres_param named[] = {
		SCALAR("library", "libnvidia-ml-absent.so.1", 4, 14),
	};

	expect_open_error(
		items, N(items), ELIBACC,
		PREFIX
		"cannot load the NVML library /nonexistent/libnvidia-ml.so.1: "
		"/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory");
	expect_open_error(
		named, N(named), ELIBACC,
		PREFIX
		"cannot load the NVML library libnvidia-ml-absent.so.1: "
		"libnvidia-ml-absent.so.1: cannot open shared object file: No such file or directory");
}

/* A library that is not NVML: the first entry point it lacks. */
static void test_not_nvml(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", EXTRES_MOCK_DIR "/mock_good.so", 4, 14),
	};

	expect_open_error(
		items, N(items), ELIBBAD,
		PREFIX EXTRES_MOCK_DIR
		"/mock_good.so: not an NVML library: it has no nvmlInit_v2 or nvmlInit");
}

static void test_bad_param(void **state)
{
	static const struct extres_param seq_items[] = {
		SCALAR(NULL, "a", 4, 16),
	};
	const struct extres_param empty[] = {
		SCALAR("library", "", 4, 14),
	};
	const struct extres_param seq[] = {
		{ .kind = EXTRES_PARAM_SEQUENCE,
		  .key = "library",
		  .items = seq_items,
		  .count = 1,
		  .line = 4,
		  .column = 14 },
	};

	expect_open_error(
		empty, N(empty), EINVAL,
		PREFIX FAKE_CONFIG
		":4:14: param.library must be a file name or path of the NVML library, like libnvidia-ml.so.1");
	expect_open_error(
		seq, N(seq), EINVAL,
		PREFIX FAKE_CONFIG
		":4:14: param.library must be a file name or path of the NVML library, like libnvidia-ml.so.1");
}

static void test_unknown_key(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("libary", "x", 5, 5),
	};
	struct extres_infos *infos;
	char log[4096];

	infos = discover_in("/etc/extres", items, N(items), log, sizeof(log));
	assert_int_equal(infos->n, 3);
	extres_infos_free(infos);
	assert_string_equal(log, "extres: warning: " PREFIX FAKE_CONFIG
				 ":5:5: unknown key param.libary ignored\n");
}

/* Without param.library the driver asks the dynamic loader for
 * libnvidia-ml.so.1; the stand-in the test holds open has that soname, so
 * the loader answers with it. */
static void test_default_library(void **state)
{
	const struct extres_param items[] = {
		SCALAR("sysfs-root", sys_root, 4, 17),
	};
	struct state *s = *state;
	unsigned long inits = s->current.inits();
	struct extres_infos *infos;
	char log[4096];

	infos = discover_in("/etc/extres", items, N(items), log, sizeof(log));
	assert_int_equal(infos->n, 3);
	expect_gpu(&infos->items[2], 2, NULL);
	extres_infos_free(infos);
	/* discover()'s and the event thread's */
	assert_int_equal(s->current.inits(), inits + 2);
}

/* A relative path is the config directory's, not the working directory's. */
static void test_relative_library(void **state)
{
	const struct extres_param items[] = {
		SCALAR("library", "./libnvidia-ml.so.1", 4, 14),
	};
	struct state *s = *state;
	unsigned long inits = s->current.inits();
	struct extres_infos *infos;
	char log[4096];

	infos = discover_in(EXTRES_MOCK_DIR, items, N(items), log, sizeof(log));
	assert_int_equal(infos->n, 3);
	extres_infos_free(infos);
	assert_int_equal(s->current.inits(), inits + 2);
}

/* An old NVML: the unversioned calls and the short PCI struct work; the
 * calls it lacks leave their properties out; `index` comes from the
 * enumeration. */
static void test_legacy_library(void **state)
{
	struct state *s = *state;
	unsigned long inits = s->legacy.inits();
	struct extres_infos *infos;
	unsigned int i;

	setenv("FAKE_NVML_GPUS", "2", 1);
	infos = discover_lib(FAKE_LEGACY);
	assert_int_equal(infos->n, 2);
	for (i = 0; i < 2; i++)
		expect_gpu(&infos->items[i], i, LEGACY_MISSING);
	extres_infos_free(infos);
	assert_int_equal(s->legacy.inits(), inits + 1);

	setenv("FAKE_NVML_FAIL_INIT", "1", 1);
	expect_discover_error(FAKE_LEGACY, ENODEV,
			      PREFIX FAKE_LEGACY
			      ": nvmlInit failed: Driver Not Loaded");
}

/* close() unloads the library: with the test's own handle dropped, the
 * stand-in is gone once the driver is closed. */
static void test_library_unloaded(void **state)
{
	struct state *s = *state;
	struct extres_infos *infos;

	assert_int_equal(dlclose(s->legacy.dl), 0);
	s->legacy.dl = NULL;
	assert_null(dlopen(FAKE_LEGACY, RTLD_NOW | RTLD_NOLOAD));
	infos = discover_lib(FAKE_LEGACY);
	assert_int_equal(infos->n, 3);
	extres_infos_free(infos);
	assert_null(dlopen(FAKE_LEGACY, RTLD_NOW | RTLD_NOLOAD));
	fake_load(&s->legacy, FAKE_LEGACY);
}

/* Success and every failure path leave no fd behind. */
static void test_no_fd_leak(void **state)
{
	const struct extres_param missing[] = {
		SCALAR("library", "/nonexistent/libnvidia-ml.so.1", 4, 14),
	};
	struct extres_infos *infos;
	int fds = count_fds();

	infos = discover_lib(FAKE);
	extres_infos_free(infos);
	infos = discover_lib(FAKE_LEGACY);
	extres_infos_free(infos);
	setenv("FAKE_NVML_FAIL_INIT", "1", 1);
	expect_discover_error(FAKE, ENODEV,
			      PREFIX FAKE
			      ": nvmlInit_v2 failed: Driver Not Loaded");
	unsetenv("FAKE_NVML_FAIL_INIT");
	setenv("FAKE_NVML_FAIL_COUNT", "15", 1);
	expect_discover_error(FAKE, ENODEV,
			      PREFIX FAKE
			      ": nvmlDeviceGetCount_v2 failed: GPU is lost");
	expect_open_error(
		missing, N(missing), ELIBACC,
		PREFIX
		"cannot load the NVML library /nonexistent/libnvidia-ml.so.1: "
		"/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory");
	assert_int_equal(count_fds(), fds);
}

/* One open handle through several discoveries, as a daemon keeps it. */
struct session {
	struct fake_resource f;
	struct extres_driver *drv;
	struct extres_err err;
};

static void session_open(struct session *ss, const struct extres_param *items,
			 uint32_t count)
{
	memset(ss, 0, sizeof(*ss));
	fake_resource_init(&ss->f, NVML_SO, "gpu", "/etc/extres", items, count);
	if (extres_driver_open(&ss->f.config, &ss->f.res, &ss->drv, &ss->err) !=
	    0)
		fail_msg("open: %s", ss->err.msg);
}

static struct extres_infos *session_discover(struct session *ss)
{
	struct extres_infos *infos = NULL;

	if (extres_driver_discover(ss->drv, &infos, &ss->err) != 0)
		fail_msg("discover: %s", ss->err.msg);
	return infos;
}

/* The value of `key` of info `i`, or NULL. */
static const char *prop(const struct extres_infos *infos, size_t i,
			const char *key)
{
	assert_true(i < infos->n);
	return extres_info_get(&infos->items[i], key);
}

static void expect_key(const struct extres_infos *infos, size_t i,
		       const char *key, const char *value)
{
	const char *v = prop(infos, i, key);

	if (!v)
		fail_msg("info %zu has no %s", i, key);
	assert_string_equal(v, value);
}

static const struct extres_param plain_items[] = {
	SCALAR("library", FAKE, 4, 14),
};

/* NVLink pairs: each GPU names the other; a pair given twice or a second
 * link between the same GPUs names it once; sorted. */
static void test_nvlink_pairs(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "4", 1);
	setenv("FAKE_NVML_NVLINK", "0-1,2-3,3-0,0-1,1-0", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 4);
	expect_key(infos, 0, "nvlink.peers", "1,3");
	expect_key(infos, 1, "nvlink.peers", "0");
	expect_key(infos, 2, "nvlink.peers", "3");
	expect_key(infos, 3, "nvlink.peers", "0,2");
	/* After minor_number and device, before health. */
	expect_prop(&infos->items[1], 12, "nvlink.peers", "0");
	expect_prop(&infos->items[1], 13, "health", "ok");
	extres_infos_free(infos);
}

/* An NVSwitch joins every GPU with an active link to one. A GPU whose
 * NVLink NVML cannot answer for has no nvlink.peers; without NVLink at
 * all (a PCIe board: FAKE_NVML_NVLINK unset) none has. */
static void test_nvlink_switch(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "5", 1);
	setenv("FAKE_NVML_NVLINK", "0-sw,1-sw,3-sw,0-sw,0-2,4-sw", 1);
	setenv("FAKE_NVML_UNSUPPORTED", "nvlink:4", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 5);
	expect_key(infos, 0, "nvlink.peers", "1,2,3");
	expect_key(infos, 1, "nvlink.peers", "0,3");
	expect_key(infos, 2, "nvlink.peers", "0");
	expect_key(infos, 3, "nvlink.peers", "0,1");
	assert_null(prop(infos, 4, "nvlink.peers"));
	extres_infos_free(infos);

	unsetenv("FAKE_NVML_NVLINK");
	unsetenv("FAKE_NVML_UNSUPPORTED");
	infos = discover_lib(FAKE);
	assert_null(prop(infos, 0, "nvlink.peers"));
	extres_infos_free(infos);
}

/* NVLink answered and no link is up: "" (the core accepts empty values
 * since issue 14; before, this discovery fails as a whole). */
static void test_nvlink_none(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "3", 1);
	setenv("FAKE_NVML_NVLINK", "0-1", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 3);
	expect_key(infos, 0, "nvlink.peers", "1");
	expect_key(infos, 2, "nvlink.peers", "");
	extres_infos_free(infos);
}

/* The stand-in's uuid of MIG device SLOT of GPU GPU, "GPU SLOT" in hex */
#define MIG_UUID(gpu_slot) "MIG-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c00" gpu_slot

/* Instance `slot` of GPU 1 of the stand-in, every property in order: `g`
 * GPU and `c` compute slices, placed at `start`. */
static void expect_instance(const struct extres_info *info, const char *uuid,
			    const char *profile, const char *memory,
			    const char *gi, unsigned int g, unsigned int c,
			    unsigned int start)
{
	char gs[4], cs[4], sms[8], st[4];

	snprintf(gs, sizeof(gs), "%u", g);
	snprintf(cs, sizeof(cs), "%u", c);
	snprintf(sms, sizeof(sms), "%u", 16 * c);
	snprintf(st, sizeof(st), "%u", start);
	EXPECT_PROPS(info, "index", uuid, "uuid", uuid, "parent.index", "1",
		     "parent.uuid", "GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001",
		     "profile", profile, "memory.total", memory, "gi.id", gi,
		     "ci.id", "0", "name", "NVIDIA H100 80GB HBM3",
		     "pci.bus_id", "00000000:3C:00.0", "numa_node", "1",
		     "local_cpulist", "4-7,12-15", "compute_cap", "9.0",
		     "minor_number", "1", "device", "/dev/nvidia1",
		     "driver_version", "550.54.15", "health", "ok",
		     "health.reset-required", "no", "brand", "NVIDIA",
		     "architecture", "Hopper", "vbios_version",
		     "96.00.74.00.01", "cuda_version", "12.4", "gi.slices", gs,
		     "ci.slices", cs, "multiprocessors", sms, "engines.copy",
		     gs, "engines.decoder", gs, "engines.encoder", "0",
		     "engines.jpeg", gs, "engines.ofa", "0",
		     "gi.placement.start", st, "gi.placement.size", gs);
}

static struct extres_infos *discover_mig(const char *mode)
{
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("sysfs-root", sys_root, 5, 17),
		SCALAR("mig", mode, 6, 10),
	};
	char log[4096];

	setenv("FAKE_NVML_GPUS", "4", 1);
	setenv("FAKE_NVML_MIG", "1:1g.10gb,2g.20gb,1c.3g.40gb", 1);
	return discover_in("/etc/extres", items, mode ? N(items) : 2, log,
			   sizeof(log));
}

/* By default a GPU in MIG mode is its instances, in its place. */
static void test_mig_instances(void **state)
{
	struct extres_infos *infos = discover_mig(NULL);

	assert_int_equal(infos->n, 6);
	expect_gpu(&infos->items[0], 0, NULL);
	expect_instance(&infos->items[1], MIG_UUID("10"), "1g.10gb", "10000",
			"1", 1, 1, 0);
	expect_instance(&infos->items[2], MIG_UUID("11"), "2g.20gb", "20000",
			"2", 2, 2, 1);
	expect_instance(&infos->items[3], MIG_UUID("12"), "1c.3g.40gb", "40000",
			"3", 3, 1, 3);
	expect_gpu(&infos->items[4], 2, NULL);
	expect_gpu(&infos->items[5], 3, NULL);
	extres_infos_free(infos);
	infos = discover_mig("instances");
	assert_int_equal(infos->n, 6);
	extres_infos_free(infos);
}

/* parents: the GPU itself, marked; both: the GPU, then its instances. */
static void test_mig_parents_both(void **state)
{
	struct extres_infos *infos = discover_mig("parents");

	assert_int_equal(infos->n, 4);
	expect_key(infos, 1, "index", "1");
	expect_key(infos, 1, "mig.mode", "enabled");
	assert_int_equal(infos->items[1].n_props, 19);
	assert_null(prop(infos, 0, "mig.mode"));
	extres_infos_free(infos);

	infos = discover_mig("both");
	assert_int_equal(infos->n, 7);
	expect_key(infos, 1, "index", "1");
	expect_key(infos, 1, "mig.mode", "enabled");
	expect_instance(&infos->items[2], MIG_UUID("10"), "1g.10gb", "10000",
			"1", 1, 1, 0);
	expect_instance(&infos->items[4], MIG_UUID("12"), "1c.3g.40gb", "40000",
			"3", 3, 1, 3);
	expect_key(infos, 5, "index", "2");
	extres_infos_free(infos);
}

/* nvidia-smi's GB: eighths of the board rounded up, times its GiB rounded
 * up; an A100 40GB's 4864 MiB slice is "5gb" (its 40536 MiB are 40 GiB
 * rounded up). Through a stand-in GPU of that size is more than the
 * stand-in does, so the rule is checked on the H100 numbers instead: a
 * 1-slice profile of 9984 MiB is 1/8 of 80 GiB. */
static void test_mig_profile_rounding(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "1", 1);
	setenv("FAKE_NVML_MIG", "0:1g.10gb,7g.80gb,4g.40gb,1g.20gb", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 4);
	expect_key(infos, 0, "profile", "1g.10gb");
	expect_key(infos, 1, "profile", "7g.80gb");
	expect_key(infos, 2, "profile", "4g.40gb");
	expect_key(infos, 3, "profile", "1g.20gb");
	extres_infos_free(infos);
}

/* A MIG-mode GPU whose instances' calls fail: the instance is still
 * listed by its uuid, without what NVML would not say. */
static void test_mig_partial(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "2", 1);
	setenv("FAKE_NVML_MIG", "0:1g.10gb", 1);
	setenv("FAKE_NVML_UNSUPPORTED", "attributes:0", 1);
	infos = discover_lib(FAKE);
	assert_int_equal(infos->n, 2);
	expect_key(infos, 0, "index", MIG_UUID("00"));
	assert_null(prop(infos, 0, "profile"));
	expect_key(infos, 0, "memory.total", "10000");
	expect_key(infos, 1, "index", "1");
	extres_infos_free(infos);
}

/* ECC, pending retirement and row remapping, as NVML reports them at each
 * discover(); they clear when NVML stops reporting them. An instance has
 * its parent's health. */
static void test_health_state(void **state)
{
	struct extres_infos *infos;
	struct session ss;

	setenv("FAKE_NVML_GPUS", "5", 1);
	setenv("FAKE_NVML_ECC", "1:2,4:0", 1);
	setenv("FAKE_NVML_RETIRED", "2", 1);
	setenv("FAKE_NVML_REMAP", "0:pending,3:failed,1:pending", 1);
	setenv("FAKE_NVML_MIG", "4:7g.80gb", 1);
	session_open(&ss, plain_items, N(plain_items));
	infos = session_discover(&ss);
	assert_int_equal(infos->n, 5);
	expect_key(infos, 0, "health", "row-remap-pending");
	expect_key(infos, 1, "health", "ecc-dbe,row-remap-pending");
	expect_key(infos, 2, "health", "retired-pages-pending");
	expect_key(infos, 3, "health", "row-remap-failed");
	expect_key(infos, 3, "health.reset-required", "yes");
	expect_key(infos, 4, "health", "ok");
	expect_key(infos, 4, "health.reset-required", "no");
	extres_infos_free(infos);

	setenv("FAKE_NVML_ECC", "4:1", 1);
	unsetenv("FAKE_NVML_RETIRED");
	unsetenv("FAKE_NVML_REMAP");
	infos = session_discover(&ss);
	expect_key(infos, 1, "health", "ok");
	expect_key(infos, 1, "health.reset-required", "no");
	expect_key(infos, 2, "health", "ok");
	expect_key(infos, 4, "index", MIG_UUID("40"));
	expect_key(infos, 4, "health", "ecc-dbe");
	expect_key(infos, 4, "health.reset-required", "yes");
	extres_infos_free(infos);
	extres_driver_close(ss.drv);
}

/* A board without ECC or row remapping: those are just not looked at. */
static void test_health_unsupported(void **state)
{
	struct extres_infos *infos;

	setenv("FAKE_NVML_GPUS", "1", 1);
	setenv("FAKE_NVML_ECC", "0:3", 1);
	setenv("FAKE_NVML_UNSUPPORTED", "ecc:0,retired:0,remap:0,events:0", 1);
	infos = discover_lib(FAKE);
	expect_key(infos, 0, "health", "ok");
	extres_infos_free(infos);
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wait for the driver's request_refresh(); the 5 s only catch a hang. */
static uint64_t wait_refresh(struct session *ss)
{
	uint64_t start = ms_now();

	while (!extres_driver_take_refresh_request(ss->drv)) {
		if (ms_now() - start > 5000)
			fail_msg("no request_refresh() within 5 s");
		usleep(10000);
	}
	return ms_now() - start;
}

static void append_line(const char *path, const char *line)
{
	FILE *f = fopen(path, "ae");

	assert_non_null(f);
	fputs(line, f);
	assert_int_equal(fclose(f), 0);
}

/* An Xid event: health turns to xid-N at once (a refresh is asked for),
 * an application's Xid (13) changes nothing, and after the hold-down
 * health is ok again, with another refresh asked for. */
static void test_xid_recovers(void **state)
{
	char *dir = fake_tmpdir("nvml-events"), path[PATH_MAX];
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("health-recovery", "0.4", 5, 24),
	};
	struct extres_infos *infos;
	struct session ss;
	uint64_t waited;

	fake_path(path, dir, "events");
	fake_put(dir, "events", "");
	setenv("FAKE_NVML_GPUS", "3", 1);
	setenv("FAKE_NVML_EVENTS", path, 1);
	session_open(&ss, items, N(items));
	infos = session_discover(&ss);
	expect_key(infos, 1, "health", "ok");
	extres_infos_free(infos);
	assert_int_equal(extres_driver_take_refresh_request(ss.drv), 0);

	append_line(path, "2 13\n1 79\n");
	wait_refresh(&ss);
	infos = session_discover(&ss);
	expect_key(infos, 0, "health", "ok");
	expect_key(infos, 1, "health", "xid-79");
	expect_key(infos, 1, "health.reset-required", "no");
	expect_key(infos, 2, "health", "ok");
	extres_infos_free(infos);

	waited = wait_refresh(&ss);
	infos = session_discover(&ss);
	expect_key(infos, 1, "health", "ok");
	extres_infos_free(infos);
	/* The hold-down, give or take the thread's 100 ms wait. */
	assert_true(waited >= 200);
	extres_driver_close(ss.drv);
	fake_rmdir(dir);
}

/* health-recovery 0: an Xid holds until the daemon restarts; a GPU that
 * cannot register for events is not watched, the others are. */
static void test_xid_holds(void **state)
{
	char *dir = fake_tmpdir("nvml-events"), path[PATH_MAX];
	const struct extres_param items[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("health-recovery", "0", 5, 24),
	};
	struct extres_infos *infos;
	struct session ss;

	fake_path(path, dir, "events");
	fake_put(dir, "events", "");
	setenv("FAKE_NVML_GPUS", "3", 1);
	setenv("FAKE_NVML_EVENTS", path, 1);
	setenv("FAKE_NVML_UNSUPPORTED", "events:0", 1);
	session_open(&ss, items, N(items));
	infos = session_discover(&ss);
	extres_infos_free(infos);
	append_line(path, "0 48\n2 48\n");
	/* Lines come as events in order: once GPU 2's has asked, GPU 0's
	 * has been seen too. */
	wait_refresh(&ss);
	infos = session_discover(&ss);
	expect_key(infos, 0, "health", "ok");
	expect_key(infos, 2, "health", "xid-48");
	extres_infos_free(infos);
	assert_int_equal(extres_driver_take_refresh_request(ss.drv), 0);
	extres_driver_close(ss.drv);
	fake_rmdir(dir);
}

/* No GPU at the first discover(): no thread yet; the first discover()
 * that finds GPUs starts it. */
static void test_events_after_no_gpus(void **state)
{
	char *dir = fake_tmpdir("nvml-events"), path[PATH_MAX];
	struct extres_infos *infos;
	struct session ss;

	fake_path(path, dir, "events");
	fake_put(dir, "events", "");
	setenv("FAKE_NVML_GPUS", "0", 1);
	setenv("FAKE_NVML_EVENTS", path, 1);
	session_open(&ss, plain_items, N(plain_items));
	infos = session_discover(&ss);
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
	setenv("FAKE_NVML_GPUS", "2", 1);
	infos = session_discover(&ss);
	assert_int_equal(infos->n, 2);
	extres_infos_free(infos);
	append_line(path, "1 79\n");
	wait_refresh(&ss);
	infos = session_discover(&ss);
	expect_key(infos, 1, "health", "xid-79");
	extres_infos_free(infos);
	extres_driver_close(ss.drv);
	fake_rmdir(dir);
}

/* close() ends the event thread promptly: its wait is short. */
static void test_close_prompt(void **state)
{
	struct extres_infos *infos;
	struct session ss;
	uint64_t start;

	session_open(&ss, plain_items, N(plain_items));
	infos = session_discover(&ss);
	extres_infos_free(infos);
	start = ms_now();
	extres_driver_close(ss.drv);
	/* About 100 ms; 3 s only catch a thread that ignores close(). */
	assert_true(ms_now() - start < 3000);
}

static void test_bad_new_params(void **state)
{
	const struct extres_param mig[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("mig", "all", 5, 10),
	};
	const char *const bad[] = { "-1", "abc",      "1e3",   "",  "1.",
				    ".5", "99999999", "1.2.3", " 5" };
	struct extres_param rec[] = {
		SCALAR("library", FAKE, 4, 14),
		SCALAR("health-recovery", NULL, 5, 22),
	};
	char msg[512];
	size_t i;

	expect_open_error(
		mig, N(mig), EINVAL,
		PREFIX FAKE_CONFIG
		":5:10: param.mig must be instances, parents or both, not all");
	for (i = 0; i < N(bad); i++) {
		rec[1].value = bad[i];
		snprintf(
			msg, sizeof(msg),
			PREFIX FAKE_CONFIG
			":5:22: param.health-recovery must be a number of seconds from 0 (never: until a restart) to 31536000, like 60, not %s",
			bad[i]);
		expect_open_error(rec, N(rec), EINVAL, msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_three_gpus, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_gpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsupported_field, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_field_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_topology, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_driver_version, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_init_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_count_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_init_shutdown_balanced,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_library, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_not_nvml, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_param, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_default_library, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_relative_library, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_legacy_library, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_library_unloaded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_fd_leak, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_pairs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_switch, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_nvlink_none, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mig_instances, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mig_parents_both, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_mig_profile_rounding,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mig_partial, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_health_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_health_unsupported, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_xid_recovers, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_xid_holds, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_events_after_no_gpus,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_prompt, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_new_params, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
