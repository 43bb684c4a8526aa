/* SPDX-License-Identifier: MIT */
/*
 * The files of .meta, built from the daemon's state at each publish: the
 * views of the allocations (env, resources.json, extres.json, cdi.json,
 * holders, metrics.prom, hpc-jobs/, nfd), the last reload's error and the
 * status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon/extresd.h"
#include "base/text.h"
#include "views/cdi_view.h"
#include "views/hpc_jobs_view.h"
#include "views/metrics_view.h"
#include "views/nfd_view.h"
#include "views/views.h"

/* The conflicts found: one line each. */
static size_t count_conflicts(const struct extresd *d)
{
	const char *p, *nl;
	size_t count = 0;

	for (p = d->conflicts; p && (nl = strchr(p, '\n')); p = nl + 1)
		count++;
	return count;
}

/* The text of .meta/status: `key value` lines, stable for scripts. Written
 * to one stream: rebuilding the text for every conflict line made it
 * quadratic in their number. */
static int status_text(const struct extresd *d, size_t conflicts, char **ret,
		       size_t *ret_len)
{
	const char *p, *nl;
	size_t count, len = 0, i, j;
	char transport[512];
	char *text = NULL;
	int r = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f,
		"pid %d\n"
		"config %s\n"
		"generation %lu\n"
		"reloads %lu\n"
		"last-reload %s\n",
		(int)getpid(), d->config->path, d->generation, d->reloads,
		d->last_reload);
	d->front->transport(d->front->ctx, transport, sizeof(transport));
	fprintf(f, "transport %s\n", transport);
	/* One "conflict ..." line each, after the count. */
	fprintf(f, "conflicts %zu\n", conflicts);
	for (p = d->conflicts; p && (nl = strchr(p, '\n')); p = nl + 1)
		fprintf(f, "conflict %.*s\n", (int)(nl - p), p);
	/* Devices held while their driver says they are sick: kept (the
	 * workload on them decides), and said here, after the count. */
	count = 0;
	for (i = 0; i < d->allocs->n; i++)
		for (j = 0; j < d->allocs->items[i]->n; j++)
			count += !extres_info_healthy(
				&d->allocs->items[i]->infos[j]);
	fprintf(f, "unhealthy %zu\n", count);
	for (i = 0; count && i < d->allocs->n; i++)
		for (j = 0; j < d->allocs->items[i]->n; j++)
			if (!extres_info_healthy(
				    &d->allocs->items[i]->infos[j]))
				fprintf(f, "unhealthy-device %s %zu %s\n",
					d->allocs->items[i]->resource, j,
					extres_info_get(
						&d->allocs->items[i]->infos[j],
						EXTRES_HEALTH_KEY));
	/* The command that makes the vendor's spec the CDI spec lacks. */
	for (i = 0; i < d->cdi_bases.n && i < d->allocs->n; i++)
		if (d->cdi_bases.missing[i])
			fprintf(f, "cdi-base-missing %s %s\n",
				d->allocs->items[i]->resource,
				d->allocs->items[i]->driver.cdi_base_hint ?
					d->allocs->items[i]
						->driver.cdi_base_hint :
					"-");
	r = extres_memstream_close(f, &text);
	if (r < 0)
		return r;
	*ret = text;
	*ret_len = len;
	return 0;
}

/* .meta's files: the views of the allocations, the last reload's error,
 * which may quote script output and config values that only root may read
 * (so may only root read it), and the status. The status comes last: a
 * swap invalidates in build order, so a reader who sees a new status
 * (tools poll it) finds every other file new as well. */
enum {
	META_ENV,
	META_SPARK,
	META_JSON,
	META_CDI,
	META_HOLDERS,
	META_METRICS,
	META_ERROR,
	META_HPC_JOBS, /* the directory; its files follow it */
	META_NFD,
	META_STATUS,
	N_META
};

/* A character device itself: lstat, so that a link under /dev/ made to
 * point at something else never counts. */
