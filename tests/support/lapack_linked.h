/* The linked liblapack's calls (Fortran) that test_lapack takes as the
 * reference of the library's LAPACK (lib/devices/lapack.h), which links
 * none. The string lengths are the hidden last arguments. */
#ifndef MLSBA_TESTS_SUPPORT_LAPACK_LINKED_H
#define MLSBA_TESTS_SUPPORT_LAPACK_LINKED_H

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

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);
void dorgqr_(const int *m, const int *n, const int *k, double *a,
             const int *lda, const double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda,
             const float *tau, float *work, const int *lwork, int *info);

#endif
