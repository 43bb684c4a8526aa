/* SPDX-License-Identifier: MIT */
#include "tree/snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

/* fuse_ops.c's readdir offsets carry an entry's position in 32 bits: no
 * directory may hold more (resources and .meta, infos, properties). */
_Static_assert(EXTRES_MAX_RESOURCES + 1 + 2 < (1ULL << 32) &&
		       EXTRES_MAX_AMOUNT + 2 < (1ULL << 32) &&
		       EXTRES_MAX_PROPERTIES + 2 < (1ULL << 32),
	       "a directory's entries must fit readdir's 32-bit positions");

/* A buffer for one file's content at a time, grown as needed: tens of
 * thousands of properties need not each allocate one. */
struct content {
	char *data;
	size_t cap;
};

static int add_property(struct extres_tree_builder *b, size_t dir,
			const struct extres_property *p, struct content *c,
			struct extres_err *err)
{
	if (c->cap < p->value_len + 1) {
		char *data = realloc(c->data, p->value_len + 1);

		if (!data)
			return extres_err_set(err, ENOMEM, "out of memory");
		c->data = data;
		c->cap = p->value_len + 1;
	}
	memcpy(c->data, p->value, p->value_len);
	c->data[p->value_len] = '\n';
	return extres_tree_add_file(b, dir, p->key, c->data, p->value_len + 1,
				    NULL, err);
}

static int add_resource(struct extres_tree_builder *b, size_t parent,
			const struct extres_snapshot_resource *res,
			struct content *c, struct extres_err *err)
{
	size_t rdir, idir, i, k;
	char num[32];
	int r;

	r = extres_tree_add_dir(b, parent, res->name, &rdir, err);
	if (r < 0)
		return r;
	for (i = 0; i < res->n_infos; i++) {
		snprintf(num, sizeof(num), "%zu", i);
		r = extres_tree_add_dir(b, rdir, num, &idir, err);
		if (r < 0)
			return r;
		for (k = 0; k < res->infos[i].n_props; k++) {
			r = add_property(b, idir, &res->infos[i].props[k], c,
					 err);
			if (r < 0)
				return extres_err_prefix(
					err, -r, "resource '%s' info %zu",
					res->name, i);
		}
	}
	return 0;
}

static int build(const struct extres_snapshot_resource *res, size_t n,
		 const struct extres_snapshot_file *files, size_t n_files,
		 const struct extres_snapshot_lease *leases, size_t n_leases,
		 int self, struct timespec mtime,
		 const struct extres_tree *prev, struct extres_tree **ret,
		 struct extres_err *err);

int extres_snapshot_build(const struct extres_snapshot_resource *res, size_t n,
			  struct timespec mtime, const struct extres_tree *prev,
			  struct extres_tree **ret, struct extres_err *err)
{
	return extres_snapshot_build_meta(res, n, NULL, 0, mtime, prev, ret,
					  err);
}

int extres_snapshot_build_meta(const struct extres_snapshot_resource *res,
			       size_t n,
			       const struct extres_snapshot_file *files,
			       size_t n_files, struct timespec mtime,
			       const struct extres_tree *prev,
			       struct extres_tree **ret, struct extres_err *err)
{
	return build(res, n, files, n_files, NULL, 0, 0, mtime, prev, ret, err);
}

int extres_snapshot_build_self(const struct extres_snapshot_resource *res,
			       size_t n,
			       const struct extres_snapshot_file *files,
			       size_t n_files,
			       const struct extres_snapshot_lease *leases,
			       size_t n_leases, struct timespec mtime,
			       const struct extres_tree *prev,
			       struct extres_tree **ret, struct extres_err *err)
{
	return build(res, n, files, n_files, leases, n_leases, 1, mtime, prev,
		     ret, err);
}

/* /self and /.leases. */
static int add_self(struct extres_tree_builder *b,
		    const struct extres_snapshot_lease *leases, size_t n,
		    struct content *c, struct extres_err *err)
{
	size_t dir, ldir, i, k;
	int r;

