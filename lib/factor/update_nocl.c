/* A build without OpenCL has no OpenCL devices: nothing calls these. */
#include "../core/error.h"
#include "run.h"

int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st) {
  (void)load;
  (void)st;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}

int mlsba__factor_cl_resident(const mlsba__factor_step_t *st, size_t i,
                              int64_t *lo, int64_t *hi) {
  (void)st;
  (void)i;
  (void)lo;
  (void)hi;
  return 0;
}

int mlsba__factor_cl_fetch(mlsba__factor_run_t *F, size_t i, int64_t c0,
                           int64_t c1) {
  (void)F;
  (void)i;
  (void)c0;
  (void)c1;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}

int mlsba__factor_cl_fetch_rows(mlsba__factor_run_t *F, size_t i, int64_t r0,
                                int64_t r1) {
  (void)F;
  (void)i;
  (void)r0;
  (void)r1;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}

void mlsba__factor_cl_release(mlsba__factor_run_t *F, size_t i) {
  (void)F;
  (void)i;
}
