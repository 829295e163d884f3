/* The homogeneous layouts: ScaLAPACK's 2-D block-cyclic on a P x Q grid
 * of nodes, and seed 003's process scaling, the same over processes of
 * which the fast nodes run several (Shi et al., its eqs. 1-3 and
 * Algorithm 1). See layout.h. */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "layout.h"

/* The most processes a grid takes. */
#define MAX_RANKS ((size_t)1 << 24)

void mlsba__layout_grid(size_t T, size_t *P, size_t *Q) {
  size_t p = (size_t)sqrt((double)T);
  while (p > 1 && (p + 1) * (p + 1) <= T)
    p++;
  while (p > 1 && p * p > T)
    p--;
  while (p > 1 && T % p != 0)
    p--;
  *P = p > 0 ? p : 1;
  *Q = T / *P;
}

/* Block-cyclic over the P x Q grid of ranks, rank p Q + q at (p, q),
 * rank r on node slot[r] (NULL: node r). */
static int block_cyclic(int64_t m, int64_t n, int64_t nb, size_t P, size_t Q,
                        size_t nodes, const size_t *slot,
                        mlsba__layout_t **out) {
  int err = mlsba__layout_check_size(m, n, nb);
  if (err)
    return err;
  int64_t brows = (m - 1) / nb + 1, bcols = (n - 1) / nb + 1;
  size_t T = P * Q;
  size_t *rank_column = malloc(T * sizeof *rank_column);
  size_t *bcol_column = malloc((size_t)bcols * sizeof *bcol_column);
  size_t *row_owner = malloc(Q * (size_t)brows * sizeof *row_owner);
  if (!rank_column || !bcol_column || !row_owner) {
    err = mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  } else {
    for (size_t r = 0; r < T; r++)
      rank_column[r] = r % Q;
    for (int64_t j = 0; j < bcols; j++)
      bcol_column[j] = (size_t)j % Q;
    for (size_t c = 0; c < Q; c++)
      for (int64_t i = 0; i < brows; i++)
        row_owner[c * (size_t)brows + (size_t)i] = ((size_t)i % P) * Q + c;
    mlsba__layout_spec_t s = {m, n,    nb,          T,           nodes,
                              Q, slot, rank_column, bcol_column, row_owner};
    err = mlsba__layout_create(&s, out);
  }
  if (!err)
    mlsba__layout_set_kind(*out, slot ? MLSBA__LAYOUT_PROCESS_SCALING
                                      : MLSBA__LAYOUT_HOMOGENEOUS);
  free(rank_column);
  free(bcol_column);
  free(row_owner);
  return err;
}

int mlsba__layout_homogeneous(int64_t m, int64_t n, int64_t nb, size_t P,
                              size_t Q, mlsba__layout_t **out) {
  if (!out)
    return mlsba__fail(MLSBA_EINVAL, "layout: out is NULL");
  *out = NULL;
  if (P == 0 || Q == 0 || P > MAX_RANKS || Q > MAX_RANKS / P)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: a P x Q grid of 1 to %zu ranks, got %zu x %zu",
                       MAX_RANKS, P, Q);
  return block_cyclic(m, n, nb, P, Q, P * Q, NULL, out);
}

/* ---- process scaling ------------------------------------------------- */

int64_t mlsba__process_scaling_count(double ratio, int64_t cores) {
  if (!(ratio >= 1))
    return 1;
  double most = (double)MAX_RANKS;
  if (cores <= 0)
    return ratio >= most ? (int64_t)most : (int64_t)ceil(ratio - 0.5);
  /* The divisors of cores in pairs (d, cores / d); the nearer to Ratio
   * wins, the smaller of two as near. */
  int64_t best = 1;
  for (int64_t d = 1; d <= cores / d; d++) {
    if (cores % d)
      continue;
    int64_t pair[2] = {d, cores / d};
    for (int k = 0; k < 2; k++) {
      double gap = fabs((double)pair[k] - ratio);
      double was = fabs((double)best - ratio);
      if (gap < was || (gap == was && pair[k] < best))
        best = pair[k];
    }
  }
  return best;
}

typedef struct {
  size_t node;
  int64_t procs;
} unit_t;

