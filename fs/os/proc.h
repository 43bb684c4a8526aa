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

/* Field 22 of /proc/PID/stat. 0, -ESRCH (no such process), or -EIO. */
int extres_proc_starttime(pid_t pid, uint64_t *ret);

/* "PID 123 (its command line)" into buf, for messages that name another
 * process; control characters show as '?', the command line is cut at
 * 255 bytes, and a process whose command line cannot be read is "PID 123". */
void extres_proc_describe(pid_t pid, char *buf, size_t size);

/* Fill *p for `pid`. kill(pid, 0) decides whether it exists (EPERM still
 * means it does); /proc only adds its state and start time. */
void extres_proc_probe(pid_t pid, struct extres_proc_probe *p);

#endif
