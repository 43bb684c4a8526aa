/* SPDX-License-Identifier: MIT */
/* Small macros every layer may use. */
#ifndef EXTRES_MACRO_H
#define EXTRES_MACRO_H

/* Number of elements of an array (not a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
