/* SPDX-License-Identifier: MIT */
/* Unit tests for drivers/script_output.c: parsing a discovery script's stdout. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "script_output.h"

/* The resource the parser is told the output is for. */
#define RESOURCE "gpu"

/* What Spark's getGpusResources.sh prints, with exit status 0, when
 * nvidia-smi cannot reach the driver. */
#define SPARK_DRIVER_DOWN \
	"{\"name\": \"gpu\", \"addresses\":[\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\",\"\"]}\n"

/* Parse `len` bytes and expect exactly the `n` items given. */
static void expect_items(const char *buf, size_t len, size_t n, ...)
{
	struct script_output out = { 0 };
	char why[256] = "";
	va_list ap;
	size_t i;

	assert_int_equal(
		script_output_parse(buf, len, RESOURCE, &out, why, sizeof(why)),
		0);
	assert_string_equal(why, "");
	assert_int_equal(out.n, n);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		assert_string_equal(out.items[i], va_arg(ap, const char *));
	va_end(ap);
	script_output_clear(&out);
	assert_int_equal(out.n, 0);
	assert_null(out.items);
}

#define EXPECT(str, ...) expect_items(str, sizeof(str) - 1, __VA_ARGS__)

/* Parse and expect failure with errno `err` and the exact reason; *ret must
 * stay untouched. */
static void expect_error_len(const char *buf, size_t len, int err,
			     const char *reason)
{
	char *sentinel_items[1] = { NULL };
	struct script_output out = { .n = 42, .items = sentinel_items };
	char why[512] = "";

	assert_int_equal(
		script_output_parse(buf, len, RESOURCE, &out, why, sizeof(why)),
		err);
	assert_string_equal(why, reason);
	assert_int_equal(out.n, 42);
	assert_ptr_equal(out.items, sentinel_items);
}

#define EXPECT_ERROR(str, reason) \
	expect_error_len(str, sizeof(str) - 1, -EINVAL, reason)

static void test_flink_plain(void **state)
{
	EXPECT("0,1,2", 3, "0", "1", "2");
	EXPECT("0,1,2\n", 3, "0", "1", "2");
	EXPECT("7", 1, "7");
}

static void test_flink_whitespace_and_empty_items(void **state)
{
	EXPECT(" 0 , 1 ,, 2 \n", 3, "0", "1", "2");
	EXPECT("\t0,\v1\f,  ,2", 3, "0", "1", "2");
	EXPECT(",,0,,", 1, "0");
}

#define ONE_LINE \
	" (the indexes must be on the first line, and nothing else may follow)"

/* Flink warns and keeps the first line; here a second one is an error. */
static void test_flink_second_line(void **state)
{
	EXPECT_ERROR(
		"0,1\nignored second line",
		"line 2 of the output is not blank: \"ignored second line\"" ONE_LINE);
	EXPECT_ERROR("0,1\n2,3\n",
		     "line 2 of the output is not blank: \"2,3\"" ONE_LINE);
	/* Lines end as in Java's readLine(): at a lone '\r' too, and at
	 * "\r\n" once. */
	EXPECT_ERROR("0,1\r2,3",
		     "line 2 of the output is not blank: \"2,3\"" ONE_LINE);
	EXPECT_ERROR("0,1\r\n\r\n \t x y \n\n",
		     "line 3 of the output is not blank: \"x y\"" ONE_LINE);
	EXPECT_ERROR(
		"0\n\x1b[2J",
		"line 2 of the output is not blank: \"\\x1b[2J\"" ONE_LINE);
	/* Blank lines after the first do no harm. */
	EXPECT("0,1\n\n \t\n\r\n", 2, "0", "1");
}

static void test_flink_trailing_comma_and_crlf(void **state)
{
	EXPECT("0,1,", 2, "0", "1");
	EXPECT("0,1\r\n", 2, "0", "1");
	EXPECT("0 ,1 ,\r\n", 2, "0", "1");
}

static void test_flink_keeps_order_and_text(void **state)
{
	/* Indexes are text: not renumbered, not sorted, not normalised. */
	EXPECT("3,01,GPU-8f2c,0000:3b:00.0", 4, "3", "01", "GPU-8f2c",
	       "0000:3b:00.0");
	EXPECT("a/b,c", 2, "a/b", "c");
}

