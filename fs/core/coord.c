/* SPDX-License-Identifier: MIT */
#include "core/coord.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "os/stop.h"
#include "os/trust.h"

#define COORD_MAX_SIZE EXTRES_COORD_MAX_SIZE
/* Polling a lock another process holds: start fast (most holders are done
 * within a few ms), then at most this often. */
#define LOCK_POLL_MAX_MS 20
/* How many times the file may be replaced under us before we give up. */
#define COORD_MAX_REOPEN 64

#define REFUSE "; refusing to use it as a coordination file"

/* Whitespace as the C locale has it, without depending on the locale. */
static int is_space(char ch)
{
	return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

/* Next whitespace-separated field of [*p, end); 0 when none is left. */
static int next_field(const char **p, const char *end, const char **ret_start,
		      size_t *ret_len)
{
	const char *s = *p, *f;

	while (s < end && is_space(*s))
		s++;
	if (s == end)
		return 0;
	f = s;
	while (s < end && !is_space(*s))
		s++;
	*ret_start = f;
	*ret_len = (size_t)(s - f);
	*p = s;
	return 1;
}

/* Digits only (no sign, no blanks, which strtoull would accept), <= max. */
static int parse_dec(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	char buf[32];
	unsigned long long v;
	char *end;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
	/* Leading zeros add digits, not value: 40 digits may still be 1. */
	while (len > 1 && s[0] == '0')
		s++, len--;
	if (len >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

void extres_coord_entry_clear(struct extres_coord_entry *e)
{
	if (!e)
		return;
	free(e->line);
	free(e->key);
	memset(e, 0, sizeof(*e));
}

int extres_coord_parse_line(const char *line, size_t len,
			    struct extres_coord_entry *e)
{
	struct extres_coord_entry n = { 0 };
	const char *p = line, *end = line + len, *f[3];
	size_t flen[3];
	uint64_t pid, starttime;

	n.line = malloc(len + 1);
	if (!n.line)
		return -ENOMEM;
	memcpy(n.line, line, len);
	n.line[len] = '\0';
	n.line_len = len;

	/* A NUL cannot be part of a key; such a line is kept as it is. */
	if (memchr(line, '\0', len) || !next_field(&p, end, &f[0], &flen[0]) ||
	    !next_field(&p, end, &f[1], &flen[1]) ||
	    parse_dec(f[1], flen[1], INT_MAX, &pid) < 0 || pid == 0)
		goto out;
	if (next_field(&p, end, &f[2], &flen[2]) &&
	    parse_dec(f[2], flen[2], UINT64_MAX, &starttime) == 0) {
		n.has_starttime = 1;
		n.starttime = starttime;
	}
	n.key = strndup(f[0], flen[0]);
	if (!n.key) {
		free(n.line);
		return -ENOMEM;
	}
	n.pid = (pid_t)pid;
	n.parsed = 1;
out:
	*e = n;
	return 0;
}

/* State (field 3) and start time (field 22) from /proc/PID/stat. */
static int proc_stat(pid_t pid, char *ret_state, uint64_t *ret_starttime)
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
	if (!next_field(&p, end, &f, &flen) || flen != 1)
		return -EIO;
	state = f[0];
	for (i = 4; i <= 22; i++)
		if (!next_field(&p, end, &f, &flen))
			return -EIO;
	if (parse_dec(f, flen, UINT64_MAX, &starttime) < 0)
		return -EIO;
	if (ret_state)
		*ret_state = state;
	if (ret_starttime)
		*ret_starttime = starttime;
	return 0;
}

int extres_proc_starttime(pid_t pid, uint64_t *ret)
{
	return proc_stat(pid, NULL, ret);
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

/* What /proc says of one PID; probed once per PID per pass. */
struct proc_probe {
	pid_t pid;
	int gone;      /* no such process */
	int unreadable; /* exists, but /proc told us nothing */
	char state;
	uint64_t starttime;
};

static void probe_pid(pid_t pid, struct proc_probe *p)
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
	r = proc_stat(pid, &p->state, &p->starttime);
	if (r == -ESRCH)
		p->gone = 1;
	else if (r < 0)
		p->unreadable = 1;
}

static int state_of(const struct extres_coord_entry *e,
		    const struct proc_probe *p)
{
	if (p->gone)
		return EXTRES_OWNER_DEAD;
	if (p->unreadable)
		return EXTRES_OWNER_LIVE;
	if (p->state == 'Z')
		return EXTRES_OWNER_ZOMBIE;
	if (p->state == 'X')
		return EXTRES_OWNER_DEAD;
	if (e->has_starttime && e->starttime != p->starttime)
		return EXTRES_OWNER_REUSED;
	return EXTRES_OWNER_LIVE;
}

int extres_coord_owner_state(const struct extres_coord_entry *e)
{
	struct proc_probe p;

	if (!e->parsed)
		return EXTRES_OWNER_UNPARSABLE;
	probe_pid(e->pid, &p);
	return state_of(e, &p);
}

const char *extres_coord_owner_state_name(int state)
{
	switch (state) {
	case EXTRES_OWNER_LIVE:
		return "live";
	case EXTRES_OWNER_DEAD:
		return "dead";
	case EXTRES_OWNER_REUSED:
		return "reused";
	case EXTRES_OWNER_ZOMBIE:
		return "zombie";
	case EXTRES_OWNER_UNPARSABLE:
		return "unparsable";
	default:
		return "unknown";
	}
}

int extres_coord_is_taken(const struct extres_coord *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct extres_coord_entry *e = &c->entries[i];

		if (e->parsed && strcmp(e->key, key) == 0 &&
		    extres_coord_owner_state(e) == EXTRES_OWNER_LIVE)
			return 1;
	}
	return 0;
}

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "directory";
	case S_IFIFO:
		return "FIFO";
	case S_IFSOCK:
		return "socket";
	case S_IFCHR:
		return "character device";
	case S_IFBLK:
		return "block device";
	default:
		return "special file";
	}
}

