/* SPDX-License-Identifier: MIT */
/* The kernel's lookup counts (daemon/known.c), against a plain model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "daemon/known.h"

static void test_counts(void **state)
{
	struct extres_known k;

	assert_int_equal(extres_known_init(&k), 0);
	assert_false(extres_known_has(&k, 7));
	assert_int_equal(extres_known_add(&k, 7), 1);
	assert_int_equal(extres_known_add(&k, 7), 0);
	assert_true(extres_known_has(&k, 7));
	extres_known_forget(&k, 7, 1);
	assert_true(extres_known_has(&k, 7));
	extres_known_forget(&k, 7, 1);
	assert_false(extres_known_has(&k, 7));
	/* Forgetting what was never given changes nothing. */
	extres_known_forget(&k, 9, 3);
	assert_int_equal(extres_known_count(&k), 0);
	/* More forgotten than given: all of it. */
	assert_int_equal(extres_known_add(&k, 1), 1);
	extres_known_forget(&k, 1, 5);
	assert_false(extres_known_has(&k, 1));
	assert_int_equal(extres_known_add(&k, 1), 1);
	extres_known_destroy(&k);
}

/* Random adds and forgets of numbers that collide a lot (few distinct
 * values, a table that grows and empties), checked after every step
 * against an array of counts: removal must never lose another entry. */
static void test_against_model(void **state)
{
	enum { N = 5000, STEPS = 200000 };
	uint64_t *model = calloc(N, sizeof(*model));
	struct extres_known k;
	size_t used = 0, i, step;
	unsigned seed = 12345;

	assert_non_null(model);
	assert_int_equal(extres_known_init(&k), 0);
	for (step = 0; step < STEPS; step++) {
		uint64_t ino;
		int add;

		seed = seed * 1103515245u + 12345u;
		ino = 1 + (seed >> 8) % N;
		/* Mostly adds in the first half, mostly forgets after. */
		add = ((seed >> 4) & 3) != 0;
		if (step > STEPS / 2)
			add = !add;
		if (add) {
			assert_int_equal(extres_known_add(&k, ino),
					 model[ino - 1] == 0);
			used += model[ino - 1] == 0;
			model[ino - 1]++;
		} else {
			uint64_t n = 1 + (seed >> 20) % 2;

			extres_known_forget(&k, ino, n);
			if (model[ino - 1] > 0 && model[ino - 1] <= n)
				used--;
			model[ino - 1] =
				model[ino - 1] > n ? model[ino - 1] - n : 0;
		}
		if (step % 997 == 0)
			for (i = 0; i < N; i++)
				assert_int_equal(extres_known_has(&k, i + 1),
						 model[i] != 0);
		assert_int_equal(extres_known_count(&k), used);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(extres_known_has(&k, i + 1), model[i] != 0);
	extres_known_destroy(&k);
	free(model);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
