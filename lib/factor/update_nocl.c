/* A build without OpenCL has no OpenCL devices: nothing calls this. */
#include "../core/error.h"
#include "run.h"

int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st) {
  (void)load;
  (void)st;
  return mlsba__fail(MLSBA_ENOTSUP, "factor: OpenCL is not in this build");
}
