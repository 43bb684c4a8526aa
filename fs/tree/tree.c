/* SPDX-License-Identifier: MIT */
#include "tree/tree.h"
#include "tree/tree_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

struct bnode {
	size_t parent;
	size_t pos; /* among the parent's children */
	/* In the builder's pool, by offset while it grows; extres_tree_seal()
	 * sets the pointers. */
	size_t name_off, data_off;
	char *name;
	int is_dir;
	int is_link; /* a symlink: `data` is its target */
	mode_t perm; /* files: 0444, or less; symlinks: 0777 */
	char *data;
	size_t size;
	size_t *children;
	size_t n_children, cap_children;
};

struct extres_tree_builder {
	struct bnode *nodes;
	size_t n, cap;
	/* Every name (NUL-terminated) and content, in the order added: the
	 * tree takes it whole, instead of a block per name and content. */
	char *pool;
	size_t pool_len, pool_cap;
};

static uint64_t fnv_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;

	while (len--) {
		h ^= *s++;
		h *= FNV_PRIME;
	}
	return h;
}

static uint64_t name_hash(uint64_t parent, const char *name)
{
	return mix(fnv_bytes(parent ^ FNV_OFFSET, name, strlen(name)));
}

int extres_tree_builder_new(struct extres_tree_builder **ret)
{
	struct extres_tree_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->cap = 16;
	b->nodes = calloc(b->cap, sizeof(*b->nodes));
	if (!b->nodes) {
		free(b);
		return -ENOMEM;
	}
	b->n = 1;
	b->nodes[0].is_dir = 1;
	*ret = b;
	return 0;
}

void extres_tree_builder_free(struct extres_tree_builder *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		free(b->nodes[i].children);
	free(b->nodes);
	free(b->pool);
	free(b);
}

/* Room for `len` more bytes in the pool. */
static int pool_reserve(struct extres_tree_builder *b, size_t len)
{
	size_t cap = b->pool_cap ? b->pool_cap : 4096;
	char *pool;

	if (len <= b->pool_cap - b->pool_len)
		return 0;
	while (cap - b->pool_len < len) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	pool = realloc(b->pool, cap);
	if (!pool)
		return -ENOMEM;
	b->pool = pool;
	b->pool_cap = cap;
	return 0;
}

static int add_node(struct extres_tree_builder *b, size_t parent,
		    const char *name, int is_dir, mode_t perm, const char *data,
		    size_t size, size_t *ret_id, struct extres_err *err)
{
	size_t id, name_len = strlen(name);
	struct bnode *p, *n;

	if (parent >= b->n || !b->nodes[parent].is_dir)
		return extres_err_set(err, EINVAL, "no directory with id %zu",
				      parent);
	if (name[0] == '\0' || strchr(name, '/') || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0 || name_len > 255)
		return extres_err_set(err, EINVAL, "invalid file name '%s'",
				      name);
	/* Duplicate names are found by extres_tree_seal(), in O(1) each. */
	p = &b->nodes[parent];
	if (b->n == b->cap) {
		struct bnode *nodes =
			realloc(b->nodes, 2 * b->cap * sizeof(*nodes));

		if (!nodes)
			return extres_err_set(err, ENOMEM, "out of memory");
		b->nodes = nodes;
		b->cap *= 2;
		p = &b->nodes[parent];
	}
	if (p->n_children == p->cap_children) {
		size_t cap = p->cap_children ? 2 * p->cap_children : 4;
		size_t *c = realloc(p->children, cap * sizeof(*c));

		if (!c)
			return extres_err_set(err, ENOMEM, "out of memory");
		p->children = c;
		p->cap_children = cap;
	}
	if (!is_dir && size > SIZE_MAX - name_len - 1)
		return extres_err_set(err, ENOMEM, "out of memory");
	if (pool_reserve(b, name_len + 1 + (is_dir ? 0 : size)) < 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	id = b->n;
	n = &b->nodes[id];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->pos = p->n_children;
	n->is_dir = is_dir;
	n->perm = perm;
	n->name_off = b->pool_len;
	memcpy(b->pool + b->pool_len, name, name_len + 1);
	b->pool_len += name_len + 1;
	if (!is_dir) {
		n->data_off = b->pool_len;
		/* An empty file may come without a buffer. */
		if (size)
			memcpy(b->pool + b->pool_len, data, size);
		b->pool_len += size;
		n->size = size;
	}
	p->children[p->n_children++] = id;
	b->n++;
	if (ret_id)
		*ret_id = id;
	return 0;
}

int extres_tree_add_dir(struct extres_tree_builder *b, size_t parent,
			const char *name, size_t *ret_id,
			struct extres_err *err)
{
	return add_node(b, parent, name, 1, 0555, NULL, 0, ret_id, err);
}

int extres_tree_add_file(struct extres_tree_builder *b, size_t parent,
			 const char *name, const char *data, size_t size,
			 size_t *ret_id, struct extres_err *err)
{
	return add_node(b, parent, name, 0, 0444, data, size, ret_id, err);
}

int extres_tree_add_symlink(struct extres_tree_builder *b, size_t parent,
			    const char *name, const char *target,
			    size_t *ret_id, struct extres_err *err)
{
	size_t id;
	int r;

	r = add_node(b, parent, name, 0, 0777, target, strlen(target), &id,
		     err);
	if (r < 0)
		return r;
	b->nodes[id].is_link = 1;
	if (ret_id)
		*ret_id = id;
	return 0;
}

int extres_tree_add_file_perm(struct extres_tree_builder *b, size_t parent,
			      const char *name, const char *data, size_t size,
			      mode_t perm, size_t *ret_id,
			      struct extres_err *err)
{
	if (perm & ~(mode_t)0444)
		return extres_err_set(err, EINVAL,
				      "'%s': mode %04o is not read-only", name,
				      (unsigned)perm);
	return add_node(b, parent, name, 0, perm, data, size, ret_id, err);
}

void extres_tree_free(struct extres_tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_strings; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->nodes);
	free(t->child_ptrs);
	free(t->by_ino);
	free(t->by_name);
	free(t);
}

