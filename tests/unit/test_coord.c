/* SPDX-License-Identifier: MIT */
/* The coordination file: line parsing, owner states, opening and locking,
 * rewriting in place. Real files in a mkdtemp directory, real processes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc_files.h"

#include "alloc/coord.h"

#define REFUSE "; refusing to use it as a coordination file"

struct fixture {
	char dir[TF_DIR_LEN];
	char path[TF_PATH_LEN]; /* dir/coord, not created */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || tf_coord_dir("coord", f->dir, f->path) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int r = tf_remove_tree(f->dir);

	free(f);
	return r;
}

static void parse(const char *line, struct extres_coord_entry *e)
{
	assert_int_equal(extres_coord_parse_line(line, strlen(line), e), 0);
	assert_string_equal(e->line, line);
	assert_int_equal(e->line_len, strlen(line));
}

static void assert_unparsable(const char *line)
{
	struct extres_coord_entry e;

	parse(line, &e);
	assert_int_equal(e.parsed, 0);
	assert_null(e.key);
	assert_int_equal(extres_coord_owner_state(&e), EXTRES_OWNER_UNPARSABLE);
	extres_coord_entry_clear(&e);
}

static void test_parse_two_fields(void **state)
{
	struct extres_coord_entry e;

	parse("3 4242", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.key, "3");
	assert_int_equal(e.pid, 4242);
	assert_int_equal(e.has_starttime, 0);
	extres_coord_entry_clear(&e);
}

static void test_parse_three_fields(void **state)
{
	struct extres_coord_entry e;

	parse("GPU-8f2a 17 123456789", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.key, "GPU-8f2a");
	assert_int_equal(e.pid, 17);
	assert_int_equal(e.has_starttime, 1);
	assert_int_equal(e.starttime, 123456789);
	extres_coord_entry_clear(&e);

	/* Any whitespace separates, on read. */
	parse("\t10\t  99 \t7  ", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.key, "10");
	assert_int_equal(e.pid, 99);
	assert_int_equal(e.starttime, 7);
	extres_coord_entry_clear(&e);
}

static void test_parse_extra_fields(void **state)
{
	struct extres_coord_entry e;

	parse("1 42 100 written-by someone-else", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.key, "1");
	assert_int_equal(e.pid, 42);
	assert_int_equal(e.has_starttime, 1);
	assert_int_equal(e.starttime, 100);
	extres_coord_entry_clear(&e);

	/* A third field that is no start time is ignored as Flink would. */
	parse("1 42 tm-3", &e);
	assert_int_equal(e.parsed, 1);
	assert_int_equal(e.pid, 42);
	assert_int_equal(e.has_starttime, 0);
	extres_coord_entry_clear(&e);

	parse("1 42 -5", &e);
	assert_int_equal(e.parsed, 1);
	assert_int_equal(e.has_starttime, 0);
	extres_coord_entry_clear(&e);
}

/* A lease's line: its id after the start time; written and read back. */
static void test_lease_line(void **state)
{
	struct extres_coord c = { .fd = -1 };
	struct extres_coord_entry e;

	parse("2 77\t900\tlease=77-900", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.key, "2");
	assert_int_equal(e.starttime, 900);
	assert_string_equal(e.lease, "77-900");
	extres_coord_entry_clear(&e);
	/* Other fourth fields are no lease; nor is an empty id. */
	parse("2 77 900 written-by", &e);
	assert_null(e.lease);
	extres_coord_entry_clear(&e);
	parse("2 77 900 lease=", &e);
	assert_null(e.lease);
	extres_coord_entry_clear(&e);
	/* Tagged fields come in any order; unknown ones are skipped. */
	parse("2 77\t900\tuuid=GPU-1\tlease=77-900\tx=y", &e);
	assert_int_equal(e.parsed, 1);
	assert_string_equal(e.lease, "77-900");
	extres_coord_entry_clear(&e);
	/* Without a start time there is no lease. */
	parse("2 77 lease=77-900", &e);
	assert_null(e.lease);
	extres_coord_entry_clear(&e);

	assert_int_equal(extres_coord_add_lease(&c, "5", 77, 900, "77-900"), 0);
	assert_string_equal(c.entries[0].line, "5 77\t900\tlease=77-900");
	assert_string_equal(c.entries[0].lease, "77-900");
	assert_int_equal(extres_coord_add_lease(&c, "6", 77, 900, NULL), 0);
	assert_string_equal(c.entries[1].line, "6 77\t900");
	assert_null(c.entries[1].lease);
	assert_int_equal(extres_coord_add_lease(&c, "7", 77, 900, "a b"),
			 -EINVAL);
	assert_int_equal(extres_coord_add_lease(&c, "7", 77, 900, ""), -EINVAL);
	assert_int_equal(c.n, 2);
	extres_coord_remove(&c, 1);
	extres_coord_remove(&c, 0);
	free(c.entries);
}

