/* Each rank's trailing update split between its node's devices
 * (mlsba_mpi_getrf_ex, _potrf_ex with a platform), as an application
 * drives it (test_mpi_factor_node starts this program under mpirun):
 *   lu PLATFORM       getrf of several shapes, each rank's update split
 *                     between the devices of PLATFORM (a platform file):
 *                     the factors gathered on rank 0 equal LAPACK's
 *                     (ipiv identical, scaled residual < 16), info the
 *                     same on every rank, and every rank's report says
 *                     that more than one device took columns;
 *   chol PLATFORM     potrf the same way (residual < 16, the upper
 *                     triangle untouched);
 *   ratio PLATFORM    getrf on one shape: on simulated devices of flat
 *                     speeds, each device's columns over the first's
 *                     follow their speeds (within a quarter), every step
 *                     split by the models;
 *   fixed PLATFORM    getrf with seed 004's fixed slice, given and tuned
 *                     from the first step: each device's columns follow
 *                     the slice's fractions, every step timed;
 *   bad               one rank names a platform file that does not
 *                     exist: every rank fails with its message.
 * Rank 0 prints one line per case ("ok ..." or "WRONG ..."); the exit
 * status is 0 when every case was right on every rank. */
#include <math.h>
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);

static int rank, nranks;

/* An element in [-1, 1) from (i, j) alone; symmetric with a dominant
 * diagonal (positive definite) for Cholesky. */
