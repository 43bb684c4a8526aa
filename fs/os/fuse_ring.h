/* SPDX-License-Identifier: MIT */
/*
 * FUSE over io_uring (Linux 6.14+, Documentation/filesystems/fuse-io-uring.rst):
 * one queue per possible CPU, each served by a thread bound to its CPU, so
 * that a request is answered on the CPU of the process that asked, with no
 * cross-CPU wake-up. The kernel carries only ordinary requests this way;
 * INIT, interrupts, forgets and notifications stay on /dev/fuse.
 */
#ifndef EXTRES_FUSE_RING_H
#define EXTRES_FUSE_RING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "base/err.h"

/* The INIT flag (bit 41, in init_out.flags2) by which the daemon tells the
 * kernel it will serve requests over io_uring; the kernel offers it in
 * init_in.flags2 when its module parameter enable_uring is on. Not in
 * Debian 12's <linux/fuse.h>. */
#define EXTRES_FUSE_OVER_IO_URING (1ULL << 41)

/* The module parameter an operator sets to let the kernel offer it. */
#define EXTRES_FUSE_URING_PARAM "/sys/module/fuse/parameters/enable_uring"

struct extres_ring;

/*
 * Called on a ring thread with one whole request, laid out as /dev/fuse
 * would deliver it (fuse_in_header, then its arguments; `len` bytes). The
 * reply is given, on the same thread before returning, to
 * extres_ring_reply().
 */
typedef void (*extres_ring_serve_fn)(void *ctx, void *req, size_t len);

/*
 * Whether this kernel lets a FUSE daemon use io_uring at all: the module
 * parameter exists and is on, and io_uring may be set up (the
 * kernel.io_uring_disabled sysctl, seccomp). 0, or a negative errno with
 * the reason in *err.
 */
int extres_ring_probe(struct extres_err *err);

/*
 * Set up a queue per possible CPU on the /dev/fuse descriptor `fuse_fd`
 * (after the kernel accepted an INIT reply that set
 * EXTRES_FUSE_OVER_IO_URING), each with entries whose payload buffer holds
 * `payload` bytes (the kernel's maximum: max_write or max_pages pages),
 * and start their threads. 0 once every queue is registered, or a negative
 * errno with the reason in *err, nothing left running.
 */
int extres_ring_start(struct extres_ring **ret, int fuse_fd, size_t payload,
		      extres_ring_serve_fn serve, void *ctx,
		      struct extres_err *err);

/*
 * From the serve callback: the reply (`iov[0]` a fuse_out_header, then
 * its arguments) to the request this thread is serving. The number of
 * bytes taken; 0 when this thread serves no ring request (the caller
 * then writes to /dev/fuse); a negative errno when the reply does not fit.
 */
ssize_t extres_ring_reply(const struct iovec *iov, int count);

/* How many queues there are. */
unsigned extres_ring_queues(const struct extres_ring *r);

/* How many queues extres_ring_start() sets up: one per possible CPU. */
unsigned extres_ring_possible_queues(void);

/*
 * Stop the threads (a request being served is answered first; none waits
 * on anything else) and free everything. Safe with NULL.
 */
void extres_ring_stop(struct extres_ring *r);

#endif
