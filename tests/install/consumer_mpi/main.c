/* An MPI application outside the tree, built against the installed
 * package: the product across the ranks of MPI_COMM_WORLD on the
 * platform file argv[1] ("%r": the rank), and libmlsba's own calls. */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mlsba_mpi_multiply_opts_t opts;
  mlsba_mpi_multiply_opts_init(&opts);
  opts.platform = argc > 1 ? argv[1] : "sim%r.json";
  opts.n = 512;
  opts.block = 64;
  mlsba_mpi_result_t res;
  int err = mlsba_mpi_multiply(MPI_COMM_WORLD, &opts, &res);
  if (err == 0 && rank == 0)
    printf("libmlsba %s across %d ranks: %u iterations, stop %s\n",
           mlsba_version_string(), res.nodes, res.iterations,
           mlsba_mpi_stop_name(res.stop));
  else if (err && rank == 0)
    fprintf(stderr, "consumer_mpi: %s\n", mlsba_mpi_last_error());
  if (err == 0)
    mlsba_mpi_result_free(&res);
  MPI_Finalize();
  return err == 0 ? 0 : 1;
}
