/* The CPU's kernels (lib/devices/cpu/cpu_kernels.c, cpu_blas.c,
 * cpu_kernel_cache.c, cpu_openblas.c): the fallback order of the
 * sub-configurations by the CPU's features, the shape classes, a choice per
 * class never outside what the CPU executes, every reachable kernel set
 * giving the reference product, the private OpenBLAS against BLIS (and from
 * two threads at once), the environment controls and the cache. Each test
 * runs in a fork of its own (Check's fork mode), so the choice, made once
 * per process, is made afresh in each. */
#define _GNU_SOURCE /* sched_setaffinity, dlmopen */
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/cpu/cpu_blas.h"
#include "devices/cpu/cpu_kernel_cache.h"
#include "devices/cpu/cpu_kernels.h"
#include "devices/cpu/cpu_openblas.h"
#include "mlsba.h"
#include "support/run_suite.h"

static const unsigned ALL = MLSBA__CPU_SSSE3 | MLSBA__CPU_AVX | MLSBA__CPU_FMA |
                            MLSBA__CPU_AVX2 | MLSBA__CPU_AVX512;

/* The candidates for `features`, as names joined by spaces. */
static void candidates(unsigned features, char *out, size_t size) {
  const mlsba__cpu_config_t *c[16];
  size_t n = mlsba__cpu_kernel_candidates(features, c, 16);
  out[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    ck_assert_uint_eq(c[i]->needs & ~features, 0); /* never beyond the CPU */
    strncat(out, i ? " " : "", size - strlen(out) - 1);
    strncat(out, c[i]->name, size - strlen(out) - 1);
  }
}

START_TEST(candidates_follow_the_fallback_order) {
  char s[128];
  candidates(ALL, s, sizeof s);
  ck_assert_str_eq(s, "skx zen3 haswell");
  candidates(ALL & ~MLSBA__CPU_AVX512, s, sizeof s);
  ck_assert_str_eq(s, "zen3 haswell");
  /* AVX2 without FMA runs none of the AVX2 kernels (they use FMA). */
  candidates(ALL & ~(MLSBA__CPU_AVX512 | MLSBA__CPU_FMA), s, sizeof s);
  ck_assert_str_eq(s, "sandybridge");
  candidates(MLSBA__CPU_SSSE3 | MLSBA__CPU_AVX, s, sizeof s);
  ck_assert_str_eq(s, "sandybridge");
  candidates(MLSBA__CPU_SSSE3, s, sizeof s);
  ck_assert_str_eq(s, "penryn");
  candidates(0, s, sizeof s);
  ck_assert_str_eq(s, "generic");
  /* AVX-512 reported without AVX2 (a masked or odd CPU): not skx. */
  candidates(MLSBA__CPU_AVX512 | MLSBA__CPU_AVX | MLSBA__CPU_SSSE3, s,
             sizeof s);
  ck_assert_str_eq(s, "sandybridge");
}
END_TEST

START_TEST(features_are_the_cpus_less_the_hidden) {
  unsigned f = mlsba__cpu_features();
#if defined(__x86_64__)
  __builtin_cpu_init();
  ck_assert_int_eq(!!(f & MLSBA__CPU_AVX2), !!__builtin_cpu_supports("avx2"));
  ck_assert_int_eq(!!(f & MLSBA__CPU_AVX512),
                   !!(__builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl")));
#endif
  setenv("MLSBA_CPU_HIDE", "avx512", 1);
  ck_assert_uint_eq(mlsba__cpu_features(), f & ~MLSBA__CPU_AVX512);
  /* Hiding a family's base hides what is built on it. */
  setenv("MLSBA_CPU_HIDE", "avx", 1);
  ck_assert_uint_eq(mlsba__cpu_features(), f & MLSBA__CPU_SSSE3);
  setenv("MLSBA_CPU_HIDE", "avx2,,fma", 1);
  ck_assert_uint_eq(
      mlsba__cpu_features(),
      f & ~(MLSBA__CPU_AVX2 | MLSBA__CPU_FMA | MLSBA__CPU_AVX512));
  /* A list naming something unknown (a misspelling) hides nothing: it
   * must not pass for a test of the fallback. */
  setenv("MLSBA_CPU_HIDE", "avx-512", 1);
  ck_assert_uint_eq(mlsba__cpu_features(), f);
  setenv("MLSBA_CPU_HIDE", "fma,nonsense", 1);
  ck_assert_uint_eq(mlsba__cpu_features(), f);
}
END_TEST

/* A misspelt MLSBA_CPU_HIDE is refused in the reason (a library cannot
 * print), and the choice is made on the whole CPU. */
START_TEST(an_unknown_hidden_feature_is_refused_in_the_reason) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "generic", 1); /* nothing timed */
  setenv("MLSBA_CPU_HIDE", "avx-512", 1);
  const char *source = NULL;
  double choice_s = -1, setup_s = -1;
  mlsba_cpu_kernels_choice(&source, &choice_s, &setup_s);
  ck_assert_str_eq(source, "forced");
  ck_assert(choice_s == 0 && setup_s >= 0);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  ck_assert_msg(strstr(k.reason, "MLSBA_CPU_HIDE ignored") &&
                    strstr(k.reason, "\"avx-512\""),
                "reason: %s", k.reason);
  ck_assert_ptr_nonnull(strstr(k.reason, "forced by MLSBA_CPU_KERNELS"));
  unsetenv("MLSBA_CPU_HIDE");
  unsigned whole = mlsba__cpu_features();
  setenv("MLSBA_CPU_HIDE", "avx-512", 1);
  ck_assert_uint_eq(mlsba__cpu_features(), whole);
}
END_TEST

