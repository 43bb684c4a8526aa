/* SPDX-License-Identifier: MIT */
#include "views/cdi_view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/macro.h"
#include "base/text.h"
#include "config/cdi_base.h"
#include "config/cdi_name.h"
#include "config/config.h"
#include "alloc/share.h"

/* A device's own nodes: its `device` property and those of the driver's
 * node_keys. */
#define MAX_NODES 8

/* The device nodes of one info: pointers into the info. */
struct nodes {
	const char *path[MAX_NODES];
	size_t n;
};

/* A device's edits: .meta/env's values for it (indexes may be ""), and
 * whether it names a node. */
struct edits {
	char *indexes;
	char *devices; /* NULL: the resource has no device variable */
	int has_nodes;
};

static void add_node(struct nodes *nodes, const char *path)
{
	size_t i;

	for (i = 0; i < nodes->n; i++)
		if (strcmp(nodes->path[i], path) == 0)
			return;
	nodes->path[nodes->n++] = path;
}

/* How the host says which device nodes it has. */
struct node_check {
	extres_cdi_exists_fn *exists;
	void *arg;
};

static void add_checked(struct nodes *nodes, const char *path,
			const struct node_check *chk)
{
	if (path && nodes->n < MAX_NODES && extres_is_dev_path(path) &&
	    chk->exists(path, chk->arg))
		add_node(nodes, path);
}

/*
 * The nodes info's device needs: its `device` property and those the
 * driver names (extres_driver_ops.node_keys). A value may come from a
 * config (the static driver) that names any path: it counts only when the
 * host says it is a device node there, so that no file, link or directory
 * under /dev/ reaches a container by way of a spec.
 */
static void info_nodes(const struct extres_info *info,
		       const struct extres_driver_info *driver,
		       struct nodes *nodes, const struct node_check *chk)
{
	char *const *k;

	nodes->n = 0;
	add_checked(nodes, extres_info_get(info, "device"), chk);
	for (k = driver ? driver->node_keys : NULL; k && *k; k++)
		add_checked(nodes, extres_info_get(info, *k), chk);
}

static void edits_clear(struct edits *e)
{
	free(e->indexes);
	free(e->devices);
	*e = (struct edits){ 0 };
}

/* What a resource's devices are written from, worked out once for all of
 * them: each info's nodes (a lookup on the host each), the variable's form
 * (a scan of every info), and which key values two infos share. */
struct devices {
	const struct extres_view_resource *v;
	const struct extres_driver_info *form;
	const char *indexes_var;
	const char *key;
	struct nodes *nodes; /* one per info */
	unsigned char *shared_key; /* one per info: 1 if another has it */
	/* The vendor's spec, and each info's device in it (by uuid), or
	 * NULL. */
	const struct extres_cdi_base *base;
	const struct extres_cdi_edits **base_edits; /* one per info */
};

static const char *const edit_keys[] = EXTRES_CDI_EDIT_KEYS;

/* How many items infos [first, first + count) have in the vendor's spec
 * under `key`. */
static size_t base_count(const struct devices *d, size_t first, size_t count,
			 const char *key)
{
	size_t i, n = 0;

	for (i = first; d->base && i < first + count; i++)
		n += extres_cdi_edits_count(d->base, d->base_edits[i], key);
	return n;
}

static void base_items(struct extres_json *json, const struct devices *d,
		       size_t first, size_t count, const char *key)
{
	size_t i;

	for (i = first; d->base && i < first + count; i++)
		extres_cdi_edits_write(json, d->base, d->base_edits[i], key);
}

static int edits_get(const struct devices *d, size_t first, size_t count,
		     struct edits *e)
{
	size_t i;
	int r;

	*e = (struct edits){ 0 };
	r = extres_view_env_values(d->v, d->form, first, count, &e->indexes,
				   &e->devices);
	for (i = first; r == 0 && i < first + count && !e->has_nodes; i++)
		e->has_nodes = d->nodes[i].n > 0;
	return r;
}

/* Whether info i has nothing to edit, of ours or the vendor's. */
static int edits_empty(const struct devices *d, size_t i, const struct edits *e)
{
	size_t k;

	for (k = 0; k < ARRAY_SIZE(edit_keys); k++)
		if (base_count(d, i, 1, edit_keys[k]))
			return 0;
	return !e->has_nodes && !e->indexes[0] &&
	       !(e->devices && e->devices[0]);
}

/* "VAR=value" into the env array, when value is not empty. */
static int env_entry(struct extres_json *json, const char *var,
		     const char *value)
{
	char *entry;

	if (!var || !value || !value[0])
		return 0;
	if (asprintf(&entry, "%s=%s", var, value) < 0)
		return -ENOMEM;
	extres_json_string(json, entry);
	free(entry);
	return 0;
}

