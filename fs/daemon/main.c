/* SPDX-License-Identifier: MIT */
/*
 * extresd: mount the configured external resources as files.
 *
 * Only main() decides exit codes: 0 after a clean unmount, 1 when start-up
 * fails (everything taken is released first), 2 for usage errors.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "extres_build.h"

#include "daemon/control.h"
#include "daemon/extresd.h"
#include "daemon/fuse_log.h"
#include "daemon/fuse_ops.h"
#include "daemon/owner.h"
#include "daemon/transport.h"
#include "daemon/ready.h"
#include "base/log.h"
#include "os/fusemount.h"
#include "os/mountpoint.h"
#include "os/sdnotify.h"
#include "os/sentinel.h"
#include "os/stop.h"

/* The daemon: its jobs' state (daemon/extresd.h), and the FUSE side that
 * serves their tree, which only this file and the handlers know. */
struct extresd_main {
	struct extresd d; /* first: a pointer to it is one to this */
	struct extresd_front front;
	struct fuse_cmdline_opts cmd;
	struct fuse_session *se;
	struct extres_fs fs;
	/* The -o options, one each, for making a mount by hand; the
	 * /dev/fuse descriptor of a mount made so, else -1. */
	struct fuse_args mount_opts;
	int hand_fd;
	/* /dev/fuse or io_uring, and why. */
	struct extres_transport transport;
	/* Aborts the connection should we die without unmounting; it takes
	 * a name of its own in its copy of our argument strings. */
	struct extres_sentinel sentinel;
	char *args;
	size_t args_len;
	pthread_t main_thread; /* runs the session loop; woken to stop it */
};

/* The longest wait for coordination files' locks on the way out, all told. */
#define EXIT_LOCK_TIMEOUT_MS 250u

static const struct fuse_opt extresd_opts[] = {
	{ "-c %s", offsetof(struct extresd_main, d.config_path), 0 },
	{ "--config=%s", offsetof(struct extresd_main, d.config_path), 0 },
	{ "--owner-pid %s", offsetof(struct extresd_main, d.owner_arg), 0 },
	{ "--owner-pid=%s", offsetof(struct extresd_main, d.owner_arg), 0 },
	{ "transport=%s", offsetof(struct extresd_main, d.transport_arg), 0 },
	FUSE_OPT_END
};

static void usage(const char *prog)
{
	printf("usage: %s [-c CONFIG] [options] [MOUNTPOINT]\n"
	       "\n"
	       "Mount the external resources configured in CONFIG as files:\n"
	       "MOUNTPOINT/<resource>/<n>/<property>.\n"
	       "\n"
	       "    -c, --config=FILE      configuration (default " EXTRES_DEFAULT_CONFIG
	       ")\n"
	       "    MOUNTPOINT             default: extres.mountpoint from the\n"
	       "                           configuration, else " EXTRES_DEFAULT_MOUNTPOINT
	       "\n"
	       "    --owner-pid=PID        record PID as the devices' owner, and\n"
	       "                           unmount and exit when PID exits\n"
	       "    -f                     stay in the foreground\n"
	       "    -d                     debug: log every request (implies -f)\n"
	       "    -o OPT[,OPT...]        mount options\n"
	       "    -o transport=MODE      auto, uring or dev (see extresd(8))\n"
	       "    -h, --help             this help\n"
	       "    -V, --version          print the version\n"
	       "\n"
	       "Without -f, extresd returns once the mount is ready (exit 0) or\n"
	       "start-up failed (exit 1, reason on stderr).\n\n",
	       prog);
}

/* Positional arguments are ours: one is the mount point; two (as mount(8)
 * passes them) are the config and the mount point. */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct extresd_main *m = data;

	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	if (m->d.n_positional == 2) {
		extres_log(EXTRES_LOG_ERR, "unexpected argument '%s'", arg);
		return -1;
	}
	m->d.positional[m->d.n_positional] = strdup(arg);
	if (!m->d.positional[m->d.n_positional])
		return -1;
	m->d.n_positional++;
	return 0;
}

