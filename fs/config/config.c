/* SPDX-License-Identifier: MIT */
#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "extres_build.h"
#include "base/fileio.h"
#include "config/name.h"
#include "config/param.h"
#include "os/trust.h"
#include "config/yaml_load.h"

/* A config file is a page or two; anything this big is a mistake. */
#define MAX_FILE_SIZE (16u << 20)

#define LIST_KEY "external-resources"
#define OLD_LIST_KEY "external-resource.list"
#define RESOURCE_PREFIX "external-resource."
#define EXTRES_PREFIX "extres."

/* Flink's GPU driver, whose contract the module EXTRES_FLINK_GPU_DRIVER
 * (named where the build lists the drivers) implements. */
static const char *const gpu_classes[] = {
	"org.apache.flink.externalresource.gpu.GPUDriverFactory",
	"org.apache.flink.externalresource.gpu.GPUDriver",
};
/* Its param for the script, and the default Flink gives it (relative to
 * FLINK_HOME); extres ships a script of the same name and arguments. */
#define GPU_SCRIPT_PARAM "discovery-script.path"
#define GPU_SCRIPT_FLINK "plugins/external-resource-gpu/nvidia-gpu-discovery.sh"
#define GPU_SCRIPT_SHIPPED "nvidia-gpu-discovery.sh"

enum slot {
	SLOT_AMOUNT,
	SLOT_DRIVER,
	SLOT_FACTORY_CLASS,
	SLOT_DRIVER_CLASS,
	SLOT_KUBERNETES,
	SLOT_KUBERNETES_OLD,
	SLOT_YARN,
	SLOT_YARN_OLD,
	SLOT_COORD_FILE,
	SLOT_COORD_KEY,
	SLOT_ENV_VAR,
	SLOT_REFRESH,
	N_SLOTS,
};

/* The keys under external-resource.<name>. other than param.*. */
static const char *const slot_keys[N_SLOTS] = {
	[SLOT_AMOUNT] = "amount",
	[SLOT_DRIVER] = "driver",
	[SLOT_FACTORY_CLASS] = "driver-factory.class",
	[SLOT_DRIVER_CLASS] = "driver.class",
	[SLOT_KUBERNETES] = "kubernetes.config-key",
	[SLOT_KUBERNETES_OLD] = "kubernetes.key",
	[SLOT_YARN] = "yarn.config-key",
	[SLOT_YARN_OLD] = "yarn.key",
	[SLOT_COORD_FILE] = "coordination-file",
	[SLOT_COORD_KEY] = "coordination-key",
	[SLOT_ENV_VAR] = "env-var",
	[SLOT_REFRESH] = "refresh-interval",
};

/* What each slot's value must be, for messages. The driver alone may also
 * be a mapping (Flink's driver.class). */
static const char *const slot_expected[N_SLOTS] = {
	[SLOT_AMOUNT] = "a number",
	[SLOT_DRIVER] = "a driver name or path",
	[SLOT_FACTORY_CLASS] = "a class name",
	[SLOT_DRIVER_CLASS] = "a class name",
	[SLOT_KUBERNETES] = "a Kubernetes resource name",
	[SLOT_KUBERNETES_OLD] = "a Kubernetes resource name",
	[SLOT_YARN] = "a YARN resource name",
	[SLOT_YARN_OLD] = "a YARN resource name",
	[SLOT_COORD_FILE] = "a path",
	[SLOT_COORD_KEY] = "a property name",
	[SLOT_ENV_VAR] = "a variable name",
	[SLOT_REFRESH] = "a number of seconds",
};
#define LIST_EXPECTED "a list of resource names"
#define MOUNTPOINT_EXPECTED "a path"
#define LOCK_TIMEOUT_EXPECTED "a number of seconds"

/*
 * Prefixes of known keys: in a nested file, `param:` with every member
 * commented out reads as a null value, which is no mistake.
 */
static const char *const resource_sections[] = {
	"param", "kubernetes", "yarn", "driver-factory",
};

struct resource_keys {
	const struct extres_flat *slot[N_SLOTS];
};

/* A key under external-resource.<name>. for a name that is not listed. */
struct unlisted {
	const char *name; /* points into the flat key */
	size_t len;
	size_t seq; /* file order */
	uint32_t line, column;
};

struct warning {
	uint32_t line, column;
	size_t seq;
	char *text;
};

struct loader {
	const char *file; /* as the caller named it, for messages */
	struct extres_err *err;
	struct extres_yaml yaml;
	struct extres_flat_list flat;
	const char *list_key; /* the key the resources were listed under */
	const struct extres_flat *mountpoint;
	const struct extres_flat *lock_timeout;
	struct resource_keys *keys; /* parallel to config->resources */
	struct unlisted *unlisted;
	size_t n_unlisted;
	struct warning *warnings;
	size_t n_warnings;
	struct extres_config *config;
};

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * Room for one more item in an array of `n`, doubling at powers of two so
 * that the capacity need not be stored. NULL (array intact) without memory.
 */
static void *grow(void *array, size_t n, size_t size)
{
	if (n & (n - 1))
		return array;
	return realloc(array, (n ? n * 2 : 1) * size);
}

/*
 * Write `src` into `dst` (`size` bytes, NUL-terminated, cut if need be) with
 * every control character as \xNN: messages quote keys and values from
 * the file, which must not reach a terminal or a log as raw bytes.
 */
static void escape_controls(char *dst, size_t size, const char *src)
{
	size_t o = 0;

	for (; *src && o + 1 < size; src++) {
		unsigned char c = (unsigned char)*src;

		if (c >= 0x20 && c != 0x7f) {
			dst[o++] = (char)c;
		} else if (o + 4 < size) {
			snprintf(dst + o, size - o, "\\x%02x", c);
			o += 4;
		} else {
			break;
		}
	}
	dst[o] = '\0';
}

