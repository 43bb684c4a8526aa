/* SPDX-License-Identifier: MIT */
/*
 * Helpers the coordination-file tests share: whole files in and out, a
 * scratch tree made at setup and removed at teardown, and processes in known
 * states (gone, a zombie, live). The scratch-tree helpers return -1 for cmocka's
 * setup and teardown to report; the others fail the running test on error.
 */
#ifndef EXTRES_TEST_PROC_FILES_H
#define EXTRES_TEST_PROC_FILES_H

#include <stdint.h>
#include <sys/types.h>

#define TF_DIR_LEN 64
#define TF_PATH_LEN 128

/* Write `content` to `path` (created 0644, truncated). */
void tf_write_file(const char *path, const char *content);
/* The whole file as a NUL-terminated string, in a static buffer. */
char *tf_read_file(const char *path);
/* A fresh directory "/tmp/extres-test-<name>-XXXXXX" in `dir`, and
 * "<dir>/coord" (not created) in `path`; 0 or -1. */
int tf_coord_dir(const char *name, char dir[TF_DIR_LEN],
		 char path[TF_PATH_LEN]);
/* Remove `dir` and everything below it; 0 or -1. */
int tf_remove_tree(const char *dir);
/* Field 22 of /proc/PID/stat. */
uint64_t tf_starttime(pid_t pid);
/* A PID that existed and is gone: a child that exited and was reaped. */
pid_t tf_dead_pid(void);
/* A child that has exited and is not reaped (the caller reaps it). */
pid_t tf_zombie_pid(void);
/* A live child that pauses until tf_reap(); it dies with this process, so
 * a failed test leaves none behind. */
pid_t tf_live_pid(void);
/* SIGKILL child `pid` (which no signal mask can hold off) and reap it. */
void tf_reap(pid_t pid);

#endif
