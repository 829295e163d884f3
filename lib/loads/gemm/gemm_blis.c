/* GEMM's CPU code: BLIS on the core's columns of B and C. The thread count
 * goes through BLIS's expert interface, a runtime object per call, so it
 * cannot fight a global setting or other threads that call BLIS at the
 * same time. */
#include <blis.h>

#include "../../core/error.h"
#include "gemm.h"

/* Columns off..off+n of C = A x B with BLIS on `threads` threads. */
static void blis_columns(const mlsba_gemm_t *g, int64_t off, int64_t n,
                         unsigned threads) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)threads, &rntm);
  dim_t m = (dim_t)g->m, k = (dim_t)g->k;
  void *b = (void *)mlsba__gemm_b_slice(g, off);
  void *cs = mlsba__gemm_c_slice(g, off);
  if (g->precision == MLSBA_PRECISION_DOUBLE) {
    double one = 1, zero = 0;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, (dim_t)n, k, &one,
                 (double *)g->a, 1, m, (double *)b, 1, k, &zero, (double *)cs,
                 1, m, NULL, &rntm);
  } else {
    float one = 1, zero = 0;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, (dim_t)n, k, &one,
                 (float *)g->a, 1, m, (float *)b, 1, k, &zero, (float *)cs, 1,
                 m, NULL, &rntm);
  }
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
