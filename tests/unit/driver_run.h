/* SPDX-License-Identifier: MIT */
/*
 * Test helpers for the drivers built in drivers/ (test_static.c,
 * test_nvml.c, test_sysfs.c, test_amdgpu.c): params built as the config
 * loader would hand them over, positions included, and a driver run through
 * the host side (extres_driver_open/discover) with its log captured.
 *
 * Include after <cmocka.h>. Everything is static inline so that a test that
 * uses only part of it compiles without warnings.
 */
#ifndef EXTRES_TEST_DRIVER_RUN_H
#define EXTRES_TEST_DRIVER_RUN_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/instance.h"

#define FAKE_CONFIG "/etc/extres/extres.yaml"

#define SCALAR(k, v, l, c)                                             \
	{                                                              \
		.kind = EXTRES_PARAM_SCALAR, .key = (k), .value = (v), \
		.line = (l), .column = (c)                             \
	}
#define SEQUENCE(k, it, l, c)                                             \
	{                                                                 \
		.kind = EXTRES_PARAM_SEQUENCE, .key = (k), .items = (it), \
		.count = sizeof(it) / sizeof((it)[0]), .line = (l),       \
		.column = (c)                                             \
	}
#define MAPPING(k, it, l, c)                                             \
	{                                                                \
		.kind = EXTRES_PARAM_MAPPING, .key = (k), .items = (it), \
		.count = sizeof(it) / sizeof((it)[0]), .line = (l),      \
		.column = (c)                                            \
	}
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* snprintf() that fails the test rather than cut the text. */
static inline void fake_fmt(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void fake_fmt(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("text too long for its buffer: %s", fmt);
}

/* A resource served by driver `so`, as the config loader would make it from
 * FAKE_CONFIG; `config_dir` stands in for that file's directory. */
struct fake_resource {
	struct extres_config config;
	struct extres_resource_config res;
	struct extres_param params;
};

static inline void fake_resource_init(struct fake_resource *f, const char *so,
				      const char *resource,
				      const char *config_dir,
				      const struct extres_param *items,
				      uint32_t count)
{
	memset(f, 0, sizeof(*f));
	f->config.path = (char *)FAKE_CONFIG;
	f->config.dir = (char *)config_dir;
	f->res.name = (char *)resource;
	f->res.amount = (struct extres_amount){ 1, 1 };
	f->res.driver = (char *)so;
	f->params.kind = EXTRES_PARAM_MAPPING;
	f->params.count = count;
	f->params.items = items;
	f->res.params = &f->params;
}

/* One driver run: what discovery found, or why it failed, and every line
 * the driver logged. */
struct fake_run {
	int open_r;
	int discover_r;
	struct extres_infos *infos; /* NULL unless both succeeded */
	struct extres_err err;
	char log[16384];
};

/*
 * Open `so` for resource `resource` with params `items`, discover, close,
 * all with stderr (where extres_log writes) going to a memfd. A driver that
 * opens must be named as its file ("<dir>/static.so" is "static"); one that
 * does not must leave its out-parameter alone.
 */
static inline void fake_run(const char *so, const char *resource,
			    const char *config_dir,
			    const struct extres_param *items, uint32_t count,
			    struct fake_run *run)
{
	const char *base = strrchr(so, '/') ? strrchr(so, '/') + 1 : so;
	struct extres_driver *drv = NULL;
	struct fake_resource f;
	char name[256];
	int fd, saved;
	ssize_t n;

	memset(run, 0, sizeof(*run));
	fake_resource_init(&f, so, resource, config_dir, items, count);
	fake_fmt(name, sizeof(name), "%.*s", (int)strcspn(base, "."), base);

	fd = memfd_create("stderr", MFD_CLOEXEC);
	assert_true(fd >= 0);
	saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);

	run->open_r = extres_driver_open(&f.config, &f.res, &drv, &run->err);
	run->discover_r = -1;
	if (run->open_r == 0) {
		assert_string_equal(extres_driver_name(drv), name);
		run->discover_r =
			extres_driver_discover(drv, &run->infos, &run->err);
		extres_driver_close(drv);
	} else {
		assert_null(drv);
	}

	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, run->log, sizeof(run->log) - 1, 0);
	assert_true(n >= 0 && (size_t)n < sizeof(run->log) - 1);
	run->log[n] = '\0';
	close(fd);
}

/* A run that must succeed; returns its infos (the caller frees them). */
static inline struct extres_infos *
fake_discover(const char *so, const char *resource, const char *config_dir,
	      const struct extres_param *items, uint32_t count, char *log,
	      size_t log_len)
{
	struct fake_run *run = calloc(1, sizeof(*run));
	struct extres_infos *infos;

	assert_non_null(run);
	fake_run(so, resource, config_dir, items, count, run);
	if (run->open_r < 0)
		fail_msg("open: %s", run->err.msg);
	if (run->discover_r < 0)
		fail_msg("discover: %s", run->err.msg);
	fake_fmt(log, log_len, "%s", run->log);
	infos = run->infos;
	free(run);
	return infos;
}

/* Property `i` of `info` is exactly key: value. */
static inline void expect_prop(const struct extres_info *info, size_t i,
			       const char *key, const char *value)
{
	assert_true(i < info->n_props);
	assert_string_equal(info->props[i].key, key);
	assert_string_equal(info->props[i].value, value);
}

/* info must be exactly `count` key, value pairs, in order. */
static inline void expect_props(const struct extres_info *info,
				const char *const *kv, size_t count)
{
	size_t i;

	for (i = 0; i < count && i < info->n_props; i++) {
		assert_string_equal(info->props[i].key, kv[2 * i]);
		assert_string_equal(info->props[i].value, kv[2 * i + 1]);
	}
	assert_int_equal(info->n_props, count);
}

#define EXPECT_PROPS(info, ...)                                              \
	do {                                                                 \
		const char *const kv_[] = { __VA_ARGS__ };                   \
		expect_props((info), kv_, sizeof(kv_) / sizeof(kv_[0]) / 2); \
	} while (0)

#endif
