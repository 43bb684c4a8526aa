/* SPDX-License-Identifier: MIT */
/*
 * A driver whose devices change while the daemon runs, and that says so
 * itself (host->request_refresh()), as a driver with a device library's
 * events does: for the core's side of health, refresh requests and poll().
 *
 * Device i (0 <= i < count) has `index` i, `health` from the file
 * DIR/health-i (its first line; "ok" when the file is missing) and `value`
 * from DIR/value-i ("-" when missing). A thread looks at DIR's files every
 * 20 ms and asks for a refresh when one changed.
 * Params:
 *   dir: <path>     required
 *   count: <n>      1..64, default 2
 *   quiet: <any>    never ask for a refresh (the resource's
 *                   refresh-interval alone updates it)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

struct live {
	const struct extres_host *host;
	const char *dir;
	unsigned count;
	int quiet;
	pthread_t thread;
	int started;
	atomic_int stop;
};

/* First line of DIR/NAME-i into buf, or `dflt`. */
static void read_line(const struct live *l, const char *name, unsigned i,
		      const char *dflt, char *buf, size_t size)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s-%u", l->dir, name, i);
	snprintf(buf, size, "%s", dflt);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)size, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (!buf[0])
		snprintf(buf, size, "%s", dflt);
	fclose(f);
}

static unsigned long long signature(const struct live *l)
{
	static const char *const names[] = { "health", "value" };
	unsigned long long sig = 0;
	char path[4096];
	struct stat st;
	unsigned i, k;

	for (i = 0; i < l->count; i++)
		for (k = 0; k < 2; k++) {
			snprintf(path, sizeof(path), "%s/%s-%u", l->dir,
				 names[k], i);
			if (stat(path, &st) == 0)
				sig = sig * 31 +
				      (unsigned long long)st.st_mtim.tv_nsec +
				      (unsigned long long)st.st_mtim.tv_sec *
					      1000000007ULL +
				      (unsigned long long)st.st_size +
				      st.st_ino;
		}
	return sig;
}

static void *watch(void *arg)
{
	struct live *l = arg;
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	unsigned long long seen = signature(l), now;

	while (!atomic_load(&l->stop)) {
		nanosleep(&nap, NULL);
		now = signature(l);
		if (now != seen) {
			seen = now;
			l->host->request_refresh(l->host);
		}
	}
	return NULL;
}

static int32_t live_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	const char *count = extres_param_scalar(params, "count");
	struct live *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->host = host;
	l->dir = extres_param_scalar(params, "dir");
	l->count = count ? (unsigned)strtoul(count, NULL, 10) : 2;
	l->quiet = extres_param_get(params, "quiet") != NULL;
	atomic_init(&l->stop, 0);
	if (!l->dir || l->count < 1 || l->count > 64) {
		free(l);
		return host->error(host, "param dir is not set, or count is "
					 "not 1..64");
	}
	*ret_handle = l;
	return 0;
}

static int32_t live_discover(void *handle, struct extres_sink *sink)
{
	struct live *l = handle;
	char buf[256], num[16];
	int32_t r = 0;
	unsigned i;

	/* On the first discover(), as a real driver would: check only
	 * opens. */
	if (!l->started && !l->quiet &&
	    EXTRES_HAS_MEMBER(l->host, request_refresh)) {
		if (pthread_create(&l->thread, NULL, watch, l) != 0)
			return l->host->error(l->host, "cannot start a thread");
		l->started = 1;
	}
	for (i = 0; i < l->count && r == 0; i++) {
		snprintf(num, sizeof(num), "%u", i);
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", num);
		read_line(l, "health", i, "ok", buf, sizeof(buf));
		if (r == 0)
			r = sink->add_property(sink, "health", buf);
		read_line(l, "value", i, "-", buf, sizeof(buf));
		if (r == 0)
			r = sink->add_property(sink, "value", buf);
	}
	return r;
}

static void live_close(void *handle)
{
	struct live *l = handle;

	if (l->started) {
		atomic_store(&l->stop, 1);
		pthread_join(l->thread, NULL);
	}
	free(l);
}

EXTRES_DRIVER_REGISTER(.name = "mock_live", .open = live_open,
		       .discover = live_discover, .close = live_close)
