/* SPDX-License-Identifier: MIT */
/*
 * extresctl run: the command's process. It is forked first and waits on a
 * pipe, so that the lease can name it (its PID and start time) before it
 * runs anything; then it gets its environment over that pipe and execs.
 * A second pipe, closed by the exec, says whether the exec worked.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/text.h"
#include "ctl/run.h"
#include "os/locks.h"
#include "os/proc.h"

/* Items of the message to the child, each NUL-terminated. */
#define ITEM_ENV 'E' /* NAME=VALUE */
#define ITEM_CPU 'C' /* a CPU number */
#define ITEM_GO 'G' /* the last one: exec */

/* Everything from fd until EOF, NUL-terminated, in *ret_len bytes. */
static char *read_all_fd(int fd, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *grown;
	ssize_t n;

	while (buf) {
		if (cap - len < 2) {
			grown = realloc(buf, cap * 2);
			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				break;
			buf[len] = '\0';
			*ret_len = len;
			return buf;
		}
		len += (size_t)n;
	}
	free(buf);
	return NULL;
}

/*
 * In the child: prove, to whoever reads the coordination files, that this
 * process is a lease's command (lease/lease.h): a read lock on each file's
 * proof byte, on a descriptor left open through exec (closing it would
 * drop the lock). Before any line names us, so that no reader ever sees
 * our lines unproven. A file that cannot be opened or locked leaves the
 * lease unproven, which costs it only its listing.
 */
static void take_proofs(char *const files[])
{
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; files && files[i]; i++) {
		fd = open(files[i],
			  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    extres_lock_proof_take(fd, EXTRES_LEASE_HOLDER_PROOF) < 0)
			close(fd);
	}
}

/* In the child: wait for the message, apply it, exec. Never returns. */
static void child_main(char *const argv[], char *const files[],
		       const sigset_t *old_mask, int go_fd, int status_fd)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, tstp;
	cpu_set_t cpus;
	size_t len, off;
	int go = 0, bind = 0, e;
	char *msg, *item;

	take_proofs(files);
	/* Proven: the parent may write our lines now. */
	if (write(status_fd, "p", 1) != 1)
		_exit(127);
	msg = read_all_fd(go_fd, &len);
	if (!msg)
		_exit(127);
	CPU_ZERO(&cpus);
	for (off = 0; off < len; off += strlen(item) + 1) {
		item = msg + off;
		if (item[0] == ITEM_ENV) {
			if (putenv(item + 1) != 0)
				_exit(127);
		} else if (item[0] == ITEM_CPU) {
			CPU_SET((size_t)strtoul(item + 1, NULL, 10), &cpus);
			bind = 1;
		} else if (item[0] == ITEM_GO) {
			go = 1;
		}
	}
	/* No go: the lease was not taken; nothing may run. */
	if (!go)
		_exit(127);
	if (bind && sched_setaffinity(0, sizeof(cpus), &cpus) < 0) {
		e = errno;
		goto fail;
	}
	/* A Ctrl-Z that came while we waited (blocked) must not stop the
	 * command the moment it starts: ignoring a signal discards it. */
	sigaction(SIGTSTP, &ign, &tstp);
	sigaction(SIGTSTP, &tstp, NULL);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	execvp(argv[0], argv);
	e = errno;
fail:
	if (write(status_fd, &e, sizeof(e)) < 0) {
		/* Nobody to tell: the exit status says it. */
	}
	_exit(e == ENOENT ? 127 : 126);
}

int run_child_spawn(char *const argv[], char *const files[],
		    const sigset_t *old_mask, struct run_child *ch,
		    struct extres_err *err)
{
	int go[2], status[2], r;
	ssize_t n;
	char ack;