static int check_stat(const char *path, const struct stat *st,
		      struct extres_err *err)
{
	if (S_ISLNK(st->st_mode))
		return extres_err_set(err, ELOOP,
				      "%s is a symbolic link" REFUSE, path);
	if (!S_ISREG(st->st_mode))
		return extres_err_set(err, EINVAL, "%s is a %s" REFUSE, path,
				      file_kind(st->st_mode));
	if (st->st_nlink > 1)
		return extres_err_set(err, EMLINK,
				      "%s has %ju hard links" REFUSE, path,
				      (uintmax_t)st->st_nlink);
	return 0;
}

/*
 * Open the file at `path` once. -EAGAIN means "the path changed under us,
 * try again". Anything that is not a regular file is refused after lstat()
 * without being opened, so a FIFO or a device is never touched; O_NOFOLLOW
 * and O_NONBLOCK cover the race where it appears between lstat() and open().
 */
static int open_once(const char *path, int create, int *ret_fd,
		     struct extres_err *err)
{
	int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int created = 0, fd = -1, r;
	struct stat st;

	if (lstat(path, &st) == 0) {
		r = check_stat(path, &st, err);
		if (r < 0)
			return r;
		r = extres_check_trusted_shared(path, "coordination file", err);
		if (r < 0)
			return r;
	} else if (errno == ENOENT && create) {
		/* Only a directory nobody else can write, or a sticky one
		 * (where a file another user made first is refused above on
		 * the next try), may receive the file. */
		r = extres_check_trusted_shared(path, "coordination file", err);
		if (r < 0)
			return r;
		flags |= O_CREAT | O_EXCL;
		created = 1;
	} else if (errno == ENOENT && !create) {
		return extres_err_set(err, ENOENT, "%s: %s", path,
				      strerror(ENOENT));
	} else {
		return extres_err_set(err, errno,
				      "cannot open coordination file %s: %s",
				      path, strerror(errno));
	}

