/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tree/snapshot.h"
#include "tree/tree.h"

static const struct timespec T0 = { 1700000000, 5 };

static struct extres_tree *small_tree(void)
{
	struct extres_tree_builder *b;
	struct extres_tree *t;
	struct extres_err err;
	size_t gpu, zero, one;

	assert_int_equal(extres_tree_builder_new(&b), 0);
	assert_int_equal(extres_tree_add_dir(b, 0, "gpu", &gpu, &err), 0);
	assert_int_equal(extres_tree_add_dir(b, gpu, "0", &zero, &err), 0);
	assert_int_equal(extres_tree_add_dir(b, gpu, "1", &one, &err), 0);
	assert_int_equal(
		extres_tree_add_file(b, zero, "index", "0\n", 2, NULL, &err),
		0);
	assert_int_equal(extres_tree_add_file(b, zero, "uuid", "GPU-abc\n", 8,
					      NULL, &err),
			 0);
	assert_int_equal(
		extres_tree_add_file(b, one, "index", "1\n", 2, NULL, &err), 0);
	assert_int_equal(extres_tree_seal(b, T0, NULL, &t, &err), 0);
	return t;
}

static const struct extres_node *
walk(const struct extres_tree *t, const char *a, const char *b, const char *c)
{
	const struct extres_node *n = extres_tree_get(t, EXTRES_ROOT_INO);

	if (a && n)
		n = extres_tree_lookup(t, n->ino, a);
	if (b && n)
		n = extres_tree_lookup(t, n->ino, b);
	if (c && n)
		n = extres_tree_lookup(t, n->ino, c);
	return n;
}

static void test_lookup_and_content(void **state)
{
	struct extres_tree *t = small_tree();
	const struct extres_node *n;

	n = walk(t, "gpu", "0", "uuid");
	assert_non_null(n);
	assert_int_equal(n->size, 8);
	assert_memory_equal(n->data, "GPU-abc\n", 8);
	assert_int_equal(n->mode, S_IFREG | 0444);
	assert_null(walk(t, "gpu", "2", NULL));
	assert_null(walk(t, "gpu", "0", "name"));
	assert_null(walk(t, "fpga", NULL, NULL));
	/* A file is not a directory: nothing below it. */
	assert_null(walk(t, "gpu", "0", "index") ?
			    extres_tree_lookup(
				    t, walk(t, "gpu", "0", "index")->ino, "x") :
			    NULL);
	assert_int_equal(extres_tree_size(t), 7);
	extres_tree_free(t);
}

static void test_stat(void **state)
{
	struct extres_tree *t = small_tree();
	const struct extres_node *n;
	struct stat st;

	n = extres_tree_get(t, EXTRES_ROOT_INO);
	extres_tree_stat(n, &st);
	assert_int_equal(st.st_ino, EXTRES_ROOT_INO);
	assert_int_equal(st.st_mode, S_IFDIR | 0555);
	assert_int_equal(st.st_nlink, 3); /* ., .. and gpu/.. */
	n = walk(t, "gpu", NULL, NULL);
	extres_tree_stat(n, &st);
	assert_int_equal(st.st_nlink, 4);
	assert_int_equal(n->n_children, 2);
	assert_string_equal(n->children[0]->name, "0");
	assert_string_equal(n->children[1]->name, "1");
	assert_int_equal(n->parent, EXTRES_ROOT_INO);
	n = walk(t, "gpu", "0", "index");
	extres_tree_stat(n, &st);
	assert_int_equal(st.st_size, 2);
	assert_int_equal(st.st_nlink, 1);
	assert_int_equal(st.st_mtim.tv_sec, T0.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, T0.tv_nsec);
	assert_int_equal(st.st_uid, 0);
	extres_tree_free(t);
}

