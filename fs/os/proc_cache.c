/* SPDX-License-Identifier: MIT */
#include "os/proc_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "os/proc.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static int read_now(struct extres_proc_cache *c, pid_t pid,
		    struct extres_proc_ident *ret)
{
	struct extres_proc_ident id = { 0 };
	struct extres_proc_stat st;
	int r;

	if (c)
		__atomic_fetch_add(&c->reads, 1, __ATOMIC_RELAXED);
	r = extres_proc_stat_full(pid, &st);
	if (r < 0)
		return r;
	id.starttime = st.starttime;
	id.ppid = st.ppid;
	id.thread = st.thread;
	id.tgid = pid;
	if (st.thread) {
		r = extres_proc_tgid(pid, &id.tgid);
		if (r < 0)
			return r;
	}
	*ret = id;
	return 0;
}

/* A pidfd of `pid`, or a negative errno: ESRCH where there is no such
 * process, EINVAL where it is a thread other than its process's first on
 * a kernel before 6.9 (no PIDFD_THREAD). */
static int open_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	/* A thread other than its process's first has no process pidfd
	 * (EINVAL; ENOENT on newer kernels, 6.18 here): its own pidfd. */
	if (fd < 0 && (errno == EINVAL || errno == ENOENT))
		fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
	return fd < 0 ? -errno : fd;
}

/* Whether the process (or thread) of pidfd `fd` has not exited. A failed
 * poll says no: the caller then reads /proc again. */
