/* SPDX-License-Identifier: MIT */
/* .meta/hpc-jobs/ and .meta/nfd as pure views: file names, lines, label
 * rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "views/hpc_jobs_view.h"
#include "views/nfd_view.h"

/* clang-format off */
#define P(k, v) { (char *)(k), (char *)(v), sizeof(v) - 1 }
#define INFO(props) { sizeof(props) / sizeof(props[0]), props }
/* clang-format on */
#define N(a) (sizeof(a) / sizeof(a[0]))

static struct extres_property gpu3[] = { P("index", "3"),
					 P("name", "NVIDIA H100 80GB HBM3"),
					 P("memory.total", "81559"),
					 P("compute_cap", "9.0") };
static struct extres_property mig[] = { P("index", "MIG-x"),
					P("parent.index", "1"),
					P("name", "NVIDIA H100 80GB HBM3"),
					P("memory.total", "10000"),
					P("compute_cap", "9.0") };
static struct extres_property odd[] = { P("index", "07") };
static const struct extres_info infos[] = { INFO(gpu3), INFO(mig), INFO(odd) };

/* nvml's entries for `gpu`. */
static struct extres_driver_label labels[] = {
	{ "gpu", "parent.index", "" },
	{ "gpu", "index", "" },
};
static const struct extres_driver_info driver = { .labels = labels,
						  .n_labels = N(labels) };

static void test_hpc_jobs(void **state)
{
	struct extres_holder h[] = {
		{ .state = EXTRES_OWNER_LIVE,
		  .kind = EXTRES_HOLDER_LEASE,
		  .lease = "42-1000",
		  .pid = 42 },
		{ .state = EXTRES_OWNER_LIVE,
		  .kind = EXTRES_HOLDER_DAEMON,
		  .pid = 7 },
		{ .state = EXTRES_OWNER_LIVE,
		  .kind = EXTRES_HOLDER_LEASE,
		  .lease = "42-1000",
		  .pid = 42 },
		{ .state = EXTRES_OWNER_DEAD, .kind = EXTRES_HOLDER_OTHER },
		{ .state = EXTRES_OWNER_LIVE,
		  .kind = EXTRES_HOLDER_OTHER,
		  .pid = 9 },
		{ .state = EXTRES_OWNER_LIVE,
		  .kind = EXTRES_HOLDER_OTHER,
		  .pid = 10 },
	};
	/* The lease on two instances of GPU 1, the daemon on GPU 3, a
	 * stale line, a holder of an unknown device, one of "07" (no
	 * number DCGM-exporter would match). */
	const struct extres_hpc_holder in[] = {
		{ &h[0], &infos[1], &driver }, { &h[1], &infos[0], &driver },
		{ &h[2], &infos[1], &driver }, { &h[3], &infos[0], &driver },
		{ &h[4], NULL, &driver },      { &h[5], &infos[2], &driver },
	};
	struct extres_hpc_file *f = NULL;
	size_t n = 9;

	(void)state;
	assert_int_equal(extres_view_hpc_jobs(in, N(in), &f, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f[0].name, "1");
	assert_string_equal(f[0].text, "42-1000\n");
	assert_int_equal(f[0].len, 8);
	assert_string_equal(f[1].name, "3");
	assert_string_equal(f[1].text, "daemon-7\n");
	extres_hpc_files_free(f, n);

	assert_int_equal(extres_view_hpc_jobs(NULL, 0, &f, &n), 0);
	assert_int_equal(n, 0);
	assert_null(f);
}

static void test_nfd(void **state)
{
	const struct extres_view_resource res[] = {
		{ .name = "gpu", .infos = infos, .n_infos = 1 },
		/* Memory differs: no memory label. */
		{ .name = "my gpu!", .infos = infos, .n_infos = 2 },
		{ .name = "!!", .infos = infos, .n_infos = 1 },
	};
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(extres_view_nfd(res, N(res), 1738324800, &text, &len),
			 0);
	assert_string_equal(text,
			    "# +expiry-time=2025-01-31T12:00:00Z\n"
			    "extres.dev/gpu.count=1\n"
			    "extres.dev/gpu.product=NVIDIA-H100-80GB-HBM3\n"
			    "extres.dev/gpu.memory=81559\n"
			    "extres.dev/gpu.compute.major=9\n"
			    "extres.dev/gpu.compute.minor=0\n"
			    "extres.dev/my-gpu.count=2\n"
			    "extres.dev/my-gpu.product=NVIDIA-H100-80GB-HBM3\n"
			    "extres.dev/my-gpu.compute.major=9\n"
			    "extres.dev/my-gpu.compute.minor=0\n");
	assert_int_equal(len, strlen(text));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hpc_jobs),
		cmocka_unit_test(test_nfd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
