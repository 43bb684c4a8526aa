/* SPDX-License-Identifier: MIT */
#include "lib/param_list.h"

#include <string.h>

#include <extres/driver_util.h>

#include "text_scan.h"

int32_t param_list_check(const struct extres_host *host,
			 const struct param_list_words *words,
			 const struct extres_param *list, size_t *ret_bound)
{
	size_t bound = 0;
	const char *s;
	uint32_t i;

	if (list->kind == EXTRES_PARAM_SCALAR) {
		bound = 1;
		for (s = list->value; *s; s++)
			bound += *s == ',';
	} else if (list->kind == EXTRES_PARAM_SEQUENCE) {
		bound = list->count;
	} else {
		return extres_param_error(
			host, list,
			"param.%s must be a list like '%s' or a sequence of %s",
			words->name, words->example, words->items);
	}
	for (i = 0; list->kind == EXTRES_PARAM_SEQUENCE && i < list->count; i++)
		if (list->items[i].kind != EXTRES_PARAM_SCALAR)
			return extres_param_error(host, &list->items[i],
						  "param.%s[%u] must be %s",
						  words->name, i, words->item);
	*ret_bound = bound ? bound : 1;
	return 0;
}

const struct extres_param *
param_list_flattened(const struct extres_param *params,
		     const char *const *names)
{
	const char *const *name;
	uint32_t i;
	size_t n;

	for (i = 0; params->kind == EXTRES_PARAM_MAPPING && i < params->count;
	     i++) {
		const struct extres_param *p = &params->items[i];

		for (name = names; *name; name++) {
			n = strlen(*name);
			if (strncmp(p->key, *name, n) == 0 && p->key[n] == '.')
				return p;
		}
	}
	return NULL;
}

int param_list_next(const struct extres_param *list,
		    struct param_list_cursor *cursor,
		    const struct extres_param **ret_at, const char **ret_item,
		    size_t *ret_len)
{
	const struct extres_param *at = list;
	const char *s, *e;

	for (;;) {
		if (list->kind == EXTRES_PARAM_SEQUENCE) {
			if (cursor->index >= list->count)
				return 0;
			at = &list->items[cursor->index++];
			s = at->value;
			e = s + strlen(s);
		} else {
			if (cursor->index == 0) {
				cursor->index = 1;
				cursor->next = list->value;
			}
			if (!cursor->next)
				return 0;
			s = cursor->next;
			e = strchrnul(s, ',');
			cursor->next = *e ? e + 1 : NULL;
		}
		while (s < e && text_is_space(*s))
			s++;
		while (e > s && text_is_space(e[-1]))
			e--;
		if (e > s)
			break;
	}
	*ret_at = at;
	*ret_item = s;
	*ret_len = (size_t)(e - s);
	return 1;
}
