/* One CPU core: the thread that drives the core's group is pinned to it
 * (by the executor, with hwloc) and calls BLIS single-threaded on its
 * slice. The thread count goes through BLIS's expert interface, a runtime
 * object per call, so it cannot fight a global setting or other threads
 * that call BLIS at the same time. */
#include <blis.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../runtime/gemm.h"
#include "../device.h"

typedef struct {
  double done; /* completion time of the last share */
  double t0;
} cpu_t;

static int cpu_start(mlsba__device_t *d, const mlsba_gemm_t *g, int64_t off,
                     int64_t n, double t0) {
  cpu_t *c = d->state;
  c->t0 = t0;
  if (n > 0) {
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
  }
  c->done = n > 0 ? mlsba__now() : t0;
  return 0;
}

static int cpu_finish(mlsba__device_t *d, double *seconds) {
  cpu_t *c = d->state;
  *seconds = c->done - c->t0;
  return 0;
}

static void cpu_destroy(mlsba__device_t *d) { free(d->state); }

static const mlsba__device_ops_t cpu_ops = {
    .kind = "cpu",
    .max_load = NULL,
    .start = cpu_start,
    .finish = cpu_finish,
    .destroy = cpu_destroy,
};

int mlsba__cpu_device_create(const char *name, int core, mlsba__device_t *d) {
  (void)core; /* pinning is the executor's: it owns the threads */
  d->ops = &cpu_ops;
  d->name = name;
  d->state = calloc(1, sizeof(cpu_t));
  return d->state ? 0 : mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", name);
}
