/* SPDX-License-Identifier: MIT */
/* Shares of a device: which device takes one more, and what its process
 * is told. */
#include "alloc/share.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

int extres_share_count(const struct extres_coord *c, const char *key,
		       unsigned *ret_shares)
{
	unsigned shares = 0;
	int whole = 0;
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (!e->parsed || strcmp(e->key, key) != 0)
			continue;
		if (e->share_n)
			shares++;
		else
			whole = 1;
	}
	*ret_shares = shares;
	return whole;
}

/* The lowest share number of 1..replicas that no line of `key` holds, or
 * 0. Numbers above replicas (taken before a reload lowered it) count in
 * the total only. */
static unsigned lowest_free(const struct extres_coord *c, const char *key,
			    unsigned replicas)
{
	unsigned s;
	size_t i;

	for (s = 1; s <= replicas; s++) {
		for (i = 0; i < c->n; i++)
			if (c->entries[i].parsed &&
			    c->entries[i].share_i == s &&
			    strcmp(c->entries[i].key, key) == 0)
				break;
		if (i == c->n)
			return s;
	}
	return 0;
}

int extres_share_pick(const struct extres_coord *c,
		      const struct extres_infos *candidates, const char *key,
		      unsigned replicas, size_t *ret_j, unsigned *ret_share)
{
	const struct extres_info *info;
	unsigned shares, s;
	const char *v;
	size_t j;
	int pass;

	/* Pass 0: devices already shared; pass 1: devices nobody holds. */
	for (pass = 0; pass < 2; pass++)
		for (j = 0; j < candidates->n; j++) {
			info = &candidates->items[j];
			v = extres_info_get(info, key);
			if (!v || !extres_info_healthy(info) ||
			    extres_share_count(c, v, &shares) ||
			    shares >= replicas || (pass == 0) != (shares > 0))
				continue;
			s = lowest_free(c, v, replicas);
			if (!s)
				continue;
			*ret_j = j;
			*ret_share = s;
			return 1;
		}
	return 0;
}

/* EXTRES_<NAME>_SHARE=I/N */
static int share_var(const char *name, unsigned i, unsigned n, char **ret)
{
	static const char suffix[] = "_INDEXES";
	char *indexes;
	size_t len;
	int r;

	r = extres_env_indexes_var(name, &indexes);
	if (r < 0)
		return r;
	len = strlen(indexes) - (sizeof(suffix) - 1);
	r = asprintf(ret, "%.*s_SHARE=%u/%u", (int)len, indexes, i, n);
	free(indexes);
	return r < 0 ? -ENOMEM : 0;
}

int extres_share_env(const struct extres_resource_config *res,
		     const struct extres_allocation *a, char **out,
		     size_t *ret_n)
{
	const char *mem =
		a->n ? extres_info_get(&a->infos[0], "memory.total") : NULL;
	unsigned pct = 100 / a->share_n;
	uint64_t mib;
	size_t n = 0, i;
	int r;

	r = share_var(res->name, a->share_i, a->share_n, &out[n]);
	if (r < 0)
		goto fail;
	n++;
	if (res->sharing != EXTRES_SHARING_MPS)
		goto done;
	/* What CUDA's MPS client reads: where the control daemon listens,
	 * and this client's part of the device. */
	if (asprintf(&out[n], "CUDA_MPS_PIPE_DIRECTORY=%s", res->mps_pipe_dir) <
	    0)
		goto oom;
	n++;
	if (asprintf(&out[n], "CUDA_MPS_LOG_DIRECTORY=%s", res->mps_log_dir) <
	    0)
		goto oom;
	n++;
	if (asprintf(&out[n], "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%u",
		     pct ? pct : 1) < 0)
		goto oom;
	n++;
	if (mem && extres_parse_dec(mem, strlen(mem), UINT64_MAX, &mib) == 0 &&
	    mib / a->share_n > 0) {
		if (asprintf(&out[n],
			     "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=%" PRIu64 "M",
			     mib / a->share_n) < 0)
			goto oom;
		n++;
	}
done:
	*ret_n = n;
	return 0;
oom:
	r = -ENOMEM;
fail:
	for (i = 0; i < n; i++)
		free(out[i]);
	return r;
}
