/* The linked liblapack's calls the panels use (Fortran): cpu_lapack.c
 * falls back on them, and the tests take them as the reference. The
 * string lengths are the hidden last arguments. */
#ifndef MLSBA_DEVICES_CPU_CPU_LAPACK_LINKED_H
#define MLSBA_DEVICES_CPU_CPU_LAPACK_LINKED_H

#include <stddef.h>

void dgetf2_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void sgetf2_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void dpotf2_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotf2_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
             double *work, const int *lwork, int *info);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau,
             float *work, const int *lwork, int *info);
void dlarft_(const char *direct, const char *storev, const int *n, const int *k,
             const double *v, const int *ldv, const double *tau, double *t,
             const int *ldt, size_t direct_len, size_t storev_len);
void slarft_(const char *direct, const char *storev, const int *n, const int *k,
             const float *v, const int *ldv, const float *tau, float *t,
             const int *ldt, size_t direct_len, size_t storev_len);
void dlascl_(const char *type, const int *kl, const int *ku,
             const double *cfrom, const double *cto, const int *m, const int *n,
             double *a, const int *lda, int *info, size_t type_len);
void slascl_(const char *type, const int *kl, const int *ku, const float *cfrom,
             const float *cto, const int *m, const int *n, float *a,
             const int *lda, int *info, size_t type_len);

#endif
