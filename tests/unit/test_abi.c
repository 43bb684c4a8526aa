/* SPDX-License-Identifier: MIT */
/*
 * The driver ABI is the layout of the structs in <extres/driver.h>: modules
 * built against one revision of the header must keep working with the next.
 * These numbers are that promise for LP64 (x86-64, aarch64); a change that
 * breaks one of them breaks every third-party module.
 */
#include <assert.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)

/*
 * The layout on LP64, one line per member: X(type, member, offset, size),
 * and S(type, size) for the whole struct. Expanded twice below: into
 * static_asserts, and into run-time checks that say which member moved
 * when it fails under a compiler that is lenient.
 */
#define LAYOUT(X, S)                                          \
	X(struct extres_param, kind, 0, 4)                    \
	X(struct extres_param, count, 4, 4)                   \
	X(struct extres_param, key, 8, 8)                     \
	X(struct extres_param, value, 16, 8)                  \
	X(struct extres_param, items, 24, 8)                  \
	X(struct extres_param, line, 32, 4)                   \
	X(struct extres_param, column, 36, 4)                 \
	S(struct extres_param, 40)                            \
                                                              \
	X(struct extres_host, abi_version, 0, 4)              \
	X(struct extres_host, struct_size, 4, 4)              \
	X(struct extres_host, resource, 8, 8)                 \
	X(struct extres_host, config_path, 16, 8)             \
	X(struct extres_host, config_dir, 24, 8)              \
	X(struct extres_host, amount, 32, 8)                  \
	X(struct extres_host, log, 40, 8)                     \
	X(struct extres_host, error, 48, 8)                   \
	X(struct extres_host, core, 56, 8)                    \
	/* Appended in ABI 1: a driver checks struct_size. */ \
	X(struct extres_host, check_trusted_path, 64, 8)      \
	X(struct extres_host, stop_requested, 72, 8)          \
	X(struct extres_host, coordinated_by, 80, 8)          \
	X(struct extres_host, request_refresh, 88, 8)         \
	S(struct extres_host, 96)                             \
                                                              \
	X(struct extres_sink, struct_size, 0, 4)              \
	X(struct extres_sink, begin_info, 8, 8)               \
	X(struct extres_sink, add_property, 16, 8)            \
	X(struct extres_sink, core, 24, 8)                    \
	S(struct extres_sink, 32)                             \
                                                              \
	X(struct extres_driver_ops, abi_version, 0, 4)        \
	X(struct extres_driver_ops, struct_size, 4, 4)        \
	X(struct extres_driver_ops, name, 8, 8)               \
	X(struct extres_driver_ops, open, 16, 8)              \
	X(struct extres_driver_ops, discover, 24, 8)          \
	X(struct extres_driver_ops, close, 32, 8)             \
	/* Appended in ABI 1: the core checks struct_size. */ \
	X(struct extres_driver_ops, env_var, 40, 8)           \
	X(struct extres_driver_ops, env_property, 48, 8)      \
	X(struct extres_driver_ops, identity_keys, 56, 8)     \
	X(struct extres_driver_ops, env_form, 64, 4)          \
	X(struct extres_driver_ops, reserved, 68, 4)          \
	X(struct extres_driver_ops, env_fixed, 72, 8)         \
	X(struct extres_driver_ops, control_nodes, 80, 8)     \
	X(struct extres_driver_ops, cdi_base_specs, 88, 8)    \
	X(struct extres_driver_ops, cdi_base_hint, 96, 8)     \
	X(struct extres_driver_ops, node_keys, 104, 8)        \
	X(struct extres_driver_ops, metric_labels, 112, 8)    \
	X(struct extres_driver_ops, env_id_prefix, 120, 8)    \
	S(struct extres_driver_ops, 128)                      \
                                                              \
	X(struct extres_metric_label, label, 0, 8)            \
	X(struct extres_metric_label, property, 8, 8)         \
	X(struct extres_metric_label, prefix, 16, 8)          \
	X(struct extres_metric_label, reserved, 24, 8)        \
	S(struct extres_metric_label, 32)

