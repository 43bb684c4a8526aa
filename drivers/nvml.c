/* SPDX-License-Identifier: MIT */
/*
 * The "nvml" driver: NVIDIA GPUs through NVML, without nvidia-smi.
 *
 * Params:
 *   library   optional; the NVML library to load. Default
 *             "libnvidia-ml.so.1", found by the dynamic loader's usual
 *             search (LD_LIBRARY_PATH, ld.so.cache, ...), as CUDA does. A
 *             name without '/' is searched the same way; a relative path
 *             resolves against the config file's directory. A path is
 *             refused when a user other than root or the daemon's could
 *             modify it (host->check_trusted_path).
 *
 *   sysfs-root  optional; where sysfs is mounted, "/sys" by default (a fake
 *             tree in tests), as for the amdgpu driver.
 *
 *   proc-root  optional; where procfs is mounted, "/proc" by default (a
 *             fake tree in tests): a MIG instance's caps nodes are read
 *             from driver/nvidia/capabilities there (nvml_mig.c).
 *
 *   mig       optional; "instances" (the default), "parents" or "both":
 *             what a GPU in MIG mode is listed as (nvml_mig.c). A GPU not
 *             in MIG mode is always listed as itself.
 *
 *   health-recovery  optional; seconds (decimals allowed) a critical Xid
 *             keeps `health` at "xid-N" after the last one, 60 by
 *             default; 0: until the daemon restarts.
 *
 * The library is opened with dlopen() in open() and closed in close(); extres
 * has no build-time dependency on NVIDIA headers or libraries, so the few
 * NVML types and entry points used are declared in nvml_api.h.
 * Each discover() brackets its calls with nvmlInit and nvmlShutdown (NVML
 * counts them), so no NVML state is held while the daemon serves files.
 *
 * One info per GPU, in NVML index order. Properties are named as
 * `nvidia-smi --query-gpu` names them, with the values that
 * `--format=csv,noheader,nounits` prints: index, uuid, name, serial,
 * pci.bus_id, memory.total (MiB), driver_version, compute_cap,
 * vbios_version; brand and architecture as `nvidia-smi -q` prints them
 * ("Product Brand", "Product Architecture"), and cuda_version as its banner
 * does ("12.4"), which --query-gpu cannot ask for; plus
 * minor_number and device (/dev/nvidia<minor>), which nvidia-smi cannot
 * query; and numa_node and local_cpulist, the kernel's files of those names
 * in the GPU's PCI function directory, <sysfs-root>/bus/pci/devices/<bus id
 * as the kernel writes it, "0000:3b:00.0">/, as they read ("-1": no NUMA
 * node; "0-3,8-11"). A property NVML cannot give for a device (not supported, an older
 * library without the call, any error) is absent rather than empty.
 * Then nvlink.peers (nvml_nvlink.c), health and health.reset-required
 * (nvml_health.c, fed by the event thread of nvml_events.c), and mig.mode
 * "enabled" on a GPU in MIG mode listed as itself; its instances follow it
 * (nvml_mig.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#include "lib/identity.h"
#include "nvml.h"
#include "sysfs_util.h"

#define PARAM_LIBRARY "library"
#define DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define PARAM_MIG "mig"
#define PARAM_PROC_ROOT "proc-root"
#define PARAM_RECOVERY "health-recovery"
#define DEFAULT_RECOVERY_MS 60000u
/* A year: more is a typo, and keeps the milliseconds far from overflow. */
#define MAX_RECOVERY_S 31536000.0

static const char *const known_params[] = { PARAM_LIBRARY,   SYSFS_PARAM_ROOT,
					    PARAM_PROC_ROOT, PARAM_MIG,
					    PARAM_RECOVERY,  NULL };

