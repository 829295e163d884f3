/* The CPU's dense kernels through BLIS's expert interface: a runtime
 * object per call sets the thread count, so calls cannot fight a global
 * setting or other threads calling BLIS at the same time. */
#include <blis.h>
#include <stdio.h>
#include <string.h>

#include "cpu_blas.h"
#include "cpu_kernels.h"

static trans_t trans_of(char t) {
  return (t == 'T' || t == 't') ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE;
}

void mlsba__cpu_gemm(mlsba_precision_t p, char transa, char transb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta,
                     void *c, int64_t ldc, unsigned threads) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
  cntx_t *cntx = mlsba__cpu_kernel_context(p);
  if (p == MLSBA_PRECISION_DOUBLE) {
    double al = alpha, be = beta;
    bli_dgemm_ex(trans_of(transa), trans_of(transb), (dim_t)m, (dim_t)n,
                 (dim_t)k, &al, (double *)a, 1, (inc_t)lda, (double *)b, 1,
                 (inc_t)ldb, &be, (double *)c, 1, (inc_t)ldc, cntx, &rntm);
  } else {
    float al = (float)alpha, be = (float)beta;
    bli_sgemm_ex(trans_of(transa), trans_of(transb), (dim_t)m, (dim_t)n,
                 (dim_t)k, &al, (float *)a, 1, (inc_t)lda, (float *)b, 1,
                 (inc_t)ldb, &be, (float *)c, 1, (inc_t)ldc, cntx, &rntm);
  }
}

void mlsba__cpu_gemmt(mlsba_precision_t p, char uplo, char transa, char transb,
                      int64_t m, int64_t k, double alpha, const void *a,
                      int64_t lda, const void *b, int64_t ldb, double beta,
                      void *c, int64_t ldc, unsigned threads) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
  cntx_t *cntx = mlsba__cpu_kernel_context(p);
  uplo_t u = (uplo == 'U' || uplo == 'u') ? BLIS_UPPER : BLIS_LOWER;
  if (p == MLSBA_PRECISION_DOUBLE) {
    double al = alpha, be = beta;
    bli_dgemmt_ex(u, trans_of(transa), trans_of(transb), (dim_t)m, (dim_t)k,
                  &al, (double *)a, 1, (inc_t)lda, (double *)b, 1, (inc_t)ldb,
                  &be, (double *)c, 1, (inc_t)ldc, cntx, &rntm);
  } else {
    float al = (float)alpha, be = (float)beta;
    bli_sgemmt_ex(u, trans_of(transa), trans_of(transb), (dim_t)m, (dim_t)k,
                  &al, (float *)a, 1, (inc_t)lda, (float *)b, 1, (inc_t)ldb,
                  &be, (float *)c, 1, (inc_t)ldc, cntx, &rntm);
  }
}

/* BLIS's TRSM and TRMM take the same arguments. */
typedef void (*dtri_fn)(side_t, uplo_t, trans_t, diag_t, dim_t, dim_t, double *,
                        double *, inc_t, inc_t, double *, inc_t, inc_t,
                        cntx_t *, rntm_t *);
typedef void (*stri_fn)(side_t, uplo_t, trans_t, diag_t, dim_t, dim_t, float *,
                        float *, inc_t, inc_t, float *, inc_t, inc_t, cntx_t *,
                        rntm_t *);

static void triangular(dtri_fn dfn, stri_fn sfn, mlsba_precision_t p, char side,
                       char uplo, char trans, char diag, int64_t m, int64_t n,
                       double alpha, const void *a, int64_t lda, void *b,
                       int64_t ldb, unsigned threads) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
  cntx_t *cntx = mlsba__cpu_kernel_context(p);
  side_t s = (side == 'R' || side == 'r') ? BLIS_RIGHT : BLIS_LEFT;
  uplo_t u = (uplo == 'U' || uplo == 'u') ? BLIS_UPPER : BLIS_LOWER;
  diag_t d = (diag == 'U' || diag == 'u') ? BLIS_UNIT_DIAG : BLIS_NONUNIT_DIAG;
  if (p == MLSBA_PRECISION_DOUBLE) {
    double al = alpha;
    dfn(s, u, trans_of(trans), d, (dim_t)m, (dim_t)n, &al, (double *)a, 1,
        (inc_t)lda, (double *)b, 1, (inc_t)ldb, cntx, &rntm);
  } else {
    float al = (float)alpha;
    sfn(s, u, trans_of(trans), d, (dim_t)m, (dim_t)n, &al, (float *)a, 1,
        (inc_t)lda, (float *)b, 1, (inc_t)ldb, cntx, &rntm);
  }
}

void mlsba__cpu_trsm(mlsba_precision_t p, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, double alpha,
                     const void *a, int64_t lda, void *b, int64_t ldb,
                     unsigned threads) {
  triangular(bli_dtrsm_ex, bli_strsm_ex, p, side, uplo, trans, diag, m, n,
             alpha, a, lda, b, ldb, threads);
}

void mlsba__cpu_trsv(mlsba_precision_t p, char uplo, char trans, char diag,
                     int64_t m, const void *a, int64_t lda, void *x) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  cntx_t *cntx = mlsba__cpu_kernel_context(p);
  uplo_t u = (uplo == 'U' || uplo == 'u') ? BLIS_UPPER : BLIS_LOWER;
  diag_t d = (diag == 'U' || diag == 'u') ? BLIS_UNIT_DIAG : BLIS_NONUNIT_DIAG;
  if (p == MLSBA_PRECISION_DOUBLE) {
    double one = 1;
    bli_dtrsv_ex(u, trans_of(trans), d, (dim_t)m, &one, (double *)a, 1,
                 (inc_t)lda, (double *)x, 1, cntx, &rntm);
  } else {
    float one = 1;
    bli_strsv_ex(u, trans_of(trans), d, (dim_t)m, &one, (float *)a, 1,
                 (inc_t)lda, (float *)x, 1, cntx, &rntm);
  }
}

void mlsba__cpu_trmm(mlsba_precision_t p, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, double alpha,
                     const void *a, int64_t lda, void *b, int64_t ldb,
                     unsigned threads) {
  triangular(bli_dtrmm_ex, bli_strmm_ex, p, side, uplo, trans, diag, m, n,
             alpha, a, lda, b, ldb, threads);
}

void mlsba__cpu_blas_library(char *buf, size_t size) {
  snprintf(buf, size, "BLIS %s", bli_info_get_version_str());
}

/* "zen3" for the sub-configuration chosen for p, "zen3 (BLIS's own)" when
 * that is what BLIS detected by itself. */
static const char *kernel_label(mlsba_precision_t p) {
  const char *name = mlsba__cpu_kernel_name(p);
  return strcmp(name, "auto") == 0 ? mlsba__cpu_kernel_detected() : name;
}

void mlsba__cpu_blas_describe(char *buf, size_t size) {
  const char *s = kernel_label(MLSBA_PRECISION_SINGLE),
             *d = kernel_label(MLSBA_PRECISION_DOUBLE);
  if (strcmp(s, d) == 0)
    snprintf(buf, size, "BLIS %s, %s kernels (BLIS detected: %s)",
             bli_info_get_version_str(), s, mlsba__cpu_kernel_detected());
  else
    snprintf(buf, size,
             "BLIS %s, %s kernels single, %s double (BLIS detected: %s)",
             bli_info_get_version_str(), s, d, mlsba__cpu_kernel_detected());
}
