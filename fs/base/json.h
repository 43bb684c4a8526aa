/* SPDX-License-Identifier: MIT */
/*
 * A writer for one JSON document (RFC 8259) into a growable memory buffer,
 * for extresctl's --json output and the daemon's hidden views alike. The
 * caller decides where the text goes (fwrite, a tree node, ...).
 *
 * The text reads the same everywhere: arrays `[a, b]`, objects
 * `{"key": value, "key2": value2}`, `[]` and `{}` when empty, one line, a
 * "\n" after the document. Strings are written exactly, with one exception:
 *
 *   - '"' and '\\' are escaped; so are the controls, as \b \t \n \f \r or
 *     \u00XX, and U+007F, U+0080..U+009F, U+2028 and U+2029 as \uXXXX, so
 *     that the text never sends a control sequence to a terminal and stays
 *     valid JavaScript. Every other character is written as its UTF-8.
 *   - Each byte that is not part of valid UTF-8 (a stray continuation byte,
 *     a sequence cut short, an overlong form, a surrogate, anything beyond
 *     U+10FFFF) becomes U+FFFD: JSON text is UTF-8 and cannot carry it.
 *
 * Errors are sticky: the first failure is kept, every later call returns it
 * and writes nothing, so a caller may make a run of calls and check only
 * extres_json_finish(). Every function returns 0 or a negative errno:
 *
 *   -ENOMEM  out of memory
 *   -EINVAL  a call out of place: a value where an object wants a key, a key
 *            outside an object, an end that does not match its begin, a
 *            second top-level value, finish before the document is whole,
 *            any call after finish
 *   -E2BIG   arrays and objects nested deeper than EXTRES_JSON_MAX_DEPTH
 *
 * Not thread-safe: one writer belongs to one thread at a time.
 */
#ifndef EXTRES_JSON_H
#define EXTRES_JSON_H

#include <stddef.h>
#include <stdint.h>

#define EXTRES_JSON_MAX_DEPTH 64

struct extres_json;

/* Begin a document: an empty writer that takes exactly one top-level value.
 * Free it with extres_json_free(). */
int extres_json_new(struct extres_json **ret_json);

/* Accepts NULL. Frees the text too unless extres_json_finish() handed it
 * over. */
void extres_json_free(struct extres_json *json);

int extres_json_begin_array(struct extres_json *json);
int extres_json_end_array(struct extres_json *json);
int extres_json_begin_object(struct extres_json *json);
int extres_json_end_object(struct extres_json *json);

/* The key of the next member of the innermost object; its value follows
 * with the next call. Keys are strings, escaped as strings are. */
int extres_json_key(struct extres_json *json, const char *key);

/* A string value: `s` up to its NUL, or `len` bytes of `s` (NUL bytes
 * included, written as \u0000). */
int extres_json_string(struct extres_json *json, const char *s);
int extres_json_string_len(struct extres_json *json, const char *s, size_t len);

/* A number, in decimal. */
int extres_json_uint(struct extres_json *json, uint64_t v);

int extres_json_null(struct extres_json *json);

/* true for non-zero `v`, else false. */
int extres_json_bool(struct extres_json *json, int v);

/*
 * End the document: the top-level value must be complete. On success,
 * *ret_text is the NUL-terminated text, ending in "\n", which the caller
 * frees with free(), and *ret_len its length without the NUL. On failure
 * both are untouched and nothing is handed over. Either way the writer
 * takes no more calls (they fail) and is still to be freed.
 */
int extres_json_finish(struct extres_json *json, char **ret_text,
		       size_t *ret_len);

#endif
