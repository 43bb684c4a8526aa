/* SPDX-License-Identifier: MIT */
/*
 * Helpers the coordination-file tests share: whole files in and out, a
 * scratch tree removed at teardown, and processes in known states (gone, a
 * zombie). Every helper fails the running cmocka test on error.
 */
#ifndef EXTRES_TEST_PROC_FILES_H
#define EXTRES_TEST_PROC_FILES_H

#include <stdint.h>
#include <sys/types.h>

/* Write `content` to `path` (created 0644, truncated). */
void tf_write_file(const char *path, const char *content);
/* The whole file as a NUL-terminated string, in a static buffer. */
char *tf_read_file(const char *path);
/* Remove `dir` and everything below it; 0 or -1. */
int tf_remove_tree(const char *dir);
/* Field 22 of /proc/PID/stat. */
uint64_t tf_starttime(pid_t pid);
/* A PID that existed and is gone: a child that exited and was reaped. */
pid_t tf_dead_pid(void);
/* A child that has exited and is not reaped (the caller reaps it). */
pid_t tf_zombie_pid(void);

#endif
