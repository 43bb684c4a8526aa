/* SPDX-License-Identifier: MIT */
/*
 * The sysfs driver, drivers/sysfs.so, run through the host side on fake
 * trees built in a temporary directory, and once on this machine's real
 * /sys/class/net. The natural order and the attribute reader of
 * drivers/sysfs_util.c are tested directly too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_tree.h"
#include "sysfs_util.h"

#define SYSFS_SO EXTRES_DRIVERS_BUILD_DIR "/sysfs.so"
#define PREFIX "resource 'nic': driver 'sysfs': "
#define WARN "extres: warning: " PREFIX

static struct extres_infos *discover(const char *config_dir,
				     const struct extres_param *items,
				     uint32_t count, char *log, size_t log_len)
{
	return fake_discover(SYSFS_SO, "nic", config_dir, items, count, log,
			     log_len);
}

static void expect_open_error(const struct extres_param *items, uint32_t count,
			      const char *msg)
{
	struct fake_run run;

	fake_run(SYSFS_SO, "nic", "/etc/extres", items, count, &run);
	if (run.open_r != -EINVAL)
		fail_msg("open gave %d, not -EINVAL (%s), for: %s", run.open_r,
			 run.err.msg, msg);
	assert_string_equal(run.err.msg, msg);
	assert_string_equal(run.log, "");
}

static void test_natcmp(void **state)
{
	static const char *const ordered[] = {
		"",
		"0",
		"00",
		"01",
		"1",
		"2",
		"9",
		"10",
		"a",
		"a0",
		"a01",
		"a1",
		"a2",
		"a9",
		"a10",
		"a10b",
		"a11",
		"ab",
		"eth0",
		"eth1",
		"eth10",
		"ib0",
		"mlx5_0",
		"mlx5_1",
		"mlx5_2",
		"mlx5_10",
		"mlx5_10_1",
		"mlx5_99999999999999999999",
		"mlx5_100000000000000000000",
	};
	size_t n = sizeof(ordered) / sizeof(ordered[0]), i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++) {
			int c = sysfs_natcmp(ordered[i], ordered[j]);

			if ((i < j && c >= 0) || (i == j && c != 0) ||
			    (i > j && c <= 0))
				fail_msg("natcmp(\"%s\", \"%s\") = %d",
					 ordered[i], ordered[j], c);
		}
	}
}

/* PCI addresses by their hex fields, which natural order gets wrong for a
 * field with a letter ("0f" before "07"); other names keep natural order,
 * and the two together still sort one way. */
static void test_natcmp_pci(void **state)
{
	static const char *const ordered[] = {
		"0000:00:1f.3", "0000:07:00.0",	 "0000:0f:00.0", "0000:0F:00.1",
		"0000:0f:00.1", "0000:10:00.0",	 "0000:a0:00.0", "0001:00:00.0",
		"ffff:00:00.0", "10000:01:00.0", "card2",	 "card10",
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < N(ordered); i++) {
		for (j = 0; j < N(ordered); j++) {
			int c = sysfs_natcmp(ordered[i], ordered[j]);

			if ((i < j && c >= 0) || (i == j && c != 0) ||
			    (i > j && c <= 0))
				fail_msg("natcmp(\"%s\", \"%s\") = %d",
					 ordered[i], ordered[j], c);
		}
	}
}

/* The driver lists PCI functions in address order. */
static void test_pci_order(void **state)
{
	static const char *const want[] = { "0000:07:00.0", "0000:0f:00.0",
					    "0000:10:00.0" };
	const char *dir = *state;
	char pattern[PATH_MAX], log[4096];
	struct extres_param items[] = { SCALAR("glob", NULL, 4, 9) };
	struct extres_infos *infos;
	size_t i;

	for (i = N(want); i-- > 0;) {
		fake_fmt(pattern, sizeof(pattern), "bus/pci/devices/%s/vendor",
			 want[i]);
		fake_put(dir, pattern, "0x10de\n");
	}
	fake_path(pattern, dir, "bus/pci/devices/*");
	items[0].value = pattern;
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, N(want));
	for (i = 0; i < N(want); i++)
		assert_string_equal(extres_info_get(&infos->items[i], "name"),
				    want[i]);
	extres_infos_free(infos);
}

