/* SPDX-License-Identifier: MIT */
/*
 * extresctl check and discover: validate a configuration and its drivers'
 * parameters, and run the drivers to list every candidate info, without
 * allocating or mounting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "ctl/ctl.h"
#include "config/cdi_base.h"
#include "host/instance.h"
#include "host/infos.h"
#include "views/json_view.h"
#include "lease/lease.h"
#include "base/text.h"
#include "base/log.h"
#include "alloc/transaction.h"

static void usage_check(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] check\n"
		"\n"
		"Load and validate CONFIG (default " EXTRES_DEFAULT_CONFIG
		") and print\n"
		"each resource: amount, driver, coordination file, Kubernetes and\n"
		"YARN resource names ('-' when unset). Then load each resource's\n"
		"driver and let it check its param.* keys, as extresd does at\n"
		"start-up, without discovering devices or taking any. A param that\n"
		"the configuration leaves to a default which depends on the host\n"
		"(Flink's GPU driver without discovery-script.path) is printed with\n"
		"the value used and why.\n"
		"\n"
		"Warns about a coordination file or FILE.queue that every user may\n"
		"read: anyone can then hold a lock on it and stop every allocation.\n"
		"Warnings (unknown keys) and errors name the file, line and column\n"
		"where they can. Exit 0 only when the configuration is usable: it\n"
		"loads, and every driver is found and accepts its parameters.\n"
		"\n"
		"    -h, --help   this help\n");
}

static void usage_discover(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] discover [NAME]\n"
		"       extresctl [-c CONFIG] discover --json [NAME]\n"
		"\n"
		"Run the driver of every resource in CONFIG (default\n" EXTRES_DEFAULT_CONFIG
		"), or of resource NAME only, and print\n"
		"every candidate info with its properties. Nothing is allocated,\n"
		"recorded in a coordination file or mounted. Exit 1 when a driver\n"
		"fails or there is no resource NAME.\n"
		"\n"
		"    --json       print one JSON object instead, resources in CONFIG's\n"
		"                 order, in the shape of .meta/extres.json with each\n"
		"                 resource's candidates in place of its infos:\n"
		"                   {\"resources\": {\"NAME\": {\"driver\": \"DRIVER\",\n"
		"                    \"amount\": N, \"candidates\": [{\"KEY\": \"VALUE\",\n"
		"                    ...}, ...]}, ...}}\n"
		"                 each candidate's properties in its driver's order.\n"
		"                 All or nothing: when any driver fails, its error goes\n"
		"                 to stderr and nothing to stdout. Bytes that JSON text\n"
		"                 cannot carry show as U+FFFD.\n"
		"    -h, --help   this help\n");
}

/*
 * The vendor's CDI spec that res's CDI spec builds on: named when found,
 * a warning naming the command that makes it when the driver names places
 * and none has one, and a warning with the reason when it cannot be read
 * (extresd then serves the spec without it).
 */
static void check_cdi_base(const struct extres_resource_config *res,
			   const struct extres_driver_info *info)
{
	struct extres_cdi_base *b = NULL;
	struct extres_err err;
	char *const *p, *where = NULL;
	const char *path;
	size_t len = 0;
	int missing;
	FILE *f;

	path = extres_driver_info_cdi_base(info, res->cdi_base_spec, &missing);
	if (path && extres_cdi_base_load(path, &b, &err) < 0) {
		extres_log(
			EXTRES_LOG_WARNING,
			"%s: CDI spec to build on: %s; the CDI spec of %s gives its devices' nodes and variables only",
			res->name, err.msg, res->name);
		return;
	}
	if (path) {
		printf("%s: CDI spec to build on: %s\n", res->name, path);
		extres_cdi_base_free(b);
		return;
	}
	if (!missing)
		return;
	f = open_memstream(&where, &len);
	for (p = info->cdi_base_specs; f && *p; p++)
		fprintf(f, "%s%s", p == info->cdi_base_specs ? "" : ", ", *p);
	if (!f || extres_memstream_close(f, &where) < 0) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return;
	}
	extres_log(
		EXTRES_LOG_WARNING,
		"%s: no CDI spec from its devices' vendor in %s: a container given its devices gets their nodes and variables, not the driver's libraries%s%s",
		res->name, where,
		info->cdi_base_hint ? "; make one with: " : "",
		info->cdi_base_hint ? info->cdi_base_hint : "");
	free(where);
}

