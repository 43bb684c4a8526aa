/* SPDX-License-Identifier: MIT */
/*
 * What /proc/PID/stat says of a process, kept while pidfds show it still
 * holds: the /self walk (daemon/self.h) asks the same few processes again
 * and again, and a read of /proc costs a few microseconds where a poll of
 * a pidfd costs a few hundred nanoseconds.
 *
 * Each entry holds a pidfd of its process (of its thread, for a thread
 * that is not its process's first). What was read of the process stays
 * true while that pidfd does not poll readable (a live process keeps its
 * PID, its start time and its process) and, for its parent's PID, while
 * the parent's entry does not either: a process is given another parent
 * only when its parent exits. An entry leans on its parent's entry, whose
 * pidfd must have been opened before the child's /proc was read (so that
 * it is of the very process that was the parent then, never of a later
 * one given the same PID): the first ask of a process opens its parent's
 * pidfd, and the one after it reads /proc again and keeps the answer.
 *
 * The table holds at most EXTRES_PROC_CACHE_SIZE entries, one descriptor
 * each (fewer where the descriptor limit is low), the least recently used
 * dropped first.
 */
#ifndef EXTRES_PROC_CACHE_H
#define EXTRES_PROC_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXTRES_PROC_CACHE_SIZE 256
#define EXTRES_PROC_CACHE_BUCKETS 128

/* What /proc says of one process or thread. */
struct extres_proc_ident {
	uint64_t starttime; /* field 22 of /proc/PID/stat */
	pid_t ppid; /* field 4 */
	pid_t tgid; /* its process: the PID itself, unless `thread` */
	int thread; /* a thread other than its process's first */
};

/* One entry; only proc_cache.c looks inside. */
struct extres_proc_cache_entry {
	pid_t pid; /* 0: free */
	int fd; /* the pidfd of pid */
	uint32_t gen; /* changes whenever fd is closed */
	uint32_t parent_gen; /* the parent entry's gen when linked */
	int16_t next; /* next entry of its hash bucket, or -1 */
	int16_t parent; /* the entry of id.ppid leant on, or -1 */
	int complete; /* id holds, as long as fd and the parent's do */
	uint64_t opened; /* the table's seq when fd came in */
	uint64_t used; /* when last asked, for eviction */
	struct extres_proc_ident id;
};

struct extres_proc_cache {
	pthread_mutex_t lock;
	size_t cap; /* entries in use at most */
	int off; /* no pidfd_open here: read /proc each time */
	uint64_t seq, clock;
	/* Reads of /proc made by extres_proc_cache_get(): what the cache
	 * did not save. */
	unsigned long reads;
	int16_t head[EXTRES_PROC_CACHE_BUCKETS];
	struct extres_proc_cache_entry e[EXTRES_PROC_CACHE_SIZE];
};

/* An empty cache of at most EXTRES_PROC_CACHE_SIZE entries, and at most a
 * quarter of the descriptors RLIMIT_NOFILE allows now. 0 or a negative
 * errno. */
int extres_proc_cache_init(struct extres_proc_cache *c);

/* Close every descriptor the cache holds; it is not used again. */
void extres_proc_cache_destroy(struct extres_proc_cache *c);

/*
 * What extres_proc_stat_full() says of `pid` now, and for a thread its
 * process (extres_proc_tgid()), into *ret: 0, or -ESRCH (no such process)
 * or -EIO as those say. `c` may be NULL: /proc is read every time, as it
 * is where there are no pidfds (ENOSYS), and just this time where
 * descriptors run out or `pid` is a thread on a kernel before 6.9. Any
 * thread: the cache's lock is held across polls that do not wait and
 * closes of pidfds, never across a read of /proc or a call that may block.
 * A kept answer may outlive the truth only for the moment the kernel
 * takes, inside the parent's exit, between giving the child to its new
 * parent and marking the old one exited (microseconds).
 */
int extres_proc_cache_get(struct extres_proc_cache *c, pid_t pid,
			  struct extres_proc_ident *ret);

#endif
