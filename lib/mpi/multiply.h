/* The two-dimensional product's own modules (mlsba_mpi_multiply and the
 * multiplier):
 *   multiply.c          the options: defaults, checks, the ranks'
 *                       agreement on them; mlsba_mpi_multiply();
 *   multiplier.c        the multiplier: its devices, its balancing and
 *                       layout, its runs;
 *   multiply_balance.c  INPA across the ranks: every rank's node balanced
 *                       on the rectangles the head asks for, until the
 *                       arrangement the product runs;
 *   plan.c              the head's square grid of cells mapped onto the
 *                       product's shape: every rank's part of C, op(A)
 *                       and op(B), and their descriptions;
 *   operands.c          a run's A', B' and C' (generated, the fill
 *                       callback, redistributed), the check of C, C back;
 *   operands_keep.c     the caller's A and B as the last run moved them,
 *                       so that unchanged ones are not moved again;
 *   multiply_report.c   what every rank ran, gathered into the result.
 * The product itself is product.c (any arrangement), the node's kernel
 * node.c, the distributed matrices matrix.c and redistribute.c. */
#ifndef MLSBA_MPI_MULTIPLY_H
#define MLSBA_MPI_MULTIPLY_H

#include "../partition/inpa.h"
#include "internal.h"
#include "matrix.h"

/* The run the head asks for, as every rank sees it: a rectangle of the
 * head's cells. */
typedef struct mlsba__mpi_rect {
  int64_t m, n, row, col;
} mlsba__mpi_rect_t;

/* ---- plan.c ------------------------------------------------------------- */

/* The product's shape and the head's grid of g x g cells on it. */
typedef struct mlsba__mpi_grid {
  int64_t m, n, k, b;
  int64_t rb, cb, kb; /* blocks of m, n and k */
  int64_t g;          /* min(rb, cb): every cell at least a block each way */
} mlsba__mpi_grid_t;

void mlsba__mpi_grid_init(mlsba__mpi_grid_t *grid, int64_t m, int64_t n,
                          int64_t k, int64_t b);
/* The part of the rank given the m x n cells at (row, col). */
void mlsba__mpi_grid_part(const mlsba__mpi_grid_t *grid, int64_t m, int64_t n,
                          int64_t row, int64_t col, mlsba__mpi_part_t *part);
/* The cell edge *v (0..g) that maps to element edge at of C's rows (dim
 * 0) or columns (dim 1); 0 when no cell edge does. */
int mlsba__mpi_grid_cell_at(const mlsba__mpi_grid_t *grid, int dim, int64_t at,
                            int64_t *v);
/* A rows x cols rectangle of C in cells (real, for the head's models). */
double mlsba__mpi_grid_cells_of(const mlsba__mpi_grid_t *grid, int64_t rows,
                                int64_t cols);
/* The blocks of C in m x n cells (about; exact where cells are blocks). */
int64_t mlsba__mpi_grid_blocks_of(const mlsba__mpi_grid_t *grid, int64_t m,
                                  int64_t n);
/* The layout's descriptions of A and B as stored (transposed when 'T')
 * and of C: out[0..2]. perm (NULL: none) gives the order in which the
 * layout's rectangles lay over the blocks of m (C's and op(A)'s rows), n
 * (C's and op(B)'s columns) and k (op(A)'s columns, op(B)'s rows): block
 * v of the layout is block perm[d][v] of the matrices, perm[d] NULL for
 * their own order (mlsba__mpi_matrix_rects_perm). Local. */
int mlsba__mpi_layout_matrices(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                               char transa, char transb,
                               const int64_t *const perm[3],
                               mlsba_mpi_matrix_t *out[3]);

/* ---- multiplier.c: what the balancing and the runs share -------------- */

