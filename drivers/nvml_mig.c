/* SPDX-License-Identifier: MIT */
/*
 * MIG: a GPU in MIG mode runs CUDA work only on its MIG devices, so by
 * default (param.mig: instances) each of them is an info of its own, in
 * the parent's place; `parents` lists the GPU itself (for whole-GPU tools),
 * `both` the GPU and then its instances.
 *
 * An instance's `index` is its MIG uuid: the core records `index` in the
 * coordination file, and a uuid cannot collide with a GPU's number (Flink's
 * scripts record those). Its `profile` is named as nvidia-smi names it:
 * "<G>g.<GB>gb" for a compute instance that has the whole GPU instance,
 * "<C>c.<G>g.<GB>gb" for one that has C of its G slices; GB is the
 * instance's memory as a share of the GPU's rounded up to eighths, times
 * the GPU's memory in GiB rounded up, rounded to the nearest whole number
 * (so a 4864 MiB slice of an A100 40GB is "5gb"). The "+me"-style suffixes
 * of media-extension profiles are not told apart. mig.gi.device and
 * mig.ci.device are the instance's /dev/nvidia-caps/nvidia-capN nodes of
 * its GPU instance and compute instance, N read from the kernel module's
 * capability files under param.proc-root, so that a container given the
 * instance can open it (CDI, extres_driver_ops.node_keys).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"
#include "sysfs_util.h"

int nvml_mig_enabled(const struct nvml *n, nvml_device dev, unsigned int gpu)
{
	unsigned int current = 0, pending = 0;
	nvml_return rc;

	if (!n->sym[SYM_MIG_MODE].addr)
		return 0;
	rc = ((nvml_mig_mode_fn)n->sym[SYM_MIG_MODE].addr)(dev, &current,
							   &pending);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "MIG instances", SYM_MIG_MODE, rc);
		return 0;
	}
	return current == NVML_DEVICE_MIG_ENABLE;
}

/* The GB of nvidia-smi's profile name, in integers: eighths of the GPU,
 * rounded up, times the GPU's GiB, rounded up, rounded to nearest. */
static unsigned long long profile_gb(unsigned long long mig_mib,
				     unsigned long long total_bytes)
{
	const unsigned long long gib = 1024ull * 1024 * 1024;
	unsigned long long eighths, total_gb;

	if (total_bytes == 0)
		return 0;
	eighths = (mig_mib * 1024 * 1024 * 8 + total_bytes - 1) / total_bytes;
	total_gb = (total_bytes + gib - 1) / gib;
	return (eighths * total_gb + 4) / 8;
}

/* What the instance is made of, as nvmlDeviceGetAttributes counts it
 * (nvidia-smi mig -lgip's columns; the DRA driver's capacities). */
static int32_t add_counts(const struct nvml *n, struct extres_sink *sink,
			  nvml_device mig, unsigned int gpu)
{
	struct nvml_device_attributes a;
	const struct {
		const char *key;
		const unsigned int *value;
	} counts[] = {
		{ "gi.slices", &a.gpu_instance_slice_count },
		{ "ci.slices", &a.compute_instance_slice_count },
		{ "multiprocessors", &a.multiprocessor_count },
		{ "engines.copy", &a.shared_copy_engine_count },
		{ "engines.decoder", &a.shared_decoder_count },
		{ "engines.encoder", &a.shared_encoder_count },
		{ "engines.jpeg", &a.shared_jpeg_count },
		{ "engines.ofa", &a.shared_ofa_count },
	};
	size_t i;
	int32_t r = 0;

	if (!n->sym[SYM_ATTRIBUTES].addr)
		return 0;
	memset(&a, 0, sizeof(a));
	/* add_profile() said why when this fails. */
	if (((nvml_attributes_fn)n->sym[SYM_ATTRIBUTES].addr)(mig, &a) !=
	    NVML_SUCCESS)
		return 0;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]) && r == 0; i++)
		r = nvml_addf(n, sink, gpu, counts[i].key, "%u",
			      *counts[i].value);
	return r;
}

/* Where the GPU instance sits among the GPU's memory slices (nvidia-smi
 * mig -lgi's "Placement Start:Size"); NVML may want privileges for it. */
static int32_t add_placement(const struct nvml *n, struct extres_sink *sink,
			     nvml_device parent, nvml_device mig,
			     unsigned int gpu)
{
	struct nvml_gpu_instance_info info;
	nvml_gpu_instance gi = NULL;
	unsigned int id = 0;
	nvml_return rc;
	int32_t r;

	if (!n->sym[SYM_GI_ID].addr || !n->sym[SYM_GI_BY_ID].addr ||
	    !n->sym[SYM_GI_INFO].addr)
		return 0;
	rc = ((nvml_uint_fn)n->sym[SYM_GI_ID].addr)(mig, &id);
	if (rc != NVML_SUCCESS)
		return 0; /* gi.id says why */
	rc = ((nvml_gi_by_id_fn)n->sym[SYM_GI_BY_ID].addr)(parent, id, &gi);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "gi.placement", SYM_GI_BY_ID, rc);
		return 0;
	}
	memset(&info, 0, sizeof(info));
	rc = ((nvml_gi_info_fn)n->sym[SYM_GI_INFO].addr)(gi, &info);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "gi.placement", SYM_GI_INFO, rc);
		return 0;
	}
	r = nvml_addf(n, sink, gpu, "gi.placement.start", "%u",
		      info.placement_start);
	if (r == 0)
		r = nvml_addf(n, sink, gpu, "gi.placement.size", "%u",
			      info.placement_size);
	return r;
}

