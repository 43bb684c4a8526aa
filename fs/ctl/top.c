/* SPDX-License-Identifier: MIT */
/*
 * extresctl top [--once] [--sort KEY] [--filter RESOURCE] [--timeout S]
 *               [MOUNTPOINT]
 *
 * A live view of one mount, redrawn when something it shows changes. The
 * mount tells: a changed .meta file wakes poll() (POLLPRI, as sysfs does),
 * so nothing is read again until it does, and a still node costs no CPU.
 * Queue files (waiters) are not on the mount: inotify tells of those.
 *
 * Two threads. The reader reads the mount and waits on it; the main thread
 * owns the terminal: keys, signals (a signalfd, so no handler and no global
 * holds the saved terminal state) and drawing. A daemon that stops answering
 * blocks only the reader; ^C, q or SIGTERM still end top at once, restoring
 * the terminal, and the process's exit takes the blocked reader with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/log.h"
#include "ctl/ctl.h"
#include "ctl/top.h"
#include "os/mountpoint.h"

/* The .meta files whose change means a redraw: every property and holder
 * is in extres.json, reloads and conflicts in status. */
static const char *const watched[] = { ".meta/extres.json", ".meta/status",
				       ".meta/holders" };
#define N_WATCHED (sizeof(watched) / sizeof(watched[0]))

struct top {
	char *mnt;
	struct top_view view;
	pthread_mutex_t lock;
	struct top_snap next; /* the reader's latest, under lock */
	int has_next;
	int ready; /* eventfd: a snapshot is waiting */
	int stop; /* eventfd: the reader is to end */
};

static void usage_top(FILE *out)
{
	fprintf(out,
		"usage: extresctl top [--once] [--sort KEY] [--filter RESOURCE]\n"
		"                     [--timeout SECONDS] [MOUNTPOINT]\n"
		"\n"
		"Show the devices the extresd at MOUNTPOINT (default " EXTRES_DEFAULT_MOUNTPOINT
		")\n"
		"serves, who holds each (command, user, lease, since), who waits\n"
		"for one, conflicts and the last reload; redrawn whenever one of\n"
		"them changes. On a terminal: q quits, s changes the sort, f shows\n"
		"one resource after the other, a all of them. When standard output\n"
		"is not a terminal, or with --once, one snapshot is printed.\n"
		"\n"
		"    --once             print one snapshot and exit\n"
		"    --sort KEY         resource (default), health or holder\n"
		"    --filter RESOURCE  show only RESOURCE's devices\n"
		"    --timeout SECONDS  how long the daemon may take to answer\n"
		"                       at start and for --once (default %d)\n"
		"    -h, --help         this help\n",
		CTL_MOUNT_TIMEOUT_S);
}

struct once {
	struct top_view view;
};

static int once_job(struct extres_ctl_mount *m, void *arg)
{
	struct once *o = arg;
	struct top_snap s;
	int r;

	r = top_snap_read(m->mnt, &s);
	extres_ctl_mount_done(m);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s: %s", m->mnt, strerror(-r));
		return 1;
	}
	top_render(&s, m->mnt, &o->view, stdout);
	r = s.error ? 1 : 0;
	top_snap_clear(&s);
	return r;
}

static int check_job(struct extres_ctl_mount *m, void *arg)
{
	(void)m;
	(void)arg;
	return 0;
}

/* Open what the next wait waits on before reading what it guards: a
 * change after the open leaves the file opened no longer served, and the
 * wait ends at once; none is lost. */