static int fail(struct loader *l, int errnum, uint32_t line, uint32_t column,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int fail(struct loader *l, int errnum, uint32_t line, uint32_t column,
		const char *fmt, ...)
{
	va_list ap;

	char raw[EXTRES_ERR_MAX];

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (l->err)
		escape_controls(l->err->msg, sizeof(l->err->msg), raw);
	return extres_err_prefix(l->err, errnum, "%s:%u:%u", l->file, line,
				 column);
}

static int fail_oom(struct loader *l)
{
	return extres_err_set(l->err, ENOMEM, "out of memory");
}

static int warn(struct loader *l, uint32_t line, uint32_t column,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int warn(struct loader *l, uint32_t line, uint32_t column,
		const char *fmt, ...)
{
	struct warning *w;
	char *msg = NULL, *text = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return fail_oom(l);
	n = asprintf(&text, "%s:%u:%u: %s", l->file, line, column, msg);
	free(msg);
	if (n < 0)
		return fail_oom(l);
	/* Escaping makes a character at most four. */
	msg = malloc(4 * (size_t)n + 1);
	if (!msg) {
		free(text);
		return fail_oom(l);
	}
	escape_controls(msg, 4 * (size_t)n + 1, text);
	free(text);
	text = msg;
	w = grow(l->warnings, l->n_warnings, sizeof(*w));
	if (!w) {
		free(text);
		return fail_oom(l);
	}
	l->warnings = w;
	w[l->n_warnings] = (struct warning){ line, column, l->n_warnings, text };
	l->n_warnings++;
	return 0;
}

static int warn_unknown(struct loader *l, const struct extres_flat *e)
{
	return warn(l, e->line, e->column, "unknown key '%s' (ignored)", e->key);
}

static uint32_t value_line(const struct extres_flat *e)
{
	return extres_yaml_pos(e->value->start_mark.line);
}

static uint32_t value_column(const struct extres_flat *e)
{
	return extres_yaml_pos(e->value->start_mark.column);
}

int extres_check_name(const char *name)
{
	return extres_name_problem(name) ? -EINVAL : 0;
}

static int is_absolute(const char *path)
{
	return path[0] == '/';
}

/* `path` when absolute, else `dir`/`path`. */
static char *resolve(const char *dir, const char *path)
{
	size_t len = strlen(dir);
	char *out;

	if (is_absolute(path))
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

/* ---- the flat key list ---- */

static int ours(const char *key)
{
	return starts_with(key, "external-resource") ||
	       strcmp(key, "extres") == 0 || starts_with(key, EXTRES_PREFIX);
}

struct key_ref {
	const char *key;
	size_t seq;
};

static int compare_key_refs(const void *a, const void *b)
{
	const struct key_ref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The last of a repeated key wins, wherever it came from (a flat key and the
 * same key nested count as one). Sorting keeps this O(n log n) for big files.
 */
static int mark_repeats(struct loader *l)
{
	struct extres_flat *items = l->flat.items;
	size_t n = l->flat.n, i;
	struct key_ref *refs;
	int r = 0;

	if (n < 2)
		return 0;
	refs = calloc(n, sizeof(*refs));
	if (!refs)
		return fail_oom(l);
	/* A section holds no value: its members are entries of their own. */
	for (i = 0, n = 0; i < l->flat.n; i++)
		if (!items[i].section)
			refs[n++] = (struct key_ref){ items[i].key, i };
	qsort(refs, n, sizeof(*refs), compare_key_refs);
	for (i = 0; i + 1 < n && r == 0; i++) {
		struct extres_flat *prev = &items[refs[i].seq];
		const struct extres_flat *next = &items[refs[i + 1].seq];

		if (strcmp(prev->key, next->key) != 0)
			continue;
		prev->superseded = 1;
		if (ours(prev->key))
			r = warn(l, next->line, next->column,
				 "key '%s' is set again (previously at line %u, column %u); the last value wins",
				 next->key, prev->line, prev->column);
	}
	free(refs);
	return r;
}

static const struct extres_flat *find_key(const struct loader *l,
					  const char *key)
{
	size_t i;

	for (i = 0; i < l->flat.n; i++)
		if (!l->flat.items[i].superseded && !l->flat.items[i].section &&
		    strcmp(l->flat.items[i].key, key) == 0)
			return &l->flat.items[i];
	return NULL;
}

/* A key that takes one value, given a mapping (flattened into keys of its
 * own, which would leave the key itself unset). */
static int wrong_kind(struct loader *l, const struct extres_flat *e,
		      const char *expected)
{
	return fail(l, EINVAL, value_line(e), value_column(e),
		    "%s is a %s, where %s is expected", e->key,
		    extres_yaml_kind(e->value), expected);
}

/* Refuses a section named `key`. */
static int refuse_section(struct loader *l, const char *key,
			  const char *expected)
{
	size_t i;

	for (i = 0; i < l->flat.n; i++)
		if (l->flat.items[i].section &&
		    strcmp(l->flat.items[i].key, key) == 0)
			return wrong_kind(l, &l->flat.items[i], expected);
	return 0;
}

/*
 * The text of a key that takes one value (`expected`, for messages), in
 * *ret_text; NULL when the key is absent, empty or null (not set).
 */
static int scalar_of(struct loader *l, const struct extres_flat *e,
		     const char *expected, const char **ret_text)
{
	const char *text;
	int r;

	if (!e) {
		*ret_text = NULL;
		return 0;
	}
	if (e->value->type != YAML_SCALAR_NODE)
		return wrong_kind(l, e, expected);
	r = extres_yaml_text(&l->yaml, e->value, &text, l->err);
	if (r < 0)
		return r;
	*ret_text = *text ? text : NULL;
	return 0;
}

/* ---- the resource list ---- */

static int add_resource(struct loader *l, const char *text, size_t len,
			uint32_t line, uint32_t column)
{
	struct extres_config *c = l->config;
	struct extres_resource_config *res;
	const char *problem;
	char *name;
	size_t i;

	if (c->n_resources == EXTRES_MAX_RESOURCES)
		return fail(l, E2BIG, line, column,
			    "%s lists more than %d resources", l->list_key,
			    EXTRES_MAX_RESOURCES);
	name = strndup(text, len);
	if (!name)
		return fail_oom(l);
	problem = extres_name_problem(name);
	if (problem) {
		fail(l, EINVAL, line, column, "resource name '%s' in %s %s",
		     name, l->list_key, problem);
		free(name);
		return -EINVAL;
	}
	for (i = 0; i < c->n_resources; i++) {
		if (strcmp(c->resources[i].name, name) == 0) {
			fail(l, EINVAL, line, column,
			     "resource '%s' is listed twice in %s (first at line %u, column %u)",
			     name, l->list_key, c->resources[i].line,
			     c->resources[i].column);
			free(name);
			return -EINVAL;
		}
	}
	res = &c->resources[c->n_resources];
	res->params = calloc(1, sizeof(*res->params));
	if (!res->params) {
		free(name);
		return fail_oom(l);
	}
	res->params->kind = EXTRES_PARAM_MAPPING;
	res->params->line = line;
	res->params->column = column;
	res->name = name;
	res->line = line;
	res->column = column;
	c->n_resources++;
	return 0;
}

/* Number of UTF-8 characters in the first `len` bytes of `s`. */
static uint32_t chars_in(const char *s, size_t len)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

static int read_list_text(struct loader *l, const struct extres_flat *e,
			  char separator)
{
	const yaml_node_t *v = e->value;
	const char *text, *p;
	uint32_t line = value_line(e), column = value_column(e);
	/* A plain scalar on one line is the source text itself, so each
	 * name can be placed exactly. */
	int exact = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    v->start_mark.line == v->end_mark.line;
	int r;

	r = extres_yaml_text(&l->yaml, v, &text, l->err);
	if (r < 0)
		return r;
	for (p = text;;) {
		const char *end = strchr(p, separator);
		const char *stop = end ? end : p + strlen(p);

		while (p < stop && (*p == ' ' || *p == '\t'))
			p++;
		while (stop > p && (stop[-1] == ' ' || stop[-1] == '\t'))
			stop--;
		if (stop > p) {
			r = add_resource(l, p, (size_t)(stop - p), line,
					 exact ? column + chars_in(text, (size_t)(p - text))
					       : column);
			if (r < 0)
				return r;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

static int read_list_sequence(struct loader *l, const struct extres_flat *e)
{
	const yaml_node_t *v = e->value;
	yaml_node_item_t *item;
	int r;

	for (item = v->data.sequence.items.start;
	     item < v->data.sequence.items.top; item++) {
		yaml_node_t *node =
			yaml_document_get_node(l->yaml.doc, *item);
		uint32_t line = extres_yaml_pos(node->start_mark.line);
		uint32_t column = extres_yaml_pos(node->start_mark.column);
		const char *text;

		if (node->type != YAML_SCALAR_NODE)
			return fail(l, EINVAL, line, column,
				    "%s: an item must be a resource name, not a %s",
				    e->key, extres_yaml_kind(node));
		r = extres_yaml_text(&l->yaml, node, &text, l->err);
		if (r < 0)
			return r;
		r = add_resource(l, text, strlen(text), line, column);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_list(struct loader *l)
{
	const struct extres_flat *list = find_key(l, LIST_KEY);
	const struct extres_flat *old = find_key(l, OLD_LIST_KEY);
	struct extres_config *c = l->config;
	const struct extres_flat *e;
	int r;

	r = refuse_section(l, LIST_KEY, LIST_EXPECTED);
	if (r == 0)
		r = refuse_section(l, OLD_LIST_KEY, LIST_EXPECTED);
	if (r < 0)
		return r;
	/* A null list (everything under it commented out) is not set. */
	if (list && extres_yaml_is_null(list->value))
		list = NULL;
	if (old && extres_yaml_is_null(old->value))
		old = NULL;
	if (list && old) {
		r = warn(l, old->line, old->column,
			 "%s is ignored because %s is set", OLD_LIST_KEY,
			 LIST_KEY);
		if (r < 0)
			return r;
	}
	e = list ? list : old;
	if (!e)
		return extres_err_set(l->err, EINVAL,
				      "%s: no resources listed (set %s)",
				      l->file, LIST_KEY);
	l->list_key = e->key;

	c->resources = calloc(EXTRES_MAX_RESOURCES, sizeof(*c->resources));
	l->keys = calloc(EXTRES_MAX_RESOURCES, sizeof(*l->keys));
	if (!c->resources || !l->keys)
		return fail_oom(l);
	if (e->value->type == YAML_SEQUENCE_NODE)
		r = read_list_sequence(l, e);
	else
		r = read_list_text(l, e, e == list ? ';' : ',');
	if (r < 0)
		return r;
	if (c->n_resources == 0)
		return fail(l, EINVAL, value_line(e), value_column(e),
			    "%s lists no resources", e->key);
	return 0;
}

/* ---- sorting the keys out ---- */

/*
 * The listed resource that `rest` (a key without "external-resource.")
 * belongs to, or -1. The longest name wins, as names may hold dots. On a
 * match *ret_suffix is what follows "<name>.", or NULL for the bare name.
 */
static int owner_of(const struct loader *l, const char *rest,
		    const char **ret_suffix)
{
	const struct extres_config *c = l->config;
	size_t best_len = 0, i;
	int best = -1;

	for (i = 0; i < c->n_resources; i++) {
		const char *name = c->resources[i].name;
		size_t len = strlen(name);

		if (len > best_len && strncmp(rest, name, len) == 0 &&
		    (rest[len] == '.' || rest[len] == '\0')) {
			best = (int)i;
			best_len = len;
		}
	}
	if (best >= 0)
		*ret_suffix = rest[best_len] ? rest + best_len + 1 : NULL;
	return best;
}

static int add_param(struct loader *l, size_t index,
		     const struct extres_flat *e, const char *key)
{
	struct extres_param *params = l->config->resources[index].params;
	struct extres_param member;
	int r;

	r = extres_param_from_yaml(&l->yaml, e->value, &member, l->err);
	if (r < 0)
		return r;
	member.key = strdup(key);
	if (!member.key || extres_param_append(params, &member) < 0) {
		extres_param_clear(&member);
		return fail_oom(l);
	}
	return 0;
}

static int note_unlisted(struct loader *l, const struct extres_flat *e,
			 const char *name, size_t len)
{
	struct unlisted *u;

	u = grow(l->unlisted, l->n_unlisted, sizeof(*u));
	if (!u)
		return fail_oom(l);
	l->unlisted = u;
	u[l->n_unlisted] = (struct unlisted){ name, len, l->n_unlisted,
					      e->line, e->column };
	l->n_unlisted++;
	return 0;
}

static int resource_key(struct loader *l, const struct extres_flat *e,
			const char *rest)
{
	const char *suffix;
	size_t i;
	int index;

	index = owner_of(l, rest, &suffix);
	/* A section's members are entries of their own: only a key that
	 * takes one value has something to say about it. */
	if (e->section) {
		if (index < 0 || !suffix)
			return 0;
		for (i = 0; i < N_SLOTS; i++)
			if (i != SLOT_DRIVER &&
			    strcmp(suffix, slot_keys[i]) == 0)
				return wrong_kind(l, e, slot_expected[i]);
		return 0;
	}
	if (index < 0) {
		size_t len = strcspn(rest, ".");

		if (len == 0)
			return warn_unknown(l, e);
		if (rest[len] == '\0' && extres_yaml_is_null(e->value))
			return 0;
		return note_unlisted(l, e, rest, len);
	}
	if (!suffix)
		return extres_yaml_is_null(e->value) ? 0 : warn_unknown(l, e);
	if (starts_with(suffix, "param."))
		return add_param(l, (size_t)index, e, suffix + strlen("param."));
	for (i = 0; i < N_SLOTS; i++) {
		if (strcmp(suffix, slot_keys[i]) == 0) {
			l->keys[index].slot[i] = e;
			return 0;
		}
	}
	for (i = 0; i < sizeof(resource_sections) / sizeof(resource_sections[0]);
	     i++)
		if (strcmp(suffix, resource_sections[i]) == 0 &&
		    extres_yaml_is_null(e->value))
			return 0;
	return warn_unknown(l, e);
}

static int sort_keys(struct loader *l)
{
	size_t i;
	int r = 0;

	for (i = 0; i < l->flat.n && r == 0; i++) {
		const struct extres_flat *e = &l->flat.items[i];
		const char *key = e->key;

		if (e->superseded || strcmp(key, LIST_KEY) == 0 ||
		    strcmp(key, OLD_LIST_KEY) == 0)
			continue;
		if (starts_with(key, RESOURCE_PREFIX))
			r = resource_key(l, e, key + strlen(RESOURCE_PREFIX));
		else if (e->section &&
			 strcmp(key, EXTRES_PREFIX "mountpoint") == 0)
			r = wrong_kind(l, e, MOUNTPOINT_EXPECTED);
		else if (e->section &&
			 strcmp(key, EXTRES_PREFIX "lock-timeout") == 0)
			r = wrong_kind(l, e, LOCK_TIMEOUT_EXPECTED);
		else if (e->section)
			continue;
		else if (strcmp(key, EXTRES_PREFIX "mountpoint") == 0)
			l->mountpoint = e;
		else if (strcmp(key, EXTRES_PREFIX "lock-timeout") == 0)
			l->lock_timeout = e;
		else if (starts_with(key, EXTRES_PREFIX) ||
			 starts_with(key, LIST_KEY "."))
			r = warn_unknown(l, e);
		else if (strcmp(key, "extres") == 0 ||
			 strcmp(key, "external-resource") == 0)
			r = extres_yaml_is_null(e->value) ? 0
							  : warn_unknown(l, e);
		/* Everything else belongs to Flink: not ours to judge. */
	}
	return r;
}

static int compare_unlisted(const void *a, const void *b)
{
	const struct unlisted *x = a, *y = b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int same_name(const struct unlisted *a, const struct unlisted *b)
{
	return a->len == b->len && memcmp(a->name, b->name, a->len) == 0;
}

/* One warning per unlisted name, at its first key. */
static int warn_unlisted(struct loader *l)
{
	size_t i;
	int r;

	if (l->n_unlisted == 0)
		return 0;
	qsort(l->unlisted, l->n_unlisted, sizeof(*l->unlisted),
	      compare_unlisted);
	for (i = 0; i < l->n_unlisted; i++) {
		const struct unlisted *u = &l->unlisted[i];

		if (i > 0 && same_name(&u[-1], u))
			continue;
		r = warn(l, u->line, u->column,
			 "resource '%.*s' is configured but not listed in %s (ignored)",
			 (int)u->len, u->name, l->list_key);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- each resource's values ---- */

/*
 * Of a newer key and its older spelling, the text of the one in effect;
 * warns when both are set.
 */
static int pick(struct loader *l, const struct extres_flat *newer,
		const struct extres_flat *older, const char *expected,
		const char **ret_text, const struct extres_flat **ret_entry)
{
	const char *new_text, *old_text;
	int r;

	r = scalar_of(l, newer, expected, &new_text);
	if (r < 0)
		return r;
	r = scalar_of(l, older, expected, &old_text);
	if (r < 0)
		return r;
	if (new_text && old_text) {
		r = warn(l, older->line, older->column,
			 "%s is ignored because %s is set", older->key,
			 newer->key);
		if (r < 0)
			return r;
	}
	*ret_text = new_text ? new_text : old_text;
	if (ret_entry)
		*ret_entry = new_text ? newer : old_text ? older : NULL;
	return 0;
}

static int set_amount(struct loader *l, struct extres_resource_config *res,
		      const struct extres_flat *e)
{
	unsigned long long v;
	const char *text, *digits;
	char *end;
	int r;

	r = scalar_of(l, e, slot_expected[SLOT_AMOUNT], &text);
	if (r < 0)
		return r;
	if (!text)
		return fail(l, EINVAL, res->line, res->column,
			    "resource '%s': " RESOURCE_PREFIX "%s.amount is not set",
			    res->name, res->name);
	digits = text[0] == '-' ? text + 1 : text;
	/* strtoull would take leading blanks, a sign or "0x"; a count takes
	 * decimal digits only. */
	if (*digits < '0' || *digits > '9')
		goto not_a_number;
	errno = 0;
	v = strtoull(digits, &end, 10);
	if (*end != '\0')
		goto not_a_number;
	if (text[0] == '-' || v == 0)
		return fail(l, EINVAL, value_line(e), value_column(e),
			    "%s is '%s'; it must be at least 1", e->key, text);
	if (errno == ERANGE || v > EXTRES_MAX_AMOUNT)
		return fail(l, EINVAL, value_line(e), value_column(e),
			    "%s is '%s'; it must be at most %d", e->key, text,
			    EXTRES_MAX_AMOUNT);
	res->amount = v;
	return 0;

not_a_number:
	return fail(l, EINVAL, value_line(e), value_column(e),
		    "%s is '%s', not a whole number", e->key, text);
}

/*
 * Seconds, with up to three decimals ("30", "0.5"), into milliseconds:
 * 0 or -EINVAL when the text is anything else or falls outside
 * [min_ms, max_ms].
 */
static int parse_seconds(const char *text, unsigned long long min_ms,
			 unsigned long long max_ms, unsigned long long *ret_ms)
{
	unsigned long long whole = 0, ms;
	const char *p = text;
	int decimals = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (unsigned long long)(*p - '0');
		if (whole > max_ms / 1000 + 1)
			return -EINVAL;
	}
	ms = whole * 1000;
	if (*p == '.') {
		unsigned long long scale = 100;

		for (p++; *p >= '0' && *p <= '9' && decimals < 3;
		     p++, decimals++, scale /= 10)
			ms += (unsigned long long)(*p - '0') * scale;
		if (decimals == 0)
			return -EINVAL;
	}
	if (*p != '\0' || ms < min_ms || ms > max_ms)
		return -EINVAL;
	*ret_ms = ms;
	return 0;
}

/* refresh-interval: from EXTRES_MIN_REFRESH_MS; unset or null for none. */
static int set_refresh(struct loader *l, struct extres_resource_config *res,
		       const struct extres_flat *e)
{
	unsigned long long ms;
	const char *text;
	int r;

	r = scalar_of(l, e, slot_expected[SLOT_REFRESH], &text);
	if (r < 0 || !text)
		return r;
	if (parse_seconds(text, EXTRES_MIN_REFRESH_MS, EXTRES_MAX_REFRESH_MS,
			  &ms) < 0)
		return fail(
			l, EINVAL, value_line(e), value_column(e),
			"%s is '%s'; it must be seconds from %g to %llu, with at most three decimals",
			e->key, text, EXTRES_MIN_REFRESH_MS / 1000.0,
			(unsigned long long)EXTRES_MAX_REFRESH_MS / 1000);
	res->refresh_ms = ms;
	return 0;
}

static int valid_driver(const char *driver)
{
	const char *p;

	if (is_absolute(driver))
		return 1;
	for (p = driver; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

/*
 * The shipped NVIDIA script: beside the running program in a build tree, as
 * the driver modules are, else where it is installed. *ret is malloc'd.
 */
static int shipped_gpu_script(char **ret)
{
	char *dir = NULL;
	struct stat st;
	int r;

	r = extres_exe_sibling("scripts", &dir);
	if (r < 0)
		return r;
	if (dir && asprintf(ret, "%s/" GPU_SCRIPT_SHIPPED, dir) >= 0) {
		free(dir);
		if (stat(*ret, &st) == 0)
			return 0;
		free(*ret);
	} else {
		free(dir);
	}
	*ret = strdup(EXTRES_SCRIPT_DIR "/" GPU_SCRIPT_SHIPPED);
	return *ret ? 0 : -ENOMEM;
}

/*
 * Flink's GPU driver without discovery-script.path runs Flink's NVIDIA
 * script under FLINK_HOME. Where Flink is installed, run that one, as Flink
 * would; elsewhere extres' own, which takes the same arguments. The path is
 * made a param, as if configured at the factory class's line, so that the
 * driver needs no default of its own; the choice and its reason are kept
 * for extresctl check.
 */
static int default_gpu_script(struct loader *l,
			      struct extres_resource_config *res,
			      const struct extres_flat *at)
{
	const char *home = getenv("FLINK_HOME");
	struct extres_param member = {
		.kind = EXTRES_PARAM_SCALAR,
		.line = value_line(at),
		.column = value_column(at),
	};
	char *path = NULL, *flink = NULL, *why = NULL;
	struct stat st;
	int r = 0;

	if (extres_param_get(res->params, GPU_SCRIPT_PARAM))
		return 0;
	if (home && *home) {
		/* Absolute, or the driver would resolve it against FLINK_HOME
		 * a second time. */
		flink = resolve(home, GPU_SCRIPT_FLINK);
		if (flink && !is_absolute(flink)) {
			path = realpath(flink, NULL);
		} else if (flink && stat(flink, &st) == 0) {
			path = flink;
			flink = NULL;
		}
		if (!flink && !path)
			goto oom;
	}
	if (path) {
		why = strdup("Flink's default under FLINK_HOME");
	} else {
		r = shipped_gpu_script(&path);
		if (r < 0)
			goto oom;
		if (asprintf(&why, "the script shipped with extres; %s%s",
			     flink ? "there is no " : "FLINK_HOME is not set",
			     flink ? flink : "") < 0)
			why = NULL;
	}
	if (!why || asprintf(&res->param_default, GPU_SCRIPT_PARAM ": %s (%s)",
			     path, why) < 0) {
		res->param_default = NULL;
		goto oom;
	}
	member.key = strdup(GPU_SCRIPT_PARAM);
	member.value = path;
	if (!member.key || extres_param_append(res->params, &member) < 0)
		goto oom;
	path = NULL;
	goto out;
oom:
	free((char *)member.key);
	r = fail_oom(l);
out:
	free(path);
	free(flink);
	free(why);
	return r;
}

static int set_driver(struct loader *l, struct extres_resource_config *res,
		      const struct resource_keys *keys)
{
	const struct extres_flat *driver = keys->slot[SLOT_DRIVER];
	const struct extres_flat *class_entry;
	const char *text, *class_name;
	size_t i;
	int r;

	r = scalar_of(l, driver, slot_expected[SLOT_DRIVER], &text);
	if (r < 0)
		return r;
	r = pick(l, keys->slot[SLOT_FACTORY_CLASS],
		 keys->slot[SLOT_DRIVER_CLASS],
		 slot_expected[SLOT_FACTORY_CLASS], &class_name, &class_entry);
	if (r < 0)
		return r;
	if (text) {
		if (!valid_driver(text))
			return fail(l, EINVAL, value_line(driver),
				    value_column(driver),
				    "%s is '%s'; expected a driver name ([A-Za-z0-9_-]+) or an absolute path",
				    driver->key, text);
		if (class_name) {
			r = warn(l, class_entry->line, class_entry->column,
				 "%s is ignored because %s is set",
				 class_entry->key, driver->key);
			if (r < 0)
				return r;
		}
	} else if (class_name) {
		for (i = 0; i < sizeof(gpu_classes) / sizeof(gpu_classes[0]); i++)
			if (strcmp(class_name, gpu_classes[i]) == 0)
				text = EXTRES_FLINK_GPU_DRIVER;
		if (!text)
			return fail(l, EINVAL, value_line(class_entry),
				    value_column(class_entry),
				    "unsupported driver factory class '%s' for resource '%s'; set " RESOURCE_PREFIX "%s.driver to an extres driver",
				    class_name, res->name, res->name);
		r = default_gpu_script(l, res, class_entry);
		if (r < 0)
			return r;
	} else {
		return fail(l, EINVAL, res->line, res->column,
			    "resource '%s' has no driver; set " RESOURCE_PREFIX "%s.driver (or " RESOURCE_PREFIX "%s.driver-factory.class)",
			    res->name, res->name, res->name);
	}
	res->driver = strdup(text);
	return res->driver ? 0 : fail_oom(l);
}

/* *ret = a copy of `text`, or NULL for NULL. */
static int copy_opt(struct loader *l, const char *text, char **ret)
{
	if (!text)
		return 0;
	*ret = strdup(text);
	return *ret ? 0 : fail_oom(l);
}

static int set_coordination(struct loader *l,
			    struct extres_resource_config *res,
			    const struct resource_keys *keys)
{
	const struct extres_flat *key_entry = keys->slot[SLOT_COORD_KEY];
	const char *file, *key, *problem;
	int r;

	r = scalar_of(l, keys->slot[SLOT_COORD_FILE],
		      slot_expected[SLOT_COORD_FILE], &file);
	if (r < 0)
		return r;
	if (file) {
		res->coordination_file = resolve(l->config->dir, file);
		if (!res->coordination_file)
			return fail_oom(l);
	}
	r = scalar_of(l, key_entry, slot_expected[SLOT_COORD_KEY], &key);
	if (r < 0)
		return r;
	if (key) {
		problem = extres_name_problem(key);
		if (problem)
			return fail(l, EINVAL, value_line(key_entry),
				    value_column(key_entry), "%s '%s' %s",
				    key_entry->key, key, problem);
	}
	return copy_opt(l, key ? key : "index", &res->coordination_key);
}

int extres_check_env_var_name(const char *name)
{
	const char *p;

	if (!((*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z') ||
	      *name == '_'))
		return -EINVAL;
	for (p = name + 1; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return -EINVAL;
	return 0;
}

const char *extres_env_var(const char *driver_default, const char *env_var)
{
	if (env_var)
		return *env_var ? env_var : NULL;
	return driver_default;
}

int extres_env_indexes_var(const char *name, char **ret_var)
{
	static const char prefix[] = "EXTRES_", suffix[] = "_INDEXES";
	size_t len = strlen(name), i;
	char *var, *p;

	var = malloc(sizeof(prefix) - 1 + len + sizeof(suffix));
	if (!var)
		return -ENOMEM;
	p = stpcpy(var, prefix);
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		*p++ = c;
	}
	strcpy(p, suffix);
	*ret_var = var;
	return 0;
}

/* Absent: NULL (the driver's default). Present but empty or null: "". */
static int set_env_var(struct loader *l, struct extres_resource_config *res,
		       const struct extres_flat *e)
{
	const char *text;
	int r;

	if (!e)
		return 0;
	r = scalar_of(l, e, slot_expected[SLOT_ENV_VAR], &text);
	if (r < 0)
		return r;
	if (!text)
		text = "";
	else if (extres_check_env_var_name(text) < 0)
		return fail(l, EINVAL, value_line(e), value_column(e),
			    "%s is '%s'; expected a shell variable name ([A-Za-z_][A-Za-z0-9_]*), or \"\" for none",
			    e->key, text);
	res->env_var_line = value_line(e);
	res->env_var_column = value_column(e);
	return copy_opt(l, text, &res->env_var);
}

static int finish_resource(struct loader *l, size_t index)
{
	struct extres_resource_config *res = &l->config->resources[index];
	const struct resource_keys *keys = &l->keys[index];
	const char *text;
	int r;

	r = set_amount(l, res, keys->slot[SLOT_AMOUNT]);
	if (r < 0)
		return r;
	r = set_driver(l, res, keys);
	if (r < 0)
		return r;
	r = pick(l, keys->slot[SLOT_KUBERNETES],
		 keys->slot[SLOT_KUBERNETES_OLD],
		 slot_expected[SLOT_KUBERNETES], &text, NULL);
	if (r < 0)
		return r;
	r = copy_opt(l, text, &res->kubernetes_key);
	if (r < 0)
		return r;
	r = pick(l, keys->slot[SLOT_YARN], keys->slot[SLOT_YARN_OLD],
		 slot_expected[SLOT_YARN], &text, NULL);
	if (r < 0)
		return r;
	r = copy_opt(l, text, &res->yarn_key);
	if (r < 0)
		return r;
	r = set_coordination(l, res, keys);
	if (r < 0)
		return r;
	r = set_refresh(l, res, keys->slot[SLOT_REFRESH]);
	if (r < 0)
		return r;
	return set_env_var(l, res, keys->slot[SLOT_ENV_VAR]);
}

/* ---- the variables of the env view, across resources ---- */

struct env_names {
	const char *var;       /* the device variable, or NULL */
	int configured;        /* var comes from env-var, not the driver */
	char *indexes;         /* EXTRES_<NAME>_INDEXES */
	uint32_t line, column; /* of env-var's value, else of the name */
};

static int env_names_init(struct loader *l, const char *const *defaults,
			  struct env_names *names)
{
	const struct extres_config *c = l->config;
	size_t i;

	for (i = 0; i < c->n_resources; i++) {
		const struct extres_resource_config *res = &c->resources[i];
		int configured = res->env_var != NULL;

		names[i].var = extres_env_var(defaults ? defaults[i] : NULL,
					      res->env_var);
		names[i].configured = configured;
		names[i].line = configured ? res->env_var_line : res->line;
		names[i].column =
			configured ? res->env_var_column : res->column;
		if (extres_env_indexes_var(res->name, &names[i].indexes) < 0)
			return fail_oom(l);
	}
	return 0;
}

/* Resource `b` (listed after `a`) may not set what `a` sets. */
static int env_pair(struct loader *l, const struct env_names *names,
		    size_t a, size_t b)
{
	const struct extres_resource_config *ra = &l->config->resources[a];
	const struct extres_resource_config *rb = &l->config->resources[b];
	const struct env_names *na = &names[a], *nb = &names[b];

	if (strcmp(na->indexes, nb->indexes) == 0)
		return fail(l, EINVAL, rb->line, rb->column,
			    "resource names '%s' and '%s' (line %u, column %u) both make the variable %s; rename one",
			    rb->name, ra->name, ra->line, ra->column,
			    nb->indexes);
	if (na->var && nb->var && strcmp(na->var, nb->var) == 0)
		return fail(l, EINVAL, nb->line, nb->column,
			    "resource '%s' would set %s%s%s%s, as resource '%s' does (line %u, column %u); set " RESOURCE_PREFIX "%s.env-var to another name, or to \"\" for none",
			    rb->name, nb->var, nb->configured ? "" : " (the ",
			    nb->configured ? "" : rb->driver,
			    nb->configured ? "" : " driver's default)",
			    ra->name, na->line, na->column, rb->name);
	if (nb->var && strcmp(nb->var, na->indexes) == 0)
		return fail(l, EINVAL, nb->line, nb->column,
			    "resource '%s' would set %s, which holds the indexes of resource '%s'; set " RESOURCE_PREFIX "%s.env-var to another name",
			    rb->name, nb->var, ra->name, rb->name);
	if (na->var && strcmp(na->var, nb->indexes) == 0)
		return fail(l, EINVAL, na->line, na->column,
			    "resource '%s' would set %s, which holds the indexes of resource '%s'; set " RESOURCE_PREFIX "%s.env-var to another name",
			    ra->name, na->var, rb->name, ra->name);
	return 0;
}

/* A sourced file keeps only the last of two assignments: refuse them.
 * `defaults`: each resource's driver default, or NULL while unknown. */
static int check_env_vars(struct loader *l, const char *const *defaults)
{
	const struct extres_config *c = l->config;
	struct env_names *names;
	size_t i, j;
	int r;

	names = calloc(c->n_resources, sizeof(*names));
	if (!names)
		return fail_oom(l);
	r = env_names_init(l, defaults, names);
	for (i = 0; i < c->n_resources && r == 0; i++) {
		if (names[i].var && strcmp(names[i].var, names[i].indexes) == 0)
			r = fail(l, EINVAL, names[i].line, names[i].column,
				 "resource '%s' already sets %s to its indexes; set " RESOURCE_PREFIX "%s.env-var to another name",
				 c->resources[i].name, names[i].var,
				 c->resources[i].name);
		for (j = 0; j < i && r == 0; j++)
			r = env_pair(l, names, j, i);
	}
	for (i = 0; i < c->n_resources; i++)
		free(names[i].indexes);
	free(names);
	return r;
}

int extres_config_check_env(const struct extres_config *config,
			    const char *const *defaults, struct extres_err *err)
{
	/* Only the message's file, the error and the (read-only) config of
	 * a loader are used past loading. */
	struct loader l = { .file = config->path,
			    .err = err,
			    .config = (struct extres_config *)config };

	return check_env_vars(&l, defaults);
}

static int set_mountpoint(struct loader *l)
{
	const struct extres_flat *e = l->mountpoint;
	const char *text;
	int r;

	if (!e)
		return 0;
	r = scalar_of(l, e, MOUNTPOINT_EXPECTED, &text);
	if (r < 0)
		return r;
	if (!text)
		return fail(l, EINVAL, e->line, e->column, "%s is empty", e->key);
	l->config->mountpoint = resolve(l->config->dir, text);
	return l->config->mountpoint ? 0 : fail_oom(l);
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
		r = scalar_of(l, e, LOCK_TIMEOUT_EXPECTED, &text);
		if (r < 0)
			return r;
	}
	if (text && parse_seconds(text, 0, EXTRES_MAX_LOCK_TIMEOUT_MS, &ms) < 0)
		return fail(
			l, EINVAL, value_line(e), value_column(e),
			"%s is '%s'; it must be seconds from 0 to %llu, with at most three decimals",
			e->key, text,
			(unsigned long long)EXTRES_MAX_LOCK_TIMEOUT_MS / 1000);
	l->config->lock_timeout_ms = (unsigned)ms;
	for (i = 0; i < l->config->n_resources; i++)
		l->config->resources[i].lock_timeout_ms = (unsigned)ms;
	return 0;
}

static int compare_warnings(const void *a, const void *b)
{
	const struct warning *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hand the warnings, in file order, to the config. */
static int move_warnings(struct loader *l)
{
	struct extres_config *c = l->config;
	size_t i;

	if (l->n_warnings == 0)
		return 0;
	c->warnings = calloc(l->n_warnings, sizeof(*c->warnings));
	if (!c->warnings)
		return fail_oom(l);
	qsort(l->warnings, l->n_warnings, sizeof(*l->warnings),
	      compare_warnings);
	for (i = 0; i < l->n_warnings; i++) {
		c->warnings[i] = l->warnings[i].text;
		l->warnings[i].text = NULL;
	}
	c->n_warnings = l->n_warnings;
	return 0;
}

static int interpret(struct loader *l, yaml_node_t *root)
{
	size_t i;
	int r;

	if (!root || (root->type == YAML_SCALAR_NODE && extres_yaml_is_null(root)))
		return extres_err_set(l->err, EINVAL,
				      "%s: no resources listed (set %s)",
				      l->file, LIST_KEY);
	if (root->type != YAML_MAPPING_NODE)
		return fail(l, EINVAL, extres_yaml_pos(root->start_mark.line),
			    extres_yaml_pos(root->start_mark.column),
			    "the top level is a %s, not a mapping of keys",
			    extres_yaml_kind(root));
	r = extres_yaml_flatten(&l->yaml, root, &l->flat, l->err);
	if (r < 0)
		return r;
	r = mark_repeats(l);
	if (r < 0)
		return r;
	r = read_list(l);
	if (r < 0)
		return r;
	r = sort_keys(l);
	if (r < 0)
		return r;
	for (i = 0; i < l->config->n_resources; i++) {
		r = finish_resource(l, i);
		if (r < 0)
			return r;
	}
	r = check_env_vars(l, NULL);
	if (r < 0)
		return r;
	r = set_mountpoint(l);
	if (r < 0)
		return r;
	r = set_lock_timeout(l);
	if (r < 0)
		return r;
	r = warn_unlisted(l);
	if (r < 0)
		return r;
	return move_warnings(l);
}

/*
 * `file` names the file in messages; `abs_path` is its absolute path. The
 * YAML comes from `fd` when it is not -1, else from `buf`.
 */
static int load(const char *file, const char *abs_path, int fd, const char *buf,
		size_t len, struct extres_config **ret_config,
		struct extres_err *err)
{
	struct loader l = {
		.file = file,
		.err = err,
		.yaml = { .file = file,
			  .key_bytes_left = EXTRES_YAML_MAX_KEY_BYTES },
	};
	yaml_document_t doc;
	size_t i;
	int r;

	l.config = calloc(1, sizeof(*l.config));
	if (!l.config)
		return fail_oom(&l);
	l.config->path = strdup(abs_path);
	l.config->dir = dir_of(abs_path);
	if (!l.config->path || !l.config->dir) {
		r = fail_oom(&l);
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

	if (is_absolute(path))
		return strdup(path);
	cwd = get_current_dir_name();
	if (!cwd)
		return NULL;
	out = resolve(cwd, path);
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
	r = load(path, abs_path, -1, buf, len, ret_config, err);
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

/* Checked after the read: a file that passes could not have been changed
 * by another user in between either, since nothing on its path is theirs. */
static int note_trust(struct extres_config *config, struct extres_err *err)
{
	struct extres_err why;

	if (extres_check_trusted(config->path, "config file", &why) == 0)
		return 0;
	config->untrusted = strdup(why.msg);
	if (config->untrusted)
		return 0;
	return extres_err_set(err, ENOMEM, "%s: out of memory", config->path);
}

/* The file is parsed as it is read, never held whole in memory; one that
 * grows past the limit meanwhile is refused all the same. */
int extres_config_load(const char *path, struct extres_config **ret_config,
		       struct extres_err *err)
{
	struct extres_config *config = NULL;
	char *abs_path;
	int fd = -1, r;

	r = open_file(path, &fd, err);
	if (r < 0)
		return r;
	abs_path = realpath(path, NULL);
	if (!abs_path) {
		r = extres_err_set(err, errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	r = load(path, abs_path, fd, NULL, 0, &config, err);
	if (r == 0) {
		r = note_trust(config, err);
		if (r < 0)
			extres_config_free(config);
		else
			*ret_config = config;
	}
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
		extres_param_free(res->params);
		free(res->param_default);
		free(res->coordination_file);
		free(res->coordination_key);
		free(res->kubernetes_key);
		free(res->yarn_key);
		free(res->env_var);
	}
	free(config->untrusted);
	free(config->resources);
	free(config->mountpoint);
	for (i = 0; i < config->n_warnings; i++)
		free(config->warnings[i]);
	free(config->warnings);
	free(config->path);
	free(config->dir);
	free(config);
}

static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_param(const struct extres_param *a, const struct extres_param *b)
{
	uint32_t i;

	if (a->kind != b->kind || a->count != b->count ||
	    !same_text(a->key, b->key) || !same_text(a->value, b->value))
		return 0;
	for (i = 0; i < a->count; i++)
		if (!same_param(&a->items[i], &b->items[i]))
			return 0;
	return 1;
}

int extres_resource_config_same(const struct extres_resource_config *a,
				const struct extres_resource_config *b)
{
	return same_text(a->name, b->name) && a->amount == b->amount &&
	       same_text(a->driver, b->driver) &&
	       same_text(a->coordination_file, b->coordination_file) &&
	       same_text(a->coordination_key, b->coordination_key) &&
	       same_param(a->params, b->params);
}
