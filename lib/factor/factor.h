/* The factorizations, internal view: the problem being factorized, the
 * kernels that work on a step's units (kernels.c), and the per-step split
 * (split.c), which is pure so that the MPI layer can call it for a 2-D
 * block-cyclic factorization across ranks. */
#ifndef MLSBA_FACTOR_FACTOR_H
#define MLSBA_FACTOR_FACTOR_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

typedef enum {
  MLSBA__FACTOR_LU = 0,
  MLSBA__FACTOR_CHOL_LOWER,
  MLSBA__FACTOR_CHOL_UPPER
} mlsba__factor_op_t;

/* A matrix being factorized in place. Panels are factorized one after
 * the other; a step's update touches disjoint units, so devices work on
 * them at once. */
typedef struct mlsba__factor_problem {
  mlsba__factor_op_t op;
  mlsba_precision_t prec;
  int64_t m, n, lda, nb;
  void *a;
  int *ipiv;    /* LU: min(m, n) global 1-based pivots, LAPACK's int */
  int64_t info; /* first zero pivot / non-positive minor, 1-based */
  /* LU: room for two inverses of a panel's L11 (nb x nb, by the panel's
   * parity: the next panel is factorized while the last one's is in use),
   * which turn the update's solve into a product; NULL: solve by TRSM. */
  void *linv;
  /* Where the leading dimension makes the panel's operand slow to pack
   * (kernels.c), room for two copies of the part of a panel that its
   * update reads (by the panel's parity), each made once by the panel's
   * core for every device's units: kept_j[k] is the panel a copy holds
   * (-1: none). NULL: every update reads the matrix or copies itself. */
  void *kept;
  int64_t kept_ld, kept_j[2];
  /* LU: room for two panels' interchanges composed into moves (by the
   * panel's parity): nmoves[k] rows, row dst takes row src, the dst at
   * moves + k 4 nb, the src 2 nb after them; moves_j[k] is the panel
   * (-1: none). NULL: the update swaps row by row. */
  int64_t *moves;
  int64_t nmoves[2], moves_j[2];
} mlsba__factor_problem_t;

/* Bytes of one element of the matrix. */
size_t mlsba__factor_esize(const mlsba__factor_problem_t *P);

/* The panels: min(m, n) columns in blocks of nb. */
int64_t mlsba__factor_diag(const mlsba__factor_problem_t *P);

/* Factorizes the panel of columns [j, j + jb) with LAPACK's unblocked
 * routine (LU: ?getf2, its pivots made global; Cholesky: ?potf2 on the
 * diagonal block and the solve of the rest of the panel). Sets P->info at
 * the first zero pivot; returns 1 when a Cholesky panel is not positive
 * definite (the factorization stops), else 0. */
int mlsba__factor_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb);

/* The room the kernels keep between steps: P->kept where the leading
 * dimension calls for it, P->moves for LU (each NULL where memory does
 * not allow). */
void mlsba__factor_scratch_open(mlsba__factor_problem_t *P);
void mlsba__factor_scratch_close(mlsba__factor_problem_t *P);

/* Units of the update after panel [j, j + jb): its columns right of the
 * panel for LU; for Cholesky the pairs {c, N - 1 - c} of its N columns,
 * which cost the same. */
int64_t mlsba__factor_units(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb);
/* Flops of one unit of that update (the row swaps not counted). */
double mlsba__factor_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                                int64_t jb);
/* Flops of the panel [j, j + jb). */
double mlsba__factor_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                                 int64_t jb);
/* The operation's nominal flop count. */
double mlsba__factor_flops(const mlsba__factor_problem_t *P);

/* Applies the update after panel [j, j + jb) to units [u0, u1): for LU
 * the panel's row swaps, the solve with L11 and the product with L21;
 * for Cholesky the product with the panel, within the triangle. Single
 * threaded (one pinned core). */
void mlsba__factor_update(const mlsba__factor_problem_t *P, int64_t j,
                          int64_t jb, int64_t u0, int64_t u1);

/* LU: the row interchanges of the panel [j, j + jb) applied to columns
 * [c, c + w) (what an accelerator's columns need before they are sent). */
void mlsba__factor_swap_rows(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb, int64_t c, int64_t w);

/* LU: the row swaps of every later panel applied to columns [c0, c1) of
 * the panels (LAPACK leaves A = P L U with all of them). */
void mlsba__factor_swap_left(const mlsba__factor_problem_t *P, int64_t c0,
                             int64_t c1);

/* ---- the per-step split (pure: no I/O, no clock) ---------------------- */

typedef struct mlsba__factor_split_in {
  mlsba_factor_split_t split;
  size_t p;                 /* devices, file order */
  size_t q;                 /* groups */
  const size_t *group_size; /* q sizes */
  const size_t *group_dev;  /* the devices, group by group */
  /* p models of each device's flop rate (flops per second) as a function
   * of its units, with its max_load; NULL where none is known yet. */
  const mlsba_model_t *const *rate;
  const unsigned char *active; /* p: 1 when it takes units */
  int64_t units;               /* this step's */
  double unit_flops;           /* w_k */
  long panel_dev;              /* -1: the panel is not on a device */
  double panel_s;              /* its time, added to panel_dev's */
  int64_t panel_min;           /* units panel_dev must take (lookahead) */
  /* The device that updates the next panel's panel_min units when it is
   * not panel_dev (-1 or panel_dev: panel_dev does): it runs them first,
   * in ahead_s, as a share of their own, and takes them; panel_dev starts
   * the panel at ahead_s at the earliest. */
  long ahead_dev;
  double ahead_s;
  /* Without lookahead (diag_units > 0): panel_dev's share begins with the
   * next panel's first columns, and before the panel it updates the part
   * of that panel's diagonal block its units leave out: diag_s for the
   * whole block of diag_units columns, r (r + 1) / (diag_units
   * (diag_units + 1)) of it when it holds diag_units - r of them. */
  int64_t diag_units;
  double diag_s;
  const double *fraction; /* FIXED_SLICE: p fractions */
} mlsba__factor_split_in_t;

/* loads[p] (file order) summing to in->units: the split in->split asks
 * for, with panel_dev holding at least panel_min units. FPM falls back to
 * an even split among the active devices while any of them has no model.
 * Devices over their max_load only when the active ones cannot hold the
 * step (they then stream). *fpm: 1 when the models decided it. */
int mlsba__factor_split(const mlsba__factor_split_in_t *in, int64_t loads[],
                        int *fpm);

/* The step's time as the models predict it for these loads: the longest
 * device time, the panel's and the next panel's columns' as the split
 * counts them (devices without a model left out). */
double mlsba__factor_split_time(const mlsba__factor_split_in_t *in,
                                const int64_t loads[]);

#endif
