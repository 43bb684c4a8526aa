/* SPDX-License-Identifier: MIT */
/*
 * The param trees that a resource's `param.*` keys become and drivers get
 * (struct extres_param of <extres/driver.h>): building and freeing them.
 * The YAML that they are read from stays inside the config layer
 * (config/yaml_doc.h).
 */
#ifndef EXTRES_PARAM_H
#define EXTRES_PARAM_H

#include <extres/driver.h>

/* Move *child to the end of parent's items (a MAPPING or SEQUENCE). 0 or
 * -ENOMEM (then *child is still the caller's). */
int extres_param_append(struct extres_param *parent,
			const struct extres_param *child);

/* Free what `param` holds (strings, items) but not `param` itself. */
void extres_param_clear(struct extres_param *param);

/* Free a param tree made by the loader. Accepts NULL. */
void extres_param_free(struct extres_param *param);

/*
 * An immutable copy of the tree `src` in one block, which extres_param_ref()
 * shares and the last extres_param_unref() frees: the config's params and
 * every driver opened with them hold one tree between them, instead of a
 * block per key, value and list each. The copy has src's kinds, keys,
 * values, order and positions. Thread-safe references. 0 or -ENOMEM.
 */
int extres_param_pack(const struct extres_param *src,
		      struct extres_param **ret);
/* `packed` (from extres_param_pack()) once more; returns it. */
struct extres_param *extres_param_ref(struct extres_param *packed);
/* Accepts NULL. */
void extres_param_unref(struct extres_param *packed);

#endif