/* A message printed where the indexes belong, by a script that exits 0. */
static void test_whitespace_inside(void **state)
{
	EXPECT_ERROR("a b,c", "index \"a b\" contains whitespace");
	EXPECT_ERROR("0, 1 2 ,3", "index \"1 2\" contains whitespace");
	EXPECT_ERROR("No devices were found",
		     "index \"No devices were found\" contains whitespace");
	/* Spark's addresses are taken as written: not trimmed. */
	EXPECT_ERROR("{\"addresses\":[\"0\", \"1 \"]}",
		     "index \"1 \" contains whitespace");
	EXPECT_ERROR("{\"addresses\":[\" 0\"]}",
		     "index \" 0\" contains whitespace");
	EXPECT_ERROR("{\"addresses\":[\" \"]}",
		     "index \" \" contains whitespace");
}

/* At most SCRIPT_OUTPUT_ITEM_MAX bytes, in both forms. */
static void test_long_index(void **state)
{
	char buf[400], item[300], want[SCRIPT_OUTPUT_ITEM_MAX + 1];
	size_t n;

	memset(item, 'x', sizeof(item));
	memset(want, 'x', SCRIPT_OUTPUT_ITEM_MAX);
	want[SCRIPT_OUTPUT_ITEM_MAX] = '\0';
	expect_items(item, SCRIPT_OUTPUT_ITEM_MAX, 1, want);
	expect_error_len(
		item, SCRIPT_OUTPUT_ITEM_MAX + 1, -EINVAL,
		"index \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"... is longer than 255 bytes");
	n = (size_t)snprintf(buf, sizeof(buf),
			     "{\"addresses\": [\"0\", \"%.256s\"]}", item);
	expect_error_len(
		buf, n, -EINVAL,
		"index \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"... is longer than 255 bytes");
}

static void test_flink_not_nul_terminated(void **state)
{
	static const char buf[] = { '0', ',', '1', 'X', 'Y' };

	expect_items(buf, 3, 2, "0", "1");
	expect_items(buf, 5, 2, "0", "1XY");
}

static void test_empty_output(void **state)
{
	EXPECT_ERROR("", "no indexes in output");
	expect_error_len(NULL, 0, -EINVAL, "no indexes in output");
	EXPECT_ERROR("   \t ", "no indexes in output");
	EXPECT_ERROR("\n", "no indexes in output");
	EXPECT_ERROR(" , ,,\n", "no indexes in output");
	EXPECT_ERROR("\r\n \n\t\n", "no indexes in output");
}

/* Indexes on a later line are not taken for the first line's. */
static void test_first_line_empty(void **state)
{
	EXPECT_ERROR("\n0,1\n",
		     "line 2 of the output is not blank: \"0,1\"" ONE_LINE);
	EXPECT_ERROR(" \t\r\n\n0,1",
		     "line 3 of the output is not blank: \"0,1\"" ONE_LINE);
	EXPECT_ERROR("Found 2 GPUs:\n0,1",
		     "line 2 of the output is not blank: \"0,1\"" ONE_LINE);
}

static void test_spark_strings(void **state)
{
	EXPECT("{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]}", 2, "0", "1");
	EXPECT("{\"addresses\": [\"GPU-1\", \"GPU-0\"]}\n", 2, "GPU-1",
	       "GPU-0");
}

static void test_spark_numbers(void **state)
{
	EXPECT("{\"addresses\":[0, 1, 2]}", 3, "0", "1", "2");
	EXPECT("{\"addresses\":[3, \"1\", -0, 1.5e3]}", 4, "3", "1", "-0",
	       "1.5e3");
}

static void test_spark_with_name_multiline(void **state)
{
	EXPECT("\n\t {\n"
	       "  \"name\": \"gpu\",\n"
	       "\t\"addresses\": [\n"
	       "    \"3\",\n"
	       "    \"1\"\n"
	       "  ]\n"
	       "}\n",
	       2, "3", "1");
	/* The last "addresses" wins. */
	EXPECT("{\"name\": \"gpu\", \"addresses\": [\"9\"], \"addresses\": [\"4\"]}",
	       1, "4");
}

/* "name" may be left out; given, it must be this resource's. */
static void test_spark_name(void **state)
{
	static const char fpga[] = "{\"name\": \"fpga\", \"addresses\": [1]}";
	struct script_output out = { 0 };
	char why[256] = "";

	EXPECT("{\"addresses\": [\"0\"]}", 1, "0");
	EXPECT_ERROR(
		"{\"name\": \"fpga\", \"addresses\": [\"0\"]}",
		"JSON output is for resource \"fpga\", not for this resource \"gpu\"");
	EXPECT_ERROR(
		"{\"name\": \"GPU\", \"addresses\": [\"0\"]}",
		"JSON output is for resource \"GPU\", not for this resource \"gpu\"");
	EXPECT_ERROR(
		"{\"name\": \"gpu\\n\", \"addresses\": [\"0\"]}",
		"JSON output is for resource \"gpu\\x0a\", not for this resource \"gpu\"");
	/* The last "name" wins, as for "addresses". */
	EXPECT_ERROR(
		"{\"name\": \"gpu\", \"addresses\": [\"0\"], \"name\": \"\"}",
		"JSON output is for resource \"\", not for this resource \"gpu\"");
	EXPECT_ERROR("{\"name\": [1], \"addresses\": [\"0\"]}",
		     "\"name\" in JSON output is not a string");
	EXPECT_ERROR("{\"name\": 5, \"addresses\": [\"0\"]}",
		     "\"name\" in JSON output is not a string");
	EXPECT_ERROR("{\"name\": null, \"addresses\": [\"0\"]}",
		     "\"name\" in JSON output is not a string");

	/* Without a resource to compare with, any string will do. */
	assert_int_equal(script_output_parse(fpga, sizeof(fpga) - 1, NULL, &out,
					     why, sizeof(why)),
			 0);
	assert_int_equal(out.n, 1);
	script_output_clear(&out);
}

static void test_spark_missing_addresses(void **state)
{
	EXPECT_ERROR("{\"name\":\"gpu\"}", "JSON output has no \"addresses\"");
	EXPECT_ERROR("{}", "JSON output has no \"addresses\"");
	EXPECT_ERROR("{\"Addresses\":[\"0\"]}",
		     "JSON output has no \"addresses\"");
}

static void test_spark_addresses_not_sequence(void **state)
{
	EXPECT_ERROR("{\"addresses\":\"0,1\"}",
		     "\"addresses\" in JSON output is not an array");
	EXPECT_ERROR("{\"addresses\":{\"0\":1}}",
		     "\"addresses\" in JSON output is not an array");
	EXPECT_ERROR("{\"addresses\":null}",
		     "\"addresses\" in JSON output is not an array");
}

static void test_spark_empty_addresses(void **state)
{
	EXPECT_ERROR("{\"name\":\"gpu\",\"addresses\":[]}",
		     "no indexes in output");
	/* Spark's list has no empty items to skip, unlike Flink's. */
	EXPECT_ERROR("{\"addresses\":[\"0\", \"\"]}",
		     "\"addresses\" item 2 is empty");
	EXPECT_ERROR("{\"addresses\":[\"\"]}", "\"addresses\" item 1 is empty");
}

/* Spark's own script when the driver is down: an error, not a device. */
static void test_spark_driver_down(void **state)
{
	EXPECT_ERROR(
		SPARK_DRIVER_DOWN,
		"index \"NVIDIA-SMI has failed because it couldn't communicate with the N\"... contains whitespace");
}

static void test_spark_nested_garbage(void **state)
{
	EXPECT_ERROR("{\"addresses\":[[\"0\"]]}",
		     "\"addresses\" item 1 is not a string or number");
	EXPECT_ERROR("{\"addresses\":[\"0\", {\"a\":1}]}",
		     "\"addresses\" item 2 is not a string or number");
	EXPECT_ERROR("{\"addresses\":[\"0\", \"1\", null]}",
		     "\"addresses\" item 3 is not a string or number");
	EXPECT_ERROR("{\"addresses\":[true]}",
		     "\"addresses\" item 1 is not a string or number");
	EXPECT_ERROR("{\"addresses\":[gpu0]}",
		     "\"addresses\" item 1 is not a string or number");
}

static void test_spark_invalid_json(void **state)
{
	EXPECT_ERROR(
		"{\"addresses\":[\"0\"",
		"invalid JSON output: did not find expected ',' or ']' at the end of the output");
	EXPECT_ERROR(
		"{\"addresses\":[\"0\"]",
		"invalid JSON output: did not find expected ',' or '}' at the end of the output");
	EXPECT_ERROR(
		"{\"addresses\":[\"0\" \"1\"]}",
		"invalid JSON output: did not find expected ',' or ']' at line 1, column 19");
	/* Positions count from the start of the output, not from the '{'. */
	EXPECT_ERROR(
		"\n\n  {\"addresses\":[\"0\" \"1\"]}",
		"invalid JSON output: did not find expected ',' or ']' at line 3, column 21");
	EXPECT_ERROR(
		"{\"addresses\":\n  [\"0\" \"1\"]}",
		"invalid JSON output: did not find expected ',' or ']' at line 2, column 8");
	EXPECT_ERROR(
		"{\"addresses\":[\"0\"]} trailing",
		"invalid JSON output: did not find expected <document start> at line 1, column 21");
	EXPECT_ERROR("{\"addresses\":[\"0\"]}\n---\n{}",
		     "JSON output has text after the object");
	EXPECT_ERROR(
		"{\"addresses\":[\"\xff\"]}",
		"invalid JSON output: invalid leading UTF-8 octet at byte 16");
	EXPECT_ERROR(
		"\n {\"addresses\":[\"\x01\"]}",
		"invalid JSON output: control characters are not allowed at byte 18");
}

static void test_spark_nesting_limit(void **state)
{
	char buf[256];
	size_t o;

	/* 32 levels are parsed (and found wanting), 33 are refused early. */
	o = (size_t)sprintf(buf, "{\"addresses\":");
	memset(buf + o, '[', 31);
	expect_error_len(
		buf, o + 31, -EINVAL,
		"invalid JSON output: did not find expected node content at the end of the output");
	memset(buf + o, '[', 32);
	expect_error_len(buf, o + 32, -EINVAL,
			 "invalid JSON output: nested more than 32 deep");
	/* Brackets inside strings, escaped quotes included, do not count. */
	o = (size_t)sprintf(buf, "{\"addresses\":[\"\\\"");
	memset(buf + o, '{', 40);
	o += 40;
	o += (size_t)sprintf(buf + o, "\"]}");
	expect_items(buf, o, 1, "\"{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{");
}

static void test_control_characters(void **state)
{
	static const char nul[] = { '0', '\0', ',', '1' };

	EXPECT_ERROR("0,1\a,2",
		     "index \"1\\x07\" contains a control character");
	EXPECT_ERROR("0,\x1b[31m1",
		     "index \"\\x1b[31m1\" contains a control character");
	EXPECT_ERROR("a\tb", "index \"a\\x09b\" contains a control character");
	EXPECT_ERROR("x\x7f", "index \"x\\x7f\" contains a control character");
	expect_error_len(nul, sizeof(nul), -EINVAL,
			 "index \"0\\x00\" contains a control character");
	EXPECT_ERROR("{\"addresses\":[\"a\\u0001\"]}",
		     "index \"a\\x01\" contains a control character");
	EXPECT_ERROR("{\"addresses\":[\"a\\nb\"]}",
		     "index \"a\\x0ab\" contains a control character");
	EXPECT_ERROR("{\"addresses\":[\"a\\u0000b\"]}",
		     "index \"a\\x00b\" contains a control character");
}

static void test_quote_escapes_and_truncates(void **state)
{
	char buf[200], why[512];
	struct script_output out = { 0 };

	memset(buf, 'a', 100);
	buf[100] = '\x01';
	assert_int_equal(
		script_output_parse(buf, 101, RESOURCE, &out, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(
		why,
		"index \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"... contains a control character");
	EXPECT_ERROR("\"q\\\x02",
		     "index \"\\\"q\\\\\\x02\" contains a control character");
}

/* A cut never leaves half a UTF-8 character in the log. */
static void test_quote_utf8_cut(void **state)
{
	char q[SCRIPT_OUTPUT_QUOTED_SIZE(8)];

	script_output_quote(q, "\xc3\xa9\xc3\xa9", 4, 3);
	assert_string_equal(q, "\"\xc3\xa9\"...");
	script_output_quote(q, "a\xe2\x82\xac", 4, 3);
	assert_string_equal(q, "\"a\"...");
	script_output_quote(q, "\xc3\xa9\xc3\xa9", 4, 4);
	assert_string_equal(q, "\"\xc3\xa9\xc3\xa9\"");
	/* Not UTF-8 at all: cut where the bound says. */
	script_output_quote(q, "\x80\x80\x80\x80\x80\x80", 6, 5);
	assert_string_equal(q, "\"\x80\x80\x80\x80\x80\"...");
	script_output_quote(q, "", 0, 5);
	assert_string_equal(q, "\"\"");
}

static void test_duplicates(void **state)
{
	EXPECT_ERROR("0,1,0", "duplicate index \"0\"");
	EXPECT_ERROR(" 1 ,1", "duplicate index \"1\"");
	EXPECT_ERROR("{\"addresses\":[\"1\", 1]}", "duplicate index \"1\"");
	/* Exact match: 1 is not 10 nor 01. */
	EXPECT("1,10,01", 3, "1", "10", "01");
}

static void test_large_outputs(void **state)
{
	size_t len = 64 * 1024, i, n = 0;
	char *buf = malloc(len + 16), why[256];
	struct script_output out = { 0 };
	size_t o = 0;

	assert_non_null(buf);
	while (o + 8 < len)
		o += (size_t)sprintf(buf + o, "%zu,", n++);
	assert_int_equal(
		script_output_parse(buf, o, RESOURCE, &out, why, sizeof(why)),
		0);
	assert_int_equal(out.n, n);
	for (i = 0; i < n; i += 997) {
		char expect[24];

		sprintf(expect, "%zu", i);
		assert_string_equal(out.items[i], expect);
	}
	script_output_clear(&out);

	/* Many equal items: sorting keeps the duplicate check fast. */
	for (i = 0; i + 1 < len; i += 2)
		memcpy(buf + i, "7,", 2);
	assert_int_equal(
		script_output_parse(buf, len, RESOURCE, &out, why, sizeof(why)),
		-EINVAL);
	assert_string_equal(why, "duplicate index \"7\"");
	free(buf);
}

static void test_no_why_buffer(void **state)
{
	struct script_output out = { 0 };

	assert_int_equal(script_output_parse("", 0, RESOURCE, &out, NULL, 0),
			 -EINVAL);
	assert_int_equal(script_output_parse("0,0", 3, RESOURCE, &out, NULL, 0),
			 -EINVAL);
	assert_int_equal(script_output_parse("{", 1, RESOURCE, &out, NULL, 0),
			 -EINVAL);
	assert_int_equal(script_output_parse("0", 1, RESOURCE, &out, NULL, 0),
			 0);
	assert_int_equal(out.n, 1);
	script_output_clear(&out);
	script_output_clear(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flink_plain),
		cmocka_unit_test(test_flink_whitespace_and_empty_items),
		cmocka_unit_test(test_flink_second_line),
		cmocka_unit_test(test_flink_trailing_comma_and_crlf),
		cmocka_unit_test(test_flink_keeps_order_and_text),
		cmocka_unit_test(test_whitespace_inside),
		cmocka_unit_test(test_long_index),
		cmocka_unit_test(test_flink_not_nul_terminated),
		cmocka_unit_test(test_empty_output),
		cmocka_unit_test(test_first_line_empty),
		cmocka_unit_test(test_spark_strings),
		cmocka_unit_test(test_spark_numbers),
		cmocka_unit_test(test_spark_with_name_multiline),
		cmocka_unit_test(test_spark_name),
		cmocka_unit_test(test_spark_missing_addresses),
		cmocka_unit_test(test_spark_addresses_not_sequence),
		cmocka_unit_test(test_spark_empty_addresses),
		cmocka_unit_test(test_spark_driver_down),
		cmocka_unit_test(test_spark_nested_garbage),
		cmocka_unit_test(test_spark_invalid_json),
		cmocka_unit_test(test_spark_nesting_limit),
		cmocka_unit_test(test_control_characters),
		cmocka_unit_test(test_quote_escapes_and_truncates),
		cmocka_unit_test(test_quote_utf8_cut),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_large_outputs),
		cmocka_unit_test(test_no_why_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
