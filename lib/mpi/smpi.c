/* What differs when the layer is built for SimGrid's SMPI (smpicc defines
 * MLSBA_SMPI through the build): a simulated node's compute time becomes
 * the rank's simulated time, and its buffers are shared, so that a
 * thousand simulated ranks do not need a thousand copies of their panels.
 * The only #ifdef of the layer lives here. */
#include <stdlib.h>

#include "../core/bigmem.h"
#include "internal.h"

#ifdef MLSBA_SMPI
#include <simgrid/host.h>
#include <smpi/smpi.h>
#endif

int mlsba__mpi_is_smpi(void) {
#ifdef MLSBA_SMPI
  return 1;
#else
  return 0;
#endif
}

/* smpi_execute(seconds) would scale the time by the smpi/host-speed flag
 * over the host's speed (without the flag, a product 580 times faster);
 * the flops of this host's own speed take the seconds the device model
 * gave, whatever the flag (a rank alone on its host's core). */
void mlsba__mpi_spend(double seconds) {
#ifdef MLSBA_SMPI
  if (seconds > 0)
    smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
#else
  (void)seconds;
#endif
}

void *mlsba__mpi_alloc(size_t bytes) {
  if (bytes == 0)
    bytes = 1;
#ifdef MLSBA_SMPI
  return SMPI_SHARED_MALLOC(bytes);
#else
  return mlsba__big_alloc(bytes);
#endif
}

void mlsba__mpi_free(void *p) {
  if (p == NULL)
    return;
#ifdef MLSBA_SMPI
  SMPI_SHARED_FREE(p);
#else
  free(p);
#endif
}

/* A run that computes numbers needs private buffers even under SMPI: the
 * simulated ranks run in one process, and a buffer they shared would take
 * every rank's writes between two of one rank's reads. */
void *mlsba__mpi_alloc_if(size_t bytes, int shared) {
  return shared ? mlsba__mpi_alloc(bytes) : mlsba__big_alloc(bytes);
}

void mlsba__mpi_free_if(void *p, int shared) {
  if (shared)
    mlsba__mpi_free(p);
  else
    free(p);
}

void mlsba__mpi_bcast_start(void *buf, int count, MPI_Datatype type, int root,
                            MPI_Comm comm, mlsba__mpi_bcast_t *b) {
  *b = (mlsba__mpi_bcast_t){buf, count, root, type, comm, MPI_REQUEST_NULL};
  if (!mlsba__mpi_is_smpi())
    MPI_Ibcast(buf, count, type, root, comm, &b->req);
}

int mlsba__mpi_bcast_test(int n, mlsba__mpi_bcast_t *b) {
  int done = 1;
  for (int i = 0; i < n && !mlsba__mpi_is_smpi(); i++) {
    int flag = 1;
    MPI_Test(&b[i].req, &flag, MPI_STATUS_IGNORE);
    done &= flag;
  }
  return done;
}

void mlsba__mpi_bcast_wait(int n, mlsba__mpi_bcast_t *b) {
  for (int i = 0; i < n; i++) {
    if (mlsba__mpi_is_smpi())
      MPI_Bcast(b[i].buf, b[i].count, b[i].type, b[i].root, b[i].comm);
    else
      MPI_Wait(&b[i].req, MPI_STATUS_IGNORE);
  }
}
