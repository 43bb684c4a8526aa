/* SPDX-License-Identifier: MIT */
#include "os/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"

int extres_proc_parse_stat_full(const char *buf, size_t len,
				struct extres_proc_stat *ret)
{
	const char *p, *end = buf + len, *f = NULL;
	struct extres_proc_stat st = { 0 };
	uint64_t v;
	size_t flen = 0;
	int i;

	/* The command name (field 2) may hold spaces and parentheses; it ends
	 * at the last ')'. */
	p = memrchr(buf, ')', len);
	if (!p)
		return -EIO;
	p++;
	if (!extres_next_word(&p, end, &f, &flen) || flen != 1)
		return -EIO;
	st.state = f[0];
	for (i = 4; i <= 22; i++) {
		if (!extres_next_word(&p, end, &f, &flen))
			return -EIO;
		if (i == 4 && extres_parse_dec(f, flen, INT_MAX, &v) < 0)
			return -EIO;
		if (i == 4)
			st.ppid = (pid_t)v;
	}
	if (extres_parse_dec(f, flen, UINT64_MAX, &st.starttime) < 0)
		return -EIO;
	/* Field 38, exit_signal, is -1 for a thread that is not its
	 * process's first (older kernels may lack it: no thread then). */
	for (i = 23; i <= 38 && extres_next_word(&p, end, &f, &flen); i++)
		if (i == 38)
			st.thread = flen == 2 && f[0] == '-' && f[1] == '1';
	*ret = st;
	return 0;
}

int extres_proc_parse_stat(const char *buf, size_t len, char *ret_state,
			   pid_t *ret_ppid, uint64_t *ret_starttime)
{
	struct extres_proc_stat st;
	int r = extres_proc_parse_stat_full(buf, len, &st);

	if (r < 0)
		return r;
	if (ret_state)
		*ret_state = st.state;
	if (ret_ppid)
		*ret_ppid = st.ppid;
	if (ret_starttime)
		*ret_starttime = st.starttime;
	return 0;
}

/* Up to size - 1 bytes of /proc/PID/NAME into buf, NUL-ended; the length,
 * or -ESRCH (no such process) or -EIO. */