static const struct nvml_symbol symbol_names[N_SYMBOLS] = {
	[SYM_INIT] = { { "nvmlInit_v2", "nvmlInit" } },
	[SYM_SHUTDOWN] = { { "nvmlShutdown" } },
	[SYM_COUNT] = { { "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount" } },
	[SYM_HANDLE] = { { "nvmlDeviceGetHandleByIndex_v2",
			   "nvmlDeviceGetHandleByIndex" } },
	[SYM_ERROR_STRING] = { { "nvmlErrorString" } },
	[SYM_INDEX] = { { "nvmlDeviceGetIndex" } },
	[SYM_UUID] = { { "nvmlDeviceGetUUID" } },
	[SYM_NAME] = { { "nvmlDeviceGetName" } },
	[SYM_SERIAL] = { { "nvmlDeviceGetSerial" } },
	[SYM_PCI] = { { "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2",
			"nvmlDeviceGetPciInfo" } },
	[SYM_MEMORY] = { { "nvmlDeviceGetMemoryInfo" } },
	[SYM_DRIVER_VERSION] = { { "nvmlSystemGetDriverVersion" } },
	[SYM_CUDA_CC] = { { "nvmlDeviceGetCudaComputeCapability" } },
	[SYM_MINOR] = { { "nvmlDeviceGetMinorNumber" } },
	[SYM_MIG_MODE] = { { "nvmlDeviceGetMigMode" } },
	[SYM_MAX_MIG] = { { "nvmlDeviceGetMaxMigDeviceCount" } },
	[SYM_MIG_HANDLE] = { { "nvmlDeviceGetMigDeviceHandleByIndex" } },
	[SYM_GI_ID] = { { "nvmlDeviceGetGpuInstanceId" } },
	[SYM_CI_ID] = { { "nvmlDeviceGetComputeInstanceId" } },
	[SYM_ATTRIBUTES] = { { "nvmlDeviceGetAttributes_v2",
			       "nvmlDeviceGetAttributes" } },
	[SYM_NVLINK_STATE] = { { "nvmlDeviceGetNvLinkState" } },
	[SYM_NVLINK_REMOTE_PCI] = { { "nvmlDeviceGetNvLinkRemotePciInfo_v2",
				      "nvmlDeviceGetNvLinkRemotePciInfo" } },
	[SYM_NVLINK_REMOTE_TYPE] = { { "nvmlDeviceGetNvLinkRemoteDeviceType" } },
	[SYM_ECC] = { { "nvmlDeviceGetTotalEccErrors" } },
	[SYM_RETIRED_PENDING] = { { "nvmlDeviceGetRetiredPagesPendingStatus" } },
	[SYM_REMAP] = { { "nvmlDeviceGetRemappingInfo" } },
	[SYM_EVENT_SET_CREATE] = { { "nvmlEventSetCreate" } },
	[SYM_EVENT_SET_FREE] = { { "nvmlEventSetFree" } },
	[SYM_REGISTER_EVENTS] = { { "nvmlDeviceRegisterEvents" } },
	[SYM_EVENT_WAIT] = { { "nvmlEventSetWait_v2", "nvmlEventSetWait" } },
	[SYM_ARCHITECTURE] = { { "nvmlDeviceGetArchitecture" } },
	[SYM_BRAND] = { { "nvmlDeviceGetBrand" } },
	[SYM_VBIOS] = { { "nvmlDeviceGetVbiosVersion" } },
	[SYM_CUDA_VERSION] = { { "nvmlSystemGetCudaDriverVersion_v2",
				 "nvmlSystemGetCudaDriverVersion" } },
	[SYM_GI_BY_ID] = { { "nvmlDeviceGetGpuInstanceById" } },
	[SYM_GI_INFO] = { { "nvmlGpuInstanceGetInfo" } },
};

static void nvml_free(struct nvml *n)
{
	if (!n)
		return;
	nvml_events_stop(n);
	if (n->dl)
		dlclose(n->dl);
	free(n->library);
	free(n->root);
	free(n->proc);
	free(n);
}

const char *nvml_strerror(const struct nvml *n, nvml_return rc, char *buf,
			  size_t size)
{
	const char *s = NULL;

	if (n->sym[SYM_ERROR_STRING].addr)
		s = ((nvml_error_string_fn)n->sym[SYM_ERROR_STRING].addr)(rc);
	if (!s || !*s) {
		snprintf(buf, size, "NVML error %d", rc);
		s = buf;
	}
	return s;
}

