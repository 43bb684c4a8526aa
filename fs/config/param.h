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

#endif