/* The class of a call by its shape, at the edges of each class. */
START_TEST(a_calls_shape_gives_its_class) {
  static const struct {
    mlsba__cpu_op_t op;
    int64_t m, n, k;
    mlsba__cpu_class_t c;
  } cases[] = {
      /* the GEMM load's block of columns, the MPI master-worker's */
      {MLSBA__CPU_OP_GEMM, 2048, 1024, 2048, MLSBA__CPU_PRODUCT},
      {MLSBA__CPU_OP_GEMM, 768, 1, 768, MLSBA__CPU_PRODUCT},
      {MLSBA__CPU_OP_GEMM, 4096, 4096, 384, MLSBA__CPU_PRODUCT},
      /* a factorization's update with its block, the MPI node kernel's */
      {MLSBA__CPU_OP_GEMM, 3900, 1950, 192, MLSBA__CPU_UPDATE},
      {MLSBA__CPU_OP_GEMM, 256, 256, 383, MLSBA__CPU_UPDATE},
      {MLSBA__CPU_OP_GEMMT, 892, 892, 128, MLSBA__CPU_UPDATE},
      {MLSBA__CPU_OP_GEMM, 3840, 256, 256, MLSBA__CPU_UPDATE}, /* lookahead */
      /* inside a panel, and the narrow pieces of an update */
      {MLSBA__CPU_OP_GEMM, 3968, 64, 64, MLSBA__CPU_PANEL},
      {MLSBA__CPU_OP_GEMM, 255, 4096, 128, MLSBA__CPU_PANEL},
      {MLSBA__CPU_OP_GEMM, 4096, 255, 256, MLSBA__CPU_PANEL},
      {MLSBA__CPU_OP_GEMM, 0, 0, 0, MLSBA__CPU_PANEL},
      /* the solves, whatever their shape */
      {MLSBA__CPU_OP_TRSM, 128, 4096, 0, MLSBA__CPU_TRIANGLE},
      {MLSBA__CPU_OP_TRMM, 3968, 192, 4096, MLSBA__CPU_TRIANGLE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ck_assert_msg(mlsba__cpu_shape_class(cases[i].op, cases[i].m, cases[i].n,
                                         cases[i].k) == cases[i].c,
                  "case %zu", i);
  ck_assert_str_eq(mlsba__cpu_class_name(MLSBA__CPU_PRODUCT), "product");
  ck_assert_str_eq(mlsba__cpu_class_name(MLSBA__CPU_UPDATE), "update");
  ck_assert_str_eq(mlsba__cpu_class_name(MLSBA__CPU_TRIANGLE), "triangle");
  ck_assert_str_eq(mlsba__cpu_class_name(MLSBA__CPU_PANEL), "panel");
}
END_TEST

/* The features a chosen name needs (auto: BLIS's own, always runnable). */
static unsigned needs_of(const char *name) {
  const mlsba__cpu_config_t *c[16];
  size_t n = mlsba__cpu_kernel_candidates(ALL, c, 16);
  static const struct {
    const char *name;
    unsigned needs;
  } low[] = {{"sandybridge", MLSBA__CPU_AVX},
             {"penryn", MLSBA__CPU_SSSE3},
             {"generic", 0},
             {"auto", 0},
             /* the private OpenBLAS: Haswell kernels at the least */
             {"openblas", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
             /* BLIS's own choices that libmlsba does not time itself */
             {"knl", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
             {"zen", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
             {"zen2", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
             {"excavator", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
             {"steamroller", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
             {"piledriver", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
             {"bulldozer", MLSBA__CPU_AVX}};
  for (size_t i = 0; i < n; i++)
    if (strcmp(c[i]->name, name) == 0)
      return c[i]->needs;
  for (size_t i = 0; i < sizeof low / sizeof low[0]; i++)
    if (strcmp(low[i].name, name) == 0)
      return low[i].needs;
  ck_abort_msg("unknown kernel name %s", name);
  return 0;
}

/* Max over C of |c - ref| / (sum_p |a_ip b_pj| + tiny), against a long
 * double product of op(A) op(B). */
static double gemm_residual(mlsba_precision_t p, char ta, char tb, int m, int n,
                            int k, const double *a, const double *b,
                            const void *c) {
  double worst = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long double ref = 0, mag = 0;
      for (int q = 0; q < k; q++) {
        double x = ta == 'N' ? a[i + q * m] : a[q + i * k];
        double y = tb == 'N' ? b[q + j * k] : b[j + q * n];
        ref += (long double)x * y;
        mag += fabsl((long double)x * y);
      }
      double got = p == MLSBA_PRECISION_DOUBLE ? ((const double *)c)[i + j * m]
                                               : ((const float *)c)[i + j * m];
      double r = (double)(fabsl(got - ref) / (mag + 1e-300L));
      worst = r > worst ? r : worst;
    }
  return worst;
}

/* Every transpose pair and both precisions through mlsba_cpu_gemm, with
 * the kernels of this process, against the reference. */
static void check_products(void) {
  enum { M = 67, N = 45, K = 131 }; /* not multiples of any block size */
  double *a = malloc(sizeof(double) * M * K),
         *b = malloc(sizeof(double) * K * N);
  float *af = malloc(sizeof(float) * M * K),
        *bf = malloc(sizeof(float) * K * N);
  double *c = malloc(sizeof(double) * M * N);
  ck_assert(a && b && af && bf && c);
  for (int i = 0; i < M * K; i++)
    af[i] = (float)(a[i] = (double)((i * 37) % 101) / 50.0 - 1.0);
  for (int i = 0; i < K * N; i++)
    bf[i] = (float)(b[i] = (double)((i * 53) % 97) / 48.0 - 1.0);
  const char *trans = "NT";
  for (int p = 0; p < 2; p++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        mlsba_precision_t prec = (mlsba_precision_t)p;
        char x = trans[ta], y = trans[tb];
        int lda = x == 'N' ? M : K, ldb = y == 'N' ? K : N;
        ck_assert_int_eq(
            mlsba_cpu_gemm(prec, x, y, M, N, K, 1.0, p ? (void *)a : (void *)af,
                           lda, p ? (void *)b : (void *)bf, ldb, 0.0, c, M, 1),
            0);
        double u = p ? 0x1p-53 : 0x1p-24;
        double r = gemm_residual(prec, x, y, M, N, K, a, b, c);
        ck_assert_msg(r <= 4.0 * K * u, "%s %c%c: residual %g",
                      p ? "double" : "single", x, y, r);
      }
  free(a);
  free(b);
  free(af);
  free(bf);
  free(c);
}

/* Every class of both precisions runs kernels this CPU executes, and
 * never OpenBLAS's AVX-512 kernels on a CPU without AVX-512. */
static void check_classes(unsigned f, const char *never) {
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA_CPU_CLASS_COUNT; c++) {
      const char *name, *kernels;
      double g;
      ck_assert_int_eq(mlsba_cpu_class_kernels((mlsba_precision_t)p,
                                               (mlsba_cpu_class_t)c, &name,
                                               &kernels, &g),
                       0);
      ck_assert_uint_eq(needs_of(kernels) & ~f, 0);
      if (never)
        ck_assert_str_ne(kernels, never);
      ck_assert(isfinite(g) && g >= 0);
      /* The BLIS set behind OpenBLAS (many threads, GEMMT) is BLIS's. */
      int blis = mlsba__cpu_kernel_blis_of((mlsba_precision_t)p,
                                           (mlsba__cpu_class_t)c);
      ck_assert_int_ne(blis, MLSBA__CPU_KERNEL_OPENBLAS);
      ck_assert_uint_eq(needs_of(mlsba__cpu_kernel_id_name(blis)) & ~f, 0);
    }
  if (!(f & MLSBA__CPU_AVX512))
    ck_assert_ptr_null(strstr(k.library, "SkylakeX"));
  ck_assert_int_eq(mlsba_cpu_class_kernels(MLSBA_PRECISION_DOUBLE,
                                           MLSBA_CPU_CLASS_COUNT, NULL, NULL,
                                           NULL),
                   MLSBA_EINVAL);
}

START_TEST(the_choice_runs_on_this_cpu_and_computes_right) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  unsigned f = mlsba__cpu_features();
  ck_assert_uint_eq(needs_of(k.single_kernels) & ~f, 0);
  ck_assert_uint_eq(needs_of(k.double_kernels) & ~f, 0);
  ck_assert_ptr_nonnull(strstr(k.description, k.library));
  ck_assert_ptr_nonnull(strstr(k.description, k.detected));
  ck_assert_msg(strncmp(k.reason, "measured in", 11) == 0 ||
                    strncmp(k.reason, "BLIS's own", 10) == 0 ||
                    strncmp(k.reason, "the only one", 12) == 0,
                "reason: %s", k.reason);
  check_classes(f, NULL);
  check_products();
}
END_TEST

/* Forced, each kernel set this CPU can run gives the reference product;
 * one it cannot run is refused and another is chosen. */
static const char *const forced_names[] = {"skx",         "zen3",     "haswell",
                                           "sandybridge", "penryn",   "generic",
                                           "auto",        "openblas", "foo"};

START_TEST(each_reachable_configuration_computes_right) {
  const char *name = forced_names[_i];
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", name, 1);
  unsigned f = mlsba__cpu_features();
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  int runs = strcmp(name, "foo") != 0 && (needs_of(name) & ~f) == 0;
  /* OpenBLAS where it is installed and loads. */
  if (runs && strcmp(name, "openblas") == 0)
    runs = strstr(k.reason, "refused") == NULL;
  if (runs) {
    const char *shown = strcmp(name, "auto") == 0 ? k.detected : name;
    ck_assert_str_eq(k.single_kernels, shown);
    ck_assert_str_eq(k.double_kernels, shown);
    ck_assert_str_eq(k.reason, "forced by MLSBA_CPU_KERNELS");
  } else {
    ck_assert_msg(strstr(k.reason, "refused"), "reason: %s", k.reason);
    ck_assert_str_ne(k.single_kernels, name);
    ck_assert_uint_eq(needs_of(k.single_kernels) & ~f, 0);
  }
  check_classes(f, NULL);
  check_products();
}
END_TEST

START_TEST(a_masked_cpu_falls_back) {
  static const struct {
    const char *hide, *never;
  } cases[] = {
      {"avx512", "skx"}, {"avx512,avx2", "zen3"}, {"avx,ssse3", "sandybridge"}};
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_HIDE", cases[_i].hide, 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  unsigned f = mlsba__cpu_features();
  ck_assert_str_ne(k.single_kernels, cases[_i].never);
  ck_assert_str_ne(k.double_kernels, cases[_i].never);
  ck_assert_uint_eq(needs_of(k.single_kernels) & ~f, 0);
  ck_assert_uint_eq(needs_of(k.double_kernels) & ~f, 0);
  check_classes(f, cases[_i].never);
  if (_i > 0) /* no AVX2: no OpenBLAS either */
    check_classes(f, "openblas");
  if (_i == 2) { /* nothing left but the reference kernels */
    ck_assert_str_eq(k.single_kernels, "generic");
    ck_assert_str_eq(k.double_kernels, "generic");
  }
  check_products();
}
END_TEST

START_TEST(a_forced_name_the_mask_forbids_is_refused) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_HIDE", "avx2", 1);
  setenv("MLSBA_CPU_KERNELS", "haswell", 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  ck_assert_ptr_nonnull(strstr(k.reason, "MLSBA_CPU_KERNELS=haswell refused"));
  ck_assert_ptr_nonnull(strstr(k.reason, "lacks its instructions"));
  ck_assert_str_ne(k.single_kernels, "haswell");
}
END_TEST

/* ---- the private OpenBLAS ---------------------------------------------- */

/* Max |x - y| / (|y| + 1) over n values of precision p. */
static double max_diff(int dbl, const void *x, const void *y, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double a = dbl ? ((const double *)x)[i] : ((const float *)x)[i];
    double b = dbl ? ((const double *)y)[i] : ((const float *)y)[i];
    double d = fabs(a - b) / (fabs(b) + 1);
    worst = isnan(d) || d > worst ? (isnan(d) ? INFINITY : d) : worst;
  }
  return worst;
}

static void fill_values(int dbl, void *v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    double x = (double)((i * 53 + seed * 17) % 97) / 97.0 - 0.5;
    if (dbl)
      ((double *)v)[i] = x;
    else
      ((float *)v)[i] = (float)x;
  }
}

/* Whether the private OpenBLAS loads here (the choice made first); the
 * tests of it skip without. */
static int openblas_here(void) {
  int ids[16];
  size_t n = mlsba__cpu_kernel_timed(ids, 16);
  for (size_t i = 0; i < n; i++)
    if (ids[i] == MLSBA__CPU_KERNEL_OPENBLAS)
      return 1;
  return 0;
}

/* OpenBLAS's GEMM (every transpose pair, odd sizes), SYRK through GEMMT,
 * TRSM and TRMM (both sides, both triangles, both transposes) equal
 * BLIS's within rounding, both precisions. */
START_TEST(openblas_gives_blis_results) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "openblas", 1);
  if (!openblas_here()) {
    mlsba_cpu_kernels_t k;
    mlsba_cpu_kernels(&k);
    printf("openblas_gives_blis_results: skipped (%s)\n", k.reason);
    return;
  }
  int blis =
      mlsba__cpu_kernel_blis_of(MLSBA_PRECISION_DOUBLE, MLSBA__CPU_PRODUCT);
  enum { M = 131, N = 77, K = 93, ROOM = 131 * 131 };
  for (int dbl = 0; dbl < 2; dbl++) {
    size_t es = dbl ? sizeof(double) : sizeof(float);
    mlsba_precision_t p = dbl ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
    double tol = dbl ? 1e-12 : 2e-4;
    char *a = malloc(es * ROOM), *b = malloc(es * ROOM),
         *c0 = malloc(es * ROOM), *c1 = malloc(es * ROOM);
    ck_assert(a && b && c0 && c1);
    fill_values(dbl, a, ROOM, 1);
    fill_values(dbl, b, ROOM, 2);
    /* A well-conditioned triangle for the solves: a heavy diagonal. */
    for (int i = 0; i < M; i++) {
      if (dbl)
        ((double *)a)[i + i * M] = 4.0;
      else
        ((float *)a)[i + i * M] = 4.0f;
    }
    const char *tr = "NT";
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        fill_values(dbl, c0, ROOM, 3);
        memcpy(c1, c0, es * ROOM);
        int lda = tr[ta] == 'N' ? M : K, ldb = tr[tb] == 'N' ? K : N;
        mlsba__cpu_gemm_with(MLSBA__CPU_KERNEL_OPENBLAS, p, tr[ta], tr[tb], M,
                             N, K, -0.5, a, lda, b, ldb, 1.5, c0, M);
        mlsba__cpu_gemm_with(blis, p, tr[ta], tr[tb], M, N, K, -0.5, a, lda, b,
                             ldb, 1.5, c1, M);
        ck_assert_msg(max_diff(dbl, c0, c1, (size_t)M * N) < tol,
                      "gemm %c%c %s", tr[ta], tr[tb],
                      dbl ? "double" : "single");
      }
    /* GEMMT of A with itself (a Cholesky update) goes to OpenBLAS's SYRK
     * under the forced set; BLIS's GEMMT is the reference. */
    for (int lower = 0; lower < 2; lower++)
      for (int t = 0; t < 2; t++) {
        fill_values(dbl, c0, ROOM, 4);
        memcpy(c1, c0, es * ROOM);
        char uplo = lower ? 'L' : 'U', x = tr[t], y = tr[1 - t];
        int lda = x == 'N' ? M : K;
        mlsba__cpu_gemmt(p, uplo, x, y, M, K, -1.0, a, lda, a, lda, 1.0, c0, M,
                         1);
        /* The reference on BLIS: many threads are BLIS's. */
        mlsba__cpu_gemmt(p, uplo, x, y, M, K, -1.0, a, lda, a, lda, 1.0, c1, M,
                         2);
        ck_assert_msg(max_diff(dbl, c0, c1, (size_t)M * M) < tol,
                      "gemmt %c %c%c %s", uplo, x, y,
                      dbl ? "double" : "single");
      }
    for (int trmm = 0; trmm < 2; trmm++)
      for (int side = 0; side < 2; side++)
        for (int up = 0; up < 2; up++)
          for (int t = 0; t < 2; t++) {
            char sd = side ? 'R' : 'L', ul = up ? 'U' : 'L', tt = tr[t];
            int m = side ? N : M, n = side ? M : N;
            fill_values(dbl, c0, ROOM, 5);
            memcpy(c1, c0, es * ROOM);
            mlsba__cpu_triangle_with(MLSBA__CPU_KERNEL_OPENBLAS, trmm, p, sd,
                                     ul, tt, 'N', m, n, 0.75, a, M, c0, m);
            mlsba__cpu_triangle_with(blis, trmm, p, sd, ul, tt, 'N', m, n, 0.75,
                                     a, M, c1, m);
            ck_assert_msg(max_diff(dbl, c0, c1, (size_t)m * n) < tol,
                          "%s %c%c%c %s", trmm ? "trmm" : "trsm", sd, ul, tt,
                          dbl ? "double" : "single");
          }
    free(a);
    free(b);
    free(c0);
    free(c1);
  }
}
END_TEST

/* Two threads, each pinned to a core where there are two, calling the
 * private OpenBLAS at the same time (as the pinned cores do): every
 * product equals, bit for bit, the same product computed alone. */
typedef struct {
  int cpu, dbl, n, rounds;
  void *a, *b, *c, *ref;
  int wrong;
} concurrent_t;

static void *concurrent_products(void *arg) {
  concurrent_t *w = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(w->cpu, &set);
  (void)sched_setaffinity(0, sizeof set, &set); /* best effort */
  mlsba_precision_t p =
      w->dbl ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
  size_t bytes = (size_t)w->n * (size_t)w->n * (w->dbl ? 8 : 4);
  for (int r = 0; r < w->rounds; r++) {
    mlsba__cpu_gemm_with(MLSBA__CPU_KERNEL_OPENBLAS, p, 'N', 'N', w->n, w->n,
                         w->n, 1.0, w->a, w->n, w->b, w->n, 0.0, w->c, w->n);
    w->wrong += memcmp(w->c, w->ref, bytes) != 0;
  }
  return NULL;
}

START_TEST(openblas_from_two_threads_at_once) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "openblas", 1);
  /* The process's own OpenBLAS settings neither reach the private one nor
   * are changed by it. */
  setenv("OPENBLAS_CORETYPE", "Prescott", 1);
  setenv("OPENBLAS_NUM_THREADS", "7", 1);
  if (!openblas_here()) {
    printf("openblas_from_two_threads_at_once: skipped (no OpenBLAS)\n");
    return;
  }
  enum { N = 300, ROUNDS = 20 };
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  concurrent_t w[2];
  for (int t = 0; t < 2; t++) {
    int dbl = t; /* one thread in each precision, different buffers */
    size_t es = dbl ? sizeof(double) : sizeof(float);
    w[t] = (concurrent_t){.cpu = cpus > 1 ? t : 0,
                          .dbl = dbl,
                          .n = N,
                          .rounds = ROUNDS,
                          .a = malloc(es * N * N),
                          .b = malloc(es * N * N),
                          .c = malloc(es * N * N),
                          .ref = malloc(es * N * N)};
    ck_assert(w[t].a && w[t].b && w[t].c && w[t].ref);
    fill_values(dbl, w[t].a, (size_t)N * N, 6 + (unsigned)t);
    fill_values(dbl, w[t].b, (size_t)N * N, 8 + (unsigned)t);
    mlsba__cpu_gemm_with(MLSBA__CPU_KERNEL_OPENBLAS,
                         dbl ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                         'N', 'N', N, N, N, 1.0, w[t].a, N, w[t].b, N, 0.0,
                         w[t].ref, N);
  }
  ck_assert_str_eq(getenv("OPENBLAS_CORETYPE"), "Prescott");
  ck_assert_str_eq(getenv("OPENBLAS_NUM_THREADS"), "7");
  char want[64];
  snprintf(want, sizeof want, " %s",
           mlsba__openblas_core_type(mlsba__cpu_features()));
  ck_assert_msg(strstr(mlsba__openblas_label(), want), "%s",
                mlsba__openblas_label());
  pthread_t th[2];
  for (int t = 0; t < 2; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, concurrent_products, &w[t]),
                     0);
  for (int t = 0; t < 2; t++)
    pthread_join(th[t], NULL);
  for (int t = 0; t < 2; t++) {
    ck_assert_msg(w[t].wrong == 0, "thread %d: %d of %d products differ", t,
                  w[t].wrong, ROUNDS);
    free(w[t].a);
    free(w[t].b);
    free(w[t].c);
    free(w[t].ref);
  }
}
END_TEST

