/* SPDX-License-Identifier: MIT */
/*
 * .meta/metrics.prom: the mount's state in Prometheus' text exposition
 * format (version 0.0.4), so that node_exporter's textfile collector reads
 * the mount's .meta directory as it is (it opens only the *.prom files
 * there). Pure: no FUSE, no files, no clock; the daemon passes its counters
 * in.
 *
 * Every family has one "# HELP" and one "# TYPE" line before its samples,
 * all of them together; no sample carries a time stamp (the collector
 * refuses a file that does); the text ends with a newline. Label values
 * escape '\' as \\, '"' as \" and a newline as \n; a byte that is not
 * valid UTF-8 (which Prometheus refuses) becomes U+FFFD. In this order:
 *
 *   extres_device_info{resource,info,index,uuid,pci_bus_id,name} 1
 *       gauge, one per device served: `info` is its directory number in
 *       the mount; index, uuid, pci_bus_id (the property pci.bus_id) and
 *       name are the device's properties of those names, each label only
 *       when the device has the property; then the labels its driver
 *       declares (extres_driver_ops.metric_labels: a vendor exporter's
 *       label names, e.g. DCGM-exporter's gpu, UUID, modelName), each
 *       from the first of its entries that applies to the device
 *   extres_device_healthy{resource,info,index,reason} 1 or 0
 *       gauge, one per device with a `health` property: 1 when it is
 *       "ok" (and no reason), else 0 with the property as `reason`;
 *       index as above. No device has one: no family.
 *   extres_devices{resource}
 *       gauge: the devices served (a pool's: every one it found)
 *   extres_devices_wanted{resource}
 *       gauge: the configured amount; not for a pool, which takes none
 *   extres_holders{resource,kind}
 *       gauge: the lines of the resource's coordination file whose owner
 *       is live, by kind (daemon, lease, extresd, other: views/holders.h),
 *       each kind always there (0 for a resource without a file)
 *   extres_stale_holders{resource}
 *       gauge: its lines whose owner is gone, which the next allocator
 *       reclaims
 *   extres_device_shares{resource,key}
 *       gauge: the live share lines (share=I/N, alloc/share.h) of a device,
 *       by its coordination key; only for devices that have some
 *   extres_leases
 *       gauge: distinct leases (extresctl run) with a live owner
 *   extres_reloads_total, extres_reload_failures_total
 *       counters: reload attempts (SIGHUP, extresctl reload), and those
 *       that failed and kept the running state
 *   extres_last_reload_success_timestamp_seconds
 *       gauge: when the running configuration was loaded (start-up or
 *       the last reload that succeeded), seconds since the epoch
 *   extres_coordination_conflicts
 *       gauge: devices of ours that another live owner holds now
 *
 * resources in configuration order, devices in mount order. Label names
 * are Prometheus' ([a-zA-Z_][a-zA-Z0-9_]*), so the set is fixed here: a
 * property is never turned into a label name.
 */
#ifndef EXTRES_METRICS_VIEW_H
#define EXTRES_METRICS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "views/holders.h"
#include "views/views.h"

/* What the daemon counts; the core never sees the daemon itself. */
struct extres_metrics_counters {
	uint64_t reloads; /* attempts, failed ones included */
	uint64_t reload_failures;
	int64_t last_reload_success; /* seconds since the epoch */
	uint64_t conflicts;
	/* The node's name for driver labels that ask for it (NODE_NAME, else
	 * the host name); NULL or "": such labels are left out. */
	const char *node_name;
};

/*
 * The text for `res` (n of them; NULL when n is 0), pools[i] non-zero for
 * a pool (`pools` may be NULL: none), `holders` (NULL: none) and `c`: 0
 * with *ret_text (malloc'd, NUL-terminated, for free()) and *ret_len
 * (without the NUL), or -ENOMEM with both untouched. Thread-safe: nothing
 * is shared.
 */
int extres_view_metrics(const struct extres_view_resource *res, size_t n,
			const unsigned char *pools,
			const struct extres_holders *holders,
			const struct extres_metrics_counters *c,
			char **ret_text, size_t *ret_len);

#endif
