/* bench-solve: libmlsba's solves against LAPACK's on OpenBLAS (its core
 * type for this CPU, all cores), as a user would call either. For each
 * size, number of right-hand sides and precision, in interleaved rounds
 * (medians):
 *
 *   gesv    mlsba_gesv (mlsba_getrf, then mlsba_getrs) and OpenBLAS's
 *           ?gesv; getrs alone on the same factors: mlsba_getrs, and
 *           OpenBLAS's ?getrs with the pivots through
 *           mlsba_ipiv_to_lapack(); and mlsba_getrs on a platform of one
 *           core (core 0): what the platform's cores buy;
 *   posv    the same with mlsba_posv, ?posv, mlsba_potrs and ?potrs.
 *
 *   bench-solve [--size N]... [--nrhs R]... [--precision single|double]
 *               [--rounds R] [--platform auto|FILE] [--split-block B]
 *
 * Defaults: sizes 2048 and 4096, 1 and 64 right-hand sides, double, 5
 * rounds, the platform libmlsba discovers (what a program gets). Every
 * solution's scaled residual is checked (< 16) on the first round.
 * --split-block: the rows of a triangle the cores take a run where they
 * split B's rows (the library's 256 unless given): fewer runs, each
 * waking the cores, against narrower products and larger diagonal
 * solves, compared on one machine by two invocations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_options.h"
#include "common/timing.h"
#include "factor/rhs.h"
#include "mlsba.h"
#include "mlsba_bench/openblas.h"

enum { MAX_LIST = 8, MAX_ROUNDS = 64, ROWS = 5 };

typedef struct {
  int64_t sizes[MAX_LIST], nrhs[MAX_LIST];
  size_t nsizes, nnrhs;
  mlsba_precision_t prec;
  int rounds;
  int64_t split_block; /* 0: the library's */
  const char *platform;
} args_t;

static int usage(const char *why) {
  fprintf(stderr,
          "bench-solve: %s\nusage: bench-solve [--size N]... [--nrhs R]... "
          "[--precision single|double] [--rounds R] [--platform auto|FILE] "
          "[--split-block B]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args_t *a) {
  *a =
      (args_t){.prec = MLSBA_PRECISION_DOUBLE, .rounds = 5, .platform = "auto"};
  for (int i = 1; i < argc;) {
    bench_option_t o;
    if (bench_next_option(argc, argv, &i, &o))
      return usage("a value is missing after an option");
    long long x = o.number;
    int number = o.is_number;
    if (!strcmp(o.name, "--size") && number && x > 0 && x <= 40000 &&
        a->nsizes < MAX_LIST)
      a->sizes[a->nsizes++] = x;
    else if (!strcmp(o.name, "--nrhs") && number && x > 0 && x <= 4096 &&
             a->nnrhs < MAX_LIST)
      a->nrhs[a->nnrhs++] = x;
    else if (!strcmp(o.name, "--rounds") && number && x > 0 && x <= MAX_ROUNDS)
      a->rounds = (int)x;
    else if (!strcmp(o.name, "--precision") && bench_precision(o.value) >= 0)
      a->prec = (mlsba_precision_t)bench_precision(o.value);
    else if (!strcmp(o.name, "--split-block") && number && x >= 16 && x <= 8192)
      a->split_block = x;
    else if (!strcmp(o.name, "--platform"))
      a->platform = o.value;
    else
      return usage("an unknown option or a bad value");
  }
  if (a->nsizes == 0)
    a->sizes[a->nsizes++] = 2048, a->sizes[a->nsizes++] = 4096;
  if (a->nnrhs == 0)
    a->nrhs[a->nnrhs++] = 1, a->nrhs[a->nnrhs++] = 64;
  return 0;
}

typedef struct {
  const args_t *a;
  mlsba_executor_t *ex, *one; /* one: a platform of core 0 alone */
  unsigned cores;
  int64_t n, nrhs;
  int posv;
  size_t es;
  void *a0, *b0, *fa, *fb, *f0; /* f0: the factors, once */
  int64_t *ipiv, *ipiv0;
  int *lpiv;
} case_t;

/* Entries in [-1, 1); symmetric with n on the diagonal for posv. */
static void fill(case_t *c, void *x, int64_t rows, int64_t cols, int spd,
                 unsigned s) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      s = s * 1103515245u + 12345u;
      double v = ((s >> 8) & 0xFFFF) / 32768.0 - 1.0;
      if (spd && i < j)
        v = c->es == 8 ? ((double *)x)[j + i * rows]
                       : ((float *)x)[j + i * rows];
      if (spd && i == j)
        v = (double)rows;
      if (c->es == 8)
        ((double *)x)[i + j * rows] = v;
      else
        ((float *)x)[i + j * rows] = (float)v;
    }
}