/* ---- the cache --------------------------------------------------------- */

/* The reason a fresh process gives, with the cache in dir, and what
 * mlsba_cpu_kernels_choice() says there, checked against the reason: the
 * choice's seconds > 0 exactly when it was timed in that process (source
 * "timed" or "retimed", the reason "measured in"), 0 when read back
 * ("cache"), and the whole setup's seconds at least those. */
static int take_namespaces; /* the child first takes every namespace */

/* Every link-map namespace dlmopen has left taken (glibc has 16), as
 * SimGrid's ranks take them: OpenBLAS, which the library loads in one of
 * its own, then cannot load. 0 when none was left at the end. */
static int namespaces_taken(void) {
  for (int i = 0; i < 64; i++)
    if (dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW | RTLD_LOCAL) == NULL)
      return 1;
  return 0;
}

static void reason_in_child(const char *dir, char *out, size_t size) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    if (take_namespaces && !namespaces_taken()) {
      const char *no = "the namespaces could not all be taken";
      _exit(write(fd[1], no, strlen(no)) < 0 || 1);
    }
    setenv("MLSBA_CACHE_DIR", dir, 1);
    mlsba_cpu_kernels_t k;
    mlsba_cpu_kernels(&k);
    const char *source = NULL;
    double choice_s = -1, setup_s = -1;
    mlsba_cpu_kernels_choice(&source, &choice_s, &setup_s);
    int timed = strncmp(k.reason, "measured in", 11) == 0,
        again = timed && strstr(k.reason, "(again: ") != NULL,
        cached = strncmp(k.reason, "measured on this CPU earlier", 28) == 0;
    const char *want = again    ? "retimed"
                       : timed  ? "timed"
                       : cached ? "cache"
                                : NULL;
    char line[1200];
    int bad = want && (source == NULL || strcmp(source, want) != 0 ||
                       (timed ? !(choice_s > 0) : choice_s != 0) ||
                       !(setup_s >= choice_s));
    if (bad)
      snprintf(line, sizeof line,
               "mlsba_cpu_kernels_choice: source %s (want %s), choice %g s, "
               "setup %g s; reason: %.900s",
               source ? source : "NULL", want, choice_s, setup_s, k.reason);
    else
      snprintf(line, sizeof line, "%s", k.reason);
    ssize_t w = write(fd[1], line, strlen(line));
    _exit(w < 0 || bad);
  }
  close(fd[1]);
  size_t got = 0;
  ssize_t r;
  while (got < size - 1 && (r = read(fd[0], out + got, size - 1 - got)) > 0)
    got += (size_t)r;
  out[got] = '\0';
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s",
                out);
}

