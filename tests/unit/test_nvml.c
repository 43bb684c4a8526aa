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
	"FAKE_NVML_UNSUPPORTED", "FAKE_NVML_LOG",
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
			       "minor_number",	 "device" };
	const char *values[] = {
		index,	       uuid,	"NVIDIA H100 80GB HBM3",
		serial,	       bus,	GPU_NUMA(gpu),
		GPU_CPUS(gpu), "81559", "550.54.15",
		"9.0",	       minor,	dev
	};
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

	assert_int_equal(infos->items[0].n_props, 8);
	expect_prop(&infos->items[0], 3, "serial", "1654922001000");
	expect_prop(&infos->items[0], 4, "driver_version", "550.54.15");
	expect_prop(&infos->items[0], 5, "compute_cap", "9.0");
	/* No bus id, so no PCI function to ask about topology. */
	assert_null(extres_info_get(&infos->items[0], "pci.bus_id"));
	assert_null(extres_info_get(&infos->items[0], "numa_node"));
	assert_null(extres_info_get(&infos->items[0], "memory.total"));

	expect_gpu(&infos->items[1], 1, NULL);

	/* GPU 3 keeps its own index after the skipped one. */
	assert_int_equal(infos->items[2].n_props, 9);
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
	assert_int_equal(infos->items[0].n_props, 12);
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
 * NVML state between them; one open serves several discoveries. */
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
		assert_int_equal(s->current.inits(), inits + (unsigned long)i);
		assert_int_equal(s->current.shutdowns(),
				 shutdowns + (unsigned long)i);
	}
	extres_driver_close(drv);
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
	assert_int_equal(s->current.inits(), inits + 1);
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
	assert_int_equal(s->current.inits(), inits + 1);
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
		expect_gpu(&infos->items[i], i, "compute_cap");
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
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
