/* SPDX-License-Identifier: MIT */
#include "config/yaml_write.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

struct extres_yaml_write {
	yaml_emitter_t em;
	char *data;
	size_t len, cap;
	int error; /* the first failure, sticky */
	int finished;
};

/* libyaml's output handler: 1 on success, 0 on failure. */
static int buffer_write(void *arg, unsigned char *text, size_t size)
{
	struct extres_yaml_write *w = arg;
	size_t cap;
	char *p;

	/* One more byte than the text, for the NUL that finish adds. */
	if (w->cap - w->len <= size) {
		cap = w->cap ? w->cap : 256;
		while (cap - w->len <= size) {
			if (cap > SIZE_MAX / 2)
				return 0;
			cap *= 2;
		}
		p = realloc(w->data, cap);
		if (!p)
			return 0;
		w->data = p;
		w->cap = cap;
	}
	memcpy(w->data + w->len, text, size);
	w->len += size;
	return 1;
}

/* Emit `ev` if making it succeeded (`made`). yaml_emitter_emit() frees the
 * event, also when it fails; an event it is not given is freed here. */
static int emit(struct extres_yaml_write *w, yaml_event_t *ev, int made)
{
	if (!made)
		return w->error ? w->error : (w->error = -ENOMEM);
	if (w->error || w->finished) {
		yaml_event_delete(ev);
		return w->error ? w->error : (w->error = -EINVAL);
	}
	if (!yaml_emitter_emit(&w->em, ev))
		w->error = w->em.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
	return w->error;
}

int extres_yaml_write_new(struct extres_yaml_write **ret)
{
	struct extres_yaml_write *w = calloc(1, sizeof(*w));
	yaml_event_t ev;

	if (!w)
		return -ENOMEM;
	if (!yaml_emitter_initialize(&w->em)) {
		free(w);
		return -ENOMEM;
	}
	yaml_emitter_set_output(&w->em, buffer_write, w);
	yaml_emitter_set_unicode(&w->em, 1);
	/* Never fold a long name onto a second line. */
	yaml_emitter_set_width(&w->em, -1);
	emit(w, &ev,
	     yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	/* Implicit: no "---", so that the text pastes into a spec. */
	emit(w, &ev,
	     yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	*ret = w;
	return 0;
}

void extres_yaml_write_free(struct extres_yaml_write *w)
{
	if (!w)
		return;
	yaml_emitter_delete(&w->em);
	free(w->data);
	free(w);
}

int extres_yaml_write_begin_mapping(struct extres_yaml_write *w)
{
	yaml_event_t ev;

	return emit(w, &ev,
		    yaml_mapping_start_event_initialize(
			    &ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
}

int extres_yaml_write_end_mapping(struct extres_yaml_write *w)
{
	yaml_event_t ev;

	return emit(w, &ev, yaml_mapping_end_event_initialize(&ev));
}

static int scalar(struct extres_yaml_write *w, const char *s, int quoted)
{
	yaml_event_t ev;

	return emit(w, &ev,
		    yaml_scalar_event_initialize(
			    &ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
			    1, 1,
			    quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE :
				     YAML_ANY_SCALAR_STYLE));
}

/*
 * Whether a plain scalar `s` would read back as something other than a
 * string (a number, a boolean, null) under YAML 1.1 or 1.2.
 */
static int plain_is_not_string(const char *s)
{
	static const char *const words[] = {
		"~",   "null", "true", "false", "yes",	 "no",	  "on",
		"off", "y",    "n",    ".inf",	"-.inf", "+.inf", ".nan",
	};
	size_t i;

	if ((s[0] >= '0' && s[0] <= '9') ||
	    ((s[0] == '-' || s[0] == '+' || s[0] == '.') && s[1] >= '0' &&
	     s[1] <= '9'))
		return 1;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(s, words[i]) == 0)
			return 1;
	return 0;
}

int extres_yaml_write_string(struct extres_yaml_write *w, const char *s)
{
	return scalar(w, s, plain_is_not_string(s));
}

int extres_yaml_write_plain(struct extres_yaml_write *w, const char *s)
{
	return scalar(w, s, 0);
}

int extres_yaml_write_finish(struct extres_yaml_write *w, char **ret_text,
			     size_t *ret_len, struct extres_err *err)
{
	yaml_event_t ev;
	int r;

	emit(w, &ev, yaml_document_end_event_initialize(&ev, 1));
	r = emit(w, &ev, yaml_stream_end_event_initialize(&ev));
	if (r == 0 && !yaml_emitter_flush(&w->em))
		r = w->error = -ENOMEM;
	w->finished = 1;
	if (r < 0)
		return extres_err_set(err, -r, "%s",
				      w->em.problem ? w->em.problem :
						      "out of memory");
	/* buffer_write() kept a byte free past the text. */
	if (!w->data && buffer_write(w, (unsigned char *)"", 0) == 0)
		return extres_err_set(err, ENOMEM, "out of memory");
	w->data[w->len] = '\0';
	*ret_text = w->data;
	*ret_len = w->len;
	w->data = NULL;
	w->len = w->cap = 0;
	return 0;
}
