/* SPDX-License-Identifier: MIT */
/* Opening, locking, reading and rewriting the coordination file. */
#include "alloc/coord.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "base/text.h"
#include "os/stop.h"
#include "os/access.h"
#include "os/trust.h"
#include "base/clock.h"

#define COORD_MAX_SIZE EXTRES_COORD_MAX_SIZE
/* Polling a lock another process holds: start fast (most holders are done
 * within a few ms), then at most this often. */
#define LOCK_POLL_MAX_MS 20
/* How many times the file may be replaced under us before we give up. */
#define COORD_MAX_REOPEN 64

#define REFUSE "; refusing to use it as a coordination file"

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
static int open_once(const char *path, int create, gid_t group, int *ret_fd,
		     struct extres_err *err)
{
	int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int created = 0, fd = -1, r;
	struct stat st;

	if (lstat(path, &st) == 0) {
		r = check_stat(path, &st, err);
		if (r < 0)
			return r;
		r = extres_check_trusted_shared(path, "coordination file",
						group, err);
		if (r < 0) {
			extres_trust_hint(err, path);
			return r;
		}
	} else if (errno == ENOENT && create) {
		/* Only a directory nobody else can write, or a sticky one
		 * (where a file another user made first is refused above on
		 * the next try), may receive the file. */
		r = extres_check_trusted_shared(path, "coordination file",
						group, err);
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

	fd = open(path, flags, 0660);
	if (fd < 0) {
		if (errno == EEXIST || (errno == ENOENT && !created))
			return -EAGAIN;
		if (errno == ELOOP)
			return extres_err_set(err, ELOOP,
					      "%s is a symbolic link" REFUSE,
					      path);
		if (errno == EACCES)
			return extres_err_access(err, "coordination file",
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
	 * its mode. Not world-readable: whoever can open the file can hold a
	 * shared lock on it forever, and no allocation could then be made. The
	 * trusted group gets it when we may give it (root, or a member); a
	 * file left in our own group is still usable by us. */
	if (created && group != EXTRES_NO_GROUP && st.st_gid != group)
		(void)!fchown(fd, (uid_t)-1, group);
	if (created && fchmod(fd, 0660) < 0) {
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
		left = deadline - extres_now_ms();
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
		if (!extres_is_blank(p, (size_t)(nl - p))) {
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
		     gid_t group, int *keep_fd, struct extres_coord **ret,
		     struct extres_err *err);

int extres_coord_lock(const char *path, unsigned timeout_ms, gid_t group,
		      struct extres_coord **ret, struct extres_err *err)
{
	return lock_file(path, 1, timeout_ms, group, NULL, ret, err);
}

int extres_coord_lock_existing(const char *path, unsigned timeout_ms,
			       gid_t group, struct extres_coord **ret,
			       struct extres_err *err)
{
	return lock_file(path, 0, timeout_ms, group, NULL, ret, err);
}

int extres_coord_lock_kept(const char *path, int create, unsigned timeout_ms,
			   gid_t group, int *keep_fd, struct extres_coord **ret,
			   struct extres_err *err)
{
	return lock_file(path, create, timeout_ms, group, keep_fd, ret, err);
}

/* The kept descriptor *keep_fd when it is still the file at `path` and
 * the path passes the checks open_once() makes; else it is closed (-1)
 * and -EAGAIN says to open the path anew. */
static int reuse_kept(const char *path, gid_t group, int *keep_fd, int *ret_fd,
		      struct extres_err *err)
{
	struct stat a, b;
	int r;

	if (lstat(path, &b) < 0) {
		r = errno == ENOENT ? -EAGAIN : -errno;
		if (r != -EAGAIN)
			extres_err_set(err, -r,
				       "cannot open coordination file %s: %s",
				       path, strerror(-r));
		goto drop;
	}
	r = check_stat(path, &b, err);
	if (r == 0)
		r = extres_check_trusted_shared(path, "coordination file",
						group, err);
	if (r < 0)
		goto drop;
	if (fstat(*keep_fd, &a) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		r = -EAGAIN;
		goto drop;
	}
	*ret_fd = *keep_fd;
	return 0;
drop:
	close(*keep_fd);
	*keep_fd = -1;
	return r;
}

static int lock_file(const char *path, int create, unsigned timeout_ms,
		     gid_t group, int *keep_fd, struct extres_coord **ret,
		     struct extres_err *err)
{
	long long deadline = extres_now_ms() + timeout_ms;
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
		r = -EAGAIN;
		if (keep_fd && *keep_fd >= 0)
			r = reuse_kept(path, group, keep_fd, &fd, err);
		if (r == -EAGAIN)
			r = open_once(path, create, group, &fd, err);
		if (r == -EAGAIN)
			continue;
		if (r < 0)
			goto out;
		if (keep_fd)
			*keep_fd = fd;
		/* One deadline for the whole wait, however often the file
		 * is replaced under us. */
		r = lock_fd(path, fd, deadline, timeout_ms, err);
		if (r == 0)
			break;
		/* Still the file, not had in time: the caller keeps it
		 * open, and with it what it holds on it. */
		if (keep_fd && r != -EAGAIN) {
			fd = -1;
			goto out;
		}
		close(fd);
		fd = -1;
		if (keep_fd)
			*keep_fd = -1;
		if (r != -EAGAIN)
			goto out;
	}

	/* A kept descriptor was read to its end before. */
	if (lseek(fd, 0, SEEK_SET) < 0) {
		r = extres_err_set(err, errno,
				   "cannot read coordination file %s: %s", path,
				   strerror(errno));
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
	c->kept = keep_fd != NULL;
	fd = -1;
	*ret = c;
	c = NULL;
out:
	free(buf);
	extres_coord_close(c);
	if (fd >= 0 && keep_fd)
		flock(fd, LOCK_UN);
	else if (fd >= 0)
		close(fd); /* also drops the lock */
	return r;
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
		if (!c->kept)
			close(c->fd);
	}
	for (i = 0; i < c->n; i++)
		extres_coord_entry_clear(&c->entries[i]);
	free(c->entries);
	free(c->path);
	free(c);
}