static int32_t nvml_errno(nvml_return rc)
{
	switch (rc) {
	case NVML_ERROR_DRIVER_NOT_LOADED:
	case NVML_ERROR_GPU_IS_LOST:
		return -ENODEV;
	case NVML_ERROR_NO_PERMISSION:
		return -EACCES;
	case NVML_ERROR_LIBRARY_NOT_FOUND:
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return -ELIBACC;
	default:
		return -EIO;
	}
}

/* A call that the whole discovery depends on failed. */
static int32_t nvml_failed(const struct nvml *n, int sym, nvml_return rc)
{
	char buf[32];

	n->host->error(n->host, "%s: %s failed: %s", n->library,
		       n->sym[sym].name,
		       nvml_strerror(n, rc, buf, sizeof(buf)));
	return nvml_errno(rc);
}

/* "Not supported" is what many boards answer for some calls (serial on
 * GeForce), so it is only debug. */
void nvml_log_rc(const struct nvml *n, int sym, nvml_return rc, const char *fmt,
		 ...)
{
	char what[256], buf[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	n->host->log(n->host,
		     rc == NVML_ERROR_NOT_SUPPORTED ? EXTRES_LOG_DEBUG :
						      EXTRES_LOG_INFO,
		     "%s: %s: %s", what, n->sym[sym].name,
		     nvml_strerror(n, rc, buf, sizeof(buf)));
}

/* A property NVML could not give: left out. */
void nvml_absent(const struct nvml *n, unsigned int gpu, const char *key,
		 int sym, nvml_return rc)
{
	nvml_log_rc(n, sym, rc, "GPU %u: no %s", gpu, key);
}

/* The core refuses empty values and newlines; such a value is no value. */
int32_t nvml_add(const struct nvml *n, struct extres_sink *sink,
		 unsigned int gpu, const char *key, const char *value)
{
	if (value[0] == '\0' || strchr(value, '\n')) {
		n->host->log(
			n->host, EXTRES_LOG_INFO,
			"GPU %u: no %s: NVML gave an empty or multi-line value",
			gpu, key);
		return 0;
	}
	return sink->add_property(sink, key, value);
}

int32_t nvml_addf(const struct nvml *n, struct extres_sink *sink,
		  unsigned int gpu, const char *key, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return nvml_add(n, sink, gpu, key, buf);
}

void nvml_request_refresh(const struct nvml *n)
{
	if (EXTRES_HAS_MEMBER(n->host, request_refresh))
		n->host->request_refresh(n->host);
}

/* The same for every GPU, so asked once; "" when NVML cannot say. */
static void get_driver_version(const struct nvml *n, char *buf, size_t size)
{
	nvml_return rc;

	buf[0] = '\0';
	if (!n->sym[SYM_DRIVER_VERSION].addr)
		return;
	rc = ((nvml_system_string_fn)n->sym[SYM_DRIVER_VERSION].addr)(
		buf, (unsigned int)size);
	buf[size - 1] = '\0';
	if (rc != NVML_SUCCESS) {
		nvml_log_rc(n, SYM_DRIVER_VERSION, rc,
			    "no driver_version on any GPU");
		buf[0] = '\0';
	}
}

/* The CUDA version the driver supports, as nvidia-smi's banner prints it
 * ("12.4" for 12040); "" when NVML cannot say. */
static void get_cuda_version(const struct nvml *n, char *buf, size_t size)
{
	nvml_return rc;
	int v = 0;

	buf[0] = '\0';
	if (!n->sym[SYM_CUDA_VERSION].addr)
		return;
	rc = ((nvml_int_fn)n->sym[SYM_CUDA_VERSION].addr)(&v);
	if (rc != NVML_SUCCESS) {
		nvml_log_rc(n, SYM_CUDA_VERSION, rc,
			    "no cuda_version on any GPU");
		return;
	}
	if (v <= 0) {
		n->host->log(n->host, EXTRES_LOG_INFO,
			     "no cuda_version on any GPU: %s answered %d",
			     n->sym[SYM_CUDA_VERSION].name, v);
		return;
	}
	snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

/* Each GPU's handle, NVML index and PCI address, asked once: for its
 * properties, and for what relates GPUs to each other (NVLink). Failures
 * are reported where each property is; a call the library lacks is
 * NVML_ERROR_FUNCTION_NOT_FOUND, and quiet there. */
static void enumerate(const struct nvml *n, struct nvml_gpu *gpus,
		      unsigned int count)
{
	unsigned int gpu;

	for (gpu = 0; gpu < count; gpu++) {
		struct nvml_gpu *g = &gpus[gpu];

		g->index = gpu;
		g->index_rc = g->pci_rc = NVML_ERROR_FUNCTION_NOT_FOUND;
		g->handle_rc =
			((nvml_handle_fn)n->sym[SYM_HANDLE].addr)(gpu, &g->dev);
		if (g->handle_rc != NVML_SUCCESS) {
			g->dev = NULL;
			continue;
		}
		if (n->sym[SYM_INDEX].addr) {
			g->index_rc = ((nvml_uint_fn)n->sym[SYM_INDEX].addr)(
				g->dev, &g->index);
			if (g->index_rc != NVML_SUCCESS)
				g->index = gpu;
		}
		if (n->sym[SYM_PCI].addr)
			g->pci_rc = ((nvml_pci_fn)n->sym[SYM_PCI].addr)(
				g->dev, &g->pci);
	}
}

static int32_t nvml_discover(void *handle, struct extres_sink *sink)
{
	struct nvml *n = handle;
	struct nvml_system sys;
	char buf[32];
	unsigned int count = 0, gpu;
	struct nvml_gpu *gpus = NULL;
	nvml_return rc;
	int32_t r = 0;

	rc = ((nvml_void_fn)n->sym[SYM_INIT].addr)();
	if (rc != NVML_SUCCESS)
		return nvml_failed(n, SYM_INIT, rc);

	rc = ((nvml_count_fn)n->sym[SYM_COUNT].addr)(&count);
	if (rc != NVML_SUCCESS) {
		r = nvml_failed(n, SYM_COUNT, rc);
		goto out;
	}
	/* Here, not in open(): `extresctl check` opens only, and nothing
	 * needs events before there are devices to show. */
	nvml_events_start(n, count);
	gpus = calloc(count ? count : 1, sizeof(*gpus));
	if (!gpus) {
		n->host->error(n->host, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	enumerate(n, gpus, count);
	r = nvml_nvlink_peers(n, gpus, count);
	if (r < 0) {
		n->host->error(n->host, "out of memory");
		goto out;
	}
	get_driver_version(n, sys.driver_version, sizeof(sys.driver_version));
	get_cuda_version(n, sys.cuda_version, sizeof(sys.cuda_version));
	for (gpu = 0; gpu < count && r == 0; gpu++)
		r = nvml_report_gpu(n, sink, &gpus[gpu], gpu, &sys);
out:
	if (gpus)
		for (gpu = 0; gpu < count; gpu++)
			free(gpus[gpu].peers);
	free(gpus);
	rc = ((nvml_void_fn)n->sym[SYM_SHUTDOWN].addr)();
	if (rc != NVML_SUCCESS)
		n->host->log(n->host, EXTRES_LOG_WARNING, "%s: %s failed: %s",
			     n->library, n->sym[SYM_SHUTDOWN].name,
			     nvml_strerror(n, rc, buf, sizeof(buf)));
	return r;
}

static int32_t resolve_symbols(const struct extres_host *host, struct nvml *n)
{
	size_t i, j;

	for (i = 0; i < N_SYMBOLS; i++) {
		struct nvml_symbol *s = &n->sym[i];

		*s = symbol_names[i];
		for (j = 0;
		     !s->addr && j < sizeof(s->names) / sizeof(s->names[0]) &&
		     s->names[j];
		     j++) {
			s->addr = dlsym(n->dl, s->names[j]);
			s->name = s->names[j];
		}
		if (s->addr)
			continue;
		s->name = s->names[0];
		if (i < N_REQUIRED)
			return host->error(
				host,
				"%s: not an NVML library: it has no %s%s%s",
				n->library, s->names[0],
				s->names[1] ? " or " : "",
				s->names[1] ? s->names[1] : "");
		host->log(host, EXTRES_LOG_DEBUG,
			  "%s has no %s; its property will be absent",
			  n->library, s->names[0]);
	}
	/* Leave no failed lookup behind for the next dlerror() caller. */
	dlerror();
	return 0;
}

static int32_t mig_param(const struct extres_host *host,
			 const struct extres_param *params,
			 enum nvml_mig_list *ret)
{
	static const char *const names[] = { [MIG_INSTANCES] = "instances",
					     [MIG_PARENTS] = "parents",
					     [MIG_BOTH] = "both" };
	const struct extres_param *p = extres_param_get(params, PARAM_MIG);
	size_t i;

	*ret = MIG_INSTANCES;
	if (!p)
		return 0;
	for (i = 0; p->kind == EXTRES_PARAM_SCALAR && i < 3; i++)
		if (strcmp(p->value, names[i]) == 0) {
			*ret = (enum nvml_mig_list)i;
			return 0;
		}
	return extres_param_error(host, p,
				  "param." PARAM_MIG
				  " must be instances, parents or both, not %s",
				  p->kind == EXTRES_PARAM_SCALAR ?
					  p->value :
					  "a list or mapping");
}

/* Seconds, with decimals for tests and impatient operators; checked by
 * hand, since strtod() takes "inf", "1e3" and leading blanks. */
static int32_t recovery_param(const struct extres_host *host,
			      const struct extres_param *params,
			      uint64_t *ret_ms)
{
	const struct extres_param *p = extres_param_get(params, PARAM_RECOVERY);
	const char *s;
	double v;
	char *end;
	int digits = 0, dots = 0;

	*ret_ms = DEFAULT_RECOVERY_MS;
	if (!p)
		return 0;
	if (p->kind != EXTRES_PARAM_SCALAR)
		goto bad;
	for (s = p->value; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digits++;
		else if (*s == '.' && digits > 0)
			dots++;
		else
			goto bad;
	}
	if (digits == 0 || dots > 1 || p->value[strlen(p->value) - 1] == '.')
		goto bad;
	errno = 0;
	v = strtod(p->value, &end);
	if (errno || *end || v > MAX_RECOVERY_S)
		goto bad;
	*ret_ms = (uint64_t)(v * 1000.0 + 0.5);
	/* 0.0001 is no hold-down at all, which 0 is not: keep a moment. */
	if (*ret_ms == 0 && v > 0)
		*ret_ms = 1;
	return 0;
bad:
	return extres_param_error(
		host, p,
		"param." PARAM_RECOVERY
		" must be a number of seconds from 0 (never: until a restart) to 31536000, like 60, not %s",
		p->kind == EXTRES_PARAM_SCALAR ? p->value :
						 "a list or mapping");
}

/* The configured library as dlopen() should get it: a name goes to the
 * loader's search, a relative path is taken from the config's directory. */
static int32_t library_path(const struct extres_host *host, const char *library,
			    char **ret)
{
	if (!strchr(library, '/') || library[0] == '/') {
		*ret = strdup(library);
		return *ret ? 0 : -ENOMEM;
	}
	if (asprintf(ret, "%s/%s", host->config_dir, library) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int32_t nvml_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	const char *library = DEFAULT_LIBRARY;
	const struct extres_param *p;
	struct nvml *n = NULL;
	const char *why;
	int32_t r;

	extres_params_warn_unknown(host, params, known_params);
	p = extres_param_get(params, PARAM_LIBRARY);
	if (p) {
		if (p->kind != EXTRES_PARAM_SCALAR || p->value[0] == '\0')
			return extres_param_error(
				host, p,
				"param." PARAM_LIBRARY
				" must be a file name or path of the NVML library, like " DEFAULT_LIBRARY);
		library = p->value;
	}

	n = calloc(1, sizeof(*n));
	if (!n) {
		r = -ENOMEM;
		goto fail;
	}
	n->host = host;
	r = mig_param(host, params, &n->mig);
	if (r == 0)
		r = recovery_param(host, params, &n->recovery_ms);
	if (r == 0)
		r = sysfs_root_param(host, params, &n->root);
	if (r == 0)
		r = sysfs_dir_param(host, params, PARAM_PROC_ROOT, "/proc",
				    &n->proc);
	if (r < 0)
		goto fail;
	r = library_path(host, library, &n->library);
	if (r < 0)
		goto fail;
	/* Its constructors run with the daemon's rights. A bare name goes
	 * to the loader's system paths, which are root's. A missing file is
	 * never handed to dlopen(): a directory missing on the way may be
	 * made by anyone before the loader looks. */
	if (strchr(n->library, '/') &&
	    host->struct_size >=
		    offsetof(struct extres_host, check_trusted_path) +
			    sizeof(host->check_trusted_path) &&
	    host->check_trusted_path) {
		r = host->check_trusted_path(host, n->library, "NVML library");
		if (r == -ENOENT) {
			host->error(
				host,
				"cannot load the NVML library %s: %s: cannot open shared object file: %s",
				n->library, n->library, strerror(ENOENT));
			r = -ELIBACC;
		}
		if (r < 0)
			goto fail;
	}

	n->dl = dlopen(n->library, RTLD_NOW | RTLD_LOCAL);
	if (!n->dl) {
		why = dlerror();
		host->error(host, "cannot load the NVML library %s: %s%s",
			    n->library, why ? why : "unknown error",
			    p ? "" : " (is the NVIDIA driver installed?)");
		r = -ELIBACC;
		goto fail;
	}
	r = resolve_symbols(host, n);
	if (r < 0) {
		r = -ELIBBAD;
		goto fail;
	}
	*ret_handle = n;
	return 0;
fail:
	if (r == -ENOMEM)
		host->error(host, "out of memory");
	nvml_free(n);
	return r;
}

static void nvml_close(void *handle)
{
	nvml_free(handle);
}

/* What every CUDA program opens besides its GPU's own node. */
static const char *const nvidia_control[] = { "/dev/nvidiactl",
					      "/dev/nvidia-uvm",
					      "/dev/nvidia-uvm-tools", NULL };

/* Where nvidia-ctk writes its spec, in the order the toolkit's docs
 * name them. */
static const char *const nvidia_cdi_specs[] = {
	"/etc/cdi/nvidia.yaml", "/etc/cdi/nvidia.json",
	"/var/run/cdi/nvidia.yaml", "/var/run/cdi/nvidia.json", NULL
};

/* A MIG instance's caps nodes (nvml_mig.c), for its CDI spec. */
static const char *const mig_node_keys[] = { "mig.gi.device", "mig.ci.device",
					     NULL };

/* CUDA's own default order is fastest first, which is not NVML's. */
static const char *const cuda_env_fixed[] = { "CUDA_DEVICE_ORDER=PCI_BUS_ID",
					      NULL };

/* DCGM-exporter's labels, with its values: a MIG instance's metrics carry
 * its GPU's number (DCGM's GPU id, NVML's index), UUID and "nvidia<gpu>"
 * (of the number, not the minor), plus the instance's profile name and
 * GPU instance id. pci_bus_id is extres_device_info's own already. */
static const struct extres_metric_label dcgm_labels[] = {
	{ .label = "gpu", .property = "parent.index" },
	{ .label = "gpu", .property = "index" },
	{ .label = "UUID", .property = "parent.uuid" },
	{ .label = "UUID", .property = "uuid" },
	{ .label = "device", .property = "parent.index", .prefix = "nvidia" },
	{ .label = "device", .property = "index", .prefix = "nvidia" },
	{ .label = "modelName", .property = "name" },
	{ .label = "Hostname", .property = NULL },
	{ .label = "GPU_I_PROFILE", .property = "profile" },
	{ .label = "GPU_I_ID", .property = "gi.id" },
	{ .label = NULL },
};

EXTRES_DRIVER_REGISTER(
		.name = "nvml", .open = nvml_open, .discover = nvml_discover,
		.close = nvml_close,
		/* CUDA takes "GPU-..." UUIDs, which survive renumbering. */
		.env_var = "CUDA_VISIBLE_DEVICES", .env_property = "uuid",
		.env_fixed = cuda_env_fixed, .control_nodes = nvidia_control,
		.cdi_base_specs = nvidia_cdi_specs, .node_keys = mig_node_keys,
		.cdi_base_hint =
			"nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
		.identity_keys = identity_keys_usual,
		.metric_labels = dcgm_labels)
