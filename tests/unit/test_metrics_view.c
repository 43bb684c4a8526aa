/* SPDX-License-Identifier: MIT */
#include <setjmp.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "views/metrics_view.h"

/* clang-format off */
#define P(k, v) { (char *)(k), (char *)(v), sizeof(v) - 1 }
#define INFO(props) { sizeof(props) / sizeof(props[0]), props }
/* clang-format on */
#define N(a) (sizeof(a) / sizeof(a[0]))

static void expect_metrics(const struct extres_view_resource *res, size_t n,
			   const unsigned char *pools,
			   const struct extres_holders *h,
			   const struct extres_metrics_counters *c,
			   const char *want)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_view_metrics(res, n, pools, h, c, &text, &len),
			 0);
	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(len, strlen(want));
	free(text);
}

static const struct extres_metrics_counters counters = {
	.reloads = 3,
	.reload_failures = 1,
	.last_reload_success = 1732496000,
	.conflicts = 2,
};

#define HOLDER(res, k, st, id)                                                 \
	{                                                                      \
		.resource = (char *)(res), .key = (char *)"0", .pid = 1,       \
		.state = (st), .kind = (k), .lease = (char *)(id), .since = -1 \
	}

/* A small mount, exactly: the label escapes, invalid UTF-8, health, a pool, holders by kind,
 * leases counted once however many lines they have. */
