/* The two-dimensional product's own modules (mlsba_mpi_multiply):
 *   multiply.c          the call: its options agreed on, then the two
 *                       phases below, the head's results for every rank;
 *   multiply_balance.c  INPA across the ranks: every rank's node balanced
 *                       on the rectangles the head asks for, until the
 *                       arrangement the product runs;
 *   multiply_report.c   what every rank ran, gathered into the result.
 * The product itself is product.c (any arrangement), the node's kernel
 * node.c, the application's matrices matrices.c. */
#ifndef MLSBA_MPI_MULTIPLY_H
#define MLSBA_MPI_MULTIPLY_H

#include "../partition/inpa.h"
#include "internal.h"

/* The run the head asks for, as every rank sees it. */
typedef struct mlsba__mpi_rect {
  int64_t m, n, row, col;
} mlsba__mpi_rect_t;

typedef struct mlsba__mpi_mult {
  MPI_Comm comm;
  MPI_Comm host; /* the ranks of this rank's host (shared memory) */
  int rank, q;
  const mlsba_mpi_multiply_opts_t *o;
  int64_t nb;
  mlsba__mpi_node_t *node;
  mlsba__inpa_t *head; /* rank 0 */
  mlsba__mpi_rect_t mine;
  /* With MLSBA_MPI_COMM_LINKS, on every rank: each rank's link and where
   * it came from (1 platform file, 2 measured); NULL otherwise. */
  mlsba_link_t *links;
  int *link_source;
} mlsba__mpi_mult_t;

/* ---- multiply_balance.c ------------------------------------------------- */

/* Bytes a rank holds at once for an m x n rectangle of blocks: the step's
 * panels, and on a real node its A', B', C' (product != 0) or the scratch
 * C' of a balancing. */
double mlsba__mpi_mult_rect_bytes(const mlsba__mpi_mult_t *C, int64_t m,
                                  int64_t n, int product);
/* Collective: what the ranks of a host are about to hold at once must fit
 * the host's memory (what: the words of the message). */
int mlsba__mpi_mult_check_memory(mlsba__mpi_mult_t *C, double bytes,
                                 const char *what);
/* Rank i's communication over the product as the head models it
 * (MLSBA_MPI_COMM_LINKS): fixed + per (m + n) seconds for an m x n
 * rectangle of blocks. */
void mlsba__mpi_mult_comm_cost(const mlsba__mpi_mult_t *C, int i, double *fixed,
                               double *per);
/* Collective, with every rank's node open: the ranks' time base agreed
 * (r->simulated), the head created from the nodes' capacities (and
 * links), then INPA's runs until it stops. On return (0) every rank's
 * C->mine is the rectangle of the distribution the product runs, its node
 * is balanced for it, and rank 0's r holds the history and the scalars
 * of that run. */
int mlsba__mpi_mult_balance(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r);

/* ---- multiply_report.c -------------------------------------------------- */

/* Collective, after the product: every rank's rectangle, times and link
 * into r->ranks on every rank, its devices (loads, times, whole names) on
 * rank 0, and the product's makespan, GFLOPS and comm share. */
int mlsba__mpi_mult_report(mlsba__mpi_mult_t *C,
                           const mlsba__mpi_product_stats_t *st,
                           mlsba_mpi_result_t *r);

#endif
