/* The node kernel on a CPU core: BLIS with beta = 1 on the core's columns,
 * on the calling core alone (the executor pins it). */
#include <blis.h>

#include "kernel.h"

int mlsba__mpi_kernel_cpu(void *user, int64_t first, int64_t count) {
  const mlsba__mpi_kernel_t *k = user;
  /* C' on the host is the core's own: there is nothing to place or give
   * back. */
  if (k->run == MLSBA__MPI_RUN_PLACE || k->run == MLSBA__MPI_RUN_FLUSH)
    return 0;
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  dim_t m = (dim_t)k->bm, kk = (dim_t)k->b;
  if (k->prec == MLSBA_PRECISION_DOUBLE) {
    double one = 1;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, (dim_t)count, kk,
                 &one, (double *)k->a, 1, m, (double *)k->bp + first * kk, 1,
                 kk, &one, (double *)k->c + first * m, 1, m, NULL, &rntm);
  } else {
    float one = 1;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, (dim_t)count, kk,
                 &one, (float *)k->a, 1, m, (float *)k->bp + first * kk, 1, kk,
                 &one, (float *)k->c + first * m, 1, m, NULL, &rntm);
  }
  return 0;
}