static double get(const case_t *c, const void *x, int64_t k) {
  return c->es == 8 ? ((const double *)x)[k] : ((const float *)x)[k];
}

/* max over columns of ||A x - b||_1 / (||A||_1 ||x||_1 n eps). */
static double residual(const case_t *c, const void *x) {
  int64_t n = c->n;
  double anorm = 0, worst = 0;
  double eps = c->es == 8 ? 1.1102230246251565e-16 : 5.9604644775390625e-8;
  double *r = calloc((size_t)n, sizeof *r);
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++)
      s += fabs(get(c, c->a0, i + j * n));
    anorm = s > anorm ? s : anorm;
  }
  for (int64_t k = 0; k < c->nrhs; k++) {
    double xnorm = 0, rnorm = 0;
    for (int64_t i = 0; i < n; i++)
      r[i] = get(c, c->b0, i + k * n);
    for (int64_t j = 0; j < n; j++) {
      double xj = get(c, x, j + k * n);
      xnorm += fabs(xj);
      for (int64_t i = 0; i < n; i++)
        r[i] -= get(c, c->a0, i + j * n) * xj;
    }
    for (int64_t i = 0; i < n; i++)
      rnorm += fabs(r[i]);
    double q = rnorm / (anorm * xnorm * (double)n * eps);
    worst = q > worst || isnan(q) ? q : worst;
  }
  free(r);
  return worst;
}

static const char *row_name(int posv, int row) {
  static const char *names[2][ROWS] = {
      {"mlsba_gesv", "OpenBLAS ?gesv", "mlsba_getrs", "OpenBLAS ?getrs",
       "getrs one core"},
      {"mlsba_posv", "OpenBLAS ?posv", "mlsba_potrs", "OpenBLAS ?potrs",
       "potrs one core"}};
  return names[posv][row];
}

/* One round of one row: its seconds, or -1 after an error (printed). */
static double run_row(case_t *c, int row, int check) {
  size_t abytes = (size_t)(c->n * c->n) * c->es,
         bbytes = (size_t)(c->n * c->nrhs) * c->es;
  memcpy(c->fa, row < 2 ? c->a0 : c->f0, abytes);
  memcpy(c->fb, c->b0, bbytes);
  int n = (int)c->n, nrhs = (int)c->nrhs, err = 0;
  int64_t info = 0;
  mlsba_precision_t p = c->a->prec;
  double t0 = timing_now();
  switch (row) {
  case 0:
    err = c->posv ? mlsba_posv(c->ex, p, 'L', c->n, c->nrhs, c->fa, c->n, c->fb,
                               c->n, &info)
                  : mlsba_gesv(c->ex, p, c->n, c->nrhs, c->fa, c->n, c->ipiv,
                               c->fb, c->n, &info);
    break;
  case 1:
    info = c->posv ? openblas_posv(p, n, nrhs, c->fa, c->fb, c->cores)
                   : openblas_gesv(p, n, nrhs, c->fa, c->lpiv, c->fb, c->cores);
    break;
  case 2:
  case 4:
    err = c->posv
              ? mlsba_potrs(row == 2 ? c->ex : c->one, p, 'L', c->n, c->nrhs,
                            c->fa, c->n, c->fb, c->n, &info)
              : mlsba_getrs(row == 2 ? c->ex : c->one, p, 'N', c->n, c->nrhs,
                            c->fa, c->n, c->ipiv0, c->fb, c->n, &info);
    break;
  case 3:
    info = c->posv
               ? openblas_potrs(p, n, nrhs, c->fa, c->fb, c->cores)
               : openblas_getrs(p, n, nrhs, c->fa, c->lpiv, c->fb, c->cores);
    break;
  }
  double t = timing_now() - t0;
  if (err || info != 0) {
    fprintf(stderr, "bench-solve: %s: %s (info %lld)\n", row_name(c->posv, row),
            err ? mlsba_last_error() : "failed", (long long)info);
    return -1;
  }
  if (check) {
    double r = residual(c, c->fb);
    if (!(r < MLSBA_FACTOR_RESIDUAL_OK)) {
      fprintf(stderr, "bench-solve: %s: residual %g\n", row_name(c->posv, row),
              r);
      return -1;
    }
  }
  return t;
}

