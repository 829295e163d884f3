/* The library's LAPACK (lib/devices/cpu/cpu_lapack.c): each call, through
 * the private OpenBLAS where it loads, gives the linked liblapack's
 * results on random panels in both precisions (the same pivots, the same
 * info on a block that is not positive definite), and two threads
 * factoring panels at once give what one gives alone; the fallback loads
 * reference LAPACK, and says why a library that is not one does not
 * serve. Each test runs in a fork of its own, so the choice of LAPACK is
 * made afresh in each. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/cpu/cpu_kernels.h"
#include "devices/cpu/cpu_openblas.h"
#include "devices/lapack.h"
#include "mlsba.h"
#include "support/lapack_linked.h"
#include "support/run_suite.h"

enum { M = 301, N = 48, LD = 307 };

static mlsba_precision_t prec_of(int dbl) {
  return dbl ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
}

static size_t es(int dbl) { return dbl ? sizeof(double) : sizeof(float); }

static double get(int dbl, const void *v, size_t i) {
  return dbl ? ((const double *)v)[i] : (double)((const float *)v)[i];
}

static void set(int dbl, void *v, size_t i, double x) {
  if (dbl)
    ((double *)v)[i] = x;
  else
    ((float *)v)[i] = (float)x;
}

/* n values uniform in [-1, 1) from seed (a linear congruence). */
static void *random_values(int dbl, size_t n, unsigned seed) {
  void *v = malloc(es(dbl) * n);
  ck_assert_ptr_nonnull(v);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    set(dbl, v, i, (double)(seed >> 8) / (double)(1u << 23) - 1.0);
  }
  return v;
}

static void *copy(const void *v, size_t bytes) {
  void *c = malloc(bytes);
  ck_assert_ptr_nonnull(c);
  memcpy(c, v, bytes);
  return c;
}

/* The largest difference of the r x c leading blocks (ld), relative to
 * the largest entry of b. */
static double differ(int dbl, const void *a, const void *b, int r, int c,
                     int ld) {
  double d = 0, top = 1e-300;
  for (int j = 0; j < c; j++)
    for (int i = 0; i < r; i++) {
      size_t k = (size_t)j * (size_t)ld + (size_t)i;
      d = fmax(d, fabs(get(dbl, a, k) - get(dbl, b, k)));
      top = fmax(top, fabs(get(dbl, b, k)));
    }
  return d / top;
}

static double tolerance(int dbl) { return dbl ? 1e-12 : 2e-4; }

/* An n x n symmetric positive definite block (ld), diagonally dominant. */
static void *spd(int dbl, int n, int ld, unsigned seed) {
  void *a = random_values(dbl, (size_t)ld * (size_t)n, seed);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      set(dbl, a, (size_t)i * (size_t)ld + (size_t)j,
          get(dbl, a, (size_t)j * (size_t)ld + (size_t)i));
  for (int j = 0; j < n; j++)
    set(dbl, a, (size_t)j * (size_t)ld + (size_t)j, (double)n + 1.0);
  return a;
}

/* The label names the private OpenBLAS exactly when it loads here. */
START_TEST(the_label_says_which_lapack_serves) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1); /* no timing: a quick choice */
  const char *label = mlsba__lapack_label(), *why = NULL;
  int loaded = mlsba__openblas_load(mlsba__cpu_features(), &why) == 0;
  printf("the panels' LAPACK: %s\n", label);
  ck_assert_int_eq(strncmp(label, "OpenBLAS ", 9) == 0, loaded);
  if (loaded)
    ck_assert_str_eq(label, mlsba__openblas_label());
  else
    ck_assert_msg(strstr(label, "reference LAPACK, ") == label ||
                      strstr(label, "the system's LAPACK, ") == label,
                  "%s", label);
  ck_assert_int_eq(mlsba__lapack_check("here"), 0);
}
END_TEST

/* The fallback's loading: reference LAPACK loads with every routine; a
 * file that is not there, and a library without LAPACK, are refused with
 * a reason that names them. */
START_TEST(the_fallback_loads_reference_lapack_and_says_why_not) {
  char why[512];
#ifdef MLSBA_REFERENCE_LAPACK
  ck_assert_int_eq(mlsba__lapack_probe(MLSBA_REFERENCE_LAPACK, why, sizeof why),
                   0);
  ck_assert_str_eq(why, "");
#endif
  const char *gone = "/nonexistent/mlsba/liblapack.so.3";
  ck_assert_int_eq(mlsba__lapack_probe(gone, why, sizeof why), MLSBA_ENOTSUP);
  ck_assert_msg(strstr(why, gone) && strstr(why, "did not load"), "%s", why);
  ck_assert_int_eq(mlsba__lapack_probe("libm.so.6", why, sizeof why),
                   MLSBA_ENOTSUP);
  ck_assert_msg(strstr(why, "libm.so.6 lacks sgetf2_"), "%s", why);
}
END_TEST