static void node_list(struct extres_json *json, const char *const *paths,
		      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		extres_json_begin_object(json);
		extres_json_key(json, "path");
		extres_json_string(json, paths[i]);
		extres_json_end_object(json);
	}
}

/* A share's additions to a device's edits: its variables, and the
 * directory to mount (NULL: none). */
struct share_edits {
	char *env[EXTRES_SHARE_ENV_MAX];
	size_t n_env;
	const char *mount;
};

/* {"name": NAME, "containerEdits": {...}} for infos [first, first + count),
 * with share `s`'s additions (NULL: none). */
static int write_device(struct extres_json *json, const struct devices *d,
			const char *name, size_t first, size_t count,
			const struct edits *e, const struct share_edits *s)
{
	char *const *fixed;
	size_t i;
	int r = 0;

	extres_json_begin_object(json);
	extres_json_key(json, "name");
	extres_json_string(json, name);
	extres_json_key(json, "containerEdits");
	extres_json_begin_object(json);
	/* The vendor's edits after ours: a runtime applies them in order,
	 * and the variables that say which device must be ours. */
	if (e->indexes[0] || (e->devices && e->devices[0]) || (s && s->n_env) ||
	    base_count(d, first, count, "env")) {
		extres_json_key(json, "env");
		extres_json_begin_array(json);
		r = env_entry(json, d->indexes_var, e->indexes);
		if (r == 0)
			r = env_entry(json, extres_view_device_var(d->v),
				      e->devices);
		for (fixed = d->v->driver_info && e->devices && e->devices[0] ?
				     d->v->driver_info->env_fixed :
				     NULL;
		     r == 0 && fixed && *fixed; fixed++)
			extres_json_string(json, *fixed);
		for (i = 0; s && i < s->n_env; i++)
			extres_json_string(json, s->env[i]);
		base_items(json, d, first, count, "env");
		extres_json_end_array(json);
	}
	if (e->has_nodes || base_count(d, first, count, "deviceNodes")) {
		extres_json_key(json, "deviceNodes");
		extres_json_begin_array(json);
		for (i = first; i < first + count; i++)
			node_list(json, d->nodes[i].path, d->nodes[i].n);
		base_items(json, d, first, count, "deviceNodes");
		extres_json_end_array(json);
	}
	for (i = 2; i < ARRAY_SIZE(edit_keys); i++) {
		/* A share's directory is a mount beside the vendor's. */
		int share_mount =
			s && s->mount && strcmp(edit_keys[i], "mounts") == 0;

		if (!share_mount && !base_count(d, first, count, edit_keys[i]))
			continue;
		extres_json_key(json, edit_keys[i]);
		extres_json_begin_array(json);
		if (share_mount) {
			extres_json_begin_object(json);
			extres_json_key(json, "hostPath");
			extres_json_string(json, s->mount);
			extres_json_key(json, "containerPath");
			extres_json_string(json, s->mount);
			extres_json_key(json, "options");
			extres_json_begin_array(json);
			extres_json_string(json, "rbind");
			extres_json_end_array(json);
			extres_json_end_object(json);
		}
		base_items(json, d, first, count, edit_keys[i]);
		extres_json_end_array(json);
	}
	extres_json_end_object(json);
	extres_json_end_object(json);
	return r;
}

/* Devices "i-share-K", K in 1..replicas, for info i of a shared resource. */
static int write_shares(struct extres_json *json, const struct devices *d,
			const struct extres_resource_config *rc, size_t i,
			const struct edits *e)
{
	struct extres_allocation a = {
		.n = 1,
		.infos = (struct extres_info *)&d->v->infos[i],
	};
	struct share_edits s = { .n_env = 0 };
	char name[48];
	size_t k;
	int r = 0;

	if (rc->sharing == EXTRES_SHARING_MPS)
		s.mount = rc->mps_pipe_dir;
	a.share_n = rc->replicas;
	for (a.share_i = 1; r == 0 && a.share_i <= rc->replicas; a.share_i++) {
		r = extres_share_env(rc, &a, s.env, &s.n_env);
		if (r < 0)
			break;
		snprintf(name, sizeof(name), "%zu-share-%u", i, a.share_i);
		r = write_device(json, d, name, i, 1, e, &s);
		for (k = 0; k < s.n_env; k++)
			free(s.env[k]);
	}
	return r;
}

/* Whether info i's key value may name a second device: a CDI name that is
 * no device number, not "all", and no other info's key. */
static int key_name_ok(const struct devices *d, size_t i, const char *value)
{
	uint64_t number;
	size_t len;

	if (!value || !extres_cdi_is_device_name(value) ||
	    strcmp(value, "all") == 0 || d->shared_key[i])
		return 0;
	len = strlen(value);
	return !(extres_parse_dec(value, len, UINT64_MAX, &number) == 0 &&
		 number < d->v->n_infos && (value[0] != '0' || len == 1));
}