/* Fields after STARTTIME are name=value words in any order (issue 25
 * adds share=I/N): every word is scanned, unknown ones are skipped. */
static void test_tagged_words(void **state)
{
	struct extres_coord c = { .fd = -1 };
	struct extres_coord_entry e;

	(void)state;
	parse("1 77\t900\tshare=1/2\tuuid=GPU-b\tlease=77-900", &e);
	assert_true(e.parsed);
	assert_string_equal(e.key, "1");
	assert_string_equal(e.lease, "77-900");
	assert_string_equal(e.uuid, "GPU-b");
	extres_coord_entry_clear(&e);
	parse("1 77 900 uuid=GPU-b", &e);
	assert_null(e.lease);
	assert_string_equal(e.uuid, "GPU-b");
	extres_coord_entry_clear(&e);
	/* Without a start time, no tags: Flink's lines are KEY PID. */
	parse("1 77 uuid=GPU-b", &e);
	assert_null(e.uuid);
	extres_coord_entry_clear(&e);
	parse("1 77 900 uuid= x=y", &e);
	assert_null(e.uuid);
	extres_coord_entry_clear(&e);

	assert_int_equal(
		extres_coord_add_tagged(&c, "0", 77, 900, "77-900", "GPU-a"),
		0);
	assert_string_equal(c.entries[0].line,
			    "0 77\t900\tlease=77-900\tuuid=GPU-a");
	assert_string_equal(c.entries[0].uuid, "GPU-a");
	assert_int_equal(
		extres_coord_add_tagged(&c, "1", 77, 900, NULL, "MIG-c"), 0);
	assert_string_equal(c.entries[1].line, "1 77\t900\tuuid=MIG-c");
	assert_int_equal(
		extres_coord_add_tagged(&c, "2", 77, 900, NULL, "GPU a"),
		-EINVAL);
	/* What was written reads back the same. */
	parse(c.entries[1].line, &e);
	assert_string_equal(e.uuid, "MIG-c");
	assert_null(e.lease);
	extres_coord_entry_clear(&e);
	extres_coord_remove(&c, 1);
	extres_coord_remove(&c, 0);
	free(c.entries);
}

static void test_parse_bad_pid(void **state)
{
	assert_unparsable("garbage");
	assert_unparsable("0");
	assert_unparsable("0 abc");
	assert_unparsable("0 12x");
	assert_unparsable("0 0");
	assert_unparsable("0 000");
	assert_unparsable("0 -5");
	assert_unparsable("0 +5");
	assert_unparsable("0 0x10");
	assert_unparsable("# 0 1234 comment");
}

static void test_parse_huge_numbers(void **state)
{
	struct extres_coord_entry e;

	assert_unparsable("0 2147483648");
	assert_unparsable("0 99999999999999999999999999");
	parse("0 2147483647", &e);
	assert_int_equal(e.parsed, 1);
	assert_int_equal(e.pid, INT_MAX);
	extres_coord_entry_clear(&e);

	parse("0 5 18446744073709551615", &e);
	assert_int_equal(e.has_starttime, 1);
	assert_true(e.starttime == UINT64_MAX);
	extres_coord_entry_clear(&e);

	/* Past 64 bits it is no start time; the line still counts. */
	parse("0 5 18446744073709551616", &e);
	assert_int_equal(e.parsed, 1);
	assert_int_equal(e.has_starttime, 0);
	extres_coord_entry_clear(&e);
}