static ssize_t read_proc_file(pid_t pid, const char *name, char *buf,
			      size_t size)
{
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EIO;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return e == ESRCH ? -ESRCH : -EIO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

int extres_proc_stat_ppid(pid_t pid, char *ret_state, pid_t *ret_ppid,
			  uint64_t *ret_starttime)
{
	char buf[4096];
	ssize_t len = read_proc_file(pid, "stat", buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return extres_proc_parse_stat(buf, (size_t)len, ret_state, ret_ppid,
				      ret_starttime);
}

int extres_proc_stat_full(pid_t pid, struct extres_proc_stat *ret)
{
	char buf[4096];
	ssize_t len = read_proc_file(pid, "stat", buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return extres_proc_parse_stat_full(buf, (size_t)len, ret);
}

int extres_proc_stat(pid_t pid, char *ret_state, uint64_t *ret_starttime)
{
	return extres_proc_stat_ppid(pid, ret_state, NULL, ret_starttime);
}

int extres_proc_starttime(pid_t pid, uint64_t *ret)
{
	return extres_proc_stat(pid, NULL, ret);
}

void extres_proc_describe(pid_t pid, char *buf, size_t size)
{
	char path[64], cmd[256];
	size_t len = 0, i;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (len < sizeof(cmd) - 1) {
			n = read(fd, cmd + len, sizeof(cmd) - 1 - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(fd);
	}
	/* Arguments are NUL-separated; any user chose these bytes, so no
	 * control character reaches a log or a terminal, and no byte that is
	 * not UTF-8 reaches a view that must be text. */
	while (len > 0 && cmd[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	n = snprintf(buf, size, len ? "PID %d (" : "PID %d", (int)pid);
	if (!len || n < 0 || (size_t)n + 2 > size)
		return;
	n += (ssize_t)extres_line_text(buf + n, size - (size_t)n - 1, cmd, len);
	buf[n++] = ')';
	buf[n] = '\0';
}

void extres_proc_probe(pid_t pid, struct extres_proc_probe *p)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	/* kill() is the authority on existence (EPERM still means "exists");
	 * /proc only adds detail. */
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		p->gone = 1;
		return;
	}
	r = extres_proc_stat(pid, &p->state, &p->starttime);
	if (r == -ESRCH)
		p->gone = 1;
	else if (r < 0)
		p->unreadable = 1;
}

/* The first number of /proc/PID/status's line `field` ("\nUid:"). */
static int status_number(pid_t pid, const char *field, uint64_t max,
			 uint64_t *ret)
{
	char buf[4096];
	const char *p, *end, *f;
	ssize_t len = read_proc_file(pid, "status", buf, sizeof(buf));
	size_t flen;

	if (len < 0)
		return (int)len;
	p = strstr(buf, field);
	if (!p)
		return -EIO;
	p += strlen(field);
	end = strchr(p, '\n');
	if (!end)
		end = buf + len;
	if (!extres_next_word(&p, end, &f, &flen) ||
	    extres_parse_dec(f, flen, max, ret) < 0)
		return -EIO;
	return 0;
}

static int read_uid(pid_t pid, uid_t *ret)
{
	uint64_t uid;
	int r = status_number(pid, "\nUid:", UINT32_MAX - 1, &uid);

	if (r == 0)
		*ret = (uid_t)uid;
	return r;
}

int extres_proc_tgid(pid_t tid, pid_t *ret)
{
	uint64_t tgid;
	int r = status_number(tid, "\nTgid:", INT_MAX, &tgid);

	if (r == 0)
		*ret = (pid_t)tgid;
	return r;
}

int extres_proc_comm(pid_t pid, char *buf, size_t size)
{
	char raw[EXTRES_PROC_COMM_MAX + 2];
	ssize_t n = read_proc_file(pid, "comm", raw, sizeof(raw));

	if (n < 0) {
		buf[0] = '\0';
		return (int)n;
	}
	if (n > 0 && raw[n - 1] == '\n')
		n--;
	/* Any user chose these bytes (the kernel may even have cut a
	 * character in two at 15 bytes). */
	extres_line_text(buf, size, raw, (size_t)n);
	return 0;
}

int extres_proc_info(pid_t pid, struct extres_proc_info *ret)
{
	struct extres_proc_info info = { 0 };
	char path[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;
	int r;

	r = extres_proc_stat_ppid(pid, &info.state, &info.ppid,
				  &info.starttime);
	if (r < 0)
		return r;
	info.has_uid = read_uid(pid, &info.uid) == 0;
	extres_proc_comm(pid, info.comm, sizeof(info.comm));
	/* Another user's exe needs ptrace access: then comm is all we know. */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
			exe[n - 10] = '\0';
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
		/* Longer names are no command we know by name. */
		if (strlen(base) < sizeof(info.exe))
			extres_line_text(info.exe, sizeof(info.exe), base,
					 strlen(base));
	}
	*ret = info;
	return 0;
}

int extres_proc_boot_time(uint64_t *ret)
{
	char buf[8192];
	const char *p, *end, *f;
	uint64_t v;
	size_t flen;
	ssize_t len;
	int fd, r = -EIO;

	fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -EIO;
	/* btime comes after the per-CPU lines: read it all. */
	len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		if ((size_t)len == sizeof(buf) - 1) {
			/* Keep the tail: btime is near the end. */
			memmove(buf, buf + len / 2, (size_t)(len - len / 2));
			len -= len / 2;
		}
	}
	close(fd);
	buf[len] = '\0';
	p = strstr(buf, "\nbtime ");
	if (p) {
		p += 7;
		end = strchr(p, '\n');
		if (!end)
			end = buf + len;
		if (extres_next_word(&p, end, &f, &flen) &&
		    extres_parse_dec(f, flen, UINT64_MAX, &v) == 0) {
			*ret = v;
			r = 0;
		}
	}
	return r;
}
