/* The factorizations under bad input, faults and their models' files
 * (issue 31's reliability pass, issue 35's warm start): what can be
 * checked is checked before the caller's matrix is touched, and once it
 * is, the factors, ipiv and info come back (a model's problem is a
 * warning); device names escaped in model files; a failed panel device
 * hands the panels on; simulated times count the platform's columns; a
 * huge block sizes nothing by itself; a reproducible split; the models
 * kept in the per-user cache by default, and the log that shows them. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/dense.h"
#include "support/run_suite.h"

/* ---- the largest block asked of malloc ---------------------------------
 * Every allocation of the process passes here (the library's too), so a
 * test can see the scratch a call asks for without the machine having to
 * refuse it. Not under AddressSanitizer, whose own malloc is the one to
 * keep. */
#if defined(__SANITIZE_ADDRESS__)
#define WATCHES_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WATCHES_MALLOC 0
#endif
#endif
#ifndef WATCHES_MALLOC
#define WATCHES_MALLOC 1
#endif

#if WATCHES_MALLOC
extern void *__libc_malloc(size_t size);
static size_t largest_malloc;
void *malloc(size_t size) {
  if (size > largest_malloc)
    largest_malloc = size;
  return __libc_malloc(size);
}
#endif

static char *temp_dir(void) {
  static char dirs[8][64];
  static int next;
  char *d = dirs[next++ % 8];
  snprintf(d, 64, "/tmp/mlsba-ffaults-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void remove_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* LU (op 0) or lower Cholesky (op 1) of a's n x n double matrix on ex,
 * with the options; its residual into *res (where it ran). */
static int factor(mlsba_executor_t *ex, int op, int64_t n, double *a,
                  int64_t *ipiv, int64_t *info, const mlsba_factor_opts_t *o,
                  mlsba_factor_report_t *r) {
  return op ? mlsba_potrf_ex(ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n, info, o,
                             r)
            : mlsba_getrf_ex(ex, MLSBA_PRECISION_DOUBLE, n, n, a, n, ipiv, info,
                             o, r);
}

static double residual(int op, int64_t n, const double *a0, const double *a,
                       const int64_t *ipiv) {
  double res = -1;
  if (op)
    ck_assert_int_eq(
        mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', n, a0, n, a, n, &res),
        0);
  else
    ck_assert_int_eq(mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, n, n, a0, n,
                                          a, n, ipiv, &res),
                     0);
  return res;
}

/* ---- model folders -------------------------------------------------- */

/* A model folder that cannot be written (a regular file, a folder under
 * one, a folder without write permission where permissions hold) fails
 * with MLSBA_EIO naming it, and the matrix is as it was: the models would
 * otherwise be lost after the whole factorization. */
START_TEST(an_unwritable_model_folder_fails_before_the_matrix_is_touched) {
  node_t nd = open_node(two_cores);
  char *base = temp_dir();
  char file[256], under[300], locked[256];
  snprintf(file, sizeof file, "%s/a-file", base);
  snprintf(under, sizeof under, "%s/a-file/models", base);
  snprintf(locked, sizeof locked, "%s/locked", base);
  FILE *f = fopen(file, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  ck_assert_int_eq(mkdir(locked, 0500), 0);
  /* Root writes where permissions say no: that case is then not one. */
  const char *dirs[] = {file, under, locked};
  size_t cases = geteuid() == 0 ? 2 : 3;
  const int64_t n = 256;
  for (size_t k = 0; k < cases; k++)
    for (int op = 0; op < 2; op++) {
      double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 3);
      double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
      int64_t ipiv[256], info = -7;
      mlsba_factor_opts_t o;
      mlsba_factor_opts_init(&o);
      o.block = 32;
      o.model_dir = dirs[k];
      int err = factor(nd.ex, op, n, a, ipiv, &info, &o, NULL);
      ck_assert_msg(err == MLSBA_EIO, "%s: %d (%s)", dirs[k], err,
                    mlsba_last_error());
      ck_assert_msg(strstr(mlsba_last_error(), dirs[k]) != NULL, "%s",
                    mlsba_last_error());
      ck_assert_msg(memcmp(a, a0, bytes_of(MLSBA_PRECISION_DOUBLE, n, n)) == 0,
                    "%s: the matrix was touched", dirs[k]);
      free(a);
      free(a0);
    }
  chmod(locked, 0700);
  remove_tree(base);
  close_node(&nd);
}
END_TEST

/* Device i's model file in dir (the first that glob finds). */
static int model_file(const char *dir, const char *pattern, char *out,
                      size_t size) {
  char pat[512];
  snprintf(pat, sizeof pat, "%s/%s", dir, pattern);
  glob_t g;
  int found = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0;
  if (found)
    snprintf(out, size, "%s", g.gl_pathv[0]);
  globfree(&g);
  return found;
}

/* A saved model's key (its "key " line). */
static void saved_key(const char *path, char *key, size_t size) {
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  char line[1024];
  key[0] = '\0';
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "key ", 4) == 0)
      snprintf(key, size, "%s", line + 4);
  fclose(f);
  key[strcspn(key, "\n")] = '\0';
}

