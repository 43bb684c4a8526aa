/* SPDX-License-Identifier: MIT */
/*
 * One GPU of the nvml driver as infos: itself, with the properties named as
 * `nvidia-smi --query-gpu` names them, its MIG instances (nvml_mig.c), or
 * both, as param.mig says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
#include "sysfs_util.h"

static int32_t add_string(const struct nvml *n, struct extres_sink *sink,
			  nvml_device dev, unsigned int gpu, const char *key,
			  int sym)
{
	char buf[NVML_STRING_MAX] = "";
	nvml_return rc;

	if (!n->sym[sym].addr)
		return 0;
	rc = ((nvml_string_fn)n->sym[sym].addr)(dev, buf, sizeof(buf));
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, key, sym, rc);
		return 0;
	}
	buf[sizeof(buf) - 1] = '\0';
	return nvml_add(n, sink, gpu, key, buf);
}

/* nvidia-smi's words for nvmlBrandType_t, by value. */
static const char *const brands[NVML_BRAND_TITAN_RTX + 1] = {
	"Unknown",
	"Quadro",
	"Tesla",
	"NVS",
	"Grid",
	"GeForce",
	"Titan",
	"NVIDIA Virtual Applications",
	"NVIDIA Virtual PC",
	"NVIDIA Virtual Compute Server",
	"NVIDIA RTX Virtual Workstation",
	"NVIDIA Cloud Gaming",
	"Quadro RTX",
	"NVIDIA RTX",
	"NVIDIA",
	"GeForce RTX",
	"Titan RTX",
};

/* nvmlDeviceArchitecture_t from Kepler (2) on. */
static const char *const archs[] = {
	"Kepler", "Maxwell", "Pascal", "Volta",	    "Turing",
	"Ampere", "Ada",     "Hopper", "Blackwell",
};
_Static_assert(sizeof(archs) / sizeof(archs[0]) ==
		       NVML_DEVICE_ARCH_BLACKWELL - NVML_DEVICE_ARCH_KEPLER + 1,
	       "one name per architecture");

/* `key` from an NVML enum through `names`: a value the table does not
 * know (a newer driver's) is left out, not guessed. */
static int32_t add_enum(const struct nvml *n, struct extres_sink *sink,
			nvml_device dev, unsigned int gpu, const char *key,
			int sym, unsigned int first, const char *const *names,
			unsigned int n_names)
{
	unsigned int v = 0;
	nvml_return rc;

	if (!n->sym[sym].addr)
		return 0;
	rc = ((nvml_uint_fn)n->sym[sym].addr)(dev, &v);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, key, sym, rc);
		return 0;
	}
	if (v < first || v - first >= n_names) {
		n->host->log(n->host, EXTRES_LOG_INFO,
			     "GPU %u: no %s: %s answered %u, unknown here", gpu,
			     key, n->sym[sym].name, v);
		return 0;
	}
	return nvml_add(n, sink, gpu, key, names[v - first]);
}

static int32_t add_index(const struct nvml *n, struct extres_sink *sink,
			 const struct nvml_gpu *g, unsigned int gpu)
{
	char buf[32];

	/* NVML defines a device's index as the one that got its handle, so
	 * `index` is never left out: the core and the coordination file
	 * need it. enumerate() put the position there for a failed call. */
	if (n->sym[SYM_INDEX].addr && g->index_rc != NVML_SUCCESS)
		n->host->log(
			n->host, EXTRES_LOG_INFO,
			"GPU %u: %s: %s; index %u is the one it was enumerated at",
			gpu, n->sym[SYM_INDEX].name,
			nvml_strerror(n, g->index_rc, buf, sizeof(buf)), gpu);
	return nvml_addf(n, sink, gpu, "index", "%u", g->index);
}

/* numa_node and local_cpulist from the GPU's PCI function in sysfs, named
 * as the kernel names it ("0000:3b:00.0"): NVML's bus id has 8 domain
 * digits and capitals. A file that is not there (a GPU passed through
 * without its PCI function in sysfs) is as quiet as "not supported". */
