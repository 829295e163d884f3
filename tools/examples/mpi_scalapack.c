/* A ScaLAPACK program switching from PDGEMM to libmlsba in a few lines:
 * A, B and C stay in the program's 2-D block-cyclic layout (descriptors
 * as DESCINIT makes them, local arrays of its blocks, any MB, NB and
 * process grid); libmlsba describes them (mlsba_mpi_matrix_scalapack),
 * moves A and B to its own layout, which follows the ranks' speeds,
 * multiplies, and moves C back into the program's descriptor. The
 * multiplier balances once for the shape; every call after that is a
 * product and its moves.
 *
 *   PDGEMM("T", "N", M, N, K, 1.0, A, 1, 1, DESCA, B, 1, 1, DESCB,
 *          0.5, C, 1, 1, DESCC)
 * becomes
 *   mlsba_mpi_multiplier_run_dist(mult, da, A, db, B, dc, C, &result)
 *
 * Build: mpicc mpi_scalapack.c $(pkg-config --cflags --libs mlsba-mpi)
 * Run:   mpirun -np 2 ./mpi_scalapack [M N K [MB NB [PLATFORM]]]
 *        (defaults 600 400 500, 32 48, auto) */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* NUMROC: the rows (or columns) of an n-long dimension in blocks of nb
 * that process p of np holds (block 0 on process 0). */
static int numroc(int n, int nb, int p, int np) {
  int blocks = n / nb, num = blocks / np * nb, extra = blocks % np;
  return num + (p < extra ? nb : p == extra ? n % nb : 0);
}

static double element(int which, int64_t i, int64_t j) {
  return which == 0   ? (double)((i + 2 * j) % 7 - 3) / 4
         : which == 1 ? (double)((3 * i + j) % 5 - 2) / 2
                      : (double)((i + j) % 3 - 1) / 4;
}

/* desc[9] of an m x n matrix on a p x q grid (row-major ranks) and this
 * rank's local array, its own blocks holding matrix `which`. */
static double *scalapack_array(int which, int m, int n, int mb, int nb, int p,
                               int q, int rank, int desc[9]) {
  int myrow = rank / q, mycol = rank % q;
  int lr = numroc(m, mb, myrow, p), lc = numroc(n, nb, mycol, q);
  int d[9] = {1, 0, m, n, mb, nb, 0, 0, lr > 1 ? lr : 1};
  for (int i = 0; i < 9; i++)
    desc[i] = d[i];
  double *x = malloc((size_t)(d[8] * (lc > 0 ? lc : 1)) * sizeof *x);
  for (int j = 0; j < lc; j++) /* local (i, j) -> global, as INDXL2G */
    for (int i = 0; i < lr; i++)
      x[j * d[8] + i] = element(which, (i / mb * p + myrow) * mb + i % mb,
                                (j / nb * q + mycol) * nb + j % nb);
  return x;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int m = argc > 3 ? atoi(argv[1]) : 600, n = argc > 3 ? atoi(argv[2]) : 400;
  int k = argc > 3 ? atoi(argv[3]) : 500;
  int mb = argc > 5 ? atoi(argv[4]) : 32, nb = argc > 5 ? atoi(argv[5]) : 48;
  int p = 1, q = size; /* a 1 x size grid, ranks in row-major order */
  int da[9], db[9], dc[9];
  double *a = scalapack_array(0, k, m, mb, nb, p, q, rank, da); /* A^T */
  double *b = scalapack_array(1, k, n, mb, nb, p, q, rank, db);
  double *c = scalapack_array(2, m, n, mb, nb, p, q, rank, dc);
  /* The same sizes, transposes, alpha and beta as the PDGEMM call. */
  mlsba_mpi_multiply_opts_t opts;
  mlsba_mpi_multiply_opts_init(&opts);
  opts.m = m;
  opts.n = n;
  opts.k = k;
  opts.transa = 'T';
  opts.alpha = 1.0;
  opts.beta = 0.5;
  opts.block = 64; /* the library's own blocks, not the program's */
  if (argc > 6)
    opts.platform = argv[6];
  mlsba_mpi_matrix_t *xa = NULL, *xb = NULL, *xc = NULL;
  mlsba_mpi_multiplier_t *mult = NULL;
  int err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, da, p, q,
                                       MLSBA_MPI_ROW_MAJOR, &xa);
  if (!err)
    err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, db, p, q,
                                     MLSBA_MPI_ROW_MAJOR, &xb);
  if (!err)
    err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, dc, p, q,
                                     MLSBA_MPI_ROW_MAJOR, &xc);
  if (!err)
    err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &opts, &mult);
  /* Two calls, as a time-stepping program would make: C = A^T B + C / 2,
   * twice. */
  for (int call = 0; !err && call < 2; call++) {
    mlsba_mpi_result_t res;
    err = mlsba_mpi_multiplier_run_dist(mult, xa, a, xb, b, xc, c, &res);
    if (!err && rank == 0)
      printf("call %d: %.3f s in all: moves %.3f s, product %.3f s; "
             "checked %s\n",
             call + 1, res.wall_s, res.split.move_s, res.split.product_s,
             res.verified == 1 ? "yes" : "no");
    if (!err)
      mlsba_mpi_result_free(&res);
  }
  /* C in the program's layout: C(i, j) = 1.5 (A^T B)(i, j) + C0(i, j) / 4
   * after the two calls; check this rank's first local element. */
  int ok = err == 0;
  if (!err && numroc(n, nb, rank % q, q) > 0 && numroc(m, mb, 0, p) > 0) {
    int64_t gj = (int64_t)(rank % q) * nb; /* its first column */
    double s = 0;
    for (int64_t l = 0; l < k; l++)
      s += element(0, l, 0) * element(1, l, gj);
    ok = c[0] == 1.5 * s + element(2, 0, gj) / 4;
  }
  if (err && rank == 0)
    fprintf(stderr, "mpi_scalapack: %s\n", mlsba_mpi_last_error());
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    printf("C in the program's own descriptor: %s\n",
           all_ok ? "right" : "WRONG");
  mlsba_mpi_multiplier_destroy(mult);
  mlsba_mpi_matrix_destroy(xa);
  mlsba_mpi_matrix_destroy(xb);
  mlsba_mpi_matrix_destroy(xc);
  free(a);
  free(b);
  free(c);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
