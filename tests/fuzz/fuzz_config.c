/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: extres_config_load_buffer(), the whole config loader (libyaml,
 * flattening, the param trees, every key's checks) on arbitrary bytes.
 *
 * A loaded config must hold what config.h promises: listed, valid, distinct
 * names; amounts in 1..EXTRES_MAX_AMOUNT; a driver that is a module name or
 * an absolute path; absolute paths where the loader resolves them; param
 * trees shaped as driver.h describes, no deeper than the nesting limit and
 * no bigger than the input plus what aliases may add; messages that name
 * the file. A failed load leaves *ret_config untouched and explains itself.
 */
#include <errno.h>
#include <string.h>

#include "config/config.h"
#include "fuzz.h"
#include "config/param.h"
#include "config/yaml_load.h"

/* Absolute, so that nothing depends on the working directory. */
#define FUZZ_PATH "/fuzz/extres.yaml"
#define FUZZ_DIR "/fuzz"

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int is_driver_name(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* Reads every byte of `s`, so that the sanitizers see a bad string. */
static void touch(const char *s)
{
	volatile size_t len = strlen(s);

	(void)len;
}

/* What a resource's params add up to. */
struct param_size {
	size_t nodes;
	size_t value_bytes; /* of scalar values, which are copies of the input's */
};

/* `p` is a member of a MAPPING when `member`, else a sequence item or the
 * root; `depth` levels below the root. */
static void check_param(const struct extres_param *p, int member,
			unsigned depth, struct param_size *size)
{
	uint32_t i;

	size->nodes++;
	FUZZ_CHECK(depth <= EXTRES_YAML_MAX_DEPTH);
	FUZZ_CHECK(member ? p->key != NULL : p->key == NULL);
	if (p->key)
		touch(p->key);
	FUZZ_CHECK(p->line >= 1 && p->column >= 1);
	if (p->kind == EXTRES_PARAM_SCALAR) {
		FUZZ_CHECK(p->value != NULL);
		touch(p->value);
		size->value_bytes += strlen(p->value);
		FUZZ_CHECK(p->count == 0);
		return;
	}
	FUZZ_CHECK(p->kind == EXTRES_PARAM_SEQUENCE ||
		   p->kind == EXTRES_PARAM_MAPPING);
	FUZZ_CHECK(p->value == NULL);
	FUZZ_CHECK(p->count == 0 || p->items != NULL);
	for (i = 0; i < p->count; i++)
		check_param(&p->items[i], p->kind == EXTRES_PARAM_MAPPING,
			    depth + 1, size);
}

static void check_resource(const struct extres_config *c, size_t index,
			   struct param_size *size)
{
	const struct extres_resource_config *res = &c->resources[index];
	uint32_t i;
	size_t j;

	FUZZ_CHECK(res->name && extres_check_name(res->name) == 0);
	for (j = 0; j < index; j++)
		FUZZ_CHECK(strcmp(c->resources[j].name, res->name) != 0);
	FUZZ_CHECK((res->pool && res->amount.max == 0) ||
		   (res->amount.min >= 1 &&
		    res->amount.min <= res->amount.max &&
		    res->amount.max <= EXTRES_MAX_AMOUNT));
	FUZZ_CHECK(res->driver && res->driver[0]);
	FUZZ_CHECK(res->driver[0] == '/' || is_driver_name(res->driver));
	FUZZ_CHECK(res->coordination_key);
	FUZZ_CHECK(extres_check_name(res->coordination_key) == 0);
	FUZZ_CHECK(!res->coordination_file || res->coordination_file[0] == '/');
	FUZZ_CHECK(!res->kubernetes_key || res->kubernetes_key[0]);
	FUZZ_CHECK(!res->yarn_key || res->yarn_key[0]);
	FUZZ_CHECK(res->line >= 1 && res->column >= 1);

	/* The root is a MAPPING of flattened keys: no member is a mapping. */
	FUZZ_CHECK(res->params);
	FUZZ_CHECK(res->params->kind == EXTRES_PARAM_MAPPING);
	for (i = 0; i < res->params->count; i++)
		FUZZ_CHECK(res->params->items[i].kind != EXTRES_PARAM_MAPPING);
	check_param(res->params, 0, 0, size);
}

static void check_config(const struct extres_config *c, size_t input_size)
{
	struct param_size size = { 0, 0 };
	size_t i;

	FUZZ_CHECK(c->path && strcmp(c->path, FUZZ_PATH) == 0);
	FUZZ_CHECK(c->dir && strcmp(c->dir, FUZZ_DIR) == 0);
	FUZZ_CHECK(!c->mountpoint || c->mountpoint[0] == '/');
	FUZZ_CHECK(c->n_resources >= 1 &&
		   c->n_resources <= EXTRES_MAX_RESOURCES);
	FUZZ_CHECK(c->resources);
	for (i = 0; i < c->n_resources; i++)
		check_resource(c, i, &size);
	/* Aliases may not expand a small file past the loader's budget (the
	 * roots are made by the loader, not read; so may be one default
	 * script path per resource). */
	FUZZ_CHECK(size.nodes <= EXTRES_YAML_MAX_NODES + 2 * c->n_resources);
	FUZZ_CHECK(size.value_bytes <= input_size +
					       EXTRES_YAML_MAX_ALIAS_BYTES +
					       c->n_resources * 4096);
	FUZZ_CHECK(c->n_warnings == 0 || c->warnings);
	for (i = 0; i < c->n_warnings; i++)
		FUZZ_CHECK(c->warnings[i] &&
			   starts_with(c->warnings[i], FUZZ_PATH ":"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct extres_config sentinel, *config = &sentinel;
	struct extres_err err = { "" };
	int r;

	r = extres_config_load_buffer(FUZZ_PATH, (const char *)data, size,
				      &config, &err);
	if (r == 0) {
		FUZZ_CHECK(config != &sentinel);
		check_config(config, size);
		extres_config_free(config);
		return 0;
	}
	FUZZ_CHECK(r < 0);
	FUZZ_CHECK(config == &sentinel);
	FUZZ_CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
	if (r == -ENOMEM)
		FUZZ_CHECK(err.msg[0]);
	else
		FUZZ_CHECK(starts_with(err.msg, FUZZ_PATH ":"));
	return 0;
}
