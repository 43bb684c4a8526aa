/* SPDX-License-Identifier: MIT */
/*
 * The Kubernetes manifests in conf/kubernetes: every document of every file
 * parses, and together they make a deployment that works. The DaemonSet runs
 * extresd in the foreground, privileged, with the host's /dev/fuse, its
 * config from the ConfigMap (a config extres_config_load_buffer() accepts),
 * and a mount point that is the host's /run/extres through a Bidirectional
 * volume without being that volume's own mount point (extresd refuses to
 * mount over a mount point). The Pod mounts the host's /run/extres with
 * HostToContainer, read-only, and asks for a resource the config names.
 *
 * No python3 or jq on CI machines: libyaml's document API does the reading.
 * Each rule is also shown to fail, on the real files with one line changed.
 */
#include <errno.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yaml.h>

#include "config/config.h"
#include "base/err.h"

#define MANIFEST_GLOB EXTRES_SOURCE_ROOT "/conf/kubernetes/*.yaml"
#define HOST_MOUNTPOINT "/run/extres"
/* Where NFD's worker reads local-source feature files on the host. */
#define NFD_FEATURES_DIR "/etc/kubernetes/node-feature-discovery/features.d"
#define DEFAULT_CONFIG "/etc/extres/extres.yaml"
/* The config the shipped DaemonSet picks on an NVIDIA node. */
#define NVIDIA_CONFIG "/etc/extres/nvidia.yaml"

struct manifest {
	char *file; /* base name, for messages */
	yaml_document_t doc;
};

struct manifests {
	size_t n_files;
	size_t n;
	struct manifest *m;
};

/* What the DaemonSet's extresd container is run with. */
struct extresd_cmd {
	int foreground;
	const char *config; /* points into `words` */
	/* Every config it may be: the values a shell variable given as the
	 * config ("$config") is assigned (config=PATH), else `config`. */
	const char *configs[4];
	size_t n_configs;
	const char *mountpoint;
	char *words[64];
	size_t n_words;
};

/* ---- reading ---- */

static void manifests_free(struct manifests *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++) {
		yaml_document_delete(&ms->m[i].doc);
		free(ms->m[i].file);
	}
	free(ms->m);
	*ms = (struct manifests){ 0 };
}

/* Append every document of `buf` to `ms`. */
static int load_buffer(struct manifests *ms, const char *name, const char *buf,
		       size_t len, struct extres_err *err)
{
	yaml_parser_t parser;
	int r = 0;

	if (!yaml_parser_initialize(&parser))
		return extres_err_set(err, ENOMEM, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		yaml_document_t doc;
		struct manifest *m;

		if (!yaml_parser_load(&parser, &doc)) {
			r = extres_err_set(err, EINVAL, "%s:%zu:%zu: %s", name,
					   parser.problem_mark.line + 1,
					   parser.problem_mark.column + 1,
					   parser.problem ? parser.problem :
							    "cannot parse");
			break;
		}
		if (!yaml_document_get_root_node(&doc)) {
			yaml_document_delete(&doc);
			break;
		}
		m = realloc(ms->m, (ms->n + 1) * sizeof(*m));
		if (m)
			ms->m = m;
		if (!m || !(ms->m[ms->n].file = strdup(name))) {
			yaml_document_delete(&doc);
			r = extres_err_set(err, ENOMEM, "%s: out of memory",
					   name);
			break;
		}
		ms->m[ms->n++].doc = doc;
	}
	yaml_parser_delete(&parser);
	return r;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* The text with its only occurrence of `from` replaced by `to`; NULL when
 * `from` occurs other than once. */
static char *replace_once(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t head, flen = strlen(from), tlen = strlen(to);
	char *out;

	if (!at || strstr(at + 1, from))
		return NULL;
	head = (size_t)(at - text);
	out = malloc(strlen(text) - flen + tlen + 1);
	if (!out)
		return NULL;
	memcpy(out, text, head);
	memcpy(out + head, to, tlen);
	strcpy(out + head + tlen, at + flen);
	return out;
}

/*
 * Load every .yaml file of conf/kubernetes into `ms`, after applying the edits
 * (pairs FROM, TO, ending with NULL): each FROM must occur exactly once in
 * all the files together.
 */
static void load_manifests(struct manifests *ms, ...)
{
	struct extres_err err = { "" };
	const char *edits[8][2];
	size_t n_edits = 0, used[8] = { 0 }, i, j;
	glob_t g;
	va_list ap;

	va_start(ap, ms);
	while (n_edits < 8 && (edits[n_edits][0] = va_arg(ap, const char *))) {
		edits[n_edits][1] = va_arg(ap, const char *);
		n_edits++;
	}
	va_end(ap);

	*ms = (struct manifests){ 0 };
	assert_int_equal(glob(MANIFEST_GLOB, 0, NULL, &g), 0);
	for (i = 0; i < g.gl_pathc; i++) {
		char *text = read_file(g.gl_pathv[i]);
		const char *base = strrchr(g.gl_pathv[i], '/') + 1;

		if (!text)
			fail_msg("cannot read %s", g.gl_pathv[i]);
		for (j = 0; j < n_edits; j++) {
			char *edited;

			if (!strstr(text, edits[j][0]))
				continue;
			edited = replace_once(text, edits[j][0], edits[j][1]);
			if (!edited)
				fail_msg("'%s' occurs more than once in %s",
					 edits[j][0], base);
			free(text);
			text = edited;
			used[j]++;
		}
		if (load_buffer(ms, base, text, strlen(text), &err) < 0)
			fail_msg("%s", err.msg);
		free(text);
	}
	ms->n_files = g.gl_pathc;
	globfree(&g);
	for (j = 0; j < n_edits; j++)
		if (used[j] != 1)
			fail_msg("edit '%s' applies to %zu files, not 1",
				 edits[j][0], used[j]);
}

/* ---- navigating ---- */

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ?
		       (const char *)n->data.scalar.value :
		       NULL;
}

