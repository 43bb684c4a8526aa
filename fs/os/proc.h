/* SPDX-License-Identifier: MIT */
/*
 * What /proc says of a process: its start time (which tells a PID reused
 * from the process that had it) and whether it still lives.
 */
#ifndef EXTRES_PROC_H
#define EXTRES_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What /proc says of one PID at one moment. */
struct extres_proc_probe {
	pid_t pid;
	int gone; /* no such process */
	int unreadable; /* exists, but /proc told us nothing */
	char state; /* field 3 of /proc/PID/stat ('Z' zombie, ...) */
	uint64_t starttime;
};

/* State (field 3) and start time (field 22) of /proc/PID/stat; either
 * out-parameter may be NULL. 0, -ESRCH (no such process) or -EIO. */
int extres_proc_stat(pid_t pid, char *ret_state, uint64_t *ret_starttime);

/* The same, and the parent's PID (field 4). */
int extres_proc_stat_ppid(pid_t pid, char *ret_state, pid_t *ret_ppid,
			  uint64_t *ret_starttime);

/* Parse the text of a /proc/PID/stat (`len` bytes): state, parent and start
 * time, each out-parameter optional. 0 or -EIO. Pure. */
int extres_proc_parse_stat(const char *buf, size_t len, char *ret_state,
			   pid_t *ret_ppid, uint64_t *ret_starttime);

/* What /proc/PID/stat says of a process (or a thread). */
struct extres_proc_stat {
	char state;
	pid_t ppid;
	uint64_t starttime;
	int thread; /* a thread other than its process's first */
};

/* The same, whole; and from the text of a stat file (pure). */
int extres_proc_stat_full(pid_t pid, struct extres_proc_stat *ret);
int extres_proc_parse_stat_full(const char *buf, size_t len,
				struct extres_proc_stat *ret);

/* Field 22 of /proc/PID/stat. 0, -ESRCH (no such process), or -EIO. */
int extres_proc_starttime(pid_t pid, uint64_t *ret);

/* "PID 123 (its command line)" into buf, for messages that name another
 * process; the command line is read up to 255 bytes, shows as one line of
 * UTF-8 (extres_line_text: control characters as '?', bytes that are not
 * UTF-8 as U+FFFD) and is cut to fit; a process whose command line cannot
 * be read is "PID 123". */
void extres_proc_describe(pid_t pid, char *buf, size_t size);

/* Fill *p for `pid`. kill(pid, 0) decides whether it exists (EPERM still
 * means it does); /proc only adds its state and start time. */
void extres_proc_probe(pid_t pid, struct extres_proc_probe *p);

/* The longest /proc/PID/comm, in bytes (TASK_COMM_LEN - 1). */
#define EXTRES_PROC_COMM_MAX 15

/* Room for a comm as extres_proc_comm() shows it: each byte may become a
 * 3-byte U+FFFD. */
#define EXTRES_PROC_COMM_SIZE (3 * EXTRES_PROC_COMM_MAX + 1)

/* What the views show of a live process. Text fields are UTF-8 without
 * control characters (as extres_line_text() makes them); empty when
 * unknown. */
struct extres_proc_info {
	char state;
	pid_t ppid;
	uint64_t starttime;
	int has_uid;
	uid_t uid; /* real uid */
	char comm[EXTRES_PROC_COMM_SIZE]; /* /proc/PID/comm */
	char exe[64]; /* base name of /proc/PID/exe (needs ptrace access) */
};

/* The name /proc/PID/comm gives `pid` (it changes at each exec), as one
 * line of UTF-8 (extres_line_text()) into buf (EXTRES_PROC_COMM_SIZE
 * bytes hold any). 0, -ESRCH or -EIO, with buf empty then. */
int extres_proc_comm(pid_t pid, char *buf, size_t size);

/* The process (thread group) of thread `tid`: 0, -ESRCH or -EIO. */
int extres_proc_tgid(pid_t tid, pid_t *ret);

/* Fill *ret for `pid`: 0, -ESRCH (no such process) or -EIO (its stat
 * unreadable); the other fields are best effort. */
int extres_proc_info(pid_t pid, struct extres_proc_info *ret);

/* The boot time (seconds since the epoch, /proc/stat's btime): a start
 * time in clock ticks is btime + ticks / sysconf(_SC_CLK_TCK). 0 or -EIO. */
int extres_proc_boot_time(uint64_t *ret);

#endif
