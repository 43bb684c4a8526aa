/* SPDX-License-Identifier: MIT */
/* Shares of a device: share= lines, which device takes one more, and what
 * a share's process is told. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/share.h"

/* A coordination file in memory, from its text (no liveness involved). */
static void coord_of(struct extres_coord *c, const char *text)
{
	const char *p = text, *nl;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		c->entries =
			realloc(c->entries, (c->n + 1) * sizeof(*c->entries));
		assert_non_null(c->entries);
		assert_int_equal(extres_coord_parse_line(p, (size_t)(nl - p),
							 &c->entries[c->n]),
				 0);
		c->n++;
	}
}

static void coord_clear(struct extres_coord *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		extres_coord_entry_clear(&c->entries[i]);
	free(c->entries);
}

static struct extres_infos *devices(size_t n)
{
	struct extres_infos *s;
	char v[16];
	size_t i;

	assert_int_equal(extres_infos_new(&s), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(extres_infos_begin(s, NULL), 0);
		snprintf(v, sizeof(v), "%zu", i);
		assert_int_equal(extres_infos_add(s, "index", v, NULL), 0);
	}
	return s;
}

static void test_line(void **state)
{
	struct extres_coord c = { .fd = -1 };
	struct extres_coord_entry e;
	const char *l = "3 77\t900\tshare=2/4\tlease=77-900";

	(void)state;
	assert_int_equal(extres_coord_parse_line(l, strlen(l), &e), 0);
	assert_int_equal(e.share_i, 2);
	assert_int_equal(e.share_n, 4);
	assert_string_equal(e.lease, "77-900");
	extres_coord_entry_clear(&e);
	/* A malformed share is none: the line holds the device whole. */
	l = "3 77\t900\tshare=5/4";
	assert_int_equal(extres_coord_parse_line(l, strlen(l), &e), 0);
	assert_int_equal(e.share_n, 0);
	extres_coord_entry_clear(&e);
	l = "3 77\t900\tshare=0/4";
	assert_int_equal(extres_coord_parse_line(l, strlen(l), &e), 0);
	assert_int_equal(e.share_n, 0);
	extres_coord_entry_clear(&e);

	assert_int_equal(
		extres_coord_add_share(&c, "3", 77, 900, "77-900", NULL, 2, 4),
		0);
	assert_string_equal(c.entries[0].line,
			    "3 77\t900\tlease=77-900\tshare=2/4");
	assert_int_equal(
		extres_coord_add_share(&c, "3", 77, 900, "x", NULL, 5, 4),
		-EINVAL);
	assert_int_equal(
		extres_coord_add_share(&c, "3", 77, 900, "x", NULL, 1, 0),
		-EINVAL);
	coord_clear(&c);
}

static void test_pick(void **state)
{
	struct extres_infos *d = devices(3);
	struct extres_coord c;
	unsigned s, n;
	size_t j;

	(void)state;
	/* Device 0 held whole (Flink), device 1 has two shares: the shared
	 * one first, then the lowest free share number. */
	coord_of(&c, "0 10\n"
		     "1 11\t1\tlease=11-1\tshare=1/4\n"
		     "1 12\t1\tlease=12-1\tshare=3/4\n");
	assert_int_equal(extres_share_count(&c, "0", &n), 1);
	assert_int_equal(extres_share_count(&c, "1", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(extres_share_pick(&c, d, "index", 4, &j, &s), 1);
	assert_int_equal(j, 1);
	assert_int_equal(s, 2);
	/* replicas lowered to 2 while two are held: device 1 is full, and
	 * an unshared device takes the share. */
	assert_int_equal(extres_share_pick(&c, d, "index", 2, &j, &s), 1);
	assert_int_equal(j, 2);
	assert_int_equal(s, 1);
	coord_clear(&c);

	/* Full everywhere: none. */
	coord_of(&c, "0 10\t1\n"
		     "1 11\t1\tshare=1/2\n"
		     "1 12\t1\tshare=2/2\n"
		     "2 13\t1\tshare=2/2\n"
		     "2 14\t1\tshare=1/1\n");
	assert_int_equal(extres_share_pick(&c, d, "index", 2, &j, &s), 0);
	coord_clear(&c);

	/* Shares above a lowered replicas count, but their numbers do not
	 * block the lowest free one. */
	coord_of(&c, "0 10\t1\n1 10\t1\n2 11\t1\tshare=4/4\n");
	assert_int_equal(extres_share_pick(&c, d, "index", 2, &j, &s), 1);
	assert_int_equal(j, 2);
	assert_int_equal(s, 1);
	coord_clear(&c);
	extres_infos_free(d);
}

static void test_env(void **state)
{
	struct extres_resource_config res = {
		.name = "gpu-a",
		.replicas = 3,
		.sharing = EXTRES_SHARING_MPS,
		.mps_pipe_dir = "/run/mps",
		.mps_log_dir = "/var/log/mps",
	};
	struct extres_allocation a = { .share_i = 2, .share_n = 3 };
	struct extres_infos *d;
	char *out[EXTRES_SHARE_ENV_MAX];
	size_t n, i;

	(void)state;
	assert_int_equal(extres_infos_new(&d), 0);
	assert_int_equal(extres_infos_begin(d, NULL), 0);
	assert_int_equal(extres_infos_add(d, "index", "0", NULL), 0);
	assert_int_equal(extres_infos_add(d, "memory.total", "81920", NULL), 0);
	a.n = 1;
	a.infos = d->items;
	assert_int_equal(extres_share_env(&res, &a, out, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(out[0], "EXTRES_GPU_A_SHARE=2/3");
	assert_string_equal(out[1], "CUDA_MPS_PIPE_DIRECTORY=/run/mps");
	assert_string_equal(out[2], "CUDA_MPS_LOG_DIRECTORY=/var/log/mps");
	assert_string_equal(out[3], "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=33");
	assert_string_equal(out[4],
			    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=27306M");
	for (i = 0; i < n; i++)
		free(out[i]);
	/* time-slicing: the share alone. */
	res.sharing = EXTRES_SHARING_TIME_SLICING;
	assert_int_equal(extres_share_env(&res, &a, out, &n), 0);
	assert_int_equal(n, 1);
	free(out[0]);
	extres_infos_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
