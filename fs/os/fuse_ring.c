/* SPDX-License-Identifier: MIT */
#include "os/fuse_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "base/log.h"
#include "os/cpus.h"

/*
 * The kernel's side of the protocol (include/uapi/linux/fuse.h of 6.14+,
 * protocol 7.42), which Debian 12's headers predate. Each ring entry is a
 * header buffer (the request's fuse_in_header, then its per-opcode header,
 * then the entry's own in/out fields) and a payload buffer (the remaining
 * arguments, or the reply's).
 */
#define RING_IN_OUT_SZ 128
#define RING_OP_IN_OUT_SZ 128

struct ring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* the request's unique, given back on commit */
	uint32_t payload_sz; /* bytes used in the payload buffer */
	uint32_t padding;
	uint64_t reserved;
};

struct ring_req_header {
	char in_out[RING_IN_OUT_SZ];
	char op_in[RING_OP_IN_OUT_SZ];
	struct ring_ent_in_out ent;
};

/* In the 80-byte command area of a 128-byte SQE. */
struct ring_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

enum { CMD_REGISTER = 1, CMD_COMMIT_AND_FETCH = 2 };

/* Entries per queue: one being answered while the next is fetched. */
#define DEPTH 2
/* Room in front of the payload buffer where the request's headers are
 * copied, so that libfuse sees it whole and the payload is not moved. */
#define LEAD 4096
/* user_data of the stop poll; entries are pointers, never this. */
#define STOP_TAG 1

struct ring_ent {
	struct ring_queue *q;
	struct ring_req_header *hdr;
	char *buf; /* LEAD bytes, then the payload buffer */
	struct iovec iov[2];
	uint64_t commit_id;
	unsigned last_cmd;
	int replied;
};

struct ring_queue {
	struct extres_ring *r;
	unsigned qid;
	struct io_uring ring;
	int ring_ok;
	pthread_t thread;
	int started;
	int result; /* registration: 1 pending, 0 done, else -errno */
	struct ring_ent ent[DEPTH];
};

struct extres_ring {
	int fuse_fd;
	int stop_fd;
	size_t payload;
	extres_ring_serve_fn serve;
	void *ctx;
	unsigned n;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned reported;
	struct ring_queue *q;
};

/* The entry this thread is answering: libfuse's writev callback, through
 * which the reply comes, carries no request, so the thread tells. */
static __thread struct ring_ent *serving;

int extres_ring_probe(struct extres_err *err)
{
	struct io_uring ring;
	char c = 0;
	int fd, r;

	fd = open(EXTRES_FUSE_URING_PARAM, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return extres_err_set(
			err, ENOTSUP,
			"this kernel has no FUSE over io_uring (%s: %s)",
			EXTRES_FUSE_URING_PARAM, strerror(errno));
	r = read(fd, &c, 1) == 1 ? 0 : -EIO;
	close(fd);
	if (r < 0 || c != 'Y')
		return extres_err_set(
			err, ENOTSUP,
			"the fuse module's enable_uring parameter is off (echo Y > %s)",
			EXTRES_FUSE_URING_PARAM);
	r = io_uring_queue_init(2, &ring, IORING_SETUP_SQE128);
	if (r < 0)
		return extres_err_set(err, -r,
				      "io_uring cannot be set up here: %s",
				      strerror(-r));
	io_uring_queue_exit(&ring);
	return 0;
}

/* The kernel has a queue per possible CPU, numbered as the CPUs are. */
static unsigned possible_cpus(void)
{
	char buf[256];
	cpu_set_t set;
	ssize_t len;
	int fd, cpu, last = -1;

	CPU_ZERO(&set);
	fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len > 0) {
			buf[len] = '\0';
			if (extres_cpulist_parse(buf, &set) == 0)
				for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
					if (CPU_ISSET(cpu, &set))
						last = cpu;
		}
	}
	return last >= 0 ? (unsigned)last + 1 : (unsigned)get_nprocs_conf();
}

static void prep(struct ring_queue *q, struct ring_ent *e, unsigned cmd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	struct ring_cmd_req *req;

	/* DEPTH + 1 SQEs, one per entry and the stop poll, each submitted
	 * before it is prepared again: never short. */
	if (!sqe)
		return;
	/* 128 bytes each (IORING_SETUP_SQE128): the command area too. */
	memset(sqe, 0, sizeof(*sqe));
	memset(sqe->cmd, 0, 80);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->r->fuse_fd;
	sqe->cmd_op = cmd;
	io_uring_sqe_set_data(sqe, e);
	if (cmd == CMD_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	}
	req = (struct ring_cmd_req *)sqe->cmd;
	req->qid = (uint16_t)q->qid;
	req->commit_id = cmd == CMD_COMMIT_AND_FETCH ? e->commit_id : 0;
	e->last_cmd = cmd;
}