/* The reader: trimming, and what it refuses, with the reason it gives. */
static void test_read_value(void **state)
{
	const char *dir = *state;
	struct sysfs_buf *buf = malloc(sizeof(*buf));
	char path[PATH_MAX], page[SYSFS_VALUE_MAX + 1];
	const char *value = NULL, *why = NULL;

	assert_non_null(buf);
	fake_put(dir, "plain", " \t 4096 \n\n");
	fake_path(path, dir, "plain");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), 0);
	assert_string_equal(value, "4096");

	memset(page, 'x', sizeof(page));
	fake_write(dir, "page", page, SYSFS_VALUE_MAX);
	fake_path(path, dir, "page");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), 0);
	assert_int_equal(strlen(value), SYSFS_VALUE_MAX);

	fake_write(dir, "long", page, SYSFS_VALUE_MAX + 1);
	fake_path(path, dir, "long");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -EFBIG);
	assert_string_equal(why, "longer than 4096 bytes");

	fake_put(dir, "blank", " \n \n");
	fake_path(path, dir, "blank");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -ENODATA);
	assert_string_equal(why, "empty");

	fake_put(dir, "lines", "a\nb\n");
	fake_path(path, dir, "lines");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -EBADMSG);
	assert_string_equal(why, "more than one line");

	fake_write(dir, "nul", "a\0b\n", 4);
	fake_path(path, dir, "nul");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -EBADMSG);
	assert_string_equal(why, "holds a NUL byte");

	fake_path(path, dir, "missing");
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -ENOENT);
	assert_string_equal(why, "No such file or directory");

	fake_path(path, dir, "fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(sysfs_read_value(path, buf, &value, &why), -EINVAL);
	assert_string_equal(why, "not a regular file");

	assert_int_equal(sysfs_read_value(dir, buf, &value, &why), -EINVAL);
	assert_string_equal(why, "not a regular file");

	free(buf);
}

/*
 * RDMA devices as the kernel shows them: links in class/infiniband to the
 * devices' directories, each with a `device` link to its PCI function.
 * Created in the order given, which glob(3) with GLOB_NOSORT may keep.
 */
static void make_rdma(const char *dir, const char *name, unsigned fn)
{
	char pci[PATH_MAX], ib[PATH_MAX], rel[PATH_MAX], target[PATH_MAX];

	fake_fmt(pci, sizeof(pci), "devices/pci0000:00/0000:00:0%u.0", fn);
	fake_fmt(ib, sizeof(ib), "%s/infiniband/%s", pci, name);
	fake_fmt(rel, sizeof(rel), "class/infiniband/%s", name);
	fake_fmt(target, sizeof(target), "../../%s", ib);
	fake_symlink(dir, rel, target);
	/* device -> the PCI function directory, two levels up. */
	fake_fmt(rel, sizeof(rel), "%s/device", ib);
	fake_symlink(dir, rel, "../..");
	fake_fmt(rel, sizeof(rel), "%s/numa_node", pci);
	fake_put(dir, rel, fn % 2 ? "1\n" : "0\n");
}

static void put_attr(const char *dir, const char *name, const char *attr,
		     const char *content)
{
	char rel[PATH_MAX];

	fake_fmt(rel, sizeof(rel), "class/infiniband/%s/%s", name, attr);
	fake_put(dir, rel, content);
}

static const struct extres_param *rdma_params(const char *pattern,
					      uint32_t *ret_count)
{
	static struct extres_param items[2];

	items[0] = (struct extres_param)SCALAR("glob", NULL, 4, 9);
	items[0].value = pattern;
	items[1] = (struct extres_param)SCALAR(
		"attributes",
		"node_guid, fw_ver,ports/1/state,device/numa_node", 5, 15);
	*ret_count = 2;
	return items;
}

/* Natural order of names, built-in properties, trimming, attributes in a
 * subdirectory and through a link. */
