/* SPDX-License-Identifier: MIT */
#include "views/metrics_view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macro.h"
#include "base/text.h"

/* The properties that become labels of extres_device_info: few and stable,
 * since every change of a label value starts a new series. */
static const struct {
	const char *key, *label;
} info_labels[] = {
	{ "index", "index" },
	{ "uuid", "uuid" },
	{ "pci.bus_id", "pci_bus_id" },
	{ "name", "name" },
};

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value between its quotes. */
static void put_value(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;
	size_t i = 0, n;

	while (i < len) {
		if (u[i] == '\\' || u[i] == '"') {
			fputc('\\', f);
			fputc(u[i++], f);
			continue;
		}
		if (u[i] == '\n') {
			fputs("\\n", f);
			i++;
			continue;
		}
		/* The parser refuses a file with invalid UTF-8. */
		n = extres_utf8_next(u + i, len - i, &cp);
		if (cp == EXTRES_UTF8_REPLACEMENT)
			fputs(EXTRES_UTF8_REPLACEMENT_TEXT, f);
		else
			fwrite(s + i, 1, n, f);
		i += n;
	}
}

/* `,name="value"` (no comma for the first label). */
static void label(FILE *f, int first, const char *name, const char *value)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	put_value(f, value, strlen(value));
	fputc('"', f);
}

/* resource="...",info="N", then those of the first n info_labels the
 * device has. */
static void device_labels(FILE *f, const struct extres_view_resource *r,
			  size_t j, size_t n)
{
	const char *v;
	char number[24];
	size_t k;

	snprintf(number, sizeof(number), "%zu", j);
	label(f, 1, "resource", r->name);
	label(f, 0, "info", number);
	for (k = 0; k < n; k++) {
		v = extres_info_get(&r->infos[j], info_labels[k].key);
		if (v)
			label(f, 0, info_labels[k].label, v);
	}
}

/* The value driver label `l` gives info `j` of `r` (its prefix apart),
 * or NULL when it does not apply. */
static const char *driver_label_value(const struct extres_view_resource *r,
				      size_t j,
				      const struct extres_driver_label *l,
				      const char *node)
{
	if (!l->property)
		return node && node[0] ? node : NULL;
	return extres_info_get(&r->infos[j], l->property);
}

/* The driver's own labels for info `j`: per label name, the first entry
 * that applies. */
static void driver_labels(FILE *f, const struct extres_view_resource *r,
			  size_t j, const char *node)
{
	const struct extres_driver_info *d = r->driver_info;
	const char *v;
	size_t k, e;
	int done;

	for (k = 0; d && k < d->n_labels; k++) {
		done = 0;
		for (e = 0; e < k && !done; e++)
			done = strcmp(d->labels[e].label, d->labels[k].label) ==
				       0 &&
			       driver_label_value(r, j, &d->labels[e], node);
		v = driver_label_value(r, j, &d->labels[k], node);
		if (done || !v)
			continue;
		fprintf(f, ",%s=\"", d->labels[k].label);
		put_value(f, d->labels[k].prefix, strlen(d->labels[k].prefix));
		put_value(f, v, strlen(v));
		fputc('"', f);
	}
}

static void device_info(FILE *f, const struct extres_view_resource *res,
			size_t n, const char *node)
{
	size_t i, j;

	family(f, "extres_device_info", "gauge",
	       "A device the mount serves, with its identifying properties.");
	for (i = 0; i < n; i++)
		for (j = 0; j < res[i].n_infos; j++) {
			fputs("extres_device_info{", f);
			device_labels(f, &res[i], j, ARRAY_SIZE(info_labels));
			driver_labels(f, &res[i], j, node);
			fputs("} 1\n", f);
		}
}

static void device_health(FILE *f, const struct extres_view_resource *res,
			  size_t n)
{
	const char *h;
	int any = 0, ok;
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < res[i].n_infos; j++) {
			h = extres_info_get(&res[i].infos[j],
					    EXTRES_HEALTH_KEY);
			if (!h)
				continue;
			if (!any)
				family(f, "extres_device_healthy", "gauge",
				       "1 if the driver reports the device healthy, else 0 with the reason.");
			any = 1;
			ok = extres_info_healthy(&res[i].infos[j]);
			fputs("extres_device_healthy{", f);
			/* index alone: its other labels are in _info */
			device_labels(f, &res[i], j, 1);
			if (!ok)
				label(f, 0, "reason", h);
			fprintf(f, "} %d\n", ok);
		}
	}
}

