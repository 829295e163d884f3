/* mlsba-inpa --op getrf|potrf: LU or Cholesky across the ranks
 * (mlsba_mpi_getrf, _potrf) on a layout drawn from the node models INPA
 * finds, or the homogeneous one, checked by a solve (HPL's residual). */
#ifndef MLSBA_TOOLS_INPA_FACTOR_H
#define MLSBA_TOOLS_INPA_FACTOR_H

#include "mlsba/mpi.h"

/* Which factorization --op asks for. */
enum { INPA_OP_GEMM = 0, INPA_OP_GETRF, INPA_OP_POTRF };

/* --algo's values beyond the product's algorithms (mlsba_mpi_algo_t,
 * which it takes too): the factorizations' other layouts. */
enum { INPA_ALGO_PROCESS_SCALING = 100, INPA_ALGO_CONSTANT };

/* What --op getrf|potrf takes besides the product's options. */
typedef struct {
  int op;                 /* INPA_OP_GETRF or _POTRF */
  int algo;               /* --algo: mlsba_mpi_algo_t or INPA_ALGO_* */
  int split;              /* --split: 0 fpm (per step), 1 fixed */
  int compare;            /* --compare: every layout and split */
  const char *node_ranks; /* --node-ranks L1,L2,...; NULL: by host */
  const char *json;       /* NULL: none; "-": stdout */
  int skip; /* --skip-compute: times only (SMPI; no solve, not verified) */
  int quiet;
} inpa_factor_args_t;

/* Runs a->op with the product's options (platform, size, block,
 * precision...), prints the table (unless quiet) and writes the JSON
 * report on rank 0. Collective. Returns the exit status: 0, 1 for an
 * error (said on stderr by rank 0) or a residual that is not below 16
 * (in any row of --compare), 2 for a bad --node-ranks. */
int inpa_factor_main(const mlsba_mpi_opts_t *o, const inpa_factor_args_t *a,
                     const char *prog);

#endif
