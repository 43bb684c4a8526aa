/* SPDX-License-Identifier: MIT */
/* What /proc says of processes, kept while their pidfds (and their
 * parents') say it holds (os/proc_cache.c): on live processes, children
 * that exit, orphans given to a subreaper, threads, and a full table. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "os/proc.h"
#include "os/proc_cache.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* A child that lives until `fds[1]` (kept by the caller) is closed. */
static pid_t waiter(const int fds[2])
{
	pid_t pid = fork();
	char c;

	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[1]);
		_exit(read(fds[0], &c, 1) == 0 ? 0 : 1);
	}
	return pid;
}

/* Ask until an answer is kept (at most three asks: the first opens the
 * parent's pidfd, the second reads under it); then asking again reads
 * nothing. The answer is /proc's. */
static struct extres_proc_ident settle(struct extres_proc_cache *c, pid_t pid)
{
	struct extres_proc_ident id;
	struct extres_proc_stat st;
	unsigned long reads;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(extres_proc_cache_get(c, pid, &id), 0);
	reads = c->reads;
	for (i = 0; i < 10; i++)
		assert_int_equal(extres_proc_cache_get(c, pid, &id), 0);
	assert_int_equal(c->reads, reads);
	assert_int_equal(extres_proc_stat_full(pid, &st), 0);
	assert_int_equal(id.starttime, st.starttime);
	assert_int_equal(id.ppid, st.ppid);
	assert_int_equal(id.thread, st.thread);
	return id;
}

static void test_hit(void **state)
{
	struct extres_proc_cache c;
	struct extres_proc_ident id, again;
	int fds = count_fds();

	assert_int_equal(extres_proc_cache_init(&c), 0);
	/* The first ask reads /proc; the second too, now under the parent's
	 * pidfd; then no more. */
	assert_int_equal(extres_proc_cache_get(&c, getpid(), &id), 0);
	assert_int_equal(c.reads, 1);
	assert_int_equal(extres_proc_cache_get(&c, getpid(), &again), 0);
	assert_int_equal(c.reads, getppid() > 1 ? 2 : 1);
	id = settle(&c, getpid());
	assert_int_equal(id.ppid, getppid());
	assert_int_equal(id.tgid, getpid());
	assert_int_equal(id.thread, 0);
	/* The parent, met as this process's, is read once and kept. */
	if (getppid() > 1)
		settle(&c, getppid());
	assert_int_equal(extres_proc_cache_get(&c, 0, &id), -ESRCH);
	extres_proc_cache_destroy(&c);
	assert_int_equal(count_fds(), fds);
	/* Without a cache, /proc each time. */
	assert_int_equal(extres_proc_cache_get(NULL, getpid(), &again), 0);
	assert_int_equal(again.starttime, id.starttime);
}

/* A child that exits is read again (a zombie: the same start time); once
 * reaped, it is no more. */
static void test_exit(void **state)
{
	struct extres_proc_cache c;
	struct extres_proc_ident id, kept;
	unsigned long reads;
	siginfo_t si;
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = waiter(p);
	close(p[0]);
	assert_int_equal(extres_proc_cache_init(&c), 0);
	kept = settle(&c, pid);
	assert_int_equal(kept.ppid, getpid());
	close(p[1]);
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	reads = c.reads;
	assert_int_equal(extres_proc_cache_get(&c, pid, &id), 0);
	assert_int_equal(c.reads, reads + 1);
	assert_int_equal(id.starttime, kept.starttime);
	/* A zombie is not kept. */
	assert_int_equal(extres_proc_cache_get(&c, pid, &id), 0);
	assert_int_equal(c.reads, reads + 2);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(extres_proc_cache_get(&c, pid, &id), -ESRCH);
	extres_proc_cache_destroy(&c);
}

/* A grandchild whose parent exits has a new parent: this process, its
 * subreaper. */
