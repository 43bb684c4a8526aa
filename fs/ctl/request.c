/* SPDX-License-Identifier: MIT */
/*
 * extresctl request: the resource-request fields a scheduler needs so that
 * the container or node gets the devices extresd will take, from each
 * resource's kubernetes.config-key or yarn.config-key and its amount, as
 * Flink's KubernetesTaskManagerFactory and YARN resource requests use them.
 *
 * YAML goes through config/yaml_write.h and JSON through json.h, into memory
 * first, so that a failure prints nothing rather than half a document.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/yaml_write.h"
#include "ctl/ctl.h"
#include "base/json.h"
#include "base/log.h"

enum target { TARGET_NONE, TARGET_KUBERNETES, TARGET_YARN };

/* One scheduler resource name and the amount it asks for. */
struct request {
	const char *key; /* points into the config */
	uint64_t amount;
};

static void usage_request(FILE *out)
{
	fprintf(out,
		"usage: extresctl [-c CONFIG] request --kubernetes [--json]\n"
		"       extresctl [-c CONFIG] request --yarn\n"
		"\n"
		"Print the resource requests that give a container or node the\n"
		"devices of CONFIG (default " EXTRES_DEFAULT_CONFIG
		"): for each\n"
		"resource with a Kubernetes or YARN resource name, that name and\n"
		"the resource's amount. Resources without one are skipped with a\n"
		"note on stderr; resources that share a name add their amounts.\n"
		"An amount N-M or N- requests its minimum N (with a note on\n"
		"stderr): a pod or container asks for an exact count. Exit 1\n"
		"when no resource has a name for the chosen scheduler, or one\n"
		"with a name has amount 'all', which has no count to request.\n"
		"\n"
		"    --kubernetes  external-resource.<name>.kubernetes.config-key:\n"
		"                  YAML for a container spec, limits and requests\n"
		"                  alike:\n"
		"                    resources:\n"
		"                      limits:\n"
		"                        example.com/gpu: 2\n"
		"                      requests:\n"
		"                        example.com/gpu: 2\n"
		"    --json        (with --kubernetes) the same as one line of JSON:\n"
		"                  {\"resources\": {\"limits\": {...}, \"requests\": {...}}}\n"
		"    --yarn        external-resource.<name>.yarn.config-key: one\n"
		"                  line NAME=AMOUNT each, e.g. yarn.io/gpu=2\n"
		"    -h, --help    this help\n");
}

static const char *target_key(enum target t)
{
	return t == TARGET_KUBERNETES ? "kubernetes.config-key" :
					"yarn.config-key";
}

/* Visible ASCII but '=': what Kubernetes and YARN resource names are made
 * of, and what stays one field in a NAME=AMOUNT line. */
static int check_request_name(const char *name)
{
	const char *p;

	if (!*name)
		return -EINVAL;
	for (p = name; *p; p++)
		if (*p < 0x21 || *p > 0x7e || *p == '=')
			return -EINVAL;
	return 0;
}

/*
 * A scheduler asks for an exact count of devices. A range asks for its
 * minimum, the count the resource works with on any node, with a note
 * (extresd in the container then takes what the container got); `all` has
 * no count to give, so it is refused naming the resource and the form.
 */
static int check_amount(const struct extres_config *cfg,
			const struct extres_resource_config *res, enum target t)
{
	const char *who = t == TARGET_KUBERNETES ? "a pod" : "a container";
	char form[EXTRES_AMOUNT_TEXT_MAX];

	if (extres_amount_is_exact(&res->amount))
		return 0;
	extres_amount_format(&res->amount, form);
	if (extres_amount_is_all(&res->amount)) {
		extres_log(
			EXTRES_LOG_ERR,
			"%s: resource '%s': amount 'all' cannot be requested from %s: %s asks for an exact number of devices, and 'all' is whatever the node has; set external-resource.%s.amount to a number, or a range N-M to request its minimum",
			cfg->path, res->name,
			t == TARGET_KUBERNETES ? "Kubernetes" : "YARN", who,
			res->name);
		return -EINVAL;
	}
	extres_log(
		EXTRES_LOG_NOTICE,
		"note: resource '%s': amount '%s' is a range; requesting its minimum, %llu, since %s asks for an exact number of devices",
		res->name, form, (unsigned long long)res->amount.min, who);
	return 0;
}

