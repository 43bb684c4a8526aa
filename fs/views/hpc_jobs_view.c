/* SPDX-License-Identifier: MIT */
#include "views/hpc_jobs_view.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/lease_line.h"
#include "base/text.h"

/* One job on one GPU, before grouping. */
struct entry {
	long gpu;
	size_t order; /* the holder's position: keeps the file's order */
	char job[64];
};

/* The GPU number the driver's first applicable `gpu` label gives `info`,
 * or -1: DCGM-exporter keeps only names strconv.Atoi takes, and a name
 * with a sign or leading zeros would never equal its label. */
static long gpu_number(const struct extres_driver_info *d,
		       const struct extres_info *info)
{
	const char *v;
	size_t k, len;

	for (k = 0; d && info && k < d->n_labels; k++) {
		if (strcmp(d->labels[k].label, EXTRES_HPC_JOBS_LABEL) != 0 ||
		    !d->labels[k].property)
			continue;
		v = extres_info_get(info, d->labels[k].property);
		if (!v)
			continue;
		/* A prefix makes a name no number: nothing to match. */
		if (d->labels[k].prefix[0])
			return -1;
		len = strspn(v, "0123456789");
		if (len == 0 || len > 9 || v[len] || (v[0] == '0' && len > 1))
			return -1;
		return strtol(v, NULL, 10);
	}
	return -1;
}

static int by_gpu(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The lines of the run of `n` entries of one GPU, each job once. */
static int file_text(const struct entry *e, size_t n, struct extres_hpc_file *f)
{
	size_t i, k, len = 0;
	char *text = NULL;
	FILE *out;
	int r;

	out = open_memstream(&text, &len);
	if (!out)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		for (k = 0; k < i && strcmp(e[k].job, e[i].job) != 0; k++)
			;
		if (k == i)
			fprintf(out, "%s\n", e[i].job);
	}
	r = extres_memstream_close(out, &text);
	if (r < 0)
		return r;
	snprintf(f->name, sizeof(f->name), "%ld", e[0].gpu);
	f->text = text;
	f->len = len;
	return 0;
}

int extres_view_hpc_jobs(const struct extres_hpc_holder *h, size_t n,
			 struct extres_hpc_file **ret, size_t *ret_n)
{
	struct extres_hpc_file *files = NULL;
	size_t i, j, m = 0, n_files = 0;
	struct entry *e;
	int r = 0;

	e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct extres_holder *x = h[i].holder;
		uint64_t starttime;
		pid_t pid;
		long gpu = gpu_number(h[i].driver, h[i].info);

		if (gpu < 0 || x->state != EXTRES_OWNER_LIVE)
			continue;
		e[m].gpu = gpu;
		e[m].order = i;
		/* Only an id of the lease form: a line is one job. */
		if (x->kind == EXTRES_HOLDER_LEASE && x->lease &&
		    extres_lease_id_parse(x->lease, &pid, &starttime) == 0)
			snprintf(e[m].job, sizeof(e[m].job), "%s", x->lease);
		else
			snprintf(e[m].job, sizeof(e[m].job), "%s-%d",
				 extres_holder_kind_name(x->kind), (int)x->pid);
		m++;
	}
	qsort(e, m, sizeof(*e), by_gpu);
	for (i = 0; i < m; i++)
		n_files += i == 0 || e[i].gpu != e[i - 1].gpu;
	if (n_files) {
		files = calloc(n_files, sizeof(*files));
		if (!files) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (i = 0, n_files = 0; r == 0 && i < m; i = j, n_files++) {
		for (j = i + 1; j < m && e[j].gpu == e[i].gpu; j++)
			;
		r = file_text(&e[i], j - i, &files[n_files]);
	}
	if (r < 0) {
		extres_hpc_files_free(files, n_files);
		goto out;
	}
	*ret = files;
	*ret_n = n_files;
out:
	free(e);
	return r;
}

void extres_hpc_files_free(struct extres_hpc_file *files, size_t n)
{
	size_t i;

	for (i = 0; files && i < n; i++)
		free(files[i].text);
	free(files);
}