static int32_t add_profile(const struct nvml *n, struct extres_sink *sink,
			   nvml_device parent, nvml_device mig,
			   unsigned int gpu)
{
	struct nvml_device_attributes a;
	struct nvml_memory mem = { 0 };
	unsigned long long gb;
	nvml_return rc;

	if (!n->sym[SYM_ATTRIBUTES].addr || !n->sym[SYM_MEMORY].addr)
		return 0;
	memset(&a, 0, sizeof(a));
	rc = ((nvml_attributes_fn)n->sym[SYM_ATTRIBUTES].addr)(mig, &a);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "profile of a MIG device", SYM_ATTRIBUTES,
			    rc);
		return 0;
	}
	rc = ((nvml_memory_fn)n->sym[SYM_MEMORY].addr)(parent, &mem);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, "profile of a MIG device", SYM_MEMORY, rc);
		return 0;
	}
	gb = profile_gb(a.memory_size_mb, mem.total);
	if (a.gpu_instance_slice_count == 0 || gb == 0)
		return 0;
	if (a.compute_instance_slice_count == a.gpu_instance_slice_count ||
	    a.compute_instance_slice_count == 0)
		return nvml_addf(n, sink, gpu, "profile", "%ug.%llugb",
				 a.gpu_instance_slice_count, gb);
	return nvml_addf(n, sink, gpu, "profile", "%uc.%ug.%llugb",
			 a.compute_instance_slice_count,
			 a.gpu_instance_slice_count, gb);
}

static int32_t add_id(const struct nvml *n, struct extres_sink *sink,
		      nvml_device mig, unsigned int gpu, const char *key,
		      int sym)
{
	unsigned int id = 0;
	nvml_return rc;

	if (!n->sym[sym].addr)
		return 0;
	rc = ((nvml_uint_fn)n->sym[sym].addr)(mig, &id);
	if (rc != NVML_SUCCESS) {
		nvml_absent(n, gpu, key, sym, rc);
		return 0;
	}
	return nvml_addf(n, sink, gpu, key, "%u", id);
}

/* The id NVML gives `dev` through `sym`; 0 when it gives none. */
static int get_uint(const struct nvml *n, nvml_device dev, int sym,
		    unsigned int *ret)
{
	return n->sym[sym].addr &&
	       ((nvml_uint_fn)n->sym[sym].addr)(dev, ret) == NVML_SUCCESS;
}

/*
 * `key` = /dev/nvidia-caps/nvidia-cap<N>, N the "DeviceFileMinor" of the
 * capability file `rel` under <proc-root>/driver/nvidia/capabilities, as
 * the kernel module writes it ("DeviceFileMinor: 12") and
 * nvidia-container-toolkit reads it. Left out when there is none (no MIG
 * capabilities on this host, an older module): quietly, as nvidia-smi.
 */
static int32_t add_cap(const struct nvml *n, struct extres_sink *sink,
		       unsigned int gpu, const char *key, const char *rel)
{
	struct sysfs_buf buf;
	const char *why, *line;
	char path[512];
	uint64_t minor;
	char *end;

	if ((size_t)snprintf(path, sizeof(path),
			     "%s/driver/nvidia/capabilities/%s", n->proc,
			     rel) >= sizeof(path) ||
	    sysfs_read(path, &buf, &why) < 0)
		return 0;
	line = strstr(buf.data, "DeviceFileMinor:");
	if (!line)
		return 0;
	line += strlen("DeviceFileMinor:");
	while (*line == ' ' || *line == '\t')
		line++;
	errno = 0;
	minor = strtoull(line, &end, 10);
	if (errno || end == line || (*end && *end != '\n') ||
	    minor > (1u << 20) - 1)
		return 0;
	return nvml_addf(n, sink, gpu, key, "/dev/nvidia-caps/nvidia-cap%llu",
			 (unsigned long long)minor);
}

/* mig.gi.device and mig.ci.device: what a container needs, besides the
 * GPU's own node, to use the instance. */
