/* SPDX-License-Identifier: MIT */
/*
 * How requests reach the daemon: over /dev/fuse (read and write by the
 * session loop's threads), or over io_uring (os/fuse_ring.h: a queue per
 * CPU, answered on the reader's CPU), chosen by extres.transport or
 * -o transport=. libfuse 3.14 knows nothing of io_uring: the session gets
 * our own read and writev (fuse_session_custom_io()), which see the
 * kernel's INIT, add the io_uring flag to libfuse's INIT reply, start the
 * queues once the kernel has it, and hand each ring request to libfuse
 * (fuse_session_process_buf()) with its reply taken back to the ring.
 * Where io_uring cannot be had, /dev/fuse serves, and `why` says why.
 */
#ifndef EXTRES_TRANSPORT_H
#define EXTRES_TRANSPORT_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/err.h"

enum extres_transport_mode {
	EXTRES_TRANSPORT_AUTO = 0,
	EXTRES_TRANSPORT_URING,
	EXTRES_TRANSPORT_DEV,
};

struct extres_ring;

struct extres_transport {
	enum extres_transport_mode mode;
	struct fuse_session *se;
	int fd; /* the session's /dev/fuse descriptor */
	/* Written when the outcome changes, so that .meta/status is built
	 * again (the control thread's kickfd; -1: none). */
	int kickfd;
	/* Called when `uring` was asked for and cannot be had after the
	 * mount: ends the session. */
	void (*fail)(void *ctx);
	void *ctx;
	/* The kernel's INIT request, seen by read. */
	uint64_t init_unique;
	int init_seen;
	int kernel_offers;
	/* `uring` was asked for and could not be had after the mount: the
	 * start failed. */
	int failed;
	struct extres_ring *ring;
	pthread_mutex_t lock;
	char state[512]; /* "uring N queues", or "dev <why>" */
	atomic_int changed;
	/* The INIT reply waits until .meta/status shows how requests will
	 * come (extres_transport_settled()): `final` once the outcome is
	 * known, `shown` once a status built since says it, `gate` an
	 * eventfd readable from then on (-1: nothing waits). */
	int final;
	int shown;
	atomic_int open;
	int gate;
};

/*
 * "auto", "uring" or "dev" into *mode; else -EINVAL with an error naming
 * `what` (the key or option) and the value.
 */
int extres_transport_parse(const char *value, const char *what,
			   enum extres_transport_mode *mode,
			   struct extres_err *err);

/* Name of a mode, as parsed. */
const char *extres_transport_mode_name(enum extres_transport_mode mode);

/*
 * Before mounting: can this kernel do what `mode` asks? 0 (state set to
 * what will be tried, or to /dev/fuse and the reason for `auto`), or, for
 * `uring` only, a negative errno with the reason in *err.
 */
int extres_transport_prepare(struct extres_transport *t,
			     enum extres_transport_mode mode,
			     struct extres_err *err);

/*
 * The mode: -o transport= (`option`), else extres.transport (`config`),
 * else EXTRESD_TEST_TRANSPORT (the test suite's, for a whole run over one
 * transport), else dev; then extres_transport_prepare(). Either string
 * may be NULL. 0, or a negative errno (logged).
 */
int extres_transport_choose(struct extres_transport *t, const char *option,
			    const char *config);

/*
 * After fuse_session_mount(), before the session loop: take over the
 * session's reads and writes if io_uring is to be tried. 0 or a negative
 * errno (logged). `kickfd` is written when the outcome changes; `fail`
 * is called when `uring` was asked for and cannot be had.
 */
int extres_transport_attach(struct extres_transport *t, struct fuse_session *se,
			    int kickfd, void (*fail)(void *ctx), void *ctx);

/* Stop the queues (before the unmount). Safe if none started, and twice. */
void extres_transport_stop(struct extres_transport *t);

/* The .meta/status line's value into buf: "uring (N queues)" or
 * "dev (why)". */
void extres_transport_describe(struct extres_transport *t, char *buf,
			       size_t size);

/* Whether the outcome changed since last asked (then .meta/status is
 * built again). */
int extres_transport_take_changed(struct extres_transport *t);

/*
 * After a new .meta/status is served (control thread): once it shows the
 * outcome, the INIT reply held for it goes out, so that no reader ever
 * sees "uring (starting)".
 */
void extres_transport_settled(struct extres_transport *t);

/*
 * A stop (any thread): the INIT reply held for the status goes out now,
 * so that a stop during a job that keeps the status from being served (a
 * reload stuck on a lock) is not held up by that wait.
 */
void extres_transport_unhold(struct extres_transport *t);

#endif