static double noise(int64_t i, int64_t j) {
  uint64_t x =
      (uint64_t)i * 0x9E3779B97F4A7C15u ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Fu;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 29;
  return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

static double elem(int spd, int64_t n, int64_t i, int64_t j) {
  if (!spd)
    return noise(i, j);
  return i == j ? (double)n + 1.0 : noise(i < j ? i : j, i < j ? j : i);
}

static mlsba_mpi_matrix_t *layout_of(int64_t m, int64_t n, int64_t nb,
                                     int lower) {
  mlsba_mpi_factor_layout_opts_t o = {
      .block = nb, .layout = MLSBA_MPI_LAYOUT_HOMOGENEOUS, .lower = lower};
  mlsba_mpi_matrix_t *d = NULL;
  if (mlsba_mpi_factor_matrix(MPI_COMM_WORLD, m, n, &o, &d) && rank == 0)
    printf("WRONG layout %lldx%lld: %s\n", (long long)m, (long long)n,
           mlsba_mpi_last_error());
  return d;
}

static double *fill_own(const mlsba_mpi_matrix_t *d, int spd) {
  int64_t ld, cols, m, n;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  mlsba_mpi_matrix_size(d, &m, &n, NULL, NULL);
  double *a = calloc((size_t)(ld * (cols ? cols : 1)), sizeof *a);
  for (size_t b = 0; a && b < mlsba_mpi_matrix_num_blocks(d); b++) {
    mlsba_mpi_block_t k;
    mlsba_mpi_matrix_block(d, b, &k);
    for (int64_t j = 0; j < k.cols; j++)
      for (int64_t i = 0; i < k.rows; i++)
        a[(k.local_col + j) * ld + k.local_row + i] =
            elem(spd, n, k.row + i, k.col + j);
  }
  return a;
}

static int all_on_zero(void *user, int64_t bi, int64_t bj, int64_t *lr,
                       int64_t *lc) {
  int64_t nb = *(const int64_t *)user;
  *lr = bi * nb;
  *lc = bj * nb;
  return 0;
}

/* d's matrix whole on rank 0; NULL elsewhere. */
static double *gather(const mlsba_mpi_matrix_t *d, const double *a) {
  int64_t m, n, nb;
  mlsba_mpi_matrix_size(d, &m, &n, &nb, NULL);
  mlsba_mpi_matrix_t *g = NULL;
  double *full = rank == 0 ? malloc((size_t)(m * n) * sizeof *full) : NULL;
  if (mlsba_mpi_matrix_create(MPI_COMM_WORLD, m, n, nb, nb, all_on_zero, &nb,
                              rank == 0 ? m : 1, &g) ||
      mlsba_mpi_redistribute(d, a, g, full, MLSBA_PRECISION_DOUBLE)) {
    free(full);
    full = NULL;
  }
  mlsba_mpi_matrix_destroy(g);
  return full;
}

static double *whole(int spd, int64_t m, int64_t n) {
  double *a = malloc((size_t)(m * n) * sizeof *a);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      a[j * m + i] = elem(spd, n, i, j);
  return a;
}

/* The report of every rank: more than one device took columns in some
 * step, and more than one device took columns in all. Agreed: 1 when
 * every rank's does. */
static int split_everywhere(const mlsba_mpi_factor_report_t *r) {
  size_t used = 0;
  for (size_t i = 0; i < r->num_devices; i++)
    used += r->columns[i] > 0;
  int mine = r->steps == 0 || (r->split_steps > 0 && used > 1), all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static int agreed(int64_t info, int err) {
  int64_t mine[2] = {info, err}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo[0] == hi[0] && lo[1] == hi[1];
}

static int lu_case(const char *platform, int64_t m, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(m, n, nb, 0);
  if (d == NULL)
    return 1;
  int64_t k = m < n ? m : n, info = -1;
  double *a = fill_own(d, 0);
  int64_t *ipiv = malloc((size_t)k * sizeof *ipiv);
  mlsba_mpi_factor_opts_t o = {.platform = platform};
  mlsba_mpi_factor_report_t rep;
  int err =
      mlsba_mpi_getrf_ex(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info, &o, &rep);
  int bad = !agreed(info, err) || err != 0;
  int split = split_everywhere(&rep) && !err;
  double *lu = gather(d, a);
  if (rank == 0) {
    double *ref = whole(0, m, n), *orig = whole(0, m, n), res = -1;
    int im = (int)m, in = (int)n, linfo = 0,
        *lpiv = malloc((size_t)k * sizeof *lpiv);
    dgetrf_(&im, &in, ref, &im, lpiv, &linfo);
    int same_piv = 1;
    for (int64_t i = 0; i < k; i++)
      same_piv &= lpiv[i] == ipiv[i];
    if (lu)
      mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, m, n, orig, m, lu, m, ipiv,
                           &res);
    bad |= !same_piv || info != linfo || !(res >= 0 && res < 16) || !split;
    printf("%s lu %lldx%lld nb %lld on %d: ipiv %s, residual %.3g, rank 0 "
           "split %lld of %lld steps%s%s\n",
           bad ? "WRONG" : "ok", (long long)m, (long long)n, (long long)nb,
           nranks, same_piv ? "LAPACK's" : "DIFFERENT", res,
           (long long)rep.split_steps, (long long)rep.steps, err ? ": " : "",
           err ? mlsba_mpi_last_error() : "");
    free(lpiv);
    free(ref);
    free(orig);
  }
  mlsba_mpi_factor_report_free(&rep);
  free(lu);
  free(ipiv);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

static int chol_case(const char *platform, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(n, n, nb, 1);
  if (d == NULL)
    return 1;
  int64_t info = -1;
  double *a = fill_own(d, 1);
  mlsba_mpi_factor_opts_t o = {.platform = platform};
  mlsba_mpi_factor_report_t rep;
  int err =
      mlsba_mpi_potrf_ex(d, MLSBA_PRECISION_DOUBLE, 'L', a, &info, &o, &rep);
  int bad = !agreed(info, err) || err != 0;
  int split = split_everywhere(&rep) && !err;
  double *l = gather(d, a);
  if (rank == 0) {
    double *orig = whole(1, n, n), res = -1;
    if (l)
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', n, orig, n, l, n, &res);
    int upper_kept = l != NULL;
    for (int64_t j = 0; l && j < n; j++)
      for (int64_t i = 0; i < j; i++)
        upper_kept &= l[j * n + i] == orig[j * n + i];
    bad |= info != 0 || !(res >= 0 && res < 16) || !upper_kept || !split;
    printf("%s chol %lld nb %lld on %d: residual %.3g, upper %s, rank 0 "
           "split %lld of %lld steps%s%s\n",
           bad ? "WRONG" : "ok", (long long)n, (long long)nb, nranks, res,
           upper_kept ? "untouched" : "CHANGED", (long long)rep.split_steps,
           (long long)rep.steps, err ? ": " : "",
           err ? mlsba_mpi_last_error() : "");
    free(orig);
  }
  mlsba_mpi_factor_report_free(&rep);
  free(l);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

/* Flat simulated speeds: device i's columns over device 0's within a
 * quarter of speed i over speed 0, and the models split every step. */
static int ratio_case(const char *platform, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(n, n, nb, 0);
  mlsba_platform_t *pl = NULL;
  if (d == NULL || mlsba_platform_load(platform, &pl))
    return 1;
  int64_t info = -1, *ipiv = malloc((size_t)n * sizeof *ipiv);
  double *a = fill_own(d, 0);
  mlsba_mpi_factor_opts_t o = {.platform = platform};
  mlsba_mpi_factor_report_t rep;
  int err =
      mlsba_mpi_getrf_ex(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info, &o, &rep);
  int bad = err != 0 || !rep.simulated || rep.fpm_steps != rep.steps ||
            rep.num_devices != mlsba_platform_num_devices(pl) ||
            rep.columns[0] <= 0;
  char what[256] = "";
  for (size_t i = 1; !bad && i < rep.num_devices; i++) {
    double x, s0, si;
    mlsba_model_get_point(mlsba_platform_device_model(pl, 0), 0, &x, &s0);
    mlsba_model_get_point(mlsba_platform_device_model(pl, i), 0, &x, &si);
    double want = si / s0, got = (double)rep.columns[i] / rep.columns[0];
    bad |= !(got > 0.75 * want && got < 1.25 * want);
    size_t len = strlen(what);
    snprintf(what + len, sizeof what - len, " device %zu: %.3f (speeds %.3f)",
             i, got, want);
  }
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s ratio %lld nb %lld on %d: columns over device 0's%s%s%s\n",
           all ? "WRONG" : "ok", (long long)n, (long long)nb, nranks, what,
           err ? ": " : "", err ? mlsba_mpi_last_error() : "");
  mlsba_mpi_factor_report_free(&rep);
  mlsba_platform_destroy(pl);
  free(ipiv);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  return all;
}

/* Seed 004's fixed slice on simulated devices of flat speeds: with the
 * fractions given, every step's columns split by them (device i's total
 * within one column a step of its fraction of all); without, the slice
 * tuned from the first step is the speeds' (within two columns of the
 * first step's) and the report returns it. Either way info is 0 and every step
 * is timed, the steps' update times summing to the report's update_s.
 * (A split moves no arithmetic: lu_case checks the factors.) */
static int fixed_case(const char *platform, int given, int64_t n, int64_t nb) {
  mlsba_mpi_matrix_t *d = layout_of(n, n, nb, 0);
  mlsba_platform_t *pl = NULL;
  if (d == NULL || mlsba_platform_load(platform, &pl))
    return 1;
  size_t p = mlsba_platform_num_devices(pl);
  double *want = calloc(p, sizeof *want), speeds = 0;
  for (size_t i = 0; i < p; i++) {
    double x;
    mlsba_model_get_point(mlsba_platform_device_model(pl, i), 0, &x, &want[i]);
    speeds += want[i];
  }
  /* Given: the speeds' shares reversed, which the models would never
   * choose; tuned: the speeds' own. */
  double *frac = calloc(p, sizeof *frac);
  for (size_t i = 0; i < p; i++)
    frac[i] = given ? want[p - 1 - i] / speeds : want[i] / speeds;
  int64_t info = -1, *ipiv = malloc((size_t)n * sizeof *ipiv);
  double *a = fill_own(d, 0);
  mlsba_mpi_factor_opts_t o = {.platform = platform,
                               .split = MLSBA_FACTOR_SPLIT_FIXED_SLICE,
                               .fraction = given ? frac : NULL};
  mlsba_mpi_factor_report_t rep;
  int err =
      mlsba_mpi_getrf_ex(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info, &o, &rep);
  int64_t all_cols = 0;
  for (size_t i = 0; !err && i < rep.num_devices; i++)
    all_cols += rep.columns[i];
  double upd = 0;
  for (int64_t k = 0; !err && k < rep.timed_steps; k++)
    upd += rep.step_update_s[k];
  int bad = err != 0 || info != 0 || rep.num_devices != p ||
            rep.split != MLSBA_FACTOR_SPLIT_FIXED_SLICE ||
            rep.fraction == NULL || rep.timed_steps != (n + nb - 1) / nb ||
            fabs(upd - rep.update_s) > 1e-9 * (1 + rep.update_s);
  char what[256] = "";
  for (size_t i = 0; !bad && i < p; i++) {
    /* Tuned: the speeds' split of the first step's update (its columns
     * but the next panel's, about n / nranks - 2 nb on this 1 x Q grid),
     * within two of its columns... */
    double tol = given ? 1e-12 : 2.0 / (double)(n / nranks - 2 * nb);
    bad |= fabs(rep.fraction[i] - frac[i]) > tol;
    /* ... and every step by those fractions, within a column a step. */
    double share = rep.fraction[i] * (double)all_cols;
    bad |= fabs((double)rep.columns[i] - share) > (double)rep.steps;
    size_t len = strlen(what);
    snprintf(what + len, sizeof what - len, " device %zu: %lld cols, %.3f", i,
             (long long)rep.columns[i], rep.fraction[i]);
  }
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s fixed slice (%s) %lld nb %lld on %d:%s%s%s\n",
           all ? "WRONG" : "ok", given ? "given" : "tuned", (long long)n,
           (long long)nb, nranks, what, err ? ": " : "",
           err ? mlsba_mpi_last_error() : "");
  mlsba_mpi_factor_report_free(&rep);
  mlsba_platform_destroy(pl);
  free(want);
  free(frac);
  free(ipiv);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  return all;
}

/* The last rank names a missing platform file: every rank fails with
 * MLSBA_EINVAL or MLSBA_EIO and that rank's message. */
static int bad_platform(const char *platform) {
  mlsba_mpi_matrix_t *d = layout_of(64, 64, 16, 0);
  if (d == NULL)
    return 1;
  int64_t info = -1, ipiv[64];
  double *a = fill_own(d, 0);
  mlsba_mpi_factor_opts_t o = {
      .platform = rank == nranks - 1 ? "/nonexistent/node.json" : platform};
  int err =
      mlsba_mpi_getrf_ex(d, MLSBA_PRECISION_DOUBLE, a, ipiv, &info, &o, NULL);
  const char *msg = mlsba_mpi_last_error();
  int same = agreed(0, err); /* collective: every rank calls it */
  int right = err != 0 && same && strstr(msg, "/nonexistent/node.json"),
      all = 0;
  MPI_Allreduce(&right, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s bad platform on rank %d: %s\n", all ? "ok" : "WRONG", nranks - 1,
           msg);
  free(a);
  mlsba_mpi_matrix_destroy(d);
  return !all;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int bad = 1;
  const char *what = argc > 1 ? argv[1] : "", *pl = argc > 2 ? argv[2] : "";
  if (!strcmp(what, "lu"))
    bad = lu_case(pl, 300, 300, 32) | lu_case(pl, 257, 190, 24) |
          lu_case(pl, 150, 301, 32);
  else if (!strcmp(what, "chol"))
    bad = chol_case(pl, 300, 32) | chol_case(pl, 211, 24);
  else if (!strcmp(what, "ratio"))
    bad = ratio_case(pl, 640, 32);
  else if (!strcmp(what, "fixed"))
    bad = fixed_case(pl, 1, 640, 32) | fixed_case(pl, 0, 640, 32);
  else if (!strcmp(what, "bad"))
    bad = bad_platform(pl);
  else if (rank == 0)
    printf("WRONG usage: %s lu|chol|ratio|fixed|bad PLATFORM\n", argv[0]);
  MPI_Finalize();
  return bad;
}