static void commit_error(struct ring_queue *q, struct ring_ent *e, int error)
{
	struct fuse_out_header out = { .len = sizeof(out),
				       .error = error,
				       .unique = e->commit_id };

	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ent.payload_sz = 0;
	e->hdr->ent.padding = 0;
	prep(q, e, CMD_COMMIT_AND_FETCH);
	(void)io_uring_submit(&q->ring);
}

ssize_t extres_ring_reply(const struct iovec *iov, int count)
{
	struct ring_ent *e = serving;
	struct fuse_out_header out;
	size_t used = 0, total;
	int i;

	if (!e || count < 1 || iov[0].iov_len != sizeof(out))
		return 0;
	memcpy(&out, iov[0].iov_base, sizeof(out));
	if (out.unique != e->commit_id || e->replied)
		return 0;
	for (i = 1; i < count; i++) {
		if (iov[i].iov_len > e->q->r->payload - used) {
			e->replied = 1;
			commit_error(e->q, e, -EIO);
			return -E2BIG;
		}
		memcpy(e->buf + LEAD + used, iov[i].iov_base, iov[i].iov_len);
		used += iov[i].iov_len;
	}
	total = sizeof(out) + used;
	/* Protocol 7.46 reads `padding` as the payload's offset in a
	 * buffer pool, which these entries do not use. */
	e->hdr->ent.padding = 0;
	out.len = (uint32_t)total;
	memcpy(e->hdr->in_out, &out, sizeof(out));
	e->hdr->ent.payload_sz = (uint32_t)used;
	e->replied = 1;
	prep(e->q, e, CMD_COMMIT_AND_FETCH);
	/* Handed over now, as a write to /dev/fuse would be: what the
	 * handler does after replying (a push of the bytes of the inode
	 * just looked up) needs the kernel to have the reply. */
	(void)io_uring_submit(&e->q->ring);
	return (ssize_t)total;
}

/* Lay the request out as /dev/fuse would (in_header, per-opcode header,
 * the rest) just in front of its payload, and hand it to libfuse. */
static void serve_one(struct ring_queue *q, struct ring_ent *e)
{
	struct fuse_in_header in;
	size_t psz = e->hdr->ent.payload_sz, oplen;
	char *start;

	memcpy(&in, e->hdr->in_out, sizeof(in));
	e->commit_id = e->hdr->ent.commit_id;
	e->replied = 0;
	if (psz > q->r->payload || in.len < sizeof(in) + psz ||
	    in.len - sizeof(in) - psz > RING_OP_IN_OUT_SZ) {
		extres_log(EXTRES_LOG_ERR,
			   "io_uring queue %u: malformed request (opcode %u, "
			   "length %u, payload %zu)",
			   q->qid, in.opcode, in.len, psz);
		commit_error(q, e, -EIO);
		return;
	}
	oplen = in.len - sizeof(in) - psz;
	start = e->buf + LEAD - oplen - sizeof(in);
	memcpy(start, &in, sizeof(in));
	memcpy(start + sizeof(in), e->hdr->op_in, oplen);
	serving = e;
	q->r->serve(q->r->ctx, start, in.len);
	serving = NULL;
	/* Every ring request expects an answer; one libfuse gave none for
	 * would keep its reader and this entry forever. */
	if (!e->replied)
		commit_error(q, e, -ENOSYS);
}

/* Handle what has completed: 1 when told to stop (or the connection is
 * gone), else 0; the first error of a command in *result. */
static int drain(struct ring_queue *q, int *result)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int stop = 0;

	io_uring_for_each_cqe(&q->ring, head, cqe)
	{
		void *data = io_uring_cqe_get_data(cqe);
		struct ring_ent *e = data;

		seen++;
		if ((uintptr_t)data == STOP_TAG) {
			stop = 1;
		} else if (cqe->res == -EAGAIN || cqe->res == -EINTR) {
			prep(q, e, e->last_cmd);
		} else if (cqe->res < 0) {
			/* -ENOTCONN: unmounted, the end of the queue. */
			if (cqe->res != -ENOTCONN && *result == 0)
				*result = cqe->res;
			stop = 1;
		} else {
			serve_one(q, e);
		}
	}
	io_uring_cq_advance(&q->ring, seen);
	return stop;
}

static int queue_setup(struct ring_queue *q)
{
	struct io_uring_sqe *sqe;
	size_t i;
	int r;

	r = io_uring_queue_init(DEPTH + 1, &q->ring, IORING_SETUP_SQE128);
	if (r < 0)
		return r;
	q->ring_ok = 1;
	for (i = 0; i < DEPTH; i++) {
		struct ring_ent *e = &q->ent[i];

		e->q = q;
		/* Page-aligned, as the kernel maps them. */
		if (posix_memalign((void **)&e->hdr, 4096, 4096) != 0 ||
		    posix_memalign((void **)&e->buf, 4096,
				   LEAD + q->r->payload) != 0)
			return -ENOMEM;
		memset(e->hdr, 0, 4096);
		e->iov[0].iov_base = e->hdr;
		e->iov[0].iov_len = sizeof(*e->hdr);
		e->iov[1].iov_base = e->buf + LEAD;
		e->iov[1].iov_len = q->r->payload;
		prep(q, e, CMD_REGISTER);
	}
	sqe = io_uring_get_sqe(&q->ring);
	io_uring_prep_poll_add(sqe, q->r->stop_fd, POLLIN);
	io_uring_sqe_set_data(sqe, (void *)STOP_TAG);
	r = io_uring_submit(&q->ring);
	return r < 0 ? r : 0;
}