/* Zero padding makes a number longer, not bigger (see tests/fuzz). */
static void test_parse_zero_padded(void **state)
{
	struct extres_coord_entry e;

	parse("0 00000000000000000000000000000000000001234 "
	      "000000000000000000000000000000000000000018446744073709551615",
	      &e);
	assert_int_equal(e.parsed, 1);
	assert_int_equal(e.pid, 1234);
	assert_int_equal(e.has_starttime, 1);
	assert_true(e.starttime == UINT64_MAX);
	extres_coord_entry_clear(&e);

	assert_unparsable("0 00000000000000000000000000000000000000000");
	assert_unparsable("0 00000000000000000000000000000000002147483648");
}

static void test_parse_nul_kept_verbatim(void **state)
{
	static const char line[] = "0 1\0 2";
	struct extres_coord_entry e;

	assert_int_equal(extres_coord_parse_line(line, sizeof(line) - 1, &e),
			 0);
	assert_int_equal(e.parsed, 0);
	assert_int_equal(e.line_len, sizeof(line) - 1);
	assert_memory_equal(e.line, line, sizeof(line) - 1);
	extres_coord_entry_clear(&e);
	extres_coord_entry_clear(NULL);
}

/* Field 22 of /proc/self/stat, read without the code under test. */
static uint64_t independent_starttime(void)
{
	char *buf = tf_read_file("/proc/self/stat");
	char *p = strrchr(buf, ')');
	unsigned long long v;
	int i;

	assert_non_null(p);
	p += 2; /* ") " */
	for (i = 3; i < 22; i++) {
		p = strchr(p, ' ');
		assert_non_null(p);
		p++;
	}
	assert_int_equal(sscanf(p, "%llu", &v), 1);
	return v;
}

static void test_proc_starttime_self(void **state)
{
	uint64_t st = tf_starttime(getpid());

	assert_true(st > 0);
	assert_true(st == independent_starttime());
}

static void test_proc_starttime_gone(void **state)
{
	uint64_t st = 77;

	assert_int_equal(extres_proc_starttime(tf_dead_pid(), &st), -ESRCH);
	assert_int_equal(st, 77);
	assert_int_equal(extres_proc_starttime(0, &st), -ESRCH);
	assert_int_equal(extres_proc_starttime(-1, &st), -ESRCH);
}

