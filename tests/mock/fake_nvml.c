/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for NVIDIA's libnvidia-ml.so.1, for the nvml driver's tests on
 * machines without a GPU. It exports the NVML entry points the driver uses,
 * with C linkage and NVML's types and return codes, and serves made-up H100s.
 *
 * Built twice: as libnvidia-ml.so.1 (current API: nvmlInit_v2, ..._v2,
 * nvmlDeviceGetPciInfo_v3) and, with FAKE_NVML_LEGACY, as
 * fake_nvml_legacy.so: an old library with only the unversioned calls
 * (nvmlInit, nvmlDeviceGetCount, nvmlDeviceGetHandleByIndex,
 * nvmlDeviceGetPciInfo with the short v1 struct) and no
 * nvmlDeviceGetIndex or nvmlDeviceGetCudaComputeCapability.
 *
 * Read from the environment when the first nvmlInit makes it ready:
 *   FAKE_NVML_GPUS=N           number of GPUs (default 3, at most 16)
 *   FAKE_NVML_FAIL_INIT=1      nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED
 *   FAKE_NVML_FAIL_COUNT=CODE  nvmlDeviceGetCount fails with CODE
 *   FAKE_NVML_UNSUPPORTED=FIELD:GPU[:CODE],...
 *                              the call for FIELD on GPU fails with CODE
 *                              (default NVML_ERROR_NOT_SUPPORTED). FIELD is
 *                              handle, index, uuid, name, serial, pci,
 *                              memory, cuda, minor, or driver (any GPU).
 *   FAKE_NVML_LOG=PATH         append "init" / "shutdown" lines to PATH at
 *                              each successful call, for tests in another
 *                              process
 *   FAKE_NVML_MIG=GPU:PROFILE,...;GPU:...
 *                              GPU is in MIG mode with one MIG device per
 *                              PROFILE, "[C c.]G g.N gb" as nvidia-smi
 *                              names them ("1g.10gb", "1c.3g.40gb"); each
 *                              has N * 1000 MiB, G GPU and C (default G)
 *                              compute slices, GPU instance id = its
 *                              position + 1, compute instance id 0, and
 *                              the uuid "MIG-<GPU's uuid digits>-<GPU><pos>"
 *   FAKE_NVML_NVLINK=A-B,A-sw,...
 *                              set (even empty): every GPU has 18 NVLinks,
 *                              inactive but for one per item, in order:
 *                              A-B joins GPUs A and B, A-sw joins A to an
 *                              NVSwitch. Unset: NVLink calls answer
 *                              NOT_SUPPORTED, as on a PCIe board.
 *   FAKE_NVML_EVENTS=PATH      nvmlEventSetWait_v2 delivers an Xid event
 *                              for each line "GPU XID" appended to PATH (a
 *                              file the test makes), for GPUs registered
 *                              with the set; each set reads from the start
 *
 * Read at each call, so that a test can change them while NVML is held:
 *   FAKE_NVML_ECC=GPU:COUNT,...     volatile uncorrected ECC errors
 *   FAKE_NVML_RETIRED=GPU,...       retired pages pending
 *   FAKE_NVML_REMAP=GPU:pending,GPU:failed,...
 *                                   row remapping pending or failed
 *   FAKE_NVML_GONE=PATH             a file of GPU numbers, one per line,
 *                                   that have fallen off the bus: NVML
 *                                   counts and numbers only the others,
 *                                   so the GPUs after one renumber (GPU 2
 *                                   answers at index 1, with its own uuid,
 *                                   serial and PCI address)
 *
 * FIELD of FAKE_NVML_UNSUPPORTED may also be mig, nvlink, ecc, retired,
 * remap, events (nvmlDeviceRegisterEvents), attributes, arch, brand,
 * vbios, placement (nvmlDeviceGetGpuInstanceById) or cudaver (the CUDA
 * driver version, any GPU).
 *
 * Every GPU is a Hopper of brand NVIDIA with VBIOS 96.00.74.00.01, on a
 * driver for CUDA 12.4 (12040). A MIG device of G GPU slices has G copy
 * engines, decoders and JPEG engines, no encoder or OFA, and its GPU
 * instance is placed right after the previous one's (start = the sum of
 * the earlier instances' G, size G).
 *
 * Like NVML, init and shutdown are counted: the library is ready from the
 * first successful init until the matching shutdown, and every device call
 * before that answers NVML_ERROR_UNINITIALIZED. fake_nvml_init_count() and
 * fake_nvml_shutdown_count() tell an in-process test how many succeeded.
 *
 * The state is global on purpose: it stands in for a process-wide library.
 * Init and shutdown take a lock, as NVML's do, since the nvml driver's
 * event thread has its own pair; the rest is read-only while initialised.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10

