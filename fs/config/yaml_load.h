/* SPDX-License-Identifier: MIT */
/*
 * One YAML document read from a buffer into a libyaml document, with every
 * limit checked as libyaml's events arrive, so that no input makes the work
 * or the memory grow past them: the parse stops at the first event that
 * breaks one. (libyaml's own yaml_parser_load() has no limits, finds
 * anchors by a linear search, and lets an input nest as deep as it likes.)
 *
 * The document holds what yaml_parser_load() would make, with two
 * differences: an alias is the node it names (shared, never copied), and a
 * node carries a tag only when the file gave it one.
 */
#ifndef EXTRES_YAML_LOAD_H
#define EXTRES_YAML_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "base/err.h"

/* Collections inside collections; the top level is level 1. Aliases count
 * as the levels of what they name. */
#define EXTRES_YAML_MAX_DEPTH 64
/*
 * Nodes (keys, values, sequences and mappings) the document may hold, once
 * aliases are expanded. A config with a few thousand devices holds tens of
 * thousands; this bounds the memory and the time of a parse.
 */
#define EXTRES_YAML_MAX_NODES (1u << 17)
/* Text that aliases may add to what the file itself holds: sharing a few
 * settings is what they are for, not multiplying a value. */
#define EXTRES_YAML_MAX_ALIAS_BYTES (1u << 20)

/* Positions are 1-based (libyaml counts from 0). */
static inline uint32_t extres_yaml_pos(size_t zero_based)
{
	return zero_based >= UINT32_MAX ? UINT32_MAX : (uint32_t)zero_based + 1;
}

/* Put "file:line:col: <message>" into err; returns -errnum. */
int extres_yaml_error(struct extres_err *err, int errnum, const char *file,
		      uint32_t line, uint32_t column, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/*
 * Parse `len` bytes of `buf` (which may hold no document at all: then
 * *ret_doc has no root). On success *ret_doc is a document for
 * yaml_document_delete(). On failure returns a negative errno, leaves
 * *ret_doc untouched and puts into `err` "file:line:col: " (or "file: "
 * where only a byte offset is known) and a message that says which rule
 * the input broke: YAML syntax, a second document, the nesting depth, the
 * number of nodes, what aliases expand to, an alias that names no anchor
 * or its own container, an anchor defined twice, or a tag extres does not
 * read (only the core schema's !!str, !!int, !!float, !!bool and !!null
 * on scalars, !!seq and !!map on collections). `file` names the input in
 * messages.
 */
int extres_yaml_load(const char *file, const char *buf, size_t len,
		     yaml_document_t *ret_doc, struct extres_err *err);

/*
 * Same, reading `fd` to its end as the parser goes, so that the file is
 * never held whole in memory. More than `max_bytes` is -EFBIG with "file:
 * larger than N MiB"; a read error is its errno with "file: <strerror>".
 */
int extres_yaml_load_fd(const char *file, int fd, size_t max_bytes,
			yaml_document_t *ret_doc, struct extres_err *err);

#endif
