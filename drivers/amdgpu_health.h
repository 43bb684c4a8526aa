/* SPDX-License-Identifier: MIT */
/*
 * `health` of an AMD GPU from the kernel's RAS files (amdgpu_health.c).
 */
#ifndef EXTRES_DRIVERS_AMDGPU_HEALTH_H
#define EXTRES_DRIVERS_AMDGPU_HEALTH_H

#include <stdint.h>

#include <extres/driver.h>

#include "sysfs_util.h"

/*
 * Add `health` to the sink's current info for the GPU whose PCI device
 * directory is `dev`: "ok", or joined by ',': ecc-ue (umc_err_count's "ue:"
 * above 0: uncorrectable memory errors), ue-BLOCK (another block's), then
 * bad-pages-pending and bad-pages-failed (gpu_vram_bad_pages lines flagged
 * P or F). Nothing without <dev>/ras: the board has no RAS. A file that
 * cannot be read counts as clear. `buf` is scratch space. Returns 0, or
 * -ENOMEM, or the sink's error.
 */
int32_t amdgpu_add_health(struct extres_sink *sink, const char *dev,
			  struct sysfs_buf *buf);

#endif