/* The factors the solve-only rows start from, and LAPACK's pivots. */
static int factor_once(case_t *c) {
  int64_t info = 0;
  memcpy(c->f0, c->a0, (size_t)(c->n * c->n) * c->es);
  int err = c->posv
                ? mlsba_potrf(c->ex, c->a->prec, 'L', c->n, c->f0, c->n, &info)
                : mlsba_getrf(c->ex, c->a->prec, c->n, c->n, c->f0, c->n,
                              c->ipiv0, &info);
  if (!err && !c->posv)
    err = mlsba_ipiv_to_lapack(c->n, c->ipiv0, c->lpiv);
  if (err || info)
    fprintf(stderr, "bench-solve: factors: %s (info %lld)\n",
            err ? mlsba_last_error() : "failed", (long long)info);
  return err || info;
}

static int run_case(case_t *c) {
  if (factor_once(c))
    return 1;
  double t[ROWS][MAX_ROUNDS], med[ROWS];
  /* libmlsba's rows, then OpenBLAS's, and a pause before every row:
   * BLIS's threads started right after OpenBLAS's threaded LAPACK ran
   * 5-10x slower here (a 2048 x 64 solve 0.13 s against 0.01 s two rows
   * later), OpenBLAS's threads being still on the cores; a program calls
   * one library or the other. They spin for 2^28 cycles of the time-stamp
   * counter after a call, 128 ms at this machine's 2.1 GHz: 0.2 s. */
  static const int order[ROWS] = {0, 2, 4, 1, 3};
  const struct timespec pause = {0, 200000000};
  for (int k = 0; k < c->a->rounds; k++)
    for (int i = 0; i < ROWS; i++) {
      int row = order[i];
      /* OpenBLAS's ?getrs takes its pivots from the factor_once; its
       * ?gesv writes its own, so the solve rows' are restored. */
      if (row == 3 && !c->posv)
        mlsba_ipiv_to_lapack(c->n, c->ipiv0, c->lpiv);
      nanosleep(&pause, NULL);
      if ((t[row][k] = run_row(c, row, k == 0)) < 0)
        return 1;
    }
  double n = (double)c->n, r = (double)c->nrhs;
  for (int row = 0; row < ROWS; row++) {
    med[row] = timing_median(t[row], (size_t)c->a->rounds);
    double flops =
        2 * n * n * r + (row < 2 ? n * n * n / (c->posv ? 3 : 1.5) : 0);
    printf("%6lld %5lld  %-16s %10.5f %8.2f", (long long)c->n,
           (long long)c->nrhs, row_name(c->posv, row), med[row],
           flops / med[row] / 1e9);
    if (row == 1 || row == 3)
      printf("   speed mlsba/OpenBLAS %.3f\n", med[row] / med[row - 1]);
    else if (row == 4)
      printf("   speed all/one core %.3f\n", med[row] / med[2]);
    else
      printf("\n");
  }
  return 0;
}

