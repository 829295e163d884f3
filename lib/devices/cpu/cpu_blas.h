/* The dense kernels every CPU core of the project runs: GEMM, GEMMT, TRSM,
 * TRMM, column-major, with BLAS's argument letters. One place chooses the
 * kernels (cpu_blas.c), so core devices, the GEMM load, the all-cores
 * baseline, the MPI node kernel and the factorizations all run the same
 * ones: each call's shape gives its class (mlsba__cpu_shape_class), and
 * the class its kernels (cpu_kernels.h). `threads` is the number of
 * threads of this call (1 on a pinned core device); the choice of kernels
 * never changes a result beyond rounding. */
#ifndef MLSBA_DEVICES_CPU_CPU_BLAS_H
#define MLSBA_DEVICES_CPU_CPU_BLAS_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* C = alpha op(A) op(B) + beta C; transa/transb 'N' or 'T'. alpha and
 * beta are given in double and used in the precision of the call. */
void mlsba__cpu_gemm(mlsba_precision_t p, char transa, char transb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta,
                     void *c, int64_t ldc, unsigned threads);

/* The uplo ('L'/'U') triangle of the m x m matrix C = alpha op(A) op(B) +
 * beta C, the other triangle untouched (BLIS's GEMMT; SYRK when B is A):
 * the diagonal blocks of a Cholesky update. */
void mlsba__cpu_gemmt(mlsba_precision_t p, char uplo, char transa, char transb,
                      int64_t m, int64_t k, double alpha, const void *a,
                      int64_t lda, const void *b, int64_t ldb, double beta,
                      void *c, int64_t ldc, unsigned threads);

/* B = alpha op(A)^-1 B (side 'L') or alpha B op(A)^-1 (side 'R'), A
 * triangular: uplo 'L'/'U', trans 'N'/'T', diag 'N'/'U'. */
void mlsba__cpu_trsm(mlsba_precision_t p, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, double alpha,
                     const void *a, int64_t lda, void *b, int64_t ldb,
                     unsigned threads);

/* x = op(A)^-1 x, A m x m triangular (BLAS's TRSV): one right-hand side
 * on the calling thread, the triangle read once and never packed. A
 * TRSM with one column packs the triangle and computes a micro-tile as
 * wide as its kernels' for it: TRSV is the solve of few columns. */
void mlsba__cpu_trsv(mlsba_precision_t p, char uplo, char trans, char diag,
                     int64_t m, const void *a, int64_t lda, void *x);

/* B = alpha op(A) B (side 'L') or alpha B op(A) (side 'R'), A
 * triangular, in place: a solve by a triangle's inverse at half the
 * flops of the product with the full inverse. */
void mlsba__cpu_trmm(mlsba_precision_t p, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, double alpha,
                     const void *a, int64_t lda, void *b, int64_t ldb,
                     unsigned threads);

/* The same calls on one thread with the kernel set `id` (cpu_kernels.h)
 * whatever the class: what the choice times, and what the tests compare.
 * OpenBLAS's id falls back to BLIS's own where OpenBLAS is not loaded. */
void mlsba__cpu_gemm_with(int id, mlsba_precision_t p, char transa, char transb,
                          int64_t m, int64_t n, int64_t k, double alpha,
                          const void *a, int64_t lda, const void *b,
                          int64_t ldb, double beta, void *c, int64_t ldc);
void mlsba__cpu_triangle_with(int id, int trmm, mlsba_precision_t p, char side,
                              char uplo, char trans, char diag, int64_t m,
                              int64_t n, double alpha, const void *a,
                              int64_t lda, void *b, int64_t ldb);

/* "BLIS 0.9.0", or "BLIS 0.9.0 and OpenBLAS 0.3.21 SkylakeX" when a class
 * runs OpenBLAS. */
void mlsba__cpu_blas_library(char *buf, size_t size);

/* One line naming the kernels in use and why ("BLIS 0.9.0, skx kernels
 * (BLIS detected: generic)"; per class where they differ). */
void mlsba__cpu_blas_describe(char *buf, size_t size);

#endif