static void open_watched(const char *mnt, int *fds)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < N_WATCHED; i++) {
		snprintf(path, sizeof(path), "%s/%s", mnt, watched[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
}

/* An inotify descriptor on the queues' directories, or -1. */
static int watch_queues(char *const *queues, size_t n)
{
	char dir[PATH_MAX], *slash;
	size_t i;
	int fd;

	if (!n)
		return -1;
	fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	for (i = 0; fd >= 0 && i < n; i++) {
		snprintf(dir, sizeof(dir), "%s", queues[i]);
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		inotify_add_watch(fd, dir,
				  IN_MODIFY | IN_CREATE | IN_DELETE |
					  IN_MOVED_TO | IN_CLOSE_WRITE);
	}
	return fd;
}

/* Whether the inotify events waiting on `fd` name one of the queues. */
static int queue_changed(int fd, char *const *queues, size_t n_queues)
{
	char buf[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	const char *base;
	ssize_t n;
	size_t i;
	int hit = 0;
	char *p;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(void *)p;
			for (i = 0; ev->len && i < n_queues; i++) {
				base = strrchr(queues[i], '/');
				base = base ? base + 1 : queues[i];
				if (strcmp(ev->name, base) == 0)
					hit = 1;
			}
			if (ev->mask & IN_Q_OVERFLOW)
				hit = 1;
		}
	}
	return hit;
}

/* Whether the two lists of queue paths are the same, in order. */
static int same_queues(char *const *a, size_t n_a, char *const *b, size_t n_b)
{
	size_t i;

	if (n_a != n_b)
		return 0;
	for (i = 0; i < n_a; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

static void free_queues(char **queues, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(queues[i]);
	free(queues);
}

static void *reader(void *arg)
{
	struct top *t = arg;
	struct pollfd p[N_WATCHED + 2];
	int fds[N_WATCHED], qfd, quit = 0, woken, r;
	const uint64_t one = 1;
	struct top_snap s;
	/* The queues watched: those of the last read. */
	char **queues = NULL;
	size_t i, n_queues = 0;

	while (!quit) {
		/* Both watches are set before the read, so that a change
		 * made after it wakes the wait: a waiter that queued
		 * between the read and a later watch would not show until
		 * something else changed. */
		open_watched(t->mnt, fds);
		qfd = watch_queues(queues, n_queues);
		r = top_snap_read(t->mnt, &s);
		if (r < 0 && !s.error)
			s.error = strdup(strerror(-r));
		/* A snapshot that says the mount is gone is the last. */
		quit = s.error != NULL;
		if (!quit &&
		    !same_queues(s.queues, s.n_queues, queues, n_queues)) {
			/* Other queues (the first read, a reload): watch
			 * those, then read again. */
			free_queues(queues, n_queues);
			queues = s.queues;
			n_queues = s.n_queues;
			s.queues = NULL;
			s.n_queues = 0;
			top_snap_clear(&s);
			for (i = 0; i < N_WATCHED; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			if (qfd >= 0)
				close(qfd);
			continue;
		}
		free_queues(s.queues, s.n_queues);
		s.queues = NULL;
		s.n_queues = 0;
		for (i = 0; i < N_WATCHED; i++) {
			p[i] = (struct pollfd){ .fd = fds[i],
						.events = POLLPRI };
			if (fds[i] < 0)
				quit = 1;
		}
		p[N_WATCHED] = (struct pollfd){ .fd = qfd, .events = POLLIN };
		p[N_WATCHED + 1] =
			(struct pollfd){ .fd = t->stop, .events = POLLIN };
		pthread_mutex_lock(&t->lock);
		if (t->has_next)
			top_snap_clear(&t->next);
		t->next = s;
		t->has_next = 1;
		pthread_mutex_unlock(&t->lock);
		if (write(t->ready, &one, sizeof(one)) < 0)
			quit = 1;
		for (woken = 0; !quit && !woken;) {
			if (poll(p, N_WATCHED + 2, -1) < 0) {
				quit = errno != EINTR;
				continue;
			}
			for (i = 0; i < N_WATCHED; i++)
				if (p[i].revents & (POLLPRI | POLLERR))
					woken = 1;
			if (p[N_WATCHED].revents & POLLIN)
				woken = queue_changed(qfd, queues, n_queues);
			if (p[N_WATCHED + 1].revents & POLLIN)
				quit = 1;
		}
		for (i = 0; i < N_WATCHED; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		if (qfd >= 0)
			close(qfd);
	}
	free_queues(queues, n_queues);
	return NULL;
}

/* Draw `s` from the top left corner, each line cleared to its end, and
 * the rest of the screen cleared: no flicker, one write. */
static void draw(struct top *t, const struct top_snap *s)
{
	char *frame = NULL, *p;
	size_t size = 0;
	FILE *f;

	term_size(STDOUT_FILENO, &t->view.width, &t->view.height);
	f = open_memstream(&frame, &size);
	if (!f)
		return;
	fputs(TERM_HOME, f);
	top_render(s, t->mnt, &t->view, f);
	if (fclose(f) != 0) {
		free(frame);
		return;
	}
	f = open_memstream(&p, &size);
	if (f) {
		char *line, *nl;

		for (line = frame; (nl = strchr(line, '\n')); line = nl + 1)
			fprintf(f, "%.*s" TERM_CLEAR_EOL "\r\n",
				(int)(nl - line), line);
		/* No newline after the last line: it would scroll. */
		fputs(TERM_CLEAR_EOS, f);
		if (fclose(f) == 0) {
			extres_write_all(STDOUT_FILENO, p, size);
			free(p);
		}
	}
	free(frame);
}

/*
 * Ask the reader to end and wait a second for it. A reader blocked in a
 * mount whose daemon does not answer is left: the exit ends it, and what
 * it uses stays allocated until then. 0 once it ended.
 */
static int stop_reader(struct top *t, pthread_t thread)
{
	const uint64_t one = 1;
	struct timespec deadline;

	if (write(t->stop, &one, sizeof(one)) != sizeof(one))
		return -EIO;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	return -pthread_timedjoin_np(thread, NULL, &deadline);
}

/* What a key does; 1 to quit. */
static int key(struct top *t, const struct top_snap *s, char c)
{
	switch (c) {
	case 'q':
	case 'Q':
		return 1;
	case 's':
		t->view.sort = (t->view.sort + 1) % TOP_N_SORTS;
		break;
	case 'f':
		t->view.filter = top_next_resource(s, t->view.filter);
		break;
	case 'a':
		t->view.filter = NULL;
		break;
	}
	return 0;
}

static int live(struct top *t, char *filter)
{
	struct top_snap cur = { 0 };
	struct pollfd p[3];
	struct term term;
	pthread_t thread;
	sigset_t mask;
	uint64_t n;
	char c, *keep;
	int sfd, quit = 0, status = 1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGWINCH);
	/* Blocked before the reader starts, so that it inherits the mask and
	 * every signal comes to the signalfd. */
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
		return 1;
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	t->ready = eventfd(0, EFD_CLOEXEC);
	t->stop = eventfd(0, EFD_CLOEXEC);
	if (sfd < 0 || t->ready < 0 || t->stop < 0 ||
	    pthread_mutex_init(&t->lock, NULL)) {
		extres_log(EXTRES_LOG_ERR, "top: %s", strerror(errno));
		return 1;
	}
	if (term_enter(&term, STDOUT_FILENO) < 0) {
		extres_log(EXTRES_LOG_ERR,
			   "top: cannot set up the terminal: %s",
			   strerror(errno));
		return 1;
	}
	if (pthread_create(&thread, NULL, reader, t) != 0) {
		term_leave(&term);
		extres_log(EXTRES_LOG_ERR, "top: cannot start a thread");
		return 1;
	}
	p[0] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	p[2] = (struct pollfd){ .fd = t->ready, .events = POLLIN };
	while (!quit) {
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) &&
			    si.ssi_signo != SIGWINCH) {
				status = 0;
				break;
			}
		}
		if (p[2].revents & POLLIN &&
		    read(t->ready, &n, sizeof(n)) == sizeof(n)) {
			pthread_mutex_lock(&t->lock);
			if (t->has_next) {
				top_snap_clear(&cur);
				cur = t->next;
				memset(&t->next, 0, sizeof(t->next));
				t->has_next = 0;
			}
			pthread_mutex_unlock(&t->lock);
		}
		if (p[0].revents & POLLIN) {
			if (read(STDIN_FILENO, &c, 1) == 1)
				quit = key(t, &cur, c);
			else
				p[0].fd = -1; /* no more keys: ^C ends it */
		}
		if (p[0].revents & (POLLHUP | POLLERR))
			p[0].fd = -1;
		/* The filter names a resource of `cur`: keep it alive. */
		keep = t->view.filter ? strdup(t->view.filter) : NULL;
		free(filter);
		filter = keep;
		t->view.filter = filter;
		if (quit)
			status = 0;
		else
			draw(t, &cur);
	}
	term_leave(&term);
	top_snap_clear(&cur);
	free(filter);
	if (stop_reader(t, thread) == 0) {
		if (t->has_next)
			top_snap_clear(&t->next);
		free(t->mnt);
		pthread_mutex_destroy(&t->lock);
		close(t->ready);
		close(t->stop);
	}
	close(sfd);
	return status;
}

struct top_opts {
	int once;
	int sort; /* TOP_SORT_* */
	const char *filter; /* --filter, or NULL */
};

static int top_option(void *opts, int c, const char *arg)
{
	struct top_opts *o = opts;

	switch (c) {
	case 'o':
		o->once = 1;
		return 0;
	case 's':
		for (o->sort = 0; o->sort < TOP_N_SORTS; o->sort++)
			if (strcmp(arg, top_sort_name(o->sort)) == 0)
				return 0;
		return extres_ctl_usage_error(
			"top",
			"top: --sort '%s' is none of resource, health, holder",
			arg);
	case 'f':
		o->filter = arg;
		return 0;
	default:
		return CTL_EXIT_USAGE;
	}
}

static int top_run(void *opts, const struct extres_ctl_mount_args *args)
{
	const struct top_opts *o = opts;
	struct top t = { .view = { .sort = o->sort, .width = 80 } };
	const char *path = args->mountpoint;
	long timeout = args->timeout;
	/* live() changes the filter as keys ask: its own copy. */
	char *filter = o->filter ? strdup(o->filter) : NULL;
	struct extres_err err;
	int r;

	t.view.filter = filter;
	if (o->once || !isatty(STDOUT_FILENO)) {
		struct once once = { t.view };

		r = extres_ctl_on_mount(path, timeout, timeout, once_job,
					&once);
		free(filter);
		return r;
	}
	r = extres_ctl_on_mount(path, timeout, timeout, check_job, NULL);
	if (r == 0 && extres_mountpoint_absolute(path, &t.mnt, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		r = 1;
	}
	if (r == 0) {
		t.view.interactive = 1;
		r = live(&t, filter);
	} else {
		free(filter);
	}
	return r;
}

const struct extres_ctl_mount_verb extres_ctl_top = {
	.options =
		(const struct option[]){
			{ "once", no_argument, NULL, 'o' },
			{ "sort", required_argument, NULL, 's' },
			{ "filter", required_argument, NULL, 'f' },
			{ NULL, 0, NULL, 0 },
		},
	.shortopts = "",
	.timeout_default = CTL_MOUNT_TIMEOUT_S,
	.timeout_max = 3600,
	.opts_size = sizeof(struct top_opts),
	.usage = usage_top,
	.option = top_option,
	.run = top_run,
};
