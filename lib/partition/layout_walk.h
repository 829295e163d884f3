/* The walks that draw the tracked layout (layout_walk.c drives them;
 * layout_steer.c steps them). Internal to lib/partition/layout*.c. */
#ifndef MLSBA_PARTITION_LAYOUT_WALK_H
#define MLSBA_PARTITION_LAYOUT_WALK_H

#include <stddef.h>
#include <stdint.h>

/* Fractions within this of each other count as ties (the lowest index
 * wins), so that equal speeds give the same order on every machine. */
#define MLSBA__WALK_TIE 1e-9

typedef struct mlsba__walk {
  size_t q, ncols;
  int64_t brows, bcols, steps; /* steps = max(brows, bcols) */
  int lower;                   /* Cholesky: lower-triangle blocks */
  int frozen;                  /* targets at t = 0 for every t */
  const int64_t *cap;          /* q: the most blocks (-1: none) */
  const size_t *node_column;   /* q */
  /* The optimum's fractions: f[t ncols + c] of the trailing width for
   * node column c, g[t q + i] of its column's height for node i. */
  const double *f, *g;
  /* Results and state of one walk. */
  size_t *bcol_column; /* bcols */
  size_t *row_owner;   /* ncols x brows */
  int64_t *count;      /* q: blocks of the dimension walked, held */
  int64_t *used;       /* q: blocks owned, for the caps */
  int64_t *width;      /* ncols: block columns of each node column */
  int64_t *tri;        /* ncols: their lower-triangle blocks */
  /* ncols: the updates the block columns held so far take, which
   * orders the reverse column walk's exact ties (layout_steer.c). */
  double *load;
  double *scratch;      /* q */
  int64_t *scratch_cap; /* q */
} mlsba__walk_t;

/* The reverse walk (t from the bottom right up): each block column, then
 * each node column's block rows, to the candidate below its target whose
 * deficit reaches a block first. */
int mlsba__walk_reverse_columns(mlsba__walk_t *w);
int mlsba__walk_reverse_rows(mlsba__walk_t *w, size_t c);
/* The forward walk (t from the top left down): the whole matrix's counts
 * first, then each block column or row taken from the candidate above
 * its target at the next trailing size that would be a block over first. */
int mlsba__walk_forward_columns(mlsba__walk_t *w);
int mlsba__walk_forward_rows(mlsba__walk_t *w, size_t c);

#endif