	fd = open(path, flags, 0644);
	if (fd < 0) {
		if (errno == EEXIST || (errno == ENOENT && !created))
			return -EAGAIN;
		if (errno == ELOOP)
			return extres_err_set(err, ELOOP,
					      "%s is a symbolic link" REFUSE,
					      path);
		return extres_err_set(err, errno,
				      "cannot open coordination file %s: %s",
				      path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		r = extres_err_set(err, errno,
				   "cannot open coordination file %s: %s", path,
				   strerror(errno));
		goto fail;
	}
	r = check_stat(path, &st, err);
	if (r < 0)
		goto fail;
	if (st.st_nlink == 0) {
		r = -EAGAIN;
		goto fail;
	}
	/* Other users' processes share the file: do not let our umask decide
	 * its mode. */
	if (created && fchmod(fd, 0644) < 0) {
		r = extres_err_set(err, errno,
				   "cannot chmod coordination file %s: %s",
				   path, strerror(errno));
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) < 0) {
		r = extres_err_set(err, errno,
				   "cannot open coordination file %s: %s", path,
				   strerror(errno));
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ", PID 12 (cmd), PID 34 (cmd)" for the processes that /proc/locks shows
 * holding a lock on the file open at fd (not those waiting for one). */
static void lock_holders(int fd, char *buf, size_t size)
{
	char line[256], who[320];
	unsigned maj, min;
	unsigned long long ino;
	struct stat st;
	size_t len = 0;
	int pid, n;
	FILE *f;

	buf[0] = '\0';
	if (fstat(fd, &st) < 0)
		return;
	f = fopen("/proc/locks", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && len + 1 < size) {
		/* "1: FLOCK  ADVISORY  READ 1234 08:01:5678 0 EOF"; a waiter's
		 * line has "->" after the number. */
		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %*s %*s %*s %d %x:%x:%llu", &pid, &maj,
			   &min, &ino) != 4)
			continue;
		if (maj != major(st.st_dev) || min != minor(st.st_dev) ||
		    ino != (unsigned long long)st.st_ino || pid <= 0)
			continue;
		extres_proc_describe(pid, who, sizeof(who));
		n = snprintf(buf + len, size - len, ", %s", who);
		if (n < 0)
			break;
		len += (size_t)n < size - len ? (size_t)n : size - len - 1;
	}
	fclose(f);
}

/*
 * Take the exclusive lock on fd by `deadline` (monotonic ms; the whole wait
 * was `timeout_ms`). Another process can hold it forever (anyone who can
 * open the file can take a shared lock), so this never blocks: it polls,
 * gives up at the deadline naming the holders, and gives up at once when
 * this process has been asked to stop.
 */
static int wait_lock(const char *path, int fd, long long deadline,
		     unsigned timeout_ms, struct extres_err *err)
{
	long long left;
	struct timespec nap;
	long step = 1;
	char holders[1024];

	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return extres_err_set(
				err, errno,
				"cannot lock coordination file %s: %s", path,
				strerror(errno));
		if (extres_stop_pending())
			return extres_err_set(
				err, EINTR,
				"stopped while waiting for the lock on coordination file %s",
				path);
		left = deadline - now_ms();
		if (left <= 0)
			break;
		if (step > left)
			step = (long)left;
		nap = (struct timespec){ step / 1000, (step % 1000) * 1000000 };
		nanosleep(&nap, NULL);
		if (step < LOCK_POLL_MAX_MS)
			step *= 2;
	}
	lock_holders(fd, holders, sizeof(holders));
	return extres_err_set(
		err, ETIMEDOUT,
		"timed out after %u.%03u s waiting for the lock on coordination file %s; held by %s",
		timeout_ms / 1000, timeout_ms % 1000, path,
		holders[0] ? holders + 2 :
			     "a process /proc/locks does not show");
}

/*
 * Lock fd, then make sure it is still the file at `path`: Flink's scripts
 * edit the file with `sed -i`, which renames a new file over it, so the inode
 * we waited on may be gone. 0, -EAGAIN (try again) or an error.
 */
static int lock_fd(const char *path, int fd, long long deadline,
		   unsigned timeout_ms, struct extres_err *err)
{
	struct stat a, b;
	int r;

	r = wait_lock(path, fd, deadline, timeout_ms, err);
	if (r < 0)
		return r;
	if (fstat(fd, &a) < 0)
		return extres_err_set(err, errno,
				      "cannot lock coordination file %s: %s",
				      path, strerror(errno));
	if (lstat(path, &b) < 0) {
		if (errno == ENOENT)
			return -EAGAIN;
		return extres_err_set(err, errno,
				      "cannot lock coordination file %s: %s",
				      path, strerror(errno));
	}
	if (a.st_nlink == 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return -EAGAIN;
	return 0;
}

static int read_all(const char *path, int fd, char **ret_buf, size_t *ret_len,
		    struct extres_err *err)
{
	int r = extres_read_all(fd, COORD_MAX_SIZE, ret_buf, ret_len);

	if (r == -EFBIG)
		return extres_err_set(
			err, EFBIG,
			"coordination file %s is larger than %u bytes; refusing to read it",
			path, COORD_MAX_SIZE);
	if (r == -ENOMEM)
		return extres_err_set(err, ENOMEM, "out of memory");
	if (r < 0)
		return extres_err_set(err, -r,
				      "cannot read coordination file %s: %s",
				      path, strerror(-r));
	return 0;
}

static int is_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_space(s[i]))
			return 0;
	return 1;
}

