/* SPDX-License-Identifier: MIT */
/*
 * The "amdgpu" driver: AMD GPUs from the kernel's KFD topology and DRM
 * nodes in sysfs, without ROCm tools.
 *
 *   param.sysfs-root: /sys    optional; where sysfs is mounted (a fake tree
 *                             in tests). It replaces "/sys" in every path
 *                             below; a relative one is taken from the config
 *                             file's directory.
 *
 * The GPUs are the KFD topology nodes <root>/class/kfd/kfd/topology/nodes/<n>
 * whose `properties` file (lines of "key value") has a non-zero simd_count;
 * CPU nodes have 0. They are listed in ascending node number, as the ROCm
 * runtime enumerates them, so `index` here is the device number that
 * HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES mean. Properties:
 *
 *   index               0, 1, ... counting GPU nodes only
 *   unique_id           properties' unique_id in hex, "0x5f6c2b8a1d3e4f70",
 *                       as rocm-smi --showuniqueid prints it; absent when the
 *                       kernel reports 0 (GPUs without one)
 *   vendor_id           properties' vendor_id as 4-digit lower-case hex with
 *   device_id           0x ("0x1002", "0x74a0"), as the PCI device's own
 *                       sysfs `vendor` and `device` files show them
 *   gfx_target_version  as in properties, decimal ("90402" for gfx942)
 *   drm_render_minor    as in properties, decimal ("128")
 *   device              /dev/dri/renderD<drm_render_minor> (a host path, not
 *                       under sysfs-root)
 *   pci.bus_id          the base name of the realpath of
 *                       <root>/class/drm/renderD<minor>/device ("0000:c1:00.0")
 *   memory.total        <that device dir>/mem_info_vram_total, bytes, shown in
 *                       whole MiB without a unit, as the nvml driver and
 *                       nvidia-smi --format=csv,nounits print it: "196592"
 *   numa_node           <that device dir>/numa_node as the file says ("-1"
 *                       included: no NUMA affinity)
 *   local_cpulist       <that device dir>/local_cpulist, the kernel's list of
 *                       the CPUs near the GPU ("0-47,96-143")
 *   health              from the kernel's RAS files in <that device dir>/ras
 *                       (amdgpu_ras.c, Documentation/gpu/amdgpu/ras.rst):
 *                       "ok", or joined by ',': ecc-ue (umc_err_count's
 *                       "ue:" above 0: uncorrectable memory errors), ue-BLOCK
 *                       (BLOCK_err_count's, another block: gfx, sdma, ...),
 *                       bad-pages-pending and bad-pages-failed (a line of
 *                       gpu_vram_bad_pages, "pfn : size : flag", flagged P,
 *                       pending retirement, or F, that could not be
 *                       retired). Absent without a ras directory (no RAS on
 *                       this board). Read at each discover(), so it follows
 *                       the resource's refresh-interval; the counts are the
 *                       kernel's since the driver loaded.
 *
 * Whatever cannot be read leaves its property out with a warning naming the
 * node and the file; a node whose properties cannot be read (or have no
 * simd_count) is skipped with a warning and is not counted. No KFD topology
 * at all (no amdgpu kernel driver) is a warning, not an error: the driver
 * finds no GPUs, and the core's "wanted N, found 0" stops start-up.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#include "amdgpu_health.h"
#include "sysfs_util.h"
#include "lib/identity.h"
#include "text_scan.h"

#define KFD_NODES "/class/kfd/kfd/topology/nodes"

static const char *const known_params[] = { SYSFS_PARAM_ROOT, NULL };

/* The kernel's MINORBITS: a larger "minor" is no device number. */
#define MINOR_LIMIT (1u << 20)

struct amdgpu {
	const struct extres_host *host;
	char *root; /* without a trailing '/' */
};

/* The keys of a node's properties file that we use. */
enum {
	P_SIMD_COUNT,
	P_UNIQUE_ID,
	P_VENDOR_ID,
	P_DEVICE_ID,
	P_GFX_TARGET_VERSION,
	P_DRM_RENDER_MINOR,
	N_PROPS
};

static const char *const prop_names[N_PROPS] = {
	[P_SIMD_COUNT] = "simd_count",
	[P_UNIQUE_ID] = "unique_id",
	[P_VENDOR_ID] = "vendor_id",
	[P_DEVICE_ID] = "device_id",
	[P_GFX_TARGET_VERSION] = "gfx_target_version",
	[P_DRM_RENDER_MINOR] = "drm_render_minor",
};

struct kfd_node {
	uint32_t id;
	char *dir; /* <nodes>/<id> */
	char *properties; /* <dir>/properties */
	uint64_t value[N_PROPS];
	unsigned seen; /* bit i: value[i] was read */
};

