/* SPDX-License-Identifier: MIT */
/*
 * extresctl run RESOURCE[=N]... -- COMMAND [ARG...]: COMMAND with a lease
 * of N devices of each RESOURCE, taken through the coordination files
 * with COMMAND's own process as their owner (lease/lease.h). This file
 * parses the arguments and puts the steps in order: fork the command's
 * process (run_child.c), discover, take (run_take.c), let it exec, wait
 * for its end, release.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "extres_build.h"

#include "base/clock.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/text.h"
#include "config/config.h"
#include "alloc/coord.h"
#include "lease/lease.h"
#include "host/instance.h"
#include "ctl/ctl.h"
#include "ctl/run.h"
#include "os/deadline.h"
#include "os/mountpoint.h"
#include "os/proc.h"
#include "os/stop.h"

/* --wait without SECONDS: as long as it takes. */
#define MAX_WAIT_MS (366ULL * 86400 * 1000)

static void usage_run(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] run [--wait[=SECONDS]] [--bind-cpus]\n"
		"                 RESOURCE[=N|=FRACTION]... -- COMMAND [ARG...]\n"
		"\n"
		"Run COMMAND with N devices (default 1) of each RESOURCE of CONFIG\n"
		"(default " EXTRES_DEFAULT_CONFIG
		"), all or nothing, taken through\n"
		"each resource's coordination file as extresd takes them. COMMAND's\n"
		"own process is recorded as the owner (KEY PID<TAB>STARTTIME<TAB>\n"
		"lease=ID), so the lease lasts exactly as long as COMMAND, even when\n"
		"extresctl is killed. COMMAND gets the variables .meta/env would\n"
		"export for its devices (EXTRES_<NAME>_INDEXES, and the resource's\n"
		"device variable, configured or its driver's) and EXTRES_LEASE=ID\n"
		"(PID-STARTTIME of COMMAND). SIGINT, SIGTERM, SIGHUP and SIGQUIT are\n"
		"passed on to COMMAND; its lines are removed when it ends.\n"
		"\n"
		"RESOURCE=FRACTION (0.25 or 1/4, as Spark's task amounts) takes one\n"
		"share of a device of a resource with replicas (extres.yaml(5)); a\n"
		"share is 1/replicas of a device and must be at least FRACTION.\n"
		"\n"
		"    --wait[=SECONDS]  when the devices are busy, wait for them, first\n"
		"                      come, first served among waiting runs (a queue\n"
		"                      in FILE.queue beside the coordination file);\n"
		"                      give up after SECONDS (decimals allowed)\n"
		"    --bind-cpus       run COMMAND on the CPUs local to its devices\n"
		"                      (their local_cpulist property); without one,\n"
		"                      say so and run unbound\n"
		"    -h, --help        this help\n"
		"\n"
		"Exit status: COMMAND's (128 + N when signal N killed it); 75 when\n"
		"the devices are busy (without --wait, or after SECONDS), with their\n"
		"holders listed; 1 when the lease cannot be taken (no coordination\n"
		"file, a driver fails); 2 for a usage error; 126/127 when COMMAND\n"
		"cannot be run. Nothing stays recorded unless COMMAND runs.\n");
}

struct run_opts {
	int wait;
	unsigned long long wait_ms; /* MAX_WAIT_MS: no limit */
	int bind_cpus;
	char **specs;
	size_t n_specs;
	char **command;
};

enum { OPT_WAIT = 270, OPT_BIND_CPUS };

static int parse_args(int argc, char *argv[], struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "wait", optional_argument, NULL, OPT_WAIT },
		{ "bind-cpus", no_argument, NULL, OPT_BIND_CPUS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, k;

	optind = 0;
	while ((c = extres_ctl_next_opt("run", "run", argc, argv, "+:h",
					longopts)) != -1) {
		switch (c) {
		case 'h':
			usage_run(stdout);
			return 0;
		case OPT_WAIT:
			o->wait = 1;
			o->wait_ms = MAX_WAIT_MS;
			if (optarg && extres_parse_ms(optarg, 0, MAX_WAIT_MS,
						      &o->wait_ms) < 0)
				return extres_ctl_usage_error(
					"run",
					"run: --wait: '%s' is not a number of seconds",
					optarg);
			break;
		case OPT_BIND_CPUS:
			o->bind_cpus = 1;
			break;
		default:
			return CTL_EXIT_USAGE;
		}
	}
	/* getopt ate a "--" that came before any RESOURCE. */
	if (optind > 1 && strcmp(argv[optind - 1], "--") == 0)
		return extres_ctl_usage_error("run",
					      "run: no RESOURCE before '--'");
	for (k = optind; k < argc && strcmp(argv[k], "--") != 0; k++)
		;
	if (k == argc)
		return extres_ctl_usage_error(
			"run", "run: missing '--' before COMMAND");
	if (k == optind)
		return extres_ctl_usage_error("run",
					      "run: no RESOURCE before '--'");
	if (k + 1 == argc)
		return extres_ctl_usage_error(
			"run", "run: missing COMMAND after '--'");
	o->specs = argv + optind;
	o->n_specs = (size_t)(k - optind);
	o->command = argv + k + 1;
	return -1;
}