void extres_tree_index_ino(struct extres_tree *t, const struct extres_node *n)
{
	size_t i = mix(n->ino) & t->mask;

	while (t->by_ino[i])
		i = (i + 1) & t->mask;
	t->by_ino[i] = (uint32_t)(n - t->nodes) + 1;
}

/* -EEXIST if the directory already has a child of that name. */
static int insert_name(struct extres_tree *t, const struct extres_node *n)
{
	size_t i = name_hash(n->parent, n->name) & t->mask;

	for (; t->by_name[i]; i = (i + 1) & t->mask)
		if (slot_node(t, t->by_name[i])->parent == n->parent &&
		    strcmp(slot_node(t, t->by_name[i])->name, n->name) == 0)
			return -EEXIST;
	t->by_name[i] = (uint32_t)(n - t->nodes) + 1;
	return 0;
}

/* Whether file node `bn` holds what `p`, the previous tree's file at the
 * same path, held. */
static int same_file(const struct bnode *bn, const struct extres_node *p)
{
	return p && !bn->is_dir && !S_ISDIR(p->mode) &&
	       (S_ISLNK(p->mode) ? 1 : 0) == bn->is_link &&
	       (p->mode & 07777) == bn->perm && p->size == bn->size &&
	       memcmp(p->data, bn->data, bn->size) == 0;
}

/* Whether directory `n` has exactly the children (names and inode numbers,
 * in order) that `p`, the previous tree's directory at its path, had. */
static int same_dir(const struct extres_node *n, const struct extres_node *p)
{
	size_t c;

	if (!p || !S_ISDIR(p->mode) || p->n_children != n->n_children)
		return 0;
	for (c = 0; c < n->n_children; c++)
		if (p->children[c]->ino != n->children[c]->ino ||
		    strcmp(p->children[c]->name, n->children[c]->name))
			return 0;
	return 1;
}

/* The child of `p`, prev's directory at bn's parent's path, named as `bn`,
 * or NULL. A reload mostly lists the same names in the same order, so the
 * same place is tried before the table. */
static const struct extres_node *prev_child(const struct extres_tree *prev,
					    const struct extres_node *p,
					    const struct bnode *bn)
{
	if (prev->by_name && bn->pos < p->n_children &&
	    strcmp(p->children[bn->pos]->name, bn->name) == 0)
		return p->children[bn->pos];
	return extres_tree_lookup(prev, p->ino, bn->name);
}

static int ino_free(const struct extres_tree *t, const struct extres_tree *prev,
		    uint64_t ino)
{
	return ino > EXTRES_ROOT_INO && !extres_tree_get(t, ino) &&
	       !(prev && extres_tree_get(prev, ino));
}

