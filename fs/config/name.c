/* SPDX-License-Identifier: MIT */
#include "config/name.h"

#include <string.h>

const char *extres_name_problem(const char *name)
{
	size_t len = strlen(name), i;

	if (len == 0)
		return "is empty";
	if (len > EXTRES_MAX_NAME_LEN)
		return "is longer than 255 bytes";
	if (name[0] == '.')
		return "starts with '.'";
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '/')
			return "contains '/'";
		if (c < 0x20 || c == 0x7f)
			return "contains a control character";
	}
	return NULL;
}

int extres_is_driver_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}