#define MAX_GPUS 16
#define MAX_FAILURES 16
#define MAX_MIG 7
#define N_LINKS 18
#define NO_PEER 0xffu
#define SWITCH_PEER 0xfeu

/* A GPU, or one of its MIG devices (mig = 1). */
struct fake_gpu {
	unsigned int index; /* the GPU's; the parent's for a MIG device */
	int mig;
	unsigned int slot; /* MIG device index */
	unsigned int g, c, gb; /* MIG profile */
};
typedef struct fake_gpu *nvmlDevice_t;

#ifdef FAKE_NVML_LEGACY
/* nvmlPciInfo_t before NVML 9: bus id in 16 bytes, then reserved words. */
typedef struct {
	char busId[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	unsigned int reserved0, reserved1, reserved2, reserved3;
} nvmlPciInfo_t;
#else
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
#endif

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

struct failure {
	char field[16];
	unsigned int gpu;
	nvmlReturn_t code;
};

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType, eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

struct fake_event_set {
	unsigned long long types[MAX_GPUS];
	off_t offset;
};
typedef struct fake_event_set *nvmlEventSet_t;

typedef struct {
	unsigned int multiprocessorCount, sharedCopyEngineCount,
		sharedDecoderCount, sharedEncoderCount, sharedJpegCount,
		sharedOfaCount, gpuInstanceSliceCount,
		computeInstanceSliceCount;
	unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	unsigned int refs; /* under lock, read atomically */
	unsigned long inits, shutdowns;
	unsigned int n_gpus;
	nvmlReturn_t fail_count;
	size_t n_failures;
	struct failure failures[MAX_FAILURES];
	struct fake_gpu gpus[MAX_GPUS];
	struct fake_gpu migs[MAX_GPUS][MAX_MIG];
	unsigned int n_migs[MAX_GPUS];
	int nvlink; /* FAKE_NVML_NVLINK is set */
	unsigned char links[MAX_GPUS][N_LINKS]; /* peer GPU, or *_PEER */
	char log_path[PATH_MAX];
	char events_path[PATH_MAX];
} fake;

static unsigned int refs(void)
{
	return __atomic_load_n(&fake.refs, __ATOMIC_ACQUIRE);
}

static unsigned long env_number(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end) {
		fprintf(stderr, "fake_nvml: %s=%s is not a number\n", name, s);
		abort();
	}
	return v;
}

/* FIELD:GPU[:CODE],... ; a malformed spec is a broken test: stop loudly. */
static void parse_failures(void)
{
	const char *s = getenv("FAKE_NVML_UNSUPPORTED");
	char *copy, *item, *save = NULL;

	fake.n_failures = 0;
	if (!s || !*s)
		return;
	copy = strdup(s);
	if (!copy)
		abort();
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		struct failure *f = &fake.failures[fake.n_failures];
		char *gpu = strchr(item, ':'), *code, *end;

		if (!gpu || fake.n_failures == MAX_FAILURES ||
		    (size_t)(gpu - item) >= sizeof(f->field)) {
			fprintf(stderr,
				"fake_nvml: bad FAKE_NVML_UNSUPPORTED item '%s'\n",
				item);
			abort();
		}
		*gpu++ = '\0';
		code = strchr(gpu, ':');
		if (code)
			*code++ = '\0';
		strcpy(f->field, item);
		f->gpu = (unsigned int)strtoul(gpu, &end, 10);
		if (end == gpu || *end) {
			fprintf(stderr,
				"fake_nvml: bad GPU '%s' in FAKE_NVML_UNSUPPORTED\n",
				gpu);
			abort();
		}
		f->code = NVML_ERROR_NOT_SUPPORTED;
		if (code) {
			f->code = (nvmlReturn_t)strtol(code, &end, 10);
			if (end == code || *end) {
				fprintf(stderr,
					"fake_nvml: bad code '%s' in FAKE_NVML_UNSUPPORTED\n",
					code);
				abort();
			}
		}
		fake.n_failures++;
	}
	free(copy);
}

