/* mlsba-inpa --op getrf|potrf: LU or Cholesky across the ranks
 * (mlsba_mpi_getrf, _potrf) on a layout drawn from the node models INPA
 * finds, or the homogeneous one, checked by a solve (HPL's residual). */
#ifndef MLSBA_TOOLS_INPA_FACTOR_H
#define MLSBA_TOOLS_INPA_FACTOR_H

#include "mlsba/mpi.h"

/* Which factorization --op asks for. */
enum { INPA_OP_GEMM = 0, INPA_OP_GETRF, INPA_OP_POTRF };

/* Runs op with the product's options (platform, size, block, algo,
 * precision...), prints the table (unless quiet) and writes json (NULL:
 * none; "-": stdout) on rank 0. skip: compute no numbers, only their
 * times (SMPI; no solve then). Collective. Returns the exit status: 0,
 * 1 for an error (said on stderr by rank 0) or a residual that is not
 * below 16. */
int inpa_factor_main(const mlsba_mpi_opts_t *o, int op, int skip,
                     const char *json, int quiet, const char *prog);

#endif