/* Rewrites a saved model with one rate at every point, under its key. */
static void rewrite_model(const char *path, double rate) {
  char key[1024];
  saved_key(path, key, sizeof key);
  ck_assert(key[0] != '\0');
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 16, rate), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 512, rate), 0);
  ck_assert_int_eq(mlsba_model_save(m, path, key), 0);
  mlsba_model_destroy(m);
}

/* Saved models within the models' bounds that no device has (1e-30 flops
 * per second) made every later factorization with that folder fail with
 * the matrix half done: they are ignored with a warning, the factors,
 * ipiv and info come back right. */
START_TEST(a_saved_model_no_device_has_is_a_warning) {
  node_t nd = open_node(two_cores);
  char *dir = temp_dir();
  const int64_t n = 256;
  for (int op = 0; op < 2; op++) {
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 32;
    o.model_dir = dir;
    for (int run = 0; run < 2; run++) {
      double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 5);
      double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
      int64_t ipiv[256], info = -7;
      mlsba_factor_report_t r;
      int err = factor(nd.ex, op, n, a, ipiv, &info, &o, &r);
      ck_assert_msg(err == 0, "op %d run %d: %s", op, run, mlsba_last_error());
      ck_assert_int_eq(info, 0);
      double res = residual(op, n, a0, a, ipiv);
      ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g",
                    res);
      if (run == 1) {
        ck_assert_uint_ge(r.warnings, 1);
        ck_assert_msg(strstr(r.warning, "ignored") != NULL, "%s", r.warning);
      }
      mlsba_factor_report_free(&r);
      free(a);
      free(a0);
      if (run == 0) { /* both devices' models made absurd */
        char path[1024];
        const char *names[] = {op ? "potrf-update-double-nb32-c0.model"
                                  : "getrf-update-double-nb32-c0.model",
                               op ? "potrf-update-double-nb32-c1.model"
                                  : "getrf-update-double-nb32-c1.model"};
        for (int d = 0; d < 2; d++) {
          ck_assert_msg(model_file(dir, names[d], path, sizeof path), "%s",
                        names[d]);
          rewrite_model(path, 1e-30);
        }
      }
    }
  }
  remove_tree(dir);
  close_node(&nd);
}
END_TEST

/* The log hook of the next test: at the first line of a step, the model
 * folder becomes a file, so that saving fails after the factorization. */
typedef struct {
  const char *dir;
  int swapped, steps;
} swap_t;

