/* SPDX-License-Identifier: MIT */
/*
 * extresctl: inspect a configuration without mounting anything.
 *
 *   extresctl [-c CONFIG] check              validate, list resources
 *   extresctl [-c CONFIG] discover [NAME]    run the drivers, list candidates
 *
 * Exit 0 on success, 1 when the config or a driver fails, 2 on usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extres_build.h"

#include "config.h"
#include "log.h"
#include "startup.h"

#define DEFAULT_CONFIG "/etc/extres/extres.yaml"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] COMMAND [ARGS]\n"
		"\n"
		"    check              load and validate CONFIG, list its resources\n"
		"    discover [NAME]    run the drivers and list every candidate info\n"
		"                       (nothing is allocated or mounted)\n"
		"\n"
		"    -c, --config=FILE  configuration (default " DEFAULT_CONFIG ")\n"
		"    -h, --help         this help\n"
		"    -V, --version      print the version\n");
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static int cmd_check(const struct extres_config *cfg)
{
	size_t i;

	printf("%s: %zu resource%s\n", cfg->path, cfg->n_resources,
	       cfg->n_resources == 1 ? "" : "s");
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *r = &cfg->resources[i];

		printf("%s: amount %llu, driver %s, coordination-file %s, "
		       "kubernetes %s, yarn %s\n",
		       r->name, (unsigned long long)r->amount, r->driver,
		       or_dash(r->coordination_file), or_dash(r->kubernetes_key),
		       or_dash(r->yarn_key));
	}
	return 0;
}

static int discover_one(const struct extres_config *cfg,
			const struct extres_resource_config *res)
{
	struct extres_infos *infos;
	struct extres_err err;
	size_t i, k;

	if (extres_discover_resource(cfg, res, &infos, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return -1;
	}
	printf("%s: driver %s, %zu candidate%s, amount %llu\n", res->name,
	       res->driver, infos->n, infos->n == 1 ? "" : "s",
	       (unsigned long long)res->amount);
	for (i = 0; i < infos->n; i++) {
		printf("  %zu:", i);
		for (k = 0; k < infos->items[i].n_props; k++)
			printf(" %s=%s", infos->items[i].props[k].key,
			       infos->items[i].props[k].value);
		printf("\n");
	}
	extres_infos_free(infos);
	return 0;
}

static int cmd_discover(const struct extres_config *cfg, const char *name)
{
	int failed = 0, found = 0;
	size_t i;

	for (i = 0; i < cfg->n_resources; i++) {
		if (name && strcmp(cfg->resources[i].name, name) != 0)
			continue;
		found = 1;
		if (discover_one(cfg, &cfg->resources[i]) < 0)
			failed = 1;
	}
	if (name && !found) {
		extres_log(EXTRES_LOG_ERR, "no resource '%s' in %s", name,
			   cfg->path);
		return 1;
	}
	return failed;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = DEFAULT_CONFIG, *cmd;
	struct extres_config *cfg = NULL;
	struct extres_err err;
	int c, status = 1;
	size_t i;

	extres_log_init("extresctl");
	while ((c = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("extresctl %s\n", EXTRES_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	if (strcmp(cmd, "check") != 0 && strcmp(cmd, "discover") != 0) {
		extres_log(EXTRES_LOG_ERR, "unknown command '%s'", cmd);
		usage(stderr);
		return 2;
	}
	if (argc - optind > (strcmp(cmd, "discover") == 0 ? 1 : 0)) {
		extres_log(EXTRES_LOG_ERR, "too many arguments for '%s'", cmd);
		return 2;
	}
	if (extres_config_load(config_path, &cfg, &err) < 0) {
		extres_log(EXTRES_LOG_ERR, "%s", err.msg);
		return 1;
	}
	for (i = 0; i < cfg->n_warnings; i++)
		extres_log(EXTRES_LOG_WARNING, "%s", cfg->warnings[i]);
	if (strcmp(cmd, "check") == 0)
		status = cmd_check(cfg);
	else
		status = cmd_discover(cfg, optind < argc ? argv[optind] : NULL);
	extres_config_free(cfg);
	return status;
}
