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
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_TIMEOUT 10
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

/* nvmlEnableState_t */
#define NVML_FEATURE_ENABLED 1

/* nvmlDeviceGetMigMode's currentMode when the GPU is in MIG mode. */
#define NVML_DEVICE_MIG_ENABLE 1

/* Links nvmlDeviceGetNvLinkState may be asked about: 0 to this, less one
 * (nvml.h of CUDA 12; a GPU with fewer answers INVALID_ARGUMENT past its
 * last). */
#define NVML_NVLINK_MAX_LINKS 18

/* nvmlIntNvLinkDeviceType_t, what is at the other end of a link. */
#define NVML_NVLINK_DEVICE_TYPE_GPU 0x00
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 0x02

/* nvmlMemoryErrorType_t and nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0

/* nvmlEventType bits */
#define NVML_EVENT_TYPE_XID_CRITICAL_ERROR 0x0000000000000008ull

typedef struct nvml_event_set *nvml_event_set; /* nvmlEventSet_t, opaque */

/* nvmlEventData_t as nvmlEventSetWait_v2 fills it. */
struct nvml_event_data {
	nvml_device device;
	unsigned long long event_type;
	unsigned long long event_data; /* the Xid, for an Xid event */
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
};
_Static_assert(offsetof(struct nvml_event_data, event_data) == 16,
	       "nvmlEventData_t.eventData");
_Static_assert(sizeof(struct nvml_event_data) == 32, "sizeof(nvmlEventData_t)");

/* nvmlDeviceAttributes_t: what a MIG device is made of. */
struct nvml_device_attributes {
	unsigned int multiprocessor_count;
	unsigned int shared_copy_engine_count;
	unsigned int shared_decoder_count;
	unsigned int shared_encoder_count;
	unsigned int shared_jpeg_count;
	unsigned int shared_ofa_count;
	unsigned int gpu_instance_slice_count;
	unsigned int compute_instance_slice_count;
	unsigned long long memory_size_mb;
};
_Static_assert(offsetof(struct nvml_device_attributes,
			gpu_instance_slice_count) == 24,
	       "nvmlDeviceAttributes_t.gpuInstanceSliceCount");
_Static_assert(offsetof(struct nvml_device_attributes, memory_size_mb) == 32,
	       "nvmlDeviceAttributes_t.memorySizeMB");
_Static_assert(sizeof(struct nvml_device_attributes) == 40,
	       "sizeof(nvmlDeviceAttributes_t)");

/* nvmlDeviceArchitecture_t */
#define NVML_DEVICE_ARCH_KEPLER 2
#define NVML_DEVICE_ARCH_BLACKWELL 10

/* nvmlBrandType_t runs from NVML_BRAND_UNKNOWN (0) to this. */
#define NVML_BRAND_TITAN_RTX 16

typedef struct nvml_gpu_instance *nvml_gpu_instance; /* opaque */

/* nvmlGpuInstanceInfo_t: where a GPU instance sits, in memory slices. */
struct nvml_gpu_instance_info {
	nvml_device device;
	unsigned int id;
	unsigned int profile_id;
	unsigned int placement_start;
	unsigned int placement_size;
};
_Static_assert(offsetof(struct nvml_gpu_instance_info, placement_start) == 16,
	       "nvmlGpuInstanceInfo_t.placement");
_Static_assert(sizeof(struct nvml_gpu_instance_info) == 24,
	       "sizeof(nvmlGpuInstanceInfo_t)");

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
typedef nvml_return (*nvml_mig_mode_fn)(nvml_device, unsigned int *,
					unsigned int *);
typedef nvml_return (*nvml_mig_handle_fn)(nvml_device, unsigned int,
					  nvml_device *);
typedef nvml_return (*nvml_attributes_fn)(nvml_device,
					  struct nvml_device_attributes *);
typedef nvml_return (*nvml_link_uint_fn)(nvml_device, unsigned int,
					 unsigned int *);
typedef nvml_return (*nvml_link_pci_fn)(nvml_device, unsigned int,
					struct nvml_pci_info *);
typedef nvml_return (*nvml_ecc_fn)(nvml_device, int, int, unsigned long long *);
typedef nvml_return (*nvml_remap_fn)(nvml_device, unsigned int *,
				     unsigned int *, unsigned int *,
				     unsigned int *);
typedef nvml_return (*nvml_int_fn)(int *);
typedef nvml_return (*nvml_gi_by_id_fn)(nvml_device, unsigned int,
					nvml_gpu_instance *);
typedef nvml_return (*nvml_gi_info_fn)(nvml_gpu_instance,
				       struct nvml_gpu_instance_info *);
typedef nvml_return (*nvml_event_set_create_fn)(nvml_event_set *);
typedef nvml_return (*nvml_event_set_free_fn)(nvml_event_set);
typedef nvml_return (*nvml_register_events_fn)(nvml_device, unsigned long long,
					       nvml_event_set);
typedef nvml_return (*nvml_event_wait_fn)(nvml_event_set,
					  struct nvml_event_data *,
					  unsigned int);

#endif
