/* The LAPACK routines the factorizations' panels call (?getf2, ?potf2,
 * ?geqrf, ?larft, ?lascl), through the private OpenBLAS (cpu/cpu_openblas.h;
 * cpu/cpu_lapack.c): its kernels are the ones this CPU's features call for, on
 * one thread, whatever the process's OpenBLAS detected as it loaded. Debian's
 * liblapack.so.3 is OpenBLAS's, and an OpenBLAS that does not know the
 * CPU runs its weakest kernels there (0.3.21 took Prescott's on a Xeon
 * with AVX-512, and its dpotf2 died in dgemv_n_PRESCOTT). Where the
 * private copy does not load (no AVX2, no OpenBLAS, no namespace), the
 * linked liblapack serves: reference LAPACK on a machine without
 * OpenBLAS.
 *
 * Several pinned cores call these at the same time, as they call the
 * private OpenBLAS's BLAS: with one thread, OpenBLAS's buffers are taken
 * under its lock. Arguments are LAPACK's, column-major, with int
 * dimensions; the returns are LAPACK's info. */
#ifndef MLSBA_DEVICES_LAPACK_H
#define MLSBA_DEVICES_LAPACK_H

#include "mlsba.h"

/* Unblocked LU with partial pivoting of the m x n a; ipiv 1-based. */
int mlsba__lapack_getf2(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv);
/* Unblocked Cholesky of the n x n a, uplo 'L' or 'U'. */
int mlsba__lapack_potf2(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda);
/* QR of the m x n a, tau n long, work lwork long. */
int mlsba__lapack_geqrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        void *tau, void *work, int lwork);
/* T (k x k, ldt) of k forward, columnwise reflectors of length n in v. */
void mlsba__lapack_larft(mlsba_precision_t p, int n, int k, const void *v,
                         int ldv, const void *tau, void *t, int ldt);
/* The m x n a (general) times cto / cfrom without over- or underflow. */
int mlsba__lapack_lascl(mlsba_precision_t p, double cfrom, double cto, int m,
                        int n, void *a, int lda);

/* Which LAPACK serves: "OpenBLAS 0.3.21 SkylakeX" (the private copy) or
 * "the linked liblapack (why)". Loads the private copy if not yet. */
const char *mlsba__lapack_label(void);

#endif