static int alive(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

static unsigned bucket(pid_t pid)
{
	return ((uint32_t)pid * 2654435761u >> 16) % EXTRES_PROC_CACHE_BUCKETS;
}

static int find(const struct extres_proc_cache *c, pid_t pid)
{
	int i;

	for (i = c->head[bucket(pid)]; i >= 0; i = c->e[i].next)
		if (c->e[i].pid == pid)
			return i;
	return -1;
}

/* Empty entry `i`, closing its pidfd: nobody polls it, for every poll is
 * made under the lock, which the caller holds. Entries leaning on it see
 * its gen change. */
static void drop(struct extres_proc_cache *c, int i)
{
	struct extres_proc_cache_entry *e = &c->e[i];
	int16_t *at = &c->head[bucket(e->pid)];

	while (*at != i)
		at = &c->e[*at].next;
	*at = e->next;
	close(e->fd);
	e->gen++;
	e->pid = 0;
	e->fd = -1;
	e->next = -1;
	e->parent = -1;
	e->complete = 0;
}

/* Put `fd`, a pidfd of `pid` (which has no entry), in a free entry or the
 * least recently used one; its index. */
static int insert(struct extres_proc_cache *c, pid_t pid, int fd)
{
	struct extres_proc_cache_entry *e;
	int i, at = 0;

	for (i = 0; i < (int)c->cap; i++) {
		if (!c->e[i].pid) {
			at = i;
			break;
		}
		if (c->e[i].used < c->e[at].used)
			at = i;
	}
	e = &c->e[at];
	if (e->pid)
		drop(c, at);
	e->pid = pid;
	e->fd = fd;
	e->opened = ++c->seq;
	e->used = ++c->clock;
	memset(&e->id, 0, sizeof(e->id));
	e->next = c->head[bucket(pid)];
	c->head[bucket(pid)] = (int16_t)at;
	return at;
}

/*
 * Entry `i` as it stands: 1 when what it holds is still true, 0 when its
 * process lives but /proc must be read again (never read, or its parent
 * entry went), -1 when its process exited (the entry is gone).
 */
static int check(struct extres_proc_cache *c, int i)
{
	struct extres_proc_cache_entry *e = &c->e[i], *p = NULL;
	struct pollfd fds[2] = { { .fd = e->fd, .events = POLLIN } };
	nfds_t n = 1;
	int r;

	if (e->complete && e->parent >= 0) {
		p = &c->e[e->parent];
		if (p->gen == e->parent_gen) {
			fds[1].fd = p->fd;
			fds[1].events = POLLIN;
			n = 2;
		} else {
			e->complete = 0;
		}
	}
	r = poll(fds, n, 0);
	if (r < 0)
		return 0;
	if (fds[0].revents) {
		drop(c, i);
		return -1;
	}
	if (n == 2 && fds[1].revents) {
		/* The parent exited: this process has another now. */
		drop(c, e->parent);
		e->complete = 0;
	}
	if (!e->complete)
		return 0;
	e->used = ++c->clock;
	if (n == 2)
		p->used = c->clock;
	return 1;
}

/*
 * Keep `id`, read of entry i's process after the table's seq was `seq0`.
 * The read was of that very process if its pidfd (opened before the read)
 * still polls unreadable now. Its parent is the process of the entry of
 * id->ppid if that one's pidfd was opened before the read and is still
 * unreadable: that process then held the PID all along. Without such an
 * entry, *ret_want_parent asks for a pidfd of the parent, for the next
 * read.
 */
static void keep(struct extres_proc_cache *c, int i,
		 const struct extres_proc_ident *id, uint64_t seq0,
		 pid_t *ret_want_parent)
{
	struct extres_proc_cache_entry *e = &c->e[i];
	int p;

	if (!alive(e->fd)) {
		drop(c, i);
		return;
	}
	e->id = *id;
	e->parent = -1;
	e->complete = id->ppid <= 1;
	e->used = ++c->clock;
	if (e->complete)
		return;
	p = find(c, id->ppid);
	if (p < 0)
		*ret_want_parent = id->ppid;
	else if (c->e[p].opened <= seq0 && alive(c->e[p].fd)) {
		e->parent = (int16_t)p;
		e->parent_gen = c->e[p].gen;
		e->complete = 1;
		c->e[p].used = c->clock;
	}
}

/* An entry that holds only a pidfd of `pid`, for the next read of a
 * child. */
static void add_parent(struct extres_proc_cache *c, pid_t pid)
{
	int fd = open_pidfd(pid);

	if (fd < 0)
		return;
	pthread_mutex_lock(&c->lock);
	if (find(c, pid) < 0) {
		insert(c, pid, fd);
		fd = -1;
	}
	pthread_mutex_unlock(&c->lock);
	if (fd >= 0)
		close(fd);
}

int extres_proc_cache_get(struct extres_proc_cache *c, pid_t pid,
			  struct extres_proc_ident *ret)
{
	struct extres_proc_ident id;
	pid_t want_parent = 0;
	uint64_t seq0;
	uint32_t gen = 0;
	int i = -1, fd = -1, r, off;

	if (!c || pid <= 0)
		return read_now(c, pid, ret);
	pthread_mutex_lock(&c->lock);
	off = c->off;
	if (!off)
		i = find(c, pid);
	if (i >= 0) {
		r = check(c, i);
		if (r > 0) {
			*ret = c->e[i].id;
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		if (r < 0)
			i = -1;
		else
			gen = c->e[i].gen;
	}
	seq0 = c->seq;
	pthread_mutex_unlock(&c->lock);
	if (off)
		return read_now(c, pid, ret);
	/* The pidfd first: if it still polls unreadable after the read, the
	 * read was of its process. */
	if (i < 0) {
		fd = open_pidfd(pid);
		if (fd == -ESRCH)
			return fd;
		if (fd < 0) {
			/* No pidfds at all here; out of descriptors, or a
			 * thread on an older kernel, for now: read /proc as
			 * if there were no cache. */
			if (fd == -ENOSYS) {
				pthread_mutex_lock(&c->lock);
				c->off = 1;
				pthread_mutex_unlock(&c->lock);
			}
			return read_now(c, pid, ret);
		}
	}
	r = read_now(c, pid, &id);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	pthread_mutex_lock(&c->lock);
	if (fd >= 0) {
		/* Another thread may have made an entry meanwhile: it stays,
		 * and this read is answered as is. */
		if (find(c, pid) < 0) {
			i = insert(c, pid, fd);
			fd = -1;
		}
	} else if (c->e[i].gen != gen) {
		/* The pidfd read under went (evicted): nothing tells whether
		 * the read was of its process. */
		i = -1;
	}
	if (i >= 0)
		keep(c, i, &id, seq0, &want_parent);
	pthread_mutex_unlock(&c->lock);
	if (fd >= 0)
		close(fd);
	if (want_parent > 1)
		add_parent(c, want_parent);
	*ret = id;
	return 0;
}

int extres_proc_cache_init(struct extres_proc_cache *c)
{
	struct rlimit rl;
	size_t i;
	int r;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < EXTRES_PROC_CACHE_BUCKETS; i++)
		c->head[i] = -1;
	for (i = 0; i < EXTRES_PROC_CACHE_SIZE; i++) {
		c->e[i].fd = -1;
		c->e[i].next = -1;
		c->e[i].parent = -1;
	}
	/* The daemon's other descriptors come first. */
	c->cap = EXTRES_PROC_CACHE_SIZE;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 < c->cap)
		c->cap = (size_t)(rl.rlim_cur / 4);
	c->off = c->cap == 0;
	r = -pthread_mutex_init(&c->lock, NULL);
	return r;
}

void extres_proc_cache_destroy(struct extres_proc_cache *c)
{
	size_t i;

	for (i = 0; i < EXTRES_PROC_CACHE_SIZE; i++)
		if (c->e[i].pid)
			close(c->e[i].fd);
	pthread_mutex_destroy(&c->lock);
}
