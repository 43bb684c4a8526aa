/* SPDX-License-Identifier: MIT */
/*
 * The daemon's jobs (libextres_daemon) on their loop, without root or a
 * mount: a fake front counts the trees served, a fake clock drives the
 * timers. A static resource coordinated through a file in a temp dir.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "base/file_state.h"
#include "base/log.h"
#include "daemon/extresd.h"
#include "tree/tree.h"
#include "proc_files.h"

#define STATIC_SO EXTRES_DRIVERS_BUILD_DIR "/static.so"

static long long fake_ms;

static long long fake_now(void *ctx)
{
	(void)ctx;
	return fake_ms;
}

struct fake_front {
	struct extres_tree *tree;
	unsigned swaps;
	unsigned stops;
};

static void front_swap(void *ctx, struct extres_tree *tree)
{
	struct fake_front *f = ctx;

	extres_tree_free(f->tree);
	f->tree = tree;
	f->swaps++;
}

static const struct extres_tree *front_current(void *ctx)
{
	return ((struct fake_front *)ctx)->tree;
}

static void front_transport(void *ctx, char *buf, size_t size)
{
	snprintf(buf, size, "dev (test)");
}

static int front_transport_changed(void *ctx)
{
	return 0;
}

static void front_stop(void *ctx)
{
	((struct fake_front *)ctx)->stops++;
}

struct fixture {
	char dir[TF_DIR_LEN];
	char config[TF_PATH_LEN];
	char coord[TF_PATH_LEN];
	struct fake_front f;
	struct extresd_front front;
	struct extresd d;
	pid_t other; /* a live process of another owner, or 0 */
};

/* `extra` (may be "") appended. */
static void write_config_with(struct fixture *x, int amount, const char *extra)
{
	FILE *f = fopen(x->config, "w");

	assert_non_null(f);
	fprintf(f,
		"external-resources: gpu\n"
		"external-resource.gpu.amount: %d\n"
		"external-resource.gpu.driver: %s\n"
		"external-resource.gpu.param.indexes: 0,1,2,3\n"
		"external-resource.gpu.coordination-file: %s\n%s",
		amount, STATIC_SO, x->coord, extra);
	assert_int_equal(fclose(f), 0);
}

static void write_config(struct fixture *x, int amount)
{
	write_config_with(x, amount, "");
}

/* Write `text` over the coordination file, as another process would
 * (under its lock, as Flink's scripts do: not needed here). */
static void foreign_write(struct fixture *x, const char *text)
{
	tf_write_file(x->coord, text);
}

