/* LU and Cholesky across ranks as an application drives them
 * (test_mpi_factor starts this program under mpirun with one case):
 *   lu LAYOUT          getrf on many shapes (odd N, N below the block, N
 *                      not a multiple of it, more ranks than block
 *                      columns, M x N both ways), each rank filling its own
 *                      blocks: the factors gathered on rank 0 equal
 *                      LAPACK's (ipiv identical, scaled residual < 16),
 *                      info LAPACK's on every rank for a singular matrix,
 *                      and getrs's scaled residual (HPL's) < 16;
 *   chol LAYOUT        potrf and potrs the same way, and a matrix that is
 *                      not positive definite giving LAPACK's info;
 *   bad R              rank R alone passes a bad argument (to getrf,
 *                      potrf, the layout's swap_s or alike): every rank
 *                      returns MLSBA_EINVAL with the same message;
 *   scalapack          a matrix in a ScaLAPACK descriptor's layout moved to
 *                      the factorization's layout, factorized, moved back:
 *                      the factors equal LAPACK's.
 *   counts             seed 003's eqs. 1-2 (processes a node runs)
 *                      against a brute force, and the factorizations'
 *                      default block (mlsba_mpi_factor_block).
 * LAYOUT is homogeneous, fpm (every rank a node model of its own speed,
 * rank r r + 1 times as fast as rank 0 on large areas; LU's walks count
 * a cost a block column of width, swap_s; alike 10% and kin_alike 25%,
 * which pool none of them), constant, or
 * process-scaling (ranks 1 and 2 one node's processes: the ownership
 * checked against eq. 3's grid and Algorithm 1's order). Rank 0 prints one
 * line per case ("ok ..." or "WRONG ..."); the exit status is 0 when every
 * rank found everything right. */
#include <math.h>
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/rank_matrix.h"

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

static int rank, nranks;

/* The test matrices, from their global indices alone (every rank makes
 * the same): a pseudo-random element in [-1, 1) (rank_noise); symmetric
 * and diagonally dominant (so positive definite) for Cholesky. */
typedef enum { GENERAL, SINGULAR, ZERO_FIRST, TIES, SPD, NOT_SPD } kind_t;

/* TIES: columns TIE1 and TIE2 (the last rows of blocks of 8, so that the
 * tied rows below start in the next block, another rank's where a node
 * column has several) meet their pivot search untouched by the steps
 * before: 1/2 on the diagonal and +-1 on every row below, so the pivot is
 * a tie among rows of every rank of the node column, which idamax (and
 * so LAPACK) resolves as the first, the diagonal's next row. The rows
 * from TIE1 (TIE2) on are zero left of it, so the steps before leave
 * them exactly as they are: their multipliers are zeros. */
enum { TIE1 = 7, TIE2 = 31 };

static double tie_elem(int64_t i, int64_t j) {
  int64_t c = i >= TIE2 ? TIE2 : i >= TIE1 ? TIE1 : -1;
  if (c < 0 || j > c)
    return rank_noise(i, j);
  if (j < c)
    return 0.0;
  return i == c ? 0.5 : rank_noise(i, -7) < 0 ? -1.0 : 1.0;
}

static double elem(kind_t kind, int64_t n, int64_t i, int64_t j) {
  switch (kind) {
  case SINGULAR: /* column n / 2 is zero: U's diagonal there is exactly 0 */
    return j == n / 2 ? 0.0 : rank_noise(i, j);
  case ZERO_FIRST: /* the first column is zero: info 1, no interchange */
    return j == 0 ? 0.0 : rank_noise(i, j);
  case TIES:
    return tie_elem(i, j);
  case SPD:
  case NOT_SPD: {
    double v = rank_noise(i < j ? i : j, i < j ? j : i);
    if (i == j)
      v = kind == NOT_SPD && i == n - n / 3 - 1 ? -1.0 : (double)n + 1.0;
    return v;
  }
  default:
    return rank_noise(i, j);
  }
}

/* The model of rank r: time of an update of x blocks; r + 1 times rank
 * 0's speed on large areas, every rank slower on small ones. */
static mlsba_model_t *node_model(int r) {
  mlsba_model_t *m = NULL;
  if (mlsba_model_create(&m))
    return NULL;
  mlsba_model_set_point(m, 1, 50.0);
  mlsba_model_set_point(m, 16, 400.0 * (r + 1));
  mlsba_model_set_point(m, 1e6, 1000.0 * (r + 1));
  return m;
}

