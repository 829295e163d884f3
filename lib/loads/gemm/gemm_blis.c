/* GEMM's CPU code: BLIS on the core's columns of B and C. The thread count
 * goes through BLIS's expert interface, a runtime object per call, so it
 * cannot fight a global setting or other threads that call BLIS at the
 * same time. */
#include <blis.h>

#include "gemm.h"

int mlsba__gemm_blis(void *user, int64_t off, int64_t n) {
  const mlsba_gemm_t *g = user;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
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
  return 0;
}