/* A command name with spaces and parentheses must not shift the fields. */
static void test_proc_starttime_odd_comm(void **state)
{
	int to_parent[2], to_child[2];
	uint64_t before = 0, after = 0;
	char line[64], c;
	struct extres_coord_entry e;
	pid_t pid;

	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t st = 0;

		close(to_child[1]);
		if (extres_proc_starttime(getpid(), &st) < 0)
			_exit(1);
		prctl(PR_SET_NAME, "a) Z 1 (b) c");
		if (write(to_parent[1], &st, sizeof(st)) != sizeof(st))
			_exit(1);
		(void)!read(to_child[0], &c, 1);
		_exit(0);
	}
	assert_int_equal(read(to_parent[0], &before, sizeof(before)),
			 sizeof(before));
	snprintf(line, sizeof(line), "/proc/%d/comm", (int)pid);
	assert_string_equal(tf_read_file(line), "a) Z 1 (b) c\n");
	assert_int_equal(extres_proc_starttime(pid, &after), 0);
	assert_true(before == after);

	snprintf(line, sizeof(line), "0 %d %" PRIu64, (int)pid, after);
	parse(line, &e);
	assert_int_equal(extres_coord_owner_state(&e), EXTRES_OWNER_LIVE);
	extres_coord_entry_clear(&e);

	close(to_child[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(to_child[0]);
	close(to_parent[0]);
	close(to_parent[1]);
}

static int state_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int state_of(const char *fmt, ...)
{
	struct extres_coord_entry e;
	char line[128];
	va_list ap;
	int s;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	parse(line, &e);
	s = extres_coord_owner_state(&e);
	extres_coord_entry_clear(&e);
	return s;
}

static void test_owner_live(void **state)
{
	assert_int_equal(state_of("0 %d %" PRIu64, (int)getpid(),
				  tf_starttime(getpid())),
			 EXTRES_OWNER_LIVE);
	/* Flink's two fields: a live PID holds. */
	assert_int_equal(state_of("0 %d", (int)getpid()), EXTRES_OWNER_LIVE);
	assert_int_equal(state_of("0 %d not-a-time", (int)getpid()),
			 EXTRES_OWNER_LIVE);
}

static void test_owner_dead(void **state)
{
	pid_t pid = tf_dead_pid();

	assert_int_equal(
		state_of("0 %d %" PRIu64, (int)pid, tf_starttime(getpid())),
		EXTRES_OWNER_DEAD);
	assert_int_equal(state_of("0 %d", (int)pid), EXTRES_OWNER_DEAD);
}

static void test_owner_reused(void **state)
{
	assert_int_equal(state_of("0 %d %" PRIu64, (int)getpid(),
				  tf_starttime(getpid()) + 1),
			 EXTRES_OWNER_REUSED);
	assert_int_equal(state_of("0 %d 0", (int)getpid()),
			 EXTRES_OWNER_REUSED);
}

static void test_owner_zombie(void **state)
{
	siginfo_t si;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* Wait for the exit but leave the child unreaped: a zombie. */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(state_of("0 %d", (int)pid), EXTRES_OWNER_ZOMBIE);
	assert_int_equal(state_of("0 %d 1", (int)pid), EXTRES_OWNER_ZOMBIE);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(state_of("0 %d", (int)pid), EXTRES_OWNER_DEAD);
}

static void test_owner_unparsable(void **state)
{
	assert_unparsable("0 zero");
	assert_string_equal(extres_coord_owner_state_name(EXTRES_OWNER_LIVE),
			    "live");
	assert_string_equal(extres_coord_owner_state_name(EXTRES_OWNER_DEAD),
			    "dead");
	assert_string_equal(extres_coord_owner_state_name(EXTRES_OWNER_REUSED),
			    "reused");
	assert_string_equal(extres_coord_owner_state_name(EXTRES_OWNER_ZOMBIE),
			    "zombie");
	assert_string_equal(
		extres_coord_owner_state_name(EXTRES_OWNER_UNPARSABLE),
		"unparsable");
}

static void test_exact_match(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	char content[256], expect[128];
	pid_t dead = tf_dead_pid();

	snprintf(expect, sizeof(expect), "10 %d %" PRIu64 "\n", (int)getpid(),
		 tf_starttime(getpid()));
	snprintf(content, sizeof(content), "0 %d 5\n%s", (int)dead, expect);
	tf_write_file(f->path, content);

	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 2);
	assert_int_equal(extres_coord_is_taken(c, "0"), 0);
	assert_int_equal(extres_coord_is_taken(c, "1"), 0);
	assert_int_equal(extres_coord_is_taken(c, "10"), 1);
	assert_int_equal(extres_coord_is_taken(c, "100"), 0);
	assert_int_equal(extres_coord_reclaim(c), 1);
	assert_int_equal(c->n, 1);
	assert_string_equal(c->entries[0].key, "10");
	assert_int_equal(extres_coord_write(c, &err), 0);
	extres_coord_close(c);
	assert_string_equal(tf_read_file(f->path), expect);
}

static void assert_lock_fails(const char *path, int errnum, const char *msg)
{
	struct extres_coord *c = (struct extres_coord *)0x1;
	struct extres_err err = { "" };

	assert_int_equal(
		extres_coord_lock(path, 10000, EXTRES_NO_GROUP, &c, &err),
		-errnum);
	assert_ptr_equal(c, (struct extres_coord *)0x1);
	assert_string_equal(err.msg, msg);
}

