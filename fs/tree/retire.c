/* SPDX-License-Identifier: MIT */
/*
 * Retired trees keep only what a reader of an older generation may still
 * ask for, so that a line of reloads costs what changed, not a whole tree
 * each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree/tree.h"
#include "tree/tree_internal.h"

/* Whether directories `o` and `n` list the same names with the same
 * numbers, in the same order. */
static int same_listing(const struct extres_node *o,
			const struct extres_node *n)
{
	size_t c;

	if (o->n_children != n->n_children)
		return 0;
	for (c = 0; c < o->n_children; c++)
		if (o->children[c]->ino != n->children[c]->ino ||
		    strcmp(o->children[c]->name, n->children[c]->name) != 0)
			return 0;
	return 1;
}

/* Whether `o` must be kept: `new` has no node by its number that stands
 * where it stood and reads as it read (a file: and a reader may still ask
 * for it). */
static int kept(const struct extres_tree *new, const struct extres_node *o,
		int (*in_use)(void *ctx, uint64_t ino), void *ctx)
{
	const struct extres_node *n = extres_tree_get(new, o->ino);
	int lost = !n || !!S_ISDIR(n->mode) != !!S_ISDIR(o->mode) ||
		   n->parent != o->parent || strcmp(n->name, o->name) != 0;

	if (S_ISDIR(o->mode))
		return lost || !same_listing(o, n);
	return lost && in_use(ctx, o->ino);
}

/* Copy `len` bytes to *pool and move it on. */
static const char *put(char **pool, const void *p, size_t len)
{
	char *s = *pool;

	memcpy(s, p, len);
	*pool += len;
	return s;
}

int extres_tree_retire(const struct extres_tree *old,
		       const struct extres_tree *new,
		       int (*in_use)(void *ctx, uint64_t ino), void *ctx,
		       struct extres_tree **ret)
{
	struct extres_tree *t = NULL;
	size_t *slot = NULL; /* old index -> index in t, or SIZE_MAX */
	size_t i, c, n_kept = 0, n_files = 0, n_ptrs = 0, bytes = 1, cap = 16;
	size_t next = 0, next_ptr = 0;
	char *pool;

	slot = malloc((old->n ? old->n : 1) * sizeof(*slot));
	if (!slot)
		goto fail;
	/* Count first: the nodes kept whole, and the children of the
	 * directories kept, which need at least a name and a number. */
	for (i = 0; i < old->n; i++) {
		const struct extres_node *o = &old->nodes[i];

		slot[i] = SIZE_MAX;
		if (!kept(new, o, in_use, ctx))
			continue;
		slot[i] = 0;
		n_kept++;
		n_files += !S_ISDIR(o->mode);
		bytes += strlen(o->name) + 1;
		n_ptrs += o->n_children;
		for (c = 0; c < o->n_children; c++)
			bytes += strlen(o->children[c]->name) + 1;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto fail;
	while (cap < 2 * n_kept)
		cap *= 2;
	t->mask = cap - 1;
	t->serial = old->serial;
	t->n = n_kept;
	/* At most one node per kept node and per child of one. */
	t->nodes = calloc(n_kept + n_ptrs ? n_kept + n_ptrs : 1,
			  sizeof(*t->nodes));
	t->child_ptrs = calloc(n_ptrs ? n_ptrs : 1, sizeof(*t->child_ptrs));
	/* Names in one block; each file's bytes in one of their own, which
	 * extres_tree_shed() frees once no reader may ask for them. */
	t->strings = calloc(1 + n_files, sizeof(*t->strings));
	t->by_ino = calloc(cap, sizeof(*t->by_ino));
	if (!t->nodes || !t->child_ptrs || !t->strings || !t->by_ino)
		goto fail;
	t->strings[0] = pool = malloc(bytes);
	if (!pool)
		goto fail;
	t->n_strings = 1;
	for (i = 0; i < old->n; i++) {
		const struct extres_node *o = &old->nodes[i];
		struct extres_node *n;

		if (slot[i] == SIZE_MAX)
			continue;
		slot[i] = next;
		n = &t->nodes[next++];
		*n = *o;
		n->name = put(&pool, o->name, strlen(o->name) + 1);
		if (!S_ISDIR(o->mode)) {
			char *data = malloc(o->size ? o->size : 1);

			if (!data)
				goto fail;
			t->strings[t->n_strings++] = data;
			n->data = memcpy(data, o->data, o->size);
		}
		extres_tree_index_ino(t, n);
	}
	/* Children: the kept node itself, else a name-only entry of the
	 * listing (the child's name, number, mode and size). Such an entry
	 * is not indexed by number, so nothing reads its bytes or children,
	 * which the tree that lost them no longer keeps. */
	for (i = 0; i < old->n; i++) {
		const struct extres_node *o = &old->nodes[i];
		struct extres_node *n;

		if (slot[i] == SIZE_MAX || !S_ISDIR(o->mode))
			continue;
		n = &t->nodes[slot[i]];
		n->children = &t->child_ptrs[next_ptr];
		for (c = 0; c < o->n_children; c++) {
			const struct extres_node *oc = o->children[c];
			size_t k = (size_t)(oc - old->nodes);
			struct extres_node *entry;

			if (slot[k] != SIZE_MAX) {
				t->child_ptrs[next_ptr++] = &t->nodes[slot[k]];
				continue;
			}
			entry = &t->nodes[next++];
			*entry = *oc;
			entry->name =
				put(&pool, oc->name, strlen(oc->name) + 1);
			entry->data = NULL;
			entry->children = NULL;
			entry->n_children = 0;
			t->child_ptrs[next_ptr++] = entry;
		}
	}
	free(slot);
	*ret = t;
	return 0;
fail:
	free(slot);
	extres_tree_free(t);
	return -ENOMEM;
}

void extres_tree_shed(struct extres_tree *t,
		      int (*in_use)(void *ctx, uint64_t ino), void *ctx)
{
	size_t i, k;

	for (i = 0; i < t->n; i++) {
		struct extres_node *n = &t->nodes[i];

		if (S_ISDIR(n->mode) || !n->data || in_use(ctx, n->ino))
			continue;
		for (k = 1; k < t->n_strings; k++)
			if (t->strings[k] == n->data) {
				free(t->strings[k]);
				t->strings[k] = NULL;
			}
		/* Its size stays: listings of its directory still stat it. */
		n->data = NULL;
	}
}
