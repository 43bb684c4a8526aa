/* SPDX-License-Identifier: MIT */
#include "config/cdi_name.h"

#include <string.h>

#include "config/name.h"

#define MAX_LABEL 63
#define MAX_SUBDOMAIN 253

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static int is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 1123 labels; the first byte a letter, as CDI 0.5's parser wants. */
static int is_vendor(const char *s, size_t len)
{
	size_t i, label = 0;

	if (len == 0 || len > MAX_SUBDOMAIN || !is_letter(s[0]))
		return 0;
	for (i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return 0;
		if (label == 0 && s[i] == '-')
			return 0;
		if (++label > MAX_LABEL)
			return 0;
	}
	return label > 0 && s[len - 1] != '-';
}

static int is_class(const char *s)
{
	size_t len = strlen(s), i;

	if (len == 0 || len > MAX_LABEL || !is_letter(s[0]) ||
	    !is_alnum(s[len - 1]))
		return 0;
	for (i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

const char *extres_cdi_kind_problem(const char *kind)
{
	const char *slash = strchr(kind, '/');

	if (!slash)
		return "has no '/' between vendor and class";
	if (!is_vendor(kind, (size_t)(slash - kind)))
		return "has a vendor that is not a DNS subdomain starting with a letter ([a-z0-9-] labels joined by '.')";
	if (!is_class(slash + 1))
		return "has a class that is not 1 to 63 of [A-Za-z0-9_-], starting with a letter and ending with a letter or digit";
	return NULL;
}

int extres_cdi_is_device_name(const char *name)
{
	size_t len = strlen(name), i;

	if (len == 0 || len > EXTRES_MAX_NAME_LEN || !is_alnum(name[0]) ||
	    !is_alnum(name[len - 1]))
		return 0;
	for (i = 0; i < len; i++)
		if (!is_alnum(name[i]) && !strchr("_.-", name[i]))
			return 0;
	return 1;
}