/* Process scaling's nodes: ranks 1 and 2 share node 2 (a "GPU node" of
 * two processes, not starting at rank 0), every other rank is a node of
 * its own. */
static int node_of(int r) { return r == 1 || r == 2 ? 2 : r + 1; }

static mlsba_mpi_matrix_t *layout_of(const char *name, int64_t m, int64_t n,
                                     int64_t nb, int lower) {
  /* LU's interchanges and U counted in the walks (fpm, constant): a
   * cost a block column of width of half a block's update on rank 0's
   * large areas, twice that on every other rank. */
  mlsba_mpi_factor_layout_opts_t o = {
      .block = nb, .lower = lower, .swap_s = lower ? 0 : 5e-4 * (1 + rank % 2)};
  /* Ranks alike within 10%, or of the same hardware (the ranks' bindings)
   * within 25%, walk with their group's model: none here (the models are
   * a third apart and more), so every rank keeps its own. */
  o.alike = 0.1;
  o.kin_alike = 0.25;
  if (mlsba_mpi_layout_from_name(name, &o.layout))
    return NULL;
  o.node = node_of(rank);
  mlsba_model_t *model = node_model(rank);
  o.model = model;
  mlsba_mpi_matrix_t *d = NULL;
  int err = mlsba_mpi_factor_matrix(MPI_COMM_WORLD, m, n, &o, &d);
  mlsba_model_destroy(model);
  if (err && rank == 0)
    printf("WRONG layout %s %lldx%lld/%lld: %s\n", name, (long long)m,
           (long long)n, (long long)nb, mlsba_mpi_last_error());
  return d;
}

/* kind's n-column matrix, as an element function for rank_matrix.h. */
typedef struct {
  kind_t kind;
  int64_t n;
} kind_matrix_t;

static double kind_elem(const void *user, int64_t i, int64_t j) {
  const kind_matrix_t *k = user;
  return elem(k->kind, k->n, i, j);
}

/* This rank's local array of d, its own blocks filled from kind. */
static double *fill_own(const mlsba_mpi_matrix_t *d, kind_t kind) {
  kind_matrix_t k = {kind, 0};
  mlsba_mpi_matrix_size(d, NULL, &k.n, NULL, NULL);
  return rank_fill_own(d, kind_elem, &k);
}

/* kind's m x n matrix whole (column-major). */
static double *whole(kind_t kind, int64_t m, int64_t n) {
  kind_matrix_t k = {kind, n};
  return rank_whole(m, n, kind_elem, &k);
}

/* HPL's scaled residual of a solve: ||A x - b||_inf / (eps (||A||_inf
 * ||x||_inf + ||b||_inf) n). */
static double solve_residual(const double *a, int64_t n, const double *x,
                             const double *b, int64_t nrhs) {
  double worst = 0, anorm = 0;
  for (int64_t i = 0; i < n; i++) {
    double s = 0;
    for (int64_t j = 0; j < n; j++)
      s += fabs(a[j * n + i]);
    anorm = s > anorm ? s : anorm;
  }
  for (int64_t r = 0; r < nrhs; r++) {
    double rn = 0, xn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++) {
      double s = -b[r * n + i];
      for (int64_t j = 0; j < n; j++)
        s += a[j * n + i] * x[r * n + j];
      rn = fabs(s) > rn ? fabs(s) : rn;
      xn = fabs(x[r * n + i]) > xn ? fabs(x[r * n + i]) : xn;
      bn = fabs(b[r * n + i]) > bn ? fabs(b[r * n + i]) : bn;
    }
    double v = rn / (2.220446049250313e-16 * (anorm * xn + bn) * (double)n);
    worst = v > worst ? v : worst;
  }
  return worst;
}

static int64_t nrhs_of(int64_t n) { return n % 3 + 1; }

