/* SPDX-License-Identifier: MIT */
#include "lib/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int text_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int text_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int text_parse_u64(const char *s, size_t len, uint64_t *ret)
{
	unsigned long long v;
	char text[24], *end;

	if (len == 0 || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, len);
	text[len] = '\0';
	if (!(text[0] >= '0' && text[0] <= '9'))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*ret = v;
	return 0;
}

int text_next_word(const char **p, const char *end, const char **ret_word,
		   size_t *ret_len)
{
	const char *s = *p, *w;

	while (s < end && text_is_space(*s))
		s++;
	if (s == end)
		return 0;
	w = s;
	while (s < end && !text_is_space(*s))
		s++;
	*ret_word = w;
	*ret_len = (size_t)(s - w);
	*p = s;
	return 1;
}
