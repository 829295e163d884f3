/* The CPU's kernels (lib/devices/cpu/cpu_kernels.c, cpu_blas.c): the
 * fallback order of the sub-configurations by the CPU's features, a choice
 * never outside what the CPU executes, every reachable sub-configuration
 * giving the reference product, the environment controls and the cache.
 * Each test runs in a fork of its own (Check's fork mode), so the choice,
 * made once per process, is made afresh in each. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devices/cpu/cpu_kernels.h"
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
  setenv("MLSBA_CPU_HIDE", "nonsense,,fma", 1);
  ck_assert_uint_eq(mlsba__cpu_features(),
                    f & ~(MLSBA__CPU_FMA | MLSBA__CPU_AVX512));
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

START_TEST(the_choice_runs_on_this_cpu_and_computes_right) {
  setenv("MLSBA_CACHE_DIR", "none", 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  unsigned f = mlsba__cpu_features();
  ck_assert_uint_eq(needs_of(k.single_kernels) & ~f, 0);
  ck_assert_uint_eq(needs_of(k.double_kernels) & ~f, 0);
  ck_assert_ptr_nonnull(strstr(k.description, k.library));
  ck_assert_ptr_nonnull(strstr(k.description, k.detected));
  ck_assert_msg(strncmp(k.reason, "measured", 8) == 0 ||
                    strncmp(k.reason, "BLIS's own", 10) == 0 ||
                    strncmp(k.reason, "the only one", 12) == 0,
                "reason: %s", k.reason);
  check_products();
}
END_TEST

/* Forced, each sub-configuration this CPU can run gives the reference
 * product; one it cannot run is refused and another is chosen. */
static const char *const forced_names[] = {
    "skx", "zen3", "haswell", "sandybridge", "penryn", "generic", "auto"};

START_TEST(each_reachable_configuration_computes_right) {
  const char *name = forced_names[_i];
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", name, 1);
  unsigned f = mlsba__cpu_features();
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  if ((needs_of(name) & ~f) == 0) {
    const char *shown = strcmp(name, "auto") == 0 ? k.detected : name;
    ck_assert_str_eq(k.single_kernels, shown);
    ck_assert_str_eq(k.double_kernels, shown);
    ck_assert_str_eq(k.reason, "forced by MLSBA_CPU_KERNELS");
  } else {
    ck_assert_ptr_nonnull(strstr(k.reason, "refused"));
    ck_assert_str_ne(k.single_kernels, name);
    ck_assert_uint_eq(needs_of(k.single_kernels) & ~f, 0);
  }
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

/* The reason a fresh process gives, with the cache in dir. */
static void reason_in_child(const char *dir, char *out, size_t size) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    setenv("MLSBA_CACHE_DIR", dir, 1);
    mlsba_cpu_kernels_t k;
    mlsba_cpu_kernels(&k);
    ssize_t w = write(fd[1], k.reason, strlen(k.reason));
    _exit(w < 0);
  }
  close(fd[1]);
  ssize_t got = read(fd[0], out, size - 1);
  out[got > 0 ? got : 0] = '\0';
  close(fd[0]);
  int status;
  waitpid(pid, &status, 0);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The one cache file under dir (dir/HOST/cpu-kernels). */
static void cache_file(const char *dir, char *path, size_t size) {
  char host[128] = {0};
  gethostname(host, sizeof host - 1);
  snprintf(path, size, "%s/%s/cpu-kernels", dir, host);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  static char text[1024];
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

START_TEST(the_decision_is_cached_and_a_bad_cache_is_not_trusted) {
  char dir[] = "/tmp/mlsba-kernels-XXXXXX", path[512], reason[512];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  cache_file(dir, path, sizeof path);
  reason_in_child(dir, reason, sizeof reason);
  if (strncmp(reason, "measured:", 9) != 0) /* one sub-configuration only */
    return;
  char *text = slurp(path);
  ck_assert_ptr_nonnull(strstr(text, "mlsba cpu-kernels 1\nkey "));
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured on this CPU earlier", 28) == 0,
                "second process: %s", reason);
  /* Another CPU's decision (its key differs): measured again. */
  char *key_end = strchr(strstr(text, "key ") + 4, '\n');
  ck_assert_ptr_nonnull(key_end);
  char other[1024];
  snprintf(other, sizeof other, "%.*s other CPU%s", (int)(key_end - text), text,
           key_end);
  spit(path, other);
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured:", 9) == 0, "other key: %s", reason);
  /* A name that is no sub-configuration, or a speed that is no number. */
  text = slurp(path);
  char *single = strstr(text, "single ");
  ck_assert_ptr_nonnull(single);
  char bad[1024];
  snprintf(bad, sizeof bad, "%.*ssingle bogus 1.0\ndouble generic nan\n",
           (int)(single - text), text);
  spit(path, bad);
  reason_in_child(dir, reason, sizeof reason);
  ck_assert_msg(strncmp(reason, "measured:", 9) == 0, "bad file: %s", reason);
  unlink(path);
  char host_dir[512];
  snprintf(host_dir, sizeof host_dir, "%.*s", (int)(strrchr(path, '/') - path),
           path);
  rmdir(host_dir);
  rmdir(dir);
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

int main(void) {
  Suite *s = suite_create("cpu_kernels");
  TCase *tc = tcase_create("cpu_kernels");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, candidates_follow_the_fallback_order);
  tcase_add_test(tc, features_are_the_cpus_less_the_hidden);
  tcase_add_test(tc, the_choice_runs_on_this_cpu_and_computes_right);
  tcase_add_loop_test(tc, each_reachable_configuration_computes_right, 0,
                      (int)(sizeof forced_names / sizeof forced_names[0]));
  tcase_add_loop_test(tc, a_masked_cpu_falls_back, 0, 3);
  tcase_add_test(tc, a_forced_name_the_mask_forbids_is_refused);
  tcase_add_test(tc, the_decision_is_cached_and_a_bad_cache_is_not_trusted);
  tcase_add_test(tc, cpu_gemm_refuses_bad_arguments);
  suite_add_tcase(s, tc);
  return run_suite(s);
}