static void test_refuse_symlink(void **state)
{
	struct fixture *f = *state;
	char target[160], missing[160], msg[512];

	snprintf(target, sizeof(target), "%s/target", f->dir);
	tf_write_file(target, "precious\n");
	assert_int_equal(symlink(target, f->path), 0);
	snprintf(msg, sizeof(msg), "%s is a symbolic link" REFUSE, f->path);
	assert_lock_fails(f->path, ELOOP, msg);
	assert_string_equal(tf_read_file(target), "precious\n");

	/* A dangling link must not create its target. */
	assert_int_equal(unlink(f->path), 0);
	snprintf(missing, sizeof(missing), "%s/missing", f->dir);
	assert_int_equal(symlink(missing, f->path), 0);
	assert_lock_fails(f->path, ELOOP, msg);
	assert_int_equal(access(missing, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_refuse_hardlink(void **state)
{
	struct fixture *f = *state;
	char other[160], msg[512];

	snprintf(other, sizeof(other), "%s/other", f->dir);
	tf_write_file(other, "0 1 2\n");
	assert_int_equal(link(other, f->path), 0);
	snprintf(msg, sizeof(msg), "%s has 2 hard links" REFUSE, f->path);
	assert_lock_fails(f->path, EMLINK, msg);
	assert_string_equal(tf_read_file(other), "0 1 2\n");
}

static void test_refuse_fifo(void **state)
{
	struct fixture *f = *state;
	char msg[512];

	assert_int_equal(mkfifo(f->path, 0644), 0);
	snprintf(msg, sizeof(msg), "%s is a FIFO" REFUSE, f->path);
	alarm(10); /* a hang kills the test instead of stalling it */
	assert_lock_fails(f->path, EINVAL, msg);
	alarm(0);
}

static void test_refuse_directory(void **state)
{
	struct fixture *f = *state;
	char msg[512], inner[160];

	assert_int_equal(mkdir(f->path, 0755), 0);
	snprintf(inner, sizeof(inner), "%s/keep", f->path);
	tf_write_file(inner, "x");
	snprintf(msg, sizeof(msg), "%s is a directory" REFUSE, f->path);
	assert_lock_fails(f->path, EINVAL, msg);
	assert_string_equal(tf_read_file(inner), "x");
}

static void test_refuse_socket(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[512];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_true(strlen(f->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(msg, sizeof(msg), "%s is a socket" REFUSE, f->path);
	assert_lock_fails(f->path, EINVAL, msg);
	close(fd);
}

static void test_open_error_names_path(void **state)
{
	struct fixture *f = *state;
	char path[200], msg[512];

	snprintf(path, sizeof(path), "%s/no/such/dir", f->dir);
	snprintf(msg, sizeof(msg),
		 "coordination file %s: No such file or directory", path);
	assert_lock_fails(path, ENOENT, msg);
}

/* Inspecting or releasing never creates the file. */
static void test_lock_existing(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	char msg[600];

	assert_int_equal(extres_coord_lock_existing(f->path, 10000,
						    EXTRES_NO_GROUP, &c, &err),
			 -ENOENT);
	snprintf(msg, sizeof(msg), "%s: No such file or directory", f->path);
	assert_string_equal(err.msg, msg);
	assert_null(c);
	assert_int_equal(access(f->path, F_OK), -1);
	tf_write_file(f->path, "3 1\n");
	assert_int_equal(extres_coord_lock_existing(f->path, 10000,
						    EXTRES_NO_GROUP, &c, &err),
			 0);
	assert_int_equal(c->n, 1);
	extres_coord_close(c);
}

static void test_create_missing_0660(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	mode_t old = umask(077);
	struct stat st;

	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	umask(old);
	assert_int_equal(c->n, 0);
	assert_string_equal(c->path, f->path);
	assert_int_equal(fcntl(c->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fcntl(c->fd, F_GETFL) & O_NONBLOCK, 0);
	extres_coord_close(c);
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* Not world-readable: whoever can open it can hold a lock forever. */
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_size, 0);
	extres_coord_close(NULL);

	/* In the trusted group, where we may give it (root may). */
	if (geteuid() != 0)
		return;
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(extres_coord_lock(f->path, 10000, 65534, &c, &err), 0);
	extres_coord_close(c);
	assert_int_equal(lstat(f->path, &st), 0);
	assert_int_equal(st.st_gid, 65534);
	assert_int_equal(st.st_mode & 07777, 0660);
}

static void test_empty_file(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };

	tf_write_file(f->path, "");
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 0);
	assert_int_equal(extres_coord_is_taken(c, "0"), 0);
	assert_int_equal(extres_coord_write(c, &err), 0);
	extres_coord_close(c);
	assert_string_equal(tf_read_file(f->path), "");

	/* Only blank lines: nothing, and they go on rewrite. */
	tf_write_file(f->path, "\n  \n\t\n");
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 0);
	assert_int_equal(extres_coord_write(c, &err), 0);
	extres_coord_close(c);
	assert_string_equal(tf_read_file(f->path), "");
}

static void test_rewrite_in_place(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	struct stat before, after;
	char expect[256];

	/* Garbage, blank lines, a Flink line, and a last line without '\n'. */
	tf_write_file(f->path, "garbage here\n\n   \n0 1\nx y z w\n1 1 99");
	assert_int_equal(stat(f->path, &before), 0);

	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->entries[0].parsed, 0);
	assert_string_equal(c->entries[0].line, "garbage here");
	assert_string_equal(c->entries[1].key, "0");
	assert_int_equal(c->entries[2].parsed, 0);
	assert_string_equal(c->entries[3].line, "1 1 99");
	assert_int_equal(c->entries[3].starttime, 99);
	assert_int_equal(extres_coord_add(c, "GPU-2", getpid(), 12345), 0);
	assert_int_equal(extres_coord_write(c, &err), 0);
	extres_coord_close(c);
	snprintf(expect, sizeof(expect),
		 "garbage here\n0 1\nx y z w\n1 1 99\nGPU-2 %d\t12345\n",
		 (int)getpid());
	assert_string_equal(tf_read_file(f->path), expect);

	/* Shorter content truncates the rest. */
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 5);
	extres_coord_remove(c, 4);
	extres_coord_remove(c, 1);
	extres_coord_remove(c, 9); /* out of range: nothing */
	assert_int_equal(c->n, 3);
	assert_int_equal(extres_coord_write(c, &err), 0);
	extres_coord_close(c);
	assert_string_equal(tf_read_file(f->path),
			    "garbage here\nx y z w\n1 1 99\n");

	assert_int_equal(stat(f->path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_dev, after.st_dev);
	assert_int_equal(after.st_nlink, 1);
}

static void test_add_rejects_bad_key(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };

	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(extres_coord_add(c, "Tesla V100", getpid(), 1),
			 -EINVAL);
	assert_int_equal(extres_coord_add(c, "", getpid(), 1), -EINVAL);
	assert_int_equal(extres_coord_add(c, "a\tb", getpid(), 1), -EINVAL);
	assert_int_equal(extres_coord_add(c, "0", 0, 1), -EINVAL);
	assert_int_equal(c->n, 0);
	assert_int_equal(extres_coord_add(c, "0", getpid(), 1), 0);
	assert_int_equal(c->n, 1);
	assert_string_equal(c->entries[0].key, "0");
	extres_coord_close(c);
	assert_string_equal(tf_read_file(f->path),
			    ""); /* close does not write */
}

