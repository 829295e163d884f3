/* The load object, internal view: what the devices and the balancer read
 * of a load. A load is work of `units` equal units; a share is the part of
 * them one device computes. */
#ifndef MLSBA_CORE_LOAD_H
#define MLSBA_CORE_LOAD_H

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
  /* A copy the load owns (mlsba__load_keep), freed with it. */
  void *kept;
  /* Bytes one unit moves through a device's host link (0: unknown); a
   * simulated device with a link adds that transfer to its time. */
  double unit_bytes;
  /* The number messages give unit 0: a load that is a window onto a
   * larger one (an application's load across MPI ranks, whose callbacks
   * receive global units) names the units the application knows. */
  int64_t first_unit;
};

/* Sets the file-name tag explicitly (built-in loads keep their historic
 * file names). */
void mlsba__load_set_tag(mlsba_load_t *load, const char *tag);

/* Copies size bytes of data into memory the load owns and frees with it
 * (the built-in loads keep their problem this way); NULL when out of
 * memory. At most one copy per load. */
void *mlsba__load_keep(mlsba_load_t *load, const void *data, size_t size);

/* A new load of units units named name that keeps a copy of size bytes of
 * data (a built-in load's problem), in *out and *copy; on failure nothing
 * is left and the error names caller. */
int mlsba__load_create_kept(const char *caller, const char *name, int64_t units,
                            const void *data, size_t size, mlsba_load_t **out,
                            void **copy);

#endif