/*
 * A share's fraction, as Spark writes it (0.25) or as 1/K: *ret in (0, 1),
 * or -EINVAL for anything else (then it is no fraction).
 */
static int parse_fraction(const char *text, double *ret)
{
	uint64_t k;
	char *end;
	double f;

	if (strncmp(text, "1/", 2) == 0) {
		if (extres_parse_dec(text + 2, strlen(text + 2),
				     EXTRES_COORD_MAX_SHARES, &k) < 0 ||
		    k < 2)
			return -EINVAL;
		*ret = 1.0 / (double)k;
		return 0;
	}
	if (!strchr(text, '.') || text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	f = strtod(text, &end);
	if (errno || *end || !(f > 0.0 && f < 1.0))
		return -EINVAL;
	*ret = f;
	return 0;
}

/* RESOURCE=FRACTION: one share, which must be at least the fraction. */
static int want_share(const char *spec, double f,
		      struct extres_lease_want *want)
{
	const struct extres_resource_config *r = want->res;

	if (r->replicas < 2)
		return extres_ctl_usage_error(
			"run",
			"run: '%s': resource '%s' is not shared (external-resource.%s.replicas is not set above 1); ask for whole devices",
			spec, r->name, r->name);
	/* A share is 1/replicas of a device; a little slack for 0.33. */
	if (f > 1.0 / r->replicas + 1e-3)
		return extres_ctl_usage_error(
			"run",
			"run: '%s': a share of resource '%s' is 1/%u of a device, less than %g",
			spec, r->name, r->replicas, f);
	want->n = 1;
	want->share = 1;
	return 0;
}

/* RESOURCE[=N|=FRACTION] of `cfg` into *want (its candidates not yet
 * known). */
static int parse_spec(const struct extres_config *cfg, const char *spec,
		      struct extres_lease_want *want)
{
	const char *eq = strchr(spec, '=');
	size_t len = eq ? (size_t)(eq - spec) : strlen(spec), i;
	uint64_t n = 1;
	double f = 0;

	if (eq && parse_fraction(eq + 1, &f) == 0)
		n = 1;
	else if (eq && extres_parse_dec(eq + 1, strlen(eq + 1),
					EXTRES_MAX_AMOUNT, &n) < 0)
		n = 0;
	if (n < 1)
		return extres_ctl_usage_error(
			"run",
			"run: '%s': N must be a whole number from 1 to %d, or a fraction of one device (0.25 or 1/4)",
			spec, EXTRES_MAX_AMOUNT);
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *r = &cfg->resources[i];

		if (strlen(r->name) == len &&
		    strncmp(r->name, spec, len) == 0) {
			want->res = r;
			want->n = n;
			return f > 0 ? want_share(spec, f, want) : 0;
		}
	}
	return extres_ctl_no_such_resource("run", cfg, spec, len);
}

/* Discover what `want` may take, as extresd does: its driver opened,
 * asked once, closed. A script that coordinates by itself would record
 * us, not COMMAND: such a resource cannot be leased. 0 or 1 (said). */
static int discover(const struct extres_config *cfg,
		    struct extres_lease_want *want, struct extres_infos **ret)
{
	struct extres_driver *drv = NULL;
	struct extres_err err;
	int r;

	r = extres_driver_open(cfg, want->res, &drv, &err);
	if (r == 0 && extres_driver_get_info(drv)->coord_file)
		r = extres_err_set(
			&err, EINVAL,
			"resource '%s': its discovery script records the devices it returns itself (%s), for its parent: a lease needs them recorded for COMMAND; drop the flag and set coordination-file",
			want->res->name,
			extres_driver_get_info(drv)->coord_file);
	if (r == 0)
		r = extres_driver_discover(drv, ret, &err);
	extres_driver_close(drv);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	want->candidates = *ret;
	return 0;
}