static nvmlReturn_t failure_for(const char *field, unsigned int gpu)
{
	size_t i;

	for (i = 0; i < fake.n_failures; i++)
		if (strcmp(fake.failures[i].field, field) == 0 &&
		    (fake.failures[i].gpu == gpu ||
		     strcmp(field, "driver") == 0))
			return fake.failures[i].code;
	return NVML_SUCCESS;
}

static void log_call(const char *what)
{
	const char *path = fake.log_path;
	char line[16];
	int fd, n;

	if (!*path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s\n", what);
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}

/* The device behind a handle, checked as NVML would. */
static nvmlReturn_t gpu_of(nvmlDevice_t dev, const char *field,
			   unsigned int *ret)
{
	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!dev || dev < fake.gpus || dev >= fake.gpus + fake.n_gpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*ret = dev->index;
	return failure_for(field, dev->index);
}

/* 1 if `dev` is one of the MIG devices in use. */
static int is_mig(nvmlDevice_t dev)
{
	unsigned int gpu;

	for (gpu = 0; gpu < fake.n_gpus; gpu++)
		if (dev >= fake.migs[gpu] &&
		    dev < fake.migs[gpu] + fake.n_migs[gpu])
			return 1;
	return 0;
}

/* A MIG device's handle, checked as NVML would. */
static nvmlReturn_t mig_of(nvmlDevice_t dev, const char *field,
			   struct fake_gpu **ret)
{
	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!dev || !is_mig(dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	*ret = dev;
	return failure_for(field, dev->index);
}

static nvmlReturn_t copy_string(char *buf, unsigned int length,
				const char *value)
{
	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(value) + 1 > length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	strcpy(buf, value);
	return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result);
const char *nvmlErrorString(nvmlReturn_t result)
{
	switch (result) {
	case 0:
		return "Success";
	case 1:
		return "Uninitialized";
	case 2:
		return "Invalid Argument";
	case 3:
		return "Not Supported";
	case 4:
		return "Insufficient Permissions";
	case 5:
		return "Already Initialized";
	case 6:
		return "Not Found";
	case 7:
		return "Insufficient Size";
	case 9:
		return "Driver Not Loaded";
	case 15:
		return "GPU is lost";
	default:
		return "Unknown Error";
	}
}

#ifdef FAKE_NVML_LEGACY
#define V2(name) name
#define PCI_INFO nvmlDeviceGetPciInfo
#else
#define V2(name) name##_v2
#define PCI_INFO nvmlDeviceGetPciInfo_v3
#endif

static void copy_env(char *dst, size_t size, const char *name)
{
	const char *s = getenv(name);

	dst[0] = '\0';
	if (s && strlen(s) < size)
		strcpy(dst, s);
}

static unsigned int gpu_number(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end || v >= MAX_GPUS) {
		fprintf(stderr, "fake_nvml: bad GPU '%s' in %s\n", s, what);
		abort();
	}
	return (unsigned int)v;
}

/* "1g.10gb" or "1c.3g.40gb" */
static void parse_profile(struct fake_gpu *m, const char *s)
{
	unsigned int a, b, c;
	char tail[8];

	if (sscanf(s, "%uc.%ug.%ugb%7s", &a, &b, &c, tail) == 3) {
		m->c = a, m->g = b, m->gb = c;
	} else if (sscanf(s, "%ug.%ugb%7s", &b, &c, tail) == 2) {
		m->c = m->g = b, m->gb = c;
	} else {
		fprintf(stderr, "fake_nvml: bad MIG profile '%s'\n", s);
		abort();
	}
}

/* GPU:PROFILE,...;GPU:... */
static void parse_mig(void)
{
	const char *s = getenv("FAKE_NVML_MIG");
	char *copy, *item, *save = NULL, *prof, *save2, *colon;
	unsigned int gpu;

	memset(fake.n_migs, 0, sizeof(fake.n_migs));
	if (!s || !*s)
		return;
	copy = strdup(s);
	if (!copy)
		abort();
	for (item = strtok_r(copy, ";", &save); item;
	     item = strtok_r(NULL, ";", &save)) {
		colon = strchr(item, ':');
		if (!colon) {
			fprintf(stderr,
				"fake_nvml: bad FAKE_NVML_MIG item '%s'\n",
				item);
			abort();
		}
		*colon = '\0';
		gpu = gpu_number(item, "FAKE_NVML_MIG");
		for (prof = strtok_r(colon + 1, ",", &save2);
		     prof && fake.n_migs[gpu] < MAX_MIG;
		     prof = strtok_r(NULL, ",", &save2)) {
			struct fake_gpu *m = &fake.migs[gpu][fake.n_migs[gpu]];

			m->index = gpu;
			m->mig = 1;
			m->slot = fake.n_migs[gpu]++;
			parse_profile(m, prof);
		}
	}
	free(copy);
}

/* A-B,A-sw,... */
static void parse_nvlink(void)
{
	const char *s = getenv("FAKE_NVML_NVLINK");
	unsigned int used[MAX_GPUS] = { 0 }, a, b;
	char *copy, *item, *save = NULL, *dash;

	memset(fake.links, NO_PEER, sizeof(fake.links));
	fake.nvlink = s != NULL;
	if (!s || !*s)
		return;
	copy = strdup(s);
	if (!copy)
		abort();
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		dash = strchr(item, '-');
		if (!dash) {
			fprintf(stderr,
				"fake_nvml: bad FAKE_NVML_NVLINK item '%s'\n",
				item);
			abort();
		}
		*dash++ = '\0';
		a = gpu_number(item, "FAKE_NVML_NVLINK");
		if (strcmp(dash, "sw") == 0) {
			if (used[a] < N_LINKS)
				fake.links[a][used[a]++] = SWITCH_PEER;
			continue;
		}
		b = gpu_number(dash, "FAKE_NVML_NVLINK");
		if (used[a] < N_LINKS)
			fake.links[a][used[a]++] = (unsigned char)b;
		if (used[b] < N_LINKS)
			fake.links[b][used[b]++] = (unsigned char)a;
	}
	free(copy);
}

