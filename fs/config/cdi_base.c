/* SPDX-License-Identifier: MIT */
/* A vendor's generated CDI spec; see config/cdi_base.h. */
#include "config/cdi_base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "base/macro.h"
#include "base/text.h"
#include "config/yaml_load.h"
#include "os/trust.h"

struct base_device {
	const char *name; /* in the document */
	yaml_node_t *edits; /* a mapping, or NULL */
};

struct extres_cdi_base {
	char *path;
	yaml_document_t doc;
	yaml_node_t *common; /* a mapping, or NULL */
	size_t n_devices;
	struct base_device *devices;
};

static const char *const edit_keys[] = EXTRES_CDI_EDIT_KEYS;

/* Values CDI types as numbers (specs-go: int64, uint32, *int). */
static const char *const number_keys[] = { "major", "minor", "fileMode",
					   "uid",   "gid",   "timeout" };

static yaml_node_t *node(const struct extres_cdi_base *b, int id)
{
	return yaml_document_get_node((yaml_document_t *)&b->doc, id);
}

/* Member `key` of mapping `map`, or NULL. */
static yaml_node_t *member(const struct extres_cdi_base *b, yaml_node_t *map,
			   const char *key)
{
	yaml_node_pair_t *pair;
	yaml_node_t *k;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		k = node(b, pair->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    k->data.scalar.length == strlen(key) &&
		    memcmp(k->data.scalar.value, key, strlen(key)) == 0)
			return node(b, pair->value);
	}
	return NULL;
}

/* A scalar's text, NUL-terminated by libyaml, or NULL for a non-scalar or
 * one with a NUL inside. */
static const char *text_of(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE ||
	    strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
		return NULL;
	return (const char *)n->data.scalar.value;
}

static int fail_at(const struct extres_cdi_base *b, const yaml_node_t *n,
		   struct extres_err *err, const char *what)
{
	return extres_yaml_error(
		err, EINVAL, b->path, extres_yaml_pos(n->start_mark.line),
		extres_yaml_pos(n->start_mark.column), "%s", what);
}

/* A containerEdits value: absent, or a mapping whose carried members are
 * sequences. */
static int check_edits(const struct extres_cdi_base *b, yaml_node_t *edits,
		       struct extres_err *err)
{
	yaml_node_t *v;
	size_t i;

	if (!edits)
		return 0;
	if (edits->type != YAML_MAPPING_NODE)
		return fail_at(b, edits, err, "containerEdits is no mapping");
	for (i = 0; i < ARRAY_SIZE(edit_keys); i++) {
		v = member(b, edits, edit_keys[i]);
		if (v && v->type != YAML_SEQUENCE_NODE)
			return extres_yaml_error(
				err, EINVAL, b->path,
				extres_yaml_pos(v->start_mark.line),
				extres_yaml_pos(v->start_mark.column),
				"containerEdits.%s is no sequence",
				edit_keys[i]);
	}
	return 0;
}

static int read_spec(struct extres_cdi_base *b, struct extres_err *err)
{
	yaml_node_t *root = yaml_document_get_root_node(&b->doc), *devices, *d,
		    *name;
	yaml_node_item_t *item;
	int r;

	if (!root || root->type != YAML_MAPPING_NODE)
		return extres_err_set(err, EINVAL, "%s: not a CDI spec",
				      b->path);
	if (!text_of(member(b, root, "kind")))
		return fail_at(b, root, err, "a CDI spec needs a kind");
	devices = member(b, root, "devices");
	if (!devices || devices->type != YAML_SEQUENCE_NODE)
		return fail_at(b, devices ? devices : root, err,
			       "a CDI spec needs a devices sequence");
	b->common = member(b, root, "containerEdits");
	r = check_edits(b, b->common, err);
	b->devices = calloc((size_t)(devices->data.sequence.items.top -
				     devices->data.sequence.items.start) +
				    1,
			    sizeof(*b->devices));
	if (r == 0 && !b->devices)
		r = extres_err_set(err, ENOMEM, "out of memory");
	for (item = devices->data.sequence.items.start;
	     r == 0 && item < devices->data.sequence.items.top; item++) {
		d = node(b, *item);
		name = member(b, d, "name");
		if (!text_of(name)) {
			r = fail_at(b, d, err, "a CDI device needs a name");
			break;
		}
		b->devices[b->n_devices].name = text_of(name);
		b->devices[b->n_devices].edits = member(b, d, "containerEdits");
		r = check_edits(b, b->devices[b->n_devices].edits, err);
		b->n_devices++;
	}
	return r;
}

