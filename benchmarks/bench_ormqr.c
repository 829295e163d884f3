/* bench-ormqr: where mlsba_ormqr should start splitting C between the
 * cores (lib/factor/ormqr.c: ORMQR_SPLIT_FROM). Q^T C, Q of an m x k QR
 * (mlsba_geqrf), C m x w for each width w, three ways in interleaved
 * rounds: on the platform libmlsba discovers as shipped (its cores share
 * the products from the threshold on), the same platform split at every
 * width (the threshold moved to 1), and a platform of core 0 alone (one
 * thread whatever w); prints the medians and one core's time over the
 * split's and over the default's (above 1: splitting pays at that
 * width).
 *
 *   bench-ormqr [--rows M] [--reflectors K] [--width W]...
 *               [--precision single|double] [--rounds R]
 *
 * Defaults: m = 4096, k = 512, widths 1 2 4 8 12 16 24 32 64, double, 15
 * rounds. Each result is checked against the one core's on the first
 * round (the split must not change the numbers beyond rounding). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_options.h"
#include "common/timing.h"
#include "factor/ormqr.h"
#include "mlsba.h"

enum { MAX_WIDTHS = 16, MAX_ROUNDS = 64 };

typedef struct {
  int64_t m, k, widths[MAX_WIDTHS];
  size_t nwidths;
  mlsba_precision_t prec;
  int rounds;
} args_t;

static int usage(const char *why) {
  fprintf(stderr,
          "bench-ormqr: %s\nusage: bench-ormqr [--rows M] [--reflectors K] "
          "[--width W]... [--precision single|double] [--rounds R]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args_t *a) {
  *a = (args_t){
      .m = 4096, .k = 512, .prec = MLSBA_PRECISION_DOUBLE, .rounds = 15};
  for (int i = 1; i < argc;) {
    bench_option_t o;
    if (bench_next_option(argc, argv, &i, &o))
      return usage("a value is missing after an option");
    long long x = o.number;
    int number = o.is_number;
    if (!strcmp(o.name, "--rows") && number && x > 0 && x <= 65536)
      a->m = x;
    else if (!strcmp(o.name, "--reflectors") && number && x > 0 && x <= 65536)
      a->k = x;
    else if (!strcmp(o.name, "--width") && number && x > 0 && x <= 65536 &&
             a->nwidths < MAX_WIDTHS)
      a->widths[a->nwidths++] = x;
    else if (!strcmp(o.name, "--precision") && bench_precision(o.value) >= 0)
      a->prec = (mlsba_precision_t)bench_precision(o.value);
    else if (!strcmp(o.name, "--rounds") && number && x > 0 && x <= MAX_ROUNDS)
      a->rounds = (int)x;
    else
      return usage("unknown option or bad value");
  }
  if (a->k > a->m)
    return usage("--reflectors must be at most --rows");
  if (a->nwidths == 0) {
    static const int64_t dflt[] = {1, 2, 4, 8, 12, 16, 24, 32, 64};
    memcpy(a->widths, dflt, sizeof dflt);
    a->nwidths = sizeof dflt / sizeof *dflt;
  }
  return 0;
}

/* Values in [-1, 1), in either precision. */
static void fill(void *x, size_t count, size_t es, unsigned seed) {
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1103515245u + 12345u;
    double v = ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
    if (es == 8)
      ((double *)x)[i] = v;
    else
      ((float *)x)[i] = (float)v;
  }
}

static double value(const void *x, size_t i, size_t es) {
  return es == 8 ? ((const double *)x)[i] : ((const float *)x)[i];
}

