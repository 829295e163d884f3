/* The executor, internal view: what the balancing routine reads. */
#ifndef MLSBA_RUNTIME_EXECUTOR_H
#define MLSBA_RUNTIME_EXECUTOR_H

#include <hwloc.h>
#include <stdatomic.h>

#include "../devices/device.h"
#include "mlsba.h"

struct mlsba_executor {
  const mlsba_platform_t *pl;
  mlsba__device_t *opened; /* the platform's devices opened, file order */
  hwloc_topology_t topo;
  hwloc_bitmap_t bound; /* the process's binding, when it has cores */
  int ncores;
  int virtual_only; /* every device reports virtual times */
  /* The groups' threads: started by the first run that needs them, kept
   * (and kept pinned) until the executor is destroyed. */
  struct mlsba__group_pool *pool;
  atomic_int running; /* a run is in flight */
};

/* Test-only fault injection: the nth group thread started from now on (1 =
 * the next) fails to start, as pthread_create() does when the process is
 * out of threads. nth = 0 disarms. */
void mlsba__executor_inject_thread_fault(unsigned nth);

#endif
