/* SPDX-License-Identifier: MIT */
/*
 * What the files of the nvml driver share (nvml.c, nvml_gpu.c, nvml_events.c,
 * nvml_health.c, nvml_nvlink.c, nvml_mig.c): the handle, the NVML entry
 * points found in the library, and the helpers that turn NVML's answers
 * into properties. Hidden like everything in a module but its entry point.
 */
#ifndef EXTRES_DRIVERS_NVML_H
#define EXTRES_DRIVERS_NVML_H

#include <stddef.h>
#include <stdint.h>

#include <extres/driver.h>

#include "nvml_api.h"

/* An entry point: the names to try, newest first, and the one found. */
struct nvml_symbol {
	const char *names[4];
	const char *name;
	void *addr;
};

enum {
	SYM_INIT,
	SYM_SHUTDOWN,
	SYM_COUNT,
	SYM_HANDLE,
	/* Optional from here on: without one, its property is absent. */
	SYM_ERROR_STRING,
	SYM_INDEX,
	SYM_UUID,
	SYM_NAME,
	SYM_SERIAL,
	SYM_PCI,
	SYM_MEMORY,
	SYM_DRIVER_VERSION,
	SYM_CUDA_CC,
	SYM_MINOR,
	SYM_MIG_MODE,
	SYM_MAX_MIG,
	SYM_MIG_HANDLE,
	SYM_GI_ID,
	SYM_CI_ID,
	SYM_ATTRIBUTES,
	SYM_NVLINK_STATE,
	SYM_NVLINK_REMOTE_PCI,
	SYM_NVLINK_REMOTE_TYPE,
	SYM_ECC,
	SYM_RETIRED_PENDING,
	SYM_REMAP,
	SYM_EVENT_SET_CREATE,
	SYM_EVENT_SET_FREE,
	SYM_REGISTER_EVENTS,
	SYM_EVENT_WAIT,
	SYM_ARCHITECTURE,
	SYM_BRAND,
	SYM_VBIOS,
	SYM_CUDA_VERSION,
	SYM_GI_BY_ID,
	SYM_GI_INFO,
	N_SYMBOLS,
	N_REQUIRED = SYM_ERROR_STRING,
};

/* param.mig */
enum nvml_mig_list {
	MIG_INSTANCES,
	MIG_PARENTS,
	MIG_BOTH,
};

struct nvml_events;

struct nvml {
	const struct extres_host *host;
	char *library; /* as loaded, for messages */
	char *root; /* sysfs, without a trailing '/' */
	char *proc; /* procfs (param.proc-root), without a trailing '/' */
	void *dl;
	struct nvml_symbol sym[N_SYMBOLS];
	enum nvml_mig_list mig;
	/* param.health-recovery in ms; 0: an Xid holds until a restart. */
	uint64_t recovery_ms;
	/* The event thread, from the first discover() to close(); NULL
	 * before, or when it could not start. */
	struct nvml_events *events;
	int events_tried;
};

/* One GPU of a discovery, by NVML enumeration position, as nvml.c's
 * enumerate() asked NVML once: each answer with NVML's return code, for
 * the message of whatever shows it. */
struct nvml_gpu {
	nvml_device dev; /* NULL: NVML gave no handle (handle_rc), skipped */
	nvml_return handle_rc;
	/* NVML's index, as the `index` property; the enumeration position
	 * where index_rc is not NVML_SUCCESS */
	unsigned int index;
	nvml_return index_rc;
	struct nvml_pci_info pci; /* valid where pci_rc is NVML_SUCCESS */
	nvml_return pci_rc;
	/* nvlink.peers: malloc'd, "" for none; NULL when NVML cannot say */
	char *peers;
};

/* NVML's words for `rc`, or "NVML error N" in `buf`. */
const char *nvml_strerror(const struct nvml *n, nvml_return rc, char *buf,
			  size_t size);

/* Log the message printed with `fmt`, then ": <sym's name>: <rc's words>";
 * debug for "not supported", which many boards answer for some calls,
 * info otherwise. */