	r = extres_tree_add_symlink(b, 0, "self", EXTRES_SNAPSHOT_NO_LEASE,
				    NULL, err);
	if (r == 0)
		r = extres_tree_add_dir(b, 0, EXTRES_SNAPSHOT_LEASES, &dir,
					err);
	if (r == 0)
		r = extres_tree_add_dir(b, dir, "none", NULL, err);
	for (i = 0; r == 0 && i < n; i++) {
		r = extres_tree_add_dir(b, dir, leases[i].id, &ldir, err);
		for (k = 0; r == 0 && k < leases[i].n_res; k++)
			r = add_resource(b, ldir, &leases[i].res[k], c, err);
		if (r < 0)
			extres_err_prefix(err, -r, "lease '%s'", leases[i].id);
	}
	return r;
}

/* The directory of .meta that `f` goes in (made at its first mention
 * among the files before it) in *ret_dir, and the file's own name in
 * *ret_name ("" for a directory alone). */
static int meta_dir(struct extres_tree_builder *b, size_t meta,
		    const struct extres_snapshot_file *files, size_t i,
		    size_t *dirs, size_t *ret_dir, const char **ret_name,
		    struct extres_err *err)
{
	const char *slash = strchr(files[i].name, '/');
	size_t len, k;
	char *name;
	int r;

	*ret_dir = meta;
	*ret_name = files[i].name;
	if (!slash)
		return 0;
	len = (size_t)(slash - files[i].name);
	*ret_name = slash + 1;
	for (k = 0; k < i; k++)
		if (strncmp(files[k].name, files[i].name, len + 1) == 0) {
			*ret_dir = dirs[k];
			return 0;
		}
	name = strndup(files[i].name, len);
	if (!name)
		return extres_err_set(err, ENOMEM, "out of memory");
	r = extres_tree_add_dir(b, meta, name, ret_dir, err);
	free(name);
	return r;
}

static int build(const struct extres_snapshot_resource *res, size_t n,
		 const struct extres_snapshot_file *files, size_t n_files,
		 const struct extres_snapshot_lease *leases, size_t n_leases,
		 int self, struct timespec mtime,
		 const struct extres_tree *prev, struct extres_tree **ret,
		 struct extres_err *err)
{
	size_t *dirs = NULL;
	const char *name;
	struct extres_infos_size size = { 0 };
	struct extres_tree_builder *b;
	struct content c = { NULL, 0 };
	size_t i, meta;
	int r;

	/* Start-up and reload refuse such a tree before serving anything,
	 * and give back what they took (extres_reallocate_all()); a refresh,
	 * whose values may grow, does not: its tree is refused here, and the
	 * last one stays. */
	for (i = 0; i < n; i++) {
		r = extres_infos_size_add(&size, res[i].infos, res[i].n_infos,
					  err);
		if (r < 0)
			return extres_err_prefix(
				err, -r, "resource '%s' and those before it",
				res[i].name);
	}
	r = extres_tree_builder_new(&b);
	if (r < 0)
		return extres_err_set(err, -r, "out of memory");
	for (i = 0; i < n; i++) {
		r = add_resource(b, 0, &res[i], &c, err);
		if (r < 0)
			goto fail;
	}
	/* Before .meta, whose status comes last (see the daemon's
	 * publish). */
	if (self) {
		r = add_self(b, leases, n_leases, &c, err);
		if (r < 0)
			goto fail;
	}
	free(c.data);
	c.data = NULL;
	if (n_files) {
		r = extres_tree_add_dir(b, 0, ".meta", &meta, err);
		if (r < 0)
			goto fail;
	}
	dirs = calloc(n_files ? n_files : 1, sizeof(*dirs));
	if (!dirs) {
		r = extres_err_set(err, ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < n_files; i++) {
		r = meta_dir(b, meta, files, i, dirs, &dirs[i], &name, err);
		if (r == 0 && name[0])
			r = extres_tree_add_file_perm(
				b, dirs[i], name, files[i].data, files[i].len,
				files[i].perm ? files[i].perm : 0444, NULL,
				err);
		if (r < 0)
			goto fail;
	}
	free(dirs);
	return extres_tree_seal(b, mtime, prev, ret, err);
fail:
	free(dirs);
	free(c.data);
	extres_tree_builder_free(b);
	return r;
}