/* One LU case: returns 0 when right (rank 0 prints the line). */
static int lu_case(const char *layout, kind_t kind, int64_t m, int64_t n,
                   int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(layout, m, n, nb, 0);
  if (d == NULL)
    return 1;
  int64_t k = m < n ? m : n, info = -1;
  double *a = fill_own(d, kind);
  int64_t *ipiv = malloc((size_t)k * sizeof *ipiv);
  int err = mlsba_mpi_getrf(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info);
  int bad = !rank_agreed(info, err) || err != 0;
  double *lu = rank_gather(d, a, MLSBA_PRECISION_DOUBLE);
  /* The solve, on square matrices that are not singular. */
  int64_t nrhs = nrhs_of(n);
  double *b = NULL;
  if (m == n && kind == GENERAL) {
    b = malloc((size_t)(n * nrhs) * sizeof *b);
    for (int64_t i = 0; i < n * nrhs; i++)
      b[i] = rank_noise(i, -1);
    if (mlsba_mpi_getrs(d, MLSBA_PRECISION_DOUBLE, a, ipiv, nrhs, b, n))
      bad = 1;
  }
  if (rank == 0) {
    double *ref = whole(kind, m, n), *orig = whole(kind, m, n), res = -1,
           sres = -1;
    int im = (int)m, in = (int)n, linfo = 0,
        *lpiv = malloc((size_t)k * sizeof *lpiv);
    dgetrf_(&im, &in, ref, &im, lpiv, &linfo);
    int same_piv = 1;
    for (int64_t i = 0; i < k; i++)
      same_piv &= lpiv[i] == ipiv[i];
    if (lu)
      mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, m, n, orig, m, lu, m, ipiv,
                           &res);
    if (b) {
      double *b0 = malloc((size_t)(n * nrhs) * sizeof *b0);
      for (int64_t i = 0; i < n * nrhs; i++)
        b0[i] = rank_noise(i, -1);
      sres = solve_residual(orig, n, b, b0, nrhs);
      free(b0);
    }
    /* And the ties resolved as idamax does, whatever LAPACK did. */
    int ties_first =
        kind != TIES || (ipiv[TIE1] == TIE1 + 2 && ipiv[TIE2] == TIE2 + 2);
    bad |= !same_piv || info != linfo || res < 0 || !(res < 16) ||
           (b && !(sres < 16)) || !ties_first;
    printf("%s lu%s %s %lldx%lld nb %lld on %d: info %lld (LAPACK %d), ipiv "
           "%s, residual %.3g, solve %.3g%s%s\n",
           bad ? "WRONG" : "ok",
           kind == TIES      ? " ties"
           : kind == GENERAL ? ""
                             : " singular",
           layout, (long long)m, (long long)n, (long long)nb, nranks,
           (long long)info, linfo, same_piv ? "LAPACK's" : "DIFFERENT", res,
           sres, err ? ": " : "", err ? mlsba_mpi_last_error() : "");
    free(lpiv);
    free(ref);
    free(orig);
  }
  free(b);
  free(lu);
  free(ipiv);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