/* Check the wants against their candidates and the variables they set;
 * 0, or an exit status after saying why. */
static int check_wants(const struct extres_config *cfg,
		       const struct extres_lease_want *wants, size_t n)
{
	const struct extres_driver_info **drivers;
	struct extres_err err;
	size_t i, j;
	int r;

	r = extres_lease_check(wants, n, &err);
	if (r == -ERANGE)
		return extres_ctl_usage_error("run", "run: %s", err.msg);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	/* Two resources may not set one variable, default or not. */
	drivers = calloc(cfg->n_resources ? cfg->n_resources : 1,
			 sizeof(*drivers));
	if (!drivers) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return 1;
	}
	for (i = 0; i < cfg->n_resources; i++)
		for (j = 0; j < n; j++)
			if (wants[j].res == &cfg->resources[i])
				drivers[i] = &wants[j].candidates->driver;
	r = extres_driver_info_check_env(cfg, drivers, &err);
	free(drivers);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	return 0;
}

/* --bind-cpus: the CPUs near the lease's devices that we may use, or
 * NULL (said why) to run unbound. */
static const cpu_set_t *local_cpus(const struct extres_lease *l, cpu_set_t *set)
{
	struct extres_err err;
	cpu_set_t allowed, both;

	if (extres_lease_local_cpus(l, set, &err) < 0) {
		extres_log(EXTRES_LOG_WARNING,
			   "--bind-cpus: %s; running COMMAND unbound", err.msg);
		return NULL;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
		CPU_AND(&both, set, &allowed);
		if (CPU_COUNT(&both) == 0) {
			extres_log(
				EXTRES_LOG_WARNING,
				"--bind-cpus: none of the CPUs local to the devices is allowed to this process; running COMMAND unbound");
			return NULL;
		}
		*set = both;
	}
	return set;
}

/* How long COMMAND may wait for its lease to show under an extresd
 * mount's self/, all told (extresctl(8) says it): the daemon follows the
 * coordination files within about 50 ms, and one that does not answer
 * (SIGSTOP, a deadlock) must not hold COMMAND back longer than this. */
#define VISIBLE_WAIT_MS 2000
/* The child that looks stops a little before the deadline kills it, so
 * that a daemon that answers and does not show the lease is told apart
 * from one that does not answer. */
#define VISIBLE_LOOK_MS (VISIBLE_WAIT_MS - 100)
#define VISIBLE_POLL_NS 2000000L

/* The paths the child looks at, made before the fork: in a process that
 * may have a driver's threads, the child keeps to async-signal-safe
 * calls. */
struct visible {
	char leases[PATH_MAX];
	char lease[PATH_MAX];
	long long end_ms; /* when to stop looking: from before the fork */
};

/* In extres_deadline_run()'s child: exit 0 once the mount shows the
 * lease, or shows no leases at all (an older daemon, or a dead mount);
 * 1 when it answers without showing it until v->end_ms. Every
 * answered look is a step; the deadline ends a look that hangs. */
static int look_for_lease(void *arg, struct extres_deadline_child *c)
{
	const struct visible *v = arg;
	const struct timespec nap = { 0, VISIBLE_POLL_NS };
	struct stat st;
	int r;

	r = stat(v->leases, &st);
	extres_deadline_step(c);
	if (r < 0)
		return 0;
	while ((r = stat(v->lease, &st)) < 0 && extres_now_ms() < v->end_ms) {
		extres_deadline_step(c);
		nanosleep(&nap, NULL);
	}
	extres_deadline_done(c);
	return r < 0 ? 1 : 0;
}

/*
 * When an extresd serves the config's mount point, let COMMAND start only
 * once the mount shows its lease, so that it finds its devices under
 * self/ from its first instruction. Only a mount that /proc/self/mountinfo
 * says is extresd's is asked, and only from a child process under a
 * deadline of VISIBLE_WAIT_MS in all (os/deadline.h): a request to a hung
 * daemon blocks in the kernel where no timeout reaches, so this process
 * never makes one. A stop signal ends the wait at once; COMMAND then gets
 * it as usual.
 */