/*
 * A coordination file (or its queue) that every user may open: anyone can
 * then hold a shared flock on it for as long as they like (`flock -s FILE
 * sleep 600`), and every allocation fails after lock-timeout. A warning,
 * not an error: the file works until someone does.
 */
static void warn_world_readable(const char *resource, const char *what,
				const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !(st.st_mode & S_IROTH))
		return;
	extres_log(
		EXTRES_LOG_WARNING,
		"resource '%s': %s %s is world-readable (mode %04o): any user can hold a lock on it and stop every allocation; make it 0660 (chmod o-rwx %s) and give its users a group",
		resource, what, path, (unsigned)(st.st_mode & 07777), path);
}

static void check_modes(const struct extres_resource_config *res)
{
	char *queue = NULL;

	if (!res->coordination_file)
		return;
	warn_world_readable(res->name, "coordination file",
			    res->coordination_file);
	if (extres_lease_queue_path(res->coordination_file, &queue) == 0)
		warn_world_readable(res->name, "queue", queue);
	free(queue);
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

int extres_ctl_load_config(const char *path, struct extres_config **ret)
{
	struct extres_err err;
	size_t i;

	if (extres_config_load(path, ret, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return -1;
	}
	for (i = 0; i < (*ret)->n_warnings; i++)
		extres_log(EXTRES_LOG_WARNING, "%s", (*ret)->warnings[i]);
	return 0;
}

int extres_ctl_check(const char *config_path, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct extres_driver_info **infos = NULL;
	struct extres_driver **drvs = NULL;
	struct extres_err err, *errs = NULL;
	struct extres_config *cfg;
	int c, failed = 0;
	size_t i;

	optind = 0;
	while ((c = extres_ctl_next_opt("check", "check", argc, argv, ":h",
					longopts)) != -1) {
		if (c != 'h')
			return CTL_EXIT_USAGE;
		usage_check(stdout);
		return 0;
	}
	if (optind < argc)
		return extres_ctl_usage_error("check",
					      "check: unexpected argument '%s'",
					      argv[optind]);
	if (extres_ctl_load_config(config_path, &cfg) < 0)
		return 1;

	printf("%s: %zu resource%s\n", cfg->path, cfg->n_resources,
	       cfg->n_resources == 1 ? "" : "s");
	/* Not an error by itself: a config that runs nothing is fine. */
	if (cfg->untrusted)
		printf("%s: %s: no script, module or library it names is run or loaded\n",
		       cfg->path, cfg->untrusted);
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *r = &cfg->resources[i];
		char form[EXTRES_AMOUNT_TEXT_MAX];

		if (r->pool)
			printf("%s: pool (every device, none taken), ",
			       r->name);
		else
			printf("%s: amount %s, ", r->name,
			       extres_amount_format(&r->amount, form));
		printf("driver %s, coordination-file %s, "
		       "kubernetes %s, yarn %s\n",
		       r->driver, or_dash(r->coordination_file),
		       or_dash(r->kubernetes_key), or_dash(r->yarn_key));
		check_modes(r);
	}
	/* Every driver is tried, so that one run names every mistake; each
	 * is opened first, since what it says about itself (its own
	 * coordination, its default variable) is part of the report. */
	drvs = calloc(cfg->n_resources ? cfg->n_resources : 1, sizeof(*drvs));
	errs = calloc(cfg->n_resources ? cfg->n_resources : 1, sizeof(*errs));
	infos = calloc(cfg->n_resources ? cfg->n_resources : 1, sizeof(*infos));
	if (!drvs || !errs || !infos) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		failed = 1;
		goto out;
	}
	for (i = 0; i < cfg->n_resources; i++)
		if (extres_driver_open(cfg, &cfg->resources[i], &drvs[i],
				       &errs[i]) < 0)
			drvs[i] = NULL;
		else
			infos[i] = extres_driver_get_info(drvs[i]);
	for (i = 0; i < cfg->n_resources; i++) {
		char *how = NULL;

		if (extres_alloc_describe(&cfg->resources[i], infos[i], &how) <
		    0) {
			extres_log(EXTRES_LOG_ERR, "out of memory");
			failed = 1;
			break;
		}
		printf("%s: coordination: %s\n", cfg->resources[i].name, how);
		free(how);
	}
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *res = &cfg->resources[i];

		/* Which script a default runs depends on this host: say so
		 * before the driver judges it. */
		if (res->param_default)
			printf("%s: %s\n", res->name, res->param_default);
		if (!drvs[i]) {
			extres_log(EXTRES_LOG_ERR, "%s", errs[i].msg);
			failed = 1;
		}
	}
	for (i = 0; i < cfg->n_resources; i++)
		if (infos[i] && !cfg->resources[i].pool)
			check_cdi_base(&cfg->resources[i], infos[i]);
	if (extres_driver_info_check_env(cfg, infos, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		failed = 1;
	}
out:
	for (i = 0; drvs && i < cfg->n_resources; i++)
		extres_driver_close(drvs[i]);
	free(drvs);
	free(errs);
	free(infos);
	extres_config_free(cfg);
	return failed;
}