/* ?getrf and ?potrf (the MPI layer's node columns) as the linked ones:
 * the same pivots and factors, the same info where a minor is not
 * positive definite. */
START_TEST(getrf_and_potrf_give_the_linked_factors) {
  int dbl = _i, m = M, n = N, ld = LD, info = 0;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = random_values(dbl, (size_t)LD * N, 81 + (unsigned)dbl);
  void *b = copy(a, es(dbl) * LD * N);
  int ipa[N], ipb[N];
  ck_assert_int_eq(mlsba__lapack_getrf(prec_of(dbl), M, N, a, LD, ipa), 0);
  if (dbl)
    dgetrf_(&m, &n, b, &ld, ipb, &info);
  else
    sgetrf_(&m, &n, b, &ld, ipb, &info);
  ck_assert_int_eq(info, 0);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(ipa[i], ipb[i]);
  ck_assert_double_lt(differ(dbl, a, b, M, N, LD), tolerance(dbl));
  free(a);
  free(b);
  for (int bad = 0; bad < 2; bad++) {
    a = spd(dbl, N, LD, 91 + (unsigned)dbl);
    if (bad)
      set(dbl, a, (size_t)29 * LD + 29, -1.0);
    b = copy(a, es(dbl) * LD * N);
    int got = mlsba__lapack_potrf(prec_of(dbl), 'L', N, a, LD);
    if (dbl)
      dpotrf_("L", &n, b, &ld, &info, 1);
    else
      spotrf_("L", &n, b, &ld, &info, 1);
    ck_assert_int_eq(got, bad ? 30 : 0);
    ck_assert_int_eq(got, info);
    if (!bad)
      ck_assert_double_lt(differ(dbl, a, b, N, N, LD), tolerance(dbl));
    free(a);
    free(b);
  }
}
END_TEST

/* ?orgqr (the QR residual's Q) forms the linked one's Q from the same
 * reflectors. */
START_TEST(orgqr_forms_the_linked_q) {
  int dbl = _i, m = M, n = N, ld = LD, info = 0, lwork = 64 * N;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = random_values(dbl, (size_t)LD * N, 101 + (unsigned)dbl);
  void *tau = calloc(N, es(dbl)), *work = calloc((size_t)lwork, es(dbl));
  ck_assert(tau && work);
  ck_assert_int_eq(
      mlsba__lapack_geqrf(prec_of(dbl), M, N, a, LD, tau, work, lwork), 0);
  void *b = copy(a, es(dbl) * LD * N);
  ck_assert_int_eq(
      mlsba__lapack_orgqr(prec_of(dbl), M, N, N, a, LD, tau, work, lwork), 0);
  if (dbl)
    dorgqr_(&m, &n, &n, b, &ld, tau, work, &lwork, &info);
  else
    sorgqr_(&m, &n, &n, b, &ld, tau, work, &lwork, &info);
  ck_assert_int_eq(info, 0);
  ck_assert_double_lt(differ(dbl, a, b, M, N, LD), tolerance(dbl));
  /* Q's columns are orthonormal: its first column has norm 1. */
  double s = 0;
  for (int i = 0; i < M; i++)
    s += get(dbl, a, (size_t)i) * get(dbl, a, (size_t)i);
  ck_assert_double_lt(fabs(s - 1), dbl ? 1e-12 : 1e-5);
  free(a);
  free(b);
  free(tau);
  free(work);
}
END_TEST

START_TEST(getf2_gives_the_linked_pivots_and_factors) {
  int dbl = _i, m = M, n = N, ld = LD, info = 0;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = random_values(dbl, (size_t)LD * N, 11 + (unsigned)dbl);
  void *b = copy(a, es(dbl) * LD * N);
  int ipa[N], ipb[N];
  ck_assert_int_eq(mlsba__lapack_getf2(prec_of(dbl), M, N, a, LD, ipa), 0);
  if (dbl)
    dgetf2_(&m, &n, b, &ld, ipb, &info);
  else
    sgetf2_(&m, &n, b, &ld, ipb, &info);
  ck_assert_int_eq(info, 0);
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(ipa[i], ipb[i]);
  ck_assert_double_lt(differ(dbl, a, b, M, N, LD), tolerance(dbl));
  /* A zero column: the same info (its order) from both. */
  memset((char *)a + es(dbl) * LD * 7, 0, es(dbl) * LD);
  memcpy(b, a, es(dbl) * LD * N);
  int got = mlsba__lapack_getf2(prec_of(dbl), M, N, a, LD, ipa);
  if (dbl)
    dgetf2_(&m, &n, b, &ld, ipb, &info);
  else
    sgetf2_(&m, &n, b, &ld, ipb, &info);
  ck_assert_int_eq(got, info);
  ck_assert_int_gt(got, 0);
  free(a);
  free(b);
}
END_TEST

