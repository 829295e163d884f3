/* Dense matrices for the factorization and solve tests: LAPACK's
 * prototypes (the reference), random and positive definite matrices made
 * from a seed, and a node (platform and executor) opened or the test
 * fails. */
#ifndef MLSBA_TESTS_DENSE_H
#define MLSBA_TESTS_DENSE_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* LAPACK, the reference (Fortran: int sizes, hidden string lengths). */
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv,
            double *b, const int *ldb, int *info);
void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv,
            float *b, const int *ldb, int *info);
void dposv_(const char *uplo, const int *n, const int *nrhs, double *a,
            const int *lda, double *b, const int *ldb, int *info, size_t);
void sposv_(const char *uplo, const int *n, const int *nrhs, float *a,
            const int *lda, float *b, const int *ldb, int *info, size_t);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
             const int *lda, const int *ipiv, double *b, const int *ldb,
             int *info, size_t);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
             double *work, const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a,
             const int *lda, const double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda,
             const float *tau, float *work, const int *lwork, int *info);
void dormqr_(const char *side, const char *trans, const int *m, const int *n,
             const int *k, const double *a, const int *lda, const double *tau,
             double *c, const int *ldc, double *work, const int *lwork,
             int *info, size_t side_len, size_t trans_len);
void sormqr_(const char *side, const char *trans, const int *m, const int *n,
             const int *k, const float *a, const int *lda, const float *tau,
             float *c, const int *ldc, float *work, const int *lwork, int *info,
             size_t side_len, size_t trans_len);
void dgels_(const char *trans, const int *m, const int *n, const int *nrhs,
            double *a, const int *lda, double *b, const int *ldb, double *work,
            const int *lwork, int *info, size_t trans_len);
void sgels_(const char *trans, const int *m, const int *n, const int *nrhs,
            float *a, const int *lda, float *b, const int *ldb, float *work,
            const int *lwork, int *info, size_t trans_len);

/* Cores 0 and 1, a device each. */
extern const char *const two_cores;
/* Two simulated devices of constant speed (units per second), alone in
 * their groups: every split and time can be worked out by hand. */
extern const char *const sim_pair;

typedef struct {
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
} node_t;

/* The platform of json and its executor, or the test fails. */
node_t open_node(const char *json);
void close_node(node_t *n);

/* The next of a linear congruential sequence, in [-1, 1). */
double uniform(unsigned *s);

/* m x n with leading dimension lda in prec, entries in [-1, 1);
 * symmetric with n on the diagonal when spd (positive definite by
 * diagonal dominance). Every row up to lda is filled. */
void *make_matrix(mlsba_precision_t prec, int64_t m, int64_t n, int64_t lda,
                  int spd, unsigned seed);
/* A copy of bytes at a (a byte allocated where bytes is 0). */
void *copy_of(const void *a, size_t bytes);
/* The bytes of lda x n in prec. */
size_t bytes_of(mlsba_precision_t prec, int64_t lda, int64_t n);

/* A column-major matrix held in double whatever the precision of the
 * call, converted on the way in and out. */
typedef struct {
  int64_t rows, cols, ld;
  double *v;
} mat_t;

/* rows x cols with leading dimension ld, zeros. */
mat_t mat(int64_t rows, int64_t cols, int64_t ld);
/* Entries in [-1, 1); symmetric with rows on the diagonal when spd. */
mat_t random_mat(int64_t rows, int64_t cols, int64_t ld, int spd,
                 unsigned seed);
/* A random matrix whose rows must be interchanged, and well conditioned:
 * 2 sqrt(n) + 2 added at row perm(j) of every column j, perm a random
 * permutation, so that partial pivoting finds those rows (P (R + c I)
 * with ||R||_2 about 1.2 sqrt(n): a condition near 4), and a solution
 * can be held close to LAPACK's whatever the precision. */
mat_t pivoting_mat(int64_t n, int64_t ld, unsigned seed);
void free_mat(mat_t *m);

/* A matrix in the precision of the call (a) and the same entries in
 * double (ref, the reference), m x n with leading dimension lda: the
 * entries of make_matrix(prec, m, n, lda, 0, seed). */
typedef struct {
  mlsba_precision_t prec;
  int64_t m, n, lda;
  double *ref; /* the entries as the call's precision holds them */
  void *a;
} matrix_t;

matrix_t make_matrix_ref(mlsba_precision_t prec, int64_t m, int64_t n,
                         int64_t lda, unsigned seed);
void free_matrix(matrix_t *A);

#endif
