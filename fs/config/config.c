/* SPDX-License-Identifier: MIT */
/* Loading a config: the file, the steps of reading it, and freeing it. */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "base/text.h"
#include "config/loader.h"
#include "config/name.h"
#include "os/trust.h"

/* A config file is a page or two; anything this big is a mistake. */
#define MAX_FILE_SIZE (16u << 20)

int extres_check_name(const char *name)
{
	return extres_name_problem(name) ? -EINVAL : 0;
}

/* `path` when absolute, else `dir`/`path`. */
char *extres_cfg_resolve(const char *dir, const char *path)
{
	size_t len = strlen(dir);
	char *out;

	if (extres_cfg_is_absolute(path))
		return strdup(path);
	if (asprintf(&out, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/",
		     path) < 0)
		return NULL;
	return out;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static int set_mountpoint(struct loader *l)
{
	const struct extres_flat *e = l->mountpoint;
	const char *text;
	int r;

	if (!e)
		return 0;
	r = extres_cfg_scalar_of(l, e, MOUNTPOINT_EXPECTED, &text);
	if (r < 0)
		return r;
	if (!text)
		return extres_cfg_fail(l, EINVAL, e->line, e->column,
				       "%s is empty", e->key);
	l->config->mountpoint = extres_cfg_resolve(l->config->dir, text);
	return l->config->mountpoint ? 0 : extres_cfg_oom(l);
}

/* extres.cdi-spec-dir: where extresd keeps its CDI specs itself. */
static int set_cdi_spec_dir(struct loader *l)
{
	const struct extres_flat *e = l->cdi_spec_dir;
	const char *text;
	int r;

	if (!e)
		return 0;
	r = extres_cfg_scalar_of(l, e, MOUNTPOINT_EXPECTED, &text);
	if (r < 0)
		return r;
	if (!text)
		return extres_cfg_fail(l, EINVAL, e->line, e->column,
				       "%s is empty", e->key);
	/* Root would write specs that give containers whatever devices a
	 * file another user wrote names. */
	if (l->untrusted)
		return extres_cfg_warn(
			l, extres_cfg_value_line(e), extres_cfg_value_column(e),
			"%s is ignored: %s", e->key, l->untrusted);
	l->config->cdi_spec_dir = extres_cfg_resolve(l->config->dir, text);
	return l->config->cdi_spec_dir ? 0 : extres_cfg_oom(l);
}

/* extres.transport: how requests reach the daemon (daemon/transport.h);
 * checked here, so that a typo is named with its place in the file. */
static int set_transport(struct loader *l)
{
	static const char *const names[] = { "auto", "uring", "dev" };
	const struct extres_flat *e = l->transport;
	const char *text;
	size_t i;
	int r;

	if (!e)
		return 0;
	r = extres_cfg_scalar_of(l, e, TRANSPORT_EXPECTED, &text);
	if (r < 0)
		return r;
	for (i = 0; text && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(text, names[i]) == 0) {
			l->config->transport = strdup(text);
			return l->config->transport ? 0 : extres_cfg_oom(l);
		}
	return extres_cfg_fail(l, EINVAL, extres_cfg_value_line(e),
			       extres_cfg_value_column(e),
			       "%s is '%s': expected " TRANSPORT_EXPECTED,
			       e->key, text ? text : "");
}

/* extres.lock-timeout: how long any wait for a coordination file's lock
 * may last (seconds; 0 tries once). Every resource gets it. */
static int set_lock_timeout(struct loader *l)
{
	const struct extres_flat *e = l->lock_timeout;
	unsigned long long ms = EXTRES_LOCK_TIMEOUT_DEFAULT_MS;
	const char *text = NULL;
	size_t i;
	int r;

	if (e) {
		r = extres_cfg_scalar_of(l, e, LOCK_TIMEOUT_EXPECTED, &text);
		if (r < 0)
			return r;
	}
	if (text &&
	    extres_parse_ms(text, 0, EXTRES_MAX_LOCK_TIMEOUT_MS, &ms) < 0)
		return extres_cfg_fail(
			l, EINVAL, extres_cfg_value_line(e),
			extres_cfg_value_column(e),
			"%s is '%s'; it must be seconds from 0 to %llu, with at most three decimals",
			e->key, text,
			(unsigned long long)EXTRES_MAX_LOCK_TIMEOUT_MS / 1000);
	l->config->lock_timeout_ms = (unsigned)ms;
	for (i = 0; i < l->config->n_resources; i++)
		l->config->resources[i].lock_timeout_ms = (unsigned)ms;
	return 0;
}

/*
 * extres.coordination-group: the group whose members root trusts to write
 * coordination files (it is in no group of its own). Only a file nobody
 * else could change may say so.
 */
static int set_coordination_group(struct loader *l)
{
	const struct extres_flat *e = l->coordination_group;
	struct extres_config *c = l->config;
	const char *text = NULL;
	gid_t gid = EXTRES_NO_GROUP;
	size_t i;
	int r;

	c->coordination_gid = EXTRES_NO_GROUP;
	if (e) {
		r = extres_cfg_scalar_of(l, e, COORD_GROUP_EXPECTED, &text);
		if (r < 0)
			return r;
	}
	if (text && l->untrusted) {
		r = extres_cfg_warn(l, extres_cfg_value_line(e),
				    extres_cfg_value_column(e),
				    "%s is ignored: %s", e->key, l->untrusted);
		if (r < 0)
			return r;
	} else if (text) {
		r = extres_group_gid(text, &gid);
		if (r == -ENOENT)
			return extres_cfg_fail(
				l, EINVAL, extres_cfg_value_line(e),
				extres_cfg_value_column(e),
				"%s is '%s', which is no group on this host",
				e->key, text);
		if (r == -ENOMEM)
			return extres_cfg_oom(l);
		if (r < 0)
			return extres_cfg_fail(
				l, -r, extres_cfg_value_line(e),
				extres_cfg_value_column(e),
				"%s: cannot look up group '%s': %s", e->key,
				text, strerror(-r));
		c->coordination_group = strdup(text);
		if (!c->coordination_group)
			return extres_cfg_oom(l);
		c->coordination_gid = gid;
	}
	for (i = 0; i < c->n_resources; i++)
		c->resources[i].coordination_gid = c->coordination_gid;
	return 0;
}

static int interpret(struct loader *l, yaml_node_t *root)
{
	size_t i;
	int r;

	if (!root ||
	    (root->type == YAML_SCALAR_NODE && extres_yaml_is_null(root)))
		return extres_err_set(l->err, EINVAL,
				      "%s: no resources listed (set %s)",
				      l->file, LIST_KEY);
	if (root->type != YAML_MAPPING_NODE)
		return extres_cfg_fail(
			l, EINVAL, extres_yaml_pos(root->start_mark.line),
			extres_yaml_pos(root->start_mark.column),
			"the top level is a %s, not a mapping of keys",
			extres_yaml_kind(root));
	r = extres_yaml_flatten(&l->yaml, root, &l->flat, l->err);
	if (r < 0)
		return r;
	r = extres_cfg_mark_repeats(l);
	if (r < 0)
		return r;
	r = extres_cfg_read_list(l);
	if (r < 0)
		return r;
	r = extres_cfg_sort_keys(l);
	if (r < 0)
		return r;
	for (i = 0; i < l->config->n_resources; i++) {
		r = extres_cfg_finish_resource(l, i);
		if (r < 0)
			return r;
	}
	r = extres_cfg_check_env_vars(l, NULL);
	if (r < 0)
		return r;
	r = set_mountpoint(l);
	if (r < 0)
		return r;
	r = set_cdi_spec_dir(l);
	if (r < 0)
		return r;
	r = set_lock_timeout(l);
	if (r < 0)
		return r;
	r = set_coordination_group(l);
	if (r < 0)
		return r;
	r = set_transport(l);
	if (r < 0)
		return r;
	r = extres_cfg_warn_unlisted(l);
	if (r < 0)
		return r;
	return extres_cfg_move_warnings(l);
}

/*
 * `file` names the file in messages; `abs_path` is its absolute path. The
 * YAML comes from `fd` when it is not -1, else from `buf`. `untrusted`
 * (NULL: trusted) becomes config->untrusted.
 */
/* Every resource's params in one block each, or none (-ENOMEM). */
static int pack_params(struct extres_config *config)
{
	struct extres_param **packed;
	size_t i;
	int r = 0;

	packed = calloc(config->n_resources ? config->n_resources : 1,
			sizeof(*packed));
	if (!packed)
		return -ENOMEM;
	for (i = 0; r == 0 && i < config->n_resources; i++)
		if (config->resources[i].params)
			r = extres_param_pack(config->resources[i].params,
					      &packed[i]);
	for (i = 0; i < config->n_resources; i++) {
		if (r < 0) {
			extres_param_unref(packed[i]);
			continue;
		}
		extres_param_free(config->resources[i].params);
		config->resources[i].params = packed[i];
	}
	if (r == 0)
		config->params_packed = 1;
	free(packed);
	return r;
}

static int load(const char *file, const char *abs_path, int fd, const char *buf,
		size_t len, char *untrusted, struct extres_config **ret_config,
		struct extres_err *err)
{
	struct loader l = {
		.file = file,
		.err = err,
		.untrusted = untrusted,
		.yaml = { .file = file,
			  .key_bytes_left = EXTRES_YAML_MAX_KEY_BYTES },
	};
	yaml_document_t doc;
	size_t i;
	int r;

	l.config = calloc(1, sizeof(*l.config));
	if (!l.config) {
		free(untrusted);
		return extres_cfg_oom(&l);
	}
	l.config->untrusted = untrusted;
	l.config->path = strdup(abs_path);
	l.config->dir = dir_of(abs_path);
	if (!l.config->path || !l.config->dir) {
		r = extres_cfg_oom(&l);
		goto out_config;
	}
	if (fd >= 0)
		r = extres_yaml_load_fd(file, fd, MAX_FILE_SIZE, &doc, err);
	else
		r = extres_yaml_load(file, buf, len, &doc, err);
	if (r < 0)
		goto out_config;
	l.yaml.doc = &doc;
	r = interpret(&l, yaml_document_get_root_node(&doc));
	if (r == 0 && pack_params(l.config) < 0)
		r = extres_cfg_oom(&l);
	if (r == 0) {
		*ret_config = l.config;
		l.config = NULL;
	}
	yaml_document_delete(&doc);
	extres_flat_list_clear(&l.flat);
	free(l.keys);
	free(l.unlisted);
	for (i = 0; i < l.n_warnings; i++)
		free(l.warnings[i].text);
	free(l.warnings);
out_config:
	extres_config_free(l.config);
	return r;
}

static char *absolute(const char *path)
{
	char *cwd, *out;

	if (extres_cfg_is_absolute(path))
		return strdup(path);
	cwd = get_current_dir_name();
	if (!cwd)
		return NULL;
	out = extres_cfg_resolve(cwd, path);
	free(cwd);
	return out;
}

int extres_config_load_buffer(const char *path, const char *buf, size_t len,
			      struct extres_config **ret_config,
			      struct extres_err *err)
{
	char *abs_path;
	int r;

	errno = 0;
	abs_path = absolute(path);
	if (!abs_path) {
		r = errno ? errno : ENOMEM;
		return extres_err_set(err, r, "%s: %s", path, strerror(r));
	}
	r = load(path, abs_path, -1, buf, len, NULL, ret_config, err);
	free(abs_path);
	return r;
}

/* The config file, open for reading; only a regular file will do. */
static int open_file(const char *path, int *ret_fd, struct extres_err *err)
{
	struct stat st;
	int fd, r = 0;

	/* O_NONBLOCK: a FIFO must not hang us; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return extres_err_set(err, errno, "%s: %s", path,
				      strerror(errno));
	if (fstat(fd, &st) < 0)
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		r = extres_err_set(err, EISDIR, "%s: %s", path,
				   strerror(EISDIR));
	else if (!S_ISREG(st.st_mode))
		r = extres_err_set(err, EINVAL, "%s: not a regular file", path);
	else if ((uint64_t)st.st_size > MAX_FILE_SIZE)
		r = extres_err_set(err, EFBIG, "%s: larger than %u MiB", path,
				   MAX_FILE_SIZE >> 20);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/*
 * The path as it was given, symlinks and the directories that hold them
 * included: each decides which file is read. With nothing on it in another
 * user's hands, the file it names now is the one open at `fd` (and read
 * from it next), unless root moved it meanwhile: the inode must match.
 * *ret_why is NULL (trusted) or why not, malloc'd. Judged before the file
 * is read, so that the keys that widen trust know.
 */
static int note_trust(const char *path, int fd, char **ret_why,
		      struct extres_err *err)
{
	struct stat read_st, now_st;
	struct extres_err why;

	*ret_why = NULL;
	if (extres_check_trusted(path, "config file", &why) == 0) {
		if (fstat(fd, &read_st) == 0 && stat(path, &now_st) == 0 &&
		    read_st.st_dev == now_st.st_dev &&
		    read_st.st_ino == now_st.st_ino)
			return 0;
		extres_err_set(&why, EPERM,
			       "config file %s was replaced while it was read",
			       path);
	}
	*ret_why = strdup(why.msg);
	if (*ret_why)
		return 0;
	return extres_err_set(err, ENOMEM, "%s: out of memory", path);
}

/* The file is parsed as it is read, never held whole in memory; one that
 * grows past the limit meanwhile is refused all the same. */
int extres_config_load(const char *path, struct extres_config **ret_config,
		       struct extres_err *err)
{
	char *abs_path, *untrusted = NULL;
	int fd = -1, r;

	r = open_file(path, &fd, err);
	if (r < 0)
		return r;
	abs_path = realpath(path, NULL);
	if (!abs_path) {
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	r = note_trust(path, fd, &untrusted, err);
	if (r == 0)
		r = load(path, abs_path, fd, NULL, 0, untrusted, ret_config,
			 err);
	free(abs_path);
out:
	close(fd);
	return r;
}

void extres_config_free(struct extres_config *config)
{
	size_t i;

	if (!config)
		return;
	for (i = 0; i < config->n_resources; i++) {
		struct extres_resource_config *res = &config->resources[i];

		free(res->name);
		free(res->driver);
		if (config->params_packed)
			extres_param_unref(res->params);
		else
			extres_param_free(res->params);
		free(res->param_default);
		free(res->coordination_file);
		free(res->coordination_key);
		free(res->cdi_kind);
		free(res->cdi_base_spec);
		free(res->mps_pipe_dir);
		free(res->mps_log_dir);
		free(res->kubernetes_key);
		free(res->yarn_key);
		free(res->env_var);
	}
	free(config->untrusted);
	free(config->coordination_group);
	free(config->resources);
	free(config->mountpoint);
	free(config->cdi_spec_dir);
	free(config->transport);
	for (i = 0; i < config->n_warnings; i++)
		free(config->warnings[i]);
	free(config->warnings);
	free(config->path);
	free(config->dir);
	free(config);
}

static int same_param(const struct extres_param *a,
		      const struct extres_param *b)
{
	uint32_t i;

	if (a->kind != b->kind || a->count != b->count ||
	    !extres_same_text(a->key, b->key) ||
	    !extres_same_text(a->value, b->value))
		return 0;
	for (i = 0; i < a->count; i++)
		if (!same_param(&a->items[i], &b->items[i]))
			return 0;
	return 1;
}

int extres_resource_config_same(const struct extres_resource_config *a,
				const struct extres_resource_config *b)
{
	return extres_same_text(a->name, b->name) &&
	       a->amount.min == b->amount.min &&
	       a->amount.max == b->amount.max && a->pool == b->pool &&
	       extres_same_text(a->driver, b->driver) &&
	       extres_same_text(a->coordination_file, b->coordination_file) &&
	       extres_same_text(a->coordination_key, b->coordination_key) &&
	       same_param(a->params, b->params);
}
