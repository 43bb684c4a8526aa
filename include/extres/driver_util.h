/* SPDX-License-Identifier: MIT */
/*
 * Helpers for driver authors, on top of <extres/driver.h>. Header-only (every
 * function is static inline and uses only what driver.h declares), so a
 * module that includes it links against nothing more. Not part of the ABI:
 * the core never sees these, only what they fill in and call.
 */
#ifndef EXTRES_DRIVER_UTIL_H
#define EXTRES_DRIVER_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <extres/driver.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 1 if the struct at `ptr` (a struct extres_host, extres_sink or
 * extres_driver_ops the other side made) is big enough to have `member`,
 * going by its own struct_size; else 0. Members that were appended must be
 * checked so before use, since the other side may predate them; a callback
 * member that is there is never NULL.
 *
 *     if (EXTRES_HAS_MEMBER(host, check_trusted_path))
 *             r = host->check_trusted_path(host, path, "library");
 */
#define EXTRES_HAS_MEMBER(ptr, member) \
	((size_t)(ptr)->struct_size >= \
	 offsetof(__typeof__(*(ptr)), member) + sizeof((ptr)->member))

/*
 * Define the module's ops table with abi_version and struct_size filled in,
 * and its one exported entry point. Give the other members as designated
 * initialisers:
 *
 *     EXTRES_DRIVER_REGISTER(.name = "hello", .open = hello_open,
 *                            .discover = hello_discover,
 *                            .close = hello_close)
 *
 * Once per module, at file scope, with no semicolon after it.
 */
#define EXTRES_DRIVER_REGISTER(...)                                  \
	static const struct extres_driver_ops extres_driver_ops_ = { \
		.abi_version = EXTRES_DRIVER_ABI_VERSION,            \
		.struct_size = sizeof(struct extres_driver_ops),     \
		__VA_ARGS__                                          \
	};                                                           \
	EXTRES_DRIVER_EXPORT const struct extres_driver_ops *        \
	extres_driver_entry(void);                                   \
	const struct extres_driver_ops *extres_driver_entry(void)    \
	{                                                            \
		return &extres_driver_ops_;                          \
	}

/* Longest message the helpers below format; the core cuts at about 2 KiB. */
#define EXTRES_MESSAGE_MAX 2048

static inline void extres_format_at_(char *buf, size_t size,
				     const struct extres_host *host,
				     const struct extres_param *at,
				     const char *fmt, va_list ap)
{
	int n = 0;

	if (at)
		n = snprintf(buf, size, "%s:%u:%u: ", host->config_path,
			     (unsigned)at->line, (unsigned)at->column);
	if (n < 0 || (size_t)n >= size)
		n = 0;
	vsnprintf(buf + n, size - (size_t)n, fmt, ap);
}

/*
 * host->error() with the position of `at` in front:
 * "<config_path>:<line>:<column>: <message>" (no position when `at` is
 * NULL). Returns what host->error() returns (-EINVAL), so that
 * `return extres_param_error(host, p, "...")` fails a callback. Only from
 * open() and discover(), as host->error().
 */
static inline int32_t extres_param_error(const struct extres_host *host,
					 const struct extres_param *at,
					 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int32_t extres_param_error(const struct extres_host *host,
					 const struct extres_param *at,
					 const char *fmt, ...)
{
	char msg[EXTRES_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	extres_format_at_(msg, sizeof(msg), host, at, fmt, ap);
	va_end(ap);
	return host->error(host, "%s", msg);
}

/* host->log() at `level`, with the position of `at` as above. */
static inline void
extres_param_log(const struct extres_host *host, int32_t level,
		 const struct extres_param *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline void extres_param_log(const struct extres_host *host,
				    int32_t level,
				    const struct extres_param *at,
				    const char *fmt, ...)
{
	char msg[EXTRES_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	extres_format_at_(msg, sizeof(msg), host, at, fmt, ap);
	va_end(ap);
	host->log(host, level, "%s", msg);
}

/*
 * Warn once about every member of the MAPPING `params` whose key is not in
 * `known` (NULL-terminated): "<config_path>:<line>:<column>: unknown key
 * param.<key> ignored", at EXTRES_LOG_WARNING. The same wording for every
 * driver, so that operators can grep for it. Returns the number warned about.
 */
static inline uint32_t
extres_params_warn_unknown(const struct extres_host *host,
			   const struct extres_param *params,
			   const char *const *known)
{
	uint32_t i, n = 0;

	if (!params || params->kind != EXTRES_PARAM_MAPPING)
		return 0;
	for (i = 0; i < params->count; i++) {
		const struct extres_param *p = &params->items[i];
		const char *const *k;

		if (!p->key)
			continue;
		for (k = known; k && *k; k++) {
			const char *a = *k, *b = p->key;

			while (*a && *a == *b)
				a++, b++;
			if (*a == '\0' && *b == '\0')
				break;
		}
		if (k && *k)
			continue;
		extres_param_log(host, EXTRES_LOG_WARNING, p,
				 "unknown key param.%s ignored", p->key);
		n++;
	}
	return n;
}

#ifdef __cplusplus
}
#endif

#endif /* EXTRES_DRIVER_UTIL_H */