static void test_reparent(void **state)
{
	struct extres_proc_cache c;
	struct extres_proc_ident id;
	int mid[2], leaf[2], out[2];
	pid_t m, g = 0;
	char ch;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	assert_int_equal(pipe2(mid, O_CLOEXEC), 0);
	assert_int_equal(pipe2(leaf, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	m = fork();
	assert_true(m >= 0);
	if (m == 0) {
		close(mid[1]);
		close(out[0]);
		g = waiter(leaf);
		_exit(write(out[1], &g, sizeof(g)) == sizeof(g) &&
				      read(mid[0], &ch, 1) == 0 ?
			      0 :
			      1);
	}
	close(mid[0]);
	close(leaf[0]);
	close(out[1]);
	assert_int_equal(read(out[0], &g, sizeof(g)), sizeof(g));
	close(out[0]);
	assert_int_equal(extres_proc_cache_init(&c), 0);
	id = settle(&c, g);
	assert_int_equal(id.ppid, m);
	close(mid[1]);
	assert_int_equal(waitpid(m, NULL, 0), m);
	/* Orphaned: given to this process, at once. */
	assert_int_equal(extres_proc_cache_get(&c, g, &id), 0);
	assert_int_equal(id.ppid, getpid());
	id = settle(&c, g);
	assert_int_equal(id.ppid, getpid());
	close(leaf[1]);
	assert_int_equal(waitpid(g, NULL, 0), g);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
	extres_proc_cache_destroy(&c);
}

struct thread_arg {
	int ready[2], stop[2];
	pid_t tid;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	char ch;

	a->tid = (pid_t)syscall(SYS_gettid);
	if (write(a->ready[1], "x", 1) != 1 || read(a->stop[0], &ch, 1) != 0)
		return p;
	return NULL;
}

/* Whether thread `tid` of this process is gone (unhashed). */
static int thread_gone(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) < 0 && errno == ESRCH;
}

/* A thread is kept with its process; once it exits, it is no more. */
static void test_thread(void **state)
{
	struct timespec ms = { 0, 1000000 };
	struct extres_proc_cache c;
	struct extres_proc_ident id;
	struct thread_arg a;
	pthread_t t;
	void *ret;
	char ch;
	int i;

	assert_int_equal(pipe2(a.ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(a.stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&t, NULL, thread_main, &a), 0);
	assert_int_equal(read(a.ready[0], &ch, 1), 1);
	assert_int_equal(extres_proc_cache_init(&c), 0);
	id = settle(&c, a.tid);
	assert_int_equal(id.thread, 1);
	assert_int_equal(id.tgid, getpid());
	close(a.stop[1]);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_null(ret);
	/* The join returns before the kernel lets go of the thread's ID. */
	for (i = 0; i < 10000 && !thread_gone(a.tid); i++)
		nanosleep(&ms, NULL);
	assert_true(thread_gone(a.tid));
	assert_int_equal(extres_proc_cache_get(&c, a.tid, &id), -ESRCH);
	extres_proc_cache_destroy(&c);
	close(a.ready[0]);
	close(a.ready[1]);
	close(a.stop[0]);
}

struct many {
	int p[2];
	size_t n;
	pid_t pid[EXTRES_PROC_CACHE_SIZE + 32];
	uint64_t starttime[EXTRES_PROC_CACHE_SIZE + 32];
};

static void many_start(struct many *m, size_t n)
{
	size_t i;

	assert_true(n <= EXTRES_PROC_CACHE_SIZE + 32);
	assert_int_equal(pipe2(m->p, O_CLOEXEC), 0);
	for (i = 0; i < n; i++) {
		m->pid[i] = waiter(m->p);
		assert_int_equal(
			extres_proc_starttime(m->pid[i], &m->starttime[i]), 0);
	}
	m->n = n;
	close(m->p[0]);
}

static void many_stop(struct many *m)
{
	size_t i;

	close(m->p[1]);
	for (i = 0; i < m->n; i++)
		assert_int_equal(waitpid(m->pid[i], NULL, 0), m->pid[i]);
}

/* More processes than the table holds: the least recently asked go, and
 * their pidfds with them; the table never holds more than its size. */
static void test_evict(void **state)
{
	static struct many m;
	struct extres_proc_cache c;
	struct extres_proc_ident id;
	unsigned long reads;
	size_t i;
	int fds;

	assert_int_equal(extres_proc_cache_init(&c), 0);
	assert_true(c.cap > 0 && c.cap <= EXTRES_PROC_CACHE_SIZE);
	many_start(&m, c.cap + 16);
	fds = count_fds();
	for (i = 0; i < m.n; i++) {
		assert_int_equal(extres_proc_cache_get(&c, m.pid[i], &id), 0);
		assert_int_equal(extres_proc_cache_get(&c, m.pid[i], &id), 0);
		assert_int_equal(id.starttime, m.starttime[i]);
		assert_true(count_fds() - fds <= (int)c.cap);
	}
	/* The last one asked is kept; the first went. */
	reads = c.reads;
	assert_int_equal(extres_proc_cache_get(&c, m.pid[m.n - 1], &id), 0);
	assert_int_equal(c.reads, reads);
	assert_int_equal(extres_proc_cache_get(&c, m.pid[0], &id), 0);
	assert_int_equal(c.reads, reads + 1);
	assert_int_equal(id.starttime, m.starttime[0]);
	extres_proc_cache_destroy(&c);
	assert_int_equal(count_fds(), fds);
	many_stop(&m);
}

struct hammer {
	struct extres_proc_cache *c;
	struct many *m;
	unsigned seed;
	int bad;
};

static void *hammer_main(void *p)
{
	struct hammer *h = p;
	struct extres_proc_ident id;
	size_t k;
	int i;

	for (i = 0; i < 2000; i++) {
		k = rand_r(&h->seed) % h->m->n;
		if (extres_proc_cache_get(h->c, h->m->pid[k], &id) < 0 ||
		    id.starttime != h->m->starttime[k] || id.ppid != getpid())
			h->bad++;
	}
	return NULL;
}

/* Threads asking at once, with entries evicted under them: every answer
 * right (and, under the sanitizers, no descriptor used after its close). */
static void test_threads_at_once(void **state)
{
	static struct many m;
	struct extres_proc_cache c;
	struct hammer h[4];
	pthread_t t[4];
	int fds = count_fds(), i;

	assert_int_equal(extres_proc_cache_init(&c), 0);
	many_start(&m, c.cap + 32);
	for (i = 0; i < 4; i++) {
		h[i] = (struct hammer){ &c, &m, (unsigned)i + 1, 0 };
		assert_int_equal(
			pthread_create(&t[i], NULL, hammer_main, &h[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(h[i].bad, 0);
	}
	extres_proc_cache_destroy(&c);
	many_stop(&m);
	assert_int_equal(count_fds(), fds);
}

/* Where pidfd_open is missing (a seccomp filter makes it so in a child),
 * the cache reads /proc each time, and says the same. */
static void test_no_pidfd(void **state)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = f };
	struct extres_proc_cache c;
	struct extres_proc_ident id;
	uint64_t starttime;
	int status, i, ok;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		     prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 &&
		     extres_proc_cache_init(&c) == 0 &&
		     extres_proc_starttime(getpid(), &starttime) == 0;
		for (i = 0; ok && i < 5; i++)
			ok = extres_proc_cache_get(&c, getpid(), &id) == 0 &&
			     id.starttime == starttime && id.ppid == getppid();
		ok = ok && c.off && c.reads == 5;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_reparent),
		cmocka_unit_test(test_thread),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_threads_at_once),
		cmocka_unit_test(test_no_pidfd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
