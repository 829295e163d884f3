/* Balance once, multiply many times, across MPI ranks: the multiplier
 * balances the ranks for one shape when it is made (INPA's runs, on
 * scratch data), then every run is one product of that shape with no
 * balancing, until the ranks' times drift apart (then it balances again
 * by itself, and says so). Every result says the whole call's wall time
 * beside the product's, and where the rest went.
 *
 * Build: mpicc mpi_multiplier.c $(pkg-config --cflags --libs mlsba-mpi)
 * Run:   mpirun -np 2 ./mpi_multiplier [N [RUNS [PLATFORM]]]
 *        (defaults 1000, 5, auto) */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mlsba_mpi_multiply_opts_t opts;
  mlsba_mpi_multiply_opts_init(&opts); /* A and B made from opts.seed */
  opts.n = argc > 1 ? atoll(argv[1]) : 1000;
  opts.block = 128;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  if (argc > 3)
    opts.platform = argv[3];
  mlsba_mpi_multiplier_t *mult = NULL;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &opts, &mult);
  if (!err && rank == 0) {
    const mlsba_mpi_result_t *b = mlsba_mpi_multiplier_balancing(mult);
    printf("balanced in %.3f s: %u distributions, stop %s, imbalance "
           "%.1f%%\n",
           b->wall_s, b->iterations, mlsba_mpi_stop_name(b->stop),
           100 * b->imbalance);
  }
  int ok = 1;
  for (int r = 0; !err && r < runs; r++) {
    mlsba_mpi_result_t res;
    if ((err = mlsba_mpi_multiplier_run(mult, &res)) != 0)
      break;
    ok &= res.verified != 0;
    if (rank == 0)
      printf("run %d: %.3f s in all: product %.3f s (%.1f GFLOPS), fill "
             "%.3f, check %.3f, balancing %.3f%s\n",
             r + 1, res.wall_s, res.split.product_s, res.gflops,
             res.split.fill_s, res.split.check_s, res.split.balance_s,
             res.rebalanced ? " (drifted: balanced again)" : "");
    mlsba_mpi_result_free(&res);
  }
  /* An application that knows its ranks changed (another job started on
   * one) balances again itself. */
  if (!err)
    err = mlsba_mpi_multiplier_rebalance(mult);
  if (!err && rank == 0)
    printf("balanced again in %.3f s\n",
           mlsba_mpi_multiplier_balancing(mult)->wall_s);
  if (err && rank == 0)
    fprintf(stderr, "mpi_multiplier: %s\n", mlsba_mpi_last_error());
  mlsba_mpi_multiplier_destroy(mult);
  MPI_Finalize();
  return err || !ok ? 1 : 0;
}
