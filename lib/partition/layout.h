/* The heterogeneous 2-D block-cyclic layout of the factorizations across
 * nodes: which rank owns each nb x nb block of an M x N matrix.
 *
 * The ranks stand in node columns, as INPA's column-based arrangement
 * (CMA, cma.h) stands its nodes. Every block column belongs to one node
 * column; in a node column every block row belongs to one of its ranks,
 * and that choice differs from column to column (as CMA's heights do).
 * So rank r owns the blocks (i, j) with i among its block rows and j
 * among its column's block columns: a Cartesian product, which its local
 * storage holds as one dense matrix, as in ScaLAPACK. M and N need not be
 * multiples of nb: the last block row and column are partial, and since
 * local indices follow the global order they sit at their owner's end,
 * so the local element of global (gi, gj) is (row_g2l(gi / nb) nb +
 * gi % nb, col_g2l(gj / nb) nb + gj % nb), as ScaLAPACK's INDXG2L gives.
 *
 * A rank is a process; a node runs one rank, except in seed 003's
 * process scaling, where a GPU node runs several (rank_node maps them).
 *
 * Four ways to draw it:
 *   homogeneous      ScaLAPACK's 2-D block-cyclic on a P x Q grid;
 *   fpm              "tracked CMA": walks along the diagonal keeping
 *                    every trailing matrix's shares near the node models'
 *                    optimum at its size, the one the models predict
 *                    fastest of three (layout_walk.c, layout_steer.c);
 *   constant         the reverse walk with constant speeds: Kalinov and
 *                    Lastovetsky's periodic heterogeneous layout;
 *   process scaling  seed 003: MPI_G processes on each fast node, one on
 *                    the others, a homogeneous grid over the processes in
 *                    its Algorithm 1's order (layout_grid.c).
 *
 * The measures (layout_measure.c) judge any layout against node models.
 * docs/layout.md explains it all with a picture.
 *
 * Pure functions: no I/O, no clock, no global state besides the thread's
 * last-error message. A layout is immutable once made, so any number of
 * threads may query it at once. */
#ifndef MLSBA_PARTITION_LAYOUT_H
#define MLSBA_PARTITION_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

typedef struct mlsba__layout mlsba__layout_t;

/* The largest block grid a layout takes: 2^24 block rows or columns
 * (2^31 elements with nb = 128), so that block counts of the whole
 * matrix, 2^48, stay exact in a double and far from int64 overflow. */
#define MLSBA__LAYOUT_MAX_BLOCKS (INT64_C(1) << 24)

/* How a layout was drawn. */
typedef enum mlsba__layout_kind {
  MLSBA__LAYOUT_EXPLICIT = 0,    /* mlsba__layout_create */
  MLSBA__LAYOUT_HOMOGENEOUS,     /* "homogeneous" */
  MLSBA__LAYOUT_PROCESS_SCALING, /* "process-scaling" */
  MLSBA__LAYOUT_CONSTANT,        /* "constant" */
  MLSBA__LAYOUT_FPM_REVERSE,     /* "fpm-reverse": the tracked walks */
  MLSBA__LAYOUT_FPM_FORWARD,     /* "fpm-forward" */
  MLSBA__LAYOUT_FPM_FROZEN,      /* "fpm-frozen" */
  MLSBA__LAYOUT_KIND_COUNT
} mlsba__layout_kind_t;

/* The name in quotes above ("explicit" for the first); NULL if unknown. */
const char *mlsba__layout_kind_name(mlsba__layout_kind_t kind);

/* What a layout is made of; every query below is O(1) on it. */
typedef struct mlsba__layout_dims {
  int64_t m, n, nb;     /* matrix rows, columns; the block's side */
  int64_t brows, bcols; /* block rows ceil(m / nb), block columns */
  size_t ranks, nodes, columns;
  mlsba__layout_kind_t kind;
} mlsba__layout_dims_t;

