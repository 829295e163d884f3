/* The divisible-load interface, internal view: what the devices and the
 * balancer read of a load. */
#ifndef MLSBA_RUNTIME_KERNEL_H
#define MLSBA_RUNTIME_KERNEL_H

#include "mlsba.h"

struct mlsba_opencl_ops; /* <mlsba/opencl.h>; only the opencl backend looks */

struct mlsba_load {
  char name[64];   /* the kernel, in model keys and file names */
  char shape[256]; /* the rest of the model key */
  char tag[192];   /* file-name part: name and shape, safe characters */
  int64_t units;
  mlsba_cpu_fn cpu;
  void *cpu_user;
  const struct mlsba_opencl_ops *cl;
  void *cl_user;
  /* Identifies the load to the devices' per-load state, which a pointer
   * cannot (a freed load's address comes back). */
  unsigned long serial;
  /* Built-in loads keep a copy of their problem here. */
  union {
    mlsba_gemm_t gemm;
    mlsba_mandelbrot_t mandelbrot;
  } builtin;
};

/* Sets the file-name tag explicitly (built-in loads keep their historic
 * file names). */
void mlsba__load_set_tag(mlsba_load_t *load, const char *tag);

#endif
