/* SPDX-License-Identifier: MIT */
/*
 * The YAML side of the config loader, private to the config layer (no other
 * layer sees libyaml's types): a libyaml document read as Flink's flat key
 * space, and YAML values turned into the extres_param trees that drivers
 * get. config.c gives the keys a meaning.
 *
 * Positions are 1-based (libyaml counts from 0). Messages name the file as
 * `struct extres_yaml.file` says.
 */
#ifndef EXTRES_YAML_DOC_H
#define EXTRES_YAML_DOC_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include <extres/driver.h>

#include "base/err.h"
#include "config/yaml_load.h"

/*
 * The dotted keys of one document, all together: a long key with many
 * keys nested under it is copied into each of theirs.
 */
#define EXTRES_YAML_MAX_KEY_BYTES (16u << 20)

/* A document from extres_yaml_load(), whose limits every walk relies on:
 * its depth and what its aliases expand to are bounded. */
struct extres_yaml {
	yaml_document_t *doc;
	const char *file; /* for messages */
	size_t key_bytes_left; /* start at EXTRES_YAML_MAX_KEY_BYTES */
};

/* One entry of the flattened document: a leaf, or a section. */
struct extres_flat {
	char *key; /* dotted, e.g. "external-resource.gpu.amount" */
	/* A scalar or a sequence; in a section, the mapping whose members
	 * follow as entries of their own. */
	yaml_node_t *value;
	uint32_t line, column; /* of the last key component */
	/* A key whose value is a mapping: no value of its own, but where a
	 * key expects one, the caller can say what it found. */
	int section;
	int superseded; /* a later entry has the same key */
};

struct extres_flat_list {
	size_t n, cap;
	struct extres_flat *items; /* in file order */
};

/* "scalar", "sequence" or "mapping", for messages. */
const char *extres_yaml_kind(const yaml_node_t *node);

/* 1 for a plain ~, null, Null, NULL or empty scalar (or one tagged !!null). */
int extres_yaml_is_null(const yaml_node_t *node);

/*
 * The text of scalar `node` in *ret_text ("" for a null), pointing into the
 * document. -EINVAL with a message if the text holds a NUL byte, which a C
 * string would silently cut.
 */
int extres_yaml_text(const struct extres_yaml *y, const yaml_node_t *node,
		     const char **ret_text, struct extres_err *err);

/*
 * Append the entries of `mapping` to `list`: nested mappings become dotted
 * keys, scalars and sequences are leaves, and a key whose value is a
 * mapping (even an empty one) is a section entry, followed by the entries
 * of that mapping. Repeated keys are all kept (the caller decides). Keys
 * must be scalars. On failure `list` may hold some entries;
 * extres_flat_list_clear() frees them.
 */
int extres_yaml_flatten(struct extres_yaml *y, yaml_node_t *mapping,
			struct extres_flat_list *list, struct extres_err *err);
void extres_flat_list_clear(struct extres_flat_list *list);

/*
 * Convert `node` into *ret (key NULL): a scalar keeps its text (null -> ""),
 * a sequence its items, a mapping its members as written (not flattened).
 * Every param's line/column is where its value starts. On failure *ret is
 * untouched and nothing is left allocated.
 */
int extres_param_from_yaml(struct extres_yaml *y, yaml_node_t *node,
			   struct extres_param *ret, struct extres_err *err);

#endif
