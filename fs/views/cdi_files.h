/* SPDX-License-Identifier: MIT */
/*
 * CDI spec files in a directory where container runtimes look for them
 * (/etc/cdi, /var/run/cdi): one file extres-<resource>.json per resource,
 * each the resource's spec from .meta/cdi.json (views/cdi_view.h), so that
 * `extresctl cdi` and extresd's extres.cdi-spec-dir write the same bytes.
 *
 * A runtime gives a container every node a spec names, as root: the
 * directory must pass extres_check_trusted() (os/trust.h). Each file is
 * written to a hidden temporary name in the directory and renamed over the
 * old one, so that a runtime reading the directory sees the old spec or
 * the new one, never half.
 */
#ifndef EXTRES_CDI_FILES_H
#define EXTRES_CDI_FILES_H

#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

#define EXTRES_CDI_FILE_PREFIX "extres-"
#define EXTRES_CDI_FILE_SUFFIX ".json"

/*
 * Write DIR/extres-NAME.json for each resource of `view` (the text of
 * .meta/cdi.json), creating DIR (0755) when missing. With `old_view` (what
 * an earlier call wrote), a spec whose text did not change is left alone
 * and the files of resources `old_view` has and `view` has not are
 * removed; with `prune`, so is every DIR/extres-*.json naming no resource
 * of `view` (only for the one writer of DIR). Each path written or removed
 * is printed to `report` ("PATH" or "removed PATH") unless it is NULL.
 * 0, or a negative errno with `err` naming the file: a directory another
 * user could write (-EPERM), a view that is not of the form cdi_view.h
 * promises or names a resource no file can be named after (-EINVAL).
 */
int extres_cdi_files_write(const char *dir, const char *view,
			   const char *old_view, int prune, FILE *report,
			   struct extres_err *err);

/* Remove DIR/extres-NAME.json of each resource of `view` (a missing file
 * is no error). 0, or a negative errno with `err` set. */
int extres_cdi_files_remove(const char *dir, const char *view,
			    struct extres_err *err);

#endif