/* How long a start waits for a mount point whose lock another extresd holds
 * without serving it yet: long enough for a predecessor that has unmounted
 * to release its devices, short enough that a stuck one is reported soon. */
#define LOCK_WAIT_MS 2000

/* Decide the mount point: argument, then the config, then the default; the
 * latter two are created when missing, an argument must exist. Lock it
 * (into m->d.runlock, held until main() returns) before vetting it, so that of
 * daemons started at once one gets past here and the others take nothing.
 * -EINTR: asked to stop while waiting for the lock. */
static int resolve_mountpoint(struct extresd_main *m)
{
	const char *arg = m->d.n_positional ?
				  m->d.positional[m->d.n_positional - 1] :
				  NULL;
	const char *path = arg;
	struct extres_err err;
	char *dir = NULL;
	int r;

	if (!path)
		path = m->d.config->mountpoint ? m->d.config->mountpoint :
						 EXTRES_DEFAULT_MOUNTPOINT;
	r = extres_mountpoint_resolve(path, arg == NULL, &m->d.mountpoint,
				      &err);
	if (r == 0)
		r = extres_runlock_dir(geteuid(), getenv("XDG_RUNTIME_DIR"),
				       &dir, &err);
	if (r == 0)
		r = extres_mountpoint_lock(m->d.mountpoint, dir, LOCK_WAIT_MS,
					   extres_stop_pending, &m->d.runlock,
					   &err);
	if (r == 0)
		r = extres_mountpoint_prepare(m->d.mountpoint,
					      extres_stop_pending,
					      &m->d.dead_mount, &err);
	free(dir);
	if (r == -EINTR)
		extres_log(EXTRES_LOG_NOTICE, "stopped during start-up");
	else if (r < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	return r;
}

/* A start that does not mount leaves no dead mount behind: its stale
 * values would outlive it. */
static void detach_dead(struct extresd_main *m)
{
	struct extres_err err;
	int n = 0;

	if (extres_mountpoint_detach_dead(m->d.mountpoint, NULL, &n, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	else if (n)
		extres_log(EXTRES_LOG_NOTICE,
			   "detached %d dead extresd mount%s at %s", n,
			   n == 1 ? "" : "s", m->d.mountpoint);
	m->d.dead_mount = 0;
}

/* Every -o option, one by one (libfuse's own, which never reach the
 * kernel, left out), for a mount made by hand. */
static int keep_mount_opt(void *data, const char *arg, int key,
			  struct fuse_args *outargs)
{
	struct extresd_main *m = data;

	(void)outargs;
	if (key != FUSE_OPT_KEY_OPT || arg[0] == '-' ||
	    strcmp(arg, "debug") == 0)
		return 0;
	return fuse_opt_add_arg(&m->mount_opts, arg);
}

static int keep_mount_opts(struct extresd_main *m, const struct fuse_args *args)
{
	struct fuse_args copy = FUSE_ARGS_INIT(args->argc, args->argv);
	int r = fuse_opt_parse(&copy, m, NULL, keep_mount_opt);

	fuse_opt_free_args(&copy);
	return r;
}

/*
 * Mount, replacing a dead mount of ours at the mount point: made by hand
 * and put beneath it, then the dead one detached, so that readers see one
 * or the other and never the directory underneath (ENOENT). Where that
 * cannot be, the old order: detach, then mount. The test suite asks for
 * the old order with EXTRESD_TEST_NO_BENEATH=1.
 */
static int mount_session(struct extresd_main *m)
{
	struct extres_fusemount fm;
	struct extres_err err;
	char path[32];
	int r, way = EXTRES_MOUNTPOINT_ATTACHED;

	if (!m->d.dead_mount)
		return fuse_session_mount(m->se, m->d.mountpoint) ? -EIO : 0;
	r = extres_fusemount_make((const char *const *)m->mount_opts.argv,
				  (size_t)m->mount_opts.argc, &fm, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_NOTICE,
			   "%s: detaching the dead mount first", err.msg);
		detach_dead(m);
		return fuse_session_mount(m->se, m->d.mountpoint) ? -EIO : 0;
	}
	/* libfuse takes "/dev/fd/N" for a connection mounted by its caller,
	 * and from here on owns (and closes) the descriptor. */
	snprintf(path, sizeof(path), "/dev/fd/%d", fm.fuse_fd);
	if (fuse_session_mount(m->se, path) != 0) {
		close(fm.fuse_fd);
		close(fm.mnt_fd);
		return -EIO;
	}
	m->hand_fd = fm.fuse_fd;
	r = extres_mountpoint_replace(m->d.mountpoint, fm.mnt_fd,
				      !getenv("EXTRESD_TEST_NO_BENEATH"),
				      extres_stop_pending, &way, &err);
	close(fm.mnt_fd);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return r;
	}
	m->d.dead_mount = 0;
	extres_log(
		EXTRES_LOG_NOTICE, "%s%s%s",
		way == EXTRES_MOUNTPOINT_BENEATH ?
			"mounted beneath the dead extresd mount at " :
		way == EXTRES_MOUNTPOINT_AFTER_DETACH ?
			"detached the dead extresd mount at " :
			"mounted ",
		m->d.mountpoint,
		way == EXTRES_MOUNTPOINT_BENEATH ?
			", then detached it" :
		way == EXTRES_MOUNTPOINT_AFTER_DETACH ?
			", then mounted (the kernel cannot mount beneath it)" :
			" (the dead mount there went away)");
	return 0;
}

static void unmount_session(struct extresd_main *m)
{
	struct extres_err err;

	if (m->hand_fd >= 0 &&
	    extres_fusemount_unmount(m->d.mountpoint, m->hand_fd, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	fuse_session_unmount(m->se);
	extres_sentinel_release(&m->sentinel);
}

/*
 * A daemon killed while one of its own threads waited on the mount (a
 * prime's lookup, the readiness probe, an invalidation waiting for a
 * directory's lock that a lookup its dead workers never answered holds)
 * never finishes dying, and its mount hangs instead of failing, on either
 * transport (os/sentinel.h): a sentinel aborts the connection then.
 * Without one the mount still serves.
 */
static void start_sentinel(struct extresd_main *m)
{
	struct extres_err err;
	unsigned minor;
	int r;

	r = extres_mountpoint_dev(m->d.mountpoint, &minor, &err);
	if (r == 0)
		r = extres_sentinel_start(&m->sentinel, minor, m->args,
					  m->args_len, &err);
	if (r < 0)
		extres_log(
			EXTRES_LOG_WARNING,
			"no sentinel for %s (a kill -9 may leave it hanging): %s",
			m->d.mountpoint, err.msg);
}

static int setup_owner(struct extresd_main *m)
{
	struct extres_err err;
	int r;

	r = extres_owner_parse(m->d.owner_arg, &m->d.owner, &err);
	if (r == 0)
		r = extres_owner_open(&m->d.owner_watch, m->d.owner, &err);
	if (r < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	return r;
}

static int load_config(struct extresd_main *m)
{
	const char *path = m->d.config_path;
	struct extres_err err;
	size_t i;
	int r;

	if (m->d.n_positional == 2)
		path = m->d.positional[0];
	if (!path)
		path = EXTRES_DEFAULT_CONFIG;
	r = extres_config_load(path, &m->d.config, &err);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return r;
	}
	for (i = 0; i < m->d.config->n_warnings; i++)
		extres_log(EXTRES_LOG_WARNING, "%s", m->d.config->warnings[i]);
	return extres_transport_choose(&m->transport, m->d.transport_arg,
				       m->d.config->transport);
}

static int build_tree(struct extresd_main *m)
{
	struct extres_err err;
	int r;

	r = extres_allocate_all(m->d.config, m->d.owner, &m->d.allocs, &err);
	if (r < 0) {
		/* -EINTR: asked to stop while waiting; main exits 0. */
		extres_log(r == -EINTR ? EXTRES_LOG_NOTICE : EXTRES_LOG_ERR,
			   "%s", err.msg);
		return r;
	}
	/* Asked to stop while the drivers ran: hand everything back (main's
	 * cleanup releases) rather than mount. */
	if (extres_stop_pending()) {
		extres_log(EXTRES_LOG_NOTICE, "stopped during start-up");
		return -EINTR;
	}
	r = extresd_serve_first(&m->d);
	if (r == -EINTR)
		extres_log(EXTRES_LOG_NOTICE, "stopped during start-up");
	return r;
}

/* Default mount options in front of the user's, so that theirs win; the
 * policy after them, so that nothing undoes it: mount(8) always passes "rw",
 * and mount.fuse3 adds "dev,suid" unless told "nodev,nosuid". */
static int add_mount_options(struct fuse_args *args)
{
	/* default_permissions: the kernel checks our 0444/0555 modes.
	 * allow_other: every user reads, which needs root (or
	 * user_allow_other). */
	const char *defaults =
		getuid() == 0 ?
			"-odefault_permissions,allow_other,fsname=extres,subtype=extresd" :
			"-odefault_permissions,fsname=extres,subtype=extresd";

	/* ro: writes fail with EROFS in the kernel. nosuid,nodev,noexec: the
	 * tree holds values, never programs or devices. */
	if (fuse_opt_insert_arg(args, 1, defaults) < 0 ||
	    fuse_opt_add_arg(args, "-oro,nosuid,nodev,noexec") < 0)
		return -ENOMEM;
	return 0;
}

/* The control thread's SIGTERM/SIGINT: end the session loop. The loop's
 * threads wait in read() or sem_wait(); a signal to the main thread (a
 * no-op handler, so the wait fails with EINTR) makes it look again. `ctx`
 * is the struct extresd_main (or its first member). */
static void stop_session(void *ctx)
{
	struct extresd_main *m = ctx;

	extres_transport_unhold(&m->transport);
	fuse_session_exit(m->se);
	pthread_kill(m->main_thread, SIGUSR1);
}

/* What the jobs see of the FUSE side (struct extresd_front). */
static void front_swap(void *ctx, struct extres_tree *tree)
{
	struct extresd_main *m = ctx;

	extres_fs_swap(&m->fs, m->se, tree);
	/* The INIT reply waits until a status that says how requests come
	 * is served (daemon/transport.h). */
	extres_transport_settled(&m->transport);
}

static const struct extres_tree *front_current(void *ctx)
{
	const struct extresd_main *m = ctx;

	return m->fs.tree;
}

static void front_transport(void *ctx, char *buf, size_t size)
{
	struct extresd_main *m = ctx;

	extres_transport_describe(&m->transport, buf, size);
}

static int front_transport_changed(void *ctx)
{
	struct extresd_main *m = ctx;

	return extres_transport_take_changed(&m->transport);
}

static int run_session(struct extresd_main *m)
{
	struct fuse_loop_config *loop = NULL;
	struct extresd_ready rd;
	struct extres_err err;
	int r = -EIO;

	extresd_ready_init(&rd, &m->d, stop_session);
	r = mount_session(m);
	if (r < 0) {
		/* A mount beneath a dead one that cannot be detached. */
		if (m->hand_fd >= 0 && !m->d.dead_mount)
			goto out_unmount;
		extres_log(EXTRES_LOG_ERR, "cannot mount %s", m->d.mountpoint);
		r = -EIO;
		goto out;
	}
	start_sentinel(m);
	if (extres_transport_attach(&m->transport, m->se,
				    extres_source_fd(m->d.src.kick),
				    stop_session, m) < 0)
		goto out_unmount;
	r = -EIO;
	if (extresd_jobs_start(&m->d, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out_unmount;
	}
	loop = fuse_loop_cfg_create();
	if (!loop) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out_unmount;
	}
	/* A mount without pushes still works: first reads ask. */
	r = extres_fs_start_push(&m->fs, m->se, m->d.mountpoint);
	if (r < 0)
		extres_log(EXTRES_LOG_WARNING,
			   "cannot start the notifier thread: %s",
			   strerror(-r));
	r = extresd_ready_start(&rd);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot start a thread: %s",
			   strerror(-r));
		goto out_unmount;
	}
	fuse_loop_cfg_set_clone_fd(loop, m->cmd.clone_fd);
	/* libfuse 3.14 parses "unset" as UINT_MAX and warns if handed it. */
	if (m->cmd.max_threads != UINT_MAX)
		fuse_loop_cfg_set_max_threads(loop, m->cmd.max_threads);
	if (m->cmd.max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(loop, m->cmd.max_idle_threads);
	r = m->cmd.singlethread ? fuse_session_loop(m->se) :
				  fuse_session_loop_mt(m->se, loop);
	/* The loop returns the signal number when a signal ended it. */
	r = r < 0 ? r : 0;
out_unmount:
	extres_fs_stop_push(&m->fs);
	extresd_ready_loop_over(&rd);
	extres_sd_notify("STOPPING=1");
	/* The loop ends on the control thread's word (idle by then) or
	 * because the mount went away (fusermount3 -u): either way no reload
	 * can wait on the kernel for a request nobody serves. */
	extresd_jobs_stop(&m->d);
	extres_transport_stop(&m->transport);
	/* Also what makes a probe still waiting on the loop return. */
	unmount_session(m);
	fuse_loop_cfg_destroy(loop);
out:
	return extresd_ready_end(&rd, r);
}

static void wake(int sig)
{
	(void)sig;
}

/* SIGTERM, SIGINT and SIGHUP go to the control thread (blocked here); the
 * main thread keeps SIGUSR1 for being woken; nobody dies of a SIGPIPE. */
static int setup_signals(void)
{
	struct sigaction sa = { .sa_handler = wake };
	int r;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) < 0 ||
	    signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	r = extres_control_block_signals();
	return r;
}

static void cleanup(struct extresd_main *m)
{
	struct extres_err err;

	extresd_jobs_stop(&m->d);
	extres_guard_close(&m->d.guard);
	/* No runtime may hand out a device after we let it go. */
	extresd_cdi_clear(&m->d);
	extresd_cdi_bases_free(&m->d);
	free(m->d.conflicts);
	extresd_holders_free(&m->d);
	/* A stop is obeyed within a second even when another process holds
	 * a coordination file's lock forever: lines not removed then name a
	 * process that is about to be gone, which every allocator (Flink's
	 * script too) takes as free. */
	if (m->d.allocs && extres_release_all_within(
				   m->d.allocs, EXIT_LOCK_TIMEOUT_MS, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
	extres_allocations_free(m->d.allocs);
	/* The drivers' wake-up descriptor is the loop's. */
	extresd_jobs_close(&m->d);
	if (m->se)
		fuse_session_destroy(m->se);
	extres_fs_destroy(&m->fs);
	extres_config_free(m->d.config);
	free(m->d.refresh_stale);
	free(m->d.refresh_asked);
	free(m->d.mountpoint);
	free(m->d.config_path);
	free(m->d.owner_arg);
	free(m->d.transport_arg);
	free(m->d.positional[0]);
	free(m->d.positional[1]);
	free(m->cmd.mountpoint);
	fuse_opt_free_args(&m->mount_opts);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct extresd_main m = {
		.d = {
			.daemon = { .fd = -1 },
			.owner_watch = { .pidfd = -1, .stopfd = -1 },
			.guard = { .fd = -1 },
			.runlock = { .fd = -1 },
			.last_reload = "-",
		},
		.transport = { .gate = -1, .open = 1 },
		.sentinel = { .fd = -1 },
		.front = {
			.swap = front_swap,
			.current = front_current,
			.transport = front_transport,
			.transport_changed = front_transport_changed,
			.stop = stop_session,
		},
		.hand_fd = -1,
	};
	struct extres_err err;
	int i, r, status = 1;

	/* First of all, before any thread exists (all of them inherit the
	 * mask, and SIGHUP reaches only the control thread's signalfd): a
	 * SIGHUP from now on waits, pending, for the control thread, which
	 * reloads once the mount serves; before this line it would kill us
	 * (an exec'd program starts with the default action). */
	r = setup_signals();
	extres_log_init("extresd");
	/*
	 * Memory that stays flat across reloads: one arena, since nearly
	 * every allocation is the control thread's and a reload's frees in
	 * other threads' arenas would never be handed back; and a fixed
	 * mmap threshold, since glibc otherwise raises it to the size of
	 * the first large block freed (a JSON view, a tree's tables), and
	 * every later one of that size lands in the heap and pins it.
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	m.main_thread = pthread_self();
	m.front.ctx = &m;
	m.d.front = &m.front;
	/* The argument strings lie one after the other from argv[0]. */
	m.args = argv[0];
	for (i = 0; i < argc; i++)
		if (argv[i] + strlen(argv[i]) + 1 > m.args + m.args_len)
			m.args_len = (size_t)(argv[i] + strlen(argv[i]) + 1 -
					      m.args);
	if (r == 0)
		r = extres_fs_init(&m.fs, NULL);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot initialise: %s",
			   strerror(-r));
		return 1;
	}
	if (fuse_opt_parse(&args, &m, extresd_opts, opt_proc) != 0 ||
	    fuse_parse_cmdline(&args, &m.cmd) != 0) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		status = 2;
		goto out;
	}
	extresd_fuse_log_init(m.cmd.debug);
	/* Two positionals mean CONFIG MOUNTPOINT (as mount(8) passes them);
	 * with -c as well, the second one is one too many. */
	if (m.d.config_path && m.d.n_positional == 2) {
		extres_log(EXTRES_LOG_ERR, "unexpected argument '%s'",
			   m.d.positional[1]);
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		status = 2;
		goto out;
	}
	if (m.cmd.show_help) {
		usage(argv[0]);
		fuse_lowlevel_help();
		status = 0;
		goto out;
	}
	if (m.cmd.show_version) {
		printf("extresd %s\n", EXTRES_VERSION);
		fuse_lowlevel_version();
		status = 0;
		goto out;
	}
	/* The session checks the -o options: a typo is a usage error, found
	 * before any device is discovered or taken. Nothing is mounted yet. */
	if (add_mount_options(&args) < 0 || keep_mount_opts(&m, &args) != 0)
		goto out;
	m.fs.transport = &m.transport;
	m.se = fuse_session_new(&args, extres_fuse_ops(),
				sizeof(struct fuse_lowlevel_ops), &m.fs);
	if (!m.se) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		status = 2;
		goto out;
	}
	if (m.d.owner_arg && setup_owner(&m) < 0)
		goto out;
	if (load_config(&m) < 0)
		goto out;
	r = resolve_mountpoint(&m);
	if (r == -EINTR)
		status = 0;
	if (r < 0)
		goto out;
	/* The lock's flock belongs to its open file description, which the
	 * child shares: the parent's exit does not let it go. */
	if (!m.cmd.foreground) {
		r = extres_daemonize_start(&m.d.daemon);
		if (r < 0) {
			extres_log(EXTRES_LOG_ERR, "cannot fork: %s",
				   strerror(-r));
			goto out;
		}
	}
	/* From here on this is the process that stays: unless another owner
	 * was named, it owns the devices. */
	if (!m.d.owner_arg)
		m.d.owner = getpid();
	if (extres_guard_open(&m.d.guard, &err) < 0 ||
	    extresd_jobs_open(&m.d, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	r = build_tree(&m);
	if (r == -EINTR)
		status = 0;
	if (r < 0)
		goto out;
	/* A session ended because `uring` could not be had is a failed
	 * start (said when it ended), not a stop. */
	if (run_session(&m) == 0 && !m.transport.failed)
		status = 0;
out:
	if (m.d.dead_mount)
		detach_dead(&m);
	cleanup(&m);
	/* Last: the next daemon on this mount point must not start before
	 * this one has released every device. */
	extres_runlock_release(&m.d.runlock);
	extres_daemonize_finish(&m.d.daemon, 0);
	fuse_opt_free_args(&args);
	return status;
}
