/* Which backends this build has: the one place outside the backend folders
 * that knows whether OpenCL was built. */
#include <stdlib.h>

#include "../core/error.h"
#include "device.h"

int mlsba__device_open(const struct mlsba__pdevice_desc *desc,
                       mlsba__device_t *d) {
  switch (desc->type) {
  case MLSBA_DEVICE_SIM:
    return mlsba__sim_device_create(desc, d);
  case MLSBA_DEVICE_CPU:
    return mlsba__cpu_device_create(desc->name, desc->core, d);
  case MLSBA_DEVICE_OPENCL:
#ifdef MLSBA_HAVE_OPENCL
    return mlsba__opencl_device_create(desc->name, desc->cl_platform,
                                       desc->cl_device, desc->mem_limit_mb, d);
#else
    return mlsba__fail(MLSBA_ENOTSUP,
                       "%s: this libmlsba was built without OpenCL "
                       "(MLSBA_WITH_OPENCL=OFF)",
                       desc->name);
#endif
  }
  return mlsba__fail(MLSBA_EINVAL, "%s: unknown device type %d", desc->name,
                     (int)desc->type);
}

#ifndef MLSBA_HAVE_OPENCL
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
                          const struct mlsba_opencl_ops *ops, void *user);
MLSBA_EXTERN int mlsba_load_set_opencl(mlsba_load_t *load,
                          const struct mlsba_opencl_ops *ops, void *user) {
  (void)load;
  (void)ops;
  (void)user;
  return mlsba__fail(MLSBA_ENOTSUP, "this libmlsba was built without OpenCL "
                                    "(MLSBA_WITH_OPENCL=OFF)");
}
#endif