int main(int argc, char **argv) {
  args_t a;
  if (parse(argc, argv, &a))
    return 2;
  size_t es = a.prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  int64_t m = a.m, k = a.k, wmax = 0;
  for (size_t i = 0; i < a.nwidths; i++)
    wmax = a.widths[i] > wmax ? a.widths[i] : wmax;
  mlsba_platform_t *pl = NULL, *pl1 = NULL;
  mlsba_executor_t *ex = NULL, *one = NULL;
  int err = mlsba_platform_discover(&pl);
  if (!err)
    err = mlsba_executor_create(pl, &ex);
  if (!err)
    err = mlsba_platform_parse("{\"devices\": [{\"name\": \"c0\", "
                               "\"type\": \"cpu\", \"core\": 0}]}",
                               "one core", &pl1);
  if (!err)
    err = mlsba_executor_create(pl1, &one);
  void *qr = malloc((size_t)(m * k) * es), *tau = malloc((size_t)k * es);
  void *c0 = malloc((size_t)(m * wmax) * es);
  void *c[2] = {malloc((size_t)(m * wmax) * es),
                malloc((size_t)(m * wmax) * es)};
  int64_t info = 0;
  if (!err && (!qr || !tau || !c0 || !c[0] || !c[1])) {
    fprintf(stderr, "bench-ormqr: out of memory\n");
    return 1;
  }
  if (!err) {
    fill(qr, (size_t)(m * k), es, 12345);
    fill(c0, (size_t)(m * wmax), es, 777);
    err = mlsba_geqrf(ex, a.prec, m, k, qr, m, tau, &info);
  }
  if (err) {
    fprintf(stderr, "bench-ormqr: %s\n", mlsba_last_error());
    return 1;
  }
  printf("Q^T C, Q of a %lld x %lld QR, %s; medians of %d interleaved "
         "rounds\n%6s %11s %11s %11s %9s %9s\n",
         (long long)m, (long long)k,
         a.prec == MLSBA_PRECISION_DOUBLE ? "double" : "single", a.rounds,
         "width", "default s", "split s", "one core s", "one/split",
         "one/dflt");
  int ok = 1;
  for (size_t i = 0; i < a.nwidths; i++) {
    int64_t w = a.widths[i];
    double t[3][MAX_ROUNDS];
    mlsba_executor_t *on[3] = {ex, ex, one};
    for (int r = 0; r < a.rounds; r++)
      for (int d = 0; d < 3; d++) {
        void *cd = c[d == 2];
        memcpy(cd, c0, (size_t)(m * w) * es);
        mlsba__ormqr_set_split_from(d == 1 ? 1 : 0);
        double t0 = timing_now();
        err = mlsba_ormqr(on[d], a.prec, 'L', 'T', m, w, k, qr, m, tau, cd, m,
                          &info);
        t[d][r] = timing_now() - t0;
        mlsba__ormqr_set_split_from(0);
        if (err) {
          fprintf(stderr, "bench-ormqr: %s\n", mlsba_last_error());
          return 1;
        }
      }
    double diff = 0, norm = 0; /* the last round's results, side by side */
    for (size_t e = 0; e < (size_t)(m * w); e++) {
      diff = fmax(diff, fabs(value(c[0], e, es) - value(c[1], e, es)));
      norm = fmax(norm, fabs(value(c[1], e, es)));
    }
    double eps = es == 8 ? 2.2e-16 : 1.2e-7;
    int same = diff <= 64 * eps * (double)k * (norm > 1 ? norm : 1);
    ok &= same;
    double dflt = timing_median(t[0], (size_t)a.rounds),
           split = timing_median(t[1], (size_t)a.rounds),
           single = timing_median(t[2], (size_t)a.rounds);
    printf("%6lld %11.6f %11.6f %11.6f %9.3f %9.3f%s\n", (long long)w, dflt,
           split, single, single / split, single / dflt,
           same ? "" : "  RESULTS DIFFER");
  }
  mlsba_executor_destroy(ex);
  mlsba_executor_destroy(one);
  mlsba_platform_destroy(pl);
  mlsba_platform_destroy(pl1);
  free(qr);
  free(tau);
  free(c0);
  free(c[0]);
  free(c[1]);
  return ok ? 0 : 1;
}