static void test_metrics(void **state)
{
	struct extres_property g0[] = {
		P("index", "0"),
		P("uuid", "GPU-1"),
		P("pci.bus_id", "00000000:17:00.0"),
		P("name", "NVIDIA H100"),
		P("memory.total", "81559 MiB"),
		P("health", "ok"),
	};
	struct extres_property g1[] = {
		P("index", "3"),
		P("name", "a\\b\"c\nd\xff"),
		P("health", "xid 79"),
	};
	struct extres_property n0[] = { P("name", "mlx5_0") };
	const struct extres_info gpus[] = { INFO(g0), INFO(g1) };
	const struct extres_info nics[] = { INFO(n0) };
	const struct extres_view_resource res[] = {
		{ "gpu", "nvml", NULL, 2, { 2, 2 }, gpus, N(gpus), NULL },
		{ "nic", "sysfs", NULL, 0, { 0, 0 }, nics, N(nics), NULL },
	};
	const unsigned char pools[] = { 0, 1 };
	struct extres_holder items[] = {
		HOLDER("gpu", EXTRES_HOLDER_DAEMON, EXTRES_OWNER_LIVE, NULL),
		HOLDER("nic", EXTRES_HOLDER_LEASE, EXTRES_OWNER_LIVE, "7-1"),
		HOLDER("nic", EXTRES_HOLDER_LEASE, EXTRES_OWNER_LIVE, "7-1"),
		HOLDER("gpu", EXTRES_HOLDER_LEASE, EXTRES_OWNER_LIVE, "9-2"),
		HOLDER("nic", EXTRES_HOLDER_LEASE, EXTRES_OWNER_DEAD, "8-1"),
		HOLDER("nic", EXTRES_HOLDER_OTHER, EXTRES_OWNER_ZOMBIE, NULL),
		HOLDER("nic", EXTRES_HOLDER_OTHER, EXTRES_OWNER_LIVE, NULL),
		HOLDER("gpu", EXTRES_HOLDER_LEASE, EXTRES_OWNER_LIVE, "10-2"),
		HOLDER("gpu", EXTRES_HOLDER_LEASE, EXTRES_OWNER_LIVE, "11-2"),
		HOLDER("gpu", EXTRES_HOLDER_LEASE, EXTRES_OWNER_DEAD, "12-2"),
	};
	/* Three shares of device 5, one of them stale. */
	for (size_t s = 7; s < 10; s++) {
		items[s].key = "5";
		items[s].share_i = (unsigned)s - 6;
		items[s].share_n = 4;
	}
	const struct extres_holders h = { N(items), items };

	expect_metrics(
		res, N(res), pools, &h, &counters,
		"# HELP extres_device_info A device the mount serves, with its identifying properties.\n"
		"# TYPE extres_device_info gauge\n"
		"extres_device_info{resource=\"gpu\",info=\"0\",index=\"0\",uuid=\"GPU-1\",pci_bus_id=\"00000000:17:00.0\",name=\"NVIDIA H100\"} 1\n"
		"extres_device_info{resource=\"gpu\",info=\"1\",index=\"3\",name=\"a\\\\b\\\"c\\nd\xef\xbf\xbd\"} 1\n"
		"extres_device_info{resource=\"nic\",info=\"0\",name=\"mlx5_0\"} 1\n"
		"# HELP extres_device_healthy 1 if the driver reports the device healthy, else 0 with the reason.\n"
		"# TYPE extres_device_healthy gauge\n"
		"extres_device_healthy{resource=\"gpu\",info=\"0\",index=\"0\"} 1\n"
		"extres_device_healthy{resource=\"gpu\",info=\"1\",index=\"3\",reason=\"xid 79\"} 0\n"
		"# HELP extres_devices Devices the mount serves for the resource.\n"
		"# TYPE extres_devices gauge\n"
		"extres_devices{resource=\"gpu\"} 2\n"
		"extres_devices{resource=\"nic\"} 1\n"
		"# HELP extres_devices_wanted The least number of devices the resource's amount asks for (a range's minimum; not for a node pool).\n"
		"# TYPE extres_devices_wanted gauge\n"
		"extres_devices_wanted{resource=\"gpu\"} 2\n"
		"# HELP extres_holders Lines of the resource's coordination file whose owner is live, by kind.\n"
		"# TYPE extres_holders gauge\n"
		"extres_holders{resource=\"gpu\",kind=\"daemon\"} 1\n"
		"extres_holders{resource=\"gpu\",kind=\"lease\"} 3\n"
		"extres_holders{resource=\"gpu\",kind=\"extresd\"} 0\n"
		"extres_holders{resource=\"gpu\",kind=\"other\"} 0\n"
		"extres_holders{resource=\"nic\",kind=\"daemon\"} 0\n"
		"extres_holders{resource=\"nic\",kind=\"lease\"} 2\n"
		"extres_holders{resource=\"nic\",kind=\"extresd\"} 0\n"
		"extres_holders{resource=\"nic\",kind=\"other\"} 1\n"
		"# HELP extres_stale_holders Lines of the resource's coordination file whose owner is gone.\n"
		"# TYPE extres_stale_holders gauge\n"
		"extres_stale_holders{resource=\"gpu\"} 1\n"
		"extres_stale_holders{resource=\"nic\"} 2\n"
		"# HELP extres_device_shares Live shares of a shared device, by its coordination key.\n"
		"# TYPE extres_device_shares gauge\n"
		"extres_device_shares{resource=\"gpu\",key=\"5\"} 2\n"
		"# HELP extres_leases Leases (extresctl run) whose owner is live.\n"
		"# TYPE extres_leases gauge\n"
		"extres_leases 4\n"
		"# HELP extres_reloads_total Reloads of the configuration asked for, failed ones included.\n"
		"# TYPE extres_reloads_total counter\n"
		"extres_reloads_total 3\n"
		"# HELP extres_reload_failures_total Reloads that failed and kept the running state.\n"
		"# TYPE extres_reload_failures_total counter\n"
		"extres_reload_failures_total 1\n"
		"# HELP extres_last_reload_success_timestamp_seconds When the running configuration was loaded, in seconds since the epoch.\n"
		"# TYPE extres_last_reload_success_timestamp_seconds gauge\n"
		"extres_last_reload_success_timestamp_seconds 1732496000\n"
		"# HELP extres_coordination_conflicts Devices of ours that another live owner holds in a coordination file.\n"
		"# TYPE extres_coordination_conflicts gauge\n"
		"extres_coordination_conflicts 2\n");
}

/* Nothing configured, nothing held: every family without labels is
 * there, and no device family has a sample. */
