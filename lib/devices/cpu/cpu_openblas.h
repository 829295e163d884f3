/* A private, single-thread OpenBLAS for the cores: where its kernels beat
 * every BLIS sub-configuration on a shape class (SkylakeX SGEMM on an AMD
 * family-26 EPYC: about 220 GFLOPS on one core against 174 for BLIS's
 * skx), the cores call it instead.
 *
 * OpenBLAS chooses its kernels once, as it loads, from OPENBLAS_CORETYPE
 * or its own CPU detection (which settles on Haswell on AVX-512 AMD CPUs
 * it does not know), and takes its thread count from a process-wide
 * setting. A library may change neither for the application, which may
 * use OpenBLAS itself (Debian's LAPACK is OpenBLAS's). So it is loaded in
 * a link-map namespace of its own (dlmopen): with its own copy of the C
 * library, whose environment is set, before OpenBLAS loads, to the core
 * type this CPU's features call for and one thread. The process's
 * environment, and any OpenBLAS the application loads, are untouched.
 *
 * Its pthread build is the one loaded (Debian: libopenblas0-pthread): with
 * one thread it starts no thread, and its buffer allocation is locked, so
 * the pinned core threads may call it at the same time. Absent, or where
 * the namespace cannot be made, BLIS alone serves. */
#ifndef MLSBA_DEVICES_CPU_CPU_OPENBLAS_H
#define MLSBA_DEVICES_CPU_CPU_OPENBLAS_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* The OpenBLAS core type for these CPU features ("SkylakeX" with
 * AVX-512, "Haswell" with AVX2 and FMA), or NULL: below that OpenBLAS is
 * not tried. */
const char *mlsba__openblas_core_type(unsigned features);

/* What identifies the OpenBLAS that would be loaded, without loading it:
 * its file (name and size) and core type, or "none (why)". The cache key
 * carries it, so a new OpenBLAS makes the choice again. */
void mlsba__openblas_key(unsigned features, char *buf, size_t size);

/* Loads it once, with the core type for `features`; 0, or -1 with *why
 * set (a static string). Not thread-safe: called while the choice is made
 * (under its once). */
int mlsba__openblas_load(unsigned features, const char **why);

/* "OpenBLAS 0.3.21 SkylakeX" once loaded, else "". */
const char *mlsba__openblas_label(void);

/* Another of its symbols (the panels' LAPACK routines, cpu_lapack.c)
 * once loaded, else NULL. */
void *mlsba__openblas_symbol(const char *name);

/* The calls, column-major, with BLAS's letters, on one thread. Each
 * returns 1 when it did not run (not loaded, or a dimension beyond int:
 * the caller uses BLIS), else 0. */
int mlsba__openblas_gemm(mlsba_precision_t p, char transa, char transb,
                         int64_t m, int64_t n, int64_t k, double alpha,
                         const void *a, int64_t lda, const void *b, int64_t ldb,
                         double beta, void *c, int64_t ldc);
/* The uplo triangle of C = alpha op(A) op(A)^T + beta C (trans 'N': A A^T,
 * 'T': A^T A), n x n, A n x k (or k x n). */
int mlsba__openblas_syrk(mlsba_precision_t p, char uplo, char trans, int64_t n,
                         int64_t k, double alpha, const void *a, int64_t lda,
                         double beta, void *c, int64_t ldc);
int mlsba__openblas_trsm(mlsba_precision_t p, char side, char uplo, char trans,
                         char diag, int64_t m, int64_t n, double alpha,
                         const void *a, int64_t lda, void *b, int64_t ldb);
int mlsba__openblas_trmm(mlsba_precision_t p, char side, char uplo, char trans,
                         char diag, int64_t m, int64_t n, double alpha,
                         const void *a, int64_t lda, void *b, int64_t ldb);

#endif
