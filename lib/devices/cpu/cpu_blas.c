/* The CPU's dense kernels: BLIS through its expert interface (a runtime
 * object per call sets the thread count, so calls cannot fight a global
 * setting or other threads calling BLIS at the same time), or the private
 * single-thread OpenBLAS where the call's class chose it. */
#include <blis.h>
#include <stdio.h>
#include <string.h>

#include "cpu_blas.h"
#include "cpu_kernels.h"
#include "cpu_openblas.h"

static trans_t trans_of(char t) {
  return (t == 'T' || t == 't') ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE;
}

static void blis_gemm(cntx_t *cntx, unsigned threads, mlsba_precision_t p,
                      char transa, char transb, int64_t m, int64_t n, int64_t k,
                      double alpha, const void *a, int64_t lda, const void *b,
                      int64_t ldb, double beta, void *c, int64_t ldc) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
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

/* BLIS's TRSM and TRMM take the same arguments. */
typedef void (*dtri_fn)(side_t, uplo_t, trans_t, diag_t, dim_t, dim_t, double *,
                        double *, inc_t, inc_t, double *, inc_t, inc_t,
                        cntx_t *, rntm_t *);
typedef void (*stri_fn)(side_t, uplo_t, trans_t, diag_t, dim_t, dim_t, float *,
                        float *, inc_t, inc_t, float *, inc_t, inc_t, cntx_t *,
                        rntm_t *);

static void blis_triangle(cntx_t *cntx, unsigned threads, int trmm,
                          mlsba_precision_t p, char side, char uplo, char trans,
                          char diag, int64_t m, int64_t n, double alpha,
                          const void *a, int64_t lda, void *b, int64_t ldb) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
  side_t s = (side == 'R' || side == 'r') ? BLIS_RIGHT : BLIS_LEFT;
  uplo_t u = (uplo == 'U' || uplo == 'u') ? BLIS_UPPER : BLIS_LOWER;
  diag_t d = (diag == 'U' || diag == 'u') ? BLIS_UNIT_DIAG : BLIS_NONUNIT_DIAG;
  if (p == MLSBA_PRECISION_DOUBLE) {
    double al = alpha;
    dtri_fn f = trmm ? bli_dtrmm_ex : bli_dtrsm_ex;
    f(s, u, trans_of(trans), d, (dim_t)m, (dim_t)n, &al, (double *)a, 1,
      (inc_t)lda, (double *)b, 1, (inc_t)ldb, cntx, &rntm);
  } else {
    float al = (float)alpha;
    stri_fn f = trmm ? bli_strmm_ex : bli_strsm_ex;
    f(s, u, trans_of(trans), d, (dim_t)m, (dim_t)n, &al, (float *)a, 1,
      (inc_t)lda, (float *)b, 1, (inc_t)ldb, cntx, &rntm);
  }
}

/* The kernels of class c for a call on `threads` threads: 1 when OpenBLAS
 * should take it (it runs one thread), else 0 with *cntx the BLIS
 * context. */
static int route(mlsba_precision_t p, mlsba__cpu_class_t c, unsigned threads,
                 cntx_t **cntx) {
  *cntx = mlsba__cpu_kernel_context_of(mlsba__cpu_kernel_blis_of(p, c));
  return threads <= 1 &&
         mlsba__cpu_kernel_of(p, c) == MLSBA__CPU_KERNEL_OPENBLAS;
}

void mlsba__cpu_gemm(mlsba_precision_t p, char transa, char transb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *a,
                     int64_t lda, const void *b, int64_t ldb, double beta,
                     void *c, int64_t ldc, unsigned threads) {
  cntx_t *cntx;
  if (route(p, mlsba__cpu_shape_class(MLSBA__CPU_OP_GEMM, m, n, k), threads,
            &cntx) &&
      mlsba__openblas_gemm(p, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                           beta, c, ldc) == 0)
    return;
  blis_gemm(cntx, threads, p, transa, transb, m, n, k, alpha, a, lda, b, ldb,
            beta, c, ldc);
}

/* GEMMT with B = A and opposite transposes is SYRK, which OpenBLAS has
 * (0.3.21 has no GEMMT). */
static int is_syrk(char transa, char transb, const void *a, int64_t lda,
                   const void *b, int64_t ldb) {
  int ta = transa == 'T' || transa == 't', tb = transb == 'T' || transb == 't';
  return a == b && lda == ldb && ta != tb;
}

void mlsba__cpu_gemmt(mlsba_precision_t p, char uplo, char transa, char transb,
                      int64_t m, int64_t k, double alpha, const void *a,
                      int64_t lda, const void *b, int64_t ldb, double beta,
                      void *c, int64_t ldc, unsigned threads) {
  cntx_t *cntx;
  if (route(p, mlsba__cpu_shape_class(MLSBA__CPU_OP_GEMMT, m, m, k), threads,
            &cntx) &&
      is_syrk(transa, transb, a, lda, b, ldb) &&
      mlsba__openblas_syrk(p, uplo, transa, m, k, alpha, a, lda, beta, c,
                           ldc) == 0)
    return;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)(threads ? threads : 1), &rntm);
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

static void triangular(int trmm, mlsba_precision_t p, char side, char uplo,
                       char trans, char diag, int64_t m, int64_t n,
                       double alpha, const void *a, int64_t lda, void *b,
                       int64_t ldb, unsigned threads) {
  cntx_t *cntx;
  if (route(p,
            mlsba__cpu_shape_class(
                trmm ? MLSBA__CPU_OP_TRMM : MLSBA__CPU_OP_TRSM, m, n, 0),
            threads, &cntx) &&
      (trmm ? mlsba__openblas_trmm : mlsba__openblas_trsm)(
          p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb) == 0)
    return;
  blis_triangle(cntx, threads, trmm, p, side, uplo, trans, diag, m, n, alpha, a,
                lda, b, ldb);
}

