/* Balance once, run many times, across MPI ranks: every time step of an
 * application updates N cells, each rank its share on its devices. The
 * divider balances the ranks at the start, runs every step with those
 * shares, and balances them again by itself when their times drift apart
 * (try loading one node while it runs); then the shares may change, and
 * the application, which owns its data, moves cells to their new rank.
 *
 * Build: mpicc mpi_divider.c $(pkg-config --cflags --libs mlsba-mpi)
 * Run:   mpirun -np 2 ./mpi_divider */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 18, STEPS = 20 };

/* Each step: cell i grows by a little work; cells are global. */
static int step(void *user, int64_t first, int64_t count) {
  float *cell = user;
  for (int64_t i = first; i < first + count; i++)
    for (int k = 0; k < 200; k++)
      cell[i] = cell[i] * 0.999f + 0.001f;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  float *cell = calloc(N, sizeof *cell);
  mlsba_load_t *load = NULL;
  if (cell == NULL || mlsba_load_create("cells", N, &load) ||
      mlsba_load_set_cpu(load, step, cell))
    MPI_Abort(MPI_COMM_WORLD, 1);
  mlsba_mpi_divide_opts_t opts;
  mlsba_mpi_divide_opts_init(&opts);
  mlsba_mpi_divider_t *d = NULL;
  int err = mlsba_mpi_divider_create(MPI_COMM_WORLD, load, &opts, &d);
  for (int s = 1; !err && s < STEPS; s++) {
    int64_t before = mlsba_mpi_divider_result(d)->count;
    mlsba_run_info_t info;
    err = mlsba_mpi_divider_run(d, &info);
    const mlsba_mpi_divide_result_t *r =
        err ? NULL : mlsba_mpi_divider_result(d);
    if (r && info.rebalanced && rank == 0)
      printf("step %d: re-balanced, rank 0 now has %lld cells (had %lld)\n", s,
             (long long)r->count, (long long)before);
    else if (r && rank == 0 && s % 5 == 0)
      printf("step %d: %.4f s, imbalance %.1f%%\n", s, info.makespan,
             100 * info.imbalance);
    /* Here an application whose cells live on their rank would send the
     * cells whose rank changed. */
  }
  if (err && rank == 0)
    fprintf(stderr, "mpi_divider: %s\n", mlsba_mpi_last_error());
  mlsba_mpi_divider_destroy(d);
  mlsba_load_destroy(load);
  free(cell);
  MPI_Finalize();
  return err ? 1 : 0;
}
