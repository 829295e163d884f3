/* The LAPACK routines the library calls (the panels' ?getf2, ?potf2,
 * ?geqrf, ?larft, ?lascl; ?orgqr of the QR residual; ?getrf and ?potrf
 * of the MPI layer's node columns), through the private OpenBLAS
 * (cpu/cpu_openblas.h; cpu/cpu_lapack.c): its kernels are the ones this
 * CPU's features call for, on one thread, whatever any OpenBLAS of the
 * process detected as it loaded.
 *
 * libmlsba links no LAPACK. A linked liblapack.so.3 is, on Debian,
 * OpenBLAS's, loaded as the process starts with the core type it detects
 * (an OpenBLAS that does not know the CPU runs its weakest kernels:
 * 0.3.21 took Prescott's on a Xeon with AVX-512, and its dpotrf died in
 * dgemv_n_PRESCOTT); and a program that dlopens OpenBLAS afterwards with
 * a core type of its own choosing gets that copy instead. Where the
 * private copy does not load (no AVX2, no OpenBLAS, no namespace),
 * reference LAPACK (Debian: liblapack3) is dlopen'd on first use, else
 * the system's liblapack.so.3; where none loads, the routines' callers
 * fail with MLSBA_ENOTSUP (mlsba__lapack_check).
 *
 * Several pinned cores call these at the same time, as they call the
 * private OpenBLAS's BLAS: with one thread, OpenBLAS's buffers are taken
 * under its lock. Arguments are LAPACK's, column-major, with int
 * dimensions; the returns are LAPACK's info, or MLSBA__LAPACK_NONE when
 * no LAPACK loaded (a caller that checked first never sees it). */
#ifndef MLSBA_DEVICES_LAPACK_H
#define MLSBA_DEVICES_LAPACK_H

#include <limits.h>
#include <stddef.h>

#include "mlsba.h"

/* The return of a routine when no LAPACK loaded: no info LAPACK gives. */
#define MLSBA__LAPACK_NONE INT_MIN

/* 0 when a LAPACK serves, else MLSBA_ENOTSUP with a message, headed by
 * fn, that says what was tried and why each did not load. Chooses the
 * LAPACK if not yet; the public entry points that reach a routine call it
 * before anything else. */
int mlsba__lapack_check(const char *fn);

/* Unblocked LU with partial pivoting of the m x n a; ipiv 1-based. */
int mlsba__lapack_getf2(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv);
/* Blocked LU with partial pivoting (LAPACK's ?getrf), on one thread. */
int mlsba__lapack_getrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv);
/* Unblocked Cholesky of the n x n a, uplo 'L' or 'U'. */
int mlsba__lapack_potf2(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda);
/* Blocked Cholesky (LAPACK's ?potrf), on one thread. */
int mlsba__lapack_potrf(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda);
/* QR of the m x n a, tau n long, work lwork long. */
int mlsba__lapack_geqrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        void *tau, void *work, int lwork);
/* The m x n Q of k reflectors (in a and tau, as ?geqrf leaves them),
 * formed in a; work lwork long. */
int mlsba__lapack_orgqr(mlsba_precision_t p, int m, int n, int k, void *a,
                        int lda, const void *tau, void *work, int lwork);
/* T (k x k, ldt) of k forward, columnwise reflectors of length n in v. */
void mlsba__lapack_larft(mlsba_precision_t p, int n, int k, const void *v,
                         int ldv, const void *tau, void *t, int ldt);
/* The m x n a (general) times cto / cfrom without over- or underflow. */
int mlsba__lapack_lascl(mlsba_precision_t p, double cfrom, double cto, int m,
                        int n, void *a, int lda);

/* Which LAPACK serves: "OpenBLAS 0.3.21 SkylakeX" (the private copy),
 * "reference LAPACK, <path> (the private OpenBLAS: why not)", or "no
 * LAPACK (what was tried)". Chooses it if not yet. */
const char *mlsba__lapack_label(void);

/* Whether the LAPACK at path (a file or a soname) loads and has every
 * routine above: 0, or MLSBA_ENOTSUP with why written (size bytes). What
 * the fallback does, without making it the one in use; a loaded library
 * stays loaded. */
int mlsba__lapack_probe(const char *path, char *why, size_t size);

#endif
