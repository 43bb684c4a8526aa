/* SPDX-License-Identifier: MIT */
#include "daemon/transport.h"

#include <errno.h>
#include <linux/fuse.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "daemon/served.h"
#include "os/fuse_ring.h"

static const char *const mode_names[] = { "auto", "uring", "dev" };

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
	/* Not auto by default: a daemon killed (SIGKILL) while its queues
	 * are registered leaves, on 6.18, a mount whose requests wait for
	 * good instead of failing with ENOTCONN, which no restart can
	 * replace (extresd(8), TRANSPORT). */
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
		if (t->fail)
			t->fail(t->ctx);
	} else {
		extres_log(EXTRES_LOG_NOTICE, "serving over /dev/fuse: %s",
			   why);
		set_state(t, "dev (%s)", why);
	}
}

static void kick(struct extres_transport *t)
{
	uint64_t one = 1;

	if (t->kickfd >= 0 && write(t->kickfd, &one, sizeof(one)) < 0)
		extres_log(EXTRES_LOG_DEBUG, "cannot kick the control thread");
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
		n = writev(t->fd, iov, count);
		if (out.error == 0)
			give_up(t,
				t->kernel_offers ?
					"libfuse's INIT reply is not one this daemon knows" :
					"the kernel did not offer io_uring at INIT (enable_uring was off when mounting)");
		kick(t);
		return n < 0 ? -errno : n;
	}
	memcpy(&arg, iov[1].iov_base, sizeof(arg));
	arg.flags |= FUSE_INIT_EXT;
	arg.flags2 |= (uint32_t)(EXTRES_FUSE_OVER_IO_URING >> 32);
	mine[0] = iov[0];
	mine[1].iov_base = &arg;
	mine[1].iov_len = sizeof(arg);
	n = writev(t->fd, mine, 2);
	if (n < 0)
		return -errno;
	/* The kernel has taken the reply (the write returns after it did):
	 * it accepts registrations from now on. */
	r = extres_ring_start(&t->ring, t->fd, payload_size(&arg), serve, t,
			      &err);
	if (r < 0) {
		give_up(t, err.msg);
	} else {
		extres_log(EXTRES_LOG_NOTICE,
			   "serving over io_uring: %u queues",
			   extres_ring_queues(t->ring));
		set_state(t, "uring (%u queues)", extres_ring_queues(t->ring));
	}
	kick(t);
	return n;
}

static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct extres_transport *t = ((struct extres_fs *)userdata)->transport;
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
	extres_ring_stop(t->ring);
	t->ring = NULL;
}

void extres_transport_describe(struct extres_transport *t, char *buf,
			       size_t size)
{
	pthread_mutex_lock(&t->lock);
	snprintf(buf, size, "%s", t->state[0] ? t->state : "dev");
	pthread_mutex_unlock(&t->lock);
}

int extres_transport_take_changed(struct extres_transport *t)
{
	return atomic_exchange(&t->changed, 0);
}