/* ||L L^T - A||_1 over the lower triangle / (||A||_1 n eps), in full. */
static int chol_case(const char *layout, kind_t kind, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(layout, n, n, nb, 1);
  if (d == NULL)
    return 1;
  int64_t info = -1;
  double *a = fill_own(d, kind);
  int err = mlsba_mpi_potrf(d, MLSBA_PRECISION_DOUBLE, 'L', a, &info);
  int bad = !rank_agreed(info, err) || err != 0;
  double *l = rank_gather(d, a, MLSBA_PRECISION_DOUBLE);
  int64_t nrhs = nrhs_of(n);
  double *b = NULL;
  if (kind == SPD) {
    b = malloc((size_t)(n * nrhs) * sizeof *b);
    for (int64_t i = 0; i < n * nrhs; i++)
      b[i] = rank_noise(-1, i);
    if (mlsba_mpi_potrs(d, MLSBA_PRECISION_DOUBLE, 'L', a, nrhs, b, n))
      bad = 1;
  }
  if (rank == 0) {
    double *ref = whole(kind, n, n), *orig = whole(kind, n, n), res = -1,
           sres = -1;
    int in = (int)n, linfo = 0;
    dpotrf_("L", &in, ref, &in, &linfo, 1);
    if (l && kind == SPD)
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', n, orig, n, l, n, &res);
    /* The upper triangle must be the matrix's own. */
    int upper_kept = 1;
    for (int64_t j = 0; l && j < n; j++)
      for (int64_t i = 0; i < j; i++)
        upper_kept &= l[j * n + i] == orig[j * n + i];
    if (b) {
      double *b0 = malloc((size_t)(n * nrhs) * sizeof *b0);
      for (int64_t i = 0; i < n * nrhs; i++)
        b0[i] = rank_noise(-1, i);
      sres = solve_residual(orig, n, b, b0, nrhs);
      free(b0);
    }
    bad |= info != linfo || (kind == SPD && !(res >= 0 && res < 16)) ||
           (b && !(sres < 16)) || !upper_kept;
    printf("%s chol %s %lld nb %lld on %d: info %lld (LAPACK %d), residual "
           "%.3g, solve %.3g, upper %s%s%s\n",
           bad ? "WRONG" : "ok", layout, (long long)n, (long long)nb, nranks,
           (long long)info, linfo, res, sres,
           upper_kept ? "untouched" : "CHANGED", err ? ": " : "",
           err ? mlsba_mpi_last_error() : "");
    free(ref);
    free(orig);
  }
  free(b);
  free(l);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

/* Eq. 3 by brute force: of every P x Q = T with P <= Q, the one with the
 * largest P; then Algorithm 1's step 3, for g nodes running G processes
 * between them (those of more than one): when G / 2 < P <= G, P becomes
 * the largest divisor of T at most min(g, P), so that each such node's
 * processes share one grid row. */
static void grid_of(int T, int g, int G, int *P, int *Q) {
  *P = 1;
  for (int p = 1; p <= T; p++)
    if (T % p == 0 && p <= T / p)
      *P = p;
  if (g > 0 && G >= *P && G < 2 * *P) {
    int most = g < *P ? g : *P;
    for (int p = 1; p <= most; p++)
      if (T % p == 0)
        *P = p;
  }
  *Q = T / *P;
}

/* Process scaling's ownership against seed 003's rules, block by block:
 * the owner of (i, j) is that of (i mod P, j mod Q) on eq. 3's grid,
 * whose P x Q positions hold every rank once; the two ranks of node 2
 * side by side in grid row 0, first (Algorithm 1: the nodes of more
 * processes placed first, each in one row). */
static int process_scaling_wrong(const mlsba_mpi_matrix_t *d, int64_t n,
                                 int64_t nb) {
  int P, Q, bad = 0;
  int many = nranks >= 3; /* node_of: ranks 1 and 2 one node */
  grid_of(nranks, many, many ? 2 : 0, &P, &Q);
  int64_t side = (n + nb - 1) / nb;
  int *seen = calloc((size_t)nranks, sizeof *seen);
  for (int64_t i = 0; i < side; i++)
    for (int64_t j = 0; j < side; j++) {
      int o = mlsba_mpi_matrix_owner(d, i, j, NULL, NULL);
      int g = mlsba_mpi_matrix_owner(d, i % P, j % Q, NULL, NULL);
      bad |= o != g;
      if (i < P && j < Q && o >= 0 && o < nranks)
        seen[o]++;
    }
  for (int r = 0; side >= Q && side >= P && r < nranks; r++)
    bad |= seen[r] != 1;
  if (nranks >= 3 && side >= 2)
    bad |= mlsba_mpi_matrix_owner(d, 0, 0, NULL, NULL) != 1 ||
           mlsba_mpi_matrix_owner(d, 0, 1, NULL, NULL) != 2;
  free(seen);
  return bad;
}

/* Eqs. 1-2 by brute force: for every ratio of a fine grid and 1 to 24
 * cores, the count is the divisor of cores nearest the ratio (the
 * smaller of two as near), 1 below a ratio of 1. */
static int counts_case(void) {
  int bad = 0;
  for (int cores = 1; cores <= 24; cores++)
    for (int k = 0; k <= 120; k++) {
      double ratio = k / 4.0;
      int64_t want = 1;
      if (ratio >= 1)
        for (int64_t dv = 1; dv <= cores; dv++)
          if (cores % dv == 0 &&
              (fabs((double)dv - ratio) < fabs((double)want - ratio)))
            want = dv;
      int64_t got = mlsba_mpi_process_scaling_count(ratio, cores);
      if (got != want && rank == 0 && !bad)
        printf("WRONG counts: ratio %g on %d cores: %lld, not %lld\n", ratio,
               cores, (long long)got, (long long)want);
      bad |= got != want;
    }
  /* The seed's own example: Ratio 5 on 12 cores launches 4. */
  bad |= mlsba_mpi_process_scaling_count(5, 12) != 4;
  if (rank == 0 && !bad)
    printf("ok counts: eqs. 1-2 on 1 to 24 cores\n");
  return bad;
}

/* Whether a factorization description's local leading dimension breaks
 * its rule: this rank's local rows (its blocks' lowest local row)
 * rounded up to 16 elements, 16 more where that is a multiple of 256
 * (columns a power of two apart share their cache sets). */
static int ld_wrong(const mlsba_mpi_matrix_t *d) {
  int64_t ld = 0, cols = 0, rows = 0;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  for (size_t b = 0; b < mlsba_mpi_matrix_num_blocks(d); b++) {
    mlsba_mpi_block_t k;
    mlsba_mpi_matrix_block(d, b, &k);
    rows = k.local_row + k.rows > rows ? k.local_row + k.rows : rows;
  }
  int64_t want = (rows > 1 ? rows : 1) + 15;
  want -= want % 16;
  want += want % 256 == 0 ? 16 : 0;
  if (ld != want)
    printf("WRONG ld on rank %d: %lld for %lld local rows, not %lld\n", rank,
           (long long)ld, (long long)rows, (long long)want);
  return ld != want;
}

/* The factorizations' default block (mlsba_mpi_factor_block): the sizes
 * it gives where its rule says, never falling as the matrix grows nor
 * rising with the ranks, and mlsba_mpi_factor_matrix() taking it for a
 * block of 0; the local arrays' padded leading dimension (ld_wrong), at
 * 1024 rows a power of two on every grid. */
static int block_case(void) {
  static const struct {
    int64_t m, n;
    int q;
    int64_t nb;
  } want[] = {{4096, 4096, 2, 256}, {4096, 4096, 3, 192},  {2048, 2048, 2, 128},
              {8192, 8192, 3, 256}, {8192, 8192, 64, 128}, {2900, 2900, 1, 256},
              {1800, 1800, 1, 128}, {100, 100, 1, 128},    {0, -5, 0, 128},
              {40000, 200, 2, 192}};
  int bad = 0;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    int64_t got = mlsba_mpi_factor_block(want[i].m, want[i].n, want[i].q);
    if (got != want[i].nb && rank == 0)
      printf("WRONG block: %lld x %lld on %d ranks: %lld, not %lld\n",
             (long long)want[i].m, (long long)want[i].n, want[i].q,
             (long long)got, (long long)want[i].nb);
    bad |= got != want[i].nb;
  }
  for (int q = 1; q <= 64; q *= 2)
    for (int64_t n = 64; n <= 20000; n += 97) {
      int64_t b = mlsba_mpi_factor_block(n, n, q);
      bad |= b < 128 || b > 256 ||
             b > mlsba_mpi_factor_block(n + 97, n + 97, q) ||
             b < mlsba_mpi_factor_block(n, n, 2 * q);
    }
  mlsba_mpi_factor_layout_opts_t o = {.layout = MLSBA_MPI_LAYOUT_HOMOGENEOUS};
  mlsba_mpi_matrix_t *d = NULL;
  int64_t nb = 0, expect = mlsba_mpi_factor_block(2900, 2900, nranks);
  if (mlsba_mpi_factor_matrix(MPI_COMM_WORLD, 2900, 2900, &o, &d) == 0) {
    mlsba_mpi_matrix_size(d, NULL, NULL, NULL, &nb);
    bad |= ld_wrong(d);
  }
  bad |= nb != expect;
  mlsba_mpi_matrix_destroy(d);
  d = NULL;
  o.block = 128;
  bad |= mlsba_mpi_factor_matrix(MPI_COMM_WORLD, 1024, 1024, &o, &d) != 0 ||
         ld_wrong(d);
  mlsba_mpi_matrix_destroy(d);
  if (rank == 0 && !bad)
    printf("ok block: the default by size and ranks, %lld at 2900 on %d\n",
           (long long)nb, nranks);
  return bad;
}