static int parse_all(struct extres_coord *c, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	size_t lines = 0, i;
	int r;

	for (i = 0; i < len; i++)
		if (buf[i] == '\n')
			lines++;
	/* A last line without '\n' counts too. */
	c->entries = calloc(lines + 1, sizeof(*c->entries));
	if (!c->entries)
		return -ENOMEM;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (!is_blank(p, (size_t)(nl - p))) {
			r = extres_coord_parse_line(p, (size_t)(nl - p),
						    &c->entries[c->n]);
			if (r < 0)
				return r;
			c->n++;
		}
		/* Not nl + 1 past a last line without '\n': beyond the end
		 * of the buffer, that pointer would be undefined. */
		p = nl < end ? nl + 1 : end;
	}
	return 0;
}

static int lock_file(const char *path, int create, unsigned timeout_ms,
		     struct extres_coord **ret, struct extres_err *err);

int extres_coord_lock(const char *path, unsigned timeout_ms,
		      struct extres_coord **ret, struct extres_err *err)
{
	return lock_file(path, 1, timeout_ms, ret, err);
}

int extres_coord_lock_existing(const char *path, unsigned timeout_ms,
			       struct extres_coord **ret,
			       struct extres_err *err)
{
	return lock_file(path, 0, timeout_ms, ret, err);
}

static int lock_file(const char *path, int create, unsigned timeout_ms,
		     struct extres_coord **ret, struct extres_err *err)
{
	long long deadline = now_ms() + timeout_ms;
	struct extres_coord *c = NULL;
	char *buf = NULL;
	size_t len = 0;
	int fd = -1, attempt, r;

	for (attempt = 0;; attempt++) {
		if (attempt == COORD_MAX_REOPEN) {
			r = extres_err_set(
				err, EAGAIN,
				"coordination file %s kept being replaced while we waited for its lock",
				path);
			goto out;
		}
		r = open_once(path, create, &fd, err);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			goto out;
		/* One deadline for the whole wait, however often the file
		 * is replaced under us. */
		r = lock_fd(path, fd, deadline, timeout_ms, err);
		if (r == 0)
			break;
		close(fd);
		fd = -1;
		if (r != -EAGAIN)
			goto out;
	}

	r = read_all(path, fd, &buf, &len, err);
	if (r < 0)
		goto out;
	c = calloc(1, sizeof(*c));
	if (c)
		c->fd = -1;
	if (!c || !(c->path = strdup(path))) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto out;
	}
	r = parse_all(c, buf, len);
	if (r < 0) {
		extres_err_set(err, -r, "out of memory");
		goto out;
	}
	c->fd = fd;
	fd = -1;
	*ret = c;
	c = NULL;
out:
	free(buf);
	extres_coord_close(c);
	if (fd >= 0)
		close(fd); /* also drops the lock */
	return r;
}

int extres_coord_add(struct extres_coord *c, const char *key, pid_t pid,
		     uint64_t starttime)
{
	struct extres_coord_entry e = { 0 }, *entries;
	size_t i;

	if (!key[0] || pid <= 0)
		return -EINVAL;
	for (i = 0; key[i]; i++)
		if (is_space(key[i]))
			return -EINVAL;
	/* A tab, not a space, before the start time: Flink frees an index
	 * with `sed -i "/INDEX /d"`, which must never match inside our
	 * line (PID 981 and index 1). Its `grep "^INDEX "` and
	 * `awk '{print $2}'` read the line as before. */
	if (asprintf(&e.line, "%s %d\t%" PRIu64, key, (int)pid, starttime) < 0)
		return -ENOMEM;
	e.line_len = strlen(e.line);
	e.key = strdup(key);
	entries = e.key ? realloc(c->entries, (c->n + 1) * sizeof(*entries)) :
			  NULL;
	if (!entries) {
		extres_coord_entry_clear(&e);
		return -ENOMEM;
	}
	e.parsed = 1;
	e.pid = pid;
	e.has_starttime = 1;
	e.starttime = starttime;
	entries[c->n++] = e;
	c->entries = entries;
	return 0;
}

