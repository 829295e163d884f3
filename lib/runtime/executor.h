/* The executor, internal view: what the balancing routine reads. */
#ifndef MLSBA_RUNTIME_EXECUTOR_H
#define MLSBA_RUNTIME_EXECUTOR_H

#include <hwloc.h>
#include <pthread.h>
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
  /* One large buffer kept between calls for the layers above (the
   * factorizations' panel copies), under spare_mu: memory a process has
   * just freed comes back as fresh pages, and a fresh page costs a fault
   * at its first touch (mlsba__executor_spare_take). */
  pthread_mutex_t spare_mu;
  void *spare;
  size_t spare_bytes;
};

/* The buffer the executor keeps, where it holds at least bytes: handed
 * over (its size in *got), and no longer the executor's; else NULL. A
 * factorization's copies of its panel (2 n nb elements, 25 MiB at n =
 * 8192 in double) were allocated and freed at every call: freed, they
 * went back to the system, and the next call's first touches faulted
 * them in again, inside its steps, at 6-7 ms of system time per huge
 * page on the VM the project is measured on (17-47 ms of a call's second
 * panel, double precision, n = 4096 and 8192: benchmarks/RESULTS.md,
 * cells35f). */
void *mlsba__executor_spare_take(mlsba_executor_t *ex, size_t bytes,
                                 size_t *got);

/* Buffer p of bytes (from malloc, posix_memalign or mlsba__big_alloc)
 * given to the executor to keep: it keeps the larger of p and the one it
 * holds and frees the other; mlsba_executor_destroy() frees it. */
void mlsba__executor_spare_keep(mlsba_executor_t *ex, void *p, size_t bytes);

/* Test-only fault injection: the nth group thread started from now on (1 =
 * the next) fails to start, as pthread_create() does when the process is
 * out of threads. nth = 0 disarms. */
void mlsba__executor_inject_thread_fault(unsigned nth);

#endif
