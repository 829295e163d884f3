/* GEMM's CPU code: the project's CPU kernels (devices/kernels.h) on
 * the core's columns of B and C. */
#include <string.h>

#include "../../core/error.h"
#include "../../devices/kernels.h"
#include "gemm.h"

/* Columns off..off+n of C = A x B on `threads` threads. */
static void blis_columns(const mlsba_gemm_t *g, int64_t off, int64_t n,
                         unsigned threads) {
  mlsba__cpu_gemm(g->precision, 'N', 'N', g->m, n, g->k, 1.0, g->a, g->m,
                  mlsba__gemm_b_slice(g, off), g->k, 0.0,
                  mlsba__gemm_c_slice(g, off), g->m, threads);
}

int mlsba__gemm_blis(void *user, int64_t off, int64_t n) {
  blis_columns(user, off, n, 1);
  return 0;
}

int mlsba_gemm_blis(const mlsba_gemm_t *g, unsigned threads) {
  int err = mlsba__gemm_check(g);
  if (err)
    return err;
  if (threads < 1)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_gemm_blis: threads must be >= 1");
  blis_columns(g, 0, g->n, threads);
  return 0;
}

void mlsba_cpu_kernels(mlsba_cpu_kernels_t *info) {
  static char library[96];
  mlsba__cpu_blas_library(library, sizeof library);
  info->library = library;
  info->detected = mlsba__cpu_kernel_detected();
  /* BLIS's own choice ("auto" inside) by the name of what it runs. */
  info->single_kernels = mlsba__cpu_kernel_name(MLSBA_PRECISION_SINGLE);
  info->double_kernels = mlsba__cpu_kernel_name(MLSBA_PRECISION_DOUBLE);
  if (strcmp(info->single_kernels, "auto") == 0)
    info->single_kernels = info->detected;
  if (strcmp(info->double_kernels, "auto") == 0)
    info->double_kernels = info->detected;
  info->reason = mlsba__cpu_kernel_reason();
  info->single_gflops = mlsba__cpu_kernel_gflops(MLSBA_PRECISION_SINGLE);
  info->double_gflops = mlsba__cpu_kernel_gflops(MLSBA_PRECISION_DOUBLE);
  mlsba__cpu_blas_describe(info->description, sizeof info->description);
}

void mlsba_cpu_kernels_choice(const char **source, double *choice_s,
                              double *setup_s) {
  if (source)
    *source = mlsba__cpu_kernel_source();
  if (choice_s)
    *choice_s = mlsba__cpu_kernel_choice_timed_seconds();
  if (setup_s)
    *setup_s = mlsba__cpu_kernel_choice_seconds();
}

_Static_assert((int)MLSBA_CPU_CLASS_COUNT == (int)MLSBA__CPU_CLASSES &&
                   (int)MLSBA_CPU_CLASS_PANEL == (int)MLSBA__CPU_PANEL,
               "the public classes are the cores' classes");

int mlsba_cpu_class_kernels(mlsba_precision_t p, mlsba_cpu_class_t c,
                            const char **name, const char **kernels,
                            double *gflops) {
  if ((p != MLSBA_PRECISION_SINGLE && p != MLSBA_PRECISION_DOUBLE) || c < 0 ||
      c >= MLSBA_CPU_CLASS_COUNT)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_cpu_class_kernels: no such precision or class");
  mlsba__cpu_class_t k = (mlsba__cpu_class_t)c;
  if (name)
    *name = mlsba__cpu_class_name(k);
  if (kernels) {
    *kernels = mlsba__cpu_kernel_class_name(p, k);
    if (strcmp(*kernels, "auto") == 0)
      *kernels = mlsba__cpu_kernel_detected();
  }
  if (gflops)
    *gflops = mlsba__cpu_kernel_class_gflops(p, k);
  return 0;
}

static int is_trans(char t) { return t == 'N' || t == 'T'; }

/* Rows of op(X) stored for an m x n operand: its leading dimension's
 * lower bound. */
static int64_t rows_stored(char t, int64_t rows, int64_t cols) {
  int64_t r = t == 'N' ? rows : cols;
  return r > 1 ? r : 1;
}

int mlsba_cpu_gemm(mlsba_precision_t p, char transa, char transb, int64_t m,
                   int64_t n, int64_t k, double alpha, const void *a,
                   int64_t lda, const void *b, int64_t ldb, double beta,
                   void *c, int64_t ldc, unsigned threads) {
  const char *what = NULL;
  if (p != MLSBA_PRECISION_SINGLE && p != MLSBA_PRECISION_DOUBLE)
    what = "precision is neither single nor double";
  else if (!is_trans(transa) || !is_trans(transb))
    what = "transa and transb must be 'N' or 'T'";
  else if (m < 0 || n < 0 || k < 0)
    what = "m, n and k must be >= 0";
  else if (threads < 1)
    what = "threads must be >= 1";
  else if (lda < rows_stored(transa, m, k) || ldb < rows_stored(transb, k, n) ||
           ldc < (m > 1 ? m : 1))
    what = "a leading dimension is smaller than the rows stored";
  else if ((m && k && !a) || (k && n && !b) || (m && n && !c))
    what = "a matrix pointer is NULL";
  if (what)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_cpu_gemm: %s", what);
  if (m == 0 || n == 0)
    return 0;
  mlsba__cpu_gemm(p, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                  ldc, threads);
  return 0;
}