static void swap_folder(void *user, const char *line) {
  swap_t *s = user;
  if (strstr(line, " step ") == NULL)
    return;
  s->steps++;
  if (s->swapped++)
    return;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && touch '%s'", s->dir, s->dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* Once the matrix is touched a model that cannot be saved is a warning
 * of the report: the call returns 0 with the factors, ipiv and info. */
START_TEST(a_model_that_cannot_be_saved_after_the_run_is_a_warning) {
  node_t nd = open_node(two_cores);
  char *base = temp_dir();
  char dir[300];
  snprintf(dir, sizeof dir, "%s/models", base);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  const int64_t n = 256;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 9);
  double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  int64_t ipiv[256], info = -7;
  swap_t s = {.dir = dir};
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32;
  o.model_dir = dir;
  o.log = swap_folder;
  o.log_ctx = &s;
  mlsba_factor_report_t r;
  int err = factor(nd.ex, 0, n, a, ipiv, &info, &o, &r);
  ck_assert_msg(err == 0, "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  ck_assert_int_gt(s.steps, 2);
  ck_assert_uint_ge(r.warnings, 1);
  ck_assert_msg(strstr(r.warning, "not saved") != NULL, "%s", r.warning);
  double res = residual(0, n, a0, a, ipiv);
  ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  mlsba_factor_report_free(&r);
  free(a);
  free(a0);
  remove_tree(base);
  close_node(&nd);
}
END_TEST

/* Device names in factor model files are escaped as the balancer's: a
 * device named "x/../../o" writes inside the folder, and "core/0" no
 * longer fails every factorization with a model folder. The balancer
 * names the same device's file with the same escaped name. */
START_TEST(device_names_are_escaped_in_model_files) {
  node_t nd = open_node("{\"devices\": ["
                        "{\"name\": \"x/../../o\", \"type\": \"cpu\", "
                        "\"core\": 0},"
                        "{\"name\": \"core/0\", \"type\": \"cpu\", "
                        "\"core\": 1}]}");
  char *base = temp_dir();
  char dir[300];
  snprintf(dir, sizeof dir, "%s/a", base);
  ck_assert_int_eq(mkdir(dir, 0700), 0);
  snprintf(dir, sizeof dir, "%s/a/b", base);
  const int64_t n = 256;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 1, 4);
  int64_t info = -7;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32;
  o.model_dir = dir;
  mlsba_factor_report_t r;
  ck_assert_msg(factor(nd.ex, 1, n, a, NULL, &info, &o, &r) == 0, "%s",
                mlsba_last_error());
  ck_assert_uint_eq(r.warnings, 0);
  mlsba_factor_report_free(&r);
  char path[1024];
  snprintf(path, sizeof path,
           "%s/potrf-update-double-nb32-x%%2F..%%2F..%%2Fo.model", dir);
  ck_assert_msg(access(path, R_OK) == 0, "%s", path);
  snprintf(path, sizeof path, "%s/potrf-update-double-nb32-core%%2F0.model",
           dir);
  ck_assert_msg(access(path, R_OK) == 0, "%s", path);
  /* Nothing beside the folder: base holds a, a holds b. */
  size_t outside = 0;
  DIR *d;
  struct dirent *e;
  char a_dir[300];
  snprintf(a_dir, sizeof a_dir, "%s/a", base);
  const char *watch[] = {base, a_dir};
  for (int l = 0; l < 2; l++) {
    ck_assert_ptr_nonnull(d = opendir(watch[l]));
    while ((e = readdir(d)) != NULL)
      outside += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                 strcmp(e->d_name, l ? "b" : "a");
    closedir(d);
  }
  ck_assert_uint_eq(outside, 0);
  /* The balancer's file of the same device: the same escaped name. */
  enum { GM = 64, GN = 256 };
  double *ga = calloc(GM * GM, sizeof *ga), *gb = calloc(GM * GN, sizeof *gb),
         *gc = calloc(GM * GN, sizeof *gc);
  mlsba_gemm_t g = {.m = GM,
                    .n = GN,
                    .k = GM,
                    .precision = MLSBA_PRECISION_DOUBLE,
                    .a = ga,
                    .b = gb,
                    .c = gc};
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_gemm(&g, &w), 0);
  mlsba_balance_opts_t bo;
  mlsba_balance_opts_init(&bo);
  bo.model_dir = dir;
  bo.max_iter = 2;
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance_ex(nd.pl, w, &bo, &b) == 0, "%s",
                mlsba_last_error());
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  free(ga);
  free(gb);
  free(gc);
  ck_assert_msg(model_file(dir, "core%2F0.*.model", path, sizeof path),
                "no balancer model for core/0 in %s", dir);
  free(a);
  remove_tree(base);
  close_node(&nd);
}
END_TEST

/* ---- a failed panel device -------------------------------------------- */

/* core0 factorizes the panels and fails at its 3rd share: the panels move
 * to core1, the driving core of the next group (gpu0 is no core), the
 * factors stay right, and the call returns 0 with one device lost. A
 * platform whose every device fails returns MLSBA_EDEVICE. */