/* In a child: wait (10 s at most) until the parent has `path` open, as
 * extres_coord_lock() does while it polls for a lock we hold. No one says
 * so: look every millisecond. 0, or -1 at the bound. */
static int wait_parent_opened(const char *path)
{
	char real[PATH_MAX], dir[64], fd[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	ssize_t n;
	int i, found = 0;
	DIR *d;

	if (!realpath(path, real))
		return -1;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)getppid());
	for (i = 0; i < 10000 && !found; i++) {
		d = opendir(dir);
		if (!d)
			return -1;
		while (!found && (e = readdir(d))) {
			snprintf(fd, sizeof(fd), "%s/%s", dir, e->d_name);
			n = readlink(fd, target, sizeof(target) - 1);
			if (n < 0)
				continue;
			target[n] = '\0';
			found = strcmp(target, real) == 0;
		}
		closedir(d);
		if (!found)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return found ? 0 : -1;
}

/* A child holds the lock and writes before releasing it: our lock must wait
 * for it and then see its line. */
static void test_lock_excludes(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	int p[2];
	char ch;
	pid_t pid;
	int status;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct extres_coord *cc = NULL;

		if (extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &cc,
				      NULL) < 0 ||
		    write(p[1], "L", 1) != 1 || wait_parent_opened(f->path) < 0)
			_exit(1);
		if (extres_coord_add(cc, "7", getpid(), 1) < 0 ||
		    extres_coord_write(cc, NULL) < 0)
			_exit(1);
		extres_coord_close(cc);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &ch, 1), 1);
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 1);
	assert_string_equal(c->entries[0].key, "7");
	assert_int_equal(c->entries[0].pid, pid);
	extres_coord_close(c);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[0]);
}

