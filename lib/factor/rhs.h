/* The solves with the factors of mlsba_getrf and mlsba_potrf, internal
 * view: what a block of right-hand sides needs (rhs.c) and the checks
 * the public solves and their drivers share (solves.c). */
#ifndef MLSBA_FACTOR_RHS_H
#define MLSBA_FACTOR_RHS_H

#include <stdint.h>

#include "mlsba.h"

/* One solve with a factorization's factors: LU (ipiv set; trans: A^T X
 * = B) or Cholesky (ipiv NULL; lower: A = L L^T, else U^T U). Columns of
 * B are independent: any block of them is solved alone. */
typedef struct {
  mlsba_precision_t prec;
  int64_t n;
  const void *a;
  int64_t lda;
  const int64_t *ipiv; /* LU's n 1-based pivots; NULL: Cholesky */
  int trans;           /* LU */
  int lower;           /* Cholesky */
  void *b;
  int64_t ldb;
} mlsba__rhs_t;

/* Columns [c, c + w) of B solved in place from the calling thread, the
 * kernels' TRSMs on `threads` threads (its TRSVs on one); on one thread
 * by blocks where mlsba__rhs_by_blocks says so. */
void mlsba__rhs_solve(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      unsigned threads);

/* Whether a core solves its columns by blocks (rhs.c): where OpenBLAS's
 * kernels run the products of precision p. Otherwise one TRSM of the
 * whole triangle on the cores' threads ran faster here (double, BLIS's
 * skx: n = 4096, 64 right-hand sides, 26 ms against 39 ms by blocks
 * split between the cores). */
int mlsba__rhs_by_blocks(mlsba_precision_t p);

/* The arguments of a solve LAPACK checks (executor, precision, n, nrhs,
 * a, lda, b, ldb, info), each bad one named in the message with fn. */
int mlsba__rhs_check(const char *fn, const mlsba_executor_t *ex,
                     mlsba_precision_t prec, int64_t n, int64_t nrhs,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     const int64_t *info);

/* The threads of a solve (solves.c): one a real core of the platform;
 * one on a platform of simulated devices, which compute nothing (the
 * calling thread solves). OpenCL devices take no part. */
unsigned mlsba__solve_threads(const mlsba_executor_t *ex);

#endif
