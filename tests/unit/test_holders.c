/* SPDX-License-Identifier: MIT */
/* The pure parts of the holders view: classification, formats, lease ids,
 * and /proc/PID/stat parsing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc/lease_line.h"
#include "base/json.h"
#include "views/holders.h"
#include "views/json_view.h"
#include "os/proc.h"

static struct extres_coord_entry entry(const char *line)
{
	struct extres_coord_entry e;

	assert_int_equal(extres_coord_parse_line(line, strlen(line), &e), 0);
	assert_true(e.parsed);
	return e;
}

static void test_kind(void **state)
{
	struct extres_coord_entry ours = entry("0 100\t555");
	struct extres_coord_entry script = entry("0 100");
	struct extres_coord_entry reused = entry("0 100\t556");
	struct extres_coord_entry lease = entry("1 200\t7\tlease=200-7");
	struct extres_coord_entry flink = entry("2 300");

	assert_int_equal(extres_holder_kind(&ours, EXTRES_OWNER_LIVE, 100, 555,
					    "extresd", "extresd"),
			 EXTRES_HOLDER_DAEMON);
	/* A script that coordinates records our PID without a start time. */
	assert_int_equal(extres_holder_kind(&script, EXTRES_OWNER_LIVE, 100,
					    555, "extresd", NULL),
			 EXTRES_HOLDER_DAEMON);
	/* Our PID with another start time is somebody else. */
	assert_int_equal(extres_holder_kind(&reused, EXTRES_OWNER_LIVE, 100,
					    555, "bash", NULL),
			 EXTRES_HOLDER_OTHER);
	assert_int_equal(extres_holder_kind(&reused, EXTRES_OWNER_LIVE, 100,
					    555, "x", "extresd"),
			 EXTRES_HOLDER_EXTRESD);
	assert_int_equal(extres_holder_kind(&flink, EXTRES_OWNER_LIVE, 100, 555,
					    "extresd", NULL),
			 EXTRES_HOLDER_EXTRESD);
	assert_int_equal(extres_holder_kind(&flink, EXTRES_OWNER_LIVE, 100, 555,
					    "java", "java"),
			 EXTRES_HOLDER_OTHER);
	/* A lease is a lease, live or not; a stale other line is other. */
	assert_int_equal(extres_holder_kind(&lease, EXTRES_OWNER_LIVE, 100, 555,
					    "python3", NULL),
			 EXTRES_HOLDER_LEASE);
	assert_int_equal(extres_holder_kind(&lease, EXTRES_OWNER_DEAD, 100, 555,
					    NULL, NULL),
			 EXTRES_HOLDER_LEASE);
	assert_int_equal(extres_holder_kind(&ours, EXTRES_OWNER_DEAD, 100, 555,
					    NULL, NULL),
			 EXTRES_HOLDER_OTHER);
	assert_string_equal(extres_holder_kind_name(EXTRES_HOLDER_EXTRESD),
			    "extresd");
	extres_coord_entry_clear(&ours);
	extres_coord_entry_clear(&script);
	extres_coord_entry_clear(&reused);
	extres_coord_entry_clear(&lease);
	extres_coord_entry_clear(&flink);
}

static struct extres_holder two[] = {
	{ .resource = "gpu",
	  .key = "0",
	  .pid = 100,
	  .state = EXTRES_OWNER_LIVE,
	  .kind = EXTRES_HOLDER_LEASE,
	  .lease = "100-7",
	  .has_uid = 1,
	  .uid = 1000,
	  .user = "alice",
	  .command = "py\tthon",
	  .since = 86400,
	  .share_i = 2,
	  .share_n = 4 },
	{ .resource = "gpu",
	  .key = "1",
	  .pid = 200,
	  .state = EXTRES_OWNER_REUSED,
	  .kind = EXTRES_HOLDER_OTHER,
	  .since = -1 },
};

