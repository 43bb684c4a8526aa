/* SPDX-License-Identifier: MIT */
/*
 * The static driver, loaded from the build tree and run through the host
 * side (extres_driver_open/discover), with params built as the config
 * loader would hand them over, positions included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver_run.h"

#define STATIC_SO EXTRES_DRIVERS_BUILD_DIR "/static.so"
#define PREFIX "resource 'gpu': driver 'static': " FAKE_CONFIG

/* Open and discover; the caller frees the list. */
static struct extres_infos *discover(const struct extres_param *items,
				     uint32_t count)
{
	char log[4096];

	return fake_discover(STATIC_SO, "gpu", "/etc/extres", items, count, log,
			     sizeof(log));
}

static void expect_open_error(const struct extres_param *items, uint32_t count,
			      const char *msg)
{
	struct fake_run run;

	fake_run(STATIC_SO, "gpu", "/etc/extres", items, count, &run);
	assert_int_equal(run.open_r, -EINVAL);
	assert_string_equal(run.err.msg, msg);
}

/*
 *   devices:
 *     - {index: 0, uuid: GPU-aaaa, name: A100}
 *     - {index: 1, uuid: GPU-bbbb, name: A100, pci.bus_id: 0000:81:00.0}
 */
static void test_devices(void **state)
{
	static const struct extres_param dev0[] = {
		SCALAR("index", "0", 5, 15),
		SCALAR("uuid", "GPU-aaaa", 5, 24),
		SCALAR("name", "A100", 5, 40),
	};
	static const struct extres_param dev1[] = {
		SCALAR("index", "1", 6, 15),
		SCALAR("uuid", "GPU-bbbb", 6, 24),
		SCALAR("name", "A100", 6, 40),
		SCALAR("pci.bus_id", "0000:81:00.0", 6, 58),
	};
	static const struct extres_param list[] = {
		MAPPING(NULL, dev0, 5, 7),
		MAPPING(NULL, dev1, 6, 7),
	};
	static const struct extres_param items[] = {
		SEQUENCE("devices", list, 5, 5),
	};
	struct extres_infos *infos = discover(items, N(items));

	assert_int_equal(infos->n, 2);
	assert_int_equal(infos->items[0].n_props, 3);
	expect_prop(&infos->items[0], 0, "index", "0");
	expect_prop(&infos->items[0], 1, "uuid", "GPU-aaaa");
	expect_prop(&infos->items[0], 2, "name", "A100");
	assert_int_equal(infos->items[1].n_props, 4);
	expect_prop(&infos->items[1], 0, "index", "1");
	expect_prop(&infos->items[1], 1, "uuid", "GPU-bbbb");
	expect_prop(&infos->items[1], 2, "name", "A100");
	expect_prop(&infos->items[1], 3, "pci.bus_id", "0000:81:00.0");
	extres_infos_free(infos);
}

/* `indexes: " 0, 1 ,,2 , "`: trimmed, empty items dropped, as Flink does. */
static void test_indexes_scalar(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("indexes", " 0, 1 ,,2 , ", 4, 14),
	};
	struct extres_infos *infos = discover(items, N(items));
	size_t i;

	assert_int_equal(infos->n, 3);
	for (i = 0; i < 3; i++) {
		char want[2] = { (char)('0' + i), '\0' };

		assert_int_equal(infos->items[i].n_props, 1);
		expect_prop(&infos->items[i], 0, "index", want);
	}
	extres_infos_free(infos);
}

/* `indexes: [3, " 4 ", "", GPU-x]` */
static void test_indexes_sequence(void **state)
{
	static const struct extres_param list[] = {
		SCALAR(NULL, "3", 4, 15),
		SCALAR(NULL, " 4 ", 4, 18),
		SCALAR(NULL, "", 4, 25),
		SCALAR(NULL, "GPU-x", 4, 29),
	};
	static const struct extres_param items[] = {
		SEQUENCE("indexes", list, 4, 14),
	};
	struct extres_infos *infos = discover(items, N(items));

	assert_int_equal(infos->n, 3);
	expect_prop(&infos->items[0], 0, "index", "3");
	expect_prop(&infos->items[1], 0, "index", "4");
	expect_prop(&infos->items[2], 0, "index", "GPU-x");
	assert_int_equal(infos->items[2].n_props, 1);
	extres_infos_free(infos);
}

/* Nothing listed is not the driver's error: the allocator says "wanted N,
 * found 0". A repeated key: the last one wins. */