EXPORT nvmlReturn_t V2(nvmlInit)(void);
nvmlReturn_t V2(nvmlInit)(void)
{
	unsigned int i;

	pthread_mutex_lock(&lock);
	if (fake.refs == 0) {
		if (env_number("FAKE_NVML_FAIL_INIT", 0)) {
			pthread_mutex_unlock(&lock);
			return NVML_ERROR_DRIVER_NOT_LOADED;
		}
		fake.n_gpus = (unsigned int)env_number("FAKE_NVML_GPUS", 3);
		if (fake.n_gpus > MAX_GPUS)
			fake.n_gpus = MAX_GPUS;
		fake.fail_count =
			(nvmlReturn_t)env_number("FAKE_NVML_FAIL_COUNT", 0);
		parse_failures();
		parse_mig();
		parse_nvlink();
		copy_env(fake.log_path, sizeof(fake.log_path), "FAKE_NVML_LOG");
		copy_env(fake.events_path, sizeof(fake.events_path),
			 "FAKE_NVML_EVENTS");
		for (i = 0; i < MAX_GPUS; i++)
			fake.gpus[i].index = i;
	}
	__atomic_add_fetch(&fake.refs, 1, __ATOMIC_RELEASE);
	fake.inits++;
	log_call("init");
	pthread_mutex_unlock(&lock);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void)
{
	pthread_mutex_lock(&lock);
	if (fake.refs == 0) {
		pthread_mutex_unlock(&lock);
		return NVML_ERROR_UNINITIALIZED;
	}
	__atomic_sub_fetch(&fake.refs, 1, __ATOMIC_RELEASE);
	fake.shutdowns++;
	log_call("shutdown");
	pthread_mutex_unlock(&lock);
	return NVML_SUCCESS;
}