static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map,
			    const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(yaml_document_get_node(doc, p->key));

		if (k && strcmp(k, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/* map_get() along a path of keys, ending with NULL. */
static yaml_node_t *get(yaml_document_t *doc, yaml_node_t *n, ...)
{
	const char *key;
	va_list ap;

	va_start(ap, n);
	while (n && (key = va_arg(ap, const char *)))
		n = map_get(doc, n, key);
	va_end(ap);
	return n;
}

static size_t seq_len(const yaml_node_t *n)
{
	return n && n->type == YAML_SEQUENCE_NODE ?
		       (size_t)(n->data.sequence.items.top -
				n->data.sequence.items.start) :
		       0;
}

static size_t map_len(const yaml_node_t *n)
{
	return n && n->type == YAML_MAPPING_NODE ?
		       (size_t)(n->data.mapping.pairs.top -
				n->data.mapping.pairs.start) :
		       0;
}

static yaml_node_t *seq_at(yaml_document_t *doc, yaml_node_t *n, size_t i)
{
	return yaml_document_get_node(doc, n->data.sequence.items.start[i]);
}

static yaml_node_t *root(struct manifest *m)
{
	return yaml_document_get_root_node(&m->doc);
}

static const char *kind_of(struct manifest *m)
{
	return scalar(get(&m->doc, root(m), "kind", NULL));
}

static const char *name_of(struct manifest *m)
{
	return scalar(get(&m->doc, root(m), "metadata", "name", NULL));
}

/* Kubernetes' default namespace when none is given. */
static const char *namespace_of(struct manifest *m)
{
	const char *ns =
		scalar(get(&m->doc, root(m), "metadata", "namespace", NULL));

	return ns ? ns : "default";
}

static struct manifest *find(struct manifests *ms, const char *kind,
			     const char *name, const char *ns)
{
	size_t i;

	for (i = 0; i < ms->n; i++) {
		struct manifest *m = &ms->m[i];

		if (!kind_of(m) || !name_of(m))
			continue;
		if (strcmp(kind_of(m), kind) == 0 &&
		    (!name || strcmp(name_of(m), name) == 0) &&
		    (!ns || strcmp(namespace_of(m), ns) == 0))
			return m;
	}
	return NULL;
}

static int str_is(const yaml_node_t *n, const char *want)
{
	const char *s = scalar(n);

	return s && strcmp(s, want) == 0;
}

/* The pod spec's volume called `name`. */
static yaml_node_t *volume_named(yaml_document_t *doc, yaml_node_t *spec,
				 const char *name)
{
	yaml_node_t *vols = get(doc, spec, "volumes", NULL);
	size_t i;

	for (i = 0; i < seq_len(vols); i++)
		if (str_is(get(doc, seq_at(doc, vols, i), "name", NULL), name))
			return seq_at(doc, vols, i);
	return NULL;
}

/* 1 when `dir` is `path` or one of its ancestors, component-wise. */
static int is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* ---- rules ---- */

static int check_document(struct manifest *m, struct extres_err *err)
{
	static const char *const kinds[] = { "ConfigMap", "DaemonSet", "Pod" };
	const char *kind = kind_of(m), *name = name_of(m);
	size_t i;

	if (!scalar(get(&m->doc, root(m), "apiVersion", NULL)) || !kind ||
	    !name || !*name)
		return extres_err_set(
			err, EINVAL,
			"%s: a document without apiVersion, kind or metadata.name",
			m->file);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return 0;
	return extres_err_set(err, EINVAL, "%s: unexpected kind %s (%s)",
			      m->file, kind, name);
}

/* A config given as a shell variable ("$config", ${config}): the paths the
 * script assigns it, each a word NAME=PATH; the first is the default. */
static void shell_configs(struct extresd_cmd *cmd)
{
	const char *v = cmd->config;
	char name[64];
	size_t len, w;

	cmd->configs[0] = cmd->config;
	cmd->n_configs = 1;
	v += *v == '"';
	if (*v != '$')
		return;
	v += 1 + (v[1] == '{');
	len = strcspn(v, "\"}");
	if (!len || len >= sizeof(name) - 1)
		return;
	memcpy(name, v, len);
	name[len] = '=';
	name[len + 1] = '\0';
	cmd->n_configs = 0;
	for (w = 0; w < cmd->n_words && cmd->n_configs < 4; w++)
		if (strncmp(cmd->words[w], name, len + 1) == 0)
			cmd->configs[cmd->n_configs++] =
				cmd->words[w] + len + 1;
	cmd->config = cmd->n_configs ? cmd->configs[0] : cmd->config;
}

/* Split the container's command and args into words, and find extresd's
 * arguments among them (also inside `sh -c 'SCRIPT'`). */
static int parse_extresd(yaml_document_t *doc, yaml_node_t *container,
			 struct extresd_cmd *cmd)
{
	static const char *const lists[] = { "command", "args" };
	size_t l, i, w;
	int seen = 0, n_pos = 0;
	const char *pos[2] = { NULL, NULL };

	*cmd = (struct extresd_cmd){ 0 };
	for (l = 0; l < 2; l++) {
		yaml_node_t *list = get(doc, container, lists[l], NULL);

		for (i = 0; i < seq_len(list); i++) {
			char *copy = strdup(scalar(seq_at(doc, list, i)) ?: "");
			char *save = NULL, *tok;

			assert_non_null(copy);
			for (tok = strtok_r(copy, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save)) {
				assert_true(cmd->n_words < 64);
				cmd->words[cmd->n_words] = strdup(tok);
				assert_non_null(cmd->words[cmd->n_words]);
				cmd->n_words++;
			}
			free(copy);
		}
	}
	for (w = 0; w < cmd->n_words; w++) {
		const char *word = cmd->words[w];
		size_t len = strlen(word);

		if (!seen) {
			seen = strcmp(word, "extresd") == 0 ||
			       (len > 8 &&
				strcmp(word + len - 8, "/extresd") == 0);
			continue;
		}
		if (strcmp(word, ";") == 0 || strcmp(word, "&&") == 0 ||
		    strcmp(word, "||") == 0)
			break;
		if (strcmp(word, "-f") == 0 || strcmp(word, "-d") == 0)
			cmd->foreground = 1;
		else if ((strcmp(word, "-c") == 0 || strcmp(word, "-o") == 0) &&
			 w + 1 < cmd->n_words) {
			if (word[1] == 'c')
				cmd->config = cmd->words[w + 1];
			w++;
		} else if (strncmp(word, "--config=", 9) == 0)
			cmd->config = word + 9;
		else if (word[0] != '-' && n_pos < 2)
			pos[n_pos++] = word;
	}
	if (n_pos == 2)
		cmd->config = pos[0];
	cmd->mountpoint = n_pos ? pos[n_pos - 1] : NULL;
	if (!cmd->config)
		cmd->config = DEFAULT_CONFIG;
	shell_configs(cmd);
	return seen;
}

static void extresd_cmd_free(struct extresd_cmd *cmd)
{
	size_t i;

	for (i = 0; i < cmd->n_words; i++)
		free(cmd->words[i]);
	cmd->n_words = 0;
}

/* The volume mount of `container` whose mountPath is `path` or, with
 * `ancestor`, the deepest one that holds `path`. */
static yaml_node_t *mount_for(yaml_document_t *doc, yaml_node_t *container,
			      const char *path, int ancestor)
{
	yaml_node_t *mounts = get(doc, container, "volumeMounts", NULL);
	yaml_node_t *best = NULL;
	size_t i, best_len = 0;

	for (i = 0; i < seq_len(mounts); i++) {
		yaml_node_t *vm = seq_at(doc, mounts, i);
		const char *mp = scalar(get(doc, vm, "mountPath", NULL));

		if (!mp)
			continue;
		if (ancestor ? is_under(path, mp) && strlen(mp) >= best_len :
			       strcmp(mp, path) == 0) {
			best = vm;
			best_len = strlen(mp);
		}
	}
	return best;
}

/* The host path behind `vm` (a hostPath volume of `spec`), or NULL. */
static const char *host_path(yaml_document_t *doc, yaml_node_t *spec,
			     yaml_node_t *vm)
{
	const char *vname = scalar(get(doc, vm, "name", NULL));
	yaml_node_t *vol = vname ? volume_named(doc, spec, vname) : NULL;

	return scalar(get(doc, vol, "hostPath", "path", NULL));
}

/* The ConfigMap key that the file `config` is, through the configMap
 * volume mounted at its directory; *ret_cm is the ConfigMap's name. */
static int config_source(yaml_document_t *doc, yaml_node_t *spec,
			 yaml_node_t *container, const char *config,
			 const char **ret_cm, const char **ret_key,
			 struct extres_err *err)
{
	const char *slash = strrchr(config, '/'), *base, *vname;
	char dir[4096];
	yaml_node_t *vm, *vol, *items;
	size_t i;

	if (!slash || slash == config ||
	    (size_t)(slash - config) >= sizeof(dir))
		return extres_err_set(
			err, EINVAL,
			"config path %s is not an absolute file path", config);
	memcpy(dir, config, (size_t)(slash - config));
	dir[slash - config] = '\0';
	base = slash + 1;
	vm = mount_for(doc, container, dir, 0);
	vname = scalar(get(doc, vm, "name", NULL));
	vol = vname ? volume_named(doc, spec, vname) : NULL;
	*ret_cm = scalar(get(doc, vol, "configMap", "name", NULL));
	if (!*ret_cm)
		return extres_err_set(
			err, EINVAL,
			"the config %s is not in a configMap volume mounted at %s",
			config, dir);
	*ret_key = base;
	items = get(doc, vol, "configMap", "items", NULL);
	for (i = 0; i < seq_len(items); i++)
		if (str_is(get(doc, seq_at(doc, items, i), "path", NULL), base))
			*ret_key = scalar(
				get(doc, seq_at(doc, items, i), "key", NULL));
	return 0;
}

/* The DaemonSet's extresd: see the top of the file. On success the config
 * it runs with, from its ConfigMap, is in *ret_config. */
/* Load the config `path` of DaemonSet `ds` from its ConfigMap key. */
static int load_config(struct manifests *ms, struct manifest *ds,
		       yaml_node_t *spec, yaml_node_t *c, const char *path,
		       struct extres_config **ret_config,
		       struct extres_err *err)
{
	const char *name = name_of(ds), *cm_name = NULL, *key = NULL, *text;
	struct manifest *cm;
	int r;

	if (config_source(&ds->doc, spec, c, path, &cm_name, &key, err) < 0)
		return extres_err_prefix(err, EINVAL, "DaemonSet %s", name);
	cm = find(ms, "ConfigMap", cm_name, namespace_of(ds));
	if (!cm)
		return extres_err_set(
			err, EINVAL,
			"DaemonSet %s: no ConfigMap %s in namespace %s", name,
			cm_name, namespace_of(ds));
	text = scalar(get(&cm->doc, root(cm), "data", key, NULL));
	if (!text)
		return extres_err_set(
			err, EINVAL,
			"ConfigMap %s: no key %s (the config of DaemonSet %s)",
			cm_name, key, name);
	r = extres_config_load_buffer(path, text, strlen(text), ret_config,
				      err);
	if (r < 0)
		return extres_err_prefix(err, -r, "ConfigMap %s: key %s",
					 cm_name, key);
	if ((*ret_config)->n_warnings) {
		r = extres_err_set(err, EINVAL, "ConfigMap %s: key %s: %s",
				   cm_name, key, (*ret_config)->warnings[0]);
		extres_config_free(*ret_config);
		*ret_config = NULL;
	}
	return r;
}

/* 1 when `c` copies the mount's .meta/nfd, seen through a hostPath
 * volume of the host's /run that mount propagation reaches, into NFD's
 * features.d through a writable hostPath volume. */
static int copies_nfd(yaml_document_t *doc, yaml_node_t *spec, yaml_node_t *c)
{
	yaml_node_t *mounts = get(doc, c, "volumeMounts", NULL);
	yaml_node_t *cmd = get(doc, c, "command", NULL);
	const char *script = scalar(seq_at(doc, cmd, seq_len(cmd) - 1));
	int from = 0, to = 0;
	char want[4096];
	size_t i;

	for (i = 0; script && i < seq_len(mounts); i++) {
		yaml_node_t *vm = seq_at(doc, mounts, i);
		const char *hp = host_path(doc, spec, vm);
		const char *mp = scalar(get(doc, vm, "mountPath", NULL));
		const char *prop =
			scalar(get(doc, vm, "mountPropagation", NULL));

		if (!hp || !mp)
			continue;
		if (strcmp(hp, NFD_FEATURES_DIR) == 0 &&
		    !str_is(get(doc, vm, "readOnly", NULL), "true"))
			to = strstr(script, mp) != NULL;
		snprintf(want, sizeof(want), "%s/extres/.meta/nfd", mp);
		if (strcmp(hp, "/run") == 0 && prop &&
		    (strcmp(prop, "HostToContainer") == 0 ||
		     strcmp(prop, "Bidirectional") == 0))
			from = from || strstr(script, want) != NULL;
	}
	return from && to;
}

static int check_daemonset(struct manifests *ms, struct manifest *ds,
			   struct extres_config **ret_config,
			   struct extres_err *err)
{
	yaml_document_t *doc = &ds->doc;
	yaml_node_t *spec =
		get(doc, root(ds), "spec", "template", "spec", NULL);
	yaml_node_t *containers = get(doc, spec, "containers", NULL);
	yaml_node_t *labels = get(doc, root(ds), "spec", "template", "metadata",
				  "labels", NULL);
	yaml_node_t *match =
		get(doc, root(ds), "spec", "selector", "matchLabels", NULL);
	yaml_node_t *c = NULL, *vm;
	struct extresd_cmd cmd = { 0 };
	const char *name = name_of(ds), *cname, *hp, *prop;
	char host[4096];
	size_t i;
	int r;

	if (!map_len(match))
		return extres_err_set(
			err, EINVAL,
			"DaemonSet %s: no spec.selector.matchLabels", name);
	for (i = 0; i < map_len(match); i++) {
		yaml_node_pair_t *p = &match->data.mapping.pairs.start[i];
		const char *k = scalar(yaml_document_get_node(doc, p->key));
		const char *v = scalar(yaml_document_get_node(doc, p->value));

		if (!k || !v || !str_is(map_get(doc, labels, k), v))
			return extres_err_set(
				err, EINVAL,
				"DaemonSet %s: the pod template lacks the selector's label %s: %s",
				name, k ? k : "?", v ? v : "?");
	}
	for (i = 0; i < seq_len(containers); i++) {
		if (parse_extresd(doc, seq_at(doc, containers, i), &cmd)) {
			c = seq_at(doc, containers, i);
			break;
		}
		extresd_cmd_free(&cmd);
	}
	if (!c)
		return extres_err_set(err, EINVAL,
				      "DaemonSet %s: no container runs extresd",
				      name);
	cname = scalar(get(doc, c, "name", NULL)) ?: "?";
	r = -EINVAL;
	if (!cmd.foreground) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: container %s runs extresd without -f: it would go to the background and the container would end",
			name, cname);
		goto out;
	}
	if (!cmd.mountpoint) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: container %s runs extresd without a MOUNTPOINT",
			name, cname);
		goto out;
	}
	if (!str_is(get(doc, c, "securityContext", "privileged", NULL),
		    "true")) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: container %s is not privileged: mounting and Bidirectional propagation need privileged: true",
			name, cname);
		goto out;
	}
	vm = mount_for(doc, c, "/dev/fuse", 0);
	hp = vm ? host_path(doc, spec, vm) : NULL;
	if (!hp || strcmp(hp, "/dev/fuse") != 0) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: container %s: /dev/fuse is not the host's /dev/fuse",
			name, cname);
		goto out;
	}

	/* The mount point, as the host sees it. */
	vm = mount_for(doc, c, cmd.mountpoint, 1);
	hp = vm ? host_path(doc, spec, vm) : NULL;
	if (!hp) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: extresd's mount point %s is in no hostPath volume: the host would not see the mount",
			name, cmd.mountpoint);
		goto out;
	}
	snprintf(host, sizeof(host), "%s%s", strcmp(hp, "/") == 0 ? "" : hp,
		 cmd.mountpoint +
			 strlen(scalar(get(doc, vm, "mountPath", NULL))));
	if (strcmp(host, HOST_MOUNTPOINT) != 0) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: extresd's mount point %s is the host's %s, not " HOST_MOUNTPOINT,
			name, cmd.mountpoint, host);
		goto out;
	}
	if (strcmp(scalar(get(doc, vm, "mountPath", NULL)), cmd.mountpoint) ==
	    0) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: extresd's mount point %s is the mount point of volume %s: extresd refuses to mount over a mount point; mount a parent directory of " HOST_MOUNTPOINT,
			name, cmd.mountpoint,
			scalar(get(doc, vm, "name", NULL)));
		goto out;
	}
	prop = scalar(get(doc, vm, "mountPropagation", NULL));
	if (!prop || strcmp(prop, "Bidirectional") != 0) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: volume %s (mounted at %s) has mountPropagation %s, not Bidirectional: the mount would not reach the host",
			name, scalar(get(doc, vm, "name", NULL)),
			scalar(get(doc, vm, "mountPath", NULL)),
			prop ? prop : "None");
		goto out;
	}

	for (i = 0; i < seq_len(containers); i++)
		if (copies_nfd(doc, spec, seq_at(doc, containers, i)))
			break;
	if (i == seq_len(containers)) {
		extres_err_set(
			err, EINVAL,
			"DaemonSet %s: no container copies " HOST_MOUNTPOINT
			"/.meta/nfd into NFD's " NFD_FEATURES_DIR,
			name);
		goto out;
	}

	/* The config: a key of a ConfigMap in the same namespace, each the
	 * script may choose; the first is returned. */
	r = 0;
	for (i = 0; i < cmd.n_configs && r == 0; i++) {
		struct extres_config *config = NULL;

		r = load_config(ms, ds, spec, c, cmd.configs[i], &config, err);
		if (r == 0 && i == 0)
			*ret_config = config;
		else
			extres_config_free(config);
	}
	if (r < 0 && *ret_config) {
		extres_config_free(*ret_config);
		*ret_config = NULL;
	}