/* The one cache file under dir (dir/HOST/cpu-kernels). */
static void cache_file(const char *dir, char *path, size_t size) {
  char host[128] = {0};
  gethostname(host, sizeof host - 1);
  snprintf(path, size, "%s/%s/cpu-kernels", dir, host);
}

/* The cache file of cache_file(), its host's folder and dir, gone. */
static void remove_cache(const char *dir, const char *path) {
  unlink(path);
  char host_dir[512];
  snprintf(host_dir, sizeof host_dir, "%.*s", (int)(strrchr(path, '/') - path),
           path);
  rmdir(host_dir);
  rmdir(dir);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  static char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

static void spit(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static int every_kernel_runs(int id) {
  (void)id;
  return 1;
}

static int no_openblas(int id) { return id != MLSBA__CPU_KERNEL_OPENBLAS; }

static const char good_text[] =
    "mlsba cpu-kernels 7\n"
    "key CPU|26.2.1|features 1f|BLIS 0.9.0|OpenBLAS x 1 SkylakeX\n"
    "measured load 1.71 cpus 2 share 0.98 close 1 tries 2 settled 0\n"
    "single product openblas 215.3 skx 174.0\n"
    "single update openblas 210.0 skx 170.2\n"
    "single triangle zen3 80.5 zen3 80.5\n"
    "single panel openblas 140.0 skx 120.0\n"
    "double product skx 103.1 skx 103.1\n"
    "double update skx 101.0 skx 101.0\n"
    "double triangle skx 40.0 skx 40.0\n"
    "double panel auto 60.0 auto 60.0\n";
static const char good_key[] =
    "CPU|26.2.1|features 1f|BLIS 0.9.0|OpenBLAS x 1 SkylakeX";

/* The file's text is read strictly: what it says when right, and no
 * choice at all from another version, another key, an unknown kernel, a
 * speed that is no positive finite number, or a line too many or few. */
START_TEST(the_cache_text_is_read_strictly) {
  mlsba__cpu_picks_t picks;
  ck_assert_int_eq(
      mlsba__cpu_cache_parse(good_text, good_key, every_kernel_runs, &picks),
      0);
  const mlsba__cpu_pick_t *u = &picks.pick[0][MLSBA__CPU_UPDATE];
  ck_assert_int_eq(u->kernel, MLSBA__CPU_KERNEL_OPENBLAS);
  ck_assert_str_eq(mlsba__cpu_kernel_id_name(u->blis), "skx");
  ck_assert(u->gflops == 210.0 && u->blis_gflops == 170.2);
  ck_assert_int_eq(picks.pick[1][MLSBA__CPU_PANEL].kernel,
                   MLSBA__CPU_KERNEL_AUTO);
  /* How it was timed. */
  ck_assert(picks.how.load == 1.71 && picks.how.cpus == 2 &&
            picks.how.share == 0.98 && picks.how.close == 1 &&
            picks.how.tries == 2 && picks.how.settled == 0);
  /* What it writes, it reads back the same. */
  char text[4096];
  ck_assert_int_gt(mlsba__cpu_cache_format(good_key, &picks, text, sizeof text),
                   0);
  ck_assert_str_eq(text, good_text);
  ck_assert_int_eq(mlsba__cpu_cache_format(good_key, &picks, text, 100), -1);
  /* Another key, or OpenBLAS where it cannot run. */
  ck_assert_int_eq(mlsba__cpu_cache_parse(good_text, "CPU|26.2.1",
                                          every_kernel_runs, &picks),
                   -1);
  ck_assert_int_eq(
      mlsba__cpu_cache_parse(good_text, good_key, no_openblas, &picks), -1);
  static const struct {
    const char *from, *to;
  } bad[] = {
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 1"}, /* old formats */
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 2"},
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 3"}, /* the same lines */
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 4"},
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 5"}, /* product 768^2 */
      {"mlsba cpu-kernels 7", "mlsba cpu-kernels 6"}, /* without OpenBLAS */
      {"measured load 1.71 cpus 2 share 0.98 close 1 tries 2 settled 0\n",
       ""}, /* the format 2 under the version 6 */
      {"load 1.71", "load nan"},
      {"load 1.71", "load -1"},
      {"load 1.71", "load inf"},
      {"load 1.71", "lode 1.71"},
      {"cpus 2", "cpus 0"},
      {"cpus 2", "cpus 2.5"},
      {"share 0.98", "share 1.5"},
      {"close 1", "close 99"},
      {"tries 2", "tries 0"},
      {"tries 2", "tries 5"}, /* more than are made */
      {"settled 0", "settled 2"},
      {"settled 0", "settled 0 more"},
      {"double triangle skx 40.0 skx 40.0",
       "double triangle foo 40.0 foo 40.0"}, /* no such kernels */
      {"double product skx 103.1", "double product skx 0"},
      {"double product skx 103.1", "double product skx 0.0"},
      {"double product skx 103.1", "double product skx -0"},
      {"double product skx 103.1", "double product skx nan"},
      {"double product skx 103.1", "double product skx NaN"},
      {"double product skx 103.1", "double product skx inf"},
      {"double product skx 103.1", "double product skx 1e300"},
      {"double product skx 103.1", "double product skx 9999999.0"},
      {"double product skx 103.1", "double product skx 103.1x"},
      {"double product skx 103.1 skx", "double product skx 103.1 zen3"},
      {"single product openblas 215.3 skx",
       "single product openblas 215.3 openblas"},  /* BLIS behind it */
      {"double update skx 101.0 skx 101.0\n", ""}, /* a line missing */
      {"double panel auto 60.0 auto 60.0\n",
       "double panel auto 60.0 auto 60.0\nmore\n"},
      {"single update", "double update"}, /* out of order */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char t[4096];
    const char *at = strstr(good_text, bad[i].from);
    ck_assert_ptr_nonnull(at);
    snprintf(t, sizeof t, "%.*s%s%s", (int)(at - good_text), good_text,
             bad[i].to, at + strlen(bad[i].from));
    ck_assert_msg(
        mlsba__cpu_cache_parse(t, good_key, every_kernel_runs, &picks) == -1,
        "accepted case %zu:\n%s", i, t);
  }
}
END_TEST

/* text with its measured line made settled (a quiet timing's), in place. */
static char *settled(char *text) {
  char *m = strstr(text, "\nmeasured ");
  ck_assert_ptr_nonnull(m);
  char *end = strchr(m + 1, '\n');
  ck_assert_ptr_nonnull(end);
  char rest[4096];
  snprintf(rest, sizeof rest, "%s", end);
  snprintf(m, 4096 - (size_t)(m - text),
           "\nmeasured load 0.10 cpus 2 share 1.00 close 0 tries 1 "
           "settled 1%s",
           rest);
  return text;
}

/* End to end: the decision is cached and read back; a file of the old
 * one-shape format, of the formats 2, 3 and 4, another CPU's, or one naming
 * kernels `foo` or a speed of 0, -0 or NaN, is timed again (and replaced
 * by a good one). */
START_TEST(the_decision_is_cached_and_a_bad_cache_is_not_trusted) {
  char dir[] = "/tmp/mlsba-kernels-XXXXXX", path[512], reason[1024];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  cache_file(dir, path, sizeof path);
  reason_in_child(dir, reason, sizeof reason);
  if (strncmp(reason, "measured in", 11) != 0) /* nothing to time here */
    return;
  char good[4096];
  snprintf(good, sizeof good, "%s", settled(slurp(path)));
  ck_assert_ptr_nonnull(strstr(good, "mlsba cpu-kernels 7\nkey "));
  spit(path, good); /* whatever the load was: a settled choice */
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured on this CPU earlier", 28) == 0,
                "second process: %s", reason);
  char *key_end = strchr(strstr(good, "key ") + 4, '\n');
  char *single = strstr(good, "\nsingle product ") + 1;
  ck_assert_ptr_nonnull(key_end);
  char bad[8][4096];
  /* Another CPU's decision (its key differs). */
  snprintf(bad[0], sizeof bad[0], "%.*s other CPU%s", (int)(key_end - good),
           good, key_end);
  /* The old format: one shape, four lines. */
  snprintf(bad[1], sizeof bad[1],
           "mlsba cpu-kernels 1\n%.*s\nsingle skx 120.0\ndouble skx 60.0\n",
           (int)(key_end - strstr(good, "key ")), strstr(good, "key "));
  /* Kernels named foo; speeds of 0, -0 and NaN. */
  snprintf(bad[2], sizeof bad[2], "%.*ssingle product foo 1.0 foo 1.0\n%s",
           (int)(single - good), good, strchr(single, '\n') + 1);
  snprintf(bad[3], sizeof bad[3], "%.*ssingle product skx 0 skx -0\n%s",
           (int)(single - good), good, strchr(single, '\n') + 1);
  snprintf(bad[4], sizeof bad[4], "%.*ssingle product skx nan skx nan\n%s",
           (int)(single - good), good, strchr(single, '\n') + 1);
  /* The format 2: no line of how it was timed. */
  char *measured = strstr(good, "\nmeasured ") + 1;
  snprintf(bad[5], sizeof bad[5], "mlsba cpu-kernels 2\n%.*s%s",
           (int)(measured - strstr(good, "key ")), strstr(good, "key "),
           strchr(measured, '\n') + 1);
  /* The format 3: the same lines, settled, but timed by rounds that let
   * a decided class stop (its choice leaned), so timed again. */
  snprintf(bad[6], sizeof bad[6], "mlsba cpu-kernels 3\n%s",
           strstr(good, "key "));
  /* The format 4: the same lines, settled, but timed by classes that
   * could stop after an odd count of rounds (leaning with their order). */
  snprintf(bad[7], sizeof bad[7], "mlsba cpu-kernels 4\n%s",
           strstr(good, "key "));
  for (int i = 0; i < 8; i++) {
    spit(path, bad[i]);
    reason_in_child(dir, reason, sizeof reason);
    ck_assert_msg(strncmp(reason, "measured in", 11) == 0, "file %d: %s", i,
                  reason);
    char *now = slurp(path), *picks = strstr(now, "\nsingle ");
    ck_assert_msg(strstr(now, "mlsba cpu-kernels 7\nkey ") == now && picks &&
                      !strstr(now, "foo") && !strstr(now, "nan") &&
                      !strstr(picks, " 0 "),
                  "file %d replaced by:\n%s", i, now);
  }
  remove_cache(dir, path);
}
END_TEST

/* A process in which OpenBLAS does not load, where this machine has it
 * (the key names it), times the others for itself and leaves the cache
 * alone: neither a file of its own nor a settled choice replaced, which
 * it reads back with BLIS's kernels where it names OpenBLAS. A
 * simulation of 16 ranks under SimGrid so cached BLIS's zen3 for LU's
 * update at 15 GFLOPS a core where OpenBLAS ran 36-41, and every later
 * process ran it. */
START_TEST(a_choice_without_the_machines_openblas_is_not_cached) {
  char dir[] = "/tmp/mlsba-kernels-XXXXXX", path[512], reason[1024];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  cache_file(dir, path, sizeof path);
  take_namespaces = 1;
  reason_in_child(dir, reason, sizeof reason);
  take_namespaces = 0;
  int lost = strstr(reason, "(dlmopen)") != NULL;
  if (lost) { /* OpenBLAS is here, out of this process's reach */
    ck_assert_msg(strstr(reason, "(so not cached)") != NULL, "%s", reason);
    ck_assert_msg(access(path, F_OK) != 0, "written: %s", reason);
  } else { /* no OpenBLAS on this machine: the choice is the machine's */
    ck_assert_msg(strstr(reason, "(so not cached)") == NULL, "%s", reason);
    ck_assert_msg(strncmp(reason, "measured in", 11) != 0 ||
                      access(path, F_OK) == 0,
                  "not written: %s", reason);
  }
  /* A settled choice timed with OpenBLAS stays as it was. */
  reason_in_child(dir, reason, sizeof reason);
  if (lost && access(path, F_OK) == 0) {
    char good[4096];
    snprintf(good, sizeof good, "%s", settled(slurp(path)));
    spit(path, good);
    take_namespaces = 1;
    reason_in_child(dir, reason, sizeof reason);
    take_namespaces = 0;
    /* Read back, not timed again: where it needs OpenBLAS, the BLIS
     * kernels the file keeps behind it. */
    ck_assert_msg(strncmp(reason, "measured on this CPU earlier", 28) == 0,
                  "%s", reason);
    if (strstr(good, " openblas ") != NULL)
      ck_assert_msg(strstr(reason, "run the BLIS kernels behind it") != NULL,
                    "%s", reason);
    ck_assert_str_eq(slurp(path), good);
  }
  remove_cache(dir, path);
}
END_TEST

/* In the child: a fresh choice (an empty cache folder), then its rounds
 * checked; what is wrong written to fd ("" when nothing, "untimed" when
 * this build or CPU has nothing to time). */
static void check_pairs_in_child(const char *dir, int fd) {
  setenv("MLSBA_CACHE_DIR", dir, 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  char msg[256] = "";
  if (strncmp(k.reason, "measured in", 11) != 0)
    snprintf(msg, sizeof msg, "untimed");
  enum { R = MLSBA__CPU_TRACE_ROUNDS };
  for (int p = 0; p < 2 && !msg[0]; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES && !msg[0]; c++) {
      int ids[16], rounds;
      static double cpu[16 * R], wall[16 * R];
      size_t n =
          mlsba__cpu_choice_rounds((mlsba_precision_t)p, (mlsba__cpu_class_t)c,
                                   ids, cpu, wall, 16, &rounds);
      int most = 0;
      for (size_t j = 0; j < n && !msg[0]; j++) {
        int in_order = 0, reversed = 0;
        for (int r = 1; r < rounds; r++)
          if (cpu[j * R + r] > 0)
            r % 2 ? reversed++ : in_order++;
        most = in_order + reversed > most ? in_order + reversed : most;
        if (cpu[j * R] != 0 || in_order != reversed)
          snprintf(msg, sizeof msg,
                   "%s %s %s: %d rounds in order, %d reversed, cold %g",
                   p ? "double" : "single",
                   mlsba__cpu_class_name((mlsba__cpu_class_t)c),
                   mlsba__cpu_kernel_id_name(ids[j]), in_order, reversed,
                   cpu[j * R]);
      }
      if (!msg[0] && n > 1 && most < 2)
        snprintf(msg, sizeof msg, "%s %s: no whole pair of rounds",
                 p ? "double" : "single",
                 mlsba__cpu_class_name((mlsba__cpu_class_t)c));
    }
  ssize_t w = write(fd, msg, strlen(msg));
  _exit(w < 0);
}

/* A fresh choice judges each class on whole pairs of rounds: every kernel
 * set it timed (past the cold first round, left out) ran as many rounds
 * in order as in reverse, and a class with two sets or more had one
 * pair at least. A class stopped after an odd count took its medians
 * from the order most of its rounds ran in, and where a set runs among
 * its class's changes its speed (docs/cpu-kernels.md). */
START_TEST(a_fresh_choice_times_each_set_as_often_in_each_order) {
  char dir[] = "/tmp/mlsba-kernels-XXXXXX", path[512], msg[256];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  cache_file(dir, path, sizeof path);
  for (int run = 0; run < 2; run++) {
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      close(fd[0]);
      check_pairs_in_child(dir, fd[1]);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], msg, sizeof msg - 1);
    msg[got > 0 ? got : 0] = '\0';
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(path); /* the next run is a fresh choice too */
    if (strcmp(msg, "untimed") == 0)
      break;
    ck_assert_msg(msg[0] == '\0', "run %d: %s", run, msg);
  }
  remove_cache(dir, path);
}
END_TEST