/* The GPUs that FAKE_NVML_GONE's file names, as a bit mask. */
static unsigned long gone_mask(void)
{
	const char *path = getenv("FAKE_NVML_GONE");
	unsigned long mask = 0, n;
	char line[32], *end;
	FILE *f;

	f = path ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		n = strtoul(line, &end, 10);
		if (end != line && n < MAX_GPUS)
			mask |= 1ul << n;
	}
	if (f)
		fclose(f);
	return mask;
}

/* The GPU NVML numbers `index` now, or MAX_GPUS when there is none. */
static unsigned int slot_at(unsigned int index)
{
	unsigned long gone = gone_mask();
	unsigned int i;

	for (i = 0; i < fake.n_gpus; i++)
		if (!(gone & (1ul << i)) && index-- == 0)
			return i;
	return MAX_GPUS;
}

EXPORT nvmlReturn_t V2(nvmlDeviceGetCount)(unsigned int *count);
nvmlReturn_t V2(nvmlDeviceGetCount)(unsigned int *count)
{
	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (fake.fail_count)
		return fake.fail_count;
	*count = fake.n_gpus -
		 (unsigned int)__builtin_popcountl(gone_mask() &
						   ((1ul << fake.n_gpus) - 1));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t V2(nvmlDeviceGetHandleByIndex)(unsigned int index,
						   nvmlDevice_t *device);
nvmlReturn_t V2(nvmlDeviceGetHandleByIndex)(unsigned int index,
					    nvmlDevice_t *device)
{
	unsigned int slot = slot_at(index);
	nvmlReturn_t rc;

	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || slot >= fake.n_gpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = failure_for("handle", index);
	if (rc)
		return rc;
	*device = &fake.gpus[slot];
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
				       unsigned int *index);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	unsigned long gone = gone_mask();
	unsigned int i, slot, n = 0;
	nvmlReturn_t rc = gpu_of(device, "index", &slot);

	if (rc)
		return rc;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < slot; i++)
		n += !(gone & (1ul << i));
	*index = n;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device,
						       int *major, int *minor);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
						int *minor)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "cuda", &i);

	if (rc)
		return rc;
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	*major = 9;
	*minor = 0;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
				      unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid,
			       unsigned int length)
{
	char value[96];
	unsigned int i;
	struct fake_gpu *m;
	nvmlReturn_t rc;

	if (refs() && is_mig(device)) {
		rc = mig_of(device, "uuid", &m);
		if (rc)
			return rc;
		snprintf(value, sizeof(value),
			 "MIG-5b1c3f7a-92d4-4e1b-8c6a-%012llx",
			 0x3f0e2d1c0000ull + m->index * 16 + m->slot);
		return copy_string(uuid, length, value);
	}
	rc = gpu_of(device, "uuid", &i);
	if (rc)
		return rc;
	snprintf(value, sizeof(value), "GPU-5b1c3f7a-92d4-4e1b-8c6a-%012llx",
		 0x3f0e2d1c0000ull + i);
	return copy_string(uuid, length, value);
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
				      unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name,
			       unsigned int length)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "name", &i);

	if (rc)
		return rc;
	return copy_string(name, length, "NVIDIA H100 80GB HBM3");
}

EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial,
					unsigned int length);
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial,
				 unsigned int length)
{
	char value[32];
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "serial", &i);

	if (rc)
		return rc;
	snprintf(value, sizeof(value), "%llu", 1654922001000ull + i);
	return copy_string(serial, length, value);
}

