/* The nodes' capacities in INPA's head (lib/partition/inpa.c): the even
 * first distribution, the constant models' shares and CMA's rectangles,
 * each kept within the blocks every node can hold. Pure functions of
 * their arrays. */
#ifndef MLSBA_PARTITION_INPA_CAPS_H
#define MLSBA_PARTITION_INPA_CAPS_H

#include <stddef.h>
#include <stdint.h>

#include "cma.h"

/* Step 3: w_i = W / q, the remainder one block each to the first nodes;
 * a node that cannot hold its share gets what it holds, and the rest is
 * shared the same way among the others (the caps sum to W or more). */
void mlsba__inpa_even_split(size_t q, int64_t W, const int64_t *cap,
                            int64_t *w);
/* Proportional shares w moved off nodes above their caps, onto the nodes
 * with room, fastest first (by speed[], which it overwrites). */
void mlsba__inpa_shares_within_caps(size_t q, const int64_t *cap, double *speed,
                                    int64_t *w);
/* CMA rounds areas to whole rows and columns, so a rectangle can exceed
 * its node's capacity by part of a row though the area asked was within
 * it: rows move from such a node to the node of its column with the most
 * room left, which keeps the tiling. (A node alone in its column, or in
 * one with no room, keeps its rectangle; the node then reports it.)
 * scratch: q entries. */
void mlsba__inpa_rects_within_caps(size_t q, const int64_t *cap,
                                   mlsba__cma_rect_t *r, int64_t *scratch);

#endif