static void test_inode_stability(void **state)
{
	struct extres_tree *a = small_tree(), *b;
	struct extres_tree_builder *bb;
	struct extres_err err;
	size_t fpga, gpu, zero;

	/* Another tree with an extra resource in front and different
	 * values: the same paths keep their numbers. */
	assert_int_equal(extres_tree_builder_new(&bb), 0);
	assert_int_equal(extres_tree_add_dir(bb, 0, "fpga", &fpga, &err), 0);
	assert_int_equal(extres_tree_add_dir(bb, 0, "gpu", &gpu, &err), 0);
	assert_int_equal(extres_tree_add_dir(bb, gpu, "0", &zero, &err), 0);
	assert_int_equal(extres_tree_add_file(bb, zero, "uuid",
					      "GPU-other-value\n", 16, NULL,
					      &err),
			 0);
	assert_int_equal(extres_tree_seal(bb, T0, NULL, &b, &err), 0);
	assert_int_equal(walk(a, "gpu", NULL, NULL)->ino,
			 walk(b, "gpu", NULL, NULL)->ino);
	assert_int_equal(walk(a, "gpu", "0", NULL)->ino,
			 walk(b, "gpu", "0", NULL)->ino);
	assert_int_equal(walk(a, "gpu", "0", "uuid")->ino,
			 walk(b, "gpu", "0", "uuid")->ino);
	assert_int_not_equal(walk(a, "gpu", "0", "uuid")->ino,
			     walk(a, "gpu", "0", "index")->ino);
	/* The same name in different directories is a different inode. */
	assert_int_not_equal(walk(a, "gpu", "0", "index")->ino,
			     walk(a, "gpu", "1", "index")->ino);
	extres_tree_free(a);
	extres_tree_free(b);
}

