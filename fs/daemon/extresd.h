/* SPDX-License-Identifier: MIT */
/*
 * extresd's state: one context object that main() owns, shared with the
 * control thread (reloads) and, through `fs`, with the request handlers.
 * After start-up only the control thread changes config, allocs and the
 * served tree; main() touches them again only after stopping it.
 */
#ifndef EXTRESD_H
#define EXTRESD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "daemon/control.h"
#include "os/daemonize.h"
#include "daemon/fuse_ops.h"
#include "daemon/guard.h"
#include "daemon/owner.h"
#include "daemon/transport.h"
#include "os/runlock.h"
#include "os/sentinel.h"
#include "views/holders.h"
#include "alloc/transaction.h"
#include "tree/snapshot.h"

struct extres_cdi_base;

/* Everything the daemon owns, in one place. */
struct extresd {
	/* Command line. */
	char *config_path;
	char *owner_arg;
	char *transport_arg;
	char *positional[2];
	int n_positional;
	struct fuse_cmdline_opts cmd;
	/* Running state. */
	struct extres_config *config;
	char *mountpoint;
	struct extres_allocations *allocs;
	struct extres_fs fs;
	struct fuse_session *se;
	struct extres_daemonize daemon;
	pid_t owner; /* recorded in coordination files */
	struct extres_owner_watch owner_watch;
	struct extres_control control;
	pthread_t main_thread; /* runs the session loop; woken to stop it */
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
	/* When each resource's refresh-interval next falls due (monotonic
	 * ms; 0: never); NULL until scheduled, dropped at every reload. */
	long long *refresh_due;
	/* How many of each resource's devices the last refresh missed. */
	size_t *refresh_stale;
	/* When each resource's driver was last refreshed on its own request
	 * (monotonic ms), so that a storm of requests (a device that keeps
	 * failing) costs at most one discover() per REFRESH_ASK_GAP_MS. */
	long long *refresh_asked;
	/* Our coordination-file lines: watched, kept, and the conflicts
	 * found (NULL: none; else one "resource ...: device ... is held by
	 * ..." line each), checked again at guard_due (monotonic ms, 0:
	 * not scheduled). */
	struct extres_guard guard;
	char *conflicts;
	long long guard_due;
	/* Who holds the devices of the coordination files we follow (see
	 * daemon/holders.c), as .meta/holders shows them (holders_text),
	 * re-read at holders_due (monotonic ms; 0: not scheduled), which
	 * a burst of changes sets once; owners looked at again at
	 * holders_probe_due (0: none to look at); the last read's error,
	 * logged once (NULL: none). */
	struct extres_holders holders;
	char *holders_text;
	size_t holders_len;
	long long holders_due;
	long long holders_probe_due;
	char *holders_error;
	/* When to hand freed pages back to the system (monotonic ms; 0:
	 * nothing to hand back): once reloads pause, see extresd_publish(). */
	long long trim_due;
	/* When .meta/nfd expires (seconds since the epoch; 0: not yet
	 * rendered), and when to render it again before that (monotonic
	 * ms). */
	int64_t nfd_expires;
	long long nfd_due;
	/* The lock that makes this the one daemon on its mount point; held
	 * from before any driver runs until everything is released. */
	struct extres_runlock runlock;
	/* A dead mount of ours on the mount point at start-up, until the
	 * new mount replaces it (or a failed start detaches it); the -o
	 * options, one each, for making that mount by hand; the /dev/fuse
	 * descriptor of a mount made so (libfuse's session owns it, but
	 * neither mounted it nor unmounts it), else -1. */
	int dead_mount;
	struct fuse_args mount_opts;
	int hand_fd;
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
	/* /dev/fuse or io_uring, and why. */
	struct extres_transport transport;
	/* Aborts the connection should we die without unmounting; it takes
	 * a name of its own in its copy of our argument strings. */
	struct extres_sentinel sentinel;
	char *args;
	size_t args_len;
};

/*
 * Build the tree for the current allocations and status and serve it
 * (telling the kernel what changed). 0, or a negative errno after logging.
 */
int extresd_publish(struct extresd *d);

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
void extresd_reload(void *ctx);

/*
 * Re-read the properties of the allocated devices of every resource whose
 * refresh-interval is due (the devices themselves never change here), serve
 * what changed, and return the milliseconds until the next one is due (-1:
 * none). Runs on the control thread.
 */
long long extresd_refresh(void *ctx);

/*
 * Check our lines in every coordination file (extres_alloc_guard()): write
 * back lost ones, and report conflicts when they change (log, .meta/status,
 * systemd STATUS=). Runs on the control thread, or before it starts.
 */
void extresd_check_lines(struct extresd *d);

/*
 * Lease lines that `prev` (the last read of the holders) showed for
 * `resource` in `c` (locked), whose owners still run, and which `c` lost
 * (Flink's `sed -i "/KEY /d"` drops every share of a key): added back and
 * `c` written (daemon/keeper.c). How many, or a negative errno with `err`
 * set.
 */
int extresd_keep_leases(const struct extres_holders *prev, const char *resource,
			struct extres_coord *c, struct extres_err *err);

/* The control thread's watch callback: the guard's descriptor is readable. */
void extresd_guard_event(void *ctx);

/* From the refresh callback: check again when due while conflicts last;
 * the milliseconds until the next check, or -1 for none. */
long long extresd_guard_tick(struct extresd *d);

/*
 * Watch every coordination file we follow: those of our allocations and a
 * pool's (daemon/holders.c). Logs what cannot be watched.
 */
void extresd_watch_files(struct extresd *d);

/* Re-read the holders of every followed file now (without publishing):
 * 1 when .meta/holders changed, 0 when not, or a negative errno (the last
 * holders stay; logged once). Control thread, or before it starts. */
int extresd_holders_read(struct extresd *d);

/* Re-read the holders `delay_ms` from now, or sooner if already due. */
void extresd_holders_schedule(struct extresd *d, long long delay_ms);

/* From the refresh callback: re-read and publish when due, look at the
 * owners again; the milliseconds until the next due, or -1 for none. */
long long extresd_holders_tick(struct extresd *d);

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
