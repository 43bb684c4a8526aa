/* SPDX-License-Identifier: MIT */
#include "daemon/transport.h"

#include <errno.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/log.h"
#include "daemon/served.h"
#include "os/fuse_ring.h"

static const char *const mode_names[] = { "auto", "uring", "dev" };

/* The longest the INIT reply waits for .meta/status to show the outcome:
 * only a control thread kept busy (a reload waiting on a lock) takes that
 * long, and then the reply goes out all the same. */
#define GATE_MS 2000

int extres_transport_parse(const char *value, const char *what,
			   enum extres_transport_mode *mode,
			   struct extres_err *err)
{
	size_t i;

	for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (strcmp(value, mode_names[i]) == 0) {
			*mode = (enum extres_transport_mode)i;
			return 0;
		}
	return extres_err_set(err, EINVAL,
			      "%s: unknown transport '%s' (auto, uring or dev)",
			      what, value);
}

const char *extres_transport_mode_name(enum extres_transport_mode mode)
{
	return mode_names[mode];
}

static void set_state(struct extres_transport *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_state(struct extres_transport *t, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&t->lock);
	va_start(ap, fmt);
	vsnprintf(t->state, sizeof(t->state), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->changed, 1);
}

static void kick(struct extres_transport *t)
{
	uint64_t one = 1;

	if (t->kickfd >= 0 && write(t->kickfd, &one, sizeof(one)) < 0)
		extres_log(EXTRES_LOG_DEBUG, "cannot kick the control thread");
}

static void open_gate(struct extres_transport *t)
{
	uint64_t one = 1;

	if (atomic_exchange(&t->open, 1) || t->gate < 0)
		return;
	if (write(t->gate, &one, sizeof(one)) < 0)
		extres_log(EXTRES_LOG_DEBUG, "cannot open the request gate");
}

/*
 * The outcome is known (at INIT): have .meta/status say it before the INIT
 * reply lets any request through, so that no reader sees "uring
 * (starting)". The control thread builds it: until the kernel has the
 * reply it asks nothing of the mount (nothing has been looked up, so
 * nothing is primed) and so cannot wait on us. GATE_MS at most.
 */
static void show(struct extres_transport *t)
{
	struct pollfd p = { .fd = t->gate, .events = POLLIN };

	pthread_mutex_lock(&t->lock);
	t->final = 1;
	pthread_mutex_unlock(&t->lock);
	kick(t);
	if (t->gate < 0)
		return;
	while (!atomic_load(&t->open) && poll(&p, 1, GATE_MS) < 0 &&
	       errno == EINTR)
		;
}

int extres_transport_prepare(struct extres_transport *t,
			     enum extres_transport_mode mode,
			     struct extres_err *err)
{
	struct extres_err why;
	int r;

	pthread_mutex_init(&t->lock, NULL);
	t->mode = mode;
	t->fd = -1;
	t->kickfd = -1;
	t->gate = -1;
	atomic_store(&t->open, 1);
	if (mode == EXTRES_TRANSPORT_DEV) {
		set_state(t, "dev (asked for)");
		return 0;
	}
	r = extres_ring_probe(&why);
	if (r == 0) {
		set_state(t, "uring (starting)");
		return 0;
	}
	if (mode == EXTRES_TRANSPORT_URING)
		return extres_err_set(err, -r, "transport uring: %s", why.msg);
	extres_log(EXTRES_LOG_NOTICE, "serving over /dev/fuse: %s", why.msg);
	set_state(t, "dev (%s)", why.msg);
	t->mode = EXTRES_TRANSPORT_DEV;
	return 0;
}

