/* Measures every rank's network link with mlsba_mpi_measure_links() and
 * prints, on rank 0, one line per rank: "rank R latency L bandwidth B".
 * Run by test_mpi under mpirun. */
#include <stdio.h>
#include <stdlib.h>

#include "mlsba/mpi.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mlsba_link_t *links = calloc((size_t)size, sizeof *links);
  int err = links ? mlsba_mpi_measure_links(MPI_COMM_WORLD, 0, links) : 1;
  if (err && rank == 0)
    fprintf(stderr, "mpi_links_probe: %s\n", mlsba_mpi_last_error());
  for (int r = 0; !err && rank == 0 && r < size; r++)
    printf("rank %d latency %.6g bandwidth %.6g\n", r, links[r].latency,
           links[r].bandwidth);
  free(links);
  MPI_Finalize();
  return err ? 1 : 0;
}
