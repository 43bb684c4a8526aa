/* SPDX-License-Identifier: MIT */
#include "os/cpus.h"

#include <errno.h>
#include <string.h>

#include "base/text.h"

/* One decimal CPU number at *p; moves *p past it. */
static int parse_cpu(const char **p, const char *end, unsigned *ret)
{
	const char *s = *p;
	uint64_t v;

	while (*p < end && **p >= '0' && **p <= '9')
		(*p)++;
	if (extres_parse_dec(s, (size_t)(*p - s), CPU_SETSIZE - 1, &v) < 0)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int extres_cpulist_parse(const char *s, cpu_set_t *set)
{
	const char *p = s, *end = s + strlen(s);
	unsigned a, b, cpu;

	while (p < end && extres_is_space(*p))
		p++;
	while (end > p && extres_is_space(end[-1]))
		end--;
	while (p < end) {
		if (parse_cpu(&p, end, &a) < 0)
			return -EINVAL;
		b = a;
		if (p < end && *p == '-') {
			p++;
			if (parse_cpu(&p, end, &b) < 0 || b < a)
				return -EINVAL;
		}
		for (cpu = a; cpu <= b; cpu++)
			CPU_SET(cpu, set);
		if (p == end)
			break;
		/* A separator must be followed by another item. */
		if (*p != ',' || ++p == end)
			return -EINVAL;
	}
	return 0;
}