/* What one discovery works on. */
struct scan {
	const struct amdgpu *a;
	struct extres_sink *sink;
	struct sysfs_buf buf;
	const char *why;
};

static void amdgpu_free(struct amdgpu *a)
{
	if (!a)
		return;
	free(a->root);
	free(a);
}

/* Decimal, digits only, within uint64_t: what KFD prints. */
static int32_t amdgpu_open(const struct extres_host *host,
			   const struct extres_param *params, void **ret_handle)
{
	struct amdgpu *a;
	int32_t r;

	extres_params_warn_unknown(host, params, known_params);
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->host = host;
	r = sysfs_root_param(host, params, &a->root);
	if (r < 0)
		amdgpu_free(a);
	else
		*ret_handle = a;
	return r;
}

/* By node number; "01" and "1" would both be node 1, so then by name, for
 * an order that does not depend on the directory listing. */
static int compare_nodes(const void *a, const void *b)
{
	const struct kfd_node *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return strcmp(x->dir, y->dir);
}

/* List the numbered node directories, in ascending order. */
static int32_t list_nodes(struct scan *s, const char *nodes_path,
			  struct kfd_node **ret_nodes, size_t *ret_n)
{
	const struct extres_host *host = s->a->host;
	struct kfd_node *nodes = NULL, *more;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *dir;
	int32_t r = 0;