int extres_tree_seal(struct extres_tree_builder *b, struct timespec now,
		     const struct extres_tree *prev, struct extres_tree **ret,
		     struct extres_err *err)
{
	struct extres_tree *t = NULL;
	const struct extres_node **was = NULL;
	uint64_t *path_hash = NULL;
	size_t cap = 16, i, n_children = 0, next_child = 0;
	char *pool;
	int r;
	int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;

	t = calloc(1, sizeof(*t));
	/* The tables hold 32-bit indexes. */
	if (!t || b->n >= UINT32_MAX)
		goto fail;
	t->n = b->n;
	t->serial = prev ? prev->serial + 1 : 0;
	/* At most three quarters full: short probes, and half the slots of
	 * a table twice the nodes, which a large tree felt. */
	while (cap < b->n + b->n / 3 + 1)
		cap *= 2;
	t->mask = cap - 1;
	for (i = 0; i < b->n; i++)
		n_children += b->nodes[i].n_children;
	t->nodes = calloc(b->n, sizeof(*t->nodes));
	t->child_ptrs =
		calloc(n_children ? n_children : 1, sizeof(*t->child_ptrs));
	t->strings = calloc(1, sizeof(*t->strings));
	t->by_ino = calloc(cap, sizeof(*t->by_ino));
	t->by_name = calloc(cap, sizeof(*t->by_name));
	path_hash = calloc(b->n, sizeof(*path_hash));
	was = calloc(b->n, sizeof(*was));
	if (!t->nodes || !t->child_ptrs || !t->strings || !t->by_ino ||
	    !t->by_name || !path_hash || !was)
		goto fail;
	/* Names and contents go in one block, the builder's pool, taken
	 * whole and cut to its length: a tree lives long, and tens of
	 * thousands of small blocks of its own would leave the heap in holes
	 * that outlive it. It moves no more, so the nodes point into it. */
	if (b->pool) {
		pool = realloc(b->pool, b->pool_len);
		if (pool)
			b->pool = pool;
		t->strings[0] = b->pool;
		t->n_strings = 1;
	}
	for (i = 1; i < b->n; i++) {
		b->nodes[i].name = b->pool + b->nodes[i].name_off;
		if (!b->nodes[i].is_dir)
			b->nodes[i].data = b->pool + b->nodes[i].data_off;
	}
	b->pool = NULL;

	/* Parents always precede their children (ids grow), so one pass
	 * sees every parent's inode number before its children need it. */
	for (i = 0; i < b->n; i++) {
		struct bnode *bn = &b->nodes[i];
		struct extres_node *n = &t->nodes[i];
		size_t c;

		if (i == 0) {
			n->ino = EXTRES_ROOT_INO;
			n->parent = EXTRES_ROOT_INO;
			n->name = "";
			path_hash[0] = FNV_OFFSET;
			was[0] = prev ? extres_tree_get(prev, EXTRES_ROOT_INO) :
					NULL;
		} else {
			const struct extres_node *p = was[bn->parent];
			uint64_t ino;

			path_hash[i] = fnv_bytes(
				fnv_bytes(path_hash[bn->parent], "/", 1),
				bn->name, strlen(bn->name));
			was[i] = p && S_ISDIR(p->mode) ?
					 prev_child(prev, p, bn) :
					 NULL;
			/*
			 * What is unchanged keeps its number; a directory
			 * that stays keeps it too. A changed file gets a new
			 * one, so that a reader holding the old file open
			 * goes on reading the old bytes, whole, instead of
			 * the old beginning and the new end (which a value
			 * changed in place under the same number would give
			 * any reader that reads until a read returns 0, as
			 * cat does: its second read, past the old size,
			 * fetches the new size and the new bytes from
			 * there). New numbers come from the path and the
			 * tree's serial, and never repeat one the previous
			 * tree used.
			 */
			if (was[i] && (bn->is_dir ? S_ISDIR(was[i]->mode) :
						    same_file(bn, was[i]))) {
				ino = was[i]->ino;
			} else {
				for (ino = mix(path_hash[i] +
					       t->serial *
						       0x9e3779b97f4a7c15ULL);
				     !ino_free(t, prev, ino);
				     ino = mix(ino + 1))
					;
			}
			n->ino = ino;
			n->parent = t->nodes[bn->parent].ino;
			n->name = bn->name;
		}
		if (bn->is_dir) {
			n->mode = S_IFDIR | 0555;
			n->children = &t->child_ptrs[next_child];
			n->n_children = bn->n_children;
			for (c = 0; c < bn->n_children; c++) {
				t->child_ptrs[next_child++] =
					&t->nodes[bn->children[c]];
				if (b->nodes[bn->children[c]].is_dir)
					n->n_subdirs++;
			}
		} else {
			n->mode = (bn->is_link ? S_IFLNK : S_IFREG) | bn->perm;
			n->data = bn->data;
			n->size = bn->size;
			n->mtime_ns = was[i] && was[i]->ino == n->ino ?
					      was[i]->mtime_ns :
					      now_ns;
		}
		extres_tree_index_ino(t, n);
		if (i > 0 && insert_name(t, n) < 0) {
			r = extres_err_set(err, EEXIST,
					   "'%s' exists twice in one directory",
					   n->name);
			goto fail_msg;
		}
	}
	/* A directory changed when its list of names and numbers did; its
	 * children all have their numbers now. */
	for (i = 0; i < b->n; i++) {
		struct extres_node *n = &t->nodes[i];

		if (S_ISDIR(n->mode))
			n->mtime_ns =
				same_dir(n, was[i]) ? was[i]->mtime_ns : now_ns;
	}
	free(was);
	free(path_hash);
	extres_tree_builder_free(b);
	*ret = t;
	return 0;
fail:
	r = extres_err_set(err, ENOMEM, "out of memory building the tree");
fail_msg:
	free(was);
	free(path_hash);
	extres_tree_free(t);
	extres_tree_builder_free(b);
	return r;
}