void nvml_log_rc(const struct nvml *n, int sym, nvml_return rc, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

/* Log that property `key` of GPU `gpu` is left out because `sym` failed:
 * debug for "not supported", info otherwise. */
void nvml_absent(const struct nvml *n, unsigned int gpu, const char *key,
		 int sym, nvml_return rc);

/* sink->add_property(), except that an empty or multi-line value (which
 * the core refuses) is left out with a message. */
int32_t nvml_add(const struct nvml *n, struct extres_sink *sink,
		 unsigned int gpu, const char *key, const char *value);

/* nvml_add() of a value printed with `fmt`. */
int32_t nvml_addf(const struct nvml *n, struct extres_sink *sink,
		  unsigned int gpu, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* host->request_refresh() where the core has it; else nothing (the
 * resource's refresh-interval then shows changes). */
void nvml_request_refresh(const struct nvml *n);

/*
 * The event thread (nvml_events.c). nvml_events_start() is called by
 * discover() with NVML initialised and `count` GPUs enumerated; it starts
 * the thread once per handle (later calls return at once), and returns when
 * the thread has registered for Xid events, or found it cannot: the
 * thread's failure is logged, never fatal, since health then still shows
 * what discover() asks NVML itself. nvml_events_stop() asks the thread to
 * end and joins it (within about 200 ms); close() calls it.
 */
void nvml_events_start(struct nvml *n, unsigned int count);
void nvml_events_stop(struct nvml *n);

/* The Xid GPU `gpu` (enumeration position) is held down for now, or 0. */
unsigned long long nvml_events_xid(const struct nvml *n, unsigned int gpu);

/*
 * `health` and `health.reset-required` of a GPU (nvml_health.c): "ok", or
 * its conditions joined by ',' in this order: xid-N, ecc-dbe,
 * retired-pages-pending, row-remap-pending, row-remap-failed. `reset` is
 * "yes" when a condition is one that only a GPU reset clears (all but the
 * Xid, which the hold-down ends), else "no". Either may be asked of the
 * parent of a MIG instance for the instance.
 */
struct nvml_health {
	char health[128];
	const char *reset;
};
void nvml_health_get(const struct nvml *n, nvml_device dev, unsigned int gpu,
		     struct nvml_health *ret);

/* Fill gpus[i].peers for every GPU NVML has NVLink answers for
 * (nvml_nvlink.c). Returns 0 or -ENOMEM. */
int32_t nvml_nvlink_peers(const struct nvml *n, struct nvml_gpu *gpus,
			  unsigned int count);

/* What NVML says of the node rather than of one GPU: "" when it gave
 * nothing. */
struct nvml_system {
	char driver_version[NVML_STRING_MAX];
	char cuda_version[32]; /* "12.4", from nvmlSystemGetCudaDriverVersion */
};

/* GPU `gpu` of a discovery as param.mig wants it (nvml_gpu.c); one whose
 * handle NVML refused is skipped with a warning. */
int32_t nvml_report_gpu(const struct nvml *n, struct extres_sink *sink,
			const struct nvml_gpu *g, unsigned int gpu,
			const struct nvml_system *sys);

/* What a GPU listed as itself and its MIG instances share, the parent's
 * (nvml_gpu.c): name, pci.bus_id, numa_node, local_cpulist, compute_cap,
 * minor_number and device, added to the current info. */
int32_t nvml_add_parent_props(const struct nvml *n, struct extres_sink *sink,
			      const struct nvml_gpu *g, unsigned int gpu);

/* The board's brand, architecture and vbios_version (of `dev`, the GPU
 * itself for a MIG instance), and the node's cuda_version, added to the
 * current info; each absent where NVML cannot say. */
int32_t nvml_add_board_props(const struct nvml *n, struct extres_sink *sink,
			     nvml_device dev, unsigned int gpu,
			     const struct nvml_system *sys);

/* `health` and `health.reset-required`, added to the current info. */
int32_t nvml_add_health(const struct nvml *n, struct extres_sink *sink,
			unsigned int gpu, const struct nvml_health *h);

/* 1 if `dev` is in MIG mode now, else 0 (nvml_mig.c). */
int nvml_mig_enabled(const struct nvml *n, nvml_device dev, unsigned int gpu);

/* What an instance takes from its parent. */
struct nvml_mig_parent {
	const struct nvml_gpu *g;
	unsigned int gpu; /* enumeration position, for messages */
	const char *uuid; /* "" when NVML gave none */
	const struct nvml_system *sys;
	const struct nvml_health *health;
};

/* One info per MIG device of the parent, in NVML's MIG index order. */
int32_t nvml_mig_report(const struct nvml *n, struct extres_sink *sink,
			const struct nvml_mig_parent *parent);

#endif