int extres_transport_choose(struct extres_transport *t, const char *option,
			    const char *config)
{
	struct extres_err e, *err = &e;
	enum extres_transport_mode mode = EXTRES_TRANSPORT_DEV;
	const char *test = getenv("EXTRESD_TEST_TRANSPORT");
	int r = 0;

	if (option)
		r = extres_transport_parse(option, "-o transport", &mode, err);
	else if (config)
		r = extres_transport_parse(config, "extres.transport", &mode,
					   err);
	else if (test && *test)
		r = extres_transport_parse(test, "EXTRESD_TEST_TRANSPORT",
					   &mode, err);
	if (r == 0)
		r = extres_transport_prepare(t, mode, err);
	/* Not auto by default: over io_uring every request is the daemon's
	 * as soon as it is made, so a reader of a stopped daemon cannot be
	 * interrupted, even by SIGKILL (extresd(8), TRANSPORT). */
	if (r == 0 && !option && !config && !(test && *test))
		set_state(t, "dev (the default; extres.transport chooses)");
	if (r < 0)
		extres_log(EXTRES_LOG_ERR, "%s", e.msg);
	return r;
}

/* No io_uring after all: /dev/fuse goes on serving everything. */
static void give_up(struct extres_transport *t, const char *why)
{
	if (t->mode == EXTRES_TRANSPORT_URING) {
		extres_log(EXTRES_LOG_ERR, "transport uring: %s", why);
		set_state(t, "dev (%s)", why);
		t->failed = 1;
		if (t->fail)
			t->fail(t->ctx);
	} else {
		extres_log(EXTRES_LOG_NOTICE, "serving over /dev/fuse: %s",
			   why);
		set_state(t, "dev (%s)", why);
	}
}

static void serve(void *ctx, void *req, size_t len)
{
	struct extres_transport *t = ctx;
	struct fuse_buf buf = { .size = len, .mem = req, .fd = -1 };

	fuse_session_process_buf(t->se, &buf);
}

static ssize_t dev_read(int fd, void *buf, size_t len, void *userdata)
{
	struct extres_transport *t = ((struct extres_fs *)userdata)->transport;
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;

	if (n >= (ssize_t)(sizeof(*in) + sizeof(struct fuse_init_in)) &&
	    in->opcode == FUSE_INIT) {
		const struct fuse_init_in *arg = (const void *)(in + 1);
		uint64_t flags = arg->flags;

		if (flags & FUSE_INIT_EXT)
			flags |= (uint64_t)arg->flags2 << 32;
		t->init_unique = in->unique;
		t->init_seen = 1;
		t->kernel_offers = (flags & EXTRES_FUSE_OVER_IO_URING) != 0;
	}
	return n;
}

/* The payload buffer the kernel wants: as large as max_write and as
 * max_pages pages (Linux's fs/fuse/dev_uring.c). */
static size_t payload_size(const struct fuse_init_out *out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 8192;
	size_t pages = out->max_pages ? out->max_pages : 32;

	if (out->max_write > size)
		size = out->max_write;
	if (pages * page > size)
		size = pages * page;
	return size;
}

/* libfuse's INIT reply, with the io_uring flag added, then the queues. */
static ssize_t init_reply(struct extres_transport *t, struct iovec *iov,
			  int count)
{
	struct fuse_out_header out;
	struct fuse_init_out arg;
	struct iovec mine[2];
	struct extres_err err;
	ssize_t n;
	int r;

	memcpy(&out, iov[0].iov_base, sizeof(out));
	if (!t->kernel_offers || out.error != 0 || count != 2 ||
	    iov[1].iov_len != sizeof(arg)) {
		if (out.error == 0)
			give_up(t,
				t->kernel_offers ?
					"libfuse's INIT reply is not one this daemon knows" :
					"the kernel did not offer io_uring at INIT (enable_uring was off when mounting)");
		show(t);
		n = writev(t->fd, iov, count);
		return n < 0 ? -errno : n;
	}
	memcpy(&arg, iov[1].iov_base, sizeof(arg));
	arg.flags |= FUSE_INIT_EXT;
	arg.flags2 |= (uint32_t)(EXTRES_FUSE_OVER_IO_URING >> 32);
	mine[0] = iov[0];
	mine[1].iov_base = &arg;
	mine[1].iov_len = sizeof(arg);
	/* What the queues will be, unless the kernel refuses them (then the
	 * status says so a moment later). */
	set_state(t, "uring (%u queues)", extres_ring_possible_queues());
	show(t);
	n = writev(t->fd, mine, 2);
	if (n < 0) {
		n = -errno;
		give_up(t, "the kernel refused the INIT reply");
		kick(t);
		return n;
	}
	/* The kernel has taken the reply (the write returns after it did):
	 * it accepts registrations from now on. */
	r = extres_ring_start(&t->ring, t->fd, payload_size(&arg), serve, t,
			      &err);
	if (r < 0) {
		give_up(t, err.msg);
		kick(t);
	} else {
		extres_log(EXTRES_LOG_NOTICE,
			   "serving over io_uring: %u queues",
			   extres_ring_queues(t->ring));
	}
	return n;
}

