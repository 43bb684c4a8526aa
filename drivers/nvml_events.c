/* SPDX-License-Identifier: MIT */
/*
 * The nvml driver's event thread: critical Xid errors as NVML reports them,
 * held per GPU for param.health-recovery after the last one.
 *
 * The thread has its own nvmlInit/nvmlShutdown pair (NVML counts them), so
 * discover() keeps bracketing its calls with its own, and the handles the
 * thread registered stay valid between discoveries. It waits at most
 * WAIT_MS at a time, so that close() and a stop of the daemon are obeyed
 * well within a second, and asks the core for a discover() when an Xid
 * arrives and again when a hold-down ends, so that `health` follows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <extres/driver_util.h>

#include "nvml.h"

#define WAIT_MS 100u

struct xid_state {
	unsigned long long xid; /* the last critical one; 0: none */
	uint64_t at_ms; /* CLOCK_MONOTONIC when it came */
};

struct nvml_events {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready; /* under lock: the thread has registered, or given up */
	atomic_int stop;
	unsigned int count;
	nvml_device *devs; /* the thread's handles, NULL where unregistered */
	struct xid_state *gpu; /* under lock */
	struct nvml *n;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Xids that a program, not the GPU, causes: the GPU stays healthy. The
 * list NVIDIA's Kubernetes device plugin ignores (k8s-device-plugin,
 * internal/rm/health.go, "Application errors: the GPU should still be
 * healthy", after https://docs.nvidia.com/deploy/xid-errors/): 13 graphics
 * engine exception, 31 GPU memory page fault, 43 GPU stopped processing,
 * 45 preemptive cleanup, 68 video processor exception, 109 context switch
 * timeout.
 */
static int application_xid(unsigned long long xid)
{
	static const unsigned long long ignored[] = { 13, 31, 43, 45, 68, 109 };
	size_t i;

	for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (xid == ignored[i])
			return 1;
	return 0;
}

static int stopping(const struct nvml_events *ev)
{
	const struct extres_host *host = ev->n->host;

	return atomic_load(&ev->stop) ||
	       (EXTRES_HAS_MEMBER(host, stop_requested) &&
		host->stop_requested(host));
}

static void set_ready(struct nvml_events *ev)
{
	pthread_mutex_lock(&ev->lock);
	ev->ready = 1;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

/* Register every GPU for critical Xids; returns how many took it. */
static unsigned int register_gpus(struct nvml_events *ev, nvml_event_set set)
{
	const struct nvml *n = ev->n;
	unsigned int gpu, registered = 0;
	nvml_device dev;
	nvml_return rc;

	for (gpu = 0; gpu < ev->count; gpu++) {
		/* discover() says why a GPU has no handle. */
		rc = ((nvml_handle_fn)n->sym[SYM_HANDLE].addr)(gpu, &dev);
		if (rc != NVML_SUCCESS)
			continue;
		rc = ((nvml_register_events_fn)n->sym[SYM_REGISTER_EVENTS]
			      .addr)(dev, NVML_EVENT_TYPE_XID_CRITICAL_ERROR,
				     set);
		if (rc != NVML_SUCCESS) {
			nvml_log_rc(
				n, SYM_REGISTER_EVENTS, rc,
				"GPU %u: no Xid events, health from ECC and "
				"retired pages only",
				gpu);
			continue;
		}
		ev->devs[gpu] = dev;
		registered++;
	}
	return registered;
}

static void record_xid(struct nvml_events *ev,
		       const struct nvml_event_data *data)
{
	const struct nvml *n = ev->n;
	unsigned int gpu;

	if (!(data->event_type & NVML_EVENT_TYPE_XID_CRITICAL_ERROR))
		return;
	for (gpu = 0; gpu < ev->count; gpu++)
		if (ev->devs[gpu] && ev->devs[gpu] == data->device)
			break;
	if (gpu == ev->count)
		return;
	if (application_xid(data->event_data)) {
		n->host->log(n->host, EXTRES_LOG_INFO,
			     "GPU %u: Xid %llu, caused by a program: health "
			     "stays as it is",
			     gpu, data->event_data);
		return;
	}
	n->host->log(n->host, EXTRES_LOG_WARNING, "GPU %u: critical Xid %llu",
		     gpu, data->event_data);
	pthread_mutex_lock(&ev->lock);
	ev->gpu[gpu].xid = data->event_data;
	ev->gpu[gpu].at_ms = now_ms();
	pthread_mutex_unlock(&ev->lock);
	nvml_request_refresh(n);
}

/* Hold-downs that ended since the last look: ask for a discover() that
 * shows `ok` again. */
static void expire(struct nvml_events *ev)
{
	const struct nvml *n = ev->n;
	uint64_t now = now_ms();
	int ended = 0;
	unsigned int gpu;

	if (n->recovery_ms == 0)
		return;
	pthread_mutex_lock(&ev->lock);
	for (gpu = 0; gpu < ev->count; gpu++)
		if (ev->gpu[gpu].xid &&
		    now - ev->gpu[gpu].at_ms >= n->recovery_ms) {
			ev->gpu[gpu].xid = 0;
			ended = 1;
		}
	pthread_mutex_unlock(&ev->lock);
	if (ended)
		nvml_request_refresh(n);
}

static void pause_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ms * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

static void *event_thread(void *arg)
{
	struct nvml_events *ev = arg;
	const struct nvml *n = ev->n;
	struct nvml_event_data data;
	nvml_event_set set = NULL;
	nvml_return rc, last_rc = NVML_SUCCESS;
	char buf[32];

	rc = ((nvml_void_fn)n->sym[SYM_INIT].addr)();
	if (rc != NVML_SUCCESS) {
		n->host->log(n->host, EXTRES_LOG_INFO, "no Xid events: %s: %s",
			     n->sym[SYM_INIT].name,
			     nvml_strerror(n, rc, buf, sizeof(buf)));
		set_ready(ev);
		return NULL;
	}
	rc = ((nvml_event_set_create_fn)n->sym[SYM_EVENT_SET_CREATE].addr)(
		&set);
	if (rc != NVML_SUCCESS) {
		n->host->log(n->host, EXTRES_LOG_INFO, "no Xid events: %s: %s",
			     n->sym[SYM_EVENT_SET_CREATE].name,
			     nvml_strerror(n, rc, buf, sizeof(buf)));
		set = NULL;
		goto out;
	}
	if (register_gpus(ev, set) == 0)
		goto out;
	set_ready(ev);
	while (!stopping(ev)) {
		memset(&data, 0, sizeof(data));
		rc = ((nvml_event_wait_fn)n->sym[SYM_EVENT_WAIT].addr)(
			set, &data, WAIT_MS);
		if (rc == NVML_SUCCESS) {
			record_xid(ev, &data);
		} else if (rc != NVML_ERROR_TIMEOUT) {
			/* Said once per kind of failure; a pause so that a
			 * wait that fails at once does not spin. */
			if (rc != last_rc)
				n->host->log(
					n->host, EXTRES_LOG_INFO, "%s: %s",
					n->sym[SYM_EVENT_WAIT].name,
					nvml_strerror(n, rc, buf, sizeof(buf)));
			pause_ms(WAIT_MS);
		}
		last_rc = rc;
		expire(ev);
	}
out:
	set_ready(ev);
	if (set)
		((nvml_event_set_free_fn)n->sym[SYM_EVENT_SET_FREE].addr)(set);
	((nvml_void_fn)n->sym[SYM_SHUTDOWN].addr)();
	return NULL;
}

static void events_free(struct nvml_events *ev)
{
	if (!ev)
		return;
	pthread_mutex_destroy(&ev->lock);
	pthread_cond_destroy(&ev->cond);
	free(ev->devs);
	free(ev->gpu);
	free(ev);
}

void nvml_events_start(struct nvml *n, unsigned int count)
{
	struct nvml_events *ev;
	struct timespec deadline;
	int e;

	/* Once there are GPUs to watch: a node whose GPUs NVML did not list
	 * at first gets its thread when it does. */
	if (n->events_tried || count == 0)
		return;
	n->events_tried = 1;
	if (!n->sym[SYM_EVENT_SET_CREATE].addr ||
	    !n->sym[SYM_EVENT_SET_FREE].addr ||
	    !n->sym[SYM_REGISTER_EVENTS].addr || !n->sym[SYM_EVENT_WAIT].addr) {
		n->host->log(n->host, EXTRES_LOG_DEBUG,
			     "%s has no NVML events: health from ECC and "
			     "retired pages only",
			     n->library);
		return;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		goto nomem;
	ev->n = n;
	ev->count = count;
	ev->devs = calloc(count, sizeof(*ev->devs));
	ev->gpu = calloc(count, sizeof(*ev->gpu));
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	if (!ev->devs || !ev->gpu)
		goto nomem;
	e = pthread_create(&ev->thread, NULL, event_thread, ev);
	if (e) {
		n->host->log(n->host, EXTRES_LOG_WARNING,
			     "no Xid events: cannot start a thread: %s",
			     strerror(e));
		events_free(ev);
		return;
	}
	/* Registered before discover() returns, so that an Xid that comes
	 * after it is never missed. The thread's nvmlInit may be slow: the
	 * wait asks for a stop as often as the daemon wants. */
	pthread_mutex_lock(&ev->lock);
	while (!ev->ready && !stopping(ev)) {
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += 100 * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ev->cond, &ev->lock, &deadline);
	}
	pthread_mutex_unlock(&ev->lock);
	n->events = ev;
	return;
nomem:
	n->host->log(n->host, EXTRES_LOG_WARNING,
		     "no Xid events: out of memory");
	events_free(ev);
}

void nvml_events_stop(struct nvml *n)
{
	struct nvml_events *ev = n->events;

	if (!ev)
		return;
	atomic_store(&ev->stop, 1);
	pthread_join(ev->thread, NULL);
	events_free(ev);
	n->events = NULL;
}

unsigned long long nvml_events_xid(const struct nvml *n, unsigned int gpu)
{
	struct nvml_events *ev = n->events;
	unsigned long long xid = 0;

	if (!ev || gpu >= ev->count)
		return 0;
	pthread_mutex_lock(&ev->lock);
	/* By the clock, not only the thread's expire(): a discover() just
	 * after the end of the hold-down already shows `ok`. */
	if (ev->gpu[gpu].xid &&
	    (n->recovery_ms == 0 ||
	     now_ms() - ev->gpu[gpu].at_ms < n->recovery_ms))
		xid = ev->gpu[gpu].xid;
	pthread_mutex_unlock(&ev->lock);
	return xid;
}
