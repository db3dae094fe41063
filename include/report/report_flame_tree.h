/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The merged call tree the flame graphs draw (HTML and SVG), walked in one
 * pass without building it: one node per (frame, path from the root), root
 * first, siblings in frame-id order; with several processes each path starts
 * at its process's node.
 */
#ifndef PYBPFPROF_REPORT_FLAME_TREE_H
#define PYBPFPROF_REPORT_FLAME_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include "profile/profile.h"

/*
 * A node's label: a frame id, or p->nframes + the process's index for a
 * process's node. Depth 0 is the level below the root (which the walk does
 * not visit: its samples are the walk's total).
 */
struct report_flame_tree_ops {
	/* Entered before its children; first: the first child of its parent. */
	void (*open)(void *ctx, uint32_t depth, uint32_t label, bool first);
	/*
	 * Left after its children, with its samples and start, the samples
	 * of the nodes before it at its depth (its left edge in samples).
	 */
	void (*close)(void *ctx, uint32_t depth, uint32_t label, uint64_t start, uint64_t samples);
};

/* Every node of p's tree; 0 with the samples of every stack in *total, or -ENOMEM. */
int report_flame_tree_walk(const struct profile *p, const struct report_flame_tree_ops *ops,
			   void *ctx, uint64_t *total);
/*
 * The same with each frame id f read as rep[f] (report_func_frames: a
 * function's lines merged), or as itself for a NULL rep.
 */
int report_flame_tree_walk_rep(const struct profile *p, const uint32_t *rep,
			       const struct report_flame_tree_ops *ops, void *ctx, uint64_t *total);

#endif