static void test_metrics_empty(void **state)
{
	const struct extres_metrics_counters zero = { 0 };

	expect_metrics(
		NULL, 0, NULL, NULL, &zero,
		"# HELP extres_device_info A device the mount serves, with its identifying properties.\n"
		"# TYPE extres_device_info gauge\n"
		"# HELP extres_devices Devices the mount serves for the resource.\n"
		"# TYPE extres_devices gauge\n"
		"# HELP extres_devices_wanted The least number of devices the resource's amount asks for (a range's minimum; not for a node pool).\n"
		"# TYPE extres_devices_wanted gauge\n"
		"# HELP extres_holders Lines of the resource's coordination file whose owner is live, by kind.\n"
		"# TYPE extres_holders gauge\n"
		"# HELP extres_stale_holders Lines of the resource's coordination file whose owner is gone.\n"
		"# TYPE extres_stale_holders gauge\n"
		"# HELP extres_device_shares Live shares of a shared device, by its coordination key.\n"
		"# TYPE extres_device_shares gauge\n"
		"# HELP extres_leases Leases (extresctl run) whose owner is live.\n"
		"# TYPE extres_leases gauge\n"
		"extres_leases 0\n"
		"# HELP extres_reloads_total Reloads of the configuration asked for, failed ones included.\n"
		"# TYPE extres_reloads_total counter\n"
		"extres_reloads_total 0\n"
		"# HELP extres_reload_failures_total Reloads that failed and kept the running state.\n"
		"# TYPE extres_reload_failures_total counter\n"
		"extres_reload_failures_total 0\n"
		"# HELP extres_last_reload_success_timestamp_seconds When the running configuration was loaded, in seconds since the epoch.\n"
		"# TYPE extres_last_reload_success_timestamp_seconds gauge\n"
		"extres_last_reload_success_timestamp_seconds 0\n"
		"# HELP extres_coordination_conflicts Devices of ours that another live owner holds in a coordination file.\n"
		"# TYPE extres_coordination_conflicts gauge\n"
		"extres_coordination_conflicts 0\n");
}

/* A driver's labels: per label the first entry whose property the device
 * has, a prefix, the node's name (left out when there is none), escapes;
 * and a module whose list breaks the rules is refused. */
static void test_driver_labels(void **state)
{
	struct extres_property mig[] = {
		P("index", "MIG-1"),
		P("parent.index", "1"),
		P("gi.id", "2"),
	};
	struct extres_property gpu[] = { P("index", "0") };
	struct extres_driver_label labels[] = {
		{ (char *)"gpu", (char *)"parent.index", (char *)"" },
		{ (char *)"gpu", (char *)"index", (char *)"" },
		{ (char *)"device", (char *)"index", (char *)"nv\"" },
		{ (char *)"Hostname", NULL, (char *)"" },
		{ (char *)"GPU_I_ID", (char *)"gi.id", (char *)"" },
	};
	const struct extres_driver_info info = { .labels = labels,
						 .n_labels = N(labels) };
	const struct extres_info infos[] = { INFO(mig), INFO(gpu) };
	const struct extres_view_resource res[] = {
		{ "gpu", "nvml", NULL, 2, { 2, 2 }, infos, N(infos), &info },
	};
	struct extres_metrics_counters c = counters;
	const char *want_head =
		"# HELP extres_device_info A device the mount serves, with its identifying properties.\n"
		"# TYPE extres_device_info gauge\n";
	const struct extres_metric_label bad[] = {
		{ .label = "ok", .property = "x" },
		{ .label = "uuid", .property = "x" },
		{ .label = NULL },
	};
	struct extres_err err = { 0 };
	char *text = NULL, want[1024];
	size_t len = 0;

	c.node_name = "node-a";
	assert_int_equal(
		extres_view_metrics(res, 1, NULL, NULL, &c, &text, &len), 0);
	snprintf(
		want, sizeof(want),
		"%sextres_device_info{resource=\"gpu\",info=\"0\",index=\"MIG-1\",gpu=\"1\",device=\"nv\\\"MIG-1\",Hostname=\"node-a\",GPU_I_ID=\"2\"} 1\n"
		"extres_device_info{resource=\"gpu\",info=\"1\",index=\"0\",gpu=\"0\",device=\"nv\\\"0\",Hostname=\"node-a\"} 1\n",
		want_head);
	assert_memory_equal(text, want, strlen(want));
	free(text);

	c.node_name = NULL;
	assert_int_equal(
		extres_view_metrics(res, 1, NULL, NULL, &c, &text, &len), 0);
	assert_null(strstr(text, "Hostname"));
	free(text);

	assert_int_equal(extres_driver_info_check_labels(bad, "/x.so", &err),
			 -ELIBBAD);
	assert_string_equal(
		err.msg,
		"/x.so: driver's metric label 1 'uuid' is not a Prometheus label name of its own (or is one extres_device_info has already)");
	assert_int_equal(
		extres_driver_info_check_labels(bad + 2, "/x.so", &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_metrics_empty),
		cmocka_unit_test(test_driver_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
