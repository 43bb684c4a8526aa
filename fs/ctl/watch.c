/* SPDX-License-Identifier: MIT */
/*
 * extresctl watch [--follow] [--timeout SECONDS] FILE
 *
 * Wait until a file of an extresd mount changes, and print its new value:
 * what a shell cannot do by itself, since waiting takes poll() (inotify
 * never hears of changes a FUSE daemon makes). A changed value is a new
 * file under the same name (the open one keeps the old value, whole), so
 * each round opens the path again and waits on the new file; a change that
 * falls between the read and the wait is not lost, since the file waited
 * on is then no longer served and the wait ends at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "ctl/ctl.h"

/* A property file holds at most a value of 64 KiB and its newline. */
#define VALUE_MAX (64 * 1024 + 1)
/* How long past --timeout a daemon that does not answer may hold us. */
#define SLACK_S 2

static void usage_watch(FILE *out)
{
	fprintf(out,
		"usage: extresctl watch [--follow] [--timeout SECONDS] FILE\n"
		"\n"
		"Wait until FILE, a property file of an extresd mount (or one of\n"
		"its .meta files), changes, and print its new value. A script that\n"
		"reacts to a GPU's health:\n"
		"\n"
		"    extresctl watch --follow /run/extres/gpu/0/health |\n"
		"    while read -r health; do echo \"gpu 0: $health\"; done\n"
		"\n"
		"    --follow           print the value now, then each new value as it\n"
		"                       comes, until killed (or the timeout)\n"
		"    --timeout SECONDS  give up after SECONDS (default: wait for ever);\n"
		"                       a daemon that does not answer ends it by\n"
		"                       SIGALRM 2 s later (exit status 142)\n"
		"\n"
		"Exit status: 0 after a change (--follow: at the timeout), 1 when FILE\n"
		"cannot be read or waited on, or no change came in time, 2 on usage\n"
		"errors.\n");
}

/* Open the file to wait on, and with `ret`, read its value now: its
 * content without the final newline. Returns the descriptor, or -1 after
 * saying why. */
static int open_value(const char *path, char **ret)
{
	struct statfs fs;
	size_t len = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		extres_log(EXTRES_LOG_ERR, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Elsewhere a wait for POLLPRI would never end. */
	if (fstatfs(fd, &fs) < 0 || fs.f_type != FUSE_SUPER_MAGIC) {
		extres_log(
			EXTRES_LOG_ERR,
			"%s: this file cannot be waited on: not a file of an extresd mount",
			path);
		close(fd);
		return -1;
	}
	if (!ret)
		return fd;
	r = extres_read_all(fd, VALUE_MAX, ret, &len);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s: %s", path, strerror(-r));
		close(fd);
		return -1;
	}
	if (len && (*ret)[len - 1] == '\n')
		(*ret)[len - 1] = '\0';
	return fd;
}

/* Wait for POLLPRI on fd until `deadline` (monotonic ms; 0: none). 1 when
 * it came, 0 at the deadline, -1 after saying why. */
static int wait_change(const char *path, int fd, long long deadline)
{
	/* POLLPRI alone: the file is always readable, as in sysfs. */
	struct pollfd p = { .fd = fd, .events = POLLPRI };
	long long left;
	int n;

	for (;;) {
		left = deadline ? deadline - extres_now_ms() : -1;
		if (deadline && left <= 0)
			return 0;
		n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			extres_log(EXTRES_LOG_ERR, "%s: poll: %s", path,
				   strerror(errno));
			return -1;
		}
		if (n > 0 && (p.revents & (POLLPRI | POLLERR)))
			return 1;
		if (n > 0) {
			extres_log(EXTRES_LOG_ERR, "%s: poll: revents 0x%x",
				   path, (unsigned)p.revents);
			return -1;
		}
	}
}

struct watch {
	const char *path;
	int follow;
	long timeout;
	long long deadline;
};

