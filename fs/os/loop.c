/* SPDX-License-Identifier: MIT */
#include "os/loop.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/clock.h"

enum kind { IO, EVENT, TIMER, SIGNAL, PIDFD, DEFER };

struct extres_source {
	struct extres_loop *loop;
	struct extres_source *next;
	enum kind kind;
	int fd; /* -1: none */
	int owns_fd;
	int signo;
	long long due; /* timer: -1 disarmed */
	int pending; /* defer: marked */
	int dead; /* freed while the loop dispatched: reaped after */
	unsigned long calls;
	unsigned long ran_in; /* defer: the iteration it last ran in */
	extres_source_fn fn;
	void *ctx;
};

struct extres_loop {
	int epfd;
	int wakefd; /* eventfd: extres_loop_quit() from anywhere */
	atomic_int quit;
	extres_loop_clock_fn now;
	void *now_ctx;
	struct extres_source *sources;
	int dispatching;
	int has_dead;
	unsigned long wakeups;
	unsigned long iteration;
};

static long long real_now(void *ctx)
{
	(void)ctx;
	return extres_now_ms();
}

int extres_loop_new(struct extres_loop **ret)
{
	struct extres_loop *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN };
	int r = -ENOMEM;

	if (!l)
		return r;
	l->wakefd = -1;
	l->now = real_now;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		goto fail;
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* data.ptr NULL: the loop's own descriptor. */
	ev.data.ptr = NULL;
	if (l->wakefd < 0 ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wakefd, &ev) < 0)
		goto fail;
	*ret = l;
	return 0;
fail:
	r = -errno;
	if (l->wakefd >= 0)
		close(l->wakefd);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l);
	return r;
}

static void destroy(struct extres_source *s)
{
	if (s->owns_fd && s->fd >= 0)
		close(s->fd);
	free(s);
}

void extres_loop_free(struct extres_loop *l)
{
	struct extres_source *s, *next;

	if (!l)
		return;
	for (s = l->sources; s; s = next) {
		next = s->next;
		destroy(s);
	}
	close(l->wakefd);
	close(l->epfd);
	free(l);
}

void extres_loop_set_clock(struct extres_loop *l, extres_loop_clock_fn now,
			   void *ctx)
{
	l->now = now;
	l->now_ctx = ctx;
}

long long extres_loop_now(const struct extres_loop *l)
{
	return l->now(l->now_ctx);
}

/* A new source of `kind` on `fd` (-1: none; owned when `owns`), watched
 * for `events` when fd >= 0. Closes an owned fd on failure. */
static int add(struct extres_loop *l, enum kind kind, int fd, int owns,
	       uint32_t events, extres_source_fn fn, void *ctx,
	       struct extres_source **ret)
{
	struct extres_source *s = calloc(1, sizeof(*s)), **p;
	struct epoll_event ev = { .events = events };
	int r;