START_TEST(a_failed_panel_device_hands_the_panels_on) {
  for (int op = 0; op < 2; op++) {
    node_t nd = open_node(
        "{\"devices\": ["
        "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]],"
        " \"fail_at\": 3},"
        "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]},"
        "{\"name\": \"core1\", \"type\": \"sim\", \"speed\": [[1, 100]]}],"
        "\"groups\": [[\"core0\", \"gpu0\"], [\"core1\"]]}");
    const int64_t n = 160;
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 11);
    double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
    int64_t ipiv[160], info = -7;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 16;
    mlsba_factor_report_t r;
    int err = factor(nd.ex, op, n, a, ipiv, &info, &o, &r);
    ck_assert_msg(err == 0, "op %d: %d %s", op, err, mlsba_last_error());
    ck_assert_int_eq(info, 0);
    ck_assert_uint_eq(r.lost, 1);
    ck_assert_int_eq(r.dropped[0], 1);
    ck_assert_int_eq(r.panel_device, 2);
    /* core0 takes nothing after its failure. */
    size_t used = 0;
    for (size_t k = 1; k < r.steps; k++)
      used += r.share[k * 3] > 0;
    ck_assert_uint_le(used, 2);
    double res = residual(op, n, a0, a, ipiv);
    ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g",
                  res);
    mlsba_factor_report_free(&r);
    free(a);
    free(a0);
    close_node(&nd);
  }
  node_t alone =
      open_node("{\"devices\": [{\"name\": \"core0\", \"type\": \"sim\", "
                "\"speed\": [[1, 100]], \"fail_at\": 2}]}");
  const int64_t n = 96;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 2);
  int64_t ipiv[96], info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 16;
  ck_assert_int_eq(factor(alone.ex, 0, n, a, ipiv, &info, &o, NULL),
                   MLSBA_EDEVICE);
  free(a);
  close_node(&alone);
}
END_TEST

/* ---- simulated time counts the platform's columns ---------------------- */

/* A platform whose speeds count columns of a 1000 x 1000 product (2e6
 * flops each): at 100 and 300 of them per second, no factorization runs
 * faster than its flops at 8e8 flops per second, and n = 2048 takes
 * about (2048 / 512)^3 times n = 512's time (both took the same when a
 * unit was a column of the n x n x n product). */
START_TEST(simulated_times_count_the_platforms_columns) {
  node_t nd = open_node(
      "{\"columns_of\": {\"m\": 1000, \"k\": 1000}, \"devices\": ["
      "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
      "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]}],"
      "\"groups\": [[\"core0\"], [\"gpu0\"]]}");
  double seconds[2];
  const int64_t sizes[2] = {512, 2048};
  for (int op = 0; op < 2; op++) {
    for (int k = 0; k < 2; k++) {
      int64_t info;
      mlsba_factor_opts_t o;
      mlsba_factor_opts_init(&o);
      o.block = 64;
      o.compute = 0;
      mlsba_factor_report_t r;
      int64_t *ipiv = calloc((size_t)sizes[k], sizeof *ipiv);
      double *a = calloc(1, sizeof *a);
      /* compute = 0 never reads the matrix: a lone element stands in. */
      ck_assert_msg((op ? mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L',
                                         sizes[k], a, sizes[k], &info, &o, &r)
                        : mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE,
                                         sizes[k], sizes[k], a, sizes[k], ipiv,
                                         &info, &o, &r)) == 0,
                    "%s", mlsba_last_error());
      ck_assert(r.virtual_time);
      ck_assert_msg(r.seconds >= r.flops / 8e8 * (1 - 1e-9),
                    "op %d n %lld: %g s for %g flops at most 8e8 flops/s", op,
                    (long long)sizes[k], r.seconds, r.flops);
      seconds[k] = r.seconds;
      mlsba_factor_report_free(&r);
      free(ipiv);
      free(a);
    }
    double ratio = seconds[1] / seconds[0];
    ck_assert_msg(ratio > 40 && ratio < 80,
                  "op %d: n = 2048 took %g times "
                  "n = 512's time",
                  op, ratio);
  }
  close_node(&nd);
}
END_TEST

/* ---- a huge block ------------------------------------------------------ */

/* A block of INT_MAX on an 8 x 8 LU: one panel, scratch by the matrix
 * (it asked malloc for 128 GiB), the factors right. */
