/* SPDX-License-Identifier: MIT */
/* external-resource.<name>.amount: N, N-M, N- or all. */
#include "config/amount.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

static const char *const why_form =
	"it must be a whole number N, a range N-M or N-, or all";
static const char *const why_min = "it must be at least 1";
static const char *const why_range_min =
	"both ends of a range must be at least 1";
/* The limit, spelt out once. */
#define STRING_OF(x) #x
#define STRING(x) STRING_OF(x)
static const char *const why_max =
	"it must be at most " STRING(EXTRES_MAX_AMOUNT);
static const char *const why_order = "the range's minimum is above its maximum";

/* One bound: digits only, 1 to EXTRES_MAX_AMOUNT. A digit string too long
 * for 64 bits is still "too big", not "not a number". */
static int parse_bound(const char *s, size_t len, int in_range, uint64_t *ret,
		       const char **ret_why)
{
	int r = extres_parse_dec(s, len, EXTRES_MAX_AMOUNT, ret);

	if (r == -ERANGE) {
		*ret_why = why_max;
		return -EINVAL;
	}
	if (r < 0) {
		*ret_why = why_form;
		return -EINVAL;
	}
	if (*ret == 0) {
		*ret_why = in_range ? why_range_min : why_min;
		return -EINVAL;
	}
	return 0;
}

int extres_amount_parse(const char *text, struct extres_amount *ret,
			const char **ret_why)
{
	struct extres_amount a = { 1, EXTRES_MAX_AMOUNT };
	const char *dash;
	size_t len = strlen(text);
	int r;

	if (strcmp(text, "all") == 0)
		goto out;
	/* "-1" reads as a negative count, as it did before ranges (a range
	 * needs its minimum). */
	if (text[0] == '-' && len > 1 &&
	    strspn(text + 1, "0123456789") == len - 1) {
		*ret_why = why_min;
		return -EINVAL;
	}
	dash = strchr(text, '-');
	r = parse_bound(text, dash ? (size_t)(dash - text) : len, !!dash,
			&a.min, ret_why);
	if (r < 0)
		return r;
	if (!dash) {
		a.max = a.min;
		goto out;
	}
	if (dash[1] != '\0') {
		r = parse_bound(dash + 1, strlen(dash + 1), 1, &a.max, ret_why);
		if (r < 0)
			return r;
		if (a.max < a.min) {
			*ret_why = why_order;
			return -EINVAL;
		}
	}
out:
	*ret = a;
	return 0;
}

int extres_amount_is_exact(const struct extres_amount *a)
{
	return a->min == a->max;
}

int extres_amount_is_all(const struct extres_amount *a)
{
	return a->min == 1 && a->max == EXTRES_MAX_AMOUNT;
}

char *extres_amount_format(const struct extres_amount *a, char *buf)
{
	if (a->min == a->max)
		snprintf(buf, EXTRES_AMOUNT_TEXT_MAX, "%" PRIu64, a->min);
	else if (extres_amount_is_all(a))
		snprintf(buf, EXTRES_AMOUNT_TEXT_MAX, "all");
	else if (a->max == EXTRES_MAX_AMOUNT)
		snprintf(buf, EXTRES_AMOUNT_TEXT_MAX, "%" PRIu64 "-", a->min);
	else
		snprintf(buf, EXTRES_AMOUNT_TEXT_MAX, "%" PRIu64 "-%" PRIu64,
			 a->min, a->max);
	return buf;
}

char *extres_amount_wanted(const struct extres_amount *a, char *buf)
{
	char form[EXTRES_AMOUNT_TEXT_MAX];

	if (a->min == a->max)
		return extres_amount_format(a, buf);
	snprintf(buf, EXTRES_AMOUNT_TEXT_MAX,
		 "at least %" PRIu64 " (amount %s)", a->min,
		 extres_amount_format(a, form));
	return buf;
}
