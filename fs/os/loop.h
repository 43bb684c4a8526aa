/* SPDX-License-Identifier: MIT */
/*
 * One small event loop, in the style of sd-event and SPA's loop: epoll over
 * descriptors, and sources that each job registers for itself.
 *
 *   io      a descriptor of the caller's is readable (or what `events` asks)
 *   event   an eventfd the loop owns, which any thread may write to wake
 *           the source (extres_source_fd()); drained before the callback
 *   timer   a time on the loop's clock (monotonic milliseconds, or a fake
 *           clock in tests); one-shot: re-arm it from the callback
 *   signal  a signal read from a signalfd (the signal must be blocked in
 *           every thread: the loop does not block it)
 *   pidfd   a process exited: called once
 *   defer   work marked with extres_source_trigger(): run once before the
 *           loop sleeps again, however many times it was marked
 *
 * One iteration waits until a descriptor is ready or the earliest timer is
 * due (never, when no timer is armed: an idle loop sleeps), then calls, in
 * this order, the ready descriptors' sources, the due timers, and the
 * deferred sources marked. So a deferred source that several jobs mark in
 * one iteration runs once, after all of them: "state changed, render once".
 *
 * Every function but extres_loop_quit() and writes to an event source's fd
 * must be called from the loop's thread (or before it runs). Callbacks may
 * add, arm and free any source, themselves included.
 */
#ifndef EXTRES_LOOP_H
#define EXTRES_LOOP_H

#include <stdint.h>

struct extres_loop;
struct extres_source;

/* Called on the loop's thread with the source and the ctx it was added
 * with. */
typedef void (*extres_source_fn)(struct extres_source *s, void *ctx);

/* A clock in milliseconds: now(ctx). */
typedef long long (*extres_loop_clock_fn)(void *ctx);

/* 0 or a negative errno. */
int extres_loop_new(struct extres_loop **ret);
/* Frees every source left (closing what they own). Accepts NULL. */
void extres_loop_free(struct extres_loop *l);

/* Replace the clock (extres_now_ms() by default): a test's fake clock,
 * which a loop then never sleeps on (run it with extres_loop_run_once(l,
 * 0) after moving the clock). */
void extres_loop_set_clock(struct extres_loop *l, extres_loop_clock_fn now,
			   void *ctx);
long long extres_loop_now(const struct extres_loop *l);

/*
 * Add a source; on success *ret (may be NULL: the loop frees it at the end)
 * is freed with extres_source_free() or with the loop. Each returns 0 or a
 * negative errno, and then has closed nothing of the caller's but what it
 * says it takes.
 */
/* `fd` stays the caller's; `events` as epoll's (EPOLLIN, ...). */
int extres_loop_add_io(struct extres_loop *l, int fd, uint32_t events,
		       extres_source_fn fn, void *ctx,
		       struct extres_source **ret);
int extres_loop_add_event(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret);
/* Disarmed until extres_source_set_time() or _set_delay(). */
int extres_loop_add_timer(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret);
int extres_loop_add_signal(struct extres_loop *l, int signo,
			   extres_source_fn fn, void *ctx,
			   struct extres_source **ret);
/* Takes `pidfd` (pidfd_open()), closed with the source, also on failure. */
int extres_loop_add_pidfd(struct extres_loop *l, int pidfd, extres_source_fn fn,
			  void *ctx, struct extres_source **ret);
int extres_loop_add_defer(struct extres_loop *l, extres_source_fn fn, void *ctx,
			  struct extres_source **ret);

/* Remove the source; safe from its own callback. Accepts NULL. */
void extres_source_free(struct extres_source *s);

/* Timer: fire at `due_ms` on the loop's clock (-1: disarm). */
void extres_source_set_time(struct extres_source *s, long long due_ms);
/* Timer: fire `delay_ms` from now. */
void extres_source_set_delay(struct extres_source *s, long long delay_ms);
/* Timer: fire `delay_ms` from now, unless already armed to fire sooner. */
void extres_source_set_delay_min(struct extres_source *s, long long delay_ms);
/* Timer: when it fires, or -1 when disarmed. */
long long extres_source_time(const struct extres_source *s);

/* Defer: run before the loop sleeps again. */
void extres_source_trigger(struct extres_source *s);

/* Event: the eventfd to write (8 bytes, any count) to wake the source;
 * non-blocking, so a writer never waits. */
int extres_source_fd(const struct extres_source *s);
/* Signal: the signal. */
int extres_source_signal(const struct extres_source *s);

/* How many times the source's callback ran. */
unsigned long extres_source_calls(const struct extres_source *s);

/*
 * One iteration: wait at most `timeout_ms` (-1: until something happens;
 * bounded by the earliest timer, 0 when a deferred source is marked), then
 * dispatch. 0 or a negative errno (EINTR is not one).
 */
int extres_loop_run_once(struct extres_loop *l, int timeout_ms);

/* Iterate until extres_loop_quit(). 0 or a negative errno. */
int extres_loop_run(struct extres_loop *l);

/* End extres_loop_run() after the current callback: nothing else is
 * called after it. From any thread, and from a signal handler. */
void extres_loop_quit(struct extres_loop *l);

/* How many times a wait ended because something was due (a descriptor, a
 * timer): an idle loop's count stays still. */
unsigned long extres_loop_wakeups(const struct extres_loop *l);

#endif
