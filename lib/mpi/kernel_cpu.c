/* The node kernel on a CPU core: the GEMM with beta = 1 on the core's columns
 * (0 on a product's first step when it overwrites C'),
 * on the calling core alone (the executor pins it), with the kernels
 * every core of the project runs. */
#include "../devices/kernels.h"
#include "kernel.h"

int mlsba__mpi_kernel_cpu(void *user, int64_t first, int64_t count) {
  const mlsba__mpi_kernel_t *k = user;
  /* C' on the host is the core's own: there is nothing to place or give
   * back. */
  if (k->run == MLSBA__MPI_RUN_PLACE || k->run == MLSBA__MPI_RUN_FLUSH)
    return 0;
  size_t elem =
      k->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  double beta = k->run == MLSBA__MPI_RUN_STEP && k->overwrite ? 0.0 : 1.0;
  mlsba__cpu_gemm(k->prec, 'N', 'N', k->bm, count, k->kb, 1.0, k->a, k->bm,
                  (const char *)k->bp + first * k->kb * elem, k->kb, beta,
                  (char *)k->c + first * k->bm * elem, k->bm, 1);
  return 0;
}
