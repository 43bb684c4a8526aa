/* SPDX-License-Identifier: MIT */
/*
 * external-resource.<name>.amount: how many devices a resource takes, as
 * the least and the most. The forms, with 1 <= N <= M <= EXTRES_MAX_AMOUNT:
 *
 *   N      exactly N, Flink's integer                     {N, N}
 *   N-M    every free device up to M; fewer than N fails  {N, M}
 *   N-     at least N, and every other free device        {N, EXTRES_MAX_AMOUNT}
 *   all    every free device, at least one (as "1-")       {1, EXTRES_MAX_AMOUNT}
 *
 * A driver is asked for `max` devices (a Flink discovery script prints at
 * most its first argument), so `N-` and `all` ask for EXTRES_MAX_AMOUNT,
 * as a node pool does. {0, 0} is a pool's amount left unset.
 */
#ifndef EXTRES_AMOUNT_H
#define EXTRES_AMOUNT_H

#include <stddef.h>
#include <stdint.h>

#define EXTRES_MAX_AMOUNT 4096
/* The longest text extres_amount_format() and extres_amount_wanted()
 * write, with the NUL: "at least 4096 (amount 4096-)". */
#define EXTRES_AMOUNT_TEXT_MAX 40

struct extres_amount {
	uint64_t min, max;
};

/*
 * Read one of the forms above from `text` (the YAML scalar, as written: no
 * blanks, signs, "0x" or other spellings of "all"). 0 with *ret set, or
 * -EINVAL with *ret untouched and *ret_why pointing at a static sentence
 * saying what the value must be ("it must be at least 1", ...), for the
 * caller to put after the key and the value.
 */
int extres_amount_parse(const char *text, struct extres_amount *ret,
			const char **ret_why);

/* 1 when `a` is an exact count (Flink's integer, or a pool's unset {0,0}). */
int extres_amount_is_exact(const struct extres_amount *a);

/* 1 for `all` (every free device, at least one), else 0. */
int extres_amount_is_all(const struct extres_amount *a);

/*
 * `a` in its shortest form, into buf[EXTRES_AMOUNT_TEXT_MAX]: "3", "2-4",
 * "2-", "all" (so "1-4096" reads "all"); "0" for a pool's unset amount.
 * Returns buf.
 */
char *extres_amount_format(const struct extres_amount *a, char *buf);

/*
 * What an allocation wanted, for its error messages, into
 * buf[EXTRES_AMOUNT_TEXT_MAX]: "3" for an exact count, else "at least N
 * (amount FORM)". Returns buf.
 */
char *extres_amount_wanted(const struct extres_amount *a, char *buf);

#endif
