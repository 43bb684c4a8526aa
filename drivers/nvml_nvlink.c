/* SPDX-License-Identifier: MIT */
/*
 * nvlink.peers: the NVML indexes of the GPUs an active NVLink joins to a
 * GPU, sorted, joined by ',', "" for none. A link to another GPU names it
 * by its PCI address; a link to an NVSwitch makes a peer of every other GPU
 * with an active link to a switch (NVML does not say which switch fabric:
 * one per node is what NVIDIA's HGX boards have). A GPU whose first link
 * NVML cannot answer for (no NVLink, or an NVML without the calls) has no
 * nvlink.peers at all: NVML cannot say, which is not "none".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml.h"

/* What GPU `gpu`'s links reach: GPUs in `linked` (count bytes), a switch
 * in *ret_switch. Returns 1 when NVML answered, else 0. */
static int scan_links(const struct nvml *n, const struct nvml_gpu *gpus,
		      unsigned int count, unsigned int gpu,
		      unsigned char *linked, int *ret_switch)
{
	const struct nvml_gpu *g = &gpus[gpu];
	struct nvml_pci_info remote;
	unsigned int link, state, type, other;
	nvml_return rc;
	char buf[32];

	*ret_switch = 0;
	if (!g->dev || !n->sym[SYM_NVLINK_STATE].addr ||
	    !n->sym[SYM_NVLINK_REMOTE_PCI].addr)
		return 0;
	for (link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
		rc = ((nvml_link_uint_fn)n->sym[SYM_NVLINK_STATE].addr)(
			g->dev, link, &state);
		if (rc != NVML_SUCCESS) {
			/* Past a GPU's last link NVML answers "invalid
			 * argument": the end of the list, not an error. */
			if (link == 0) {
				nvml_absent(n, gpu, "nvlink.peers",
					    SYM_NVLINK_STATE, rc);
				return 0;
			}
			if (rc == NVML_ERROR_INVALID_ARGUMENT)
				break;
			/* One link that cannot say hides no later one. */
			continue;
		}
		if (state != NVML_FEATURE_ENABLED)
			continue;
		type = NVML_NVLINK_DEVICE_TYPE_GPU;
		if (n->sym[SYM_NVLINK_REMOTE_TYPE].addr &&
		    ((nvml_link_uint_fn)n->sym[SYM_NVLINK_REMOTE_TYPE].addr)(
			    g->dev, link, &type) != NVML_SUCCESS)
			type = NVML_NVLINK_DEVICE_TYPE_GPU;
		if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
			*ret_switch = 1;
			continue;
		}
		if (type != NVML_NVLINK_DEVICE_TYPE_GPU)
			continue;
		memset(&remote, 0, sizeof(remote));
		rc = ((nvml_link_pci_fn)n->sym[SYM_NVLINK_REMOTE_PCI].addr)(
			g->dev, link, &remote);
		if (rc != NVML_SUCCESS) {
			n->host->log(n->host, EXTRES_LOG_INFO,
				     "GPU %u: NVLink %u: %s: %s", gpu, link,
				     n->sym[SYM_NVLINK_REMOTE_PCI].name,
				     nvml_strerror(n, rc, buf, sizeof(buf)));
			continue;
		}
		for (other = 0; other < count; other++)
			if (other != gpu &&
			    gpus[other].pci_rc == NVML_SUCCESS &&
			    gpus[other].pci.domain == remote.domain &&
			    gpus[other].pci.bus == remote.bus &&
			    gpus[other].pci.device == remote.device)
				linked[other] = 1;
	}
	return 1;
}

static int by_number(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* "1,3" from the indexes of the GPUs marked in `linked`. */
static char *peer_list(const struct nvml_gpu *gpus, unsigned int count,
		       const unsigned char *linked)
{
	unsigned int *idx = calloc(count ? count : 1, sizeof(*idx));
	unsigned int i, k = 0;
	size_t len = 0;
	char *s = NULL;

	if (!idx)
		return NULL;
	for (i = 0; i < count; i++)
		if (linked[i])
			idx[k++] = gpus[i].index;
	qsort(idx, k, sizeof(*idx), by_number);
	s = malloc((size_t)k * 11 + 1);
	if (s) {
		s[0] = '\0';
		for (i = 0; i < k; i++)
			if (i == 0 || idx[i] != idx[i - 1])
				len += (size_t)sprintf(s + len, "%s%u",
						       len ? "," : "", idx[i]);
	}
	free(idx);
	return s;
}

int32_t nvml_nvlink_peers(const struct nvml *n, struct nvml_gpu *gpus,
			  unsigned int count)
{
	unsigned char *linked = NULL, *known = NULL, *on_switch = NULL;
	unsigned int gpu, other;
	int32_t r = 0;
	int sw;

	if (count == 0)
		return 0;
	linked = calloc((size_t)count * count, 1);
	known = calloc(count, 1);
	on_switch = calloc(count, 1);
	if (!linked || !known || !on_switch) {
		r = -ENOMEM;
		goto out;
	}
	for (gpu = 0; gpu < count; gpu++) {
		known[gpu] = (unsigned char)scan_links(
			n, gpus, count, gpu, linked + (size_t)gpu * count, &sw);
		on_switch[gpu] = (unsigned char)sw;
	}
	/* A link is a link both ways, even where one end's NVML answered
	 * only for itself; and the switch joins everyone on it. */
	for (gpu = 0; gpu < count; gpu++)
		for (other = 0; other < count; other++) {
			if (other == gpu)
				continue;
			if (linked[(size_t)other * count + gpu] ||
			    (on_switch[gpu] && on_switch[other]))
				linked[(size_t)gpu * count + other] = 1;
		}
	for (gpu = 0; gpu < count; gpu++) {
		if (!known[gpu])
			continue;
		gpus[gpu].peers =
			peer_list(gpus, count, linked + (size_t)gpu * count);
		if (!gpus[gpu].peers) {
			r = -ENOMEM;
			goto out;
		}
	}
out:
	free(linked);
	free(known);
	free(on_switch);
	return r;
}