	if (!s) {
		if (owns && fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	*s = (struct extres_source){ .loop = l,
				     .kind = kind,
				     .fd = fd,
				     .owns_fd = owns,
				     .due = -1,
				     .fn = fn,
				     .ctx = ctx };
	ev.data.ptr = s;
	if (fd >= 0 && epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		r = -errno;
		destroy(s);
		return r;
	}
	/* In the order added: sources due together run in that order. */
	for (p = &l->sources; *p; p = &(*p)->next)
		;
	*p = s;
	if (ret)
		*ret = s;
	return 0;
}

int extres_loop_add_io(struct extres_loop *l, int fd, uint32_t events,
		       extres_source_fn fn, void *ctx,
		       struct extres_source **ret)
{
	if (fd < 0)
		return -EBADF;
	return add(l, IO, fd, 0, events, fn, ctx, ret);
}

int extres_loop_add_event(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (fd < 0)
		return -errno;
	return add(l, EVENT, fd, 1, EPOLLIN, fn, ctx, ret);
}

int extres_loop_add_timer(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret)
{
	return add(l, TIMER, -1, 0, 0, fn, ctx, ret);
}

int extres_loop_add_signal(struct extres_loop *l, int signo,
			   extres_source_fn fn, void *ctx,
			   struct extres_source **ret)
{
	struct extres_source *s;
	sigset_t set;
	int fd, r;

	sigemptyset(&set);
	if (sigaddset(&set, signo) < 0)
		return -EINVAL;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	r = add(l, SIGNAL, fd, 1, EPOLLIN, fn, ctx, &s);
	if (r < 0)
		return r;
	s->signo = signo;
	if (ret)
		*ret = s;
	return 0;
}

int extres_loop_add_pidfd(struct extres_loop *l, int pidfd, extres_source_fn fn,
			  void *ctx, struct extres_source **ret)
{
	if (pidfd < 0)
		return -EBADF;
	/* A pidfd stays readable once the process is gone: one call. */
	return add(l, PIDFD, pidfd, 1, EPOLLIN | EPOLLONESHOT, fn, ctx, ret);
}

int extres_loop_add_defer(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret)
{
	return add(l, DEFER, -1, 0, 0, fn, ctx, ret);
}

void extres_source_free(struct extres_source *s)
{
	struct extres_loop *l;
	struct extres_source **p;

	if (!s || s->dead)
		return;
	l = s->loop;
	if (s->fd >= 0)
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	if (l->dispatching) {
		/* Its event may still be in the batch being dispatched. */
		s->dead = 1;
		l->has_dead = 1;
		return;
	}
	for (p = &l->sources; *p != s; p = &(*p)->next)
		;
	*p = s->next;
	destroy(s);
}

void extres_source_set_time(struct extres_source *s, long long due_ms)
{
	s->due = due_ms < 0 ? -1 : due_ms;
}

void extres_source_set_delay(struct extres_source *s, long long delay_ms)
{
	s->due = extres_loop_now(s->loop) + (delay_ms > 0 ? delay_ms : 0);
}

void extres_source_set_delay_min(struct extres_source *s, long long delay_ms)
{
	long long due =
		extres_loop_now(s->loop) + (delay_ms > 0 ? delay_ms : 0);

	if (s->due < 0 || due < s->due)
		s->due = due;
}

long long extres_source_time(const struct extres_source *s)
{
	return s->due;
}

void extres_source_trigger(struct extres_source *s)
{
	s->pending = 1;
}

int extres_source_fd(const struct extres_source *s)
{
	return s->fd;
}

int extres_source_signal(const struct extres_source *s)
{
	return s->signo;
}

unsigned long extres_source_calls(const struct extres_source *s)
{
	return s->calls;
}

static void call(struct extres_source *s)
{
	s->calls++;
	s->fn(s, s->ctx);
}

/* The wait's bound: the earliest timer, 0 with deferred work marked. */
static int wait_ms(const struct extres_loop *l, int timeout_ms)
{
	const struct extres_source *s;
	long long now = -1, left, best = timeout_ms;

	for (s = l->sources; s; s = s->next) {
		if (s->dead)
			continue;
		if (s->kind == DEFER && s->pending)
			return 0;
		if (s->kind != TIMER || s->due < 0)
			continue;
		if (now < 0)
			now = extres_loop_now(l);
		left = s->due > now ? s->due - now : 0;
		if (best < 0 || left < best)
			best = left;
	}
	return best > INT_MAX ? INT_MAX : (int)best;
}

static void dispatch_fd(struct extres_loop *l, struct extres_source *s)
{
	struct signalfd_siginfo si;
	uint64_t count;

	if (!s) {
		if (read(l->wakefd, &count, sizeof(count)) < 0) {
			/* Nothing to drain: another wake got it. */
		}
		return;
	}
	if (s->dead)
		return;
	switch (s->kind) {
	case EVENT:
		if (read(s->fd, &count, sizeof(count)) < 0 && errno == EAGAIN)
			return;
		break;
	case SIGNAL:
		/* Another thread's signalfd, or a sigwait, may have taken it. */
		if (read(s->fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			return;
		break;
	default:
		break;
	}
	call(s);
}

static void reap(struct extres_loop *l)
{
	struct extres_source **p = &l->sources, *s;

	while ((s = *p)) {
		if (s->dead) {
			*p = s->next;
			destroy(s);
		} else {
			p = &s->next;
		}
	}
	l->has_dead = 0;
}

int extres_loop_run_once(struct extres_loop *l, int timeout_ms)
{
	struct epoll_event ev[16];
	struct extres_source *s;
	long long now;
	int n, i, ran, timeout = wait_ms(l, timeout_ms);

	n = epoll_wait(l->epfd, ev, 16, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	if (n > 0 || (n == 0 && timeout != 0))
		l->wakeups++;
	l->dispatching = 1;
	/* After a quit nothing more runs: a stop is obeyed at once, and
	 * what it read (a signal) no longer says so to slow work. */
	for (i = 0; i < n && !atomic_load(&l->quit); i++)
		dispatch_fd(l, ev[i].data.ptr);
	/* Timers added or armed by a callback here wait for their turn. */
	now = extres_loop_now(l);
	for (s = l->sources; s; s = s->next) {
		if (atomic_load(&l->quit))
			break;
		if (s->kind != TIMER || s->dead || s->due < 0 || s->due > now)
			continue;
		s->due = -1;
		call(s);
	}
	/* Until none is marked: what one deferred source marks for another
	 * runs in this iteration too, whatever their order, but each at most
	 * once (one that marks itself again runs in the next). */
	l->iteration++;
	do {
		ran = 0;
		for (s = l->sources; s && !atomic_load(&l->quit); s = s->next) {
			if (s->kind != DEFER || s->dead || !s->pending ||
			    s->ran_in == l->iteration)
				continue;
			s->pending = 0;
			s->ran_in = l->iteration;
			call(s);
			ran = 1;
		}
	} while (ran);
	l->dispatching = 0;
	if (l->has_dead)
		reap(l);
	return 0;
}

int extres_loop_run(struct extres_loop *l)
{
	int r = 0;

	while (r == 0 && !atomic_load(&l->quit))
		r = extres_loop_run_once(l, -1);
	return r;
}

void extres_loop_quit(struct extres_loop *l)
{
	uint64_t one = 1;

	atomic_store(&l->quit, 1);
	if (write(l->wakefd, &one, sizeof(one)) < 0) {
		/* The counter is full: the loop is woken already. */
	}
}

unsigned long extres_loop_wakeups(const struct extres_loop *l)
{
	return l->wakeups;
}
