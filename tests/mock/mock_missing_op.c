/* SPDX-License-Identifier: MIT */
/* A driver without the required discover() op. */
#include <extres/driver.h>

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	*ret_handle = NULL;
	return 0;
}

static void mock_close(void *handle)
{
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_missing_op",
	.open = mock_open,
	.discover = NULL,
	.close = mock_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