static int32_t add_caps(const struct nvml *n, struct extres_sink *sink,
			const struct nvml_mig_parent *p, nvml_device mig)
{
	unsigned int minor, gi, ci;
	char rel[96];
	int32_t r;

	if (!get_uint(n, p->g->dev, SYM_MINOR, &minor) ||
	    !get_uint(n, mig, SYM_GI_ID, &gi) ||
	    !get_uint(n, mig, SYM_CI_ID, &ci))
		return 0;
	snprintf(rel, sizeof(rel), "gpu%u/mig/gi%u/access", minor, gi);
	r = add_cap(n, sink, p->gpu, "mig.gi.device", rel);
	snprintf(rel, sizeof(rel), "gpu%u/mig/gi%u/ci%u/access", minor, gi, ci);
	if (r == 0)
		r = add_cap(n, sink, p->gpu, "mig.ci.device", rel);
	return r;
}

static int32_t report_instance(const struct nvml *n, struct extres_sink *sink,
			       const struct nvml_mig_parent *p, nvml_device mig,
			       const char *uuid)
{
	struct nvml_memory mem = { 0 };
	unsigned int gpu = p->gpu;
	int32_t r;

	r = sink->begin_info(sink);
	if (r == 0)
		r = nvml_add(n, sink, gpu, "index", uuid);
	if (r == 0)
		r = nvml_add(n, sink, gpu, "uuid", uuid);
	if (r == 0)
		r = nvml_addf(n, sink, gpu, "parent.index", "%u", p->g->index);
	if (r == 0 && p->uuid[0])
		r = nvml_add(n, sink, gpu, "parent.uuid", p->uuid);
	if (r == 0)
		r = add_profile(n, sink, p->g->dev, mig, gpu);
	/* The instance's own; unlike the parent's, left out quietly. */
	if (r == 0 && n->sym[SYM_MEMORY].addr &&
	    ((nvml_memory_fn)n->sym[SYM_MEMORY].addr)(mig, &mem) ==
		    NVML_SUCCESS)
		r = nvml_addf(n, sink, gpu, "memory.total", "%llu",
			      mem.total / (1024ull * 1024ull));
	if (r == 0)
		r = add_id(n, sink, mig, gpu, "gi.id", SYM_GI_ID);
	if (r == 0)
		r = add_id(n, sink, mig, gpu, "ci.id", SYM_CI_ID);
	if (r == 0)
		r = add_caps(n, sink, p, mig);
	if (r == 0)
		r = nvml_add_parent_props(n, sink, p->g, gpu);
	if (r == 0 && p->sys->driver_version[0])
		r = nvml_add(n, sink, gpu, "driver_version",
			     p->sys->driver_version);
	if (r == 0)
		r = nvml_add_health(n, sink, gpu, p->health);
	if (r == 0)
		r = nvml_add_board_props(n, sink, p->g->dev, gpu, p->sys);
	if (r == 0)
		r = add_counts(n, sink, mig, gpu);
	if (r == 0)
		r = add_placement(n, sink, p->g->dev, mig, gpu);
	return r;
}

int32_t nvml_mig_report(const struct nvml *n, struct extres_sink *sink,
			const struct nvml_mig_parent *p)
{
	char uuid[NVML_STRING_MAX], buf[32];
	unsigned int max = 0, i;
	nvml_device mig;
	nvml_return rc;
	int32_t r = 0;

	if (!n->sym[SYM_MAX_MIG].addr || !n->sym[SYM_MIG_HANDLE].addr ||
	    !n->sym[SYM_UUID].addr) {
		n->host->log(n->host, EXTRES_LOG_WARNING,
			     "GPU %u is in MIG mode, but %s cannot list its "
			     "instances",
			     p->gpu, n->library);
		return 0;
	}
	rc = ((nvml_uint_fn)n->sym[SYM_MAX_MIG].addr)(p->g->dev, &max);
	if (rc != NVML_SUCCESS) {
		n->host->log(n->host, EXTRES_LOG_WARNING,
			     "GPU %u: no MIG instances: %s: %s", p->gpu,
			     n->sym[SYM_MAX_MIG].name,
			     nvml_strerror(n, rc, buf, sizeof(buf)));
		return 0;
	}
	for (i = 0; i < max && r == 0; i++) {
		rc = ((nvml_mig_handle_fn)n->sym[SYM_MIG_HANDLE].addr)(
			p->g->dev, i, &mig);
		/* Not every index has a MIG device: NOT_FOUND is a gap. */
		if (rc == NVML_ERROR_NOT_FOUND)
			continue;
		if (rc == NVML_SUCCESS) {
			memset(uuid, 0, sizeof(uuid));
			rc = ((nvml_string_fn)n->sym[SYM_UUID].addr)(
				mig, uuid, sizeof(uuid));
			uuid[sizeof(uuid) - 1] = '\0';
		}
		if (rc != NVML_SUCCESS || !uuid[0] || strchr(uuid, ' ') ||
		    strchr(uuid, '\n')) {
			n->host->log(
				n->host, EXTRES_LOG_WARNING,
				"GPU %u: MIG device %u skipped: %s", p->gpu, i,
				rc != NVML_SUCCESS ?
					nvml_strerror(n, rc, buf, sizeof(buf)) :
					"no usable uuid");
			continue;
		}
		r = report_instance(n, sink, p, mig, uuid);
	}
	return r;
}
