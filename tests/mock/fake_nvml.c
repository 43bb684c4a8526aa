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
 *
 * Like NVML, init and shutdown are counted: the library is ready from the
 * first successful init until the matching shutdown, and every device call
 * before that answers NVML_ERROR_UNINITIALIZED. fake_nvml_init_count() and
 * fake_nvml_shutdown_count() tell an in-process test how many succeeded.
 *
 * The state is global on purpose: it stands in for a process-wide library.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9

#define MAX_GPUS 16
#define MAX_FAILURES 16

struct fake_gpu {
	unsigned int index;
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

static struct {
	unsigned int refs;
	unsigned long inits, shutdowns;
	unsigned int n_gpus;
	nvmlReturn_t fail_count;
	size_t n_failures;
	struct failure failures[MAX_FAILURES];
	struct fake_gpu gpus[MAX_GPUS];
} fake;

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
	const char *path = getenv("FAKE_NVML_LOG");
	char line[16];
	int fd, n;

	if (!path || !*path)
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
	if (fake.refs == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!dev || dev < fake.gpus || dev >= fake.gpus + fake.n_gpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*ret = dev->index;
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

EXPORT nvmlReturn_t V2(nvmlInit)(void);
nvmlReturn_t V2(nvmlInit)(void)
{
	unsigned int i;

	if (fake.refs == 0) {
		if (env_number("FAKE_NVML_FAIL_INIT", 0))
			return NVML_ERROR_DRIVER_NOT_LOADED;
		fake.n_gpus = (unsigned int)env_number("FAKE_NVML_GPUS", 3);
		if (fake.n_gpus > MAX_GPUS)
			fake.n_gpus = MAX_GPUS;
		fake.fail_count =
			(nvmlReturn_t)env_number("FAKE_NVML_FAIL_COUNT", 0);
		parse_failures();
		for (i = 0; i < MAX_GPUS; i++)
			fake.gpus[i].index = i;
	}
	fake.refs++;
	fake.inits++;
	log_call("init");
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlShutdown(void)
{
	if (fake.refs == 0)
		return NVML_ERROR_UNINITIALIZED;
	fake.refs--;
	fake.shutdowns++;
	log_call("shutdown");
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t V2(nvmlDeviceGetCount)(unsigned int *count);
nvmlReturn_t V2(nvmlDeviceGetCount)(unsigned int *count)
{
	if (fake.refs == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (fake.fail_count)
		return fake.fail_count;
	*count = fake.n_gpus;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t V2(nvmlDeviceGetHandleByIndex)(unsigned int index,
						   nvmlDevice_t *device);
nvmlReturn_t V2(nvmlDeviceGetHandleByIndex)(unsigned int index,
					    nvmlDevice_t *device)
{
	nvmlReturn_t rc;

	if (fake.refs == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= fake.n_gpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = failure_for("handle", index);
	if (rc)
		return rc;
	*device = &fake.gpus[index];
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device,
				       unsigned int *index);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	unsigned int i;
	nvmlReturn_t rc = gpu_of(device, "index", &i);

	if (rc)
		return rc;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	*index = i;
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
	nvmlReturn_t rc = gpu_of(device, "uuid", &i);

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
	nvmlReturn_t rc = gpu_of(device, "memory", &i);

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

	if (fake.refs == 0)
		return NVML_ERROR_UNINITIALIZED;
	rc = failure_for("driver", 0);
	if (rc)
		return rc;
	return copy_string(version, length, "550.54.15");
}

EXPORT unsigned long fake_nvml_init_count(void);
unsigned long fake_nvml_init_count(void)
{
	return fake.inits;
}

EXPORT unsigned long fake_nvml_shutdown_count(void);
unsigned long fake_nvml_shutdown_count(void)
{
	return fake.shutdowns;
}
