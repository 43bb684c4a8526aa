/* SPDX-License-Identifier: MIT */
/*
 * A resource name that the config does not have: the error lists the ones
 * it has, and the one meant when the name looks like a typo of it, so the
 * user fixes the command line without opening the config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/text.h"
#include "config/config.h"
#include "ctl/ctl.h"

int extres_ctl_no_such_resource(const char *cmd,
				const struct extres_config *cfg,
				const char *name, size_t len)
{
	const char **names;
	const char *near = NULL;
	char *word, *list = NULL;
	size_t i, size;
	FILE *f;

	word = strndup(name, len);
	names = calloc(cfg->n_resources + 1, sizeof(*names));
	f = open_memstream(&list, &size);
	if (f) {
		for (i = 0; i < cfg->n_resources; i++)
			fprintf(f, "%s%s", i ? ", " : "",
				cfg->resources[i].name);
		if (cfg->n_resources == 0)
			fputs("none", f);
		extres_memstream_close(f, &list);
	}
	for (i = 0; names && i < cfg->n_resources; i++)
		names[i] = cfg->resources[i].name;
	if (word && names)
		near = extres_nearest(word, names, cfg->n_resources);
	extres_ctl_usage_error(cmd,
			       "%s: %.*s: no such resource in %s; %s%s%s"
			       "configured: %s",
			       cmd, (int)len, name, cfg->path,
			       near ? "did you mean " : "", near ? near : "",
			       near ? "? " : "",
			       list ? list : "(out of memory)");
	free(list);
	free(names);
	free(word);
	return CTL_EXIT_USAGE;
}