/* End to end: a cached choice that is not settled is timed again by the
 * next process, whatever the machine's load (its tries counted in the
 * file); one whose tries are spent is read back. */
START_TEST(an_unsettled_cache_is_timed_again_until_its_tries_are_spent) {
  char dir[] = "/tmp/mlsba-kernels-XXXXXX", path[512], reason[1024];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  cache_file(dir, path, sizeof path);
  reason_in_child(dir, reason, sizeof reason);
  if (strncmp(reason, "measured in", 11) != 0) /* nothing to time here */
    return;
  char text[4096], *m;
  snprintf(text, sizeof text, "%s", slurp(path));
  m = strstr(text, "\nmeasured ");
  ck_assert_ptr_nonnull(m);
  char rest[4096];
  snprintf(rest, sizeof rest, "%s", strchr(m + 1, '\n'));
  snprintf(m, sizeof text - (size_t)(m - text),
           "\nmeasured load 17.00 cpus 2 share 0.50 close 0 tries 1 "
           "settled 0%s",
           rest);
  spit(path, text);
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured in", 11) == 0 &&
                    strstr(reason, "again"),
                "an unsettled choice: %s", reason);
  char *now = slurp(path);
  ck_assert_msg(strstr(now, " tries 2 settled "), "after a try:\n%s", now);
  /* The tries spent: read back, not timed. */
  snprintf(text, sizeof text, "%s", now);
  m = strstr(text, "\nmeasured ");
  snprintf(rest, sizeof rest, "%s", strchr(m + 1, '\n'));
  snprintf(m, sizeof text - (size_t)(m - text),
           "\nmeasured load 17.00 cpus 2 share 0.50 close 0 tries %d "
           "settled 0%s",
           MLSBA__CPU_CACHE_TRIES, rest);
  spit(path, text);
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured on this CPU earlier", 28) == 0,
                "tries spent: %s", reason);
  remove_cache(dir, path);
}
END_TEST

