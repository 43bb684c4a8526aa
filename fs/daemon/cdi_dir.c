/* SPDX-License-Identifier: MIT */
/*
 * extres.cdi-spec-dir: the daemon keeps its CDI specs in that directory
 * itself, so that a runtime never reads a spec that names devices this
 * mount no longer holds. Called on the thread that publishes (start,
 * reload, refresh: extresd_publish()), right after the new tree is served,
 * so a spec is never older than the mount by more than that one step; and
 * at stop, before the devices are released. Only files whose spec changed
 * are rewritten (views/cdi_files.h), so a refresh that changes nothing a
 * spec says touches no file.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon/extresd.h"
#include "base/log.h"
#include "views/cdi_files.h"

void extresd_cdi_sync(struct extresd *d, const char *view)
{
	const char *dir = d->config ? d->config->cdi_spec_dir : NULL;
	struct extres_err err;
	char *copy = NULL, *dir_copy = NULL;

	/* The setting moved or went with a reload: the old files go. */
	if (d->cdi_dir && (!dir || strcmp(dir, d->cdi_dir) != 0))
		extresd_cdi_clear(d);
	if (!dir || !view)
		return;
	if (d->cdi_written && strcmp(d->cdi_written, view) == 0)
		return;
	copy = strdup(view);
	dir_copy = d->cdi_dir ? NULL : strdup(dir);
	if (!copy || (!d->cdi_dir && !dir_copy)) {
		extres_log(EXTRES_LOG_ERR, "CDI specs in %s: out of memory",
			   dir);
		goto out;
	}
	if (extres_cdi_files_write(dir, view, d->cdi_written, 0, NULL, &err) <
	    0) {
		/* Tried again at the next publish; the old view stays what
		 * was last written, so nothing of it is left behind. */
		extres_log(EXTRES_LOG_ERR, "CDI specs in %s: %s", dir, err.msg);
		goto out;
	}
	free(d->cdi_written);
	d->cdi_written = copy;
	copy = NULL;
	if (dir_copy) {
		d->cdi_dir = dir_copy;
		dir_copy = NULL;
	}
out:
	free(copy);
	free(dir_copy);
}

void extresd_cdi_clear(struct extresd *d)
{
	struct extres_err err;

	if (d->cdi_dir && d->cdi_written &&
	    extres_cdi_files_remove(d->cdi_dir, d->cdi_written, &err) < 0)
		extres_log(EXTRES_LOG_ERR, "CDI specs in %s: %s", d->cdi_dir,
			   err.msg);
	free(d->cdi_written);
	free(d->cdi_dir);
	d->cdi_written = NULL;
	d->cdi_dir = NULL;
}
