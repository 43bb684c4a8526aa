/* SPDX-License-Identifier: MIT */
/* The tree's layout, shared by the files of fs/tree only. */
#ifndef EXTRES_TREE_INTERNAL_H
#define EXTRES_TREE_INTERNAL_H

#include "tree/tree.h"

struct extres_tree {
	struct extres_node *nodes; /* [0] is the root */
	size_t n;
	const struct extres_node **child_ptrs; /* all children arrays, packed */
	char **strings; /* names and contents we own */
	size_t n_strings;
	/* Open-addressing tables, capacity a power of two, of indexes into
	 * nodes plus one (0: an empty slot): half the bytes of pointers,
	 * for a table of twice as many slots as nodes. */
	uint32_t *by_ino;
	uint32_t *by_name; /* NULL in a retired tree */
	size_t mask;
	uint64_t
		serial; /* 0 for a first tree, one more than its predecessor's */
};

/* Finaliser from splitmix64: spreads FNV's weak low bits for the tables. */
static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* The node of a table slot (not 0). */
static inline const struct extres_node *slot_node(const struct extres_tree *t,
						  uint32_t slot)
{
	return &t->nodes[slot - 1];
}

/* Enter `n`, one of t->nodes, in t->by_ino, which must have room. */
void extres_tree_index_ino(struct extres_tree *t, const struct extres_node *n);

#endif