static void test_rdma(void **state)
{
	static const char *const names[] = { "mlx5_10", "mlx5_2", "mlx5_1" };
	const char *dir = *state;
	char pattern[PATH_MAX], path[3][PATH_MAX], log[4096];
	const struct extres_param *items;
	struct extres_infos *infos;
	uint32_t count;
	size_t i;

	for (i = 0; i < 3; i++) {
		make_rdma(dir, names[i], (unsigned)i);
		put_attr(dir, names[i], "node_guid", "0c42:a103:0016:5d2a\n");
		put_attr(dir, names[i], "fw_ver", " \t28.39.1002 \n");
		put_attr(dir, names[i], "ports/1/state", "4: ACTIVE\n");
	}
	fake_path(pattern, dir, "class/infiniband/*");
	fake_path(path[0], dir, "class/infiniband/mlx5_1");
	fake_path(path[1], dir, "class/infiniband/mlx5_2");
	fake_path(path[2], dir, "class/infiniband/mlx5_10");
	items = rdma_params(pattern, &count);
	infos = discover("/etc/extres", items, count, log, sizeof(log));

	assert_string_equal(log, "");
	assert_int_equal(infos->n, 3);
	/* mlx5_1 sits on PCI function 2, mlx5_10 on function 0. */
	EXPECT_PROPS(&infos->items[0], "index", "0", "name", "mlx5_1", "path",
		     path[0], "node_guid", "0c42:a103:0016:5d2a", "fw_ver",
		     "28.39.1002", "ports.1.state", "4: ACTIVE",
		     "device.numa_node", "0");
	EXPECT_PROPS(&infos->items[1], "index", "1", "name", "mlx5_2", "path",
		     path[1], "node_guid", "0c42:a103:0016:5d2a", "fw_ver",
		     "28.39.1002", "ports.1.state", "4: ACTIVE",
		     "device.numa_node", "1");
	EXPECT_PROPS(&infos->items[2], "index", "2", "name", "mlx5_10", "path",
		     path[2], "node_guid", "0c42:a103:0016:5d2a", "fw_ver",
		     "28.39.1002", "ports.1.state", "4: ACTIVE",
		     "device.numa_node", "0");
	extres_infos_free(infos);
}

/* An attribute one device cannot give is absent there, with a warning that
 * names the device and the attribute; the rest is untouched. */
static void test_absent_attributes(void **state)
{
	const char *dir = *state;
	char pattern[PATH_MAX], path[3][PATH_MAX], want[8192], log[8192];
	char big[SYSFS_VALUE_MAX + 2];
	const struct extres_param *items;
	struct extres_infos *infos;
	uint32_t count;

	make_rdma(dir, "mlx5_0", 0);
	make_rdma(dir, "mlx5_1", 1);
	make_rdma(dir, "mlx5_2", 2);
	fake_path(path[0], dir, "class/infiniband/mlx5_0");
	fake_path(path[1], dir, "class/infiniband/mlx5_1");
	fake_path(path[2], dir, "class/infiniband/mlx5_2");
	/* mlx5_0: everything. */
	put_attr(dir, "mlx5_0", "node_guid", "0c42:a103:0016:5d2a\n");
	put_attr(dir, "mlx5_0", "fw_ver", "28.39.1002\n");
	put_attr(dir, "mlx5_0", "ports/1/state", "4: ACTIVE\n");
	/* mlx5_1: no fw_ver, an empty node_guid, no ports. */
	put_attr(dir, "mlx5_1", "node_guid", " \n");
	/* mlx5_2: a value over two lines, one longer than a page, and a
	 * directory where a file should be. */
	put_attr(dir, "mlx5_2", "node_guid", "0c42:a103\n0016:5d2a\n");
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put_attr(dir, "mlx5_2", "fw_ver", big);
	put_attr(dir, "mlx5_2", "ports/1/state/x", "4: ACTIVE\n");

	fake_path(pattern, dir, "class/infiniband/mlx5_*");
	items = rdma_params(pattern, &count);
	infos = discover("/etc/extres", items, count, log, sizeof(log));

	fake_fmt(
		want, sizeof(want),
		WARN
		"device mlx5_1: attribute node_guid (%s/node_guid): empty; property node_guid left out\n" WARN
		"device mlx5_1: attribute fw_ver (%s/fw_ver): No such file or directory; property fw_ver left out\n" WARN
		"device mlx5_1: attribute ports/1/state (%s/ports/1/state): No such file or directory; property ports.1.state left out\n" WARN
		"device mlx5_2: attribute node_guid (%s/node_guid): more than one line; property node_guid left out\n" WARN
		"device mlx5_2: attribute fw_ver (%s/fw_ver): longer than 4096 bytes; property fw_ver left out\n" WARN
		"device mlx5_2: attribute ports/1/state (%s/ports/1/state): not a regular file; property ports.1.state left out\n",
		path[1], path[1], path[1], path[2], path[2], path[2]);
	assert_string_equal(log, want);
	assert_int_equal(infos->n, 3);
	EXPECT_PROPS(&infos->items[0], "index", "0", "name", "mlx5_0", "path",
		     path[0], "node_guid", "0c42:a103:0016:5d2a", "fw_ver",
		     "28.39.1002", "ports.1.state", "4: ACTIVE",
		     "device.numa_node", "0");
	EXPECT_PROPS(&infos->items[1], "index", "1", "name", "mlx5_1", "path",
		     path[1], "device.numa_node", "1");
	EXPECT_PROPS(&infos->items[2], "index", "2", "name", "mlx5_2", "path",
		     path[2], "device.numa_node", "0");
	extres_infos_free(infos);
}