const struct extres_node *extres_tree_get(const struct extres_tree *t,
					  uint64_t ino)
{
	size_t i;

	for (i = mix(ino) & t->mask; t->by_ino[i]; i = (i + 1) & t->mask) {
		const struct extres_node *n = slot_node(t, t->by_ino[i]);

		if (n->ino == ino)
			/* A file without bytes was shed (see
			 * extres_tree_shed()). */
			return S_ISDIR(n->mode) || n->data ? n : NULL;
	}
	return NULL;
}

const struct extres_node *extres_tree_lookup(const struct extres_tree *t,
					     uint64_t parent, const char *name)
{
	size_t i;

	/* Retired trees are only ever asked by inode number. */
	if (!t->by_name)
		return NULL;
	for (i = name_hash(parent, name) & t->mask; t->by_name[i];
	     i = (i + 1) & t->mask) {
		const struct extres_node *n = slot_node(t, t->by_name[i]);

		if (n->parent == parent && strcmp(n->name, name) == 0)
			return n;
	}
	return NULL;
}

void extres_tree_stat(const struct extres_node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_nlink = S_ISDIR(n->mode) ? 2 + n->n_subdirs : 1;
	st->st_size = S_ISDIR(n->mode) ? 0 : (off_t)n->size;
	st->st_blksize = 4096;
	st->st_blocks = S_ISDIR(n->mode) ? 0 : ((off_t)n->size + 511) / 512;
	st->st_mtim.tv_sec = (time_t)(n->mtime_ns / 1000000000);
	st->st_mtim.tv_nsec = (long)(n->mtime_ns % 1000000000);
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

size_t extres_tree_size(const struct extres_tree *t)
{
	return t->n;
}

uint64_t extres_tree_serial(const struct extres_tree *t)
{
	return t->serial;
}

static int diff_node(const struct extres_tree *new, const struct extres_node *o,
		     int (*fn)(void *ctx, int what,
			       const struct extres_node *old,
			       const struct extres_node *node),
		     void *ctx)
{
	const struct extres_node *n = extres_tree_get(new, o->ino);
	size_t c;
	int r;

	if (!n || !!S_ISDIR(n->mode) != !!S_ISDIR(o->mode) ||
	    n->parent != o->parent || strcmp(n->name, o->name) != 0)
		return fn(ctx, EXTRES_TREE_REMOVED, o, NULL);
	if (n->mtime_ns != o->mtime_ns) {
		r = fn(ctx, EXTRES_TREE_CHANGED, o, n);
		if (r < 0)
			return r;
	}
	for (c = 0; c < o->n_children; c++) {
		r = diff_node(new, o->children[c], fn, ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

int extres_tree_diff(const struct extres_tree *old,
		     const struct extres_tree *new,
		     int (*fn)(void *ctx, int what,
			       const struct extres_node *old,
			       const struct extres_node *node),
		     void *ctx)
{
	return diff_node(new, extres_tree_get(old, EXTRES_ROOT_INO), fn, ctx);
}
