/* SPDX-License-Identifier: MIT */
/*
 * The amdgpu driver's `health`, from the kernel's RAS files in a GPU's PCI
 * device directory (drivers/gpu/drm/amd/amdgpu/amdgpu_ras.c,
 * Documentation/gpu/amdgpu/ras.rst): <dev>/ras/<block>_err_count reads
 * "ue: N" and "ce: N" lines (and "de: N" for umc), <dev>/ras/
 * gpu_vram_bad_pages one "pfn : size : flag" line per bad page, flag R
 * (retired), P (pending retirement) or F (could not be retired).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "amdgpu_health.h"
#include "text_scan.h"

#define ERR_COUNT "_err_count"

/* By name, but umc first: it is the memory, the usual fault. */
static int compare_blocks(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	int x_umc = strcmp(x, "umc") == 0, y_umc = strcmp(y, "umc") == 0;

	if (x_umc != y_umc)
		return y_umc - x_umc;
	return strcmp(x, y);
}

/* The length of <block> in a "<block>_err_count" file name, or 0. */
static size_t block_len(const char *name)
{
	size_t len = strlen(name), suffix = strlen(ERR_COUNT);

	if (len <= suffix || strcmp(name + len - suffix, ERR_COUNT) != 0)
		return 0;
	return len - suffix;
}

/* The "ue: N" of a RAS error count file: 1 when N > 0, else 0. */
static int has_ue(const char *file, struct sysfs_buf *buf)
{
	const char *p, *why;
	uint64_t n;

	if (sysfs_read(file, buf, &why) < 0)
		return 0;
	for (p = buf->data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (strncmp(p, "ue: ", 4) != 0 || !(p[4] >= '0' && p[4] <= '9'))
			continue;
		return text_parse_dec(p + 4, strcspn(p + 4, "\n"), UINT64_MAX,
				      &n) == 0 &&
		       n > 0;
	}
	return 0;
}

/* Flags P and F among gpu_vram_bad_pages' "pfn : size : flag" lines; the
 * list may be longer than a page, so it is read a line at a time. */
static void bad_pages(const char *file, int *ret_pending, int *ret_failed)
{
	char *line = NULL, *flag;
	size_t cap = 0;
	struct stat st;
	FILE *f;
	int fd;

	*ret_pending = *ret_failed = 0;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !(f = fdopen(fd, "re"))) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		flag = strrchr(line, ':');
		if (!flag)
			continue;
		flag += strspn(flag + 1, " ") + 1;
		*ret_pending |= *flag == 'P';
		*ret_failed |= *flag == 'F';
	}
	free(line);
	fclose(f);
}

int32_t amdgpu_add_health(struct extres_sink *sink, const char *dev,
			  struct sysfs_buf *buf)
{
	char *dir = NULL, *file = NULL, *names[64], health[512] = "";
	size_t n = 0, i, len;
	struct dirent *e;
	int pending, failed;
	int32_t r = -ENOMEM;
	DIR *d;

	if (asprintf(&dir, "%s/ras", dev) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d) {
		free(dir);
		return 0;
	}
	while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
		len = block_len(e->d_name);
		if (len == 0)
			continue;
		names[n] = strndup(e->d_name, len);
		if (!names[n])
			goto out;
		n++;
	}
	qsort(names, n, sizeof(names[0]), compare_blocks);
	for (i = 0; i < n; i++) {
		if (asprintf(&file, "%s/%s" ERR_COUNT, dir, names[i]) < 0) {
			file = NULL;
			goto out;
		}
		len = strlen(health);
		if (has_ue(file, buf))
			snprintf(health + len, sizeof(health) - len, "%s%s%s",
				 len ? "," : "",
				 strcmp(names[i], "umc") == 0 ? "ecc-" : "ue-",
				 strcmp(names[i], "umc") == 0 ? "ue" :
								names[i]);
		free(file);
		file = NULL;
	}
	if (asprintf(&file, "%s/gpu_vram_bad_pages", dir) < 0) {
		file = NULL;
		goto out;
	}
	bad_pages(file, &pending, &failed);
	len = strlen(health);
	if (pending)
		len += (size_t)snprintf(health + len, sizeof(health) - len,
					"%sbad-pages-pending", len ? "," : "");
	if (failed && len < sizeof(health))
		snprintf(health + len, sizeof(health) - len,
			 "%sbad-pages-failed", len ? "," : "");
	r = sink->add_property(sink, "health", health[0] ? health : "ok");
out:
	closedir(d);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(file);
	free(dir);
	return r;
}