/* No match is no error here (the core says "wanted N, found 0"), whether
 * the last directory is empty or not there at all. */
static void test_no_match(void **state)
{
	const char *dir = *state;
	char pattern[PATH_MAX], log[4096];
	struct extres_param items[] = { SCALAR("glob", NULL, 4, 9) };
	struct extres_infos *infos;

	fake_path(pattern, dir, "class/infiniband");
	fake_mkdirs(pattern);
	fake_path(pattern, dir, "class/infiniband/*");
	items[0].value = pattern;
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);

	fake_path(pattern, dir, "class/nothing/here/*");
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
}

/* A directory that cannot be read would hide devices: discovery fails and
 * says which pattern and why. */
static void test_glob_aborted(void **state)
{
	const char *dir = *state;
	char pattern[PATH_MAX], loop[PATH_MAX], want[2 * PATH_MAX + 200];
	struct extres_param items[] = { SCALAR("glob", NULL, 4, 9) };
	struct fake_run run;

	fake_symlink(dir, "class/loop", "loop");
	fake_path(loop, dir, "class/loop");
	fake_path(pattern, dir, "class/loop/*");
	items[0].value = pattern;
	fake_run(SYSFS_SO, "nic", "/etc/extres", items, N(items), &run);
	assert_int_equal(run.open_r, 0);
	assert_int_equal(run.discover_r, -EIO);
	assert_null(run.infos);
	fake_fmt(
		want, sizeof(want),
		PREFIX
		"param.glob '%s': cannot read %s: Too many levels of symbolic links",
		pattern, loop);
	assert_string_equal(run.err.msg, want);
	assert_string_equal(run.log, "");
}

/* A relative pattern starts at the config file's directory, whose own
 * glob metacharacters match only themselves; attributes as a sequence; a
 * trailing '/' keeps directories only and is not part of the name. */
static void test_relative_sequence(void **state)
{
	const char *dir = *state;
	char cfg[PATH_MAX], path[2][PATH_MAX], log[4096];
	static const struct extres_param attrs[] = {
		SCALAR(NULL, " mtu ", 6, 7),
		SCALAR(NULL, "", 7, 7),
		SCALAR(NULL, "address", 8, 7),
	};
	static const struct extres_param items[] = {
		SCALAR("glob", "class/net/*/", 4, 9),
		SEQUENCE("attributes", attrs, 5, 3),
	};
	struct extres_infos *infos;

	fake_path(cfg, dir, "etc[1]");
	fake_put(cfg, "class/net/eth10/mtu", "9000\n");
	fake_put(cfg, "class/net/eth10/address", "0c:42:a1:16:5d:2a\n");
	fake_put(cfg, "class/net/eth9/mtu", "1500\n");
	fake_put(cfg, "class/net/eth9/address", "0c:42:a1:16:5d:2b\n");
	fake_put(cfg, "class/net/not-a-device", "x\n");
	/* Would match if '[1]' were taken as a pattern. */
	fake_put(dir, "etc1/class/net/eth0/mtu", "1500\n");
	fake_path(path[0], cfg, "class/net/eth9/");
	fake_path(path[1], cfg, "class/net/eth10/");

	infos = discover(cfg, items, N(items), log, sizeof(log));
	assert_string_equal(log, "");
	assert_int_equal(infos->n, 2);
	EXPECT_PROPS(&infos->items[0], "index", "0", "name", "eth9", "path",
		     path[0], "mtu", "1500", "address", "0c:42:a1:16:5d:2b");
	EXPECT_PROPS(&infos->items[1], "index", "1", "name", "eth10", "path",
		     path[1], "mtu", "9000", "address", "0c:42:a1:16:5d:2a");
	extres_infos_free(infos);
}

