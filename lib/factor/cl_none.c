/* A build without OpenCL has no OpenCL device: the operations' tables
 * name OpenCL halves that nothing reads, and nothing calls these. */
#include "../core/error.h"
#include "driver.h"

/* The tables' type, as this build needs it: never read. */
struct mlsba__factor_cl_ops {
  char none;
};

const mlsba__factor_cl_ops_t mlsba__factor_cl_lu = {0};
const mlsba__factor_cl_ops_t mlsba__factor_cl_chol = {0};
const mlsba__factor_cl_ops_t mlsba__factor_cl_qr = {0};

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

int mlsba__factor_cl_fetch(mlsba__factor_residency_t *res,
                           const mlsba__factor_problem_t *P, size_t i,
                           int64_t c0, int64_t c1) {
  (void)res;
  (void)P;
  (void)i;
  (void)c0;
  (void)c1;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}

int mlsba__factor_cl_fetch_rows(mlsba__factor_residency_t *res,
                                const mlsba__factor_problem_t *P, size_t i,
                                int64_t r0, int64_t r1) {
  (void)res;
  (void)P;
  (void)i;
  (void)r0;
  (void)r1;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}

void mlsba__factor_cl_release(mlsba__factor_residency_t *res, size_t i) {
  (void)res;
  (void)i;
}