/* The layout itself: every block owned once, by the rank the description
 * names, and with the fpm layout on unequal ranks the fastest (the last)
 * owning more blocks than the slowest (rank 0); process scaling's as
 * seed 003 places its processes. */
static int layout_case(const char *layout, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(layout, n, n, nb, 0);
  if (d == NULL)
    return 1;
  long mine = (long)mlsba_mpi_matrix_num_blocks(d), total = 0, foreign = 0;
  for (size_t b = 0; b < (size_t)mine; b++) {
    mlsba_mpi_block_t k;
    mlsba_mpi_matrix_block(d, b, &k);
    foreign +=
        mlsba_mpi_matrix_owner(d, k.row / nb, k.col / nb, NULL, NULL) != rank;
  }
  long *counts = malloc((size_t)nranks * sizeof *counts);
  MPI_Allgather(&mine, 1, MPI_LONG, counts, 1, MPI_LONG, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &foreign, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int r = 0; r < nranks; r++)
    total += counts[r];
  int64_t side = (n + nb - 1) / nb;
  int bad =
      total != side * side || foreign != 0 ||
      (!strcmp(layout, "fpm") && nranks > 1 &&
       !(counts[nranks - 1] > counts[0])) ||
      (!strcmp(layout, "process-scaling") && process_scaling_wrong(d, n, nb));
  if (rank == 0) {
    printf("%s layout %s %lld nb %lld on %d: blocks per rank",
           bad ? "WRONG" : "ok", layout, (long long)n, (long long)nb, nranks);
    for (int r = 0; r < nranks; r++)
      printf(" %ld", counts[r]);
    printf("\n");
  }
  free(counts);
  mlsba_mpi_matrix_destroy(d);
  return bad;
}

