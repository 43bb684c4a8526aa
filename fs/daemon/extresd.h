/* SPDX-License-Identifier: MIT */
/*
 * extresd's state: one context object that main() owns, and the jobs that
 * change it, as sources on one event loop (os/loop.h) that the control
 * thread runs: the reloader (SIGHUP), a refresh timer per resource and the
 * drivers' wake-ups, the guard (the coordination files' inotify, and a
 * recheck timer while conflicts last), the holders (a re-read timer and an
 * owner probe timer), the stop (SIGTERM, SIGINT; an owner's exit raises
 * SIGTERM, daemon/owner.h), the trimmer and the .meta/nfd renewal
 * (timers). A job that changes what the mount shows marks it
 * (extresd_changed()); one deferred source then renders and serves it
 * once.
 *
 * After start-up only the control thread changes config, allocs and the
 * served tree; main() touches them again only after stopping it. Nothing
 * here knows FUSE: what serves the tree (main.c) is reached through
 * struct extresd_front, so that the jobs run in unit tests without a mount.
 */
#ifndef EXTRESD_H
#define EXTRESD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "config/config.h"
#include "alloc/transaction.h"
#include "daemon/guard.h"
#include "daemon/owner.h"
#include "os/daemonize.h"
#include "os/loop.h"
#include "os/runlock.h"
#include "views/holders.h"
#include "tree/snapshot.h"

struct extres_cdi_base;

/* What serves the tree: the FUSE side (main.c), or a test's fake. Every
 * callback runs on the control thread (or before it starts). */
struct extresd_front {
	/* Serve `tree` (owned from now on) and tell the kernel what changed. */
	void (*swap)(void *ctx, struct extres_tree *tree);
	/* The tree served now (NULL before the first swap). */
	const struct extres_tree *(*current)(void *ctx);
	/* The transport, as .meta/status says it ("dev (why)"). */
	void (*transport)(void *ctx, char *buf, size_t size);
	/* Whether the transport's outcome changed since last asked. */
	int (*transport_changed)(void *ctx);
	/* End the session (SIGTERM, SIGINT, the owner's exit). */
	void (*stop)(void *ctx);
	void *ctx;
};

/* Everything the daemon owns, in one place. */
struct extresd {
	/* Command line. */
	char *config_path;
	char *owner_arg;
	char *transport_arg;
	char *positional[2];
	int n_positional;
	/* Running state. */
	struct extres_config *config;
	char *mountpoint;
	struct extres_allocations *allocs;
	const struct extresd_front *front;
	struct extres_daemonize daemon;
	pid_t owner; /* recorded in coordination files */
	/* The --owner-pid process's watch, started with the jobs. */
	struct extres_owner_watch owner_watch;
	/* The loop the jobs' sources are on, and the control thread that
	 * runs it once the mount serves (daemon/control.c). */
	struct extres_loop *loop;
	pthread_t thread;
	int started;
	struct {
		struct extres_source *publish; /* defer: render, serve once */
		struct extres_source *kick; /* event: drivers, transport */
		struct extres_source *guard; /* io: the guard's inotify */
		struct extres_source *recheck; /* timer: conflicts again */
		struct extres_source *holders; /* timer: re-read the holders */
		struct extres_source *probe; /* timer: look at the owners */
		struct extres_source *trim; /* timer: malloc_trim() */
		struct extres_source *nfd; /* timer: renew .meta/nfd */
		struct extres_source *ask; /* timer: drivers' requests again */
		struct extres_source **refresh; /* timer per resource */
		size_t n_refresh;
	} src;
	/* Trees built and served: one per change, however many jobs made
	 * it (tests/unit/test_jobs.c counts them; not shown in .meta/status,
	 * which would then change, and wake its pollers, at every render);
	 * whether one is marked. */
	unsigned long renders;
	int dirty;
	/* What .meta/status tells: successful reloads, attempts, the last
	 * attempt's outcome ("-" before any, "ok", "failed at TIME"); and
	 * what root alone reads in .meta/error: why it failed ("" when it
	 * did not). */
	unsigned long generation;
	unsigned long reloads;
	/* For .meta/metrics.prom: attempts that failed, and when the
	 * running config was loaded (seconds since the epoch). */
	unsigned long reload_failures;
	int64_t loaded_at;
	char last_reload[512];
	char last_error[EXTRES_ERR_MAX];
	/* How many of each resource's devices the last refresh missed. */
	size_t *refresh_stale;
	/* When each resource's driver was last refreshed on its own request
	 * (the loop's clock, ms), so that a storm of requests (a device that keeps
	 * failing) costs at most one discover() per REFRESH_ASK_GAP_MS. */
	long long *refresh_asked;
	/* Our coordination-file lines: watched, kept, and the conflicts
	 * found (NULL: none; else one "resource ...: device ... is held by
	 * ..." line each), checked again by src.recheck while any last. */
	struct extres_guard guard;
	char *conflicts;
	/* Who holds the devices of the coordination files we follow (see
	 * daemon/holders.c), as .meta/holders shows them (holders_text),
	 * re-read by src.holders, which a burst of changes arms once; live
	 * owners looked at by src.probe; the last read's error, logged once
	 * (NULL: none). */
	struct extres_holders holders;
	char *holders_text;
	size_t holders_len;
	char *holders_error;
	/* When .meta/nfd expires (seconds since the epoch; 0: not yet
	 * rendered); src.nfd renders it again before that. */
	int64_t nfd_expires;
	/* The lock that makes this the one daemon on its mount point; held
	 * from before any driver runs until everything is released. */
	struct extres_runlock runlock;
	/* A dead mount of ours on the mount point at start-up, until the
	 * new mount replaces it (or a failed start detaches it). */
	int dead_mount;
	/* extres.cdi-spec-dir as last written to, and the .meta/cdi.json
	 * written there (NULL: nothing written). */
	char *cdi_dir;
	char *cdi_written;
	/* The vendors' CDI specs that .meta/cdi.json builds on, per
	 * resource (NULL: none), and whether the driver names some of which
	 * none exists; read for `generation` (daemon/cdi_bases.c). */
	struct {
		size_t n;
		struct extres_cdi_base **base;
		unsigned char *missing;
		unsigned long generation;
		int loaded;
	} cdi_bases;
};