static int32_t add_topology(const struct nvml *n, struct extres_sink *sink,
			    unsigned int gpu, const struct nvml_pci_info *pci)
{
	static const char *const attrs[] = { "numa_node", "local_cpulist" };
	struct sysfs_buf *buf;
	const char *value, *why;
	char *path = NULL;
	int32_t r = 0, e;
	size_t i;

	buf = malloc(sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < 2 && r == 0; i++) {
		if (asprintf(&path, "%s/bus/pci/devices/%04x:%02x:%02x.0/%s",
			     n->root, pci->domain, pci->bus, pci->device,
			     attrs[i]) < 0) {
			path = NULL;
			r = -ENOMEM;
			break;
		}
		e = sysfs_read_value(path, buf, &value, &why);
		if (e < 0)
			n->host->log(n->host,
				     e == -ENOENT ? EXTRES_LOG_DEBUG :
						    EXTRES_LOG_INFO,
				     "GPU %u: no %s: %s: %s", gpu, attrs[i],
				     path, why);
		else
			r = nvml_add(n, sink, gpu, attrs[i], value);
		free(path);
		path = NULL;
	}
	free(buf);
	return r;
}

static int32_t add_pci(const struct nvml *n, struct extres_sink *sink,
		       const struct nvml_gpu *g, unsigned int gpu)
{
	int32_t r;

	if (!n->sym[SYM_PCI].addr)
		return 0;
	if (g->pci_rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "pci.bus_id", SYM_PCI, g->pci_rc);
		return 0;
	}
	/* nvidia-smi's form; older drivers' busId field has a 4-digit
	 * domain, so it is built from the numbers. */
	r = nvml_addf(n, sink, gpu, "pci.bus_id", "%08X:%02X:%02X.0",
		      g->pci.domain, g->pci.bus, g->pci.device);
	if (r == 0)
		r = add_topology(n, sink, gpu, &g->pci);
	return r;
}

static int32_t add_memory(const struct nvml *n, struct extres_sink *sink,
			  nvml_device dev, unsigned int gpu)
{
	struct nvml_memory mem = { 0 };
	nvml_return rc;

	if (!n->sym[SYM_MEMORY].addr)
		return 0;
	rc = ((nvml_memory_fn)n->sym[SYM_MEMORY].addr)(dev, &mem);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "memory.total", SYM_MEMORY, rc);
		return 0;
	}
	return nvml_addf(n, sink, gpu, "memory.total", "%llu",
			 mem.total / (1024ull * 1024ull));
}

static int32_t add_compute_cap(const struct nvml *n, struct extres_sink *sink,
			       nvml_device dev, unsigned int gpu)
{
	int major = 0, minor = 0;
	nvml_return rc;

	if (!n->sym[SYM_CUDA_CC].addr)
		return 0;
	rc = ((nvml_cc_fn)n->sym[SYM_CUDA_CC].addr)(dev, &major, &minor);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "compute_cap", SYM_CUDA_CC, rc);
		return 0;
	}
	return nvml_addf(n, sink, gpu, "compute_cap", "%d.%d", major, minor);
}

static int32_t add_minor(const struct nvml *n, struct extres_sink *sink,
			 nvml_device dev, unsigned int gpu)
{
	unsigned int minor = 0;
	nvml_return rc;
	int32_t r;

	if (!n->sym[SYM_MINOR].addr)
		return 0;
	rc = ((nvml_uint_fn)n->sym[SYM_MINOR].addr)(dev, &minor);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "minor_number and device", SYM_MINOR, rc);
		return 0;
	}
	r = nvml_addf(n, sink, gpu, "minor_number", "%u", minor);
	if (r < 0)
		return r;
	return nvml_addf(n, sink, gpu, "device", "/dev/nvidia%u", minor);
}

/* What a GPU listed as itself and its MIG instances share, the parent's:
 * everything the core does not take from the instance itself. */
int32_t nvml_add_parent_props(const struct nvml *n, struct extres_sink *sink,
			      const struct nvml_gpu *g, unsigned int gpu)
{
	int32_t r = add_string(n, sink, g->dev, gpu, "name", SYM_NAME);

	if (r == 0)
		r = add_pci(n, sink, g, gpu);
	if (r == 0)
		r = add_compute_cap(n, sink, g->dev, gpu);
	if (r == 0)
		r = add_minor(n, sink, g->dev, gpu);
	return r;
}

