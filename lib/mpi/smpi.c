/* What differs when the layer is built for SimGrid's SMPI (smpicc defines
 * MLSBA_SMPI through the build): a simulated node's compute time becomes
 * the rank's simulated time, and its buffers are shared, so that a
 * thousand simulated ranks do not need a thousand copies of their panels.
 * The only #ifdef of the layer lives here. */
#include <stdlib.h>

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
  return malloc(bytes);
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