out:
	extresd_cmd_free(&cmd);
	return r;
}

/* 1 when `key` is some resource's kubernetes.config-key in `config`. */
static int served(const struct extres_config *config, const char *key)
{
	size_t i;

	for (i = 0; i < config->n_resources; i++)
		if (config->resources[i].kubernetes_key &&
		    strcmp(config->resources[i].kubernetes_key, key) == 0)
			return 1;
	return 0;
}

/* A workload: HostToContainer, read-only, and a resource extres serves. */
static int check_pod(struct manifest *pod, const struct extres_config *config,
		     struct extres_err *err)
{
	yaml_document_t *doc = &pod->doc;
	yaml_node_t *spec = get(doc, root(pod), "spec", NULL);
	yaml_node_t *containers = get(doc, spec, "containers", NULL);
	const char *name = name_of(pod);
	size_t i, j, found = 0;

	for (i = 0; i < seq_len(containers); i++) {
		yaml_node_t *c = seq_at(doc, containers, i);
		yaml_node_t *mounts = get(doc, c, "volumeMounts", NULL);
		yaml_node_t *limits = get(doc, c, "resources", "limits", NULL);
		const char *cname = scalar(get(doc, c, "name", NULL)) ?: "?";
		size_t mine = 0;
		int asks = 0;

		for (j = 0; j < seq_len(mounts); j++) {
			yaml_node_t *vm = seq_at(doc, mounts, j);
			const char *hp = host_path(doc, spec, vm);
			const char *prop =
				scalar(get(doc, vm, "mountPropagation", NULL));

			if (!hp || strcmp(hp, HOST_MOUNTPOINT) != 0)
				continue;
			mine++;
			if (!prop || strcmp(prop, "HostToContainer") != 0)
				return extres_err_set(
					err, EINVAL,
					"Pod %s: container %s mounts the host's " HOST_MOUNTPOINT
					" with mountPropagation %s, not HostToContainer: a mount made after the pod started would not show",
					name, cname, prop ? prop : "None");
			if (!str_is(get(doc, vm, "readOnly", NULL), "true"))
				return extres_err_set(
					err, EINVAL,
					"Pod %s: container %s mounts the host's " HOST_MOUNTPOINT
					" without readOnly: true",
					name, cname);
		}
		for (j = 0; j < map_len(limits); j++) {
			yaml_node_pair_t *p =
				&limits->data.mapping.pairs.start[j];
			const char *k =
				scalar(yaml_document_get_node(doc, p->key));
			const char *v =
				scalar(yaml_document_get_node(doc, p->value));

			if (!k || !served(config, k))
				continue;
			asks = 1;
			/* Extended resources: requests must equal limits. */
			if (!v || !str_is(get(doc, c, "resources", "requests",
					      k, NULL),
					  v))
				return extres_err_set(
					err, EINVAL,
					"Pod %s: container %s requests %s other than its limit %s",
					name, cname, k, v ? v : "?");
		}
		found += mine;
		if (mine && !asks)
			return extres_err_set(
				err, EINVAL,
				"Pod %s: container %s asks for no resource the config names (kubernetes.config-key)",
				name, cname);
	}
	if (!found)
		return extres_err_set(
			err, EINVAL,
			"Pod %s: no container mounts the host's " HOST_MOUNTPOINT,
			name);
	return 0;
}