void extres_coord_remove(struct extres_coord *c, size_t i)
{
	if (i >= c->n)
		return;
	extres_coord_entry_clear(&c->entries[i]);
	memmove(&c->entries[i], &c->entries[i + 1],
		(c->n - i - 1) * sizeof(*c->entries));
	c->n--;
}

size_t extres_coord_reclaim(struct extres_coord *c)
{
	struct proc_probe *probes;
	size_t i = c->n, removed = 0, n_probes = 0, k;
	int state;

	/* Many lines usually share one owner: read /proc once per PID. If
	 * the cache cannot be had, probe every line instead. */
	probes = calloc(c->n ? c->n : 1, sizeof(*probes));
	while (i-- > 0) {
		const struct extres_coord_entry *e = &c->entries[i];
		struct proc_probe one, *p = &one;

		if (!e->parsed)
			continue;
		for (k = 0; probes && k < n_probes; k++)
			if (probes[k].pid == e->pid)
				break;
		if (probes && k < n_probes) {
			p = &probes[k];
		} else {
			probe_pid(e->pid, p);
			if (probes)
				probes[n_probes++] = one;
		}
		state = state_of(e, p);
		if (state == EXTRES_OWNER_DEAD ||
		    state == EXTRES_OWNER_REUSED ||
		    state == EXTRES_OWNER_ZOMBIE) {
			extres_coord_remove(c, i);
			removed++;
		}
	}
	free(probes);
	return removed;
}

int extres_coord_has_key(const struct extres_coord *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->entries[i].parsed && strcmp(c->entries[i].key, key) == 0)
			return 1;
	return 0;
}

static int write_error(struct extres_coord *c, int e, struct extres_err *err)
{
	return extres_err_set(err, e, "cannot write coordination file %s: %s",
			      c->path, strerror(e));
}

int extres_coord_write(struct extres_coord *c, struct extres_err *err)
{
	size_t total = 0, off = 0, len, i;
	struct stat st;
	char *buf;
	ssize_t n;
	int r = 0;

	if (fstat(c->fd, &st) < 0)
		return write_error(c, errno, err);
	for (i = 0; i < c->n; i++)
		total += c->entries[i].line_len + 1;
	/* What we write we must be able to read back, or nobody could ever
	 * release a line of it again. */
	if (total > COORD_MAX_SIZE)
		return extres_err_set(
			err, EFBIG,
			"coordination file %s would grow to %zu bytes, past the %u-byte limit; nothing was written (extresctl coord gc drops the lines of owners that are gone)",
			c->path, total, COORD_MAX_SIZE);
	/* A shorter file is written padded with newlines to the old length
	 * and only then cut, so a kill -9 between the write and the cut
	 * leaves whole lines and blank ones (which readers skip), never a
	 * torn line or an old line twice. */
	len = total;
	if (st.st_size > 0 && (size_t)st.st_size > len)
		len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (!buf)
		return extres_err_set(err, ENOMEM, "out of memory");
	for (i = 0; i < c->n; i++) {
		memcpy(buf + off, c->entries[i].line, c->entries[i].line_len);
		off += c->entries[i].line_len;
		buf[off++] = '\n';
	}
	memset(buf + off, '\n', len - off);

	/* Rewriting in place cannot be atomic; reserving the blocks first
	 * makes a full disk fail here, before the old content is touched. */
	if (total && fallocate(c->fd, 0, 0, (off_t)total) < 0 &&
	    errno != EOPNOTSUPP && errno != ENOSYS) {
		r = write_error(c, errno, err);
		goto out;
	}
	for (off = 0; off < len; off += (size_t)n) {
		n = pwrite(c->fd, buf + off, len - off, (off_t)off);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0) {
			r = write_error(c, n < 0 ? errno : EIO, err);
			goto out;
		}
	}
	/* No fsync: the entries describe live processes, and a host crash
	 * ends them all anyway. */
	if (ftruncate(c->fd, (off_t)total) < 0)
		r = write_error(c, errno, err);
out:
	free(buf);
	return r;
}

void extres_coord_close(struct extres_coord *c)
{
	size_t i;

	if (!c)
		return;
	if (c->fd >= 0) {
		/* Explicitly: a forked child may share the open file
		 * description, and closing ours would not release it. */
		flock(c->fd, LOCK_UN);
		close(c->fd);
	}
	for (i = 0; i < c->n; i++)
		extres_coord_entry_clear(&c->entries[i]);
	free(c->entries);
	free(c->path);
	free(c);
}
