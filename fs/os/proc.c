/* SPDX-License-Identifier: MIT */
#include "os/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/text.h"

int extres_proc_stat(pid_t pid, char *ret_state, uint64_t *ret_starttime)
{
	char path[64], buf[4096];
	const char *p, *end, *f = NULL;
	size_t len = 0, flen = 0;
	ssize_t n;
	uint64_t starttime;
	char state;
	int fd, i;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EIO;
	while (len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
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

	/* The command name (field 2) may hold spaces and parentheses; it ends
	 * at the last ')'. */
	p = memrchr(buf, ')', len);
	if (!p)
		return -EIO;
	p++;
	end = buf + len;
	if (!extres_next_word(&p, end, &f, &flen) || flen != 1)
		return -EIO;
	state = f[0];
	for (i = 4; i <= 22; i++)
		if (!extres_next_word(&p, end, &f, &flen))
			return -EIO;
	if (extres_parse_dec(f, flen, UINT64_MAX, &starttime) < 0)
		return -EIO;
	if (ret_state)
		*ret_state = state;
	if (ret_starttime)
		*ret_starttime = starttime;
	return 0;
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
	 * control character reaches a log or a terminal. */
	while (len > 0 && cmd[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
		else if ((unsigned char)cmd[i] < 0x20 || cmd[i] == 0x7f)
			cmd[i] = '?';
	cmd[len] = '\0';
	if (len)
		snprintf(buf, size, "PID %d (%s)", (int)pid, cmd);
	else
		snprintf(buf, size, "PID %d", (int)pid);
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
