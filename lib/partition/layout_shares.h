/* What the layout's walk and its measures share: the node models'
 * optimum at a trailing size and the shares per dimension it gives a
 * layout's node columns and ranks. Internal to lib/partition/layout*.c. */
#ifndef MLSBA_PARTITION_LAYOUT_SHARES_H
#define MLSBA_PARTITION_LAYOUT_SHARES_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* Each node's cap: the least of caps[i] (when given and >= 0) and its
 * model's max_load; -1 for none. cap[q]. */
void mlsba__layout_caps(const mlsba_model_t *const models[], size_t q,
                        const int64_t *caps, int64_t cap[]);

/* The node models' real-valued optimum for W > 0 blocks: area[q] >= 0
 * summing to W, each within cap (-1: none) and its model's max_load, and
 * *T the least time by which every node finishes its area (T* of the
 * measures). Bisection on the time over the models' loads by time; the
 * last bracket [lo, hi] is interpolated node by node so that the areas
 * add up to W exactly. Returns 0, or MLSBA_ECAPACITY when the caps hold
 * less than W. */
int mlsba__layout_optimum(const mlsba_model_t *const models[],
                          const int64_t cap[], size_t q, double W,
                          double area[], double *T);

/* The optimum's fractions per dimension for ranks in node columns
 * (column_size[c] ranks in column c): f[c]
 * the share of the width of node column c (its ranks' areas over all),
 * g[r] rank r's share of its column's height (its area over its
 * column's; equal shares in a column whose area is zero). */
void mlsba__layout_fractions(size_t ranks, size_t columns,
                             const size_t rank_column[],
                             const size_t column_size[],
                             const double rank_area[], double f[], double g[]);

/* Nodes whose models cannot be told apart: each node's speed at its
 * optimal share of W blocks (area over time, transfer included); first,
 * where kin is given (q entries, equal nonzero values naming nodes of the
 * same hardware), the nodes of each kin among themselves, then every
 * node left (alike > 0), each from the fastest down, a group taking the
 * next node while its fastest is at most 1 + tolerance times that node's
 * speed (kin_alike for a kin, alike for the rest). Each node of a group
 * of two or more gets in pooled[i] a new model (the caller destroys it):
 * the mean of its group's speed functions at every point of any of them,
 * with its own max_load and transfer; pooled[i] stays NULL for a node
 * alone in its group. The caps as mlsba__layout_optimum takes them.
 * Returns 0, MLSBA_ECAPACITY (the caps hold less than W) or
 * MLSBA_ENOMEM. */
int mlsba__layout_pool_alike(const mlsba_model_t *const models[],
                             const int64_t cap[], size_t q, double W,
                             double alike, const size_t kin[], double kin_alike,
                             mlsba_model_t *pooled[]);

/* Blocks of the trailing matrix from t < min(brows, bcols) of a brows x
 * bcols grid: R C, or its lower triangle's R (R + 1) / 2 (square). */
double mlsba__layout_trailing_area(int64_t brows, int64_t bcols, int64_t t,
                                   int lower);

#endif