START_TEST(a_huge_block_sizes_scratch_by_the_matrix) {
  node_t nd = open_node(two_cores);
  for (int op = 0; op < 2; op++) {
    const int64_t n = 8;
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 1);
    double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
    int64_t ipiv[8], info = -7;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = INT_MAX;
    o.model_cache = 0;
#if WATCHES_MALLOC
    largest_malloc = 0;
#endif
    ck_assert_msg(factor(nd.ex, op, n, a, ipiv, &info, &o, NULL) == 0, "%s",
                  mlsba_last_error());
#if WATCHES_MALLOC
    ck_assert_msg(largest_malloc < ((size_t)1 << 30),
                  "op %d: malloc was asked for %zu bytes", op, largest_malloc);
#endif
    ck_assert_int_eq(info, 0);
    double res = residual(op, n, a0, a, ipiv);
    ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g",
                  res);
    free(a);
    free(a0);
  }
  close_node(&nd);
}
END_TEST

/* ---- reproducible ------------------------------------------------------ */

/* Single-precision LU and Cholesky on two cores, reproducible: the same
 * split at every step of two runs (even between the cores), and bitwise
 * the same factors and pivots; MLSBA_REPRODUCIBLE=1 does the same for
 * options that do not ask; a value it cannot read is refused before the
 * matrix is touched. */
START_TEST(a_reproducible_split_gives_the_same_bits) {
  node_t nd = open_node(two_cores);
  const int64_t n = 600;
  const mlsba_precision_t sp = MLSBA_PRECISION_SINGLE;
  for (int op = 0; op < 2; op++) {
    float *a0 = make_matrix(sp, n, n, n, op, 17);
    float *out[3];
    int64_t *piv[3];
    mlsba_factor_report_t r[3];
    for (int run = 0; run < 3; run++) {
      out[run] = copy_of(a0, bytes_of(sp, n, n));
      piv[run] = calloc((size_t)n, sizeof **piv);
      mlsba_factor_opts_t o;
      mlsba_factor_opts_init(&o);
      o.block = 64;
      o.reproducible = run < 2;
      if (run == 2)
        setenv("MLSBA_REPRODUCIBLE", "1", 1);
      int64_t info = -7;
      int err = op ? mlsba_potrf_ex(nd.ex, sp, 'L', n, out[run], n, &info, &o,
                                    &r[run])
                   : mlsba_getrf_ex(nd.ex, sp, n, n, out[run], n, piv[run],
                                    &info, &o, &r[run]);
      unsetenv("MLSBA_REPRODUCIBLE");
      ck_assert_msg(err == 0, "%s", mlsba_last_error());
      ck_assert_int_eq(info, 0);
    }
    for (int run = 1; run < 3; run++) {
      ck_assert_uint_eq(r[run].steps, r[0].steps);
      for (size_t k = 0; k < r[0].steps * r[0].p; k++)
        ck_assert_int_eq(r[run].share[k], r[0].share[k]);
      ck_assert_msg(memcmp(out[run], out[0], bytes_of(sp, n, n)) == 0,
                    "op %d: run %d differs", op, run);
      ck_assert(memcmp(piv[run], piv[0], (size_t)n * sizeof **piv) == 0);
    }
    /* Even: the cores' units differ by at most the next panel's columns
     * that the panel's core updates first, and a unit of rounding. */
    for (size_t k = 1; k < r[0].steps; k++) {
      int64_t d = r[0].share[k * 2] - r[0].share[k * 2 + 1];
      ck_assert_msg(d >= -1 && d <= 64 + 1, "step %zu: %lld and %lld", k,
                    (long long)r[0].share[k * 2],
                    (long long)r[0].share[k * 2 + 1]);
    }
    for (int run = 0; run < 3; run++) {
      mlsba_factor_report_free(&r[run]);
      free(out[run]);
      free(piv[run]);
    }
    free(a0);
  }
  const char *bad[] = {"MLSBA_REPRODUCIBLE", "MLSBA_MODEL_CACHE"};
  for (int k = 0; k < 2; k++) {
    setenv(bad[k], "maybe", 1);
    float *a = make_matrix(sp, 64, 64, 64, 0, 3),
          *a0 = copy_of(a, bytes_of(sp, 64, 64));
    int64_t ipiv[64], info;
    int err = mlsba_getrf(nd.ex, sp, 64, 64, a, 64, ipiv, &info);
    unsetenv(bad[k]);
    ck_assert_int_eq(err, MLSBA_EINVAL);
    ck_assert_msg(strstr(mlsba_last_error(), bad[k]) != NULL, "%s",
                  mlsba_last_error());
    ck_assert(memcmp(a, a0, bytes_of(sp, 64, 64)) == 0);
    free(a);
    free(a0);
  }
  close_node(&nd);
}
END_TEST

