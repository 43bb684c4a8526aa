/* SPDX-License-Identifier: MIT */
#include "base/err.h"

#include <stdio.h>
#include <string.h>

int extres_err_setv(struct extres_err *err, int errnum, const char *fmt,
		    va_list ap)
{
	if (err)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -errnum;
}

int extres_err_set(struct extres_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	extres_err_setv(err, errnum, fmt, ap);
	va_end(ap);
	return -errnum;
}

int extres_err_prefix(struct extres_err *err, int errnum, const char *fmt, ...)
{
	char joined[2 * EXTRES_ERR_MAX + 2];
	va_list ap;
	int n;

	if (!err)
		return -errnum;
	va_start(ap, fmt);
	n = vsnprintf(joined, EXTRES_ERR_MAX, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n >= EXTRES_ERR_MAX)
		n = EXTRES_ERR_MAX - 1;
	joined[n++] = ':';
	joined[n++] = ' ';
	memcpy(joined + n, err->msg, strnlen(err->msg, EXTRES_ERR_MAX - 1) + 1);
	/* Long messages keep their beginning, which names the place. */
	memcpy(err->msg, joined, EXTRES_ERR_MAX - 1);
	err->msg[EXTRES_ERR_MAX - 1] = '\0';
	return -errnum;
}

void extres_err_append(struct extres_err *err, const char *fmt, ...)
{
	size_t len;
	va_list ap;

	if (!err)
		return;
	len = strnlen(err->msg, sizeof(err->msg) - 1);
	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}