/* A cache folder whose path is too long is refused, in the reason, never
 * cut short (which would put the file elsewhere); one that cannot hold
 * the host's folder is said too. */
START_TEST(a_cache_dir_too_long_is_refused) {
  static char dir[PATH_MAX + 64];
  int lengths[] = {PATH_MAX + 10, PATH_MAX - 8};
  if (_i < 2) {
    memset(dir, 'x', sizeof dir);
    dir[0] = '/';
    dir[lengths[_i]] = '\0';
  } else {
    snprintf(dir, sizeof dir, "/nonexistent-mlsba-cache/deeper");
  }
  setenv("MLSBA_CACHE_DIR", dir, 1);
  setenv("MLSBA_CPU_KERNELS", "", 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  if (strncmp(k.reason, "measured", 8) != 0)
    return; /* nothing timed, nothing cached on this CPU */
  ck_assert_msg(strstr(k.reason, _i < 2 ? "MLSBA_CACHE_DIR refused"
                                        : "cannot hold the host's folder"),
                "reason: %s", k.reason);
  ck_assert_ptr_nonnull(strstr(k.reason, "not cached"));
}
END_TEST

/* A fresh MLSBA_CACHE_DIR (its parent there) is made, as the
 * factorizations' model cache makes it, so that the choice is cached
 * there: it was left uncached, and timed again by every process. */
START_TEST(a_fresh_cache_dir_is_made) {
  char base[] = "/tmp/mlsba-kcache-XXXXXX", dir[128], path[PATH_MAX];
  ck_assert_ptr_nonnull(mkdtemp(base));
  snprintf(dir, sizeof dir, "%s/fresh", base);
  setenv("MLSBA_CACHE_DIR", dir, 1);
  const char *refused = NULL;
  ck_assert_int_eq(mlsba__cpu_cache_path(path, sizeof path, &refused), 1);
  ck_assert_ptr_null(refused);
  ck_assert_int_eq(strncmp(path, dir, strlen(dir)), 0);
  char *slash = strrchr(path, '/');
  *slash = '\0'; /* the host's folder, made */
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert(S_ISDIR(st.st_mode));
  rmdir(path);
  rmdir(dir);
  rmdir(base);
  unsetenv("MLSBA_CACHE_DIR");
}
END_TEST

START_TEST(cpu_gemm_refuses_bad_arguments) {
  double a[4] = {1, 2, 3, 4}, c[4];
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'X', 'N', 2, 2, 2, 1,
                                  a, 2, a, 2, 0, c, 2, 1),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "transa"));
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 2, 2, 2, 1,
                                  a, 1, a, 2, 0, c, 2, 1),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "leading dimension"));
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 2, 2, 2, 1,
                                  a, 2, a, 2, 0, c, 2, 0),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 2, -1, 2, 1,
                                  a, 2, a, 2, 0, c, 2, 1),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 2, 2, 2, 1,
                                  NULL, 2, a, 2, 0, c, 2, 1),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_cpu_gemm((mlsba_precision_t)7, 'N', 'N', 2, 2, 2, 1, a,
                                  2, a, 2, 0, c, 2, 1),
                   MLSBA_EINVAL);
  /* An empty product is no error and touches nothing. */
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 0, 2, 2, 1,
                                  NULL, 1, a, 2, 0, NULL, 1, 1),
                   0);
  /* 2x2 by hand: [1 3; 2 4]^2 = [7 15; 10 22]. */
  ck_assert_int_eq(mlsba_cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', 2, 2, 2, 1,
                                  a, 2, a, 2, 0, c, 2, 2),
                   0);
  ck_assert(c[0] == 7 && c[1] == 10 && c[2] == 15 && c[3] == 22);
}
END_TEST