/* ---- warm by default --------------------------------------------------- */

typedef struct {
  char text[16384];
  size_t len;
} lines_t;

static void keep_line(void *user, const char *line) {
  lines_t *l = user;
  int w = snprintf(l->text + l->len, sizeof l->text - l->len, "%s\n", line);
  if (w > 0 && l->len + (size_t)w < sizeof l->text)
    l->len += (size_t)w;
}

/* The plain call keeps its models in the per-user cache
 * ($MLSBA_CACHE_DIR/HOST), and the next factorization of the size starts
 * from them (the log says so); model_cache = 0 and MLSBA_MODEL_CACHE=0
 * keep none; a cache that cannot be made is a warning, never a failure. */
START_TEST(the_plain_calls_keep_their_models_in_the_cache) {
  node_t nd = open_node(two_cores);
  char *cache = temp_dir();
  setenv("MLSBA_CACHE_DIR", cache, 1);
  unsetenv("MLSBA_MODEL_CACHE");
  const int64_t n = 512;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 8);
  int64_t ipiv[512], info = -7;
  ck_assert_msg(
      mlsba_getrf(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n, ipiv, &info) == 0,
      "%s", mlsba_last_error());
  char path[1024];
  ck_assert_msg(model_file(cache, "*/getrf-update-double-nb128-c0.model", path,
                           sizeof path),
                "no model in the cache %s", cache);
  free(a);
  /* The second call starts warm, and says what it learnt. */
  lines_t log = {.len = 0};
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.log = keep_line;
  o.log_ctx = &log;
  a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 8);
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, NULL),
                   0);
  ck_assert_msg(strstr(log.text, "c0 starts warm") != NULL, "%s", log.text);
  ck_assert_msg(strstr(log.text, "getrf step 1: ") != NULL, "%s", log.text);
  /* A step that factorized a panel says its seconds. */
  ck_assert_msg(strstr(log.text, "); panel ") != NULL, "%s", log.text);
  ck_assert_msg(strstr(log.text, "learnt c1: ") != NULL, "%s", log.text);
  free(a);
  /* Opted out in the options, or by the environment: nothing read. */
  for (int way = 0; way < 2; way++) {
    log.len = 0;
    log.text[0] = '\0';
    o.model_cache = way == 0 ? 0 : 1;
    if (way == 1)
      setenv("MLSBA_MODEL_CACHE", "0", 1);
    a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 8);
    ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                    ipiv, &info, &o, NULL),
                     0);
    unsetenv("MLSBA_MODEL_CACHE");
    ck_assert_msg(strstr(log.text, "starts warm") == NULL, "%s", log.text);
    ck_assert_msg(strstr(log.text, "saved") == NULL, "%s", log.text);
    free(a);
  }
  /* A cache where no folder can be made: a warning, the factors back. */
  char file[300];
  snprintf(file, sizeof file, "%s/a-file", cache);
  FILE *f = fopen(file, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  setenv("MLSBA_CACHE_DIR", file, 1);
  a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 8);
  double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  mlsba_factor_report_t r;
  mlsba_factor_opts_init(&o);
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, &r),
                   0);
  ck_assert_uint_ge(r.warnings, 1);
  ck_assert_int_eq(info, 0);
  double res = residual(0, n, a0, a, ipiv);
  ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  mlsba_factor_report_free(&r);
  free(a);
  free(a0);
  unsetenv("MLSBA_CACHE_DIR");
  remove_tree(cache);
  close_node(&nd);
}
END_TEST

/* MLSBA_VERBOSE sends the lines to stderr; without it, and without a log
 * hook, the library writes nothing there. */