int extres_cdi_base_load(const char *path, struct extres_cdi_base **ret,
			 struct extres_err *err)
{
	struct extres_cdi_base *b;
	int fd = -1, r, loaded = 0;

	r = extres_check_trusted(path, "CDI spec", err);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->path = strdup(path))) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	r = extres_yaml_load_fd(path, fd, EXTRES_CDI_BASE_MAX_SIZE, &b->doc,
				err);
	if (r < 0)
		goto fail;
	loaded = 1;
	r = read_spec(b, err);
	if (r < 0)
		goto fail;
	close(fd);
	*ret = b;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	if (b && loaded)
		yaml_document_delete(&b->doc);
	if (b) {
		free(b->devices);
		free(b->path);
		free(b);
	}
	return r;
}

void extres_cdi_base_free(struct extres_cdi_base *b)
{
	if (!b)
		return;
	yaml_document_delete(&b->doc);
	free(b->devices);
	free(b->path);
	free(b);
}

const char *extres_cdi_base_path(const struct extres_cdi_base *b)
{
	return b->path;
}

const struct extres_cdi_edits *
extres_cdi_base_common(const struct extres_cdi_base *b)
{
	return (const struct extres_cdi_edits *)b->common;
}

const struct extres_cdi_edits *
extres_cdi_base_device(const struct extres_cdi_base *b, const char *name)
{
	size_t i;

	for (i = 0; b && name && i < b->n_devices; i++)
		if (strcmp(b->devices[i].name, name) == 0)
			return (const struct extres_cdi_edits *)b->devices[i]
				.edits;
	return NULL;
}

size_t extres_cdi_edits_count(const struct extres_cdi_base *b,
			      const struct extres_cdi_edits *edits,
			      const char *key)
{
	yaml_node_t *v = member(b, (yaml_node_t *)edits, key);

	return v && v->type == YAML_SEQUENCE_NODE ?
		       (size_t)(v->data.sequence.items.top -
				v->data.sequence.items.start) :
		       0;
}

static int is_number_key(const char *key)
{
	size_t i;

	for (i = 0; key && i < ARRAY_SIZE(number_keys); i++)
		if (strcmp(key, number_keys[i]) == 0)
			return 1;
	return 0;
}

/* Node n as JSON; `number` when CDI wants a number there. Depth is bounded
 * by the document's (yaml_load.h). */
static void write_node(struct extres_json *json,
		       const struct extres_cdi_base *b, yaml_node_t *n,
		       int number)
{
	yaml_node_pair_t *pair;
	yaml_node_item_t *item;
	const char *key, *text;
	uint64_t v;

	if (!n) {
		extres_json_null(json);
		return;
	}
	switch (n->type) {
	case YAML_MAPPING_NODE:
		extres_json_begin_object(json);
		for (pair = n->data.mapping.pairs.start;
		     pair < n->data.mapping.pairs.top; pair++) {
			key = text_of(node(b, pair->key));
			if (!key)
				continue;
			extres_json_key(json, key);
			write_node(json, b, node(b, pair->value),
				   is_number_key(key));
		}
		extres_json_end_object(json);
		break;
	case YAML_SEQUENCE_NODE:
		extres_json_begin_array(json);
		for (item = n->data.sequence.items.start;
		     item < n->data.sequence.items.top; item++)
			write_node(json, b, node(b, *item), number);
		extres_json_end_array(json);
		break;
	default:
		text = (const char *)n->data.scalar.value;
		if (number && extres_parse_dec(text, n->data.scalar.length,
					       UINT64_MAX, &v) == 0)
			extres_json_uint(json, v);
		else
			extres_json_string_len(json, text,
					       n->data.scalar.length);
	}
}

int extres_cdi_edits_write(struct extres_json *json,
			   const struct extres_cdi_base *b,
			   const struct extres_cdi_edits *edits,
			   const char *key)
{
	yaml_node_t *v = member(b, (yaml_node_t *)edits, key);
	yaml_node_item_t *item;

	if (!v || v->type != YAML_SEQUENCE_NODE)
		return 0;
	for (item = v->data.sequence.items.start;
	     item < v->data.sequence.items.top; item++)
		write_node(json, b, node(b, *item),
			   strcmp(key, "additionalGIDs") == 0);
	return 0;
}
