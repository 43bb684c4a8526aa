/* SPDX-License-Identifier: MIT */
/* A complete driver that claims an ABI version this core does not speak. */
#include <extres/driver.h>

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	*ret_handle = NULL;
	return 0;
}

static int32_t mock_discover(void *handle, struct extres_sink *sink)
{
	return 0;
}

static void mock_close(void *handle)
{
}

static const struct extres_driver_ops ops = {
	.abi_version = 999,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_wrong_abi",
	.open = mock_open,
	.discover = mock_discover,
	.close = mock_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