/* An explicit ownership, from which every layout is made. */
typedef struct mlsba__layout_spec {
  int64_t m, n, nb; /* each >= 1; m / nb and n / nb within the maximum */
  size_t ranks;     /* >= 1 */
  size_t nodes;     /* >= 1; every node runs at least one rank */
  size_t columns;   /* node columns, >= 1, each with at least one rank */
  /* ranks entries < nodes: the node of each rank; NULL when rank r is
   * node r (ranks == nodes). */
  const size_t *rank_node;
  const size_t *rank_column; /* ranks entries < columns */
  const size_t *bcol_column; /* bcols entries < columns */
  /* columns x brows, column by column: the rank that owns block row i in
   * node column c is row_owner[c * brows + i], one of c's ranks. */
  const size_t *row_owner;
} mlsba__layout_spec_t;

/* A layout of exactly this ownership (kind EXPLICIT). Returns 0,
 * MLSBA_EINVAL naming the entry at fault, or MLSBA_ENOMEM. */
int mlsba__layout_create(const mlsba__layout_spec_t *spec,
                         mlsba__layout_t **layout);
void mlsba__layout_destroy(mlsba__layout_t *layout);
/* For the constructors below, before they hand a layout out. */
void mlsba__layout_set_kind(mlsba__layout_t *layout, mlsba__layout_kind_t k);
/* M, N >= 1, nb >= 1 and at most MLSBA__LAYOUT_MAX_BLOCKS a side:
 * 0 or MLSBA_EINVAL saying which. */
int mlsba__layout_check_size(int64_t m, int64_t n, int64_t nb);

const mlsba__layout_dims_t *mlsba__layout_dims(const mlsba__layout_t *layout);

/* ---- queries (arguments in range: they are not checked) -------------- */

/* The rank that owns block (bi, bj), and its node. */
size_t mlsba__layout_owner(const mlsba__layout_t *layout, int64_t bi,
                           int64_t bj);
size_t mlsba__layout_owner_node(const mlsba__layout_t *layout, int64_t bi,
                                int64_t bj);
size_t mlsba__layout_rank_node(const mlsba__layout_t *layout, size_t rank);
size_t mlsba__layout_rank_column(const mlsba__layout_t *layout, size_t rank);
/* The ranks node runs (1 but for process scaling). */
size_t mlsba__layout_node_ranks(const mlsba__layout_t *layout, size_t node);
/* The node column of block column bj. */
size_t mlsba__layout_bcol_column(const mlsba__layout_t *layout, int64_t bj);
/* The rank that owns block row bi in node column c. */
size_t mlsba__layout_row_owner(const mlsba__layout_t *layout, size_t c,
                               int64_t bi);
/* The ranks of node column c, top to bottom (ascending rank), and how
 * many. */
const size_t *mlsba__layout_column_ranks(const mlsba__layout_t *layout,
                                         size_t c, size_t *count);

/* Global to local (INDXG2L): the index of block column bj among its node
 * column's block columns, and of block row bi among the block rows its
 * owner in node column c holds; both in the owner's local storage. */
int64_t mlsba__layout_col_g2l(const mlsba__layout_t *layout, int64_t bj);
int64_t mlsba__layout_row_g2l(const mlsba__layout_t *layout, size_t c,
                              int64_t bi);
/* Local to global (INDXL2G) on rank r: its lj-th block column and li-th
 * block row (lj, li below the counts of the lists below). */
int64_t mlsba__layout_col_l2g(const mlsba__layout_t *layout, size_t rank,
                              int64_t lj);
int64_t mlsba__layout_row_l2g(const mlsba__layout_t *layout, size_t rank,
                              int64_t li);
/* Rank r's block rows and block columns, ascending, and their counts:
 * the blocks it owns are every pair of the two. Owned by the layout. */
const int64_t *mlsba__layout_rank_rows(const mlsba__layout_t *layout,
                                       size_t rank, int64_t *count);
const int64_t *mlsba__layout_rank_cols(const mlsba__layout_t *layout,
                                       size_t rank, int64_t *count);
/* Rank r's local matrix in elements (NUMROC): the rows of its block rows
 * and the columns of its block columns, the partial last ones counted as
 * they are. */
void mlsba__layout_local_size(const mlsba__layout_t *layout, size_t rank,
                              int64_t *rows, int64_t *cols);
/* The blocks each node owns (its memory), nodes entries; lower: only
 * those of the lower triangle, diagonal included (Cholesky's). */
void mlsba__layout_node_blocks(const mlsba__layout_t *layout, int lower,
                               int64_t blocks[]);

/* ---- the four ways to draw it ---------------------------------------- */