/* ---- the decision from measured speeds, without a clock ---------------- */

/* The id of a kernel set by its name (a sub-configuration, auto or
 * openblas). */
static int id_of(const char *name) {
  if (strcmp(name, "auto") == 0)
    return MLSBA__CPU_KERNEL_AUTO;
  if (strcmp(name, "openblas") == 0)
    return MLSBA__CPU_KERNEL_OPENBLAS;
  for (int id = 0; mlsba__cpu_kernel_id_name(id); id++)
    if (strcmp(mlsba__cpu_kernel_id_name(id), name) == 0)
      return id;
  ck_abort_msg("no kernel set %s", name);
  return -2;
}

/* A kernel set's speed is the median of the rounds it ran: odd and even
 * counts, rounds it did not run (0) left out, and two rounds a boost made
 * faster do not decide it (its second-best round did). */
START_TEST(a_kernels_speed_is_the_median_of_its_rounds) {
  const double odd[] = {90, 0, 100, 80, 0, 120};
  ck_assert_double_eq_tol(mlsba__cpu_rounds_speed(odd, 6), 95, 1e-12);
  const double one[] = {0, 70, 0};
  ck_assert_double_eq_tol(mlsba__cpu_rounds_speed(one, 3), 70, 1e-12);
  const double none[] = {0, 0};
  ck_assert_double_eq(mlsba__cpu_rounds_speed(none, 2), 0);
  ck_assert_double_eq(mlsba__cpu_rounds_speed(none, 0), 0);
  const double boosted[] = {100, 131, 99, 100, 135, 101, 60, 100};
  ck_assert_double_eq_tol(mlsba__cpu_rounds_speed(boosted, 8), 100, 1e-12);
}
END_TEST

/* The tie rule: BLIS's sets within 1% of the fastest are one speed, and
 * the first in the order of preference is kept, whichever measured
 * faster; OpenBLAS takes a class only past 1% over the set kept. */
START_TEST(close_kernels_tie_and_the_preference_breaks_it) {
  const int ids[] = {id_of("skx"), id_of("zen3"), id_of("auto"),
                     id_of("openblas")};
  static const struct {
    double g[4];
    const char *kernel, *blis;
    double gflops;
  } cases[] = {
      {{100, 100.9, 0, 0}, "skx", "skx", 100},     /* within 1%: skx */
      {{100, 100.9, 100.5, 0}, "skx", "skx", 100}, /* auto too */
      {{100, 101.5, 0, 0}, "zen3", "zen3", 101.5}, /* past 1% */
      {{0, 90, 80, 0}, "zen3", "zen3", 90},        /* skx not timed */
      {{91, 80, 91.8, 0}, "skx", "skx", 91},       /* BLIS's own within 1% */
      {{100, 95, 0, 100.9}, "skx", "skx", 100},    /* within 1% */
      {{100, 95, 0, 101.2}, "openblas", "skx", 101.2},
      /* measured against the set kept, not the fastest */
      {{100, 100.8, 0, 101.3}, "openblas", "skx", 101.3},
      {{0, 0, 0, 200}, "auto", "auto", 0}, /* no BLIS set timed */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mlsba__cpu_pick_t p = mlsba__cpu_pick_of_speeds(ids, cases[k].g, 4);
    ck_assert_msg(p.kernel == id_of(cases[k].kernel) &&
                      p.blis == id_of(cases[k].blis),
                  "case %zu: %s (BLIS %s), not %s", k,
                  mlsba__cpu_kernel_id_name(p.kernel),
                  mlsba__cpu_kernel_id_name(p.blis), cases[k].kernel);
    ck_assert_double_eq_tol(p.gflops, cases[k].gflops, 1e-12);
  }
  /* A close call: within 3% of the ratio that would change the choice. */
  const double near_tie[] = {100, 102.8, 0, 0}, far[] = {100, 90, 0, 0},
               near_lead[] = {100, 90, 0, 103};
  ck_assert(mlsba__cpu_pick_is_close(ids, near_tie, 4));
  ck_assert(!mlsba__cpu_pick_is_close(ids, far, 4));
  ck_assert(mlsba__cpu_pick_is_close(ids, near_lead, 4));
  /* A clear one: no set within 5% of that ratio (two pairs of rounds
   * decide it). On this CPU the product class is zen3 against OpenBLAS
   * (skx not timed): at 4096 x 256 x 384 OpenBLAS 7.5% ahead is clear,
   * at 768 x 256 x 768 (the old timing shape) 2-3% either way is not. */
  const int twin[] = {id_of("zen3"), id_of("openblas")};
  const double tall[] = {37.8, 40.7}, cached[] = {41.9, 43.3},
               behind[] = {41.9, 39.4}, alone[] = {0, 40.0};
  ck_assert(mlsba__cpu_pick_is_clear(twin, tall, 2));
  ck_assert_int_eq(mlsba__cpu_pick_of_speeds(twin, tall, 2).kernel,
                   id_of("openblas"));
  ck_assert(!mlsba__cpu_pick_is_clear(twin, cached, 2));
  ck_assert(!mlsba__cpu_pick_is_close(twin, behind, 2));
  ck_assert(mlsba__cpu_pick_is_clear(twin, behind, 2)); /* zen3 by 6% */
  ck_assert(!mlsba__cpu_pick_is_clear(twin, alone, 2)); /* no BLIS set */
  ck_assert(!mlsba__cpu_pick_is_clear(ids, near_tie, 4));
  ck_assert(!mlsba__cpu_pick_is_clear(ids, near_lead, 4));
  ck_assert(mlsba__cpu_pick_is_clear(ids, far, 4));
}
END_TEST

/* Only the sets the (masked) features allow are given to the decision,
 * and it chooses among them alone: with AVX-512 hidden, never skx. */
START_TEST(the_decision_keeps_to_the_candidates_the_mask_allows) {
  const unsigned masks[] = {ALL, ALL & ~MLSBA__CPU_AVX512,
                            MLSBA__CPU_SSSE3 | MLSBA__CPU_AVX, 0};
  for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
    const mlsba__cpu_config_t *c[16];
    size_t n = mlsba__cpu_kernel_candidates(masks[m], c, 16);
    int ids[16];
    double g[16];
    for (size_t j = 0; j < n; j++) {
      ids[j] = id_of(c[j]->name);
      g[j] = 50 + 10.0 * (double)j; /* the last one the fastest */
    }
    mlsba__cpu_pick_t p = mlsba__cpu_pick_of_speeds(ids, g, n);
    const char *name = mlsba__cpu_kernel_id_name(p.kernel);
    ck_assert_uint_eq(needs_of(name) & ~masks[m], 0);
    ck_assert_str_eq(name, c[n - 1]->name);
    if (!(masks[m] & MLSBA__CPU_AVX512))
      ck_assert_str_ne(name, "skx");
  }
}
END_TEST

/* Noise of a shared machine cannot flip the decision: per kernel set,
 * eight rounds of which two (at random places) are slowed by 10-60%
 * (another process on the core) and two sped up by 5-15% (a passing
 * boost of the clock), the rest within 0.25% of the set's speed; in 2000
 * such draws of each case the choice is the one the true speeds give. A
 * set's second-best round, as before, followed the boosts and flipped
 * the choice in these cases. */