typedef struct mlsba__mpi_mult {
  MPI_Comm comm;
  MPI_Comm host; /* the ranks of this rank's host (shared memory) */
  int rank, q;
  const mlsba_mpi_multiply_opts_t *o;
  mlsba__mpi_grid_t grid;
  mlsba__mpi_node_t *node;
  mlsba__inpa_t *head;    /* rank 0, during a balancing */
  mlsba__mpi_rect_t mine; /* this rank's cells */
  /* With MLSBA_MPI_COMM_LINKS, on every rank: each rank's link and where
   * it came from (1 platform file, 2 measured); NULL otherwise. */
  mlsba_link_t *links;
  int *link_source;
  /* This rank's host and platform path, hashed (multiply_saved.c); fresh:
   * the next balancing runs INPA whatever was saved (a rebalancing). */
  uint64_t signature;
  int fresh;
  /* A distribution taken from the saved one without a run: its
   * products' rank times are judged against check_bar ((max - min) /
   * max) instead of drift (multiplier.c's maybe_rebalance). */
  int unchecked;
  double check_bar;
  /* Every rank's device names, gathered by the first report and kept
   * (multiply_report.c: a node's devices keep their names): rank 0 holds
   * them one after another (names) and where each rank's start
   * (names_at); names_kept is 1 on every rank once they are. */
  char *names;
  int *names_at;
  int names_kept;
  /* INPA's timed runs on real devices: their scratch operands (A_(b),
   * B_(b), C'), kept from one run to the next and grown as a run needs
   * (multiply_balance.c), so that each page is touched once a balancing
   * rather than once a run; freed when the balancing ends. */
  void *scratch[3];
  size_t scratch_bytes[3];
  /* This rank's node ran a step before its first timed run (its first
   * call's costs kept out of the models: multiply_balance.c). */
  int warmed;
} mlsba__mpi_mult_t;

/* ---- multiply.c ---------------------------------------------------------- */

/* o = in with its defaults resolved (m and k 0: n; transposes 'N' or
 * 'T'), checked for q ranks: 0 or MLSBA_EINVAL naming the problem. */
int mlsba__mpi_multiply_resolve(const mlsba_mpi_multiply_opts_t *in, int q,
                                mlsba_mpi_multiply_opts_t *o);
/* Collective: every rank's resolved options against rank 0's. */
int mlsba__mpi_multiply_agree_opts(MPI_Comm comm,
                                   const mlsba_mpi_multiply_opts_t *o);
/* mlsba_mpi_multiplier_create() for fn, with bad this rank's error found
 * before (0 or a code whose message is set): agreed on with the rest. */
int mlsba__mpi_multiplier_create(MPI_Comm comm,
                                 const mlsba_mpi_multiply_opts_t *opts, int bad,
                                 const char *fn, mlsba_mpi_multiplier_t **mult);

/* ---- multiply_balance.c ------------------------------------------------- */

/* Bytes a rank holds at once for a rows x cols rectangle of C: the
 * step's panels, and on a real node its A', B', C' (product != 0) or the
 * scratch C' of a balancing. */
double mlsba__mpi_mult_rect_bytes(const mlsba__mpi_mult_t *C, int64_t rows,
                                  int64_t cols, int product);
/* Collective: what the ranks of a host are about to hold at once must fit
 * the host's memory (what: the words of the message). */
int mlsba__mpi_mult_check_memory(mlsba__mpi_mult_t *C, double bytes,
                                 const char *what);
/* Rank i's communication over the product as the head models it
 * (MLSBA_MPI_COMM_LINKS): fixed + per (m + n) seconds for an m x n
 * rectangle of cells. */
void mlsba__mpi_mult_comm_cost(const mlsba__mpi_mult_t *C, int i, double *fixed,
                               double *per);
/* Collective, with every rank's node open: the ranks' time base agreed
 * (r->simulated), the head created from the nodes' capacities (and
 * links), then INPA's runs until it stops. On return (0) every rank's
 * C->mine is the rectangle of the distribution the product runs, its node
 * is balanced for it, and rank 0's r holds the history and the scalars
 * of that run (shared with every rank by the caller). */