static void devices(FILE *f, const struct extres_view_resource *res, size_t n,
		    const unsigned char *pools)
{
	size_t i;

	family(f, "extres_devices", "gauge",
	       "Devices the mount serves for the resource.");
	for (i = 0; i < n; i++) {
		fputs("extres_devices{", f);
		label(f, 1, "resource", res[i].name);
		fprintf(f, "} %zu\n", res[i].n_infos);
	}
	family(f, "extres_devices_wanted", "gauge",
	       "The least number of devices the resource's amount asks for (a range's minimum; not for a node pool).");
	for (i = 0; i < n; i++) {
		if (pools && pools[i])
			continue;
		fputs("extres_devices_wanted{", f);
		label(f, 1, "resource", res[i].name);
		fprintf(f, "} %" PRIu64 "\n", res[i].configured.min);
	}
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct leases of live owners: one sort, not a pairwise comparison,
 * since a node pool may have thousands of lines. */
static int count_leases(const struct extres_holders *h, size_t *ret)
{
	const char **ids;
	size_t i, n = 0, count = 0;

	ids = calloc(h && h->n ? h->n : 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; h && i < h->n; i++)
		if (h->items[i].kind == EXTRES_HOLDER_LEASE &&
		    h->items[i].state == EXTRES_OWNER_LIVE && h->items[i].lease)
			ids[n++] = h->items[i].lease;
	qsort(ids, n, sizeof(*ids), by_text);
	for (i = 0; i < n; i++)
		if (i == 0 || strcmp(ids[i], ids[i - 1]) != 0)
			count++;
	free(ids);
	*ret = count;
	return 0;
}

static void holders(FILE *f, const struct extres_view_resource *res, size_t n,
		    const struct extres_holders *h)
{
	static const int kinds[] = { EXTRES_HOLDER_DAEMON, EXTRES_HOLDER_LEASE,
				     EXTRES_HOLDER_EXTRESD,
				     EXTRES_HOLDER_OTHER };
	size_t i, k, j, count;

	family(f, "extres_holders", "gauge",
	       "Lines of the resource's coordination file whose owner is live, by kind.");
	for (i = 0; i < n; i++) {
		for (k = 0; k < ARRAY_SIZE(kinds); k++) {
			count = 0;
			for (j = 0; h && j < h->n; j++)
				if (h->items[j].kind == kinds[k] &&
				    h->items[j].state == EXTRES_OWNER_LIVE &&
				    strcmp(h->items[j].resource, res[i].name) ==
					    0)
					count++;
			fputs("extres_holders{", f);
			label(f, 1, "resource", res[i].name);
			label(f, 0, "kind", extres_holder_kind_name(kinds[k]));
			fprintf(f, "} %zu\n", count);
		}
	}
	family(f, "extres_stale_holders", "gauge",
	       "Lines of the resource's coordination file whose owner is gone.");
	for (i = 0; i < n; i++) {
		count = 0;
		for (j = 0; h && j < h->n; j++)
			if (h->items[j].state != EXTRES_OWNER_LIVE &&
			    strcmp(h->items[j].resource, res[i].name) == 0)
				count++;
		fputs("extres_stale_holders{", f);
		label(f, 1, "resource", res[i].name);
		fprintf(f, "} %zu\n", count);
	}
}

/* A live share line's device, the first time it is seen. */
static int first_share(const struct extres_holders *h, size_t j)
{
	const struct extres_holder *x = &h->items[j], *y;
	size_t k;

	if (!x->share_n || x->state != EXTRES_OWNER_LIVE)
		return 0;
	for (k = 0; k < j; k++) {
		y = &h->items[k];
		if (y->share_n && y->state == EXTRES_OWNER_LIVE &&
		    strcmp(y->resource, x->resource) == 0 &&
		    strcmp(y->key, x->key) == 0)
			return 0;
	}
	return 1;
}

static void shares(FILE *f, const struct extres_holders *h)
{
	size_t j, k, count;

	family(f, "extres_device_shares", "gauge",
	       "Live shares of a shared device, by its coordination key.");
	for (j = 0; h && j < h->n; j++) {
		const struct extres_holder *x = &h->items[j];

		if (!first_share(h, j))
			continue;
		for (k = j, count = 0; k < h->n; k++)
			count += h->items[k].share_n &&
				 h->items[k].state == EXTRES_OWNER_LIVE &&
				 strcmp(h->items[k].resource, x->resource) ==
					 0 &&
				 strcmp(h->items[k].key, x->key) == 0;
		fputs("extres_device_shares{", f);
		label(f, 1, "resource", x->resource);
		label(f, 0, "key", x->key);
		fprintf(f, "} %zu\n", count);
	}
}

int extres_view_metrics(const struct extres_view_resource *res, size_t n,
			const unsigned char *pools,
			const struct extres_holders *h,
			const struct extres_metrics_counters *c,
			char **ret_text, size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0, leases;
	FILE *f;
	int r;

	r = count_leases(h, &leases);
	if (r < 0)
		return r;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	device_info(f, res, n, c->node_name);
	device_health(f, res, n);
	devices(f, res, n, pools);
	holders(f, res, n, h);
	shares(f, h);
	family(f, "extres_leases", "gauge",
	       "Leases (extresctl run) whose owner is live.");
	fprintf(f, "extres_leases %zu\n", leases);
	family(f, "extres_reloads_total", "counter",
	       "Reloads of the configuration asked for, failed ones included.");
	fprintf(f, "extres_reloads_total %" PRIu64 "\n", c->reloads);
	family(f, "extres_reload_failures_total", "counter",
	       "Reloads that failed and kept the running state.");
	fprintf(f, "extres_reload_failures_total %" PRIu64 "\n",
		c->reload_failures);
	family(f, "extres_last_reload_success_timestamp_seconds", "gauge",
	       "When the running configuration was loaded, in seconds since the epoch.");
	fprintf(f, "extres_last_reload_success_timestamp_seconds %" PRId64 "\n",
		c->last_reload_success);
	family(f, "extres_coordination_conflicts", "gauge",
	       "Devices of ours that another live owner holds in a coordination file.");
	fprintf(f, "extres_coordination_conflicts %" PRIu64 "\n", c->conflicts);
	r = extres_memstream_close(f, &text);
	if (r < 0)
		return r;
	*ret_text = text;
	*ret_len = len;
	return 0;
}