static void test_empty_and_repeated(void **state)
{
	static const struct extres_param empty_scalar[] = {
		SCALAR("indexes", " , ", 4, 14),
	};
	static const struct extres_param none[1] = { { 0 } };
	static const struct extres_param empty_seq[] = {
		{ .kind = EXTRES_PARAM_SEQUENCE,
		  .key = "devices",
		  .items = none,
		  .count = 0,
		  .line = 4,
		  .column = 14 },
	};
	static const struct extres_param repeated[] = {
		SCALAR("indexes", "0,1", 4, 14),
		SCALAR("indexes", "5", 5, 14),
	};
	struct extres_infos *infos;

	infos = discover(empty_scalar, N(empty_scalar));
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
	infos = discover(empty_seq, N(empty_seq));
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
	infos = discover(repeated, N(repeated));
	assert_int_equal(infos->n, 1);
	expect_prop(&infos->items[0], 0, "index", "5");
	extres_infos_free(infos);
}

/* Each discovery reports the same list again. */
static void test_discover_twice(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("indexes", "0,1", 4, 14),
	};
	struct extres_driver *drv = NULL;
	struct extres_infos *a = NULL, *b = NULL;
	struct extres_err err = { "" };
	struct fake_resource f;

	fake_resource_init(&f, STATIC_SO, "gpu", "/etc/extres", items,
			   N(items));
	assert_int_equal(extres_driver_open(&f.config, &f.res, &drv, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &a, &err), 0);
	assert_int_equal(extres_driver_discover(drv, &b, &err), 0);
	assert_int_equal(a->n, 2);
	assert_int_equal(b->n, 2);
	expect_prop(&b->items[1], 0, "index", "1");
	extres_infos_free(a);
	extres_infos_free(b);
	extres_driver_close(drv);
}

static void test_errors_choice(void **state)
{
	static const struct extres_param one[] = { SCALAR("index", "0", 5, 9) };
	static const struct extres_param list[] = { MAPPING(NULL, one, 5, 7) };
	static const struct extres_param both[] = {
		SEQUENCE("devices", list, 4, 3),
		SCALAR("indexes", "0,1", 7, 12),
	};
	static const struct extres_param neither[] = {
		SCALAR("device", "0", 4, 11),
	};
	static const struct extres_param dev_map[] = {
		SCALAR("devices.gpu0.index", "0", 6, 14),
	};
	static const struct extres_param idx_map[] = {
		SCALAR("indexes.a", "0", 6, 10),
	};

	expect_open_error(
		both, N(both),
		PREFIX
		":7:12: param.devices and param.indexes are both given; use one of them");
	expect_open_error(
		neither, N(neither),
		PREFIX
		": neither param.devices nor param.indexes is given; one of them must list the devices");
	expect_open_error(
		NULL, 0,
		PREFIX
		": neither param.devices nor param.indexes is given; one of them must list the devices");
	/* A mapping under either arrives flattened into dotted keys. */
	expect_open_error(
		dev_map, N(dev_map),
		PREFIX
		":6:14: param.devices must be a sequence, not a mapping (found param.devices.gpu0.index)");
	expect_open_error(
		idx_map, N(idx_map),
		PREFIX
		":6:10: param.indexes must be a list, not a mapping (found param.indexes.a)");
}

static void test_errors_devices(void **state)
{
	static const struct extres_param scalar[] = {
		SCALAR("devices", "gpu0", 4, 12),
	};
	static const struct extres_param ok[] = { SCALAR("index", "0", 5, 16) };
	static const struct extres_param not_map_list[] = {
		MAPPING(NULL, ok, 5, 7),
		SCALAR(NULL, "gpu1", 6, 7),
	};
	static const struct extres_param not_map[] = {
		SEQUENCE("devices", not_map_list, 4, 3),
	};
	static const struct extres_param nested[] = {
		SCALAR("index", "0", 5, 16),
	};
	static const struct extres_param with_map[] = {
		SCALAR("index", "1", 6, 16),
		MAPPING("pci", nested, 7, 14),
	};
	static const struct extres_param not_scalar_list[] = {
		MAPPING(NULL, ok, 5, 7),
		MAPPING(NULL, with_map, 6, 7),
	};
	static const struct extres_param not_scalar[] = {
		SEQUENCE("devices", not_scalar_list, 4, 3),
	};
	static const struct extres_param none[1] = { { 0 } };
	static const struct extres_param empty_item_list[] = {
		{ .kind = EXTRES_PARAM_MAPPING,
		  .items = none,
		  .count = 0,
		  .line = 5,
		  .column = 7 },
	};
	static const struct extres_param empty_item[] = {
		SEQUENCE("devices", empty_item_list, 4, 3),
	};

	expect_open_error(
		scalar, N(scalar),
		PREFIX
		":4:12: param.devices must be a sequence of mappings, one per device");
	expect_open_error(
		not_map, N(not_map),
		PREFIX
		":6:7: param.devices[1] must be a mapping of property: value");
	expect_open_error(not_scalar, N(not_scalar),
			  PREFIX
			  ":7:14: param.devices[1].pci must be a scalar value");
	expect_open_error(empty_item, N(empty_item),
			  PREFIX ":5:7: param.devices[0] has no properties");
}

