/* SPDX-License-Identifier: MIT */
#include "views/json_view.h"

#include "base/json.h"
#include "views/holders.h"

static void json_infos(struct extres_json *json,
		       const struct extres_info *infos, size_t n)
{
	size_t i, k;

	extres_json_begin_array(json);
	for (i = 0; i < n; i++) {
		extres_json_begin_object(json);
		for (k = 0; k < infos[i].n_props; k++) {
			extres_json_key(json, infos[i].props[k].key);
			extres_json_string_len(json, infos[i].props[k].value,
					       infos[i].props[k].value_len);
		}
		extres_json_end_object(json);
	}
	extres_json_end_array(json);
}

int extres_json_view(const struct extres_json_resource *res, size_t n,
		     char **ret_text, size_t *ret_len)
{
	return extres_json_view_holders(res, n, NULL, ret_text, ret_len);
}

int extres_json_view_holders(const struct extres_json_resource *res, size_t n,
			     const struct extres_holders *holders,
			     char **ret_text, size_t *ret_len)
{
	struct extres_json *json;
	size_t i;
	int r;

	r = extres_json_new(&json);
	if (r < 0)
		return r;
	/* The writer's errors stick: only finish needs checking. */
	extres_json_begin_object(json);
	extres_json_key(json, "resources");
	extres_json_begin_object(json);
	for (i = 0; i < n; i++) {
		extres_json_key(json, res[i].name);
		extres_json_begin_object(json);
		extres_json_key(json, "driver");
		extres_json_string(json, res[i].driver);
		extres_json_key(json, "amount");
		extres_json_uint(json, res[i].amount);
		if (res[i].configured &&
		    !extres_amount_is_exact(res[i].configured)) {
			char form[EXTRES_AMOUNT_TEXT_MAX];

			extres_json_key(json, "amount-form");
			extres_json_string(
				json,
				extres_amount_format(res[i].configured, form));
		}
		if (res[i].pool) {
			extres_json_key(json, "pool");
			extres_json_bool(json, 1);
		}
		if (res[i].infos) {
			extres_json_key(json, "infos");
			json_infos(json, res[i].infos, res[i].n_infos);
		}
		if (res[i].candidates) {
			extres_json_key(json, "candidates");
			json_infos(json, res[i].candidates->items,
				   res[i].candidates->n);
		}
		extres_json_end_object(json);
	}
	extres_json_end_object(json);
	if (holders) {
		extres_json_key(json, "holders");
		extres_holders_json(json, holders);
	}
	extres_json_end_object(json);
	r = extres_json_finish(json, ret_text, ret_len);
	extres_json_free(json);
	return r;
}