static int by_capacity(const void *a, const void *b) {
  const unit_t *x = a, *y = b;
  if (x->procs != y->procs)
    return x->procs > y->procs ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

/* Algorithm 1, steps 3 (a grid whose rows the multi-process nodes can
 * share: P' the largest divisor of T at most their number) and its loop
 * (split each node's processes by i = 2, 3, ... while there are fewer
 * pieces than rows; our reading: a factor splits every node, so only
 * one dividing every node's count). Returns how many units. */
static size_t algorithm1_units(unit_t *u, size_t g, size_t T, size_t *P,
                               size_t *Q) {
  int64_t G = 0, least = INT64_MAX;
  for (size_t k = 0; k < g; k++) {
    G += u[k].procs;
    least = u[k].procs < least ? u[k].procs : least;
  }
  if (g == 0 || G < (int64_t)*P) /* "goto label_rest" */
    return g;
  if (G < 2 * (int64_t)*P) { /* g_num mpi_g alpha < P */
    size_t p = g < *P ? g : *P;
    while (p > 1 && T % p != 0)
      p--;
    *P = p;
    *Q = T / p;
  }
  size_t units = g;
  for (int64_t i = 2; units < *P && 2 * (int64_t)*P < G && i <= least;) {
    int divides = 1;
    for (size_t k = 0; k < g; k++)
      divides &= u[k].procs % i == 0;
    if (!divides) {
      i++;
      continue;
    }
    /* Every unit becomes i units of procs / i, in place, back to front. */
    for (size_t k = units; k-- > 0;) {
      unit_t whole = u[k];
      for (int64_t e = 0; e < i; e++)
        u[k * (size_t)i + (size_t)e] = (unit_t){whole.node, whole.procs / i};
    }
    units *= (size_t)i;
    least /= i;
  }
  return units;
}

/* Step 4 and label_rest: unit k in row k mod P, its processes side by
 * side from the row's first free slot (what does not fit goes on to the
 * next rows); step 5: single-process nodes top-down in the rest. */
static void algorithm1_place(const unit_t *u, size_t units,
                             const int64_t *procs, size_t P, size_t Q,
                             size_t *slot, size_t *next) {
  for (size_t p = 0; p < P; p++)
    next[p] = 0;
  for (size_t k = 0; k < units; k++) {
    size_t p = k % P;
    for (int64_t e = 0; e < u[k].procs; e++) {
      while (next[p] == Q)
        p = (p + 1) % P;
      slot[p * Q + next[p]++] = u[k].node;
    }
  }
  size_t node = 0;
  for (size_t c = 0; c < Q; c++)
    for (size_t p = 0; p < P; p++) {
      if (c < next[p])
        continue;
      while (procs[node] > 1)
        node++;
      slot[p * Q + c] = node++;
    }
}

static int check_procs(size_t q, const int64_t procs[], size_t *T) {
  if (!procs || q == 0)
    return mlsba__fail(MLSBA_EINVAL, "layout: no nodes or no process counts");
  *T = 0;
  for (size_t i = 0; i < q; i++) {
    if (procs[i] < 1 || (uint64_t)procs[i] > MAX_RANKS - *T)
      return mlsba__fail(MLSBA_EINVAL,
                         "layout: node %zu runs %lld processes; each node runs "
                         "1 or more, %zu in all at most",
                         i, (long long)procs[i], MAX_RANKS);
    *T += (size_t)procs[i];
  }
  return 0;
}

int mlsba__layout_process_scaling(int64_t m, int64_t n, int64_t nb, size_t q,
                                  const int64_t procs[],
                                  mlsba__grid_order_t order,
                                  mlsba__layout_t **out) {
  if (!out)
    return mlsba__fail(MLSBA_EINVAL, "layout: out is NULL");
  *out = NULL;
  size_t T = 0;
  int err = check_procs(q, procs, &T);
  if (err)
    return err;
  if (order != MLSBA__GRID_ALGORITHM1 && order != MLSBA__GRID_ROW_MAJOR)
    return mlsba__fail(MLSBA_EINVAL, "layout: unknown grid order %d",
                       (int)order);
  size_t P, Q;
  mlsba__layout_grid(T, &P, &Q);
  size_t *slot = malloc(T * sizeof *slot);
  unit_t *u = malloc(T * sizeof *u); /* at most one unit per process */
  size_t *next = malloc(T * sizeof *next);
  if (!slot || !u || !next) {
    err = mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  } else if (order == MLSBA__GRID_ROW_MAJOR) {
    for (size_t i = 0, k = 0; i < q; i++)
      for (int64_t e = 0; e < procs[i]; e++)
        slot[k++] = i;
  } else {
    size_t g = 0;
    for (size_t i = 0; i < q; i++)
      if (procs[i] > 1)
        u[g++] = (unit_t){i, procs[i]};
    qsort(u, g, sizeof *u, by_capacity);
    size_t units = algorithm1_units(u, g, T, &P, &Q);
    algorithm1_place(u, units, procs, P, Q, slot, next);
  }
  if (!err)
    err = block_cyclic(m, n, nb, P, Q, q, slot, out);
  free(slot);
  free(u);
  free(next);
  return err;
}
