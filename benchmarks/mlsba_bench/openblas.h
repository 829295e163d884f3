/* OpenBLAS as a user would call it instead of libmlsba: loaded at run
 * time (dlopen, its symbols kept apart from the BLIS inside libmlsba),
 * with the core type that suits this CPU. The bench's baseline rows and
 * its single-core peak use it. */
#ifndef MLSBA_BENCH_OPENBLAS_H
#define MLSBA_BENCH_OPENBLAS_H

#include <stdint.h>

#include "mlsba.h"

/* Loads OpenBLAS once; 0 when it is there, 1 when it is not (the rows that
 * need it are left out, and *why says so). */
int openblas_load(const char **why);

/* "OpenBLAS 0.3.21, SkylakeX kernels": after a successful load. */
const char *openblas_label(void);

/* Once loaded: the kernels it runs ("Prescott"), the best family of this
 * CPU's ISA ("SkylakeX", or "" below AVX2), and, when the first are
 * weaker, two lines that say so and how a user gets the best (else
 * ""). */
const char *openblas_corename(void);
const char *openblas_best_core(void);
const char *openblas_weak(void);

/* Columns 0..ncols-1 of C = A x B on `threads` OpenBLAS threads. */
void openblas_gemm(const mlsba_gemm_t *g, int64_t ncols, unsigned threads);

/* OpenBLAS's own LU (?getrf, ipiv 1-based) or Cholesky (?potrf, lower)
 * of the n x n matrix a on `threads` threads; its info. */
int openblas_getrf(mlsba_precision_t prec, int n, void *a, int *ipiv,
                   unsigned threads);
int openblas_potrf(mlsba_precision_t prec, int n, void *a, unsigned threads);
/* Its LAPACK's QR (?geqrf, OpenBLAS's BLAS inside) of the m x n matrix a
 * into a and tau; its info (-1000 without memory for its workspace). */
int openblas_geqrf(mlsba_precision_t prec, int m, int n, void *a, void *tau,
                   unsigned threads);

/* LAPACK's drivers and solves inside OpenBLAS, on `threads` threads:
 * ?gesv and ?getrs (trans 'N'), ?posv and ?potrs (lower), n x n with
 * nrhs right-hand sides, leading dimensions n; their info, or -100 when
 * this OpenBLAS lacks the call. */
int openblas_gesv(mlsba_precision_t prec, int n, int nrhs, void *a, int *ipiv,
                  void *b, unsigned threads);
int openblas_getrs(mlsba_precision_t prec, int n, int nrhs, const void *a,
                   const int *ipiv, void *b, unsigned threads);
int openblas_posv(mlsba_precision_t prec, int n, int nrhs, void *a, void *b,
                  unsigned threads);
int openblas_potrs(mlsba_precision_t prec, int n, int nrhs, const void *a,
                   void *b, unsigned threads);

#endif