int32_t nvml_add_board_props(const struct nvml *n, struct extres_sink *sink,
			     nvml_device dev, unsigned int gpu,
			     const struct nvml_system *sys)
{
	int32_t r = add_enum(n, sink, dev, gpu, "brand", SYM_BRAND, 0, brands,
			     sizeof(brands) / sizeof(brands[0]));

	if (r == 0)
		r = add_enum(n, sink, dev, gpu, "architecture",
			     SYM_ARCHITECTURE, NVML_DEVICE_ARCH_KEPLER, archs,
			     sizeof(archs) / sizeof(archs[0]));
	if (r == 0)
		r = add_string(n, sink, dev, gpu, "vbios_version", SYM_VBIOS);
	if (r == 0 && sys->cuda_version[0])
		r = nvml_add(n, sink, gpu, "cuda_version", sys->cuda_version);
	return r;
}

int32_t nvml_add_health(const struct nvml *n, struct extres_sink *sink,
			unsigned int gpu, const struct nvml_health *h)
{
	int32_t r = nvml_add(n, sink, gpu, "health", h->health);

	if (r == 0)
		r = nvml_add(n, sink, gpu, "health.reset-required", h->reset);
	return r;
}

/* The GPU itself, as one info. */
static int32_t report_parent(const struct nvml *n, struct extres_sink *sink,
			     const struct nvml_gpu *g, unsigned int gpu,
			     const struct nvml_system *sys,
			     const struct nvml_health *health, int mig)
{
	nvml_device dev = g->dev;
	int32_t r;

	r = sink->begin_info(sink);
	if (r == 0)
		r = add_index(n, sink, g, gpu);
	if (r == 0)
		r = add_string(n, sink, dev, gpu, "uuid", SYM_UUID);
	if (r == 0)
		r = add_string(n, sink, dev, gpu, "name", SYM_NAME);
	if (r == 0)
		r = add_string(n, sink, dev, gpu, "serial", SYM_SERIAL);
	if (r == 0)
		r = add_pci(n, sink, g, gpu);
	if (r == 0)
		r = add_memory(n, sink, dev, gpu);
	if (r == 0 && sys->driver_version[0])
		r = nvml_add(n, sink, gpu, "driver_version",
			     sys->driver_version);
	if (r == 0)
		r = add_compute_cap(n, sink, dev, gpu);
	if (r == 0)
		r = add_minor(n, sink, dev, gpu);
	if (r == 0 && g->peers)
		r = sink->add_property(sink, "nvlink.peers", g->peers);
	if (r == 0)
		r = nvml_add_health(n, sink, gpu, health);
	if (r == 0 && mig)
		r = nvml_add(n, sink, gpu, "mig.mode", "enabled");
	if (r == 0)
		r = nvml_add_board_props(n, sink, dev, gpu, sys);
	return r;
}

/* GPU `gpu` as param.mig wants it: itself, its MIG instances, or both. A
 * GPU NVML gives no handle for (no permission, fallen off the bus) is
 * skipped with a warning, so the others stay usable. */
int32_t nvml_report_gpu(const struct nvml *n, struct extres_sink *sink,
			const struct nvml_gpu *g, unsigned int gpu,
			const struct nvml_system *sys)
{
	char uuid[NVML_STRING_MAX] = "", buf[32];
	struct nvml_mig_parent parent;
	struct nvml_health health;
	int mig;
	int32_t r = 0;

	if (!g->dev) {
		n->host->log(n->host, EXTRES_LOG_WARNING,
			     "GPU %u skipped: %s: %s", gpu,
			     n->sym[SYM_HANDLE].name,
			     nvml_strerror(n, g->handle_rc, buf, sizeof(buf)));
		return 0;
	}
	nvml_health_get(n, g->dev, gpu, &health);
	mig = nvml_mig_enabled(n, g->dev, gpu);
	if (!mig || n->mig != MIG_INSTANCES)
		r = report_parent(n, sink, g, gpu, sys, &health, mig);
	if (r < 0 || !mig || n->mig == MIG_PARENTS)
		return r;

	if (n->sym[SYM_UUID].addr &&
	    ((nvml_string_fn)n->sym[SYM_UUID].addr)(
		    g->dev, uuid, sizeof(uuid)) != NVML_SUCCESS)
		uuid[0] = '\0';
	uuid[sizeof(uuid) - 1] = '\0';
	parent = (struct nvml_mig_parent){
		.g = g,
		.gpu = gpu,
		.uuid = uuid,
		.sys = sys,
		.health = &health,
	};
	return nvml_mig_report(n, sink, &parent);
}
