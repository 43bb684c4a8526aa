/* SPDX-License-Identifier: MIT */
/*
 * Candidate infos as a driver reports them: an ordered list of infos, each an
 * ordered list of property key -> value strings. Plain data, owned by the
 * list; the driver sink fills it, allocation picks from it, the tree is built
 * from what was picked.
 */
#ifndef EXTRES_INFOS_H
#define EXTRES_INFOS_H

#include <stddef.h>

#include "base/err.h"
#include "config/name.h"
#include "host/driver_info.h"

/* Limits a driver's output must respect (documented in extres-driver(3)). */
#define EXTRES_MAX_INFOS 4096
#define EXTRES_MAX_PROPERTIES 256
#define EXTRES_MAX_KEY_LEN EXTRES_MAX_NAME_LEN
#define EXTRES_MAX_VALUE_LEN 65536
/*
 * What the ones above allow multiplies out to gigabytes; these bound the
 * sum, in one discovery and in the whole tree (every resource's allocated
 * infos together), so that the daemon's memory stays bounded whatever a
 * driver reports. Entries are infos and properties (each a directory or a
 * file in the mount): 4096 devices of 63 properties, about six times the
 * 4096 x 10 a large node needs. Bytes are property names and values.
 */
#define EXTRES_MAX_ENTRIES 262144
#define EXTRES_MAX_BYTES (16u << 20)

struct extres_infos_size {
	size_t entries;
	size_t bytes;
};

struct extres_property {
	char *key;
	char *value;
	size_t value_len;
};

struct extres_info {
	size_t n_props;
	struct extres_property *props;
};

struct extres_infos {
	size_t n;
	size_t cap;
	struct extres_info *items;
	/* What the infos and their properties add up to. */
	struct extres_infos_size size;
	/* What the driver that listed them says about itself; freed with
	 * the list. */
	struct extres_driver_info driver;
};

/* An empty list; free with extres_infos_free(). Returns 0 or -ENOMEM. */
int extres_infos_new(struct extres_infos **ret);
/* Accepts NULL. */
void extres_infos_free(struct extres_infos *infos);

/* Start a new, empty info at the end. 0, -ENOMEM, or -E2BIG past
 * EXTRES_MAX_INFOS or EXTRES_MAX_ENTRIES (with a message in err). */
int extres_infos_begin(struct extres_infos *infos, struct extres_err *err);

/*
 * Add key=value to the last info (there must be one: -EINVAL otherwise).
 * Rejects, with a message naming key and value: an empty key, a key with '/',
 * a key starting with '.', a duplicate key in the same info, keys or values
 * past the limits, a list past EXTRES_MAX_ENTRIES or EXTRES_MAX_BYTES
 * (-E2BIG). Copies both strings.
 */
int extres_infos_add(struct extres_infos *infos, const char *key,
		     const char *value, struct extres_err *err);

/*
 * Add `n` infos (each an entry, each property an entry and its name's and
 * value's bytes) to *size: 0, or -E2BIG with a message that gives the sum
 * and the limit it passes (*size then holds the sum).
 */
int extres_infos_size_add(struct extres_infos_size *size,
			  const struct extres_info *infos, size_t n,
			  struct extres_err *err);

/* Value of `key` in `info`, or NULL. */
const char *extres_info_get(const struct extres_info *info, const char *key);

/* The property by which a driver says whether a device may be given out
 * (<extres/driver.h>): "ok", or a short reason it may not. */
#define EXTRES_HEALTH_KEY "health"
#define EXTRES_HEALTH_OK "ok"

/* 1 unless `info` has a `health` property other than "ok": a device its
 * driver reports unhealthy is not newly taken (an allocation, a lease, a
 * pool's listing keep one they hold). */
int extres_info_healthy(const struct extres_info *info);

/* The property that names a device for good, whatever its index (a GPU's
 * or a GPU instance's UUID, as its driver reports it): written into the
 * device's coordination-file line, so that a reader can tell when the
 * index has come to name another device. */
#define EXTRES_UUID_KEY "uuid"

/* info's uuid when it is a word (non-empty, no whitespace), else NULL. */
const char *extres_info_uuid(const struct extres_info *info);

/* Deep copy of one info into *ret (which the caller frees with
 * extres_info_clear()). 0 or -ENOMEM. */
int extres_info_copy(const struct extres_info *src, struct extres_info *ret);
void extres_info_clear(struct extres_info *info);

#endif
