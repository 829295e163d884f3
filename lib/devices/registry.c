/* The backends, listed (platform files name them by "type"), and the
 * stand-ins for OpenCL's entry points in a build without OpenCL. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "backend.h"

static const mlsba__backend_t *const backends[] = {
    &mlsba__sim_backend, &mlsba__cpu_backend, &mlsba__opencl_backend};

const mlsba__backend_t *mlsba__backend_find(const char *name) {
  for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
    if (strcmp(backends[i]->name, name) == 0)
      return backends[i];
  return NULL;
}

#ifndef MLSBA_HAVE_OPENCL
int mlsba__opencl_device_create(const char *name, int platform, int device,
                                int64_t mem_limit_mb, mlsba__device_t *d) {
  (void)platform;
  (void)device;
  (void)mem_limit_mb;
  (void)d;
  return mlsba__fail(MLSBA_ENOTSUP,
                     "%s: this libmlsba was built without OpenCL "
                     "(MLSBA_WITH_OPENCL=OFF)",
                     name);
}

int mlsba__opencl_enumerate(mlsba__cl_device_desc_t **list, size_t *count) {
  *list = NULL;
  *count = 0;
  return 0;
}

void mlsba__opencl_inject_fault(unsigned nth, int code) {
  (void)nth;
  (void)code;
}

/* Declared in <mlsba/opencl.h>, which needs the OpenCL headers. */
MLSBA_EXTERN int mlsba_load_set_opencl(mlsba_load_t *load,
                                       const struct mlsba_opencl_ops *ops,
                                       void *user);
MLSBA_EXTERN int mlsba_load_set_opencl(mlsba_load_t *load,
                                       const struct mlsba_opencl_ops *ops,
                                       void *user) {
  (void)load;
  (void)ops;
  (void)user;
  return mlsba__fail(MLSBA_ENOTSUP, "this libmlsba was built without OpenCL "
                                    "(MLSBA_WITH_OPENCL=OFF)");
}
#endif