static int watch_file(const struct watch *w)
{
	char *value = NULL;
	int fd, r, status = 1;
	unsigned long changes;

	/* Without --follow the value before the change is not shown. */
	fd = open_value(w->path, w->follow ? &value : NULL);
	for (changes = 0; fd >= 0; changes++) {
		if (value) {
			printf("%s\n", value);
			free(value);
			value = NULL;
			if (fflush(stdout) != 0)
				break;
		}
		if (changes && !w->follow) {
			status = 0;
			break;
		}
		r = wait_change(w->path, fd, w->deadline);
		if (r <= 0) {
			/* A follower's timeout ends it as asked. */
			status = r == 0 && w->follow ? 0 : 1;
			if (r == 0 && !w->follow)
				extres_log(EXTRES_LOG_ERR,
					   "%s: no change within %ld s",
					   w->path, w->timeout);
			break;
		}
		close(fd);
		fd = open_value(w->path, &value);
	}
	if (fd >= 0)
		close(fd);
	free(value);
	return extres_ctl_flush_stdout(status);
}

/* Copy what is readable on `from` to `to`; 0 at the end (or when `to` is
 * gone), 1 while more may come. */
static int relay(int from, int to)
{
	char buf[4096];
	ssize_t n, w, off;

	n = read(from, buf, sizeof(buf));
	if (n < 0)
		return errno == EINTR ? 1 : 0;
	for (off = 0; off < n; off += w) {
		w = write(to, buf + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w < 0)
			return 0;
	}
	return n > 0;
}

/*
 * With --timeout, the mount is asked from a child: a daemon that stops
 * answering holds a request to it (open, read, poll) for good, and once
 * the daemon has taken the request (over io_uring, at once) not even
 * SIGKILL ends that wait. This process never asks the mount: it relays the
 * child's output through pipes (so the child holds none of the caller's),
 * and SIGALRM's default action ends it SLACK_S past the timeout; the
 * child dies with it (PR_SET_PDEATHSIG) once the daemon lets go.
 */
static int watch_in_child(const struct watch *w)
{
	pid_t parent = getpid(), pid;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, null, status;
	struct pollfd p[2];

	fflush(NULL);
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    (pid = fork()) < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot start a process: %s",
			   strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
		    getppid() != parent || null < 0 || dup2(null, 0) < 0 ||
		    dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(1);
		_exit(watch_file(w));
	}
	close(out[1]);
	close(err[1]);
	p[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
	p[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents && !relay(out[0], 1))
			p[0].fd = -1;
		if (p[1].revents && !relay(err[0], 2))
			p[1].fd = -1;
	}
	close(out[0]);
	close(err[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int extres_ctl_watch(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch w = { 0 };
	int c;

	optind = 0;
	while ((c = extres_ctl_next_opt("watch", "watch", argc, argv, ":h",
					longopts)) != -1) {
		if (c == 'f') {
			w.follow = 1;
			continue;
		}
		if (c == 't') {
			if (extres_ctl_parse_seconds(optarg, 1, 31536000,
						     &w.timeout) < 0)
				return extres_ctl_usage_error(
					"watch",
					"watch: --timeout '%s' is not a number of seconds from 1 to 31536000",
					optarg);
			continue;
		}
		if (c != 'h')
			return CTL_EXIT_USAGE;
		usage_watch(stdout);
		return 0;
	}
	if (optind >= argc)
		return extres_ctl_usage_error("watch",
					      "watch: FILE is missing");
	w.path = argv[optind++];
	if (optind < argc)
		return extres_ctl_usage_error("watch",
					      "watch: unexpected argument '%s'",
					      argv[optind]);
	if (!w.timeout)
		return watch_file(&w);
	w.deadline = extres_now_ms() + w.timeout * 1000LL;
	/* Only a fatal signal ends a wait on a daemon that stopped
	 * answering: SIGALRM's default action, SLACK_S past the timeout. */
	signal(SIGALRM, SIG_DFL);
	alarm((unsigned)w.timeout + SLACK_S);
	return watch_in_child(&w);
}
