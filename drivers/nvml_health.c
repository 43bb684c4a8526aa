/* SPDX-License-Identifier: MIT */
/*
 * A GPU's `health`: the Xid the event thread holds, and the memory state
 * NVML reports on each discover(). The state conditions clear by
 * themselves once NVML stops reporting them, which for all of them takes a
 * GPU reset (or a driver reload): hence `health.reset-required`.
 */
#include <stdio.h>
#include <string.h>

#include "nvml.h"

static void append(struct nvml_health *h, const char *what)
{
	size_t len = strlen(h->health);

	snprintf(h->health + len, sizeof(h->health) - len, "%s%s",
		 len ? "," : "", what);
}

/* A call that cannot answer on this board is quiet; anything else is
 * worth a line, since the condition it would show is then unknown. */
static void unknown(const struct nvml *n, unsigned int gpu, const char *what,
		    int sym, nvml_return rc)
{
	nvml_log_rc(n, sym, rc, "GPU %u: health does not know about %s", gpu,
		    what);
}

void nvml_health_get(const struct nvml *n, nvml_device dev, unsigned int gpu,
		     struct nvml_health *ret)
{
	unsigned long long xid = nvml_events_xid(n, gpu), dbe = 0;
	unsigned int pending = 0, corr = 0, unc = 0, remap_pending = 0,
		     failed = 0;
	int reset = 0;
	char buf[32];
	nvml_return rc;

	ret->health[0] = '\0';
	if (xid) {
		snprintf(buf, sizeof(buf), "xid-%llu", xid);
		append(ret, buf);
	}
	if (n->sym[SYM_ECC].addr) {
		rc = ((nvml_ecc_fn)n->sym[SYM_ECC].addr)(
			dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
			NVML_VOLATILE_ECC, &dbe);
		if (rc != NVML_SUCCESS)
			unknown(n, gpu, "uncorrected ECC counts", SYM_ECC, rc);
		else if (dbe > 0)
			append(ret, "ecc-dbe"), reset = 1;
	}
	if (n->sym[SYM_RETIRED_PENDING].addr) {
		rc = ((nvml_uint_fn)n->sym[SYM_RETIRED_PENDING].addr)(dev,
								      &pending);
		if (rc != NVML_SUCCESS)
			unknown(n, gpu, "retired pages", SYM_RETIRED_PENDING,
				rc);
		else if (pending == NVML_FEATURE_ENABLED)
			append(ret, "retired-pages-pending"), reset = 1;
	}
	if (n->sym[SYM_REMAP].addr) {
		rc = ((nvml_remap_fn)n->sym[SYM_REMAP].addr)(
			dev, &corr, &unc, &remap_pending, &failed);
		if (rc != NVML_SUCCESS) {
			unknown(n, gpu, "row remapping", SYM_REMAP, rc);
		} else {
			if (remap_pending)
				append(ret, "row-remap-pending"), reset = 1;
			if (failed)
				append(ret, "row-remap-failed"), reset = 1;
		}
	}
	if (!ret->health[0])
		strcpy(ret->health, "ok");
	ret->reset = reset ? "yes" : "no";
}