	dir = opendir(nodes_path);
	if (!dir) {
		r = -errno;
		if (r == -ENOENT) {
			host->log(
				host, EXTRES_LOG_WARNING,
				"no KFD topology at %s (is the amdgpu kernel driver loaded?); no AMD GPUs found",
				nodes_path);
			*ret_nodes = NULL;
			*ret_n = 0;
			return 0;
		}
		host->error(host, "cannot read the KFD topology at %s: %s",
			    nodes_path, strerror(-r));
		return r;
	}
	for (;;) {
		uint64_t id;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno != 0) {
				r = -errno;
				host->error(
					host,
					"cannot read the KFD topology at %s: %s",
					nodes_path, strerror(-r));
			}
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (text_parse_dec(de->d_name, strlen(de->d_name), UINT64_MAX,
				   &id) < 0 ||
		    id > UINT32_MAX) {
			host->log(host, EXTRES_LOG_WARNING,
				  "%s/%s: not a KFD node number; ignored",
				  nodes_path, de->d_name);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			more = reallocarray(nodes, cap, sizeof(*nodes));
			if (!more) {
				r = -ENOMEM;
				break;
			}
			nodes = more;
		}
		memset(&nodes[n], 0, sizeof(nodes[n]));
		nodes[n].id = (uint32_t)id;
		if (asprintf(&nodes[n].dir, "%s/%s", nodes_path, de->d_name) <
		    0) {
			r = -ENOMEM;
			break;
		}
		if (asprintf(&nodes[n].properties, "%s/properties",
			     nodes[n].dir) < 0) {
			free(nodes[n].dir);
			r = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(dir);
	if (r < 0) {
		for (i = 0; i < n; i++) {
			free(nodes[i].dir);
			free(nodes[i].properties);
		}
		free(nodes);
		return r;
	}
	qsort(nodes, n, sizeof(*nodes), compare_nodes);
	*ret_nodes = nodes;
	*ret_n = n;
	return 0;
}

/* Read a node's properties file; 0, or -errno with s->why set. */
static int read_properties(struct scan *s, struct kfd_node *node)
{
	const char *line, *end, *key_end, *v, *v_end, *next;
	uint64_t value;
	int r, i;

	r = sysfs_read(node->properties, &s->buf, &s->why);
	if (r < 0)
		return r;
	end = s->buf.data + s->buf.len;
	for (line = s->buf.data; line < end; line = next) {
		next = memchr(line, '\n', (size_t)(end - line));
		next = next ? next + 1 : end;
		for (key_end = line; key_end < next && *key_end != ' ' &&
				     *key_end != '\t' && *key_end != '\n';
		     key_end++)
			;
		for (v = key_end; v < next && (*v == ' ' || *v == '\t'); v++)
			;
		for (v_end = next;
		     v_end > v && (v_end[-1] == '\n' || v_end[-1] == ' ' ||
				   v_end[-1] == '\t');
		     v_end--)
			;
		for (i = 0; i < N_PROPS; i++) {
			if (strlen(prop_names[i]) != (size_t)(key_end - line) ||
			    memcmp(prop_names[i], line,
				   (size_t)(key_end - line)) != 0)
				continue;
			/* A malformed value counts as missing, and is
			 * reported as such by the caller. */
			if (text_parse_dec(v, (size_t)(v_end - v), UINT64_MAX,
					   &value) == 0) {
				node->value[i] = value;
				node->seen |= 1u << i;
			} else {
				node->seen &= ~(1u << i);
			}
		}
	}
	return 0;
}

static int has(const struct kfd_node *node, int prop)
{
	return (node->seen >> prop) & 1u;
}

static void warn_missing(struct scan *s, const struct kfd_node *node,
			 uint64_t gpu, int prop)
{
	s->a->host->log(s->a->host, EXTRES_LOG_WARNING,
			"GPU %" PRIu64 " (KFD node %" PRIu32
			"): no valid %s in %s; property %s left out",
			gpu, node->id, prop_names[prop], node->properties,
			prop_names[prop]);
}

static int32_t add(struct scan *s, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int32_t add(struct scan *s, const char *key, const char *fmt, ...)
{
	char value[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	return s->sink->add_property(s->sink, key, value);
}

/* <dev>/<attr>, trimmed, into s->buf: *ret_value is NULL, after a warning
 * naming the file and `property`, when it cannot be read. 0 or -ENOMEM. */
static int32_t read_dev_attr(struct scan *s, const struct kfd_node *node,
			     uint64_t gpu, const char *dev, const char *attr,
			     const char *property, const char **ret_value)
{
	char *file;

	if (asprintf(&file, "%s/%s", dev, attr) < 0)
		return -ENOMEM;
	*ret_value = NULL;
	if (sysfs_read_value(file, &s->buf, ret_value, &s->why) < 0)
		s->a->host->log(s->a->host, EXTRES_LOG_WARNING,
				"GPU %" PRIu64 " (KFD node %" PRIu32
				"): %s: %s; %s left out",
				gpu, node->id, file, s->why, property);
	free(file);
	return 0;
}

/* pci.bus_id, memory.total, numa_node, local_cpulist and health, from the
 * DRM render node's PCI device directory. */
static int32_t add_drm(struct scan *s, const struct kfd_node *node,
		       uint64_t gpu, uint64_t minor)
{
	const struct extres_host *host = s->a->host;
	char *link = NULL, *dev = NULL;
	const char *value, *bus;
	uint64_t bytes;
	int32_t r = -ENOMEM;

	if (asprintf(&link, "%s/class/drm/renderD%" PRIu64 "/device",
		     s->a->root, minor) < 0) {
		link = NULL;
		goto out;
	}
	dev = realpath(link, NULL);
	if (!dev) {
		if (errno == ENOMEM)
			goto out;
		host->log(
			host, EXTRES_LOG_WARNING,
			"GPU %" PRIu64 " (KFD node %" PRIu32
			"): cannot resolve %s: %s; pci.bus_id, memory.total, numa_node and local_cpulist left out",
			gpu, node->id, link, strerror(errno));
		r = 0;
		goto out;
	}
	bus = strrchr(dev, '/');
	bus = bus ? bus + 1 : dev;
	r = s->sink->add_property(s->sink, "pci.bus_id", *bus ? bus : dev);

	if (r == 0)
		r = read_dev_attr(s, node, gpu, dev, "mem_info_vram_total",
				  "memory.total", &value);
	if (r == 0 && value) {
		if (text_parse_dec(value, strlen(value), UINT64_MAX, &bytes) <
		    0)
			host->log(
				host, EXTRES_LOG_WARNING,
				"GPU %" PRIu64 " (KFD node %" PRIu32
				"): %s/mem_info_vram_total: '%s' is not a number of bytes; memory.total left out",
				gpu, node->id, dev, value);
		else
			r = add(s, "memory.total", "%" PRIu64, bytes >> 20);
	}

	if (r == 0)
		r = read_dev_attr(s, node, gpu, dev, "numa_node", "numa_node",
				  &value);
	if (r == 0 && value)
		r = s->sink->add_property(s->sink, "numa_node", value);
	if (r == 0)
		r = read_dev_attr(s, node, gpu, dev, "local_cpulist",
				  "local_cpulist", &value);
	if (r == 0 && value)
		r = s->sink->add_property(s->sink, "local_cpulist", value);
	if (r == 0)
		r = amdgpu_add_health(s->sink, dev, &s->buf);
out:
	free(dev);
	free(link);
	return r;
}

static int32_t add_gpu(struct scan *s, const struct kfd_node *node,
		       uint64_t gpu)
{
	const uint64_t *v = node->value;
	int32_t r;

	r = s->sink->begin_info(s->sink);
	if (r == 0)
		r = add(s, "index", "%" PRIu64, gpu);
	/* 0 is how the kernel says the GPU has no unique id. */
	if (r == 0 && has(node, P_UNIQUE_ID) && v[P_UNIQUE_ID] != 0)
		r = add(s, "unique_id", "0x%" PRIx64, v[P_UNIQUE_ID]);
	else if (r == 0 && !has(node, P_UNIQUE_ID))
		warn_missing(s, node, gpu, P_UNIQUE_ID);
	if (r == 0 && has(node, P_VENDOR_ID))
		r = add(s, "vendor_id", "0x%04" PRIx64, v[P_VENDOR_ID]);
	else if (r == 0)
		warn_missing(s, node, gpu, P_VENDOR_ID);
	if (r == 0 && has(node, P_DEVICE_ID))
		r = add(s, "device_id", "0x%04" PRIx64, v[P_DEVICE_ID]);
	else if (r == 0)
		warn_missing(s, node, gpu, P_DEVICE_ID);
	if (r == 0 && has(node, P_GFX_TARGET_VERSION))
		r = add(s, "gfx_target_version", "%" PRIu64,
			v[P_GFX_TARGET_VERSION]);
	else if (r == 0)
		warn_missing(s, node, gpu, P_GFX_TARGET_VERSION);
	if (r < 0)
		return r;

	if (!has(node, P_DRM_RENDER_MINOR) ||
	    v[P_DRM_RENDER_MINOR] >= MINOR_LIMIT) {
		s->a->host->log(
			s->a->host, EXTRES_LOG_WARNING,
			"GPU %" PRIu64 " (KFD node %" PRIu32
			"): no valid drm_render_minor in %s; drm_render_minor, device, pci.bus_id, memory.total, numa_node and local_cpulist left out",
			gpu, node->id, node->properties);
		return 0;
	}
	r = add(s, "drm_render_minor", "%" PRIu64, v[P_DRM_RENDER_MINOR]);
	if (r == 0)
		r = add(s, "device", "/dev/dri/renderD%" PRIu64,
			v[P_DRM_RENDER_MINOR]);
	if (r == 0)
		r = add_drm(s, node, gpu, v[P_DRM_RENDER_MINOR]);
	return r;
}

static int32_t amdgpu_discover(void *handle, struct extres_sink *sink)
{
	const struct amdgpu *a = handle;
	const struct extres_host *host = a->host;
	struct kfd_node *nodes = NULL;
	struct scan *s = NULL;
	char *nodes_path = NULL;
	uint64_t gpus = 0;
	size_t n = 0, i;
	int32_t r = -ENOMEM;

	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	s->a = a;
	s->sink = sink;
	if (asprintf(&nodes_path, "%s" KFD_NODES, a->root) < 0) {
		nodes_path = NULL;
		goto out;
	}
	r = list_nodes(s, nodes_path, &nodes, &n);
	if (r < 0)
		goto out;

	for (i = 0; i < n; i++) {
		struct kfd_node *node = &nodes[i];

		if (read_properties(s, node) < 0) {
			host->log(host, EXTRES_LOG_WARNING,
				  "KFD node %" PRIu32 ": %s: %s; node skipped",
				  node->id, node->properties, s->why);
			continue;
		}
		if (!has(node, P_SIMD_COUNT)) {
			host->log(host, EXTRES_LOG_WARNING,
				  "KFD node %" PRIu32
				  ": no valid simd_count in %s; node skipped",
				  node->id, node->properties);
			continue;
		}
		if (node->value[P_SIMD_COUNT] == 0)
			continue; /* a CPU */
		r = add_gpu(s, node, gpus++);
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	if (r == -ENOMEM)
		host->error(host, "out of memory");
	for (i = 0; i < n; i++) {
		free(nodes[i].dir);
		free(nodes[i].properties);
	}
	free(nodes);
	free(nodes_path);
	free(s);
	return r;
}

static void amdgpu_close(void *handle)
{
	amdgpu_free(handle);
}

/* ROCm opens the KFD besides a GPU's render node. */
static const char *const kfd_nodes[] = { "/dev/kfd", NULL };

EXTRES_DRIVER_REGISTER(
		.name = "amdgpu", .open = amdgpu_open,
		.discover = amdgpu_discover, .close = amdgpu_close,
		/* ROCm names a GPU "GPU-<unique_id as 16 hex digits>". */
		.env_var = "ROCR_VISIBLE_DEVICES", .env_property = "unique_id",
		.env_form = EXTRES_ENV_FORM_HEX_ID, .env_id_prefix = "GPU-",
		.control_nodes = kfd_nodes,
		.identity_keys = identity_keys_usual)
