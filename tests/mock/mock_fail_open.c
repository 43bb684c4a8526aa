/* SPDX-License-Identifier: MIT */
/* A driver whose open() always fails, saying why. */
#include <errno.h>

#include <extres/driver.h>

static int32_t mock_open(const struct extres_host *host,
			 const struct extres_param *params, void **ret_handle)
{
	host->error(host, "cannot open: %s", "because");
	return -EIO;
}

static int32_t mock_discover(void *handle, struct extres_sink *sink)
{
	return 0;
}

static void mock_close(void *handle)
{
}

static const struct extres_driver_ops ops = {
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_fail_open",
	.open = mock_open,
	.discover = mock_discover,
	.close = mock_close,
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