/* Every rule, over every document. */
static int check_all(struct manifests *ms, struct extres_err *err)
{
	struct extres_config *config = NULL;
	struct manifest *ds;
	size_t i;
	int r = 0;

	for (i = 0; i < ms->n && r == 0; i++)
		r = check_document(&ms->m[i], err);
	if (r < 0)
		return r;
	ds = find(ms, "DaemonSet", NULL, NULL);
	if (!ds)
		return extres_err_set(err, EINVAL, "no DaemonSet");
	r = check_daemonset(ms, ds, &config, err);
	if (r < 0)
		return r;
	for (i = 0; i < ms->n && r == 0; i++)
		if (strcmp(kind_of(&ms->m[i]), "Pod") == 0)
			r = check_pod(&ms->m[i], config, err);
	if (r == 0 && !find(ms, "Pod", NULL, NULL))
		r = extres_err_set(err, EINVAL, "no Pod: no example workload");
	extres_config_free(config);
	return r;
}

/* ---- tests ---- */

/* check_all() on the manifests with the edits (FROM, TO pairs, then NULL)
 * fails with exactly `want`. */
#define expect_rejected(want, ...)                                 \
	do {                                                       \
		struct manifests ms_;                              \
		struct extres_err err_ = { "" };                   \
		load_manifests(&ms_, __VA_ARGS__, NULL);           \
		assert_int_equal(check_all(&ms_, &err_), -EINVAL); \
		assert_string_equal(err_.msg, (want));             \
		manifests_free(&ms_);                              \
	} while (0)

