/* SPDX-License-Identifier: MIT */
/*
 * "hello": an example extres driver, meant to be copied. It makes up `count`
 * devices (param.count, 1..64, default 2) that greet whoever reads them
 * (param.greeting, default "hello"). The contract it follows, and how to
 * build and install it (see the Makefile), is extres-driver(3), whose
 * EXAMPLES show its config and what the mount then holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <extres/driver.h>
#include <extres/driver_util.h>

#define PARAM_COUNT "count"
#define PARAM_GREETING "greeting"

#define DEFAULT_COUNT 2
#define DEFAULT_GREETING "hello"
/* Any bound will do for made-up devices; a real driver has the hardware's. */
#define MAX_COUNT 64

/* The handle: one per configured resource that names this driver. */
struct hello {
	/* Valid until close(): discover() gets only the handle. */
	const struct extres_host *host;
	unsigned count;
	/* Points into the param tree, which the core keeps until close(). */
	const char *greeting;
};

/*
 * A whole number in [1, MAX_COUNT], checked to the last character: "3x",
 * "-1", " 3" and "99999999999999999999" are all refused, with the position
 * of the value in the config.
 */
static int32_t parse_count(const struct extres_host *host,
			   const struct extres_param *p, unsigned *ret)
{
	unsigned long long v;
	char *end;

	if (p->kind != EXTRES_PARAM_SCALAR)
		return extres_param_error(
			host, p,
			"param.%s must be a number, not a list or mapping",
			PARAM_COUNT);
	/* strtoull() skips blanks and takes a sign; neither is a count. */
	if (p->value[0] < '0' || p->value[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(p->value, &end, 10);
	if (errno != 0 || *end != '\0' || v < 1 || v > MAX_COUNT)
		goto bad;
	*ret = (unsigned)v;
	return 0;
bad:
	return extres_param_error(
		host, p, "param.%s: '%s' is not a whole number from 1 to %d",
		PARAM_COUNT, p->value, MAX_COUNT);
}

static int32_t check_greeting(const struct extres_host *host,
			      const struct extres_param *p)
{
	if (p->kind != EXTRES_PARAM_SCALAR)
		return extres_param_error(
			host, p, "param.%s must be text, not a list or mapping",
			PARAM_GREETING);
	/* The core would refuse these at discovery too; saying so here points
	 * at the line and fails before any device is looked for. */
	if (p->value[0] == '\0' || strchr(p->value, '\n'))
		return extres_param_error(host, p,
					  "param.%s must be one non-empty line",
					  PARAM_GREETING);
	return 0;
}

/* Everything that can be wrong with the params is found here. */
static int32_t hello_open(const struct extres_host *host,
			  const struct extres_param *params, void **ret_handle)
{
	static const char *const known[] = { PARAM_COUNT, PARAM_GREETING,
					     NULL };
	const struct extres_param *count, *greeting;
	struct hello *h;
	int32_t r;

	/* An unknown member (a typo, most likely) is named with its place;
	 * of a repeated key the last wins. */
	extres_params_warn_unknown(host, params, known);
	count = extres_param_get(params, PARAM_COUNT);
	greeting = extres_param_get(params, PARAM_GREETING);

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->host = host;
	h->count = DEFAULT_COUNT;
	h->greeting = DEFAULT_GREETING;
	if (count) {
		r = parse_count(host, count, &h->count);
		if (r < 0)
			goto fail;
	}
	if (greeting) {
		r = check_greeting(host, greeting);
		if (r < 0)
			goto fail;
		h->greeting = greeting->value;
	}
	if (h->count < host->amount)
		/* Not an error of ours: the core chooses, and says "wanted N,
		 * found M" itself. A hint at the likely cause helps, though. */
		host->log(host, EXTRES_LOG_WARNING,
			  "param.%s is %u, fewer than the amount %llu",
			  PARAM_COUNT, h->count,
			  (unsigned long long)host->amount);
	*ret_handle = h;
	return 0;
fail:
	free(h);
	return r;
}

/* The sink copies what it is given, so stack buffers will do. */
static int32_t hello_discover(void *handle, struct extres_sink *sink)
{
	const struct hello *h = handle;
	char index[16], name[32];
	unsigned i;
	int32_t r;

	h->host->log(h->host, EXTRES_LOG_DEBUG, "reporting %u devices",
		     h->count);
	for (i = 0; i < h->count; i++) {
		snprintf(index, sizeof(index), "%u", i);
		snprintf(name, sizeof(name), "hello%u", i);
		/* After a failure the sink refuses everything anyway; return
		 * its error at once, it carries the message. */
		r = sink->begin_info(sink);
		if (r == 0)
			r = sink->add_property(sink, "index", index);
		if (r == 0)
			r = sink->add_property(sink, "name", name);
		if (r == 0)
			r = sink->add_property(sink, "greeting", h->greeting);
		if (r < 0)
			return r;
	}
	return 0;
}

static void hello_close(void *handle)
{
	free(handle);
}

/* .meta/env sets HELLO_DEVICES to the names of the devices taken. */
EXTRES_DRIVER_REGISTER(.name = "hello", .open = hello_open,
		       .discover = hello_discover, .close = hello_close,
		       .env_var = "HELLO_DEVICES", .env_property = "name")