#define PIN(type, member, off, size)                       \
	static_assert(offsetof(type, member) == (off),     \
		      #type "." #member " moved");         \
	static_assert(MEMBER_SIZE(type, member) == (size), \
		      #type "." #member " changed size");
#define PIN_SIZE(type, size) \
	static_assert(sizeof(type) == (size), #type " size");

#if UINTPTR_MAX == UINT64_MAX
LAYOUT(PIN, PIN_SIZE)
#endif

/* Types, callbacks' signatures included, are the other half of the ABI. */
#define TYPE(type, member, t)                                      \
	static_assert(__builtin_types_compatible_p(                \
			      __typeof__(((type *)0)->member), t), \
		      #type "." #member " changed type")

TYPE(struct extres_param, kind, uint32_t);
TYPE(struct extres_param, count, uint32_t);
TYPE(struct extres_param, key, const char *);
TYPE(struct extres_param, value, const char *);
TYPE(struct extres_param, items, const struct extres_param *);
TYPE(struct extres_param, line, uint32_t);
TYPE(struct extres_param, column, uint32_t);

TYPE(struct extres_host, abi_version, uint32_t);
TYPE(struct extres_host, struct_size, uint32_t);
TYPE(struct extres_host, resource, const char *);
TYPE(struct extres_host, config_path, const char *);
TYPE(struct extres_host, config_dir, const char *);
TYPE(struct extres_host, amount, uint64_t);
TYPE(struct extres_host, log,
     void (*)(const struct extres_host *, int32_t, const char *, ...));
TYPE(struct extres_host, error,
     int32_t (*)(const struct extres_host *, const char *, ...));
TYPE(struct extres_host, core, void *);
TYPE(struct extres_host, check_trusted_path,
     int32_t (*)(const struct extres_host *, const char *, const char *));
TYPE(struct extres_host, stop_requested,
     int32_t (*)(const struct extres_host *));
TYPE(struct extres_host, coordinated_by,
     int32_t (*)(const struct extres_host *, const char *, const char *));
TYPE(struct extres_host, request_refresh,
     int32_t (*)(const struct extres_host *));

TYPE(struct extres_sink, struct_size, uint32_t);
TYPE(struct extres_sink, begin_info, int32_t (*)(struct extres_sink *));
TYPE(struct extres_sink, add_property,
     int32_t (*)(struct extres_sink *, const char *, const char *));
TYPE(struct extres_sink, core, void *);

TYPE(struct extres_driver_ops, abi_version, uint32_t);
TYPE(struct extres_driver_ops, struct_size, uint32_t);
TYPE(struct extres_driver_ops, name, const char *);
TYPE(struct extres_driver_ops, open,
     int32_t (*)(const struct extres_host *, const struct extres_param *,
		 void **));
TYPE(struct extres_driver_ops, discover,
     int32_t (*)(void *, struct extres_sink *));
TYPE(struct extres_driver_ops, close, void (*)(void *));
TYPE(struct extres_driver_ops, env_var, const char *);
TYPE(struct extres_driver_ops, env_property, const char *);
TYPE(struct extres_driver_ops, identity_keys, const char *const *);
TYPE(struct extres_driver_ops, env_form, uint32_t);
TYPE(struct extres_driver_ops, reserved, uint32_t);
TYPE(struct extres_driver_ops, env_fixed, const char *const *);
TYPE(struct extres_driver_ops, control_nodes, const char *const *);
TYPE(struct extres_driver_ops, cdi_base_specs, const char *const *);
TYPE(struct extres_driver_ops, cdi_base_hint, const char *);
TYPE(struct extres_driver_ops, node_keys, const char *const *);
TYPE(struct extres_driver_ops, metric_labels,
     const struct extres_metric_label *);
TYPE(struct extres_driver_ops, env_id_prefix, const char *);
TYPE(struct extres_metric_label, label, const char *);
TYPE(struct extres_metric_label, property, const char *);
TYPE(struct extres_metric_label, prefix, const char *);
TYPE(struct extres_metric_label, reserved, uint32_t[2]);
static_assert(
	__builtin_types_compatible_p(extres_driver_entry_fn,
				     const struct extres_driver_ops *(*)(void)),
	"entry point type");

static_assert(EXTRES_DRIVER_ABI_VERSION == 1, "ABI version");
static_assert(EXTRES_PARAM_SCALAR == 1 && EXTRES_PARAM_SEQUENCE == 2 &&
		      EXTRES_PARAM_MAPPING == 3,
	      "param kinds");
static_assert(EXTRES_ENV_FORM_AS_IS == 0 && EXTRES_ENV_FORM_GPU_HEX_ID == 1 &&
		      EXTRES_ENV_FORM_HEX_ID == 2,
	      "env forms");
static_assert(EXTRES_LOG_ERR == 3 && EXTRES_LOG_WARNING == 4 &&
		      EXTRES_LOG_NOTICE == 5 && EXTRES_LOG_INFO == 6 &&
		      EXTRES_LOG_DEBUG == 7,
	      "log levels are syslog's");

static void test_layout(void **state)
{
#if UINTPTR_MAX == UINT64_MAX
#define CHECK(type, member, off, size)                   \
	assert_int_equal(offsetof(type, member), (off)); \
	assert_int_equal(MEMBER_SIZE(type, member), (size));
#define CHECK_SIZE(type, size) assert_int_equal(sizeof(type), (size));
	LAYOUT(CHECK, CHECK_SIZE)
#else
	skip();
#endif
}

static void test_constants(void **state)
{
	assert_int_equal(EXTRES_DRIVER_ABI_VERSION, 1);
	assert_string_equal(EXTRES_DRIVER_ENTRY_SYMBOL, "extres_driver_entry");
}

/* The inline helpers are part of the header too: modules compile them in. */
static void test_param_get(void **state)
{
	static const struct extres_param items[] = {
		{ .kind = EXTRES_PARAM_SCALAR, .key = "path", .value = "a" },
		{ .kind = EXTRES_PARAM_SEQUENCE, .key = "args" },
		{ .kind = EXTRES_PARAM_SCALAR, .key = "path", .value = "b" },
		{ .kind = EXTRES_PARAM_SCALAR, .key = "pat", .value = "c" },
	};
	const struct extres_param map = { .kind = EXTRES_PARAM_MAPPING,
					  .count = 4,
					  .items = items };
	const struct extres_param seq = { .kind = EXTRES_PARAM_SEQUENCE,
					  .count = 4,
					  .items = items };

	/* The last of a repeated key wins. */
	assert_ptr_equal(extres_param_get(&map, "path"), &items[2]);
	assert_string_equal(extres_param_scalar(&map, "path"), "b");
	assert_string_equal(extres_param_scalar(&map, "pat"), "c");
	assert_ptr_equal(extres_param_get(&map, "args"), &items[1]);
	assert_null(extres_param_scalar(&map, "args"));
	assert_null(extres_param_get(&map, "pa"));
	assert_null(extres_param_get(&map, "paths"));
	assert_null(extres_param_get(&map, ""));
	assert_null(extres_param_get(&seq, "path"));
	assert_null(extres_param_get(NULL, "path"));
	assert_null(extres_param_scalar(NULL, "path"));
}

/* The helpers of <extres/driver_util.h>, against a host that records. */
struct rec_host {
	struct extres_host host;
	char error[EXTRES_MESSAGE_MAX];
	char log[4][EXTRES_MESSAGE_MAX];
	int n_log;
};

static void rec_log(const struct extres_host *host, int32_t level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rec_log(const struct extres_host *host, int32_t level,
		    const char *fmt, ...)
{
	struct rec_host *h = host->core;
	va_list ap;

	assert_int_equal(level, EXTRES_LOG_WARNING);
	assert_true(h->n_log < 4);
	va_start(ap, fmt);
	vsnprintf(h->log[h->n_log++], sizeof(h->log[0]), fmt, ap);
	va_end(ap);
}

static int32_t rec_error(const struct extres_host *host, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int32_t rec_error(const struct extres_host *host, const char *fmt, ...)
{
	struct rec_host *h = host->core;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->error, sizeof(h->error), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void test_helpers(void **state)
{
	static const struct extres_param items[] = {
		{ .kind = EXTRES_PARAM_SCALAR,
		  .key = "path",
		  .value = "a",
		  .line = 3,
		  .column = 9 },
		{ .kind = EXTRES_PARAM_SCALAR,
		  .key = "colour",
		  .value = "b",
		  .line = 4,
		  .column = 11 },
		{ .kind = EXTRES_PARAM_SCALAR,
		  .key = "pat",
		  .value = "c",
		  .line = 5,
		  .column = 1 },
	};
	static const struct extres_param map = { .kind = EXTRES_PARAM_MAPPING,
						 .count = 3,
						 .items = items };
	static const char *const known[] = { "path", NULL };
	struct rec_host h = { 0 };
	struct extres_host old;

	h.host.struct_size = sizeof(h.host);
	h.host.config_path = "/etc/extres.yaml";
	h.host.log = rec_log;
	h.host.error = rec_error;
	h.host.core = &h;

	assert_int_equal(extres_param_error(&h.host, &items[0], "bad %s", "x"),
			 -EINVAL);
	assert_string_equal(h.error, "/etc/extres.yaml:3:9: bad x");
	assert_int_equal(extres_param_error(&h.host, NULL, "bad"), -EINVAL);
	assert_string_equal(h.error, "bad");

	assert_int_equal(extres_params_warn_unknown(&h.host, &map, known), 2);
	assert_int_equal(h.n_log, 2);
	assert_string_equal(
		h.log[0],
		"/etc/extres.yaml:4:11: unknown key param.colour ignored");
	assert_string_equal(
		h.log[1],
		"/etc/extres.yaml:5:1: unknown key param.pat ignored");
	assert_int_equal(extres_params_warn_unknown(&h.host, &items[0], known),
			 0);

	/* A host from before a member was appended does not have it. */
	assert_true(EXTRES_HAS_MEMBER(&h.host, coordinated_by));
	old = h.host;
	old.struct_size = offsetof(struct extres_host, coordinated_by);
	assert_false(EXTRES_HAS_MEMBER(&old, coordinated_by));
	assert_true(EXTRES_HAS_MEMBER(&old, stop_requested));
	old.struct_size = offsetof(struct extres_host, check_trusted_path);
	assert_false(EXTRES_HAS_MEMBER(&old, check_trusted_path));
}

/* The registration macro fills the header of the table. */
EXTRES_DRIVER_REGISTER(.name = "abi-test", .env_var = "X_DEVICES")

static void test_register(void **state)
{
	const struct extres_driver_ops *ops = extres_driver_entry();

	assert_ptr_equal(ops, extres_driver_entry());
	assert_int_equal(ops->abi_version, EXTRES_DRIVER_ABI_VERSION);
	assert_int_equal(ops->struct_size, sizeof(struct extres_driver_ops));
	assert_string_equal(ops->name, "abi-test");
	assert_string_equal(ops->env_var, "X_DEVICES");
	assert_null(ops->open);
	assert_null(ops->identity_keys);
	assert_true(EXTRES_HAS_MEMBER(ops, env_form));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_param_get),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_register),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