START_TEST(only_mlsba_verbose_makes_the_library_print) {
  node_t nd = open_node(two_cores);
  setenv("MLSBA_CACHE_DIR", "none", 1);
  char *dir = temp_dir();
  char path[300];
  snprintf(path, sizeof path, "%s/stderr", dir);
  for (int verbose = 0; verbose < 2; verbose++) {
    if (verbose)
      setenv("MLSBA_VERBOSE", "1", 1);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    const int64_t n = 256;
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 1, 8);
    int64_t info;
    int err = mlsba_potrf(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n, &info);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unsetenv("MLSBA_VERBOSE");
    ck_assert_int_eq(err, 0);
    free(a);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    if (!verbose) {
      ck_assert_int_eq(st.st_size, 0);
      continue;
    }
    char text[4096] = "";
    FILE *f = fopen(path, "r");
    size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    ck_assert_msg(strstr(text, "mlsba: potrf step 1: ") != NULL, "%s", text);
  }
  unsetenv("MLSBA_CACHE_DIR");
  remove_tree(dir);
  close_node(&nd);
}
END_TEST

/* ---- a stale saved model -------------------------------------------- */

/* A saved model's points' mean rate (its key from the file); with
 * `at` >= 0, whether it has the point (at, rate) exactly instead. */
static double saved_rate(const char *path, double at, double rate) {
  char key[1024];
  saved_key(path, key, sizeof key);
  mlsba_model_t *m = NULL;
  ck_assert_msg(mlsba_model_load(path, key, &m) == 0, "%s", mlsba_last_error());
  size_t n = mlsba_model_num_points(m);
  ck_assert_uint_gt(n, 0);
  double sum = 0;
  int found = 0;
  for (size_t k = 0; k < n; k++) {
    double x, s;
    mlsba_model_get_point(m, k, &x, &s);
    sum += s;
    found |= x == at && s == rate;
  }
  mlsba_model_destroy(m);
  return at >= 0 ? found : sum / (double)n;
}

/* An LU of n = 1024 (block 64, seeded) on saved models rewritten
 * between two runs: the first run saves both cores' models in a fresh
 * folder; c0's is rewritten at the mean rate it measured, c1's at that
 * rate over slow_by; the second run factorizes the same matrix again on
 * them, its log kept, and its factors checked (info 0, the residual). */
typedef struct {
  node_t nd;
  char *dir;
  char c1[512]; /* c1's model file */
  double rate;  /* c0's measured mean rate */
  lines_t log;
  mlsba_factor_report_t r;
} rewritten_run_t;

static void run_on_rewritten_models(rewritten_run_t *s, uint64_t seed,
                                    double slow_by) {
  s->nd = open_node(two_cores);
  s->dir = temp_dir();
  s->log.len = 0;
  const int64_t n = 1024;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 64;
  o.model_dir = s->dir;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, seed);
  int64_t *ipiv = malloc(sizeof *ipiv * (size_t)n), info = -7;
  ck_assert_msg(factor(s->nd.ex, 0, n, a, ipiv, &info, &o, NULL) == 0, "%s",
                mlsba_last_error());
  free(a);
  char c0[512];
  ck_assert(
      model_file(s->dir, "getrf-update-double-nb64-c0.model", c0, sizeof c0));
  ck_assert(model_file(s->dir, "getrf-update-double-nb64-c1.model", s->c1,
                       sizeof s->c1));
  s->rate = saved_rate(c0, -1, 0);
  rewrite_model(c0, s->rate);
  rewrite_model(s->c1, s->rate / slow_by);
  o.log = keep_line;
  o.log_ctx = &s->log;
  a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, seed);
  double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  ck_assert_msg(factor(s->nd.ex, 0, n, a, ipiv, &info, &o, &s->r) == 0, "%s",
                mlsba_last_error());
  ck_assert_int_eq(info, 0);
  double res = residual(0, n, a0, a, ipiv);
  ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  free(a);
  free(a0);
  free(ipiv);
}

static void rewritten_run_free(rewritten_run_t *s) {
  mlsba_factor_report_free(&s->r);
  remove_tree(s->dir);
  close_node(&s->nd);
}

/* A saved model thirty times too slow for its device (one saved under
 * load, another machine's in a shared home) starved the device for the whole
 * factorization: its measured points joined the slow ones, which kept
 * deciding the split at other sizes. The first step that measures the
 * device finds the model stale and replaces it, not merges it: from the
 * next step on the device has its share again, the log says so, and no
 * slow point is saved back. */