/* Each discovery looks again: a device that appears is found. */
static void test_discover_again(void **state)
{
	const char *dir = *state;
	char pattern[PATH_MAX], log[4096];
	struct extres_param items[] = { SCALAR("glob", NULL, 4, 9) };
	struct extres_infos *infos;

	fake_put(dir, "fpga/fpga0/name", "x\n");
	fake_path(pattern, dir, "fpga/*");
	items[0].value = pattern;
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_int_equal(infos->n, 1);
	extres_infos_free(infos);
	fake_put(dir, "fpga/fpga1/name", "y\n");
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_int_equal(infos->n, 2);
	assert_string_equal(extres_info_get(&infos->items[1], "name"), "fpga1");
	assert_string_equal(extres_info_get(&infos->items[1], "index"), "1");
	extres_infos_free(infos);
}

static void expect_attributes_error(const char *list, const char *msg)
{
	const struct extres_param items[] = {
		SCALAR("glob", "/sys/class/infiniband/*", 4, 9),
		SCALAR("attributes", list, 5, 15),
	};

	expect_open_error(items, N(items), msg);
}

static void test_open_errors(void **state)
{
	static const struct extres_param none[] = {
		SCALAR("attributes", "fw_ver", 5, 15),
	};
	static const struct extres_param empty[] = {
		SCALAR("glob", "", 4, 9),
	};
	static const struct extres_param one[] = { SCALAR(NULL, "/sys/a", 4,
							  9) };
	static const struct extres_param seq[] = { SEQUENCE("glob", one, 4,
							    9) };
	static const struct extres_param flat[] = {
		SCALAR("glob", "/sys/class/infiniband/*", 4, 9),
		SCALAR("attributes.fw", "fw_ver", 6, 9),
	};
	static const struct extres_param item_map[] = { MAPPING(NULL, one, 6,
								9) };
	static const struct extres_param attr_seq[] = {
		SCALAR("glob", "/sys/class/infiniband/*", 4, 9),
		SEQUENCE("attributes", item_map, 5, 3),
	};

	expect_open_error(
		none, N(none),
		PREFIX FAKE_CONFIG
		": param.glob is not set; it finds the devices, e.g. /sys/class/infiniband/*");
	expect_open_error(
		NULL, 0,
		PREFIX FAKE_CONFIG
		": param.glob is not set; it finds the devices, e.g. /sys/class/infiniband/*");
	expect_open_error(
		empty, N(empty),
		PREFIX FAKE_CONFIG
		":4:9: param.glob must be a non-empty pattern such as /sys/class/infiniband/*");
	expect_open_error(
		seq, N(seq),
		PREFIX FAKE_CONFIG
		":4:9: param.glob must be a non-empty pattern such as /sys/class/infiniband/*");
	expect_open_error(
		flat, N(flat),
		PREFIX FAKE_CONFIG
		":6:9: param.attributes must be a list, not a mapping (found param.attributes.fw)");
	expect_open_error(
		attr_seq, N(attr_seq),
		PREFIX FAKE_CONFIG
		":6:9: param.attributes[0] must be an attribute name");

	expect_attributes_error(
		"fw_ver,/sys/x", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute '/sys/x' is an absolute path; attributes are relative to each match");
	expect_attributes_error(
		"ports//state", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'ports//state' has an empty path component");
	expect_attributes_error(
		"ports/1/", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'ports/1/' has an empty path component");
	expect_attributes_error(
		"../mlx5_1/fw_ver", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute '../mlx5_1/fw_ver' has a '.' or '..' path component");
	expect_attributes_error(
		"device/./numa_node", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'device/./numa_node' has a '.' or '..' path component");
	expect_attributes_error(
		".hidden", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute '.hidden' starts with '.', and would make a hidden property name");
	expect_attributes_error(
		"fw ver", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'fw ver' contains whitespace or a control character");
	expect_attributes_error(
		"fw_ver, name", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'name' would replace the built-in property 'name' (index, name and path are given for every device)");
	expect_attributes_error(
		"index", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attribute 'index' would replace the built-in property 'index' (index, name and path are given for every device)");
	expect_attributes_error(
		"device/numa_node,fw_ver,device.numa_node", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attributes 'device/numa_node' and 'device.numa_node' both make the property 'device.numa_node'");
	expect_attributes_error(
		"fw_ver,fw_ver", PREFIX FAKE_CONFIG
		":5:15: param.attributes: attributes 'fw_ver' and 'fw_ver' both make the property 'fw_ver'");
}

/* An unknown key is a warning naming it; the driver carries on. */
static void test_unknown_key(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("glob", "/nonexistent/extres-test/*", 4, 9),
		SCALAR("attribute", "fw_ver", 5, 14),
	};
	char log[4096];
	struct extres_infos *infos;

	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_string_equal(log, WARN FAKE_CONFIG
			    ":5:14: unknown key param.attribute ignored\n");
	assert_int_equal(infos->n, 0);
	extres_infos_free(infos);
}

/* This machine's network interfaces: every one found, in natural order, with
 * exactly what plain reads of its files give. */
static void test_real_sys_class_net(void **state)
{
	static const struct extres_param items[] = {
		SCALAR("glob", "/sys/class/net/*", 4, 9),
		SCALAR("attributes", "address,mtu", 5, 15),
	};
	static const char *const attrs[] = { "address", "mtu" };
	struct extres_infos *infos;
	char log[8192], path[PATH_MAX], want[32];
	int found_lo = 0;
	size_t i, j;

	if (access("/sys/class/net/lo", F_OK) < 0)
		skip();
	infos = discover("/etc/extres", items, N(items), log, sizeof(log));
	assert_true(infos->n >= 1);
	for (i = 0; i < infos->n; i++) {
		const struct extres_info *info = &infos->items[i];
		const char *name = extres_info_get(info, "name");

		assert_non_null(name);
		fake_fmt(want, sizeof(want), "%zu", i);
		assert_string_equal(extres_info_get(info, "index"), want);
		fake_fmt(path, sizeof(path), "/sys/class/net/%s", name);
		assert_string_equal(extres_info_get(info, "path"), path);
		if (i > 0)
			assert_true(sysfs_natcmp(extres_info_get(
							 &infos->items[i - 1],
							 "name"),
						 name) < 0);
		for (j = 0; j < 2; j++) {
			char file[PATH_MAX], buf[4200] = "";
			const char *got = extres_info_get(info, attrs[j]);
			size_t len = 0;
			FILE *f;

			fake_fmt(file, sizeof(file), "%s/%s", path, attrs[j]);
			f = fopen(file, "re");
			if (f) {
				len = fread(buf, 1, sizeof(buf) - 1, f);
				fclose(f);
			}
			while (len > 0 &&
			       (buf[len - 1] == '\n' || buf[len - 1] == ' '))
				len--;
			buf[len] = '\0';
			if (len == 0)
				assert_null(got);
			else
				assert_string_equal(got, buf);
		}
		if (strcmp(name, "lo") == 0) {
			found_lo = 1;
			assert_string_equal(extres_info_get(info, "mtu"),
					    "65536");
			assert_string_equal(extres_info_get(info, "address"),
					    "00:00:00:00:00:00");
		}
	}
	assert_true(found_lo);
	extres_infos_free(infos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_natcmp),
		cmocka_unit_test(test_natcmp_pci),
		cmocka_unit_test_setup_teardown(test_pci_order, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_read_value, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_rdma, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_absent_attributes,
						fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_no_match, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_glob_aborted, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(test_relative_sequence,
						fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_discover_again, fake_setup,
						fake_teardown),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_real_sys_class_net),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