static void wait_visible(const struct extres_config *cfg, const char *id)
{
	const char *mnt =
		cfg->mountpoint ? cfg->mountpoint : EXTRES_DEFAULT_MOUNTPOINT;
	const struct extres_deadline dl = {
		.step_ms = VISIBLE_WAIT_MS,
		.total_ms = VISIBLE_WAIT_MS,
		.stop_requested = extres_stop_pending,
	};
	char *info = NULL, *fstype = NULL;
	struct visible v;
	size_t len;
	int fd, r;

	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	r = extres_read_all(fd, 16u << 20, &info, &len);
	close(fd);
	if (r < 0 || extres_mountinfo_lookup(info, mnt, &fstype) != 1 ||
	    strcmp(fstype, "fuse.extresd") != 0)
		goto out;
	if ((size_t)snprintf(v.leases, sizeof(v.leases), "%s/.leases", mnt) >=
		    sizeof(v.leases) ||
	    (size_t)snprintf(v.lease, sizeof(v.lease), "%s/.leases/%s", mnt,
			     id) >= sizeof(v.lease))
		goto out;
	v.end_ms = extres_now_ms() + VISIBLE_LOOK_MS;
	/* What is buffered would be written twice: by us and the child. */
	fflush(NULL);
	r = extres_deadline_run(&dl, look_for_lease, &v);
	if (r == -ETIMEDOUT)
		extres_log(
			EXTRES_LOG_WARNING,
			"extresd at %s is not responding (no answer within %d ms); running anyway, before self/ shows lease %s",
			mnt, VISIBLE_WAIT_MS, id);
	else if (r == 1)
		extres_log(
			EXTRES_LOG_WARNING,
			"%s/self does not show lease %s after %d ms; running anyway",
			mnt, id, VISIBLE_LOOK_MS);
	else if (r < 0 && r != -EINTR)
		extres_log(EXTRES_LOG_WARNING,
			   "cannot wait for %s/self to show lease %s: %s", mnt,
			   id, strerror(-r));
out:
	free(info);
	free(fstype);
}

/* Let the child exec with its lease; wait for its end. Its status, or
 * 126/127 when it could not run. */
static int run_leased(const struct run_opts *o, const struct extres_config *cfg,
		      const struct extres_lease_want *wants,
		      struct extres_lease *lease, struct run_child *ch,
		      int sigfd)
{
	const cpu_set_t *cpus = NULL;
	struct extres_err err;
	char **env = NULL;
	cpu_set_t set;
	int r;

	r = extres_lease_env(lease, wants, &env);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot make the environment: %s",
			   strerror(-r));
		run_child_kill(ch);
		return 1;
	}
	if (o->bind_cpus)
		cpus = local_cpus(lease, &set);
	wait_visible(cfg, lease->id);
	r = run_child_go(ch, env, cpus, &err);
	extres_lease_env_free(env);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot run %s: %s", o->command[0],
			   err.msg);
		return ch->reaped ? run_child_exit_status(ch) : 127;
	}
	r = run_child_wait(ch, sigfd);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "waiting for %s: %s", o->command[0],
			   strerror(-r));
		run_child_kill(ch);
	}
	return run_child_exit_status(ch);
}

/* Create coordination file `path` if it is missing, as a take would (the
 * same checks); 0, or -1 after saying why. */
static int make_exist(const char *resource, const char *path,
		      unsigned lock_timeout_ms, gid_t group)
{
	struct extres_coord *c = NULL;
	struct extres_err err;
	struct stat st;

	if (lstat(path, &st) == 0 || errno != ENOENT)
		return 0;
	if (extres_coord_lock(path, lock_timeout_ms, group, &c, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "resource '%s': %s", resource,
			   err.msg);
		return -1;
	}
	extres_coord_close(c);
	return 0;
}