START_TEST(a_stale_saved_model_is_replaced_after_the_first_step) {
  /* Both cores as fast as c0 measured, c1 saved thirty times slower:
   * stale while c1 runs its first share above a twentieth of c0's rate,
   * which holds on a loaded machine too (at ten times slower, c1 starved
   * by three other suites at load 10 was once taken for its model). */
  rewritten_run_t s;
  run_on_rewritten_models(&s, 11, 30);
  const mlsba_factor_report_t *r = &s.r;
  ck_assert_msg(strstr(s.log.text, "c1: the saved model is stale (step 1") !=
                    NULL,
                "%s", s.log.text);
  ck_assert_uint_ge(r->steps, 4);
  /* Steps 2 and 3 on what step 1 measured: about half each where both
   * cores run alike (c1's saved model gave it a thirty-first in step 1, with
   * what it took from c0's end). */
  for (size_t k = 2; k <= 3; k++) {
    double part = (double)r->share[k * r->p + 1] / (double)r->units[k];
    ck_assert_msg(part >= 0.3, "step %zu gave c1 %.2f of the update:\n%s", k,
                  part, s.log.text);
  }
  /* Replaced, not merged: the stale model's point at 16 units (no share
   * of these steps comes near it) is not saved back. */
  ck_assert_msg(!saved_rate(s.c1, 16, s.rate / 30),
                "c1's stale point was kept");
  rewritten_run_free(&s);
}
END_TEST

/* A saved model so slow that the split gives its device nothing (a
 * millionth of its speed) was never corrected: the device never ran, so
 * it was never timed again. The first step gives it a probe of a few
 * units, finds the model stale, and a later step gives it its share
 * again; the log names the probe. */
START_TEST(a_starved_device_is_probed_again) {
  rewritten_run_t s;
  run_on_rewritten_models(&s, 12, 1e6);
  const mlsba_factor_report_t *r = &s.r;
  ck_assert_msg(strstr(s.log.text, "c1: its saved model gives it nothing at "
                                   "step 1: probed with ") != NULL,
                "%s", s.log.text);
  ck_assert_msg(strstr(s.log.text, "c1: the saved model is stale (step 1") !=
                    NULL,
                "%s", s.log.text);
  ck_assert_uint_ge(r->steps, 6);
  ck_assert_int_gt(r->share[1 * r->p + 1], 0);
  /* Once measured, c1 gets a real share again (about half, where both
   * cores run alike) within a few steps. */
  double best = 0;
  for (size_t k = 2; k <= 5; k++) {
    double part = (double)r->share[k * r->p + 1] / (double)r->units[k];
    best = part > best ? part : best;
  }
  ck_assert_msg(best >= 0.3, "steps 2-5 gave c1 at most %.2f:\n%s", best,
                s.log.text);
  /* The starved model is not saved back. */
  ck_assert_msg(saved_rate(s.c1, -1, 0) > s.rate / 1e3,
                "c1's starved model was kept");
  rewritten_run_free(&s);
}
END_TEST

static Suite *faults_suite(void) {
  Suite *s = suite_create("factor_faults");
  TCase *tc = tcase_create("factor_faults");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc,
                 an_unwritable_model_folder_fails_before_the_matrix_is_touched);
  tcase_add_test(tc, a_saved_model_no_device_has_is_a_warning);
  tcase_add_test(tc, a_model_that_cannot_be_saved_after_the_run_is_a_warning);
  tcase_add_test(tc, device_names_are_escaped_in_model_files);
  tcase_add_test(tc, a_failed_panel_device_hands_the_panels_on);
  tcase_add_test(tc, simulated_times_count_the_platforms_columns);
  tcase_add_test(tc, a_huge_block_sizes_scratch_by_the_matrix);
  tcase_add_test(tc, a_reproducible_split_gives_the_same_bits);
  tcase_add_test(tc, the_plain_calls_keep_their_models_in_the_cache);
  tcase_add_test(tc, only_mlsba_verbose_makes_the_library_print);
  tcase_add_test(tc, a_stale_saved_model_is_replaced_after_the_first_step);
  tcase_add_test(tc, a_starved_device_is_probed_again);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  /* Every case keeps its models away from the user's cache, but the one
   * that points it elsewhere. */
  setenv("MLSBA_MODEL_CACHE", "0", 1);
  return run_suite(faults_suite());
}