static int node_exists(const char *path, void *arg)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* The node's name as DCGM-exporter and Kubernetes tools give it: the
 * NODE_NAME a DaemonSet sets from spec.nodeName, else the host name. */
static const char *node_name(struct utsname *u)
{
	const char *env = getenv("NODE_NAME");

	if (env && env[0])
		return env;
	return uname(u) == 0 ? u->nodename : NULL;
}

/* .meta/hpc-jobs/'s files: every holder with its device and driver. */
static int hpc_jobs(const struct extresd *d, struct extres_hpc_file **ret,
		    size_t *ret_n)
{
	const struct extres_holders *h = &d->holders;
	struct extres_hpc_holder *items;
	size_t i, k;
	int r;

	items = calloc(h->n ? h->n : 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (i = 0; i < h->n; i++) {
		items[i].holder = &h->items[i];
		for (k = 0; k < d->allocs->n; k++)
			if (strcmp(d->allocs->items[k]->resource,
				   h->items[i].resource) == 0)
				break;
		if (k == d->allocs->n)
			continue;
		items[i].info = extresd_holder_info(d, k, &h->items[i]);
		items[i].driver = &d->allocs->items[k]->driver;
	}
	r = extres_view_hpc_jobs(items, h->n, ret, ret_n);
	free(items);
	return r;
}

/* The files in order: the fixed ones, with hpc-jobs/'s after its
 * directory. */
static int assemble(char *text[N_META], const size_t len[N_META],
		    struct extres_hpc_file *jobs, size_t n_jobs,
		    struct extresd_meta *m)
{
	static const char *const names[N_META] = {
		"env",	   "resources.json", "extres.json", "cdi.json",
		"holders", "metrics.prom",   "error",	    "hpc-jobs/",
		"nfd",	   "status",
	};
	static const mode_t perms[N_META] = { [META_ERROR] = 0400 };
	size_t n = N_META + n_jobs, i, k = 0;

	m->files = calloc(n, sizeof(*m->files));
	m->text = calloc(n, sizeof(*m->text));
	if (!m->files || !m->text)
		return -ENOMEM;
	for (i = 0; i < N_META; i++) {
		m->files[k] = (struct extres_snapshot_file){ names[i], text[i],
							     len[i], perms[i] };
		m->text[k++] = text[i];
		m->n = k;
		text[i] = NULL;
		if (i != META_HPC_JOBS)
			continue;
		for (; n_jobs; n_jobs--, jobs++) {
			/* The file's path in .meta, before its content, so
			 * both are freed as one text. */
			size_t name_len =
				strlen(names[i]) + strlen(jobs->name) + 1;
			char *p = malloc(name_len + jobs->len + 1);

			if (!p)
				return -ENOMEM;
			snprintf(p, name_len, "%s%s", names[i], jobs->name);
			memcpy(p + name_len, jobs->text, jobs->len + 1);
			m->files[k] =
				(struct extres_snapshot_file){ p, p + name_len,
							       jobs->len, 0 };
			m->text[k++] = p;
			m->n = k;
		}
	}
	return 0;
}

void extresd_meta_free(struct extresd_meta *m)
{
	size_t i;

	for (i = 0; m->text && i < m->n; i++)
		free(m->text[i]);
	free(m->text);
	free(m->files);
	memset(m, 0, sizeof(*m));
}

int extresd_meta_files(const struct extresd *d, struct extresd_meta *ret)
{
	char *text[N_META] = { NULL };
	struct extres_hpc_file *jobs = NULL;
	size_t n_jobs = 0;
	struct utsname uts;
	const struct extres_metrics_counters counters = {
		.node_name = node_name(&uts),
		.reloads = d->reloads,
		.reload_failures = d->reload_failures,
		.last_reload_success = d->loaded_at,
		.conflicts = count_conflicts(d),
	};
	struct extres_view_resource *views, *own;
	size_t len[N_META] = { 0 }, i, n_own = 0;
	struct extres_cdi_resource *cdi;
	unsigned char *pools;
	int r = -ENOMEM;

	views = calloc(d->allocs->n ? d->allocs->n * 2 : 1, sizeof(*views));
	pools = calloc(d->allocs->n ? d->allocs->n : 1, 1);
	cdi = calloc(d->allocs->n ? d->allocs->n : 1, sizeof(*cdi));
	if (!views || !pools || !cdi)
		goto out;
	own = views + d->allocs->n;
	for (i = 0; i < d->allocs->n; i++) {
		const struct extres_resource_config *rc =
			&d->config->resources[i];

		views[i].name = d->allocs->items[i]->resource;
		views[i].driver = rc->driver;
		views[i].env_var = rc->env_var;
		views[i].driver_info = &d->allocs->items[i]->driver;
		/* A range or `all` took what was free: say how many. */
		views[i].amount = d->allocs->items[i]->n;
		views[i].configured = rc->amount;
		pools[i] = (unsigned char)rc->pool;
		views[i].infos = d->allocs->items[i]->infos;
		views[i].n_infos = d->allocs->items[i]->n;
		/* A pool's devices are the node's, not this mount's: no
		 * program should take them all from .meta/env. */
		if (rc->pool)
			continue;
		own[n_own] = views[i];
		cdi[n_own] = (struct extres_cdi_resource){
			.view = &own[n_own],
			.kind = rc->cdi_kind,
			.key = rc->coordination_key,
			.base = i < d->cdi_bases.n ? d->cdi_bases.base[i] :
						     NULL,
			.config = rc,
		};
		n_own++;
	}
	r = status_text(d, counters.conflicts, &text[META_STATUS],
			&len[META_STATUS]);
	if (r == 0)
		r = extres_view_env(own, n_own, &text[META_ENV],
				    &len[META_ENV]);
	if (r == 0)
		r = extres_view_spark(own, n_own, &text[META_SPARK],
				      &len[META_SPARK]);
	if (r == 0)
		r = extres_view_json_holders(views, d->allocs->n, pools,
					     &d->holders, &text[META_JSON],
					     &len[META_JSON]);
	if (r == 0)
		r = extres_view_metrics(views, d->allocs->n, pools, &d->holders,
					&counters, &text[META_METRICS],
					&len[META_METRICS]);
	/* Like .meta/env, only what this mount took: a pool's devices are
	 * leased one by one, not handed to any container that asks. */
	if (r == 0)
		r = extres_view_cdi(cdi, n_own, node_exists, NULL,
				    &text[META_CDI], &len[META_CDI]);
	if (r == 0 && d->holders_text) {
		text[META_HOLDERS] = malloc(d->holders_len + 1);
		if (text[META_HOLDERS]) {
			memcpy(text[META_HOLDERS], d->holders_text,
			       d->holders_len + 1);
			len[META_HOLDERS] = d->holders_len;
		} else {
			r = -ENOMEM;
		}
	}
	if (r == 0 && d->last_error[0] &&
	    asprintf(&text[META_ERROR], "%s\n", d->last_error) < 0) {
		text[META_ERROR] = NULL;
		r = -ENOMEM;
	}
	if (text[META_ERROR])
		len[META_ERROR] = strlen(text[META_ERROR]);
	/* Every resource the node has, pools too: labels describe the
	 * node. */
	if (r == 0)
		r = extres_view_nfd(views, d->allocs->n, (time_t)d->nfd_expires,
				    &text[META_NFD], &len[META_NFD]);
	if (r == 0)
		r = hpc_jobs(d, &jobs, &n_jobs);
	if (r == 0)
		r = assemble(text, len, jobs, n_jobs, ret);
out:
	extres_hpc_files_free(jobs, n_jobs);
	for (i = 0; i < N_META; i++)
		free(text[i]);
	free(views);
	free(pools);
	free(cdi);
	return r;
}