static void test_text(void **state)
{
	struct extres_holders h = { 2, two };
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_holders_text(&h, &text, &len), 0);
	assert_string_equal(
		text,
		"gpu\t0\t100\talice\tpy?thon\t1970-01-02T00:00:00Z\tlease\t100-7\tlive\t2/4\n"
		"gpu\t1\t200\t-\t-\t-\tother\t-\treused\t-\n");
	assert_int_equal(len, strlen(text));
	free(text);
	h.n = 0;
	assert_int_equal(extres_holders_text(&h, &text, &len), 0);
	assert_string_equal(text, "");
	free(text);
}

/* Any bytes in a holder's fields (the file's and a command's name): the
 * text is valid UTF-8, and every line has its 10 fields. */
static void test_text_bad_bytes(void **state)
{
	struct extres_holder bad = {
		.resource = "gpu",
		.key = "0\t\xff",
		.pid = 100,
		.state = EXTRES_OWNER_LIVE,
		.kind = EXTRES_HOLDER_LEASE,
		.lease = "100-7\nx",
		.user = "al\xc3ice",
		.command = "sl\xff\xfe\tep",
		.since = -1,
	};
	struct extres_holders h = { 1, &bad };
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(extres_holders_text(&h, &text, &len), 0);
	assert_string_equal(text,
			    "gpu\t0?\xef\xbf\xbd\t100\tal\xef\xbf\xbdice\t"
			    "sl\xef\xbf\xbd\xef\xbf\xbd?ep\t-\tlease\t"
			    "100-7?x\tlive\t-\n");
	free(text);
}

static void test_json(void **state)
{
	struct extres_holders h = { 2, two };
	struct extres_json_resource r = {
		.name = "gpu", .driver = "static", .amount = 4, .pool = 1
	};
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(extres_json_view_holders(&r, 1, &h, &text, &len), 0);
	assert_string_equal(
		text,
		"{\"resources\": {\"gpu\": {\"driver\": \"static\", \"amount\": 4, \"pool\": true}}, "
		"\"holders\": [{\"resource\": \"gpu\", \"key\": \"0\", \"pid\": 100, \"uid\": 1000, "
		"\"user\": \"alice\", \"command\": \"py\\tthon\", \"since\": \"1970-01-02T00:00:00Z\", "
		"\"kind\": \"lease\", \"lease\": \"100-7\", \"state\": \"live\", "
		"\"share\": {\"index\": 2, \"of\": 4}}, "
		"{\"resource\": \"gpu\", \"key\": \"1\", \"pid\": 200, \"uid\": null, \"user\": null, "
		"\"command\": null, \"since\": null, \"kind\": \"other\", \"lease\": null, "
		"\"state\": \"reused\", \"share\": null}]}\n");
	free(text);
	h.n = 0;
	assert_int_equal(extres_json_view_holders(NULL, 0, &h, &text, &len), 0);
	assert_string_equal(text, "{\"resources\": {}, \"holders\": []}\n");
	free(text);
}

static void test_lease_id(void **state)
{
	uint64_t st = 0;
	pid_t pid = 0;

	assert_int_equal(extres_lease_id_parse("1234-5678", &pid, &st), 0);
	assert_int_equal(pid, 1234);
	assert_int_equal(st, 5678);
	assert_int_equal(extres_lease_id_parse("1234", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("-5", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("0-5", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("12-", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("12-3-4", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("+12-3", &pid, &st), -EINVAL);
	assert_int_equal(extres_lease_id_parse("99999999999-3", &pid, &st),
			 -EINVAL);
	assert_int_equal(pid, 1234);
}

static void test_parse_stat(void **state)
{
	static const char stat[] =
		"42 (a (b) c) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
		"123456 1 2 3\n";
	uint64_t st = 0;
	pid_t ppid = 0;
	char s = 0;

	assert_int_equal(
		extres_proc_parse_stat(stat, sizeof(stat) - 1, &s, &ppid, &st),
		0);
	assert_int_equal(s, 'S');
	assert_int_equal(ppid, 7);
	assert_int_equal(st, 123456);
	assert_int_equal(
		extres_proc_parse_stat("42 (x) S 7", 10, &s, &ppid, &st), -EIO);
	assert_int_equal(extres_proc_parse_stat("42 x S 7", 8, &s, NULL, NULL),
			 -EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_text_bad_bytes),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_lease_id),
		cmocka_unit_test(test_parse_stat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