EXPORT nvmlReturn_t PCI_INFO(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t PCI_INFO(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "pci", &i);

	if (rc)
		return rc;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	pci->domain = 0;
	pci->bus = 0x3b + i;
	pci->device = 0;
	pci->pciDeviceId = 0x233010de;
	pci->pciSubSystemId = 0x16c110de;
#ifdef FAKE_NVML_LEGACY
	snprintf(pci->busId, sizeof(pci->busId), "0000:%02X:00.0", pci->bus);
#else
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0",
		 pci->bus);
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0",
		 pci->bus);
#endif
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
					    nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	unsigned int i;
	struct fake_gpu *m;
	nvmlReturn_t rc;

	if (refs() && is_mig(device)) {
		rc = mig_of(device, "memory", &m);
		if (rc)
			return rc;
		if (!memory)
			return NVML_ERROR_INVALID_ARGUMENT;
		memory->total = m->gb * 1000ull * 1024 * 1024;
		memory->used = 0;
		memory->free = memory->total;
		return NVML_SUCCESS;
	}
	rc = gpu_of(device, "memory", &i);
	if (rc)
		return rc;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* 81559 MiB, as an H100 80GB HBM3 reports, and a little more: it
	 * must not round up. */
	memory->total = 81559ull * 1024 * 1024 + 1048575ull;
	memory->used = 527ull * 1024 * 1024;
	memory->free = memory->total - memory->used;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device,
					     unsigned int *minorNumber);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device,
				      unsigned int *minorNumber)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "minor", &i);

	if (rc)
		return rc;
	if (!minorNumber)
		return NVML_ERROR_INVALID_ARGUMENT;
	*minorNumber = i;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version,
					       unsigned int length);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	nvmlReturn_t rc;

	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	rc = failure_for("driver", 0);
	if (rc)
		return rc;
	return copy_string(version, length, "550.54.15");
}

#ifndef FAKE_NVML_LEGACY
/* MIG */

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
					 unsigned int *currentMode,
					 unsigned int *pendingMode);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
				  unsigned int *currentMode,
				  unsigned int *pendingMode)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "mig", &i);

	if (rc)
		return rc;
	if (!currentMode || !pendingMode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*currentMode = *pendingMode = fake.n_migs[i] > 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device,
						   unsigned int *count);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device,
					    unsigned int *count)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "mig", &i);

	if (rc)
		return rc;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = MAX_MIG;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(
	nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device,
						 unsigned int index,
						 nvmlDevice_t *migDevice)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "mig", &i);

	if (rc)
		return rc;
	if (!migDevice || index >= MAX_MIG)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (index >= fake.n_migs[i])
		return NVML_ERROR_NOT_FOUND;
	*migDevice = &fake.migs[i][index];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
					       unsigned int *id);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
	struct fake_gpu *m;
	nvmlReturn_t rc = mig_of(device, "mig", &m);

	if (rc)
		return rc;
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = m->slot + 1;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device,
						   unsigned int *id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device,
					    unsigned int *id)
{
	struct fake_gpu *m;
	nvmlReturn_t rc = mig_of(device, "mig", &m);

	if (rc)
		return rc;
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device,
					       nvmlDeviceAttributes_t *a);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device,
					nvmlDeviceAttributes_t *a)
{
	struct fake_gpu *m;
	nvmlReturn_t rc = mig_of(device, "attributes", &m);

	if (rc)
		return rc;
	if (!a)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(a, 0, sizeof(*a));
	a->multiprocessorCount = 16 * m->c;
	a->sharedCopyEngineCount = m->g;
	a->sharedDecoderCount = m->g;
	a->sharedJpegCount = m->g;
	a->gpuInstanceSliceCount = m->g;
	a->computeInstanceSliceCount = m->c;
	a->memorySizeMB = m->gb * 1000ull;
	return NVML_SUCCESS;
}

typedef struct {
	nvmlDevice_t device;
	unsigned int id, profileId, start, size;
} nvmlGpuInstanceInfo_t;
typedef struct fake_gpu *nvmlGpuInstance_t;

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device,
						 unsigned int id,
						 nvmlGpuInstance_t *gi);
nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
					  nvmlGpuInstance_t *gi)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "placement", &i);

	if (rc)
		return rc;
	if (!gi || id == 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (id > fake.n_migs[i])
		return NVML_ERROR_NOT_FOUND;
	*gi = &fake.migs[i][id - 1];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi,
					   nvmlGpuInstanceInfo_t *info);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi,
				    nvmlGpuInstanceInfo_t *info)
{
	struct fake_gpu *m;
	unsigned int k;
	nvmlReturn_t rc = mig_of(gi, "placement", &m);

	if (rc)
		return rc;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(info, 0, sizeof(*info));
	info->device = &fake.gpus[m->index];
	info->id = m->slot + 1;
	for (k = 0; k < m->slot; k++)
		info->start += fake.migs[m->index][k].g;
	info->size = m->g;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
					      unsigned int *arch);
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, unsigned int *arch)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "arch", &i);

	if (rc)
		return rc;
	if (!arch)
		return NVML_ERROR_INVALID_ARGUMENT;
	*arch = 9; /* NVML_DEVICE_ARCH_HOPPER */
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device,
				       unsigned int *brand);
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, unsigned int *brand)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "brand", &i);

	if (rc)
		return rc;
	if (!brand)
		return NVML_ERROR_INVALID_ARGUMENT;
	*brand = 14; /* NVML_BRAND_NVIDIA */
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device,
					      char *version,
					      unsigned int length);
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version,
				       unsigned int length)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "vbios", &i);

	if (rc)
		return rc;
	return copy_string(version, length, "96.00.74.00.01");
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
	nvmlReturn_t rc;

	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	rc = failure_for("cudaver", 0);
	if (rc)
		return rc;
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = 12040;
	return NVML_SUCCESS;
}

/* NVLink */

static nvmlReturn_t link_of(nvmlDevice_t device, unsigned int link,
			    unsigned int *ret_gpu)
{
	nvmlReturn_t rc = gpu_of(device, "nvlink", ret_gpu);

	if (rc)
		return rc;
	if (!fake.nvlink)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= N_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device,
					     unsigned int link,
					     unsigned int *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
				      unsigned int *isActive)
{
	unsigned int i;
	nvmlReturn_t rc = link_of(device, link, &i);

	if (rc)
		return rc;
	if (!isActive)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isActive = fake.links[i][link] != NO_PEER;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device,
							unsigned int link,
							unsigned int *type);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device,
						 unsigned int link,
						 unsigned int *type)
{
	unsigned int i;
	nvmlReturn_t rc = link_of(device, link, &i);

	if (rc)
		return rc;
	if (!type)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (fake.links[i][link] == NO_PEER)
		return NVML_ERROR_NOT_SUPPORTED;
	*type = fake.links[i][link] == SWITCH_PEER ? 2 : 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
							unsigned int link,
							nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
						 unsigned int link,
						 nvmlPciInfo_t *pci)
{
	unsigned int i, peer;
	nvmlReturn_t rc = link_of(device, link, &i);

	if (rc)
		return rc;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	peer = fake.links[i][link];
	if (peer == NO_PEER)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(pci, 0, sizeof(*pci));
	/* A switch's PCI function is none of the GPUs'. */
	pci->bus = peer == SWITCH_PEER ? 0xe0 + link : 0x3b + peer;
	snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0",
		 pci->bus);
	return NVML_SUCCESS;
}

/* Health */

/* The number FAKE_NVML_<name> gives GPU `gpu` ("GPU:N" or "GPU" for 1),
 * or 0; "GPU:WORD" gives 1 when WORD is `word`. */