static void test_bad_names(void **state)
{
	struct extres_tree_builder *b;
	struct extres_err err;
	size_t d;

	assert_int_equal(extres_tree_builder_new(&b), 0);
	assert_int_equal(extres_tree_add_dir(b, 0, "gpu", &d, &err), 0);
	assert_int_equal(extres_tree_add_file(b, d, "a/b", "x", 1, NULL, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "invalid file name 'a/b'");
	assert_int_equal(extres_tree_add_file(b, d, "", "x", 1, NULL, &err),
			 -EINVAL);
	assert_int_equal(extres_tree_add_file(b, d, "..", "x", 1, NULL, &err),
			 -EINVAL);
	assert_int_equal(extres_tree_add_file(b, d, "f", "x", 1, &d, &err), 0);
	/* A file cannot hold children. */
	assert_int_equal(extres_tree_add_file(b, d, "g", "x", 1, NULL, &err),
			 -EINVAL);
	assert_int_equal(extres_tree_add_dir(b, 99, "g", NULL, &err), -EINVAL);
	extres_tree_builder_free(b);
	extres_tree_builder_free(NULL);
	extres_tree_free(NULL);
}

static void test_duplicate_name(void **state)
{
	struct extres_tree_builder *b;
	struct extres_tree *t = NULL;
	struct extres_err err;
	size_t d, e;

	assert_int_equal(extres_tree_builder_new(&b), 0);
	assert_int_equal(extres_tree_add_dir(b, 0, "gpu", &d, &err), 0);
	assert_int_equal(extres_tree_add_dir(b, 0, "fpga", &e, &err), 0);
	/* The same name in two directories is fine... */
	assert_int_equal(
		extres_tree_add_file(b, d, "index", "0\n", 2, NULL, &err), 0);
	assert_int_equal(
		extres_tree_add_file(b, e, "index", "0\n", 2, NULL, &err), 0);
	/* ...twice in one is not. */
	assert_int_equal(
		extres_tree_add_file(b, d, "index", "1\n", 2, NULL, &err), 0);
	assert_int_equal(extres_tree_seal(b, T0, NULL, &t, &err), -EEXIST);
	assert_string_equal(err.msg, "'index' exists twice in one directory");
	assert_null(t);
}

static void test_empty_file(void **state)
{
	struct extres_tree_builder *b;
	struct extres_tree *t;
	struct extres_err err;

	assert_int_equal(extres_tree_builder_new(&b), 0);
	assert_int_equal(extres_tree_add_file(b, 0, "empty", "", 0, NULL, &err),
			 0);
	assert_int_equal(extres_tree_seal(b, T0, NULL, &t, &err), 0);
	assert_int_equal(walk(t, "empty", NULL, NULL)->size, 0);
	extres_tree_free(t);
}

static void test_snapshot_layout(void **state)
{
	struct extres_property p0[] = { { "index", "0", 1 },
					{ "name", "Demo GPU", 8 } };
	struct extres_property p1[] = { { "index", "1", 1 },
					{ "name", "Demo GPU", 8 } };
	struct extres_info infos[] = { { 2, p0 }, { 2, p1 } };
	struct extres_property f0[] = { { "index", "7", 1 } };
	struct extres_info finfos[] = { { 1, f0 } };
	struct extres_snapshot_resource res[] = {
		{ "gpu", infos, 2 },
		{ "fpga", finfos, 1 },
	};
	struct extres_tree *t;
	struct extres_err err;
	const struct extres_node *root, *n;

	assert_int_equal(extres_snapshot_build(res, 2, T0, NULL, &t, &err), 0);
	root = extres_tree_get(t, EXTRES_ROOT_INO);
	assert_int_equal(root->n_children, 2);
	assert_string_equal(root->children[0]->name, "gpu");
	assert_string_equal(root->children[1]->name, "fpga");
	n = walk(t, "gpu", "1", "name");
	assert_int_equal(n->size, 9);
	assert_memory_equal(n->data, "Demo GPU\n", 9);
	n = walk(t, "fpga", "0", "index");
	assert_memory_equal(n->data, "7\n", 2);
	assert_int_equal(n->size, 2);
	extres_tree_free(t);
}

static void test_snapshot_duplicate_resource(void **state)
{
	struct extres_snapshot_resource res[] = { { "gpu", NULL, 0 },
						  { "gpu", NULL, 0 } };
	struct extres_tree *t = NULL;
	struct extres_err err;

	assert_int_equal(extres_snapshot_build(res, 2, T0, NULL, &t, &err),
			 -EEXIST);
	assert_null(t);
}

static void test_many_infos(void **state)
{
	enum { N = 1000 };
	struct extres_property *props = calloc(N, sizeof(*props));
	struct extres_info *infos = calloc(N, sizeof(*infos));
	char(*vals)[16] = calloc(N, sizeof(*vals));
	struct extres_snapshot_resource res = { "many", infos, N };
	struct extres_tree *t;
	struct extres_err err;
	char name[16];
	size_t i;

	for (i = 0; i < N; i++) {
		snprintf(vals[i], sizeof(vals[i]), "%zu", i);
		props[i] = (struct extres_property){ "index", vals[i],
						     strlen(vals[i]) };
		infos[i] = (struct extres_info){ 1, &props[i] };
	}
	assert_int_equal(extres_snapshot_build(&res, 1, T0, NULL, &t, &err), 0);
	assert_int_equal(extres_tree_size(t), 2 + 2 * N);
	for (i = 0; i < N; i++) {
		const struct extres_node *n;

		snprintf(name, sizeof(name), "%zu", i);
		n = walk(t, "many", name, "index");
		assert_non_null(n);
		assert_int_equal(n->size, strlen(vals[i]) + 1);
		assert_memory_equal(n->data, vals[i], strlen(vals[i]));
		assert_ptr_equal(extres_tree_get(t, n->ino), n);
	}
	extres_tree_free(t);
	free(props);
	free(infos);
	free(vals);
}

static const struct timespec T1 = { 1700000100, 0 };

struct diff_log {
	char lines[16][64];
	int n;
};

static int record(void *ctx, int what, const struct extres_node *node,
		  const struct extres_node *now)
{
	struct diff_log *log = ctx;

	/* A changed node is handed over as it is now, by the same number. */
	assert_true(what == EXTRES_TREE_REMOVED ? now == NULL :
						  now && now->ino == node->ino);
	snprintf(log->lines[log->n++], sizeof(log->lines[0]), "%s %s",
		 what == EXTRES_TREE_REMOVED ? "removed" : "changed",
		 node->name[0] ? node->name : "/");
	return 0;
}

/* gpu/0/{index,uuid} and fpga/0/index, with gpu 0's uuid as given. */
static struct extres_tree *two_resources(const char *uuid, int with_fpga,
					 const struct extres_tree *prev,
					 struct timespec now)
{
	struct extres_property g0[] = {
		{ "index", "0", 1 }, { "uuid", (char *)uuid, strlen(uuid) }
	};
	struct extres_info ginfos[] = { { 2, g0 } };
	struct extres_property f0[] = { { "index", "7", 1 } };
	struct extres_info finfos[] = { { 1, f0 } };
	struct extres_snapshot_resource res[] = {
		{ "gpu", ginfos, 1 },
		{ "fpga", finfos, 1 },
	};
	struct extres_snapshot_file meta[] = { { "status", "pid 1\n", 6, 0 } };
	struct extres_tree *t;
	struct extres_err err;

	assert_int_equal(extres_snapshot_build_meta(res, with_fpga ? 2 : 1,
						    meta, 1, now, prev, &t,
						    &err),
			 0);
	return t;
}

/* A tree of 16 MiB of names and values is built; one with two bytes more,
 * however it came about (a refresh), is refused whole. */
static void test_snapshot_limit(void **state)
{
	enum { N = 256 };
	char *value = calloc(1, 65535 + 1);
	struct extres_property *props = calloc(N, sizeof(*props));
	struct extres_info *infos = calloc(N, sizeof(*infos));
	struct extres_property more[] = { { "x", "y", 1 } };
	struct extres_info one[] = { { 1, more } };
	struct extres_snapshot_resource res[] = { { "a", infos, N },
						  { "b", one, 1 } };
	struct extres_tree *t = NULL;
	struct extres_err err;
	size_t i;

	assert_non_null(value);
	memset(value, 'v', 65535);
	for (i = 0; i < N; i++) {
		props[i] = (struct extres_property){ "k", value, 65535 };
		infos[i] = (struct extres_info){ 1, &props[i] };
	}
	assert_int_equal(extres_snapshot_build(res, 1, T0, NULL, &t, &err), 0);
	assert_int_equal(walk(t, "a", "255", "k")->size, 65536);
	extres_tree_free(t);
	t = NULL;
	assert_int_equal(extres_snapshot_build(res, 2, T0, NULL, &t, &err),
			 -E2BIG);
	assert_string_equal(
		err.msg,
		"resource 'b' and those before it: 16777218 bytes of property names and values, more than the 16777216 extres serves");
	assert_null(t);
	free(value);
	free(props);
	free(infos);
}

static void test_mtime_kept_when_unchanged(void **state)
{
	struct extres_tree *a = two_resources("GPU-a", 1, NULL, T0);
	struct extres_tree *b = two_resources("GPU-b", 1, a, T1);
	struct stat st;

	/* Changed: the file (a new inode) and so its directory (whose
	 * listing names a new inode); nothing else. */
	extres_tree_stat(walk(b, "gpu", "0", "uuid"), &st);
	assert_int_equal(st.st_mtim.tv_sec, T1.tv_sec);
	assert_int_not_equal(st.st_ino, walk(a, "gpu", "0", "uuid")->ino);
	extres_tree_stat(walk(b, "gpu", "0", "index"), &st);
	assert_int_equal(st.st_mtim.tv_sec, T0.tv_sec);
	assert_int_equal(st.st_ino, walk(a, "gpu", "0", "index")->ino);
	extres_tree_stat(walk(b, "gpu", "0", NULL), &st);
	assert_int_equal(st.st_mtim.tv_sec, T1.tv_sec);
	assert_int_equal(st.st_ino, walk(a, "gpu", "0", NULL)->ino);
	extres_tree_stat(walk(b, "gpu", NULL, NULL), &st);
	assert_int_equal(st.st_mtim.tv_sec, T0.tv_sec);
	extres_tree_stat(walk(b, ".meta", "status", NULL), &st);
	assert_int_equal(st.st_mtim.tv_sec, T0.tv_sec);
	assert_int_equal(st.st_size, 6);
	extres_tree_free(a);
	extres_tree_free(b);
}

/* A private file: its mode, and a new number when only the mode changes;
 * only read bits are accepted. Serials count the line of trees. */
static void test_private_file_and_serial(void **state)
{
	struct extres_snapshot_file meta[] = { { "error", "why\n", 4, 0400 } };
	struct extres_tree *a = two_resources("GPU-a", 1, NULL, T0), *b;
	struct extres_tree_builder *bld;
	struct extres_err err;
	struct stat st;

	assert_int_equal(extres_tree_serial(a), 0);
	assert_int_equal(
		extres_snapshot_build_meta(NULL, 0, meta, 1, T1, a, &b, &err),
		0);
	assert_int_equal(extres_tree_serial(b), 1);
	extres_tree_stat(walk(b, ".meta", "error", NULL), &st);
	assert_int_equal(st.st_mode, S_IFREG | 0400);
	assert_int_equal(st.st_size, 4);
	extres_tree_free(a);
	a = b;
	meta[0].perm = 0;
	assert_int_equal(
		extres_snapshot_build_meta(NULL, 0, meta, 1, T1, a, &b, &err),
		0);
	extres_tree_stat(walk(b, ".meta", "error", NULL), &st);
	assert_int_equal(st.st_mode, S_IFREG | 0444);
	assert_int_not_equal(st.st_ino, walk(a, ".meta", "error", NULL)->ino);
	extres_tree_free(a);
	extres_tree_free(b);

	assert_int_equal(extres_tree_builder_new(&bld), 0);
	assert_int_equal(
		extres_tree_add_file_perm(bld, 0, "x", "", 0, 0644, NULL, &err),
		-EINVAL);
	assert_non_null(strstr(err.msg, "'x'"));
	extres_tree_builder_free(bld);
}

static void test_changed_file_never_reuses_a_number(void **state)
{
	struct extres_tree *a = two_resources("GPU-a", 1, NULL, T0);
	struct extres_tree *b = two_resources("GPU-b", 1, a, T1);
	struct extres_tree *c = two_resources("GPU-a", 1, b, T1);
	uint64_t ia = walk(a, "gpu", "0", "uuid")->ino;
	uint64_t ib = walk(b, "gpu", "0", "uuid")->ino;
	uint64_t ic = walk(c, "gpu", "0", "uuid")->ino;

	/* Back to the first value: still a new number, since the kernel may
	 * hold the first one open with other bytes cached. */
	assert_int_not_equal(ia, ib);
	assert_int_not_equal(ib, ic);
	assert_int_not_equal(ia, ic);
	assert_null(extres_tree_get(c, ib));
	extres_tree_free(a);
	extres_tree_free(b);
	extres_tree_free(c);
}

static int in_use_set(void *ctx, uint64_t ino)
{
	return ctx && *(uint64_t *)ctx == ino;
}

/* A retired tree keeps a lost file's bytes while a reader may ask for
 * them, and sheds them when none may; the listing stays. */
static void test_retire_and_shed(void **state)
{
	struct extres_tree *a = two_resources("GPU-a", 1, NULL, T0);
	struct extres_tree *b = two_resources("GPU-b", 1, a, T1);
	uint64_t ia = walk(a, "gpu", "0", "uuid")->ino;
	uint64_t dir = walk(a, "gpu", "0", NULL)->ino;
	struct extres_tree *r;
	const struct extres_node *n;

	/* Nobody knows the old uuid: only its name stays, in the listing. */
	assert_int_equal(extres_tree_retire(a, b, in_use_set, NULL, &r), 0);
	assert_null(extres_tree_get(r, ia));
	n = extres_tree_get(r, dir);
	assert_non_null(n);
	assert_int_equal(n->n_children, 2);
	assert_string_equal(n->children[1]->name, "uuid");
	assert_int_equal(n->children[1]->ino, ia);
	assert_null(extres_tree_get(r, walk(a, "gpu", "0", "index")->ino));
	extres_tree_free(r);

	/* Known: kept whole, until it is not. */
	assert_int_equal(extres_tree_retire(a, b, in_use_set, &ia, &r), 0);
	n = extres_tree_get(r, ia);
	assert_non_null(n);
	assert_int_equal(n->size, 6);
	assert_memory_equal(n->data, "GPU-a\n", 6);
	extres_tree_shed(r, in_use_set, &ia);
	assert_non_null(extres_tree_get(r, ia));
	extres_tree_shed(r, in_use_set, NULL);
	assert_null(extres_tree_get(r, ia));
	n = extres_tree_get(r, dir);
	assert_non_null(n);
	assert_string_equal(n->children[1]->name, "uuid");
	assert_int_equal(n->children[1]->size, 6);
	extres_tree_free(r);
	extres_tree_free(a);
	extres_tree_free(b);
}

static void test_diff(void **state)
{
	struct extres_tree *a = two_resources("GPU-a", 1, NULL, T0);
	struct extres_tree *b = two_resources("GPU-bb", 0, a, T1);
	struct diff_log log = { .n = 0 };

	assert_int_equal(extres_tree_diff(a, b, record, &log), 0);
	/* Root lost a child; uuid's name now leads to a new inode, which
	 * changes its directory's listing; fpga went whole. */
	assert_int_equal(log.n, 4);
	assert_string_equal(log.lines[0], "changed /");
	assert_string_equal(log.lines[1], "changed 0");
	assert_string_equal(log.lines[2], "removed uuid");
	assert_string_equal(log.lines[3], "removed fpga");
	log.n = 0;
	assert_int_equal(extres_tree_diff(b, b, record, &log), 0);
	assert_int_equal(log.n, 0);
	extres_tree_free(a);
	extres_tree_free(b);
}

static void test_meta_hidden_dir(void **state)
{
	struct extres_tree *t = two_resources("GPU-a", 1, NULL, T0);
	const struct extres_node *root = extres_tree_get(t, EXTRES_ROOT_INO);
	const struct extres_node *st = walk(t, ".meta", "status", NULL);

	/* Resources first, the hidden directory last. */
	assert_int_equal(root->n_children, 3);
	assert_string_equal(root->children[2]->name, ".meta");
	assert_non_null(st);
	assert_memory_equal(st->data, "pid 1\n", 6);
	extres_tree_free(t);
}

/* A directory of .meta: made at its first mention, files in it in order,
 * one named alone with "DIR/" stays even when empty. */
static void test_meta_subdir(void **state)
{
	struct extres_snapshot_file meta[] = {
		{ "jobs/", NULL, 0, 0 },       { "jobs/0", "a\n", 2, 0 },
		{ "status", "pid 1\n", 6, 0 }, { "jobs/1", "b\n", 2, 0 },
		{ "none/", NULL, 0, 0 },
	};
	const struct extres_node *jobs, *none;
	struct extres_tree *t;
	struct extres_err err;

	assert_int_equal(extres_snapshot_build_meta(NULL, 0, meta, 5, T0, NULL,
						    &t, &err),
			 0);
	jobs = walk(t, ".meta", "jobs", NULL);
	assert_non_null(jobs);
	assert_true(S_ISDIR(jobs->mode));
	assert_int_equal(jobs->n_children, 2);
	assert_string_equal(jobs->children[0]->name, "0");
	assert_string_equal(jobs->children[1]->name, "1");
	assert_memory_equal(walk(t, ".meta", "jobs", "1")->data, "b\n", 2);
	none = walk(t, ".meta", "none", NULL);
	assert_non_null(none);
	assert_int_equal(none->n_children, 0);
	assert_non_null(walk(t, ".meta", "status", NULL));
	extres_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_and_content),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_inode_stability),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_duplicate_name),
		cmocka_unit_test(test_empty_file),
		cmocka_unit_test(test_snapshot_layout),
		cmocka_unit_test(test_snapshot_duplicate_resource),
		cmocka_unit_test(test_many_infos),
		cmocka_unit_test(test_snapshot_limit),
		cmocka_unit_test(test_mtime_kept_when_unchanged),
		cmocka_unit_test(test_changed_file_never_reuses_a_number),
		cmocka_unit_test(test_retire_and_shed),
		cmocka_unit_test(test_private_file_and_serial),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_meta_hidden_dir),
		cmocka_unit_test(test_meta_subdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
