/* SPDX-License-Identifier: MIT */
/*
 * The driver ABI is the layout of the structs in <extres/driver.h>: modules
 * built against one revision of the header must keep working with the next.
 * These numbers are that promise for LP64 (x86-64, aarch64); a change that
 * breaks one of them breaks every third-party module.
 */
#include <assert.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <extres/driver.h>

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
	S(struct extres_host, 80)                             \
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
	S(struct extres_driver_ops, 40)

#define PIN(type, member, off, size)                                          \
	static_assert(offsetof(type, member) == (off),                        \
		      #type "." #member " moved");                            \
	static_assert(MEMBER_SIZE(type, member) == (size),                    \
		      #type "." #member " changed size");
#define PIN_SIZE(type, size) \
	static_assert(sizeof(type) == (size), #type " size");

#if UINTPTR_MAX == UINT64_MAX
LAYOUT(PIN, PIN_SIZE)
#endif

/* Types, callbacks' signatures included, are the other half of the ABI. */
#define TYPE(type, member, t)                                                 \
	static_assert(__builtin_types_compatible_p(                           \
			      __typeof__(((type *)0)->member), t),            \
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
static_assert(__builtin_types_compatible_p(
		      extres_driver_entry_fn,
		      const struct extres_driver_ops *(*)(void)),
	      "entry point type");

static_assert(EXTRES_DRIVER_ABI_VERSION == 1, "ABI version");
static_assert(EXTRES_PARAM_SCALAR == 1 && EXTRES_PARAM_SEQUENCE == 2 &&
		      EXTRES_PARAM_MAPPING == 3,
	      "param kinds");
static_assert(EXTRES_LOG_ERR == 3 && EXTRES_LOG_WARNING == 4 &&
		      EXTRES_LOG_NOTICE == 5 && EXTRES_LOG_INFO == 6 &&
		      EXTRES_LOG_DEBUG == 7,
	      "log levels are syslog's");

static void test_layout(void **state)
{
#if UINTPTR_MAX == UINT64_MAX
#define CHECK(type, member, off, size)                          \
	assert_int_equal(offsetof(type, member), (off));        \
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
					  .count = 4, .items = items };
	const struct extres_param seq = { .kind = EXTRES_PARAM_SEQUENCE,
					  .count = 4, .items = items };

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_param_get),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