static unsigned long long env_for_gpu(const char *name, unsigned int gpu,
				      const char *word)
{
	const char *s = getenv(name);
	char *copy, *item, *save = NULL, *colon;
	unsigned long long v = 0;

	if (!s || !*s)
		return 0;
	copy = strdup(s);
	if (!copy)
		abort();
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		colon = strchr(item, ':');
		if (colon)
			*colon++ = '\0';
		if (gpu_number(item, name) != gpu)
			continue;
		if (!colon)
			v = 1;
		else if (word)
			v |= strcmp(colon, word) == 0;
		else
			v = strtoull(colon, NULL, 10);
	}
	free(copy);
	return v;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
						int errorType, int counterType,
						unsigned long long *eccCounts);
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType,
					 int counterType,
					 unsigned long long *eccCounts)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "ecc", &i);

	if (rc)
		return rc;
	if (!eccCounts || errorType < 0 || errorType > 1 || counterType < 0 ||
	    counterType > 1)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Uncorrected volatile only: the rest is not what a test sets. */
	*eccCounts = errorType == 1 && counterType == 0 ?
			     env_for_gpu("FAKE_NVML_ECC", i, NULL) :
			     0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(
	nvmlDevice_t device, unsigned int *isPending);
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
						    unsigned int *isPending)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "retired", &i);

	if (rc)
		return rc;
	if (!isPending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isPending = env_for_gpu("FAKE_NVML_RETIRED", i, NULL) ? 1 : 0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRemappingInfo(nvmlDevice_t device,
					       unsigned int *corrRows,
					       unsigned int *uncRows,
					       unsigned int *isPending,
					       unsigned int *failureOccurred);
nvmlReturn_t nvmlDeviceGetRemappingInfo(nvmlDevice_t device,
					unsigned int *corrRows,
					unsigned int *uncRows,
					unsigned int *isPending,
					unsigned int *failureOccurred)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "remap", &i);

	if (rc)
		return rc;
	if (!corrRows || !uncRows || !isPending || !failureOccurred)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isPending = (unsigned int)env_for_gpu("FAKE_NVML_REMAP", i, "pending");
	*failureOccurred =
		(unsigned int)env_for_gpu("FAKE_NVML_REMAP", i, "failed");
	*corrRows = 0;
	*uncRows = *isPending || *failureOccurred;
	return NVML_SUCCESS;
}

/* Events */

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	*set = calloc(1, sizeof(**set));
	return *set ? NVML_SUCCESS : 999;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	free(set);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
					     unsigned long long eventTypes,
					     nvmlEventSet_t set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
				      unsigned long long eventTypes,
				      nvmlEventSet_t set)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "events", &i);

	if (rc)
		return rc;
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	set->types[i] |= eventTypes;
	return NVML_SUCCESS;
}

/* The next whole line "GPU XID" past the set's offset for a GPU it has
 * Xids registered for; 1 and the event, or 0. */
static int next_event(nvmlEventSet_t set, nvmlEventData_t *data)
{
	char buf[4096], *line, *nl;
	unsigned int gpu;
	unsigned long long xid;
	ssize_t n;
	int fd, found = 0;

	if (!fake.events_path[0])
		return 0;
	fd = open(fake.events_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, set->offset);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (line = buf; !found && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		set->offset += nl + 1 - line;
		if (sscanf(line, "%u %llu", &gpu, &xid) != 2 ||
		    gpu >= fake.n_gpus || !(set->types[gpu] & 8))
			continue;
		memset(data, 0, sizeof(*data));
		data->device = &fake.gpus[gpu];
		data->eventType = 8; /* nvmlEventTypeXidCriticalError */
		data->eventData = xid;
		found = 1;
	}
	return found;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set,
					nvmlEventData_t *data,
					unsigned int timeoutms);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
				 unsigned int timeoutms)
{
	struct timespec pause = { 0, 10 * 1000000L };
	unsigned int waited = 0;

	if (refs() == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!set || !data)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (;;) {
		if (next_event(set, data))
			return NVML_SUCCESS;
		if (waited >= timeoutms)
			return NVML_ERROR_TIMEOUT;
		nanosleep(&pause, NULL);
		waited += 10;
	}
}
#endif

EXPORT unsigned long fake_nvml_init_count(void);
unsigned long fake_nvml_init_count(void)
{
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = fake.inits;
	pthread_mutex_unlock(&lock);
	return n;
}

EXPORT unsigned long fake_nvml_shutdown_count(void);
unsigned long fake_nvml_shutdown_count(void)
{
	unsigned long n;

	pthread_mutex_lock(&lock);
	n = fake.shutdowns;
	pthread_mutex_unlock(&lock);
	return n;
}
