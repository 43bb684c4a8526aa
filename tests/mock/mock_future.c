/* SPDX-License-Identifier: MIT */
/*
 * A driver built against a newer ABI revision: its ops table has a member
 * appended after close(). The core must load it, use what it knows and
 * ignore the rest.
 */
#include <extres/driver.h>

struct future_ops {
	struct extres_driver_ops v1;
	int32_t (*refresh)(void *handle, struct extres_sink *sink);
};

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	*ret_handle = NULL;
	return 0;
}

static int32_t mock_discover(void *handle, struct extres_sink *sink)
{
	int32_t r = sink->begin_info(sink);

	if (r == 0)
		r = sink->add_property(sink, "index", "7");
	return r;
}

static int32_t mock_refresh(void *handle, struct extres_sink *sink)
{
	return 0;
}

static void mock_close(void *handle)
{
}

static const struct future_ops ops = {
	.v1 = {
		.abi_version = EXTRES_DRIVER_ABI_VERSION,
		.struct_size = sizeof(struct future_ops),
		.name = "mock_future",
		.open = mock_open,
		.discover = mock_discover,
		.close = mock_close,
	},
	.refresh = mock_refresh,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops.v1;
}
