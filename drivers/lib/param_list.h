/* SPDX-License-Identifier: MIT */
/*
 * A parameter that lists names the way Flink writes its lists: a
 * comma-separated scalar ("0, 1,2") or a sequence of scalars. Items are
 * trimmed of whitespace and empty ones dropped, as Flink reads them.
 */
#ifndef EXTRES_DRIVERS_PARAM_LIST_H
#define EXTRES_DRIVERS_PARAM_LIST_H

#include <stddef.h>
#include <stdint.h>

#include <extres/driver.h>

/* How a list parameter is named in messages. */
struct param_list_words {
	const char *name; /* "indexes": param.indexes */
	const char *example; /* "0,1,2": "must be a list like '0,1,2'" */
	const char *items; /* "indexes": "... or a sequence of indexes" */
	const char *item; /* "a scalar index": "param.indexes[2] must be ..." */
};

/*
 * Check that `list` is a scalar or a sequence of scalars; set *ret_bound to
 * the most items param_list_next() can give (at least 1), for an array of
 * them. Returns 0, or host->error()'s -EINVAL with a message at the
 * offending position: "param.<name> must be a list like '<example>' or a
 * sequence of <items>", "param.<name>[<i>] must be <item>".
 */
int32_t param_list_check(const struct extres_host *host,
			 const struct param_list_words *words,
			 const struct extres_param *list, size_t *ret_bound);

/*
 * The first member of the MAPPING `params`, in file order, whose key is one
 * of `names` (NULL-terminated) followed by a dot: a mapping given where a
 * list belongs, which arrives flattened into dotted keys. NULL when none is.
 */
const struct extres_param *
param_list_flattened(const struct extres_param *params,
		     const char *const *names);

/* Where param_list_next() is in a list; start from PARAM_LIST_START. */
struct param_list_cursor {
	uint32_t index;
	const char *next;
};
#define PARAM_LIST_START ((struct param_list_cursor){ 0, NULL })

/*
 * The next non-empty item of a list that param_list_check() accepted: 1 with
 * its trimmed bytes in *ret_item and *ret_len (not NUL-terminated) and in
 * *ret_at the param to point at in a message (the sequence member, or the
 * whole scalar); 0 when none is left.
 */
int param_list_next(const struct extres_param *list,
		    struct param_list_cursor *cursor,
		    const struct extres_param **ret_at, const char **ret_item,
		    size_t *ret_len);

#endif