static ssize_t write_msg(struct extres_transport *t, int fd, struct iovec *iov,
			 int count)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	ssize_t n;

	/* A ring thread's answer to its request goes back on its ring. */
	n = extres_ring_reply(iov, count);
	if (n != 0)
		return n;
	if (t->init_seen && out->unique == t->init_unique &&
	    iov[0].iov_len == sizeof(*out)) {
		t->init_seen = 0;
		return init_reply(t, iov, count);
	}
	n = writev(fd, iov, count);
	return n < 0 ? -errno : n;
}

/* libfuse reads this as writev(2): an error is -1 and errno, nothing else
 * (a -ENOENT returned as such reads as success, and a notification for an
 * inode the kernel does not hold yet would never be tried again). */
static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct extres_transport *t = ((struct extres_fs *)userdata)->transport;
	ssize_t n = write_msg(t, fd, iov, count);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

int extres_transport_attach(struct extres_transport *t, struct fuse_session *se,
			    int kickfd, void (*fail)(void *ctx), void *ctx)
{
	static const struct fuse_custom_io io = {
		.read = dev_read,
		.writev = dev_writev,
	};
	int r;

	t->se = se;
	t->kickfd = kickfd;
	t->fail = fail;
	t->ctx = ctx;
	if (t->mode == EXTRES_TRANSPORT_DEV)
		return 0;
	t->fd = fuse_session_fd(se);
	/* Without it INIT is answered at once: the status may then say
	 * "starting" for a moment, nothing worse. */
	t->gate = eventfd(0, EFD_CLOEXEC);
	if (t->gate >= 0)
		atomic_store(&t->open, 0);
	/* The session keeps its descriptor (and closes it): only the
	 * reads and writes become ours. */
	r = fuse_session_custom_io(se, &io, t->fd);
	if (r < 0)
		extres_log(EXTRES_LOG_ERR,
			   "cannot take over the session's I/O: %s",
			   strerror(-r));
	return r;
}

void extres_transport_stop(struct extres_transport *t)
{
	open_gate(t);
	extres_ring_stop(t->ring);
	t->ring = NULL;
	if (t->gate >= 0)
		close(t->gate);
	t->gate = -1;
}

void extres_transport_describe(struct extres_transport *t, char *buf,
			       size_t size)
{
	pthread_mutex_lock(&t->lock);
	snprintf(buf, size, "%s", t->state[0] ? t->state : "dev");
	t->shown = t->final;
	pthread_mutex_unlock(&t->lock);
}

void extres_transport_settled(struct extres_transport *t)
{
	int shown;

	pthread_mutex_lock(&t->lock);
	shown = t->shown;
	pthread_mutex_unlock(&t->lock);
	if (shown)
		open_gate(t);
}

void extres_transport_unhold(struct extres_transport *t)
{
	open_gate(t);
}

int extres_transport_take_changed(struct extres_transport *t)
{
	return atomic_exchange(&t->changed, 0);
}