/* The coordination file's first line in `line`, the rest in `rest`. */
static void split_first(struct fixture *x, char line[64], char rest[256])
{
	const char *text = tf_read_file(x->coord), *nl = strchr(text, '\n');

	assert_non_null(nl);
	assert_true(nl - text < 64 && strlen(nl + 1) < 256);
	snprintf(line, 64, "%.*s", (int)(nl - text), text);
	strcpy(rest, nl + 1);
}

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	struct extres_err err;

	assert_non_null(x);
	assert_int_equal(tf_coord_dir("jobs", x->dir, x->coord), 0);
	snprintf(x->config, sizeof(x->config), "%s/extres.yaml", x->dir);
	write_config(x, 2);
	x->front = (struct extresd_front){
		.swap = front_swap,
		.current = front_current,
		.transport = front_transport,
		.transport_changed = front_transport_changed,
		.stop = front_stop,
		.ctx = &x->f,
	};
	x->d = (struct extresd){
		.daemon = { .fd = -1 },
		.owner_watch = { .pidfd = -1, .stopfd = -1 },
		.guard = { .fd = -1 },
		.runlock = { .fd = -1 },
		.last_reload = "-",
		.front = &x->front,
		.owner = getpid(),
	};
	if (extres_config_load(x->config, &x->d.config, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(extres_guard_open(&x->d.guard, &err), 0);
	assert_int_equal(extresd_jobs_open(&x->d, &err), 0);
	fake_ms = 1000000;
	extres_loop_set_clock(x->d.loop, fake_now, NULL);
	if (extres_allocate_all(x->d.config, x->d.owner, &x->d.allocs, &err) <
	    0)
		fail_msg("%s", err.msg);
	assert_int_equal(extresd_serve_first(&x->d), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;
	struct extres_err err;
	int r;

	if (x->other > 0)
		tf_reap(x->other);
	extresd_jobs_stop(&x->d);
	extres_guard_close(&x->d.guard);
	extresd_cdi_clear(&x->d);
	extresd_cdi_bases_free(&x->d);
	free(x->d.conflicts);
	extresd_holders_free(&x->d);
	if (x->d.allocs &&
	    extres_release_all_within(x->d.allocs, 250, &err) < 0)
		fail_msg("%s", err.msg);
	extres_allocations_free(x->d.allocs);
	extresd_jobs_close(&x->d);
	extres_config_free(x->d.config);
	free(x->d.refresh_stale);
	free(x->d.refresh_asked);
	extres_tree_free(x->f.tree);
	r = tf_remove_tree(x->dir);
	free(x);
	return r;
}

/* Run every iteration due now (without waiting), `ms` on the fake clock
 * later. */
static void advance(struct fixture *x, long long ms)
{
	int i;

	fake_ms += ms;
	for (i = 0; i < 3; i++)
		assert_int_equal(extres_loop_run_once(x->d.loop, 0), 0);
}

/* Start-up serves one tree, and an idle daemon none after it. */
static void test_start(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(x->d.renders, 1);
	assert_int_equal(x->f.swaps, 1);
	assert_non_null(strstr(tf_read_file(x->coord), "0 "));
	assert_non_null(strstr(tf_read_file(x->coord), "1 "));
	advance(x, 0);
	advance(x, 60 * 1000);
	assert_int_equal(x->d.renders, 1);
	assert_int_equal(extres_source_calls(x->d.src.publish), 0);
}

/* A reload renders once: its commit; nothing the jobs do after it (the
 * holders' re-read, the guard) renders the same change again. */
static void test_reload_renders_once(void **state)
{
	struct fixture *x = *state;

	extresd_reload(&x->d);
	assert_int_equal(x->d.generation, 1);
	assert_int_equal(x->d.renders, 2);
	advance(x, 0);
	advance(x, 1000);
	assert_int_equal(x->d.renders, 2);

	/* More devices: their lines are in the file before the render. */
	write_config(x, 3);
	extresd_reload(&x->d);
	assert_int_equal(x->d.generation, 2);
	assert_int_equal(x->d.allocs->items[0]->n, 3);
	assert_int_equal(x->d.renders, 3);
	advance(x, 0);
	advance(x, 1000);
	assert_int_equal(x->d.renders, 3);

	/* A failed reload: the status only, once. */
	foreign_write(x, tf_read_file(x->coord));
	advance(x, 0);
	write_config(x, 0);
	extresd_reload(&x->d);
	assert_int_equal(x->d.generation, 2);
	assert_int_equal(x->d.reload_failures, 1);
	advance(x, 0);
	advance(x, 1000);
	assert_int_equal(x->d.renders, 4);
}

/* Someone deletes our line (Flink's sed): the guard writes it back, and
 * that write of ours wakes nothing; what the mount shows did not change,
 * so nothing is rendered. */
static void test_guard_ignores_own_writes(void **state)
{
	struct fixture *x = *state;
	char line[64], rest[256];

	split_first(x, line, rest);
	/* Only the second line stays. */
	foreign_write(x, rest);
	assert_null(strstr(tf_read_file(x->coord), line));
	/* The inotify event: one real wait. */
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_int_equal(extres_source_calls(x->d.src.guard), 1);
	assert_non_null(strstr(tf_read_file(x->coord), line));
	/* Our write back left nothing for the loop to wake for, nor to
	 * check again. */
	advance(x, 0);
	assert_int_equal(extres_source_calls(x->d.src.guard), 1);
	assert_int_equal(extres_source_calls(x->d.src.recheck), 0);
	/* The holders' re-read (its own lock, its own reading) neither. */
	advance(x, 50);
	assert_int_equal(extres_source_calls(x->d.src.holders), 1);
	advance(x, 1000);
	assert_int_equal(extres_source_calls(x->d.src.guard), 1);
	/* Rendered once: the line written back is the file's last now, as
	 * .meta/holders shows it. */
	assert_int_equal(x->d.renders, 2);

	/* Another change is seen again. */
	foreign_write(x, rest);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_int_equal(extres_source_calls(x->d.src.guard), 2);
	assert_non_null(strstr(tf_read_file(x->coord), line));
}

/* Someone deletes our line while the holders' re-read is due: the read
 * comes first (it waited for the lock the deleter held, or its timer and
 * the event fell into one iteration). It must leave the change for the
 * guard, which writes the line back. */
static void test_holders_read_first(void **state)
{
	struct fixture *x = *state;
	char line[64], rest[256];

	split_first(x, line, rest);
	foreign_write(x, rest);
	assert_int_equal(extresd_holders_read(&x->d), 1);
	advance(x, 0);
	assert_non_null(strstr(tf_read_file(x->coord), line));
	advance(x, 50);
	assert_non_null(strstr(tf_read_file(x->coord), line));
}

/* Another live process records our device 0: a conflict, rendered once,
 * looked at again each second on the fake clock (the other's exit changes
 * nothing in the file), and resolved once it is gone. */
static void test_conflict_recheck(void **state)
{
	struct fixture *x = *state;
	char text[256];

	x->other = tf_live_pid();
	snprintf(text, sizeof(text), "0 %d\n1 %d\n", (int)x->other,
		 (int)getpid());
	foreign_write(x, text);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_non_null(x->d.conflicts);
	assert_int_equal(extres_source_time(x->d.src.recheck), fake_ms + 1000);
	/* The conflict and the new holder, rendered together once the
	 * holders are read again. */
	assert_int_equal(x->d.renders, 1);
	advance(x, 50);
	assert_int_equal(x->d.renders, 2);
	advance(x, 949);
	assert_int_equal(extres_source_calls(x->d.src.recheck), 0);
	advance(x, 1);
	assert_int_equal(extres_source_calls(x->d.src.recheck), 1);
	/* The same conflict: nothing new to show. */
	assert_int_equal(x->d.renders, 2);

	tf_reap(x->other);
	x->other = 0;
	advance(x, 1000);
	assert_int_equal(extres_source_calls(x->d.src.recheck), 2);
	assert_null(x->d.conflicts);
	/* Our line written back shows with the holders, read for it. */
	advance(x, 50);
	assert_int_equal(x->d.renders, 3);
	/* Over: no more rechecks. */
	assert_int_equal(extres_source_time(x->d.src.recheck), -1);
	advance(x, 5000);
	assert_int_equal(extres_source_calls(x->d.src.recheck), 2);
}

/*
 * Right after the guard wrote our line back, another process rewrites the
 * file in place with the device taken, in as many bytes. Where the file's
 * times move once a clock tick (base/file_state.h) such a rewrite within
 * the tick leaves its stat() exactly as the daemon left it: the guard is
 * told so here, so that the case is the same on any file system. A
 * conflict all the same.
 */
static void test_conflict_same_size(void **state)
{
	struct fixture *x = *state;
	struct extres_file_state ours = { 0 }, now = { 0 };
	char line[64], rest[256], text[256], theirs[64], *at;
	int fd;

	x->other = tf_live_pid();
	split_first(x, line, rest);
	foreign_write(x, rest);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_null(x->d.conflicts);
	fd = open(x->coord, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(extres_file_state_take(fd, 4096, &ours), 0);
	/* Our line, with the other's PID and padded to its length. */
	assert_true(ours.len < sizeof(text));
	memcpy(text, ours.data, ours.len + 1);
	at = strstr(text, line);
	assert_non_null(at);
	snprintf(theirs, sizeof(theirs), "0 %d", (int)x->other);
	assert_true(strlen(theirs) <= strlen(line));
	memset(at, ' ', strlen(line));
	memcpy(at, theirs, strlen(theirs));
	foreign_write(x, text);
	assert_int_equal(extres_file_state_take(fd, 4096, &now), 0);
	assert_int_equal(now.len, ours.len);
	assert_int_equal(now.st.st_ino, ours.st.st_ino);
	/* As a coarse clock leaves it: the stat() the daemon took after its
	 * own write is the file's now. */
	ours.st = now.st;
	extres_guard_seen(&x->d.guard, x->coord, &ours);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_non_null(x->d.conflicts);
	snprintf(theirs, sizeof(theirs), "device index 0 is held by PID %d ",
		 (int)x->other);
	assert_non_null(strstr(x->d.conflicts, theirs));
	extres_file_state_clear(&ours);
	extres_file_state_clear(&now);
	close(fd);
}

/* A holder of a device that is not ours: its process is looked at 100 ms
 * after the read, then each second; its exit re-reads the holders and
 * shows it, once. */
static void test_holders_probe(void **state)
{
	struct fixture *x = *state;
	char text[256];
	size_t len;

	x->other = tf_live_pid();
	len = strlen(tf_read_file(x->coord));
	assert_true(len < sizeof(text));
	memcpy(text, tf_read_file(x->coord), len + 1);
	snprintf(text + len, sizeof(text) - len, "3 %d\n", (int)x->other);
	foreign_write(x, text);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	advance(x, 50);
	assert_int_equal(extres_source_calls(x->d.src.holders), 1);
	assert_int_equal(x->d.renders, 2);
	assert_non_null(strstr(x->d.holders_text, "3"));
	advance(x, 99);
	assert_int_equal(extres_source_calls(x->d.src.probe), 0);
	advance(x, 1);
	assert_int_equal(extres_source_calls(x->d.src.probe), 1);
	advance(x, 1000);
	assert_int_equal(extres_source_calls(x->d.src.probe), 2);
	assert_int_equal(x->d.renders, 2);

	tf_reap(x->other);
	x->other = 0;
	advance(x, 1000);
	assert_int_equal(extres_source_calls(x->d.src.probe), 3);
	assert_int_equal(x->d.renders, 3);
	/* Nobody live to look at any more. */
	assert_int_equal(extres_source_time(x->d.src.probe), -1);
}

/* SIGHUP reloads and SIGTERM stops, read from the loop's signalfds
 * (blocked, as extresd blocks them in every thread). */
static void test_signals(void **state)
{
	struct fixture *x = *state;

	assert_int_equal(kill(getpid(), SIGHUP), 0);
	assert_int_equal(extres_loop_run_once(x->d.loop, 5000), 0);
	assert_int_equal(x->d.reloads, 1);
	assert_int_equal(x->d.generation, 1);
	assert_int_equal(x->d.renders, 2);
	assert_int_equal(x->f.stops, 0);
	assert_int_equal(kill(getpid(), SIGTERM), 0);
	/* Ends the session, then the loop, which runs nothing more. */
	assert_int_equal(extres_loop_run(x->d.loop), 0);
	assert_int_equal(x->f.stops, 1);
}

/* --owner-pid: the owner's exit raises SIGTERM in the process at once, as
 * an operator's kill would (what every long wait asks about, os/stop.h),
 * and the loop stops on it. */
static void test_owner_exit(void **state)
{
	struct fixture *x = *state;
	struct extres_err err;
	pid_t owner = tf_live_pid();
	long long until;

	if (extres_owner_open(&x->d.owner_watch, owner, &err) < 0 ||
	    extres_owner_start(&x->d.owner_watch, &err) < 0)
		fail_msg("%s", err.msg);
	tf_reap(owner);
	/* Timers on the fake clock wake the loop too, without running: it
	 * goes on until the signal (10 s only catch a hang). */
	until = extres_now_ms() + 10000;
	while (!x->f.stops && extres_now_ms() < until)
		assert_int_equal(extres_loop_run_once(x->d.loop, 1000), 0);
	assert_int_equal(x->f.stops, 1);
	assert_int_equal(x->d.reloads, 0);
}

/* A refresh timer per resource, on the fake clock: armed from the end of
 * each refresh; values that did not change render nothing. A reload arms
 * the new interval. */
static void test_refresh_interval(void **state)
{
	struct fixture *x = *state;
	struct extres_source *t;

	assert_int_equal(x->d.src.n_refresh, 1);
	assert_null(x->d.src.refresh[0]);
	write_config_with(x, 2, "external-resource.gpu.refresh-interval: 2\n");
	extresd_reload(&x->d);
	assert_int_equal(x->d.generation, 1);
	assert_int_equal(x->d.renders, 2);
	t = x->d.src.refresh[0];
	assert_non_null(t);
	assert_int_equal(extres_source_time(t), fake_ms + 2000);
	advance(x, 1999);
	assert_int_equal(extres_source_calls(t), 0);
	advance(x, 1);
	assert_int_equal(extres_source_calls(t), 1);
	assert_int_equal(extres_source_time(t), fake_ms + 2000);
	advance(x, 2000);
	assert_int_equal(extres_source_calls(t), 2);
	assert_int_equal(x->d.renders, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_renders_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_guard_ignores_own_writes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_recheck, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_holders_probe, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_conflict_same_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_holders_read_first, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refresh_interval, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_owner_exit, setup,
						teardown),
	};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	extres_log_init("test_jobs");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