/* `sed -i` (Flink's scripts) renames a new file over the old one while we
 * wait for the lock on the old inode: we must end up on the new file. */
static void test_lock_follows_replaced_file(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	struct stat st;
	char tmp[160], ch;
	int p[2], status;
	pid_t pid;

	tf_write_file(f->path, "old 1 1\n");
	snprintf(tmp, sizeof(tmp), "%s/coord.sed", f->dir);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(f->path, O_RDWR | O_CLOEXEC);

		if (fd < 0 || flock(fd, LOCK_EX) < 0 ||
		    write(p[1], "L", 1) != 1)
			_exit(1);
		int nfd;

		/* Our lock's waiter is on the old inode. */
		if (wait_parent_opened(f->path) < 0)
			_exit(1);
		nfd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (nfd < 0 || write(nfd, "new 1 1\n", 8) != 8 ||
		    rename(tmp, f->path) < 0)
			_exit(1);
		_exit(0); /* drops the lock on the old inode */
	}
	close(p[1]);
	assert_int_equal(read(p[0], &ch, 1), 1);
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(c->n, 1);
	assert_string_equal(c->entries[0].key, "new");
	assert_int_equal(stat(f->path, &st), 0);
	{
		struct stat mine;

		assert_int_equal(fstat(c->fd, &mine), 0);
		assert_int_equal(mine.st_ino, st.st_ino);
	}
	extres_coord_close(c);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p[0]);
}

static void test_too_big(void **state)
{
	struct fixture *f = *state;
	char msg[512];
	int fd = open(f->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (16 << 20) + 1), 0);
	close(fd);
	snprintf(
		msg, sizeof(msg),
		"coordination file %s is larger than 16777216 bytes; refusing to read it",
		f->path);
	assert_lock_fails(f->path, EFBIG, msg);
}

/* A child that holds a shared lock on `path` (as `flock -s` would) until
 * the returned pipe's write end is closed. */
static pid_t hold_shared(const char *path, int *ret_release)
{
	int ready[2], release[2];
	pid_t pid;
	char ch;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(release, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);

		close(release[1]);
		if (fd < 0 || flock(fd, LOCK_SH) < 0 ||
		    write(ready[1], "L", 1) != 1)
			_exit(1);
		(void)!read(release[0], &ch, 1);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	assert_int_equal(read(ready[0], &ch, 1), 1);
	close(ready[0]);
	*ret_release = release[1];
	return pid;
}