/*
 * The requests of every resource with a name for `t`, in config order, the
 * amounts of resources sharing a name added up (the container needs both
 * sets of devices). On success *ret_reqs (free()) and *ret_n; 0 resources
 * with a name is an error. Said why on failure.
 */
static int collect(const struct extres_config *cfg, enum target t,
		   struct request **ret_reqs, size_t *ret_n)
{
	struct request *reqs;
	size_t i, k, n = 0;
	const char *key;

	reqs = calloc(cfg->n_resources + 1, sizeof(*reqs));
	if (!reqs) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < cfg->n_resources; i++) {
		const struct extres_resource_config *res = &cfg->resources[i];

		key = t == TARGET_KUBERNETES ? res->kubernetes_key :
					       res->yarn_key;
		if (!key) {
			extres_log(
				EXTRES_LOG_NOTICE,
				"note: resource '%s' skipped: external-resource.%s.%s is not set",
				res->name, res->name, target_key(t));
			continue;
		}
		/* A pool without amount asks the scheduler for nothing. */
		if (res->amount.max == 0) {
			extres_log(
				EXTRES_LOG_NOTICE,
				"note: resource '%s' skipped: a pool without external-resource.%s.amount",
				res->name, res->name);
			continue;
		}
		if (check_amount(cfg, res, t) < 0) {
			free(reqs);
			return -EINVAL;
		}
		if (check_request_name(key) < 0) {
			extres_log(
				EXTRES_LOG_ERR,
				"%s: resource '%s': %s '%s' is not a resource name (visible ASCII characters other than '=')",
				cfg->path, res->name, target_key(t), key);
			free(reqs);
			return -EINVAL;
		}
		for (k = 0; k < n && strcmp(reqs[k].key, key) != 0; k++)
			;
		if (k == n)
			reqs[n++] = (struct request){ key, 0 };
		/* At most EXTRES_MAX_RESOURCES * EXTRES_MAX_AMOUNT: no
		 * overflow. */
		reqs[k].amount += res->amount.min;
	}
	if (n == 0) {
		extres_log(
			EXTRES_LOG_ERR,
			"%s: no resource has a %s (set external-resource.<name>.%s)",
			cfg->path, target_key(t), target_key(t));
		free(reqs);
		return -ENOENT;
	}
	*ret_reqs = reqs;
	*ret_n = n;
	return 0;
}

static void print_yarn(const struct request *reqs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s=%llu\n", reqs[i].key,
		       (unsigned long long)reqs[i].amount);
}

/* ---------------------------------------------------------------------- */
/* JSON */

static void json_amounts(struct extres_json *j, const char *field,
			 const struct request *reqs, size_t n)
{
	size_t i;

	extres_json_key(j, field);
	extres_json_begin_object(j);
	for (i = 0; i < n; i++) {
		extres_json_key(j, reqs[i].key);
		extres_json_uint(j, reqs[i].amount);
	}
	extres_json_end_object(j);
}

static int print_json(const struct request *reqs, size_t n)
{
	struct extres_json *j = NULL;
	int r;

	if (extres_json_new(&j) < 0) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return -EIO;
	}
	/* Errors are sticky: extres_ctl_print_json() reports the first. */
	extres_json_begin_object(j);
	extres_json_key(j, "resources");
	extres_json_begin_object(j);
	json_amounts(j, "limits", reqs, n);
	json_amounts(j, "requests", reqs, n);
	extres_json_end_object(j);
	extres_json_end_object(j);
	r = extres_ctl_print_json(j);
	extres_json_free(j);
	return r;
}

