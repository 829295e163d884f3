/* A partitioning problem over processing groups, as every multi-level
 * algorithm receives it, and the algorithms themselves. */
#ifndef MLSBA_PARTITION_GROUPED_H
#define MLSBA_PARTITION_GROUPED_H

#include "mlsba.h"

typedef struct mlsba__grouped {
  const mlsba_model_t *const *models; /* p models, group by group */
  const size_t *size;                 /* q group sizes */
  const size_t *first;                /* q offsets of each group in models */
  size_t q, p;
  int64_t n;
  mlsba_partition_opts_t opts; /* defaults filled in */
} mlsba__grouped_t;

/* Every algorithm fills alpha[q], beta[p] and points[q] (never NULL here).
 * The arguments have been checked and the devices can hold n. */
typedef int (*mlsba__grouped_fn)(const mlsba__grouped_t *G, int64_t *alpha,
                                 int64_t *beta, size_t *points);

int mlsba__mlsba(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                 size_t *points);
int mlsba__mlfba2(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                  size_t *points);
int mlsba__flat_slba(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                     size_t *points);
int mlsba__multiple_cpm(const mlsba__grouped_t *G, int64_t *alpha,
                        int64_t *beta, size_t *points);
int mlsba__single_cpm(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                      size_t *points);
int mlsba__homogeneous(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                       size_t *points);
int mlsba__dlt(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
               size_t *points);

/* Phase 1 + Phase 2 of MLSBA over group models; with full_models, every
 * multi-device group model is first built at every load 1..cap (MLFBA2's
 * first step), so the search reads complete models. */
int mlsba__grouped_bisection(const mlsba__grouped_t *G, int full_models,
                             int64_t *alpha, int64_t *beta, size_t *points);

/* MLFBA1: exhaustive search at both levels, the test oracle for tiny
 * problems (refuses n > 200 or groups of more than 4 devices). Fills
 * makespan with the optimum. */
int mlsba__mlfba1(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                  double *makespan);

/* Device capacity min(max_load, n) of device j. */
int64_t mlsba__device_cap(const mlsba__grouped_t *G, size_t j);

/* Integer loads proportional to weights w[0..m-1] summing to total, each
 * within cap[i]: entries whose share exceeds their cap are fixed at it and
 * the rest re-shared (water-filling), then rounded by largest remainder.
 * w NULL, or zero weights everywhere, mean equal shares. The caps must add up
 * to at least total. */
void mlsba__proportional(const double *w, const int64_t *cap, size_t m,
                         int64_t total, int64_t *out);

/* Round real shares x[0..m-1] (within caps, summing to total) to integers
 * summing to total, within caps, by largest remainder. */
void mlsba__round_shares(const double *x, const int64_t *cap, size_t m,
                         int64_t total, int64_t *out);

#endif