/* ScaLAPACK's 2-D block-cyclic on a P x Q grid, rank p Q + q at grid
 * position (p, q) (BLACS's row-major order), the first block on rank 0:
 * block (bi, bj) on (bi mod P, bj mod Q). One node per rank. */
int mlsba__layout_homogeneous(int64_t m, int64_t n, int64_t nb, size_t P,
                              size_t Q, mlsba__layout_t **layout);

/* The grid a ScaLAPACK or HPL user picks for T processes, seed 003's eq.
 * 3: P x Q = T with P <= Q and no factorisation of T nearer the square
 * (P the largest divisor of T at most sqrt(T)). T >= 1. */
void mlsba__layout_grid(size_t T, size_t *P, size_t *Q);

/* Which walk draws the tracked layout (layout_walk.c). */
typedef enum mlsba__layout_walk {
  MLSBA__WALK_BEST = 0, /* the three below; the least predicted step sum */
  MLSBA__WALK_REVERSE,  /* from the bottom right up */
  MLSBA__WALK_FORWARD,  /* from the whole matrix down */
  MLSBA__WALK_FROZEN    /* the whole matrix's shares at every size */
} mlsba__layout_walk_t;

typedef struct mlsba__layout_opts {
  /* Cholesky: only the lower triangle's blocks count, for the shares,
   * the caps and the measures (m must equal n). */
  int lower;
  /* q entries or NULL: the most blocks node i may own (negative: no
   * limit); a model's max_load caps it too. */
  const int64_t *caps;
  mlsba__layout_walk_t walk; /* default (0) BEST */
  /* q entries or NULL: apart[i] != 0 when node i shares its cores with
   * another node (ranks pinned to one core; equal values name a group of
   * them). Such a node meets a node column's collectives (a panel's
   * pivot searches, its row exchanges, U's broadcast) only when the
   * scheduler turns its core to it from the other's compute, so it
   * stands alone in its node column: the layout is then the least
   * predicted step sum among CMA's arrangements with at most k nodes a
   * column (k = q .. 1) that stand every such node alone (k = 1, every
   * node alone, always does), instead of CMA's least half-perimeter. */
  const size_t *apart;
  /* q entries or NULL (LU only: ignored with lower): node i's time a
   * step, in its model's time, for each block column of its node
   * column's width besides its update: its share of the step's row
   * interchanges and of U's block row going down the node column. The
   * node models time the update alone, and this cost is a rank's per
   * block of width whatever its height, so the wide node columns pay it
   * most: each node column's width fraction f becomes f / (1 + f C k / T)
   * renormalized (C the trailing block columns, T the optimum's step
   * time, k the mean of the column's nodes' entries), the width at which
   * its update and this cost take as long as the others'. */
  const double *link_s;
  /* > 0: nodes whose models cannot be told apart beyond this relative
   * speed difference (their measurement's noise) are laid out alike,
   * each walking with its group's mean model
   * (mlsba__layout_pool_alike, layout_shares.h); 0: the models as given.
   * Finite and >= 0. */
  double alike;
  /* q entries or NULL: equal nonzero values name nodes of the same
   * hardware (ranks of one host bound to as many cores, none shared),
   * pooled among themselves within kin_alike before the rest within
   * alike (mlsba__layout_pool_alike). Finite and >= 0. */
  const size_t *kin;
  double kin_alike;
} mlsba__layout_opts_t;

/* The tracked layout of q nodes from their models (time for an area in
 * blocks, as INPA's node models: one rank-nb update of that many blocks):
 * see layout_walk.c. opts NULL for LU without caps, the best walk; dims'
 * kind says which walk it was. Returns 0;
 * MLSBA_EINVAL naming the argument; MLSBA_ECAPACITY when the caps cannot
 * hold the matrix (the message says which cap and by how much);
 * MLSBA_ENOMEM. */
int mlsba__layout_fpm(const mlsba_model_t *const models[], size_t q, int64_t m,
                      int64_t n, int64_t nb, const mlsba__layout_opts_t *opts,
                      mlsba__layout_t **layout);
/* The same walk with each node's model flattened to one speed: the speed
 * its model gives at its optimal share of the whole matrix (what a
 * balanced run at full size measures, the best constant a node can be
 * given), its max_load kept. */
