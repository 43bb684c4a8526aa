/* SPDX-License-Identifier: MIT */
/*
 * A caller-owned buffer for the one message that explains a failure.
 *
 * Library code (config, drivers, allocation) does not log: it returns a
 * negative errno and, where the caller passed a struct extres_err, a message
 * that names the file, key or value at fault. main() and the FUSE layer decide
 * what to print.
 */
#ifndef EXTRES_ERR_H
#define EXTRES_ERR_H

#include <stdarg.h>

#define EXTRES_ERR_MAX 2048

struct extres_err {
	char msg[EXTRES_ERR_MAX];
};

/*
 * Format a message into `err` (which may be NULL: then nothing is kept) and
 * return -errnum, so that `return extres_err_set(err, EINVAL, "...")` reads
 * naturally. `errnum` is a positive errno value.
 */
int extres_err_set(struct extres_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int extres_err_setv(struct extres_err *err, int errnum, const char *fmt,
		    va_list ap) __attribute__((format(printf, 3, 0)));

/* Add to the end of the message already in `err` (NULL: nothing kept), for
 * a second failure that must not hide the first. */
void extres_err_append(struct extres_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Put "prefix: " in front of the message already in `err`; returns -errnum. */
int extres_err_prefix(struct extres_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
