/* SPDX-License-Identifier: MIT */
/*
 * probe: perform one file-system operation and print what happened, so that
 * the integration cases can assert exact errnos and bytes from bash.
 *
 * Prints "OK" (or the operation's result) on success, or the errno's name
 * (e.g. "EROFS") on failure, and exits 0 either way: the output is the
 * result. Exits 2 on a usage error and 1 when a readloop sees bad bytes.
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
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Large enough for any property file the cases create. */
#define PROBE_BUF_MAX (256 * 1024)

static int print_errno(int errnum)
{
	const char *name = strerrorname_np(errnum);

	if (name)
		printf("%s\n", name);
	else
		printf("errno %d\n", errnum);
	return 0;
}

/* Print OK, or the errno's name when the call (returning rc) failed. */
static int report(int rc)
{
	if (rc < 0)
		return print_errno(errno);
	printf("OK\n");
	return 0;
}

static int parse_ll(const char *s, long long min, long long max, long long *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "probe: bad number '%s'\n", s);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Bytes as C-escaped text, so that bash can compare them exactly. */
static void print_escaped(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\\')
			fputs("\\\\", stdout);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

/* Read the whole file through one open descriptor. -errno on failure. */
static ssize_t read_all(const char *path, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (got == size) {
			close(fd);
			return -EFBIG;
		}
		n = read(fd, buf + got, size - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			return -saved;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (close(fd) < 0)
		return -errno;
	return (ssize_t)got;
}

static int do_stat(const char *path)
{
	struct stat st;
	const char *type;

	if (lstat(path, &st) < 0)
		return print_errno(errno);
	if (S_ISREG(st.st_mode))
		type = "reg";
	else if (S_ISDIR(st.st_mode))
		type = "dir";
	else if (S_ISLNK(st.st_mode))
		type = "lnk";
	else
		type = "other";
	printf("%s %04o %lld\n", type, (unsigned)(st.st_mode & 07777),
	       (long long)st.st_size);
	return 0;
}

static int do_pread(const char *path, const char *off_s, const char *len_s)
{
	long long off, len;
	char *buf;
	ssize_t n;
	int fd, saved;

	if (parse_ll(off_s, 0, LLONG_MAX, &off) < 0 ||
	    parse_ll(len_s, 0, PROBE_BUF_MAX, &len) < 0)
		return 2;
	buf = malloc((size_t)len + 1);
	if (!buf)
		return print_errno(ENOMEM);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		free(buf);
		return print_errno(saved);
	}
	n = pread(fd, buf, (size_t)len, (off_t)off);
	saved = errno;
	close(fd);
	if (n < 0) {
		free(buf);
		return print_errno(saved);
	}
	printf("%zd:", n);
	print_escaped(buf, (size_t)n);
	putchar('\n');
	free(buf);
	return 0;
}

/*
 * open+read+close `count` times; every read must return the same bytes as
 * the first one (and `expected`, when given). Prints OK or what differed.
 */
static int do_readloop(const char *path, const char *count_s,
		       const char *expected)
{
	char *first = NULL, *cur = NULL;
	long long count, i;
	ssize_t first_len = -1, n;
	int rc = 0;

	if (parse_ll(count_s, 1, 100000000, &count) < 0)
		return 2;
	first = malloc(PROBE_BUF_MAX);
	cur = malloc(PROBE_BUF_MAX);
	if (!first || !cur) {
		rc = print_errno(ENOMEM);
		goto out;
	}
	for (i = 0; i < count; i++) {
		n = read_all(path, i == 0 ? first : cur, PROBE_BUF_MAX);
		if (n < 0) {
			rc = print_errno((int)-n);
			goto out;
		}
		if (i == 0) {
			first_len = n;
			if (expected && (strlen(expected) != (size_t)n ||
					 memcmp(expected, first, (size_t)n)))
				goto differ;
			continue;
		}
		if (n != first_len || memcmp(first, cur, (size_t)n))
			goto differ;
	}
	printf("OK\n");
	goto out;
differ:
	printf("read %lld got ", i);
	print_escaped(i == 0 ? first : cur, (size_t)n);
	putchar('\n');
	rc = 1;
out:
	free(first);
	free(cur);
	return rc;
}

static volatile sig_atomic_t gap_stop;

static void gap_on_term(int sig)
{
	(void)sig;
	gap_stop = 1;
}

/*
 * What a reader sees while the mount at DIR is replaced: read FILE (whole,
 * through one descriptor) and statfs DIR in a tight loop until SIGTERM.
 * Prints "reads N" and what went wrong, a line each: "read ERRNO N" (a
 * failed read), "read other-bytes N" (bytes other than the first read's),
 * "statfs ERRNO N" or "statfs not-fuse N" (another file system: the
 * directory underneath), with the first time each happened.
 */
#define GAP_KINDS 8
static int do_gaploop(const char *path, const char *dir)
{
	struct sigaction sa = { .sa_handler = gap_on_term };
	struct {
		char what[64];
		long long count, first;
	} kinds[GAP_KINDS] = { 0 };
	long long reads = 0;
	char *first = NULL, *cur = NULL, what[64];
	ssize_t first_len, n;
	struct statfs sfs;
	int rc = 0, serr, k, i;

	sigemptyset(&sa.sa_mask);
	first = malloc(PROBE_BUF_MAX);
	cur = malloc(PROBE_BUF_MAX);
	if (!first || !cur || sigaction(SIGTERM, &sa, NULL) < 0) {
		rc = print_errno(errno);
		goto out;
	}
	first_len = read_all(path, first, PROBE_BUF_MAX);
	if (first_len < 0) {
		rc = print_errno((int)-first_len);
		goto out;
	}
	/* Ready: the caller may start replacing the mount. */
	printf("READY\n");
	fflush(stdout);
	while (!gap_stop) {
		n = read_all(path, cur, PROBE_BUF_MAX);
		reads++;
		serr = statfs(dir, &sfs) < 0 ? errno : 0;
		for (k = 0; k < 2; k++) {
			if (k == 0 && n < 0)
				snprintf(what, sizeof(what), "read %s",
					 strerrorname_np((int)-n));
			else if (k == 0 && (n != first_len ||
					    memcmp(first, cur, (size_t)n)))
				snprintf(what, sizeof(what),
					 "read other-bytes");
			else if (k == 1 && serr)
				snprintf(what, sizeof(what), "statfs %s",
					 strerrorname_np(serr));
			else if (k == 1 && sfs.f_type != FUSE_SUPER_MAGIC)
				snprintf(what, sizeof(what), "statfs not-fuse");
			else
				continue;
			for (i = 0; i < GAP_KINDS && kinds[i].count &&
				    strcmp(kinds[i].what, what);
			     i++)
				;
			if (i == GAP_KINDS)
				continue;
			if (!kinds[i].count++) {
				strcpy(kinds[i].what, what);
				kinds[i].first = reads;
			}
		}
	}
	printf("reads %lld\n", reads);
	for (i = 0; i < GAP_KINDS && kinds[i].count; i++)
		printf("%s %lld (first at read %lld)\n", kinds[i].what,
		       kinds[i].count, kinds[i].first);
out:
	free(first);
	free(cur);
	return rc;
}

static int do_write(const char *path)
{
	int fd, rc;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return print_errno(errno);
	rc = (int)write(fd, "x", 1);
	if (rc < 0) {
		rc = errno;
		close(fd);
		return print_errno(rc);
	}
	close(fd);
	printf("OK\n");
	return 0;
}

static int do_open_fd(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return print_errno(errno);
	close(fd);
	printf("OK\n");
	return 0;
}

/* What isatty() asks: TCGETS on a read-only descriptor (a file or a
 * directory). Prints OK or the errno's name. */
static int do_ioctl(const char *path)
{
	struct termios t;
	int fd, rc, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return print_errno(errno);
	rc = ioctl(fd, TCGETS, &t);
	saved = errno;
	close(fd);
	if (rc < 0)
		return print_errno(saved);
	printf("OK\n");
	return 0;
}

/* First line of fd's content from offset 0, newline dropped, into buf. */
static void read_value(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/*
 * What a reader that waits for a value to change sees: read the value,
 * wait (poll() or epoll) up to MS for POLLPRI (or POLLIN), then read the
 * open file
 * again and the path opened anew. Prints "read V", "poll EVENTS" (or
 * "poll TIMEOUT"), "same V" and "reopen V".
 */
static int do_poll(const char *how, const char *path, const char *ms_s)
{
	/* POLLPRI alone, as for sysfs: a file is always readable. "pollin"
	 * asks for POLLIN alone, which must not wait. */
	struct pollfd p = { .events =
				    strcmp(how, "pollin") ? POLLPRI : POLLIN };
	struct epoll_event ev = { .events = EPOLLPRI };
	long long ms;
	char buf[512];
	int fd, fd2, ep = -1, n;

	if (parse_ll(ms_s, 0, INT_MAX, &ms) < 0 ||
	    (strcmp(how, "poll") && strcmp(how, "pollin") &&
	     strcmp(how, "epoll")))
		return 2;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return print_errno(errno);
	read_value(fd, buf, sizeof(buf));
	printf("read %s\n", buf);
	fflush(stdout);
	if (strcmp(how, "epoll")) {
		p.fd = fd;
		n = poll(&p, 1, (int)ms);
		ev.events = (uint32_t)p.revents;
	} else {
		ep = epoll_create1(EPOLL_CLOEXEC);
		n = ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ?
			    -1 :
			    epoll_wait(ep, &ev, 1, (int)ms);
	}
	if (n < 0)
		return print_errno(errno);
	if (n == 0)
		printf("poll TIMEOUT\n");
	else
		printf("poll%s%s%s\n", ev.events & POLLIN ? " POLLIN" : "",
		       ev.events & POLLPRI ? " POLLPRI" : "",
		       ev.events & POLLERR ? " POLLERR" : "");
	read_value(fd, buf, sizeof(buf));
	printf("same %s\n", buf);
	fd2 = open(path, O_RDONLY | O_CLOEXEC);
	if (fd2 < 0)
		return print_errno(errno);
	read_value(fd2, buf, sizeof(buf));
	printf("reopen %s\n", buf);
	close(fd2);
	close(fd);
	if (ep >= 0)
		close(ep);
	return 0;
}

/* Whether the first page of the open file `fd` is in the page cache, by
 * mincore() on a mapping that is never touched (so it asks the file system
 * nothing): 1, 0, or -1 with errno. */
static int page_cached(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char in = 0;
	void *m;
	int r;

	m = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	r = mincore(m, (size_t)page, &in);
	munmap(m, (size_t)page);
	return r < 0 ? -1 : (in & 1);
}

/* Read each FILE whole, looking just before whether its bytes are in the
 * page cache; print "cached FILE" or "absent FILE" for each. The memory
 * manager may drop a page at any time (proactive reclaim does, on these
 * VMs): a read the daemon answers is then a page that was absent here,
 * not a push that never landed. */
static int do_firstreads(int n, char **paths)
{
	char *buf = malloc(PROBE_BUF_MAX);
	int i, c, fd;

	if (!buf)
		return print_errno(ENOMEM);
	for (i = 0; i < n; i++) {
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		c = fd < 0 ? -1 : page_cached(fd);
		if (c < 0 || read(fd, buf, PROBE_BUF_MAX) < 0) {
			fprintf(stderr, "probe firstreads: %s: %s\n", paths[i],
				strerror(errno));
			if (fd >= 0)
				close(fd);
			free(buf);
			return 1;
		}
		close(fd);
		printf("%s %s\n", c ? "cached" : "absent", paths[i]);
	}
	free(buf);
	return 0;
}

/* A read lock on byte BASE + our PID of FILE (a lease's proof,
 * lease/lease.h), then exec CMD with it (the same process: the lock
 * stays); exit 1 when it cannot be had. */
static int do_lockexec(char **argv)
{
	struct flock l = { .l_type = F_RDLCK,
			   .l_whence = SEEK_SET,
			   .l_len = 1 };
	int fd = open(argv[0], O_RDONLY);

	l.l_start = (off_t)strtoll(argv[1], NULL, 10) + getpid();
	if (fd < 0 || fcntl(fd, F_SETLK, &l) < 0) {
		perror("probe lockexec");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror("probe lockexec: exec");
	return 1;
}

/*
 * Another writer's rewrite that stat() cannot see: cut FILE to nothing, wait
 * (10 s at most) for the one watching it to write it back to TEXT's length,
 * take FILE's flock once that writer lets go, and, still within the clock
 * tick of its last change, write TEXT over it in place. Prints "same-tick"
 * when the file's stat() stayed exactly as that writer left it, "late"
 * (nothing written) when a tick had passed already, "other-tick" when one
 * passed while writing; "timeout" (exit 1) when nothing was written back.
 * For a file system whose times come from the coarse clock (ramfs; any
 * before Linux 6.13), where a change takes the tick's time.
 */
static int do_sametick(const char *path, const char *text)
{
	size_t len = strlen(text);
	struct stat pre, post;
	struct timespec now;
	struct pollfd p;
	char ev[4096];
	int fd, ifd, same;

	fd = open(path, O_RDWR | O_CLOEXEC);
	ifd = inotify_init1(IN_CLOEXEC);
	if (fd < 0 || ifd < 0 || inotify_add_watch(ifd, path, IN_MODIFY) < 0 ||
	    ftruncate(fd, 0) < 0) {
		perror("probe sametick");
		return 1;
	}
	p = (struct pollfd){ .fd = ifd, .events = POLLIN };
	for (;;) {
		if (fstat(fd, &pre) == 0 && (size_t)pre.st_size == len)
			break;
		if (poll(&p, 1, 10000) <= 0 || read(ifd, ev, sizeof(ev)) <= 0) {
			printf("timeout\n");
			return 1;
		}
	}
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &pre) < 0 ||
	    clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0) {
		perror("probe sametick");
		return 1;
	}
	if (now.tv_sec != pre.st_ctim.tv_sec ||
	    now.tv_nsec != pre.st_ctim.tv_nsec) {
		printf("late\n");
		return 0;
	}
	if (pwrite(fd, text, len, 0) != (ssize_t)len || fstat(fd, &post) < 0) {
		perror("probe sametick");
		return 1;
	}
	same = pre.st_ino == post.st_ino && pre.st_size == post.st_size &&
	       pre.st_mtim.tv_sec == post.st_mtim.tv_sec &&
	       pre.st_mtim.tv_nsec == post.st_mtim.tv_nsec &&
	       pre.st_ctim.tv_sec == post.st_ctim.tv_sec &&
	       pre.st_ctim.tv_nsec == post.st_ctim.tv_nsec;
	printf("%s\n", same ? "same-tick" : "other-tick");
	return 0;
}

/* Orphans below this process come to it (not to init), as they would to a
 * service manager: exec CMD as such a subreaper. */
static int do_subreaper(char **argv)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		perror("probe subreaper");
		return 1;
	}
	execvp(argv[0], argv);
	perror("probe subreaper: exec");
	return 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: probe OP ARGS...\n"
		"  stat PATH                 prints TYPE MODE SIZE (reg 0444 2)\n"
		"  pread FILE OFFSET LEN     prints N:BYTES (C-escaped)\n"
		"  readloop FILE N [EXPECT]  open+read+close N times; prints OK\n"
		"  gaploop FILE DIR          read FILE, statfs DIR until SIGTERM\n"
		"  ioctl PATH                TCGETS (isatty()); prints OK or ENOTTY\n"
		"  poll|pollin|epoll FILE MS wait for a change; see do_poll()\n"
		"  write FILE | open-wr FILE | create PATH | mkdir PATH\n"
		"  rmdir PATH | unlink PATH | rename FROM TO | truncate FILE\n"
		"  chmod PATH | symlink TARGET PATH | link FROM TO | utime PATH\n"
		"  lockexec FILE BASE CMD...  read-lock byte BASE+PID, exec CMD\n"
		"  subreaper CMD...          exec CMD as a child subreaper\n"
		"  firstreads FILE...        read each; cached|absent FILE\n"
		"  sametick FILE TEXT        rewrite FILE unseen; see do_sametick()\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *op;

	if (argc < 3)
		return usage();
	op = argv[1];
	if (!strcmp(op, "lockexec") && argc >= 5)
		return do_lockexec(argv + 2);
	if (!strcmp(op, "subreaper"))
		return do_subreaper(argv + 2);
	if (!strcmp(op, "firstreads"))
		return do_firstreads(argc - 2, argv + 2);
	if (argc == 3) {
		const char *p = argv[2];

		if (!strcmp(op, "stat"))
			return do_stat(p);
		if (!strcmp(op, "write"))
			return do_write(p);
		if (!strcmp(op, "ioctl"))
			return do_ioctl(p);
		if (!strcmp(op, "open-wr"))
			return do_open_fd(p, O_RDWR);
		if (!strcmp(op, "create"))
			return do_open_fd(p, O_WRONLY | O_CREAT | O_EXCL);
		if (!strcmp(op, "mkdir"))
			return report(mkdir(p, 0755));
		if (!strcmp(op, "rmdir"))
			return report(rmdir(p));
		if (!strcmp(op, "unlink"))
			return report(unlink(p));
		if (!strcmp(op, "truncate"))
			return report(truncate(p, 0));
		if (!strcmp(op, "chmod"))
			return report(chmod(p, 0644));
		if (!strcmp(op, "utime"))
			return report(utimensat(AT_FDCWD, p, NULL, 0));
	}
	if (argc == 4 || argc == 5) {
		if (!strcmp(op, "readloop"))
			return do_readloop(argv[2], argv[3],
					   argc == 5 ? argv[4] : NULL);
	}
	if (argc == 4) {
		if (!strcmp(op, "gaploop"))
			return do_gaploop(argv[2], argv[3]);
		if (!strcmp(op, "rename"))
			return report(rename(argv[2], argv[3]));
		if (!strcmp(op, "symlink"))
			return report(symlink(argv[2], argv[3]));
		if (!strcmp(op, "link"))
			return report(link(argv[2], argv[3]));
	}
	if (argc == 4 && (!strcmp(op, "poll") || !strcmp(op, "pollin") ||
			  !strcmp(op, "epoll")))
		return do_poll(op, argv[2], argv[3]);
	if (argc == 4 && !strcmp(op, "sametick"))
		return do_sametick(argv[2], argv[3]);
	if (argc == 5 && !strcmp(op, "pread"))
		return do_pread(argv[2], argv[3], argv[4]);
	return usage();
}