int mlsba__layout_constant(const mlsba_model_t *const models[], size_t q,
                           int64_t m, int64_t n, int64_t nb,
                           const mlsba__layout_opts_t *opts,
                           mlsba__layout_t **layout);

/* Seed 003's eqs. 1-2: a node Ratio times as fast as the reference (CPU)
 * node, with cores cores, runs MPI_G = Ratio + delta processes, delta
 * the integer that makes MPI_G divide cores: the divisor of cores nearest
 * Ratio, the smaller of two as near ("pessimistically": Ratio 5 on 12
 * cores gives 4). At least 1; cores <= 0 (a node whose cores drive its
 * GPUs only) sets no divisor: Ratio rounded. */
int64_t mlsba__process_scaling_count(double ratio, int64_t cores);

typedef enum mlsba__grid_order {
  /* Seed 003's Algorithm 1 (alpha = 0.5): the nodes of more processes
   * first, each one's processes side by side in one grid row, spread
   * evenly over the rows; single-process nodes fill the rest top-down. */
  MLSBA__GRID_ALGORITHM1 = 0,
  /* The processes in node order, each node's consecutive, row-major:
   * HPL's default mapping of a hostfile (seed 003's "default" grid). */
  MLSBA__GRID_ROW_MAJOR
} mlsba__grid_order_t;

/* Process scaling: q nodes running procs[i] >= 1 processes each, a
 * homogeneous block-cyclic layout over the T = sum procs processes on
 * the grid of eq. 3 in the given order. Ranks are processes (rank p Q +
 * q at grid position (p, q)); mlsba__layout_rank_node() says whose. */
int mlsba__layout_process_scaling(int64_t m, int64_t n, int64_t nb, size_t q,
                                  const int64_t procs[],
                                  mlsba__grid_order_t order,
                                  mlsba__layout_t **layout);

/* ---- measures -------------------------------------------------------- */

/* The trailing matrix from block t, [t, brows) x [t, bcols), against the
 * node models. The update of LU's (or Cholesky's) step k is the trailing
 * matrix t = k + 1: a rank-nb update of each node's blocks there. */
typedef struct mlsba__layout_step {
  /* max over nodes of t_i(a_i), a_i the node's blocks in the trailing
   * matrix (its ranks' together): the step's predicted makespan */
  double makespan;
  /* T*: the least time in which the nodes, sharing the trailing blocks
   * in real-valued amounts, finish them (the node models' optimum at this
   * size): no layout's makespan is below it */
  double optimum;
  /* The shares against the optimum's, in blocks, with this layout's node
   * columns: width_dev the largest |columns c owns - f_c C| over node
   * columns, height_dev the largest |rows r owns in its column - g_r R|
   * over ranks, where the optimum gives node column c the fraction f_c of
   * the C trailing block columns (its ranks' optimal areas over all) and
   * rank r the fraction g_r of its column's R trailing rows (its area over
   * its column's; a node's optimal area is shared evenly by its ranks). */
  double width_dev, height_dev;
} mlsba__layout_step_t;

typedef struct mlsba__layout_summary {
  /* sum of the makespans of t = 1 .. K - 1 (K = min(brows, bcols)): the
   * factorization's updates as the models predict them; and the same sum
   * of the optima, a lower bound for any layout */
  double step_sum, optimum_sum;
  double max_width_dev, max_height_dev; /* over t = 0 .. K - 1 */
} mlsba__layout_summary_t;

/* Measures layout against node models (one per node of the layout).
 * steps: K = min(brows, bcols) entries, index t, or NULL; summary may be
 * NULL. opts: lower counts the lower triangle; caps cap the optimum as
 * they cap the walk. Returns 0, MLSBA_EINVAL, MLSBA_ECAPACITY or
 * MLSBA_ENOMEM. */
int mlsba__layout_measure(const mlsba__layout_t *layout,
                          const mlsba_model_t *const models[],
                          const mlsba__layout_opts_t *opts,
                          mlsba__layout_step_t steps[],
                          mlsba__layout_summary_t *summary);

/* Only the summary's step_sum, without the optimum (cheaper): what the
 * best walk compares. */
int mlsba__layout_step_sum(const mlsba__layout_t *layout,
                           const mlsba_model_t *const models[], int lower,
                           double *step_sum);

#endif