/* ---------------------------------------------------------------------- */
/* YAML */

static void yaml_amounts(struct extres_yaml_write *w, const char *field,
			 const struct request *reqs, size_t n)
{
	char amount[24];
	size_t i;

	extres_yaml_write_string(w, field);
	extres_yaml_write_begin_mapping(w);
	for (i = 0; i < n; i++) {
		snprintf(amount, sizeof(amount), "%llu",
			 (unsigned long long)reqs[i].amount);
		/* A name such as "1" stays a string, as Kubernetes expects. */
		extres_yaml_write_string(w, reqs[i].key);
		extres_yaml_write_plain(w, amount);
	}
	extres_yaml_write_end_mapping(w);
}

/* resources: {limits: {...}, requests: {...}} in block style, without
 * document markers, so that it pastes into a container spec. */
static int print_yaml(const struct request *reqs, size_t n)
{
	struct extres_yaml_write *w;
	struct extres_err err;
	char *text;
	size_t len;
	int r;

	if (extres_yaml_write_new(&w) < 0) {
		extres_log(EXTRES_LOG_ERR, "out of memory");
		return -EIO;
	}
	/* Errors are sticky: finish reports the first. */
	extres_yaml_write_begin_mapping(w);
	extres_yaml_write_string(w, "resources");
	extres_yaml_write_begin_mapping(w);
	yaml_amounts(w, "limits", reqs, n);
	yaml_amounts(w, "requests", reqs, n);
	extres_yaml_write_end_mapping(w);
	extres_yaml_write_end_mapping(w);
	r = extres_yaml_write_finish(w, &text, &len, &err);
	extres_yaml_write_free(w);
	if (r < 0) {
		extres_log(EXTRES_LOG_ERR, "cannot write YAML: %s", err.msg);
		return -EIO;
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

/* ---------------------------------------------------------------------- */

int extres_ctl_request(const char *config_path, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "kubernetes", no_argument, NULL, CTL_OPT_KUBERNETES },
		{ "yarn", no_argument, NULL, CTL_OPT_YARN },
		{ "json", no_argument, NULL, CTL_OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum target target = TARGET_NONE, t;
	struct extres_config *cfg;
	struct request *reqs;
	int c, json = 0, r;
	size_t n;

	optind = 0;
	while ((c = extres_ctl_next_opt("request", "request", argc, argv, ":h",
					longopts)) != -1) {
		switch (c) {
		case CTL_OPT_KUBERNETES:
		case CTL_OPT_YARN:
			t = c == CTL_OPT_YARN ? TARGET_YARN : TARGET_KUBERNETES;
			if (target != TARGET_NONE && target != t)
				return extres_ctl_usage_error(
					"request",
					"request: --kubernetes and --yarn exclude each other");
			target = t;
			break;
		case CTL_OPT_JSON:
			json = 1;
			break;
		case 'h':
			usage_request(stdout);
			return 0;
		default:
			return CTL_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return extres_ctl_usage_error(
			"request", "request: unexpected argument '%s'",
			argv[optind]);
	if (target == TARGET_NONE)
		return extres_ctl_usage_error(
			"request", "request: missing --kubernetes or --yarn");
	if (json && target == TARGET_YARN)
		return extres_ctl_usage_error(
			"request",
			"request: --json goes with --kubernetes only");

	if (extres_ctl_load_config(config_path, &cfg) < 0)
		return 1;
	r = collect(cfg, target, &reqs, &n);
	if (r == 0) {
		if (target == TARGET_YARN)
			print_yarn(reqs, n);
		else
			r = json ? print_json(reqs, n) : print_yaml(reqs, n);
		free(reqs);
	}
	extres_config_free(cfg);
	return r < 0 ? 1 : 0;
}
