/* SPDX-License-Identifier: MIT */
#include "views/nfd_view.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/* Kubernetes' limit on a label value and on a name's part after the
 * prefix. */
#define LABEL_MAX 63

static int alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* `s` under the label rules into buf (LABEL_MAX + 1 bytes), cut to `max`
 * characters: "" when nothing is left. */
static const char *label_text(const char *s, size_t max,
			      char buf[LABEL_MAX + 1])
{
	size_t len = 0, i;

	for (; *s && !alnum(*s); s++)
		;
	for (i = 0; s[i] && len < max; i++)
		buf[len++] = alnum(s[i]) || s[i] == '.' || s[i] == '_' ||
					     s[i] == '-' ?
				     s[i] :
				     '-';
	while (len && !alnum(buf[len - 1]))
		len--;
	buf[len] = '\0';
	return buf;
}

/* The value of `key` every info of `r` that has it agrees on, or NULL. */
static const char *common(const struct extres_view_resource *r, const char *key)
{
	const char *v, *first = NULL;
	size_t j;

	for (j = 0; j < r->n_infos; j++) {
		v = extres_info_get(&r->infos[j], key);
		if (!v)
			continue;
		if (first && strcmp(first, v) != 0)
			return NULL;
		first = v;
	}
	return first;
}

/* `NAME.what=value` when the value leaves something. */
static void put(FILE *f, const char *name, const char *what, const char *v)
{
	char buf[LABEL_MAX + 1];

	if (!v || !label_text(v, LABEL_MAX, buf)[0])
		return;
	fprintf(f, "%s%s.%s=%s\n", EXTRES_NFD_PREFIX, name, what, buf);
}

static void resource(FILE *f, const struct extres_view_resource *r)
{
	/* Room for the longest suffix: ".compute.major". */
	char name[LABEL_MAX + 1], num[32], *dot;
	const char *cap = common(r, "compute_cap");

	if (!label_text(r->name, LABEL_MAX - strlen(".compute.major"), name)[0])
		return;
	snprintf(num, sizeof(num), "%zu", r->n_infos);
	put(f, name, "count", num);
	put(f, name, "product", common(r, "name"));
	put(f, name, "memory", common(r, "memory.total"));
	if (!cap || !(dot = strchr(cap, '.')))
		return;
	snprintf(num, sizeof(num), "%.*s", (int)(dot - cap), cap);
	if (num[0] && strspn(num, "0123456789") == strlen(num) && dot[1] &&
	    strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
		put(f, name, "compute.major", num);
		put(f, name, "compute.minor", dot + 1);
	}
}

int extres_view_nfd(const struct extres_view_resource *res, size_t n,
		    time_t expires, char **ret_text, size_t *ret_len)
{
	char *text = NULL, when[32];
	size_t len = 0, i;
	struct tm tm;
	FILE *f;
	int r;

	if (!gmtime_r(&expires, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "1970-01-01T00:00:00Z");
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "# +expiry-time=%s\n", when);
	for (i = 0; i < n; i++)
		resource(f, &res[i]);
	r = extres_memstream_close(f, &text);
	if (r < 0)
		return r;
	*ret_text = text;
	*ret_len = len;
	return 0;
}