int mlsba__mpi_mult_balance(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r);

/* This rank's IDPA on the rectangle C->mine: the node balanced for it and
 * its time for the whole product (multiply_balance.c). */
int mlsba__mpi_mult_run_rect(mlsba__mpi_mult_t *C, double *t);
/* Collective (the memory check), then local: this rank's node made
 * ready for the product on C->mine without timing it: a node of one device
 * takes the whole rectangle without a run, any other balances its devices (its
 * routine's runs, from the models it saved). */
int mlsba__mpi_mult_place_rect(mlsba__mpi_mult_t *C);
/* The timed runs' kept scratch operands freed (mlsba__mpi_mult_t). */
void mlsba__mpi_mult_scratch_free(mlsba__mpi_mult_t *C);

/* ---- multiply_saved.c --------------------------------------------------- */

/* Local: the hash of this host's name and the rank's platform path. */
uint64_t mlsba__mpi_mult_signature(const char *platform_path);
/* Collective, with C->o->model_dir set: the distribution a previous job
 * saved for these ranks and this shape, without a run; *used 1 (every
 * rank) when there is one: C->mine is its rectangle, the node ready for
 * it, rank 0's r holds it as a history of one (the saved times), and
 * C->unchecked has the products judge it against C->check_bar. */
int mlsba__mpi_mult_try_saved(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r,
                              int *used);
/* Collective: every rank's C->mine saved on rank 0 for the next job (a
 * file written whole, then renamed), with rank 0's times of the ranks
 * (NULL: unknown); nothing when it cannot be. */
void mlsba__mpi_mult_save(mlsba__mpi_mult_t *C, double imbalance,
                          const double *times);

/* ---- operands_keep.c ---------------------------------------------------- */

/* The caller's A or B as the last run moved it into the layout: its
 * description's shape, leading dimension and this rank's blocks, and a
 * copy of those blocks' elements (valid 0: nothing kept; copied 0: the
 * description only, for a caller that gives its word on the operand). */
typedef struct mlsba__mpi_kept {
  int valid, copied, kind;
  int64_t m, n, mb, nb, ld;
  size_t nown;
  mlsba_mpi_block_t *own;
  void *copy;
  size_t cap; /* bytes */
} mlsba__mpi_kept_t;

/* Local: 1 when k is valid and the caller's x in d is what it kept, the
 * same layout and every element of this rank's blocks the same bytes
 * (trusted: the elements taken as the caller's word, not compared). */
int mlsba__mpi_kept_same(const mlsba__mpi_kept_t *k,
                         const mlsba_mpi_matrix_t *d, const void *x, size_t es,
                         int trusted);
/* Local: k = x in d (k not valid when there is no memory for it); with
 * copy 0, d only (a later comparison then finds it changed). */
void mlsba__mpi_kept_take(mlsba__mpi_kept_t *k, const mlsba_mpi_matrix_t *d,
                          const void *x, size_t es, int copy);
void mlsba__mpi_kept_free(mlsba__mpi_kept_t *k);

/* ---- operands.c --------------------------------------------------------- */

/* This rank's operands of a run, in the layout's op form: A' rows x aks,
 * B' bks x cols, C' rows x cols (NULL where empty or simulated); and the
 * multiplier's buffers behind them, kept from run to run (a buffer used
 * again is not faulted in again: at N = 4096 that is tens of ms a run). */