static int run_all(const args_t *a, mlsba_executor_t *ex, mlsba_executor_t *one,
                   unsigned cores) {
  int bad = 0;
  for (size_t i = 0; i < a->nsizes; i++)
    for (size_t j = 0; j < a->nnrhs; j++)
      for (int posv = 0; posv < 2; posv++) {
        case_t c = {.a = a,
                    .ex = ex,
                    .one = one,
                    .cores = cores,
                    .n = a->sizes[i],
                    .nrhs = a->nrhs[j],
                    .posv = posv,
                    .es = a->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4};
        size_t nn = (size_t)(c.n * c.n), nb = (size_t)(c.n * c.nrhs);
        c.a0 = malloc(nn * c.es), c.f0 = malloc(nn * c.es);
        c.fa = malloc(nn * c.es);
        c.b0 = malloc(nb * c.es), c.fb = malloc(nb * c.es);
        c.ipiv = calloc((size_t)c.n, sizeof *c.ipiv);
        c.ipiv0 = calloc((size_t)c.n, sizeof *c.ipiv0);
        c.lpiv = calloc((size_t)c.n, sizeof *c.lpiv);
        if (!c.a0 || !c.f0 || !c.fa || !c.b0 || !c.fb || !c.ipiv || !c.ipiv0 ||
            !c.lpiv) {
          fprintf(stderr, "bench-solve: out of memory\n");
          bad = 1;
        } else {
          fill(&c, c.a0, c.n, c.n, posv, 12345u);
          fill(&c, c.b0, c.n, c.nrhs, 0, 777u);
          bad |= run_case(&c);
        }
        free(c.a0), free(c.f0), free(c.fa), free(c.b0), free(c.fb);
        free(c.ipiv), free(c.ipiv0), free(c.lpiv);
      }
  return bad;
}

int main(int argc, char **argv) {
  args_t a;
  if (parse(argc, argv, &a))
    return 2;
  const char *why = NULL;
  if (openblas_load(&why)) {
    fprintf(stderr, "bench-solve: %s\n", why);
    return 1;
  }
  mlsba_platform_t *pl = NULL, *pl1 = NULL;
  mlsba_executor_t *ex = NULL, *one = NULL;
  int err = strcmp(a.platform, "auto") == 0
                ? mlsba_platform_discover(&pl)
                : mlsba_platform_load(a.platform, &pl);
  if (!err)
    err = mlsba_executor_create(pl, &ex);
  if (!err)
    err = mlsba_platform_parse("{\"devices\": [{\"name\": \"c0\", "
                               "\"type\": \"cpu\", \"core\": 0}]}",
                               "one core", &pl1);
  if (!err)
    err = mlsba_executor_create(pl1, &one);
  if (err) {
    fprintf(stderr, "bench-solve: %s\n", mlsba_last_error());
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
    mlsba_platform_destroy(pl1);
    return 1;
  }
  unsigned cores = 0;
  for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++)
    cores += mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU;
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  mlsba__rhs_set_split_block(a.split_block);
  char block[32] = "the library's";
  if (a.split_block)
    snprintf(block, sizeof block, "%lld", (long long)a.split_block);
  printf("# bench-solve, %s precision, %d rounds interleaved, medians\n"
         "# libmlsba: platform %s (%zu devices, %u cores), %s; rows split "
         "in blocks of %s\n# %s, %u "
         "threads\n#    n  nrhs  row                 seconds   GFLOPS\n",
         a.prec == MLSBA_PRECISION_DOUBLE ? "double" : "single", a.rounds,
         a.platform, mlsba_platform_num_devices(pl), cores, k.description,
         block, openblas_label(), cores ? cores : 1);
  int bad = run_all(&a, ex, one, cores ? cores : 1);
  mlsba_executor_destroy(one);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl1);
  mlsba_platform_destroy(pl);
  return bad;
}
