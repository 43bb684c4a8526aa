/* SPDX-License-Identifier: MIT */
#include "config/param.h"

#include <errno.h>
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