START_TEST(potf2_gives_the_linked_factor_and_info) {
  int dbl = _i / 2, n = N, ld = LD, info = 0;
  char uplo = _i % 2 ? 'U' : 'L';
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = spd(dbl, N, LD, 21 + (unsigned)_i);
  void *b = copy(a, es(dbl) * LD * N);
  ck_assert_int_eq(mlsba__lapack_potf2(prec_of(dbl), uplo, N, a, LD), 0);
  if (dbl)
    dpotf2_(&uplo, &n, b, &ld, &info, 1);
  else
    spotf2_(&uplo, &n, b, &ld, &info, 1);
  ck_assert_int_eq(info, 0);
  ck_assert_double_lt(differ(dbl, a, b, N, N, LD), tolerance(dbl));
  free(a);
  free(b);
  /* Not positive definite from the 18th leading minor on. */
  a = spd(dbl, N, LD, 31 + (unsigned)_i);
  set(dbl, a, (size_t)17 * LD + 17, -1.0);
  b = copy(a, es(dbl) * LD * N);
  int got = mlsba__lapack_potf2(prec_of(dbl), uplo, N, a, LD);
  if (dbl)
    dpotf2_(&uplo, &n, b, &ld, &info, 1);
  else
    spotf2_(&uplo, &n, b, &ld, &info, 1);
  ck_assert_int_eq(got, 18);
  ck_assert_int_eq(got, info);
  free(a);
  free(b);
}
END_TEST

START_TEST(geqrf_and_larft_give_the_linked_reflectors) {
  int dbl = _i, m = M, n = N, ld = LD, info = 0, lwork = 64 * N;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = random_values(dbl, (size_t)LD * N, 41 + (unsigned)dbl);
  void *b = copy(a, es(dbl) * LD * N);
  void *ta = calloc(N, es(dbl)), *tb = calloc(N, es(dbl));
  void *work = calloc((size_t)lwork, es(dbl));
  void *t1 = calloc((size_t)N * N, es(dbl)),
       *t2 = calloc((size_t)N * N, es(dbl));
  ck_assert(ta && tb && work && t1 && t2);
  ck_assert_int_eq(
      mlsba__lapack_geqrf(prec_of(dbl), M, N, a, LD, ta, work, lwork), 0);
  if (dbl)
    dgeqrf_(&m, &n, b, &ld, tb, work, &lwork, &info);
  else
    sgeqrf_(&m, &n, b, &ld, tb, work, &lwork, &info);
  ck_assert_int_eq(info, 0);
  ck_assert_double_lt(differ(dbl, a, b, M, N, LD), tolerance(dbl));
  ck_assert_double_lt(differ(dbl, ta, tb, N, 1, N), tolerance(dbl));
  mlsba__lapack_larft(prec_of(dbl), M, N, a, LD, ta, t1, N);
  if (dbl)
    dlarft_("F", "C", &m, &n, b, &ld, tb, t2, &n, 1, 1);
  else
    slarft_("F", "C", &m, &n, b, &ld, tb, t2, &n, 1, 1);
  ck_assert_double_lt(differ(dbl, t1, t2, N, N, N), tolerance(dbl));
  free(a);
  free(b);
  free(ta);
  free(tb);
  free(work);
  free(t1);
  free(t2);
}
END_TEST

START_TEST(lascl_scales_as_the_linked_one) {
  int dbl = _i, m = M, n = N, ld = LD, zero = 0, info = 0;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  void *a = random_values(dbl, (size_t)LD * N, 51 + (unsigned)dbl);
  void *b = copy(a, es(dbl) * LD * N);
  double from = dbl ? 1e-150 : 1e-15, to = dbl ? 1e+150 : 1e+15;
  ck_assert_int_eq(mlsba__lapack_lascl(prec_of(dbl), from, to, M, N, a, LD), 0);
  if (dbl) {
    dlascl_("G", &zero, &zero, &from, &to, &m, &n, b, &ld, &info, 1);
  } else {
    float f = (float)from, t = (float)to;
    slascl_("G", &zero, &zero, &f, &t, &m, &n, b, &ld, &info, 1);
  }
  ck_assert_int_eq(info, 0);
  ck_assert_int_eq(memcmp(a, b, es(dbl) * LD * N), 0); /* elementwise */
  ck_assert(isfinite(get(dbl, a, 0)) && fabs(get(dbl, a, 0)) > 1);
  free(a);
  free(b);
}
END_TEST