/* Single precision: LU (lower 0) or Cholesky (1) of an n x n matrix, the
 * factors and info equal to LAPACK's sgetrf/spotrf, residual < 16. */
static int single_case(const char *layout, int chol, int64_t n, int64_t nb) {
  kind_t kind = chol ? SPD : GENERAL;
  mlsba_mpi_matrix_t *d = layout_of(layout, n, n, nb, chol);
  if (d == NULL)
    return 1;
  int64_t ld, cols, info = -1, *ipiv = malloc((size_t)n * sizeof *ipiv);
  mlsba_mpi_matrix_local(d, &ld, &cols);
  double *ad = fill_own(d, kind);
  float *a = malloc((size_t)(ld * (cols ? cols : 1)) * sizeof *a);
  for (int64_t i = 0; i < ld * cols; i++)
    a[i] = (float)ad[i];
  int err = chol ? mlsba_mpi_potrf(d, MLSBA_PRECISION_SINGLE, 'L', a, &info)
                 : mlsba_mpi_getrf(d, MLSBA_PRECISION_SINGLE, a, ipiv, &info);
  int bad = !rank_agreed(info, err) || err != 0;
  float *f = rank_gather(d, a, MLSBA_PRECISION_SINGLE);
  if (rank == 0) {
    double *orig = whole(kind, n, n), res = -1;
    float *ref = malloc((size_t)(n * n) * sizeof *ref),
          *o32 = malloc((size_t)(n * n) * sizeof *o32);
    for (int64_t i = 0; i < n * n; i++)
      o32[i] = ref[i] = (float)orig[i];
    int in = (int)n, linfo = 0, *lpiv = malloc((size_t)n * sizeof *lpiv),
        same = 1;
    if (chol)
      spotrf_("L", &in, ref, &in, &linfo, 1);
    else
      sgetrf_(&in, &in, ref, &in, lpiv, &linfo);
    for (int64_t i = 0; !chol && i < n; i++)
      same &= lpiv[i] == ipiv[i];
    if (f && chol)
      mlsba_potrf_residual(MLSBA_PRECISION_SINGLE, 'L', n, o32, n, f, n, &res);
    else if (f)
      mlsba_getrf_residual(MLSBA_PRECISION_SINGLE, n, n, o32, n, f, n, ipiv,
                           &res);
    bad |= !same || info != linfo || !(res >= 0 && res < 16);
    printf("%s %s single %s %lld nb %lld on %d: info %lld (LAPACK %d), "
           "ipiv %s, residual %.3g%s%s\n",
           bad ? "WRONG" : "ok", chol ? "chol" : "lu", layout, (long long)n,
           (long long)nb, nranks, (long long)info, linfo,
           chol   ? "-"
           : same ? "LAPACK's"
                  : "DIFFERENT",
           res, err ? ": " : "", err ? mlsba_mpi_last_error() : "");
    free(lpiv);
    free(ref);
    free(o32);
    free(orig);
  }
  free(f);
  free(a);
  free(ad);
  free(ipiv);
  mlsba_mpi_matrix_destroy(d);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

static int lu_cases(const char *layout) {
  int bad = layout_case(layout, 96, 8);
  /* odd N; N below the block; N not a multiple of it; a single block
   * column for more ranks than that; rectangular both ways; N = 1; blocks
   * wider than the panel's leaf (16), so that its recursion splits them,
   * odd and even, square and both ways rectangular. */
  static const int64_t shapes[][3] = {
      {37, 37, 8},    {5, 5, 8},     {50, 50, 16},  {12, 12, 8},  {45, 30, 8},
      {20, 41, 8},    {1, 1, 4},     {64, 64, 8},   {33, 70, 16}, {70, 33, 16},
      {101, 101, 40}, {150, 77, 36}, {61, 130, 24}, {23, 23, 40}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
    bad |= lu_case(layout, GENERAL, shapes[i][0], shapes[i][1], shapes[i][2]);
  /* A zero column in the middle and first; exact ties in two panels. */
  bad |= lu_case(layout, SINGULAR, 29, 29, 8);
  bad |= lu_case(layout, ZERO_FIRST, 29, 29, 8);
  bad |= lu_case(layout, TIES, 61, 61, 8);
  bad |= single_case(layout, 0, 43, 8);
  return bad;
}

static int chol_cases(const char *layout) {
  int bad = 0;
  static const int64_t shapes[][2] = {{37, 8}, {5, 8},  {50, 16}, {12, 8},
                                      {1, 4},  {64, 8}, {101, 40}};
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
    bad |= chol_case(layout, SPD, shapes[i][0], shapes[i][1]);
  bad |= chol_case(layout, NOT_SPD, 29, 8);
  bad |= single_case(layout, 1, 43, 8);
  return bad;
}

/* Rank `on` passes a NULL ipiv (getrf), then a bad uplo (potrf): every
 * rank fails with MLSBA_EINVAL and one message naming that rank. */
static int bad_argument(int on) {
  mlsba_mpi_matrix_t *d = layout_of("homogeneous", 20, 20, 8, 0);
  if (d == NULL)
    return 1;
  double *a = fill_own(d, SPD);
  int64_t ipiv[20], info = 0;
  int e1 = mlsba_mpi_getrf(d, MLSBA_PRECISION_DOUBLE, a,
                           rank == on ? NULL : ipiv, &info);
  char m1[400];
  snprintf(m1, sizeof m1, "%s", mlsba_mpi_last_error());
  int e2 = mlsba_mpi_potrf(d, MLSBA_PRECISION_DOUBLE, rank == on ? 'U' : 'L', a,
                           &info);
  char m2[400];
  snprintf(m2, sizeof m2, "%s", mlsba_mpi_last_error());
  /* A cost a block column of width that is not a time >= 0. */
  mlsba_mpi_factor_layout_opts_t bo = {.block = 8,
                                       .layout = MLSBA_MPI_LAYOUT_HOMOGENEOUS,
                                       .swap_s = rank == on ? -1.0 : 0.0};
  mlsba_mpi_matrix_t *bd = NULL;
  int e3 = mlsba_mpi_factor_matrix(MPI_COMM_WORLD, 20, 20, &bo, &bd);
  char m3[400];
  snprintf(m3, sizeof m3, "%s", mlsba_mpi_last_error());
  mlsba_mpi_matrix_destroy(bd);
  /* A tolerance of alike ranks that is not a difference >= 0. */
  bo.swap_s = 0;
  bo.alike = rank == on ? NAN : 0.0;
  bd = NULL;
  int e4 = mlsba_mpi_factor_matrix(MPI_COMM_WORLD, 20, 20, &bo, &bd);
  char m4[400];
  snprintf(m4, sizeof m4, "%s", mlsba_mpi_last_error());
  mlsba_mpi_matrix_destroy(bd);
  char want[32];
  snprintf(want, sizeof want, "rank %d: ", on);
  int bad = !rank_agreed(0, e1) || !rank_agreed(0, e2) || e1 != MLSBA_EINVAL ||
            e2 != MLSBA_EINVAL || strncmp(m1, want, strlen(want)) ||
            strncmp(m2, want, strlen(want)) || !rank_agreed(0, e3) ||
            e3 != MLSBA_EINVAL || strncmp(m3, want, strlen(want)) ||
            !strstr(m3, "swap_s") || !rank_agreed(0, e4) ||
            e4 != MLSBA_EINVAL || strncmp(m4, want, strlen(want)) ||
            !strstr(m4, "alike");
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s bad argument on rank %d: getrf \"%s\", potrf \"%s\", "
           "layout \"%s\"\n",
           any ? "WRONG" : "ok", on, m1, m2, m3);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  return any;
}

/* A matrix in a ScaLAPACK descriptor's layout (MB = NB = 6, a P x Q grid
 * of the ranks, column-major order): moved to the factorization's layout,
 * factorized, moved back; the factors gathered from the descriptor's
 * layout equal LAPACK's. */
static int scalapack(void) {
  int64_t n = 41, nb = 8;
  int P = nranks >= 4 ? 2 : 1, Q = nranks / P;
  int desc[9] = {1, 0, (int)n, (int)n, 6, 6, 0, 0, 1};
  /* LLD: this process's rows, as NUMROC gives them. */
  int myrow = rank < P * Q ? rank % P : -1;
  int64_t rows = 0;
  for (int64_t bi = 0; myrow >= 0 && bi * 6 < n; bi++)
    if (bi % P == myrow)
      rows += n - bi * 6 < 6 ? n - bi * 6 : 6;
  desc[8] = rows > 1 ? (int)rows : 1;
  mlsba_mpi_matrix_t *sd = NULL, *d = layout_of("homogeneous", n, n, nb, 0);
  int err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, desc, P, Q,
                                       MLSBA_MPI_COLUMN_MAJOR, &sd);
  if (err || d == NULL) {
    if (rank == 0)
      printf("WRONG scalapack: %s\n", mlsba_mpi_last_error());
    return 1;
  }
  double *sa = fill_own(sd, GENERAL);
  int64_t ld, cols, ipiv[41], info = -1;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  double *a = calloc((size_t)(ld * (cols ? cols : 1)), sizeof *a);
  err = mlsba_mpi_redistribute(sd, sa, d, a, MLSBA_PRECISION_DOUBLE);
  if (!err)
    err = mlsba_mpi_getrf(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info);
  if (!err)
    err = mlsba_mpi_redistribute(d, a, sd, sa, MLSBA_PRECISION_DOUBLE);
  double *lu = err ? NULL : rank_gather(sd, sa, MLSBA_PRECISION_DOUBLE);
  int bad = err != 0;
  if (rank == 0) {
    double *orig = whole(GENERAL, n, n), *ref = whole(GENERAL, n, n), res = -1;
    int in = (int)n, linfo = 0, lpiv[41], same = 1;
    dgetrf_(&in, &in, ref, &in, lpiv, &linfo);
    for (int64_t i = 0; i < n; i++)
      same &= lpiv[i] == ipiv[i];
    if (lu)
      mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, n, n, orig, n, lu, n, ipiv,
                           &res);
    bad |= !same || !(res >= 0 && res < 16) || info != linfo;
    printf("%s scalapack %dx%d grid, MB 6, to nb %lld and back: ipiv %s, "
           "residual %.3g%s%s\n",
           bad ? "WRONG" : "ok", P, Q, (long long)nb,
           same ? "LAPACK's" : "DIFFERENT", res, err ? ": " : "",
           err ? mlsba_mpi_last_error() : "");
    free(orig);
    free(ref);
  }
  free(lu);
  free(a);
  free(sa);
  mlsba_mpi_matrix_destroy(d);
  mlsba_mpi_matrix_destroy(sd);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int bad = 2;
  if (argc >= 3 && !strcmp(argv[1], "lu"))
    bad = lu_cases(argv[2]);
  else if (argc >= 3 && !strcmp(argv[1], "chol"))
    bad = chol_cases(argv[2]);
  else if (argc >= 3 && !strcmp(argv[1], "bad"))
    bad = bad_argument(atoi(argv[2]));
  else if (argc >= 2 && !strcmp(argv[1], "scalapack"))
    bad = scalapack();
  else if (argc >= 2 && !strcmp(argv[1], "counts"))
    bad = counts_case() | block_case();
  else if (rank == 0)
    fprintf(stderr, "usage: factor_ranks lu|chol LAYOUT | bad R | "
                    "scalapack | counts\n");
  MPI_Finalize();
  return bad;
}
