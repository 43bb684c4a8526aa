/* SPDX-License-Identifier: MIT */
#include "config/param.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int extres_param_append(struct extres_param *parent,
			const struct extres_param *child)
{
	struct extres_param *items = (struct extres_param *)parent->items;
	uint32_t n = parent->count;

	if (n == UINT32_MAX)
		return -ENOMEM;
	/* The capacity is implicit: the next power of two from the count. */
	if ((n & (n - 1)) == 0) {
		size_t cap = n ? (size_t)n * 2 : 1;

		items = realloc(items, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		parent->items = items;
	}
	items[n] = *child;
	parent->count = n + 1;
	return 0;
}

void extres_param_clear(struct extres_param *param)
{
	uint32_t i;

	if (!param)
		return;
	for (i = 0; i < param->count; i++)
		extres_param_clear((struct extres_param *)&param->items[i]);
	free((void *)param->items);
	free((char *)param->key);
	free((char *)param->value);
	memset(param, 0, sizeof(*param));
}

void extres_param_free(struct extres_param *param)
{
	extres_param_clear(param);
	free(param);
}

/* A packed tree: the root, every other param, then every string. */
struct param_block {
	atomic_size_t refs;
	struct extres_param root;
	struct extres_param items[];
};

/* Params below `p` (not itself) and the bytes of its strings, NULs
 * included. Bounded by what the document expands to (extres_yaml_load()),
 * as the recursion is by its depth. */
static void measure(const struct extres_param *p, size_t *n_items,
		    size_t *bytes)
{
	uint32_t i;

	if (p->key)
		*bytes += strlen(p->key) + 1;
	if (p->value)
		*bytes += strlen(p->value) + 1;
	*n_items += p->count;
	for (i = 0; i < p->count; i++)
		measure(&p->items[i], n_items, bytes);
}

static char *put_text(const char *src, char **text)
{
	size_t len;
	char *out = *text;

	if (!src)
		return NULL;
	len = strlen(src) + 1;
	memcpy(out, src, len);
	*text += len;
	return out;
}

/* `src` into *dst, its items taken from *next, its strings put at *text. */
static void fill(const struct extres_param *src, struct extres_param *dst,
		 struct extres_param **next, char **text)
{
	struct extres_param *items = *next;
	uint32_t i;

	*dst = (struct extres_param){ .kind = src->kind,
				      .count = src->count,
				      .line = src->line,
				      .column = src->column };
	dst->key = put_text(src->key, text);
	dst->value = put_text(src->value, text);
	if (!src->count)
		return;
	dst->items = items;
	*next += src->count;
	for (i = 0; i < src->count; i++)
		fill(&src->items[i], &items[i], next, text);
}

int extres_param_pack(const struct extres_param *src, struct extres_param **ret)
{
	struct param_block *block;
	struct extres_param *next;
	size_t n_items = 0, bytes = 0;
	char *text;

	measure(src, &n_items, &bytes);
	if (n_items >
	    (SIZE_MAX - sizeof(*block) - bytes) / sizeof(struct extres_param))
		return -ENOMEM;
	block = malloc(sizeof(*block) + n_items * sizeof(block->items[0]) +
		       bytes);
	if (!block)
		return -ENOMEM;
	atomic_init(&block->refs, 1);
	next = block->items;
	text = (char *)&block->items[n_items];
	fill(src, &block->root, &next, &text);
	*ret = &block->root;
	return 0;
}

static struct param_block *block_of(struct extres_param *packed)
{
	return (struct param_block *)((char *)packed -
				      offsetof(struct param_block, root));
}

struct extres_param *extres_param_ref(struct extres_param *packed)
{
	atomic_fetch_add(&block_of(packed)->refs, 1);
	return packed;
}

void extres_param_unref(struct extres_param *packed)
{
	struct param_block *block;

	if (!packed)
		return;
	block = block_of(packed);
	if (atomic_fetch_sub(&block->refs, 1) == 1)
		free(block);
}