static unsigned long long lcg = 42;
static double uniform(void) {
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg >> 11) / 9007199254740992.0;
}

/* Eight rounds of a set of speed `truth`, with the noise above. */
static double noisy_speed(double truth) {
  double r[8];
  int place[8];
  for (int i = 0; i < 8; i++) {
    r[i] = truth * (1 + 0.005 * (uniform() - 0.5));
    place[i] = i;
  }
  for (int i = 7; i > 0; i--) { /* a random order of the rounds */
    int k = (int)(uniform() * (i + 1)), t = place[i];
    place[i] = place[k];
    place[k] = t;
  }
  r[place[0]] = truth * (0.4 + 0.5 * uniform());
  r[place[1]] = truth * (0.4 + 0.5 * uniform());
  r[place[2]] = truth * (1.05 + 0.1 * uniform());
  r[place[3]] = truth * (1.05 + 0.1 * uniform());
  return mlsba__cpu_rounds_speed(r, 8);
}

START_TEST(noise_in_a_few_rounds_does_not_flip_the_choice) {
  const int ids[] = {id_of("skx"), id_of("zen3"), id_of("openblas")};
  static const double truth[][3] = {
      {100, 105, 0},      /* zen3 past the tie */
      {100, 100.3, 0},    /* a tie: skx */
      {100, 80, 104},     /* OpenBLAS past its lead */
      {100, 80, 100.3},   /* OpenBLAS within it */
      {100, 99.5, 100.3}, /* both within */
  };
  for (size_t k = 0; k < sizeof truth / sizeof truth[0]; k++) {
    mlsba__cpu_pick_t want = mlsba__cpu_pick_of_speeds(ids, truth[k], 3);
    for (int draw = 0; draw < 2000; draw++) {
      double g[3];
      for (size_t j = 0; j < 3; j++)
        g[j] = truth[k][j] > 0 ? noisy_speed(truth[k][j]) : 0;
      mlsba__cpu_pick_t p = mlsba__cpu_pick_of_speeds(ids, g, 3);
      ck_assert_msg(p.kernel == want.kernel && p.blis == want.blis,
                    "case %zu draw %d: %s, not %s", k, draw,
                    mlsba__cpu_kernel_id_name(p.kernel),
                    mlsba__cpu_kernel_id_name(want.kernel));
    }
  }
}
END_TEST

/* A timing is quiet only with its core (share >= 0.95) and the load below
 * the CPUs; a cached choice that was not is timed again, and what is kept
 * after is settled when the new timing is quiet or agrees with the old,
 * otherwise the old kept, settled at the last try. */
START_TEST(a_choice_timed_on_a_busy_machine_is_timed_again) {
  const mlsba__cpu_measured_t quiet = {0.3, 2, 0.99, 0, 1, 1},
                              loaded = {17, 2, 0.99, 0, 1, 0},
                              shared = {0.3, 2, 0.60, 0, 1, 0},
                              close = {0.3, 2, 0.99, 1, 1, 0};
  ck_assert(mlsba__cpu_measured_quiet(&quiet));
  ck_assert(!mlsba__cpu_measured_quiet(&loaded));
  ck_assert(!mlsba__cpu_measured_quiet(&shared));
  /* A close call alone is quiet: either kernel set is within the band. */
  ck_assert(mlsba__cpu_measured_quiet(&close));
  mlsba__cpu_picks_t skx, zen3;
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      skx.pick[p][c] =
          (mlsba__cpu_pick_t){id_of("skx"), id_of("skx"), 100, 100};
      zen3.pick[p][c] =
          (mlsba__cpu_pick_t){id_of("zen3"), id_of("zen3"), 50, 50};
    }
  zen3.pick[1][MLSBA__CPU_PANEL] = skx.pick[1][MLSBA__CPU_PANEL];
  /* The old choice made at load 17; the new one quiet: the new, settled. */
  mlsba__cpu_picks_t old = zen3, now = skx;
  old.how = loaded;
  now.how = quiet;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert_int_eq(now.pick[0][MLSBA__CPU_UPDATE].kernel, id_of("skx"));
  ck_assert(now.how.settled && now.how.tries == 2);
  /* Both busy, different kernels: the first kept (a busy timing replaces
   * nothing, so the models saved under it stay valid), not settled. */
  now = skx;
  now.how = shared;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert_int_eq(now.pick[0][MLSBA__CPU_UPDATE].kernel, id_of("zen3"));
  ck_assert(!now.how.settled && now.how.tries == 2);
  old = skx;
  old.how = shared;
  now = zen3;
  now.how = loaded;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert_int_eq(now.pick[0][MLSBA__CPU_UPDATE].kernel, id_of("skx"));
  ck_assert(now.pick[0][MLSBA__CPU_UPDATE].gflops == 100);
  ck_assert(!now.how.settled && now.how.tries == 2);
  /* The last try settles it, the first kept. */
  old.how.tries = MLSBA__CPU_CACHE_TRIES - 1;
  now = zen3;
  now.how = loaded;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert_int_eq(now.pick[0][MLSBA__CPU_UPDATE].kernel, id_of("skx"));
  ck_assert(now.how.settled && now.how.tries == MLSBA__CPU_CACHE_TRIES);
  /* Two busy timings that agree in every class settle it. */
  old = zen3;
  old.how = loaded;
  now = zen3;
  now.how = close;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert(now.how.settled && now.how.tries == 2);
  /* One class apart is not agreement. */
  now = zen3;
  now.pick[1][MLSBA__CPU_PANEL] = zen3.pick[1][MLSBA__CPU_UPDATE];
  now.how = shared;
  mlsba__cpu_choice_retimed(&old, &now);
  ck_assert(!now.how.settled);
  ck_assert_int_eq(now.pick[1][MLSBA__CPU_PANEL].kernel, id_of("skx"));
}
END_TEST

int main(void) {
  Suite *s = suite_create("cpu_kernels");
  TCase *tc = tcase_create("cpu_kernels");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, candidates_follow_the_fallback_order);
  tcase_add_test(tc, features_are_the_cpus_less_the_hidden);
  tcase_add_test(tc, an_unknown_hidden_feature_is_refused_in_the_reason);
  tcase_add_test(tc, a_calls_shape_gives_its_class);
  tcase_add_test(tc, the_choice_runs_on_this_cpu_and_computes_right);
  tcase_add_loop_test(tc, each_reachable_configuration_computes_right, 0,
                      (int)(sizeof forced_names / sizeof forced_names[0]));
  tcase_add_loop_test(tc, a_masked_cpu_falls_back, 0, 3);
  tcase_add_test(tc, a_forced_name_the_mask_forbids_is_refused);
  tcase_add_test(tc, openblas_gives_blis_results);
  tcase_add_test(tc, openblas_from_two_threads_at_once);
  tcase_add_test(tc, the_cache_text_is_read_strictly);
  tcase_add_loop_test(tc, a_cache_dir_too_long_is_refused, 0, 3);
  tcase_add_test(tc, a_fresh_cache_dir_is_made);
  tcase_add_test(tc, cpu_gemm_refuses_bad_arguments);
  tcase_add_test(tc, a_kernels_speed_is_the_median_of_its_rounds);
  tcase_add_test(tc, close_kernels_tie_and_the_preference_breaks_it);
  tcase_add_test(tc, the_decision_keeps_to_the_candidates_the_mask_allows);
  tcase_add_test(tc, noise_in_a_few_rounds_does_not_flip_the_choice);
  tcase_add_test(tc, a_choice_timed_on_a_busy_machine_is_timed_again);
  suite_add_tcase(s, tc);
  /* Each case of this one times the kernels in a fresh process, seven
   * times over. */
  TCase *cache = tcase_create("cache");
  tcase_set_timeout(cache, 900);
  tcase_add_test(cache, the_decision_is_cached_and_a_bad_cache_is_not_trusted);
  tcase_add_test(cache, a_choice_without_the_machines_openblas_is_not_cached);
  tcase_add_test(cache, a_fresh_choice_times_each_set_as_often_in_each_order);
  tcase_add_test(cache,
                 an_unsettled_cache_is_timed_again_until_its_tries_are_spent);
  suite_add_tcase(s, cache);
  return run_suite(s);
}
