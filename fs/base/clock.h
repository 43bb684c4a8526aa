/* SPDX-License-Identifier: MIT */
/* Time for deadlines: the monotonic clock, which no wall-clock step moves. */
#ifndef EXTRES_CLOCK_H
#define EXTRES_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC, from an arbitrary start. */
long long extres_now_ms(void);

#endif
