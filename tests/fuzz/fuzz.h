/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share. Each target defines LLVMFuzzerTestOneInput();
 * libFuzzer calls it with generated inputs, replay.c with the corpus files.
 * A broken invariant must crash, so that libFuzzer keeps the input and the
 * replay test fails: FUZZ_CHECK says which check and aborts.
 */
#ifndef EXTRES_FUZZ_H
#define EXTRES_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