void mlsba__cpu_trsm(mlsba_precision_t p, char side, char uplo, char trans,
                     char diag, int64_t m, int64_t n, double alpha,
                     const void *a, int64_t lda, void *b, int64_t ldb,
                     unsigned threads) {
  triangular(0, p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb,
             threads);
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
  triangular(1, p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb,
             threads);
}

void mlsba__cpu_gemm_with(int id, mlsba_precision_t p, char transa, char transb,
                          int64_t m, int64_t n, int64_t k, double alpha,
                          const void *a, int64_t lda, const void *b,
                          int64_t ldb, double beta, void *c, int64_t ldc) {
  if (id == MLSBA__CPU_KERNEL_OPENBLAS &&
      mlsba__openblas_gemm(p, transa, transb, m, n, k, alpha, a, lda, b, ldb,
                           beta, c, ldc) == 0)
    return;
  blis_gemm(mlsba__cpu_kernel_context_of(id), 1, p, transa, transb, m, n, k,
            alpha, a, lda, b, ldb, beta, c, ldc);
}

void mlsba__cpu_triangle_with(int id, int trmm, mlsba_precision_t p, char side,
                              char uplo, char trans, char diag, int64_t m,
                              int64_t n, double alpha, const void *a,
                              int64_t lda, void *b, int64_t ldb) {
  if (id == MLSBA__CPU_KERNEL_OPENBLAS &&
      (trmm ? mlsba__openblas_trmm : mlsba__openblas_trsm)(
          p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb) == 0)
    return;
  blis_triangle(mlsba__cpu_kernel_context_of(id), 1, trmm, p, side, uplo, trans,
                diag, m, n, alpha, a, lda, b, ldb);
}

/* ---- what is said of them ---------------------------------------------- */

static int uses_openblas(void) {
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
      if (mlsba__cpu_kernel_of((mlsba_precision_t)p, (mlsba__cpu_class_t)c) ==
          MLSBA__CPU_KERNEL_OPENBLAS)
        return 1;
  return 0;
}

void mlsba__cpu_blas_library(char *buf, size_t size) {
  if (uses_openblas())
    snprintf(buf, size, "BLIS %s and %s", bli_info_get_version_str(),
             mlsba__openblas_label());
  else
    snprintf(buf, size, "BLIS %s", bli_info_get_version_str());
}

/* A kernel set as shown: BLIS's own by the name of what it detected. */
static const char *shown(mlsba_precision_t p, mlsba__cpu_class_t c) {
  const char *name = mlsba__cpu_kernel_class_name(p, c);
  return strcmp(name, "auto") == 0 ? mlsba__cpu_kernel_detected() : name;
}

/* "skx" when every class of p runs it, else the kernels most classes run
 * and the others by class: "openblas, haswell for triangles". */
static void precision_text(mlsba_precision_t p, char *buf, size_t size) {
  static const char *const plural[MLSBA__CPU_CLASSES] = {"products", "updates",
                                                         "triangles", "panels"};
  int most = 0, most_count = 0;
  for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
    int count = 0;
    for (int d = 0; d < MLSBA__CPU_CLASSES; d++)
      count += strcmp(shown(p, (mlsba__cpu_class_t)c),
                      shown(p, (mlsba__cpu_class_t)d)) == 0;
    if (count > most_count) {
      most = c;
      most_count = count;
    }
  }
  const char *main = shown(p, (mlsba__cpu_class_t)most);
  size_t len = (size_t)snprintf(buf, size, "%s", main);
  /* The others, each kernel set once with its classes. */
  for (int c = 0; c < MLSBA__CPU_CLASSES && len < size; c++) {
    const char *k = shown(p, (mlsba__cpu_class_t)c);
    int first = 1;
    for (int d = 0; d < c && first; d++)
      first = strcmp(k, shown(p, (mlsba__cpu_class_t)d)) != 0;
    if (strcmp(k, main) == 0 || !first)
      continue;
    int w = snprintf(buf + len, size - len, ", %s for %s", k, plural[c]);
    for (int d = c + 1; d < MLSBA__CPU_CLASSES && w > 0; d++)
      if (strcmp(k, shown(p, (mlsba__cpu_class_t)d)) == 0 &&
          len + (size_t)w < size)
        w += snprintf(buf + len + (size_t)w, size - len - (size_t)w, " and %s",
                      plural[d]);
    len = w > 0 ? len + (size_t)w : len;
  }
}

void mlsba__cpu_blas_describe(char *buf, size_t size) {
  char s[96], d[96], lib[96];
  precision_text(MLSBA_PRECISION_SINGLE, s, sizeof s);
  precision_text(MLSBA_PRECISION_DOUBLE, d, sizeof d);
  mlsba__cpu_blas_library(lib, sizeof lib);
  if (strcmp(s, d) == 0)
    snprintf(buf, size, "%s, %s kernels (BLIS detected: %s)", lib, s,
             mlsba__cpu_kernel_detected());
  else if (!strchr(s, ',') && !strchr(d, ','))
    snprintf(buf, size, "%s, %s kernels single, %s double (BLIS detected: %s)",
             lib, s, d, mlsba__cpu_kernel_detected());
  else
    snprintf(buf, size, "%s; single: %s; double: %s (BLIS detected: %s)", lib,
             s, d, mlsba__cpu_kernel_detected());
}