static void test_files_and_kinds(void **state)
{
	struct manifests ms;
	size_t i, n[3] = { 0, 0, 0 };
	static const char *const kinds[] = { "ConfigMap", "DaemonSet", "Pod" };

	(void)state;
	load_manifests(&ms, NULL);
	assert_int_equal(ms.n_files, 3);
	for (i = 0; i < ms.n; i++) {
		struct extres_err err = { "" };
		size_t k;

		if (check_document(&ms.m[i], &err) < 0)
			fail_msg("%s", err.msg);
		for (k = 0; k < 3; k++)
			n[k] += strcmp(kind_of(&ms.m[i]), kinds[k]) == 0;
	}
	assert_int_equal(n[0], 1);
	assert_int_equal(n[1], 1);
	assert_int_equal(n[2], 1);
	assert_int_equal(ms.n, 3);
	manifests_free(&ms);
}

static void test_manifests_deploy(void **state)
{
	struct manifests ms;
	struct extres_err err = { "" };

	(void)state;
	load_manifests(&ms, NULL);
	if (check_all(&ms, &err) < 0)
		fail_msg("%s", err.msg);
	manifests_free(&ms);
}

static void test_configmap_config(void **state)
{
	struct manifests ms;
	struct extres_config *config = NULL;
	struct extres_err err = { "" };

	(void)state;
	load_manifests(&ms, NULL);
	if (check_daemonset(&ms,
			    find(&ms, "DaemonSet", "extresd", "kube-system"),
			    &config, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(config->path, NVIDIA_CONFIG);
	assert_int_equal(config->n_resources, 1);
	assert_string_equal(config->resources[0].name, "gpu");
	assert_string_equal(config->resources[0].driver, "nvml");
	assert_string_equal(config->resources[0].kubernetes_key,
			    "nvidia.com/gpu");
	assert_null(config->resources[0].coordination_file);
	extres_config_free(config);
	manifests_free(&ms);
}

static void test_parse_error(void **state)
{
	static const char two[] = "kind: Pod\n---\nkind: [Pod\n";
	struct manifests ms = { 0 };
	struct extres_err err = { "" };

	(void)state;
	assert_int_equal(load_buffer(&ms, "bad.yaml", two, strlen(two), &err),
			 -EINVAL);
	assert_string_equal(err.msg,
			    "bad.yaml:4:1: did not find expected ',' or ']'");
	assert_int_equal(ms.n, 1); /* the first document, kept for freeing */
	manifests_free(&ms);
}

static void test_rejects_daemonset(void **state)
{
	(void)state;
	expect_rejected(
		"DaemonSet extresd: volume host-run (mounted at /host/run) has mountPropagation HostToContainer, not Bidirectional: the mount would not reach the host",
		"              mountPropagation: Bidirectional\n",
		"              mountPropagation: HostToContainer\n");
	expect_rejected(
		"DaemonSet extresd: volume host-run (mounted at /host/run) has mountPropagation None, not Bidirectional: the mount would not reach the host",
		"              mountPropagation: Bidirectional\n", "");
	expect_rejected(
		"DaemonSet extresd: container extresd is not privileged: mounting and Bidirectional propagation need privileged: true",
		"            privileged: true\n",
		"            privileged: false\n");
	expect_rejected(
		"DaemonSet extresd: container extresd: /dev/fuse is not the host's /dev/fuse",
		"path: /dev/fuse", "path: /dev/null");
	expect_rejected(
		"DaemonSet extresd: container extresd runs extresd without -f: it would go to the background and the container would end",
		"exec extresd -f -c", "exec extresd -c");
	expect_rejected(
		"DaemonSet extresd: extresd's mount point /host/run/extres is the host's /var/run2/extres, not /run/extres",
		"path: /run\n", "path: /var/run2\n");
	/* The obvious layout, and why it is not the one shipped. */
	expect_rejected(
		"DaemonSet extresd: extresd's mount point /host/run/extres is the mount point of volume host-run: extresd refuses to mount over a mount point; mount a parent directory of /run/extres",
		"path: /run\n", "path: /run/extres\n", "mountPath: /host/run\n",
		"mountPath: /host/run/extres\n");
	expect_rejected(
		"DaemonSet extresd: no ConfigMap extres-conf in namespace kube-system",
		"            name: extres-config\n",
		"            name: extres-conf\n");
	expect_rejected(
		"DaemonSet extresd: the config /etc/extres/nvidia.yaml is not in a configMap volume mounted at /etc/extres",
		"mountPath: /etc/extres\n", "mountPath: /etc/extres.d\n");
	expect_rejected(
		"DaemonSet extresd: the pod template lacks the selector's label app.kubernetes.io/name: extresd",
		"  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: extresd\n",
		"  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: other\n");
	expect_rejected(
		"DaemonSet extresd: no container copies /run/extres/.meta/nfd into NFD's /etc/kubernetes/node-feature-discovery/features.d",
		"            path: " NFD_FEATURES_DIR "\n",
		"            path: /etc/nfd\n");
	expect_rejected(
		"DaemonSet extresd: no container copies /run/extres/.meta/nfd into NFD's /etc/kubernetes/node-feature-discovery/features.d",
		"cp /host-run/extres/.meta/nfd",
		"cp /host-run/extres/.meta/env");
}

static void test_rejects_configmap(void **state)
{
	(void)state;
	expect_rejected(
		"ConfigMap extres-config: key nvidia.yaml: /etc/extres/nvidia.yaml:9:31: external-resource.gpu.amount is '0'; it must be at least 1",
		"    external-resource.gpu.amount: all\n    external-resource.gpu.driver: nvml",
		"    external-resource.gpu.amount: 0\n    external-resource.gpu.driver: nvml");
	expect_rejected(
		"ConfigMap extres-config: key amd.yaml: /etc/extres/amd.yaml:4:31: external-resource.gpu.amount is '0'; it must be at least 1",
		"    external-resource.gpu.amount: all\n    external-resource.gpu.driver: amdgpu",
		"    external-resource.gpu.amount: 0\n    external-resource.gpu.driver: amdgpu");
	expect_rejected(
		"ConfigMap extres-config: key nvidia.yaml: /etc/extres/nvidia.yaml:12:1: unknown key 'external-resource.gpu.kubernetes.config-kee' (ignored); did you mean external-resource.gpu.kubernetes.config-key?",
		"    external-resource.gpu.kubernetes.config-key: nvidia",
		"    external-resource.gpu.kubernetes.config-kee: nvidia");
	expect_rejected(
		"ConfigMap extres-config: no key nvidia.yaml (the config of DaemonSet extresd)",
		"  nvidia.yaml: |", "  config.yaml: |");
	expect_rejected(
		"ConfigMap extres-config: no key amd.yaml (the config of DaemonSet extresd)",
		"  amd.yaml: |", "  config.yaml: |");
}

static void test_rejects_pod(void **state)
{
	(void)state;
	expect_rejected(
		"Pod gpu-workload: container main mounts the host's /run/extres with mountPropagation None, not HostToContainer: a mount made after the pod started would not show",
		"          mountPropagation: HostToContainer\n", "");
	expect_rejected(
		"Pod gpu-workload: container main mounts the host's /run/extres without readOnly: true",
		"          readOnly: true\n          mountPropagation: HostToContainer",
		"          mountPropagation: HostToContainer");
	expect_rejected(
		"Pod gpu-workload: container main requests nvidia.com/gpu other than its limit 1",
		"        requests:\n          nvidia.com/gpu: 1",
		"        requests:\n          nvidia.com/gpu: 2");
	expect_rejected(
		"Pod gpu-workload: container main asks for no resource the config names (kubernetes.config-key)",
		"        limits:\n          nvidia.com/gpu: 1",
		"        limits:\n          amd.com/gpu: 1");
	expect_rejected(
		"Pod gpu-workload: container main asks for no resource the config names (kubernetes.config-key)",
		"      resources:\n        limits:\n          nvidia.com/gpu: 1\n        requests:\n          nvidia.com/gpu: 1\n",
		"");
	expect_rejected(
		"Pod gpu-workload: no container mounts the host's /run/extres",
		"        path: /run/extres\n        type: Directory",
		"        path: /srv/extres\n        type: Directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_and_kinds),
		cmocka_unit_test(test_manifests_deploy),
		cmocka_unit_test(test_configmap_config),
		cmocka_unit_test(test_parse_error),
		cmocka_unit_test(test_rejects_daemonset),
		cmocka_unit_test(test_rejects_configmap),
		cmocka_unit_test(test_rejects_pod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