	ch->pid = -1;
	ch->go_fd = ch->status_fd = -1;
	ch->reaped = 0;
	if (pipe2(go, O_CLOEXEC) < 0)
		return extres_err_set(err, errno, "pipe: %s", strerror(errno));
	if (pipe2(status, O_CLOEXEC) < 0) {
		r = extres_err_set(err, errno, "pipe: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return r;
	}
	fflush(NULL);
	ch->pid = fork();
	if (ch->pid == 0) {
		close(go[1]);
		close(status[0]);
		child_main(argv, files, old_mask, go[0], status[1]);
	}
	r = ch->pid < 0 ? -errno : 0;
	close(go[0]);
	close(status[1]);
	if (r < 0) {
		close(go[1]);
		close(status[0]);
		return extres_err_set(err, -r, "fork: %s", strerror(-r));
	}
	ch->go_fd = go[1];
	ch->status_fd = status[0];
	do
		n = read(ch->status_fd, &ack, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		run_child_kill(ch);
		return extres_err_set(
			err, EIO, "the command's process (PID %d) died at once",
			(int)ch->pid);
	}
	r = extres_proc_starttime(ch->pid, &ch->starttime);
	if (r < 0) {
		run_child_kill(ch);
		return extres_err_set(err, -r,
				      "cannot read the start time of %d: %s",
				      (int)ch->pid, strerror(-r));
	}
	return 0;
}

/* The message: the environment, the CPUs, go. */
static int send_message(int fd, char *const env[], const cpu_set_t *cpus)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&buf, &len);
	int r;

	if (!m)
		return -ENOMEM;
	for (i = 0; env && env[i]; i++)
		fprintf(m, "%c%s%c", ITEM_ENV, env[i], 0);
	for (i = 0; cpus && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, cpus))
			fprintf(m, "%c%zu%c", ITEM_CPU, i, 0);
	fprintf(m, "%c%c", ITEM_GO, 0);
	r = extres_memstream_close(m, &buf);
	if (r < 0)
		return r;
	r = extres_write_all(fd, buf, len);
	free(buf);
	return r;
}

int run_child_go(struct run_child *ch, char *const env[], const cpu_set_t *cpus,
		 struct extres_err *err)
{
	ssize_t n;
	int r, e;

	r = send_message(ch->go_fd, env, cpus);
	close(ch->go_fd);
	ch->go_fd = -1;
	if (r < 0) {
		run_child_kill(ch);
		return extres_err_set(err, -r,
				      "cannot hand the command its lease: %s",
				      strerror(-r));
	}
	/* EOF: the exec closed the pipe. */
	do
		n = read(ch->status_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(ch->status_fd);
	ch->status_fd = -1;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(e)) {
		e = EIO;
		run_child_kill(ch);
	}
	/* It exits at once, saying how (126 or 127). */
	while (!ch->reaped && waitpid(ch->pid, &ch->status, 0) < 0 &&
	       errno == EINTR)
		;
	ch->reaped = 1;
	return extres_err_set(err, e, "%s", strerror(e));
}

int run_child_ended(struct run_child *ch)
{
	pid_t p;

	if (ch->reaped)
		return 1;
	do
		p = waitpid(ch->pid, &ch->status, WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p == ch->pid || (p < 0 && errno == ECHILD)) {
		ch->reaped = 1;
		return 1;
	}
	return 0;
}

void run_child_kill(struct run_child *ch)
{
	if (ch->go_fd >= 0)
		close(ch->go_fd);
	if (ch->status_fd >= 0)
		close(ch->status_fd);
	ch->go_fd = ch->status_fd = -1;
	if (ch->pid <= 0 || ch->reaped)
		return;
	kill(ch->pid, SIGKILL);
	while (waitpid(ch->pid, &ch->status, 0) < 0 && errno == EINTR)
		;
	ch->reaped = 1;
}

int run_child_exit_status(const struct run_child *ch)
{
	if (WIFSIGNALED(ch->status))
		return 128 + WTERMSIG(ch->status);
	return WEXITSTATUS(ch->status);
}

int run_child_wait(struct run_child *ch, int sigfd)
{
	struct signalfd_siginfo si;
	struct pollfd p = { .fd = sigfd, .events = POLLIN };
	ssize_t n;

	while (!run_child_ended(ch)) {
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		n = read(sigfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si) || si.ssi_signo == SIGCHLD)
			continue;
		/* Ctrl-Z (blocked for the take's sake): the command got its
		 * own from the terminal; we stop as the shell expects. */
		if (si.ssi_signo == SIGTSTP) {
			raise(SIGSTOP);
			continue;
		}
		/* What the terminal sent (Ctrl-C) went to the child's
		 * process group, which is ours: it has it already. */
		if (si.ssi_code == SI_KERNEL)
			continue;
		kill(ch->pid, (int)si.ssi_signo);
	}
	return 0;
}
