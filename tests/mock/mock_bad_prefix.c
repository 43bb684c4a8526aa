/* SPDX-License-Identifier: MIT */
/* A driver whose hex id prefix would put a quote into .meta/env. */
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
	.abi_version = EXTRES_DRIVER_ABI_VERSION,
	.struct_size = sizeof(struct extres_driver_ops),
	.name = "mock_bad_prefix",
	.open = mock_open,
	.discover = mock_discover,
	.close = mock_close,
	.env_var = "MOCK_DEVICES",
	.env_property = "id",
	.env_form = EXTRES_ENV_FORM_HEX_ID,
	.env_id_prefix = "a'b",
};

EXTRES_DRIVER_EXPORT const struct extres_driver_ops *extres_driver_entry(void);
const struct extres_driver_ops *extres_driver_entry(void)
{
	return &ops;
}