/* Open one device with the single property key: value at 5:20. */
static void expect_property_error(const char *key, const char *value,
				  const char *msg)
{
	const struct extres_param props[] = {
		SCALAR("index", "0", 5, 10),
		SCALAR(key, value, 5, 20),
	};
	const struct extres_param list[] = { MAPPING(NULL, props, 5, 7) };
	const struct extres_param items[] = { SEQUENCE("devices", list, 4, 3) };

	expect_open_error(items, N(items), msg);
}

static void test_errors_properties(void **state)
{
	expect_property_error(
		"a/b", "x",
		PREFIX
		":5:20: param.devices[0]: property name 'a/b' contains '/'");
	expect_property_error(
		".hidden", "x",
		PREFIX
		":5:20: param.devices[0]: property name '.hidden' starts with '.'");
	expect_property_error(
		"", "x", PREFIX ":5:20: param.devices[0]: empty property name");
	expect_property_error(
		"uuid", "", PREFIX ":5:20: param.devices[0].uuid: empty value");
	expect_property_error(
		"uuid", "a\nb",
		PREFIX ":5:20: param.devices[0].uuid: value has a newline");
	expect_property_error(
		"index", "1",
		PREFIX ":5:20: param.devices[0]: property 'index' given twice");
}

static void test_errors_indexes(void **state)
{
	static const struct extres_param dup[] = {
		SCALAR("indexes", "0,1, 0", 4, 14),
	};
	static const struct extres_param blank[] = {
		SCALAR("indexes", "0 1,2", 4, 14),
	};
	static const struct extres_param one[] = { SCALAR("index", "0", 5, 9) };
	static const struct extres_param seq_list[] = {
		SCALAR(NULL, "0", 4, 15),
		MAPPING(NULL, one, 5, 7),
	};
	static const struct extres_param seq[] = {
		SEQUENCE("indexes", seq_list, 4, 14),
	};
	static const struct extres_param seq_dup_list[] = {
		SCALAR(NULL, "7", 4, 15),
		SCALAR(NULL, " 7", 4, 18),
	};
	static const struct extres_param seq_dup[] = {
		SEQUENCE("indexes", seq_dup_list, 4, 14),
	};
	static const struct extres_param map[] = {
		MAPPING("indexes", one, 4, 14),
	};

	expect_open_error(dup, N(dup),
			  PREFIX ":4:14: param.indexes lists index '0' twice");
	expect_open_error(
		blank, N(blank),
		PREFIX ":4:14: param.indexes: index '0 1' contains whitespace");
	expect_open_error(seq, N(seq),
			  PREFIX
			  ":5:7: param.indexes[1] must be a scalar index");
	expect_open_error(seq_dup, N(seq_dup),
			  PREFIX ":4:18: param.indexes lists index '7' twice");
	expect_open_error(
		map, N(map),
		PREFIX
		":4:14: param.indexes must be a list like '0,1,2' or a sequence of indexes");
}

/* An unknown key is a warning naming it; the driver carries on. */
static void test_unknown_key(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("indexes", "0", 4, 14),
		SCALAR("index-list", "1,2", 5, 17),
	};
	struct fake_run run;

	fake_run(STATIC_SO, "gpu", "/etc/extres", items, N(items), &run);
	assert_string_equal(
		run.log,
		"extres: warning: resource 'gpu': driver 'static': " FAKE_CONFIG
		":5:17: unknown key param.index-list ignored\n");
	assert_int_equal(run.discover_r, 0);
	assert_int_equal(run.infos->n, 1);
	extres_infos_free(run.infos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_indexes_scalar),
		cmocka_unit_test(test_indexes_sequence),
		cmocka_unit_test(test_empty_and_repeated),
		cmocka_unit_test(test_discover_twice),
		cmocka_unit_test(test_errors_choice),
		cmocka_unit_test(test_errors_devices),
		cmocka_unit_test(test_errors_properties),
		cmocka_unit_test(test_errors_indexes),
		cmocka_unit_test(test_unknown_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
