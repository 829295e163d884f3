/* Errors are collective: a rank that fails (a missing platform file, a
 * device error) must not leave the others waiting in a message that never
 * comes. Every rank reports its status at the same points; all learn the
 * first failure, with its rank and message, and stop together. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "internal.h"

int mlsba__mpi_agree(MPI_Comm comm, int err) {
  /* The message is copied before the first MPI call: under smpirun the
   * simulated ranks are threads of one process that switch in MPI calls,
   * and may share the thread-local buffer it lives in. */
  char msg[400] = "";
  if (err)
    snprintf(msg, sizeof msg, "%s", mlsba_last_error());
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = err ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size)
    return 0;
  /* The failing rank's code and message, as it wrote them. */
  int code = err;
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
  return mlsba__fail(code, "rank %d: %s", first, msg);
}