struct keyed {
	const char *value;
	size_t info;
};

static int by_value(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->value,
		      ((const struct keyed *)b)->value);
}

/* Keys are unique when a coordination file allocated them; a static list
 * may repeat one, and a runtime refuses a spec that names two devices
 * alike: mark the infos whose key another has. */
static int mark_shared_keys(struct devices *d)
{
	const struct extres_view_resource *v = d->v;
	struct keyed *k = calloc(v->n_infos ? v->n_infos : 1, sizeof(*k));
	size_t i, n = 0;

	if (!k)
		return -ENOMEM;
	for (i = 0; i < v->n_infos; i++) {
		k[n].value = extres_info_get(&v->infos[i], d->key);
		k[n].info = i;
		n += k[n].value != NULL;
	}
	qsort(k, n, sizeof(*k), by_value);
	for (i = 0; i + 1 < n; i++)
		if (strcmp(k[i].value, k[i + 1].value) == 0)
			d->shared_key[k[i].info] =
				d->shared_key[k[i + 1].info] = 1;
	free(k);
	return 0;
}

/* The spec's containerEdits: the nodes the driver says all its devices
 * need (extres_driver_ops.control_nodes) that the host has, when a device
 * has a node of its own. */
static int control_nodes(struct extres_json *json, const struct devices *d,
			 const struct node_check *chk)
{
	const struct extres_driver_info *info = d->v->driver_info;
	const struct extres_cdi_edits *common =
		d->base ? extres_cdi_base_common(d->base) : NULL;
	const char **paths;
	size_t i, n = 0, max = 0, k, base = 0;
	int any = 0;

	for (i = 0; i < d->v->n_infos; i++)
		any |= d->nodes[i].n > 0;
	while (any && info && info->control_nodes && info->control_nodes[max])
		max++;
	for (k = 0; k < ARRAY_SIZE(edit_keys); k++)
		base += extres_cdi_edits_count(d->base, common, edit_keys[k]);
	paths = calloc(max ? max : 1, sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (i = 0; i < max; i++)
		if (extres_is_dev_path(info->control_nodes[i]) &&
		    chk->exists(info->control_nodes[i], chk->arg))
			paths[n++] = info->control_nodes[i];
	if (n || base) {
		extres_json_key(json, "containerEdits");
		extres_json_begin_object(json);
		for (k = 0; k < ARRAY_SIZE(edit_keys); k++) {
			if (!extres_cdi_edits_count(d->base, common,
						    edit_keys[k]) &&
			    !(k == 1 && n))
				continue;
			extres_json_key(json, edit_keys[k]);
			extres_json_begin_array(json);
			if (k == 1)
				node_list(json, paths, n);
			extres_cdi_edits_write(json, d->base, common,
					       edit_keys[k]);
			extres_json_end_array(json);
		}
		extres_json_end_object(json);
	}
	free(paths);
	return 0;
}

/* Every device of `c`'s spec and the end of the "devices" array, then
 * the spec's own containerEdits; *ret_written is how many were written. */
static int write_devices(struct extres_json *json,
			 const struct extres_cdi_resource *c,
			 const char *indexes_var, const struct node_check *chk,
			 size_t *ret_written)
{
	const struct extres_view_resource *v = c->view;
	struct devices d = {
		.v = v,
		.form = extres_view_device_form(v),
		.indexes_var = indexes_var,
		.key = c->key ? c->key : "index",
	};
	char number[24];
	struct edits e;
	size_t i, n = v->n_infos ? v->n_infos : 1;
	int r = -ENOMEM, ended = 0;

	*ret_written = 0;
	d.nodes = calloc(n, sizeof(*d.nodes));
	d.shared_key = calloc(n, 1);
	d.base = c->base;
	d.base_edits = calloc(n, sizeof(*d.base_edits));
	if (!d.nodes || !d.shared_key || !d.base_edits ||
	    mark_shared_keys(&d) < 0)
		goto out;
	for (i = 0; i < v->n_infos; i++) {
		info_nodes(&v->infos[i], v->driver_info, &d.nodes[i], chk);
		d.base_edits[i] = extres_cdi_base_device(
			c->base, extres_info_uuid(&v->infos[i]));
	}
	r = 0;
	for (i = 0; i < v->n_infos && r == 0; i++) {
		const char *value = extres_info_get(&v->infos[i], d.key);

		r = edits_get(&d, i, 1, &e);
		if (r == 0 && !edits_empty(&d, i, &e)) {
			snprintf(number, sizeof(number), "%zu", i);
			r = write_device(json, &d, number, i, 1, &e, NULL);
			if (r == 0 && key_name_ok(&d, i, value))
				r = write_device(json, &d, value, i, 1, &e,
						 NULL);
			if (r == 0 && c->config && c->config->replicas > 1)
				r = write_shares(json, &d, c->config, i, &e);
			(*ret_written)++;
		}
		edits_clear(&e);
	}
	if (r < 0 || *ret_written == 0)
		goto out;
	r = edits_get(&d, 0, v->n_infos, &e);
	if (r == 0)
		r = write_device(json, &d, "all", 0, v->n_infos, &e, NULL);
	edits_clear(&e);
	extres_json_end_array(json);
	if (r == 0)
		r = control_nodes(json, &d, chk);
	ended = 1;
out:
	if (!ended)
		extres_json_end_array(json);
	free(d.base_edits);
	free(d.nodes);
	free(d.shared_key);
	return r;
}

/* The least cdiVersion that c's spec needs (upstream's specs-go
 * version.go): device names that start with a digit ("0") need 0.5.0;
 * additionalGIDs, which only a vendor's edits bring, 0.7.0. Nothing else
 * extres writes or carries needs more (mount types 0.4.0, device node
 * hostPath 0.5.0; annotations and kinds with a dot in the class, 0.6.0,
 * extres never writes). */
static const char *spec_version(const struct extres_cdi_resource *c)
{
	const struct extres_cdi_base *b = c->base;
	size_t i;

	if (!b)
		return EXTRES_CDI_VERSION;
	if (extres_cdi_edits_count(b, extres_cdi_base_common(b),
				   "additionalGIDs"))
		return EXTRES_CDI_VERSION_GIDS;
	for (i = 0; i < c->view->n_infos; i++)
		if (extres_cdi_edits_count(
			    b,
			    extres_cdi_base_device(
				    b, extres_info_uuid(&c->view->infos[i])),
			    "additionalGIDs"))
			return EXTRES_CDI_VERSION_GIDS;
	return EXTRES_CDI_VERSION;
}

/* c's spec on one line (with its "\n"), or *ret_text NULL when c has no
 * spec a runtime would take. */
static int spec_text(const struct extres_cdi_resource *c,
		     extres_cdi_exists_fn *exists, void *arg, char **ret_text)
{
	const struct node_check chk = { exists, arg };
	char *kind = NULL, *indexes_var = NULL, *text = NULL;
	struct extres_json *json = NULL;
	size_t written = 0, len;
	int r;

	*ret_text = NULL;
	if (c->kind)
		kind = strdup(c->kind);
	else if (asprintf(&kind, EXTRES_CDI_VENDOR "/%s", c->view->name) < 0)
		kind = NULL;
	if (!kind)
		return -ENOMEM;
	r = extres_env_indexes_var(c->view->name, &indexes_var);
	if (r == 0 && extres_cdi_kind_problem(kind))
		goto out;
	if (r == 0)
		r = extres_json_new(&json);
	if (r < 0)
		goto out;
	extres_json_begin_object(json);
	extres_json_key(json, "cdiVersion");
	extres_json_string(json, spec_version(c));
	extres_json_key(json, "kind");
	extres_json_string(json, kind);
	extres_json_key(json, "devices");
	extres_json_begin_array(json);
	r = write_devices(json, c, indexes_var, &chk, &written);
	extres_json_end_object(json);
	if (r == 0)
		r = extres_json_finish(json, &text, &len);
	if (r == 0 && written == 0)
		free(text);
	else if (r == 0)
		*ret_text = text;
out:
	extres_json_free(json);
	free(indexes_var);
	free(kind);
	return r;
}

/* The resource name as a JSON string, without the writer's "\n". */
static int name_text(const char *name, char **ret)
{
	struct extres_json *json;
	size_t len;
	int r;

	r = extres_json_new(&json);
	if (r < 0)
		return r;
	extres_json_string(json, name);
	r = extres_json_finish(json, ret, &len);
	extres_json_free(json);
	if (r == 0)
		(*ret)[len - 1] = '\0';
	return r;
}

int extres_view_cdi(const struct extres_cdi_resource *res, size_t n,
		    extres_cdi_exists_fn *exists, void *arg, char **ret_text,
		    size_t *ret_len)
{
	char *text = NULL, *spec, *name;
	size_t len = 0, i, members = 0;
	int r = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fputs("{\n", f);
	for (i = 0; i < n && r == 0; i++) {
		name = NULL;
		r = spec_text(&res[i], exists, arg, &spec);
		if (r < 0 || !spec)
			continue;
		r = name_text(res[i].view->name, &name);
		if (r == 0) {
			/* The spec's own "\n" ends the line: cut it. */
			fprintf(f, "%s%s: %.*s", members ? ",\n" : "", name,
				(int)(strlen(spec) - 1), spec);
			members++;
		}
		free(name);
		free(spec);
	}
	fputs(members ? "\n}\n" : "}\n", f);
	if (extres_memstream_close(f, &text) < 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		free(text);
		return r;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}