typedef struct mlsba__mpi_operands {
  void *a, *b, *c;
  /* The caller's own arrays, used where they lie (its layout places this
   * part as the product's does): not the buffers, not moved back. */
  int borrowed[3];
  /* The caller's C that the last run borrowed and wrote: its pages are
   * in, so a product with beta 0 into it again overwrites it instead of
   * clearing it first (operands.c). */
  const void *warm_c;
  void *buf[3];
  size_t cap[3];                /* elements */
  mlsba__mpi_scratch_t scratch; /* the redistributions' */
  /* The caller's A and B that buf[0] and buf[1] hold (run_dist), and
   * which of them this run used again without moving (bit 0 A, bit 1 B). */
  mlsba__mpi_kept_t kept[2];
  unsigned reused;
  /* 1: C' holds whatever the last run left, and the product's first step
   * must write it with beta 0 (mlsba__mpi_node_overwrite_next) instead
   * of adding to it: a product with beta 0 into a buffer of the
   * multiplier's that an earlier run faulted in. */
  int overwrite;
} mlsba__mpi_operands_t;

/* Where A, B (and C, with beta) come from in a run: the caller's arrays in
 * their descriptions (dist != NULL), else o->fill or the seed. */
typedef struct mlsba__mpi_source {
  const mlsba_mpi_matrix_t *desc[3]; /* the caller's layouts (dist form) */
  const void *a, *b;
  void *c;
  int dist;
  unsigned same; /* MLSBA_MPI_SAME_A and _B: the caller's word */
} mlsba__mpi_source_t;

/* Collective: this rank's A', B' and beta C0' made (generated, asked of
 * the fill callback for the rank's own blocks, or redistributed from the
 * caller's layouts), op(A)' scaled by alpha. lib: the layout's
 * descriptions (A and B as stored). fill_s and move_s add their times. */
int mlsba__mpi_operands_make(mlsba__mpi_mult_t *C,
                             const mlsba__mpi_layout_t *lay,
                             mlsba_mpi_matrix_t *const lib[3],
                             const mlsba__mpi_source_t *src,
                             mlsba__mpi_operands_t *ops,
                             mlsba_mpi_split_t *split);
/* Collective: the Freivalds vector x of the seed, and w0 = C0' x summed
 * into a length-m vector (before the product); then after it, the check:
 * C x against alpha op(A) (op(B) x) + w0, every element of C taking part.
 * ok and the largest relative residual are the same on every rank. */
typedef struct mlsba__mpi_check mlsba__mpi_check_t;
int mlsba__mpi_check_begin(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                           const mlsba__mpi_operands_t *ops,
                           mlsba__mpi_check_t **check);
int mlsba__mpi_check_end(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                         const mlsba__mpi_operands_t *ops,
                         mlsba__mpi_check_t *check, int *ok, double *max_rel);
void mlsba__mpi_check_free(mlsba__mpi_check_t *check);
/* Collective: C' back (into the caller's layout in the dist form, else
 * into r->c with its place), and with o->gather the whole C on rank 0. */
int mlsba__mpi_operands_hand_back(mlsba__mpi_mult_t *C,
                                  const mlsba__mpi_layout_t *lay,
                                  mlsba_mpi_matrix_t *const lib[3],
                                  const mlsba__mpi_source_t *src,
                                  mlsba__mpi_operands_t *ops,
                                  mlsba_mpi_result_t *r,
                                  mlsba_mpi_split_t *split);
/* Releases the buffers kept (the multiplier's end). */
void mlsba__mpi_operands_free(mlsba__mpi_operands_t *ops);
/* The operands kept are no longer in the layout (a new balancing). */
void mlsba__mpi_operands_forget(mlsba__mpi_operands_t *ops);

/* ---- multiply_report.c -------------------------------------------------- */

/* Collective, after the product: every rank's rectangle, times and link
 * into r->ranks on every rank, its devices (loads, times, whole names) on
 * rank 0, and the product's makespan, GFLOPS and comm share. The names
 * are gathered once (C->names): a later report gives them on rank 0
 * alone, and what that costs it (out of memory) comes back in *late, for
 * the caller to agree on with its next agreement; 0 elsewhere. */
int mlsba__mpi_mult_report(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                           const mlsba__mpi_product_stats_t *st,
                           mlsba_mpi_result_t *r, int *late);

#endif
