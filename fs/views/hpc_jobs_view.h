/* SPDX-License-Identifier: MIT */
/*
 * .meta/hpc-jobs/: who runs on each GPU, in the form DCGM-exporter's
 * --hpc-job-mapping-dir reads, so that pointing it at the directory labels
 * every metric of a GPU with the jobs (leases, holders) on it.
 *
 * The exporter lists the directory, keeps the files whose name is a
 * decimal number, matches that name to a metric's `gpu` label, and gives
 * each line of the file as an `hpc_job` label. So there is one file per
 * GPU that some live holder holds (a GPU nobody holds has none), named by
 * the value its driver gives the label `gpu` (extres_driver_ops.
 * metric_labels: a GPU's index, and a GPU instance's its parent GPU's,
 * as DCGM-exporter labels instance metrics), with one line
 * per distinct job on it or its instances, in coordination-file order:
 *
 *   a lease's id ("PID-STARTTIME") for a lease; else KIND-PID, e.g.
 *   "daemon-4711" or "other-815" (views/holders.h's kinds)
 *
 * A holder whose device is unknown, or whose driver gives no such number,
 * names no file; stale holders (their owner gone) are no job. Pure.
 */
#ifndef EXTRES_HPC_JOBS_VIEW_H
#define EXTRES_HPC_JOBS_VIEW_H

#include <stddef.h>

#include "host/driver_info.h"
#include "views/holders.h"
#include "host/infos.h"

/* The name of the label a GPU's file is named by. */
#define EXTRES_HPC_JOBS_LABEL "gpu"

/* A holder and what is known of its device. */
struct extres_hpc_holder {
	const struct extres_holder *holder;
	const struct extres_info *info; /* NULL: unknown */
	const struct extres_driver_info *driver; /* NULL: unknown */
};

/* One file: `name` (the GPU's number) and its lines. */
struct extres_hpc_file {
	char name[16];
	char *text; /* malloc'd, NUL-ended */
	size_t len;
};

/*
 * The files for `n` holders, in ascending numeric order of their names.
 * 0 with *ret (malloc'd, for extres_hpc_files_free(); NULL when none) and
 * *ret_n, or -ENOMEM with both untouched.
 */
int extres_view_hpc_jobs(const struct extres_hpc_holder *h, size_t n,
			 struct extres_hpc_file **ret, size_t *ret_n);

/* Free what extres_view_hpc_jobs() returned. Accepts NULL. */
void extres_hpc_files_free(struct extres_hpc_file *files, size_t n);

#endif
