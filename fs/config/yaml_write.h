/* SPDX-License-Identifier: MIT */
/*
 * A writer for one YAML document of block mappings and scalars, into
 * memory, through libyaml's emitter: what extresctl prints for a container
 * spec. The text has no document markers ("---", "..."), so that it pastes
 * into another file, and never folds a long scalar onto a second line.
 * libyaml's types stay inside the config layer: callers see only this.
 *
 * Errors are sticky, as with extres_json: the first failure is kept, every
 * later call returns it and writes nothing, so a caller may make a run of
 * calls and check only extres_yaml_write_finish(). Every function returns
 * 0 or a negative errno (-ENOMEM, or -EINVAL for a call that libyaml's
 * emitter refuses, such as a mapping left open at finish).
 *
 * Not thread-safe: one writer belongs to one thread at a time.
 */
#ifndef EXTRES_YAML_WRITE_H
#define EXTRES_YAML_WRITE_H

#include <stddef.h>

#include "base/err.h"

struct extres_yaml_write;

/* Begin a document that takes one top-level value. Free it with
 * extres_yaml_write_free(). */
int extres_yaml_write_new(struct extres_yaml_write **ret);

/* Accepts NULL. */
void extres_yaml_write_free(struct extres_yaml_write *w);

int extres_yaml_write_begin_mapping(struct extres_yaml_write *w);
int extres_yaml_write_end_mapping(struct extres_yaml_write *w);

/* A scalar that reads back as the string `s`: written plain where YAML
 * 1.1 and 1.2 would read the plain form as a string, else double-quoted
 * (so "1", "true" or "null" stay strings for a reader such as Kubernetes). */
int extres_yaml_write_string(struct extres_yaml_write *w, const char *s);

/* A scalar written plain, for what the reader is to see as a number or
 * another non-string value. */
int extres_yaml_write_plain(struct extres_yaml_write *w, const char *s);

/*
 * End the document. On success *ret_text is the NUL-terminated text, which
 * the caller frees with free(), and *ret_len its length without the NUL. On
 * failure both are untouched and `err` (which may be NULL) holds libyaml's
 * reason, or "out of memory". Either way the writer takes no more calls and
 * is still to be freed.
 */
int extres_yaml_write_finish(struct extres_yaml_write *w, char **ret_text,
			     size_t *ret_len, struct extres_err *err);

#endif
