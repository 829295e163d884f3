/* Each rank's network link, measured as seed 001 measured its cluster's
 * (§5.2.4): a ping-pong between the root and every other rank over
 * messages of 1 KiB to 16 MiB, the fastest of seven round trips at each
 * size halved (the fastest: a busy machine only ever adds time), and a
 * least-squares line through them (mlsba_link_fit). Under SMPI the same calls
 * time the simulated platform's links. */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "mlsba/mpi.h"

enum { LINK_SIZES = 15, LINK_REPS = 7 };

static size_t link_size(int k) { return (size_t)1024 << k; }

/* The root's side with rank peer: one-way times per size. */
static void ping(MPI_Comm comm, int peer, char *buf, double *bytes,
                 double *seconds) {
  for (int k = 0; k < LINK_SIZES; k++) {
    double best = INFINITY;
    int n = (int)link_size(k);
    for (int r = 0; r < LINK_REPS; r++) {
      double t0 = MPI_Wtime();
      MPI_Send(buf, n, MPI_CHAR, peer, 0, comm);
      MPI_Recv(buf, n, MPI_CHAR, peer, 0, comm, MPI_STATUS_IGNORE);
      double t = (MPI_Wtime() - t0) / 2;
      best = t < best ? t : best;
    }
    bytes[k] = (double)n;
    seconds[k] = best > 0 ? best : 1e-12;
  }
}

static void pong(MPI_Comm comm, int root, char *buf) {
  for (int k = 0; k < LINK_SIZES; k++)
    for (int r = 0; r < LINK_REPS; r++) {
      int n = (int)link_size(k);
      MPI_Recv(buf, n, MPI_CHAR, root, 0, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, n, MPI_CHAR, root, 0, comm);
    }
}

int mlsba_mpi_measure_links(MPI_Comm comm, int root, mlsba_link_t links[]) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int err = 0;
  if (links == NULL || root < 0 || root >= size)
    err = mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_measure_links: %s",
                      links == NULL ? "links is NULL"
                                    : "root is not a rank of the communicator");
  char *buf = err ? NULL : calloc(1, link_size(LINK_SIZES - 1));
  if (!err && buf == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_measure_links: out of memory");
  /* Every rank checks its arguments before any message. */
  int all;
  MPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all != 0) {
    free(buf);
    return err ? err
               : mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_measure_links: another "
                                           "rank's arguments are wrong");
  }
  double *flat = malloc(2 * (size_t)size * sizeof *flat);
  err = flat ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, comm);
  for (int peer = 0; !err && peer < size; peer++) {
    if (peer == root)
      continue;
    if (rank == root) {
      double bytes[LINK_SIZES], seconds[LINK_SIZES];
      ping(comm, peer, buf, bytes, seconds);
      mlsba_link_t l = {0, 0};
      if (mlsba_link_fit(bytes, seconds, LINK_SIZES, &l) != 0)
        l = (mlsba_link_t){0, 0}; /* times that did not grow: unknown */
      flat[2 * peer] = l.latency;
      flat[2 * peer + 1] = l.bandwidth;
    } else if (rank == peer) {
      pong(comm, root, buf);
    }
  }
  if (!err) {
    if (rank == root)
      flat[2 * root] = flat[2 * root + 1] = 0;
    MPI_Bcast(flat, 2 * size, MPI_DOUBLE, root, comm);
    for (int r = 0; r < size; r++)
      links[r] = (mlsba_link_t){flat[2 * r], flat[2 * r + 1]};
  }
  free(flat);
  free(buf);
  return err;
}
