/* C = A x B across MPI ranks on the application's own matrices, as a
 * PDGEMM user would: the application says what A and B hold (a callback
 * that fills any block of them by global indices), libmlsba decides which
 * rank computes which rectangle of C (from the speed of each rank's
 * devices), and every rank gets its rectangle of C with its place; C is
 * also gathered on rank 0. Unlike ScaLAPACK, there is no process grid or
 * block-cyclic layout to set up: the layout follows the ranks' speeds.
 *
 * Build: mpicc mpi_pdgemm.c $(pkg-config --cflags --libs mlsba-mpi)
 * Run:   mpirun -np 2 ./mpi_pdgemm [N [B [PLATFORM]]]   (1024, 128, auto) */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Small integers and halves: every product and sum is exact in double. */
static double a_at(int64_t i, int64_t j) {
  return (double)((i + 2 * j) % 7 - 3) / 4;
}
static double b_at(int64_t i, int64_t j) {
  return (double)((3 * i + j) % 5 - 2) / 2;
}

typedef struct {
  int fail_on_rank; /* a test's way of making one rank's fill fail; -1 */
  int rank;
} app_t;

/* Rows [row, row + rows) x columns [col, col + cols) of A or B, column-major
 * with leading dimension ld. */
static int fill(void *user, int which, int64_t row, int64_t col, int64_t rows,
                int64_t cols, void *dst, int64_t ld) {
  const app_t *app = user;
  if (app->rank == app->fail_on_rank)
    return 5;
  double *d = dst;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      d[j * ld + i] =
          which == 0 ? a_at(row + i, col + j) : b_at(row + i, col + j);
  return 0;
}

static double c_at(int64_t n, int64_t i, int64_t j) {
  double s = 0;
  for (int64_t k = 0; k < n; k++)
    s += a_at(i, k) * b_at(k, j);
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  app_t app = {.fail_on_rank = -1, .rank = rank};
  mlsba_mpi_multiply_opts_t opts;
  mlsba_mpi_multiply_opts_init(&opts);
  opts.n = argc > 1 ? atoll(argv[1]) : 1024;
  opts.block = argc > 2 ? atoll(argv[2]) : 128;
  if (argc > 3)
    opts.platform = argv[3]; /* default "auto": the devices of the binding */
  if (argc > 4)
    app.fail_on_rank = atoi(argv[4]);
  opts.fill = fill;
  opts.fill_user = &app;
  opts.gather = 1;
  mlsba_mpi_result_t res;
  int err = mlsba_mpi_multiply(MPI_COMM_WORLD, &opts, &res);
  if (err) {
    if (rank == 0)
      fprintf(stderr, "mpi_pdgemm: %s\n", mlsba_mpi_last_error());
    MPI_Finalize();
    return 1;
  }
  /* This rank's rectangle of C: check its corners. */
  const double *c = res.c;
  int ok = 1;
  int64_t rows = res.c_rows, cols = res.c_cols;
  for (int k = 0; c && k < 4; k++) {
    int64_t i = k & 1 ? rows - 1 : 0, j = k & 2 ? cols - 1 : 0;
    ok &= c[j * rows + i] == c_at(opts.n, res.c_row0 + i, res.c_col0 + j);
  }
  printf("rank %d: C(%lld:%lld, %lld:%lld) %s\n", rank, (long long)res.c_row0,
         (long long)(res.c_row0 + rows - 1), (long long)res.c_col0,
         (long long)(res.c_col0 + cols - 1), ok ? "right" : "WRONG");
  /* The whole C on rank 0: a diagonal of it. */
  const double *all = res.c_all;
  for (int64_t i = 0; rank == 0 && all && i < opts.n; i += 37)
    ok &= all[i * opts.n + i] == c_at(opts.n, i, i);
  if (rank == 0)
    printf("%d ranks, %u distributions, %.2f GFLOPS; gathered C %s\n",
           res.nodes, res.iterations, res.gflops,
           all ? (ok ? "is right" : "is WRONG") : "not computed (simulated)");
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  mlsba_mpi_result_free(&res);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
