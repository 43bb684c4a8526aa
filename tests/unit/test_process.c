/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for drivers/lib/process.c (running a program to completion with
 * a timeout, a stop, and nothing left behind) and the text scanning that
 * drivers share with fs/ (common/include/text_scan.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/process.h"
#include "text_scan.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run `sh -c script` to the end as a driver would; *p holds the outcome
 * (process_clear() it). Returns process_pump()'s result. */
static int run_sh(struct process *p, const char *script, uint64_t timeout_ms,
		  int (*stop)(void *), void *arg)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	int r;

	assert_int_equal(process_init(p), 0);
	assert_int_equal(process_start(p, argv), 0);
	if (p->exec_errno) {
		process_finish(p);
		return 0;
	}
	r = process_pump(p, timeout_ms, stop, arg);
	process_finish(p);
	return r;
}

static void output_and_exit_status(void **state)
{
	struct process p;

	(void)state;
	assert_int_equal(run_sh(&p, "printf '0,1'; printf oops >&2; exit 3",
				5000, NULL, NULL),
			 0);
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 3);
	assert_int_equal(p.exit_signal, 0);
	assert_false(p.timed_out);
	assert_int_equal(p.len[PROCESS_OUT], 3);
	assert_memory_equal(p.buf[PROCESS_OUT], "0,1", 3);
	assert_int_equal(p.len[PROCESS_ERR], 4);
	assert_memory_equal(p.buf[PROCESS_ERR], "oops", 4);
	assert_int_equal(p.escaped, 0);
	process_clear(&p);
}

static void exec_failure(void **state)
{
	char *argv[] = { "/nonexistent/extres-test", NULL };
	struct process p;

	(void)state;
	assert_int_equal(process_init(&p), 0);
	assert_int_equal(process_start(&p, argv), 0);
	assert_int_equal(p.exec_errno, ENOENT);
	process_finish(&p);
	process_clear(&p);
}

static void killed_by_signal(void **state)
{
	struct process p;

	(void)state;
	assert_int_equal(run_sh(&p, "kill -TERM $$", 5000, NULL, NULL), 0);
	assert_true(p.exited);
	assert_int_equal(p.exit_signal, SIGTERM);
	process_clear(&p);
}

static void timeout_kills_it(void **state)
{
	struct process p;
	double t0 = now_s(), took;

	(void)state;
	assert_int_equal(run_sh(&p, "sleep 30", 200, NULL, NULL), 0);
	took = now_s() - t0;
	assert_true(p.timed_out);
	assert_false(p.exited);
	/* 0.2 s asked; the bound only catches a hang. */
	assert_true(took >= 0.2);
	assert_true(took < 10.0);
	process_clear(&p);
}

static void stdout_overflow(void **state)
{
	struct process p;

	(void)state;
	assert_int_equal(
		run_sh(&p, "head -c 200000 /dev/zero", 5000, NULL, NULL), 0);
	assert_true(p.overflow);
	assert_int_equal(p.len[PROCESS_OUT], PROCESS_OUTPUT_MAX);
	process_clear(&p);
}

/* stderr keeps its end, where the reason for a failure is. */
static void stderr_keeps_its_end(void **state)
{
	struct process p;

	(void)state;
	assert_int_equal(run_sh(&p,
				"head -c 100000 /dev/zero | tr '\\0' x >&2; "
				"printf END >&2",
				5000, NULL, NULL),
			 0);
	assert_false(p.overflow);
	assert_int_equal(p.len[PROCESS_ERR], PROCESS_OUTPUT_MAX);
	assert_memory_equal(p.buf[PROCESS_ERR] + PROCESS_OUTPUT_MAX - 4, "xEND",
			    4);
	process_clear(&p);
}

static int calls;

static int stop_at_second_look(void *arg)
{
	(void)arg;
	return ++calls >= 2;
}

static void stop_request(void **state)
{
	struct process p;
	double t0 = now_s();

	(void)state;
	calls = 0;
	assert_int_equal(
		run_sh(&p, "sleep 30", 60000, stop_at_second_look, NULL), 0);
	assert_true(p.stopped);
	assert_false(p.timed_out);
	assert_true(now_s() - t0 < 10.0);
	process_clear(&p);
}

/* A background child that keeps the output open does not hold the run past
 * the grace period, and is killed with the group. */
static void lingering_child(void **state)
{
	struct process p;
	double t0 = now_s();

	(void)state;
	assert_int_equal(run_sh(&p, "sleep 30 & echo 7", 5000, NULL, NULL), 0);
	assert_true(p.exited);
	assert_int_equal(p.exit_code, 0);
	assert_true(p.lingering);
	assert_false(p.holder_left);
	assert_memory_equal(p.buf[PROCESS_OUT], "7\n", 2);
	assert_true(now_s() - t0 < 10.0);
	process_clear(&p);
}

/* What leaves the group (setsid) is killed by the keeper and counted. */
static void escaped_child(void **state)
{
	struct process p;

	(void)state;
	assert_int_equal(run_sh(&p,
				"setsid sleep 30 >/dev/null 2>&1 </dev/null & "
				"sleep 0.3; echo 1",
				5000, NULL, NULL),
			 0);
	assert_true(p.exited);
	assert_int_equal(p.escaped, 1);
	process_clear(&p);
}

static void words(void **state)
{
	const char *text = " \t--a  b\n\vc\r", *p = text, *w;
	const char *want[] = { "--a", "b", "c" };
	size_t len, n = 0;

	(void)state;
	while (text_next_word(&p, text + strlen(text), &w, &len)) {
		assert_true(n < 3);
		assert_int_equal(len, strlen(want[n]));
		assert_memory_equal(w, want[n], len);
		n++;
	}
	assert_int_equal(n, 3);
	p = "   ";
	assert_int_equal(text_next_word(&p, p + 3, &w, &len), 0);
	assert_true(text_is_space('\f'));
	assert_false(text_is_space('\0'));
	assert_false(text_is_space('x'));
	assert_true(text_starts_with("devices.0", "devices."));
	assert_false(text_starts_with("dev", "devices."));
}

static void decimals(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(text_parse_dec("42", 2, UINT64_MAX, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(
		text_parse_dec("18446744073709551615", 20, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(
		text_parse_dec("18446744073709551616", 20, UINT64_MAX, &v),
		-ERANGE);
	assert_int_equal(text_parse_dec("11", 2, 10, &v), -ERANGE);
	/* Neither a sign, a blank nor nothing at all is a number. */
	assert_int_equal(text_parse_dec("+1", 2, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(text_parse_dec(" 1", 2, UINT64_MAX, &v), -EINVAL);
	assert_int_equal(text_parse_dec("", 0, UINT64_MAX, &v), -EINVAL);
	/* Only `len` bytes count. */
	assert_int_equal(text_parse_dec("12x", 2, UINT64_MAX, &v), 0);
	assert_int_equal(v, 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_and_exit_status),
		cmocka_unit_test(exec_failure),
		cmocka_unit_test(killed_by_signal),
		cmocka_unit_test(timeout_kills_it),
		cmocka_unit_test(stdout_overflow),
		cmocka_unit_test(stderr_keeps_its_end),
		cmocka_unit_test(stop_request),
		cmocka_unit_test(lingering_child),
		cmocka_unit_test(escaped_child),
		cmocka_unit_test(words),
		cmocka_unit_test(decimals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
