/* GEMM's CPU code: the project's CPU kernels (devices/cpu/cpu_blas.h) on
 * the core's columns of B and C. */
#include "../../core/error.h"
#include "../../devices/cpu/cpu_blas.h"
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