static void print_infos(const struct extres_resource_config *res,
			const struct extres_infos *infos)
{
	char form[EXTRES_AMOUNT_TEXT_MAX];
	size_t i, k;

	printf("%s: driver %s, %zu candidate%s, amount %s\n", res->name,
	       res->driver, infos->n, infos->n == 1 ? "" : "s",
	       extres_amount_format(&res->amount, form));
	for (i = 0; i < infos->n; i++) {
		printf("  %zu:", i);
		for (k = 0; k < infos->items[i].n_props; k++)
			printf(" %s=%s", infos->items[i].props[k].key,
			       infos->items[i].props[k].value);
		printf("\n");
	}
}

/*
 * All of the selected resources' candidates in one document (the one shape
 * of views/json_view.h, with "candidates" and no "infos": nothing is taken),
 * printed only when every driver succeeded, so that a tool never reads a
 * partial answer. infos[i] is NULL for a resource not selected. 0 or -EIO
 * (said why).
 */
static int print_json(const struct extres_config *cfg,
		      struct extres_infos *const *infos)
{
	struct extres_json_resource *doc;
	size_t i, n = 0, len;
	char *text;
	int r;

	doc = calloc(cfg->n_resources + 1, sizeof(*doc));
	if (!doc) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return -EIO;
	}
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_amount *a = &cfg->resources[i].amount;

		if (!infos[i])
			continue;
		/* A range or `all` would take every candidate, were all
		 * free, up to its most. */
		doc[n++] = (struct extres_json_resource){
			.name = cfg->resources[i].name,
			.driver = cfg->resources[i].driver,
			.amount = extres_amount_is_exact(a) ? a->min :
				  infos[i]->n < a->max	    ? infos[i]->n :
							      a->max,
			.configured = a,
			.candidates = infos[i],
		};
	}
	r = extres_json_view(doc, n, &text, &len);
	free(doc);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot write JSON: %s",
			   strerror(-r));
		return -EIO;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

int extres_ctl_discover(const char *config_path, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, CTL_OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct extres_infos **infos = NULL;
	struct extres_config *cfg;
	const char *name = NULL;
	int c, json = 0, failed = 0, found = 0;
	struct extres_err err;
	size_t i;

	optind = 0;
	while ((c = extres_ctl_next_opt("discover", "discover", argc, argv,
					":h", longopts)) != -1) {
		if (c == CTL_OPT_JSON) {
			json = 1;
			continue;
		}
		if (c != 'h')
			return CTL_EXIT_USAGE;
		usage_discover(stdout);
		return 0;
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return extres_ctl_usage_error(
			"discover", "discover: unexpected argument '%s'",
			argv[optind]);
	if (extres_ctl_load_config(config_path, &cfg) < 0)
		return 1;
	infos = calloc(cfg->n_resources + 1, sizeof(*infos));
	if (!infos) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		extres_config_free(cfg);
		return 1;
	}

	/* Every selected driver runs even after one failed, so that one run
	 * names every failure. */
	for (i = 0; i < cfg->n_resources; i++) {
		if (name && strcmp(cfg->resources[i].name, name) != 0)
			continue;
		found = 1;
		if (extres_discover_resource(cfg, &cfg->resources[i], &infos[i],
					     &err) < 0) {
			extres_log(EXTRES_LOG_ERR, "%s", err.msg);
			failed = 1;
		} else if (!json) {
			print_infos(&cfg->resources[i], infos[i]);
		}
	}
	if (name && !found) {
		extres_log(EXTRES_LOG_ERR, "no resource '%s' in %s", name,
			   cfg->path);
		failed = 1;
	}
	if (json && !failed && print_json(cfg, infos) < 0)
		failed = 1;

	for (i = 0; i < cfg->n_resources; i++)
		extres_infos_free(infos[i]);
	free(infos);
	extres_config_free(cfg);
	return failed;
}