/*
 * Render the tree for the current state and serve it now (start-up, and a
 * reload's commit, which rolls back when it fails): 0, or a negative errno
 * after logging. A render marked by extresd_changed() is then done: this
 * one shows everything.
 */
int extresd_publish(struct extresd *d);

/*
 * Start-up, once the allocations are made and the jobs' sources added:
 * watch the coordination files, read the holders, check our lines, serve
 * the first tree and arm the refreshes. 0, -EINTR when a stop came while
 * waiting for a file, or a negative errno after logging.
 */
int extresd_serve_first(struct extresd *d);

/* What the mount shows changed: render and serve it once, before the loop
 * sleeps again, however many jobs say so meanwhile (daemon/publish.c). */
void extresd_changed(struct extresd *d);

/* Add the publisher's sources: the deferred render, the trimmer and the
 * .meta/nfd renewal. 0 or a negative errno. */
int extresd_publish_add(struct extresd *d);

/*
 * Make d->loop and add every job's sources to it: signals (SIGHUP reloads,
 * SIGTERM and SIGINT stop), the drivers' wake-ups, the guard, the holders,
 * the publisher (daemon/control.c). 0 or a negative errno with a message.
 */
int extresd_jobs_open(struct extresd *d, struct extres_err *err);
/* Run the loop on the control thread from now on, and watch the
 * --owner-pid process (daemon/owner.h). */
int extresd_jobs_start(struct extresd *d, struct extres_err *err);
/* End the loop and join the thread if it runs (a job in progress, a reload
 * say, finishes first). Safe if never started, and twice. */
void extresd_jobs_stop(struct extresd *d);
/* Free the loop and its sources, and end the owner watch: only once every
 * driver instance that may write to the wake-up descriptor is closed. */
void extresd_jobs_close(struct extresd *d);

/* Bring extres.cdi-spec-dir's files in step with `view` (.meta/cdi.json
 * as just served), removing those of a directory the config no longer
 * names (daemon/cdi_dir.c). Logs what fails; tried again next time. */
void extresd_cdi_sync(struct extresd *d, const char *view);

/* Read the resources' vendor CDI specs again when the config changed. */
void extresd_cdi_bases_update(struct extresd *d);
void extresd_cdi_bases_free(struct extresd *d);

/* Remove the spec files written (at stop, before devices are released). */
void extresd_cdi_clear(struct extresd *d);