/* Everything after the arguments: 0 or an exit status. */
static int run(const char *config_path, const struct run_opts *o)
{
	struct extres_lease_want *wants = NULL;
	struct extres_infos **infos = NULL;
	struct extres_config *cfg = NULL;
	struct extres_lease *lease = NULL;
	struct run_child ch = { .pid = -1, .go_fd = -1, .status_fd = -1 };
	struct run_take take = { 0 };
	struct extres_err err;
	char **files = NULL;
	sigset_t mask, old;
	int sigfd = -1, status = 1;
	size_t i, j;

	if (extres_ctl_load_config(config_path, &cfg) < 0)
		return 1;
	wants = calloc(o->n_specs, sizeof(*wants));
	infos = calloc(o->n_specs, sizeof(*infos));
	if (!wants || !infos) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out;
	}
	for (i = 0; i < o->n_specs; i++) {
		status = parse_spec(cfg, o->specs[i], &wants[i]);
		if (status)
			goto out;
		for (j = 0; j < i; j++)
			if (wants[j].res == wants[i].res) {
				status = extres_ctl_usage_error(
					"run",
					"run: resource '%s' is named twice",
					wants[i].res->name);
				goto out;
			}
		status = 1;
		if (!wants[i].res->coordination_file) {
			extres_log(
				EXTRES_LOG_ERR,
				"resource '%s' has no coordination-file: extresctl run takes devices only through one (set external-resource.%s.coordination-file in %s)",
				wants[i].res->name, wants[i].res->name,
				cfg->path);
			goto out;
		}
	}

	/* Signals wait in the signalfd from now on: a stop is handled in
	 * order, never in the middle of writing a file. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGCHLD);
	/* Ctrl-Z too: never stopped with a lock held (run_take.c). */
	sigaddset(&mask, SIGTSTP);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	sigaddset(&mask, SIGPIPE);
	if (sigfd < 0 || sigprocmask(SIG_BLOCK, &mask, &old) < 0) {
		extres_log(EXTRES_LOG_ERR, "signalfd: %s", strerror(errno));
		goto out;
	}
	/* The command proves its lease on each coordination file, which
	 * must exist for that before its lines are written. */
	files = calloc(o->n_specs + 1, sizeof(*files));
	if (!files) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		goto out;
	}
	for (i = 0; i < o->n_specs; i++) {
		files[i] = (char *)wants[i].res->coordination_file;
		if (make_exist(wants[i].res->name, files[i],
			       cfg->lock_timeout_ms,
			       wants[i].res->coordination_gid) < 0)
			goto out;
	}
	/* Before any driver is loaded: see run_child_spawn(). */
	if (run_child_spawn(o->command, files, &old, &ch, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		goto out;
	}
	for (i = 0; i < o->n_specs; i++)
		if (discover(cfg, &wants[i], &infos[i]))
			goto out;
	status = check_wants(cfg, wants, o->n_specs);
	if (status)
		goto out;

	take = (struct run_take){
		.wants = wants,
		.n = o->n_specs,
		.child = &ch,
		.waiter = { .pid = getpid() },
		.wait = o->wait,
		.deadline_ms = o->wait && o->wait_ms < MAX_WAIT_MS ?
				       extres_now_ms() + (long long)o->wait_ms :
				       -1,
		.lock_timeout_ms = cfg->lock_timeout_ms,
		.sigfd = sigfd,
	};
	if (extres_proc_starttime(take.waiter.pid, &take.waiter.starttime) <
		    0 ||
	    (o->wait &&
	     extres_lease_waiter_init(&take.waiter, o->n_specs) < 0)) {
		extres_log(EXTRES_LOG_ERR,
			   "cannot read our own start time, or out of memory");
		status = 1;
		goto out;
	}
	status = run_take(&take, &lease);
	/* Out of the queues now: the proofs go with their descriptors. */
	extres_lease_waiter_clear(&take.waiter);
	if (status)
		goto out;
	status = run_leased(o, cfg, wants, lease, &ch, sigfd);
	/* The lines name a process that is gone: anyone may take them
	 * already; removing them is tidiness, and quick. */
	if (extres_lease_release(lease, cfg->lock_timeout_ms, &err) < 0)
		extres_log(EXTRES_LOG_WARNING, "%s", err.msg);
out:
	/* Nothing ran: nothing may. */
	if (ch.pid > 0)
		run_child_kill(&ch);
	if (status == 1 && extres_stop_pending())
		status = 128 + SIGTERM;
	extres_lease_free(lease);
	for (i = 0; infos && i < o->n_specs; i++)
		extres_infos_free(infos[i]);
	free(infos);
	free(wants);
	free(files);
	extres_lease_waiter_clear(&take.waiter);
	if (sigfd >= 0)
		close(sigfd);
	extres_config_free(cfg);
	return status;
}

int extres_ctl_run(const char *config_path, int argc, char *argv[])
{
	struct run_opts o = { 0 };
	int r = parse_args(argc, argv, &o);

	if (r >= 0)
		return r;
	return run(config_path, &o);
}