/* One thread's panels: ROUNDS LU and Cholesky factorizations of its own
 * panel and T of a block of reflectors (?larft, as mlsba_ormqr's parts
 * form theirs side by side), each against the serial result. */
typedef struct {
  int dbl, rounds, wrong;
  void *lu, *lu_ref, *sq, *sq_ref, *tau, *t_ref;
  int ipiv_ref[N];
} panels_t;

static void *factor_panels(void *arg) {
  panels_t *w = arg;
  size_t lu_bytes = es(w->dbl) * LD * N, sq_bytes = es(w->dbl) * LD * N;
  size_t t_bytes = es(w->dbl) * N * N;
  void *a = malloc(lu_bytes), *s = malloc(sq_bytes), *t = malloc(t_bytes);
  if (!a || !s || !t) {
    w->wrong = -1;
    free(a);
    free(s);
    free(t);
    return NULL;
  }
  for (int r = 0; r < w->rounds; r++) {
    int ipiv[N];
    memcpy(a, w->lu, lu_bytes);
    (void)mlsba__lapack_getf2(prec_of(w->dbl), M, N, a, LD, ipiv);
    w->wrong += memcmp(a, w->lu_ref, lu_bytes) != 0 ||
                memcmp(ipiv, w->ipiv_ref, sizeof ipiv) != 0;
    memcpy(s, w->sq, sq_bytes);
    (void)mlsba__lapack_potf2(prec_of(w->dbl), 'L', N, s, LD);
    w->wrong += memcmp(s, w->sq_ref, sq_bytes) != 0;
    memset(t, 0, t_bytes);
    mlsba__lapack_larft(prec_of(w->dbl), M, N, w->lu, LD, w->tau, t, N);
    w->wrong += memcmp(t, w->t_ref, t_bytes) != 0;
  }
  free(a);
  free(s);
  free(t);
  return NULL;
}

START_TEST(two_threads_factor_panels_at_once) {
  enum { ROUNDS = 40 };
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "auto", 1);
  panels_t w[2];
  for (int t = 0; t < 2; t++) {
    int dbl = t == 0 ? 1 : _i; /* double and double, or double and single */
    size_t bytes = es(dbl) * LD * N;
    w[t] = (panels_t){.dbl = dbl, .rounds = ROUNDS};
    w[t].lu = random_values(dbl, (size_t)LD * N, 61 + (unsigned)t);
    w[t].sq = spd(dbl, N, LD, 71 + (unsigned)t);
    w[t].lu_ref = copy(w[t].lu, bytes);
    w[t].sq_ref = copy(w[t].sq, bytes);
    (void)mlsba__lapack_getf2(prec_of(dbl), M, N, w[t].lu_ref, LD,
                              w[t].ipiv_ref);
    ck_assert_int_eq(mlsba__lapack_potf2(prec_of(dbl), 'L', N, w[t].sq_ref, LD),
                     0);
    /* Any lower trapezoid and scalars make a T: the panel's own, and
     * scalars in [-1, 1). */
    w[t].tau = random_values(dbl, N, 75 + (unsigned)t);
    w[t].t_ref = calloc((size_t)N * N, es(dbl));
    ck_assert_ptr_nonnull(w[t].t_ref);
    mlsba__lapack_larft(prec_of(dbl), M, N, w[t].lu, LD, w[t].tau, w[t].t_ref,
                        N);
  }
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, factor_panels, &w[t]), 0);
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < 2; t++) {
    ck_assert_msg(w[t].wrong == 0, "thread %d: %d of %d rounds differ", t,
                  w[t].wrong, ROUNDS);
    free(w[t].lu);
    free(w[t].sq);
    free(w[t].lu_ref);
    free(w[t].sq_ref);
    free(w[t].tau);
    free(w[t].t_ref);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("lapack");
  TCase *tc = tcase_create("lapack");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, the_label_says_which_lapack_serves);
  tcase_add_test(tc, the_fallback_loads_reference_lapack_and_says_why_not);
  tcase_add_loop_test(tc, getrf_and_potrf_give_the_linked_factors, 0, 2);
  tcase_add_loop_test(tc, orgqr_forms_the_linked_q, 0, 2);
  tcase_add_loop_test(tc, getf2_gives_the_linked_pivots_and_factors, 0, 2);
  tcase_add_loop_test(tc, potf2_gives_the_linked_factor_and_info, 0, 4);
  tcase_add_loop_test(tc, geqrf_and_larft_give_the_linked_reflectors, 0, 2);
  tcase_add_loop_test(tc, lascl_scales_as_the_linked_one, 0, 2);
  tcase_add_loop_test(tc, two_threads_factor_panels_at_once, 0, 2);
  suite_add_tcase(s, tc);
  return run_suite(s);
}