static void report(struct ring_queue *q, int result)
{
	pthread_mutex_lock(&q->r->lock);
	q->result = result;
	q->r->reported++;
	pthread_cond_broadcast(&q->r->cond);
	pthread_mutex_unlock(&q->r->lock);
}

static void *queue_main(void *arg)
{
	struct ring_queue *q = arg;
	char name[16];
	cpu_set_t cpu;
	int result = 0, stop, r;

	/* A CPU that is possible but offline takes no requests: its queue
	 * still has to exist, and may run anywhere. */
	/* Named, so that ps -L and the tests tell them from libfuse's. */
	snprintf(name, sizeof(name), "extres-ring-%u", q->qid);
	(void)pthread_setname_np(pthread_self(), name);
	CPU_ZERO(&cpu);
	CPU_SET(q->qid, &cpu);
	(void)sched_setaffinity(0, sizeof(cpu), &cpu);
	r = queue_setup(q);
	/* Registration fails at once (the kernel refused: the INIT flag
	 * was not taken, the parameter is off) or waits for a request. */
	stop = r < 0 ? 1 : drain(q, &result);
	if (r == 0)
		r = result;
	report(q, r);
	if (r < 0)
		return NULL;
	while (!stop) {
		r = io_uring_submit_and_wait(&q->ring, 1);
		if (r < 0 && r != -EINTR) {
			extres_log(EXTRES_LOG_ERR, "io_uring queue %u: %s",
				   q->qid, strerror(-r));
			break;
		}
		stop = drain(q, &result);
	}
	/* Answers prepared in the last round go out before the end. */
	(void)io_uring_submit(&q->ring);
	if (result < 0)
		extres_log(EXTRES_LOG_ERR, "io_uring queue %u: %s", q->qid,
			   strerror(-result));
	return NULL;
}

unsigned extres_ring_queues(const struct extres_ring *r)
{
	return r ? r->n : 0;
}

unsigned extres_ring_possible_queues(void)
{
	return possible_cpus();
}

void extres_ring_stop(struct extres_ring *r)
{
	uint64_t one = 1;
	unsigned i;
	size_t j;

	if (!r)
		return;
	if (r->stop_fd >= 0 && write(r->stop_fd, &one, sizeof(one)) < 0)
		extres_log(EXTRES_LOG_ERR,
			   "cannot stop the io_uring queues: %s",
			   strerror(errno));
	for (i = 0; i < r->n; i++)
		if (r->q[i].started)
			pthread_join(r->q[i].thread, NULL);
	for (i = 0; i < r->n; i++) {
		if (r->q[i].ring_ok)
			io_uring_queue_exit(&r->q[i].ring);
		for (j = 0; j < DEPTH; j++) {
			free(r->q[i].ent[j].hdr);
			free(r->q[i].ent[j].buf);
		}
	}
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r->q);
	free(r);
}

int extres_ring_start(struct extres_ring **ret, int fuse_fd, size_t payload,
		      extres_ring_serve_fn serve, void *ctx,
		      struct extres_err *err)
{
	struct extres_ring *r;
	unsigned i;
	int rc = 0;

	*ret = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return extres_err_set(err, ENOMEM, "out of memory");
	r->fuse_fd = fuse_fd;
	r->payload = payload;
	r->serve = serve;
	r->ctx = ctx;
	r->n = possible_cpus();
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	r->q = calloc(r->n, sizeof(*r->q));
	if (r->stop_fd < 0 || !r->q) {
		rc = extres_err_set(err, ENOMEM,
				    "cannot set up io_uring queues: %s",
				    strerror(r->q ? errno : ENOMEM));
		goto out;
	}
	for (i = 0; i < r->n; i++) {
		r->q[i].r = r;
		r->q[i].qid = i;
		r->q[i].result = 1;
		rc = -pthread_create(&r->q[i].thread, NULL, queue_main,
				     &r->q[i]);
		if (rc < 0) {
			extres_err_set(err, -rc,
				       "cannot start an io_uring thread: %s",
				       strerror(-rc));
			break;
		}
		r->q[i].started = 1;
	}
	/* Every thread reports at once: nothing it does before can wait. */
	pthread_mutex_lock(&r->lock);
	while (r->reported < i)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	for (i = 0; rc == 0 && i < r->n; i++)
		if (r->q[i].result < 0)
			rc = extres_err_set(
				err, -r->q[i].result,
				"the kernel refused io_uring queue %u: %s", i,
				strerror(-r->q[i].result));
out:
	if (rc < 0)
		extres_ring_stop(r);
	else
		*ret = r;
	return rc;
}
