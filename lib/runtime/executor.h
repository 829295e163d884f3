/* The executor, internal view: what the balancing routine reads. */
#ifndef MLSBA_RUNTIME_EXECUTOR_H
#define MLSBA_RUNTIME_EXECUTOR_H

#include <hwloc.h>

#include "../devices/device.h"
#include "mlsba.h"

struct mlsba_executor {
  const mlsba_platform_t *pl;
  mlsba__device_t *opened; /* the platform's devices opened, file order */
  hwloc_topology_t topo;
  hwloc_bitmap_t bound; /* the process's binding, when it has cores */
  int ncores;
  int virtual_only; /* every device reports virtual times */
};

#endif
