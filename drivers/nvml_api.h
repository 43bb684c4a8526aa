/* SPDX-License-Identifier: MIT */
/*
 * The few NVML types and entry points the nvml driver uses, declared from
 * NVML's nvml.h: extres has no build-time dependency on NVIDIA headers.
 */
#ifndef EXTRES_NVML_API_H
#define EXTRES_NVML_API_H

#include <stddef.h>

/* From nvml.h. */
typedef int nvml_return; /* nvmlReturn_t */
typedef struct nvml_device *nvml_device; /* nvmlDevice_t, opaque */

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15

/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it. The older calls fill a
 * shorter struct with domain, bus and device at the same offsets, which are
 * all that is read here. */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pci_device_id;
	unsigned int pci_subsystem_id;
	char bus_id[32];
};
_Static_assert(offsetof(struct nvml_pci_info, domain) == 16,
	       "nvmlPciInfo_t.domain");
_Static_assert(offsetof(struct nvml_pci_info, device) == 24,
	       "nvmlPciInfo_t.device");
_Static_assert(sizeof(struct nvml_pci_info) == 68, "sizeof(nvmlPciInfo_t)");

/* nvmlMemory_t, in bytes. */
struct nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/* Big enough for every string call used: NVML asks for at most 96 bytes
 * (NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE). */
#define NVML_STRING_MAX 256

typedef nvml_return (*nvml_void_fn)(void);
typedef const char *(*nvml_error_string_fn)(nvml_return);
typedef nvml_return (*nvml_count_fn)(unsigned int *);
typedef nvml_return (*nvml_handle_fn)(unsigned int, nvml_device *);
typedef nvml_return (*nvml_uint_fn)(nvml_device, unsigned int *);
typedef nvml_return (*nvml_string_fn)(nvml_device, char *, unsigned int);
typedef nvml_return (*nvml_pci_fn)(nvml_device, struct nvml_pci_info *);
typedef nvml_return (*nvml_memory_fn)(nvml_device, struct nvml_memory *);
typedef nvml_return (*nvml_system_string_fn)(char *, unsigned int);
typedef nvml_return (*nvml_cc_fn)(nvml_device, int *, int *);

#endif