static void let_go(pid_t pid, int release)
{
	int status;

	close(release);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Anyone who can open the file can hold a lock forever: the wait ends at
 * its deadline and names the holder. */
static void test_lock_timeout(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	char want[512];
	int release;
	pid_t pid = hold_shared(f->path, &release);

	assert_int_equal(
		extres_coord_lock(f->path, 100, EXTRES_NO_GROUP, &c, &err),
		-ETIMEDOUT);
	assert_null(c);
	snprintf(
		want, sizeof(want),
		"timed out after 0.100 s waiting for the lock on coordination file %s; held by PID %d (",
		f->path, (int)pid);
	assert_non_null(strstr(err.msg, want));
	assert_int_equal(extres_coord_lock_existing(f->path, 0, EXTRES_NO_GROUP,
						    &c, &err),
			 -ETIMEDOUT);
	let_go(pid, release);
	assert_int_equal(
		extres_coord_lock(f->path, 0, EXTRES_NO_GROUP, &c, &err), 0);
	extres_coord_close(c);
}

/* A stop asked for (SIGTERM blocked and pending, as in extresd) ends the
 * wait at once, however long the timeout. */
static void test_lock_stop(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	struct timespec zero = { 0, 0 };
	sigset_t set, old;
	char want[512];
	int release;
	pid_t pid = hold_shared(f->path, &release);

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	assert_int_equal(sigprocmask(SIG_BLOCK, &set, &old), 0);
	assert_int_equal(raise(SIGTERM), 0);
	assert_int_equal(
		extres_coord_lock(f->path, 600000, EXTRES_NO_GROUP, &c, &err),
		-EINTR);
	assert_null(c);
	snprintf(want, sizeof(want),
		 "stopped while waiting for the lock on coordination file %s",
		 f->path);
	assert_string_equal(err.msg, want);
	assert_int_equal(sigtimedwait(&set, NULL, &zero), SIGTERM);
	assert_int_equal(sigprocmask(SIG_SETMASK, &old, NULL), 0);
	let_go(pid, release);
}

/* What we write we must be able to read back: an append past the read
 * limit is refused before anything is written. */
static void test_write_too_big(void **state)
{
	struct fixture *f = *state;
	struct extres_coord *c = NULL;
	struct extres_err err = { "" };
	size_t size = EXTRES_COORD_MAX_SIZE - 4;
	char want[512];
	struct stat st;
	char *buf = malloc(size);

	assert_non_null(buf);
	memset(buf, 'x', size);
	buf[size - 1] = '\n';
	{
		int fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      0644);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, buf, size), (ssize_t)size);
		close(fd);
	}
	free(buf);
	assert_int_equal(
		extres_coord_lock(f->path, 10000, EXTRES_NO_GROUP, &c, &err),
		0);
	assert_int_equal(extres_coord_add(c, "0", getpid(), 1), 0);
	assert_int_equal(extres_coord_write(c, &err), -EFBIG);
	snprintf(
		want, sizeof(want),
		"coordination file %s would grow to %zu bytes, past the 16777216-byte limit; nothing was written",
		f->path,
		size + strlen("0 ") + 1 +
			(size_t)snprintf(NULL, 0, "%d\t1", (int)getpid()));
	assert_non_null(strstr(err.msg, want));
	extres_coord_close(c);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal((size_t)st.st_size, size);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_two_fields),
		cmocka_unit_test(test_parse_three_fields),
		cmocka_unit_test(test_parse_extra_fields),
		cmocka_unit_test(test_lease_line),
		cmocka_unit_test(test_tagged_words),
		cmocka_unit_test(test_parse_bad_pid),
		cmocka_unit_test(test_parse_huge_numbers),
		cmocka_unit_test(test_parse_zero_padded),
		cmocka_unit_test(test_parse_nul_kept_verbatim),
		cmocka_unit_test(test_proc_starttime_self),
		cmocka_unit_test(test_proc_starttime_gone),
		cmocka_unit_test(test_proc_starttime_odd_comm),
		cmocka_unit_test(test_owner_live),
		cmocka_unit_test(test_owner_dead),
		cmocka_unit_test(test_owner_reused),
		cmocka_unit_test(test_owner_zombie),
		cmocka_unit_test(test_owner_unparsable),
		T(test_exact_match),
		T(test_refuse_symlink),
		T(test_refuse_hardlink),
		T(test_refuse_fifo),
		T(test_refuse_directory),
		T(test_refuse_socket),
		T(test_open_error_names_path),
		T(test_create_missing_0660),
		T(test_lock_existing),
		T(test_empty_file),
		T(test_rewrite_in_place),
		T(test_add_rejects_bad_key),
		T(test_lock_excludes),
		T(test_lock_follows_replaced_file),
		T(test_too_big),
		T(test_lock_timeout),
		T(test_lock_stop),
		T(test_write_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