/* The files of .meta: names, modes and contents (malloc'd in text[]). */
struct extresd_meta {
	size_t n;
	struct extres_snapshot_file *files;
	char **text;
};

/*
 * The files of .meta for the current state (daemon/meta.c), the status
 * last. 0 or a negative errno; free with extresd_meta_free() either way.
 */
int extresd_meta_files(const struct extresd *d, struct extresd_meta *ret);
void extresd_meta_free(struct extresd_meta *m);

/* The device a holder holds, as resource `k` serves or last found it, or
 * NULL (daemon/holders.c). */
const struct extres_info *extresd_holder_info(const struct extresd *d, size_t k,
					      const struct extres_holder *x);

/* SIGHUP: re-read the config and apply it, or keep everything as it is and
 * log why not. Runs on the control thread. */
void extresd_reload(struct extresd *d);

/*
 * Arm a timer per resource whose refresh-interval is set, instead of what
 * was armed before (at start and after every reload), and hand the drivers
 * the wake-up descriptor for their own requests (daemon/refresh.c).
 */
void extresd_refresh_schedule(struct extresd *d);

/* Add the refresher's sources: the wake-up descriptor that drivers (their
 * refresh requests) and the transport (its outcome) write to, and the
 * timer that holds requests that come too soon after the last. */
int extresd_refresh_add(struct extresd *d);

/*
 * Check our lines in every coordination file (extres_alloc_guard()): write
 * back lost ones, and report conflicts when they change (log, .meta/status,
 * systemd STATUS=); check again a second later while any last. Runs on the
 * control thread, or before it starts.
 */
void extresd_check_lines(struct extresd *d);

/* Add the guard's sources (its inotify descriptor, the recheck timer). */
int extresd_guard_add(struct extresd *d);

/* Whether a coordination file changed since we last looked, without
 * waiting for the loop (it then never wakes for our own writes): the
 * checks follow. Call after every job that may write the files. */
void extresd_guard_settle(struct extresd *d);

/*
 * Lease lines that `prev` (the last read of the holders) showed for
 * `resource` in `c` (locked), whose owners still run, and which `c` lost
 * (Flink's `sed -i "/KEY /d"` drops every share of a key): added back and
 * `c` written (daemon/keeper.c). How many, or a negative errno with `err`
 * set.
 */
int extresd_keep_leases(const struct extres_holders *prev, const char *resource,
			struct extres_coord *c, struct extres_err *err);

/*
 * Watch every coordination file we follow: those of our allocations and a
 * pool's (daemon/holders.c). Logs what cannot be watched.
 */
void extresd_watch_files(struct extresd *d);

/* Re-read the holders of every followed file now (without publishing):
 * 1 when .meta/holders changed, 0 when not, or a negative errno (the last
 * holders stay; logged once). Control thread, or before it starts. */
int extresd_holders_read(struct extresd *d);

/* From a change in a coordination file to the holders' re-read: a burst
 * of changes coalesces within this, and a render waits for it. */
#define EXTRESD_HOLDERS_DELAY_MS 50

/* Re-read the holders `delay_ms` from now, or sooner if already due. */
void extresd_holders_schedule(struct extresd *d, long long delay_ms);

/* Add the holders' sources (the re-read and the owner probe timers). */
int extresd_holders_add(struct extresd *d);

/* The live leases among the holders, for /.leases (daemon/self.h): one
 * per lease id that names its line's owner (PID-STARTTIME), its devices
 * resource by resource, each with the properties of the device the daemon
 * serves or last discovered under that key (a pool serves every device),
 * or else only the coordination key. Points into d's holders and allocations: build it,
 * use it and free it before they change. */
struct extresd_leases {
	size_t n;
	struct extres_snapshot_lease *items;
	struct extres_snapshot_resource *res;
	struct extres_info *infos;
	struct extres_property *props;
	/* Per info of a share: its properties and then `share` (I/N), and
	 * that value; NULL for others. */
	struct extres_property **share_props;
	char **share_text;
	size_t n_slots; /* of share_props and share_text */
};

/* 0 or -ENOMEM (then *l is empty). */
int extresd_leases_build(const struct extresd *d, struct extresd_leases *l);
/* Accepts an empty one. */
void extresd_leases_free(struct extresd_leases *l);

/* Free what the holders hold. */
void extresd_holders_free(struct extresd *d);

#endif
