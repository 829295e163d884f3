/* Devices that compute on the cores of other devices (pocl beside the core
 * devices), reproduced with sim contention: the executor slows the named
 * devices while such a device runs; the balancer leaves the device out
 * when the others are faster without it, keeps it when it pays, and keeps
 * everything under MLSBA_SHARING_KEEP. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/run_suite.h"

/* Two sim cores of `core` units/s and a shared device of `shared` units/s
 * that makes them 1 + contention times slower while it runs. */
static mlsba_platform_t *cores_and_shared(double core, double shared,
                                          double contention, double noise) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"devices\": ["
           "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, %g]],"
           " \"noise\": %g, \"seed\": 1},"
           "{\"name\": \"core1\", \"type\": \"sim\", \"speed\": [[1, %g]],"
           " \"noise\": %g, \"seed\": 2},"
           "{\"name\": \"ocl0\", \"type\": \"sim\", \"speed\": [[1, %g]],"
           " \"noise\": %g, \"seed\": 3,"
           " \"contends_with\": [\"core0\", \"core1\"], \"contention\": %g}],"
           " \"groups\": [[\"core0\", \"ocl0\"], [\"core1\"]]}",
           core, noise, core, noise, shared, noise, contention);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "shared", &pl), 0);
  return pl;
}

static float dummy;
static const mlsba_gemm_t product = {
    .m = 1, .n = 2000, .k = 1, .a = &dummy, .b = &dummy, .c = &dummy};

/* While ocl0 runs for T, a core that needs t alone takes t (1 + c) if that
 * ends first, else T + (t - T / (1 + c)); without ocl0 it takes t. */
START_TEST(contention_slows_the_named_devices_while_it_runs) {
  mlsba_platform_t *pl = cores_and_shared(1000, 100, 1.0, 0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  double t[3];
  int64_t overlap_all[3] = {500, 1000, 500}; /* ocl0 runs 5 s */
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &product, overlap_all, MLSBA_DRIVE_SHARED, t),
      0);
  ck_assert_double_eq_tol(t[0], 1.0, 1e-12); /* 0.5 s alone, doubled */
  ck_assert_double_eq_tol(t[1], 2.0, 1e-12);
  ck_assert_double_eq_tol(t[2], 5.0, 1e-12);
  int64_t short_shared[3] = {1000, 950, 50}; /* ocl0 runs 0.5 s */
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &product, short_shared,
                                           MLSBA_DRIVE_SHARED, t),
                   0);
  ck_assert_double_eq_tol(t[0], 0.5 + (1.0 - 0.25), 1e-12);
  ck_assert_double_eq_tol(t[1], 0.5 + (0.95 - 0.25), 1e-12);
  int64_t without[3] = {1000, 1000, 0};
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &product, without, MLSBA_DRIVE_SHARED, t), 0);
  ck_assert_double_eq_tol(t[0], 1.0, 1e-12);
  ck_assert_double_eq_tol(t[1], 1.0, 1e-12);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

static int lines_with(const char *log, const char *what) {
  int n = 0;
  for (const char *p = log; (p = strstr(p, what)) != NULL; p++)
    n++;
  return n;
}

static char logbuf[16384];
static void keep_log(void *ctx, const char *line) {
  (void)ctx;
  strncat(logbuf, line, sizeof logbuf - strlen(logbuf) - 2);
  strcat(logbuf, "\n");
}

static void balance_in(const mlsba_platform_t *pl, mlsba_sharing_t sharing,
                       const char *model_dir, mlsba_balance_result_t *r) {
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.sharing = sharing;
  o.model_dir = model_dir;
  o.log = keep_log;
  logbuf[0] = '\0';
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, r), 0);
  mlsba_executor_destroy(ex);
  int64_t sum = 0;
  for (size_t j = 0; j < 3; j++)
    sum += r->load[j];
  ck_assert_int_eq(sum, product.n);
}

static void balance(const mlsba_platform_t *pl, mlsba_sharing_t sharing,
                    mlsba_balance_result_t *r) {
  balance_in(pl, sharing, NULL, r);
}

/* The runs of r in which ocl0 (device 2) had no load; each must have
 * taken longer than slower_than (0: anything). */
static int runs_without_ocl0(const mlsba_balance_result_t *r,
                             double slower_than) {
  int n = 0;
  for (unsigned it = 0; it < r->iterations; it++)
    if (r->history_load[it * 3 + 2] == 0) {
      n++;
      ck_assert_double_gt(r->history_makespan[it], slower_than);
    }
  return n;
}

/* A slow device that halves the cores' speed: the run without it, right
 * after the first run, is clearly faster than the first run balanced at
 * its speeds, so it is left out at the second run and the cores are
 * balanced alone (optimum: 1000 units each, 1 s). */
START_TEST(a_device_that_costs_more_than_it_gives_is_left_out) {
  for (int noisy = 0; noisy < 2; noisy++) {
    mlsba_platform_t *pl = cores_and_shared(1000, 100, 1.0, noisy ? 0.03 : 0);
    mlsba_balance_result_t r;
    balance(pl, MLSBA_SHARING_CHECK, &r);
    ck_assert_uint_eq(r.left_out, 1);
    ck_assert_uint_eq(r.lost, 0);
    ck_assert_int_eq(r.dropped[2], MLSBA_DROPPED_LEFT_OUT);
    ck_assert_int_eq(r.load[2], 0);
    ck_assert(r.converged);
    ck_assert_uint_le(r.iterations, noisy ? 8 : 4);
    ck_assert_double_lt(r.makespan, noisy ? 1.10 : 1.01);
    ck_assert_int_eq(lines_with(logbuf, "ocl0 left out"), 1);
    ck_assert_int_gt(r.history_load[2], 0); /* the first run had it */
    ck_assert_int_eq(runs_without_ocl0(&r, 0), (int)r.iterations - 1);
    mlsba_balance_result_free(&r);
    mlsba_platform_destroy(pl);
  }
}
END_TEST

/* A fast device that slows the cores a little pays its way: kept for now
 * after the first run, kept again once the routine settles, and the
 * result is a run with it (the checks' runs do not count). */
START_TEST(a_device_that_pays_is_kept) {
  mlsba_platform_t *pl = cores_and_shared(1000, 2000, 0.05, 0);
  mlsba_balance_result_t r;
  balance(pl, MLSBA_SHARING_CHECK, &r);
  ck_assert_uint_eq(r.left_out, 0);
  ck_assert_int_eq(r.dropped[2], 0);
  ck_assert_int_gt(r.load[2], 0);
  ck_assert(r.converged);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 kept for now"), 1);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 kept:"), 1);
  ck_assert_int_eq(runs_without_ocl0(&r, r.makespan), 2);
  /* 2000 units at about 4000 units/s together, less the contention: about
   * 0.5 s (1 s on the cores alone). */
  ck_assert_double_lt(r.makespan, 0.6);
  mlsba_balance_result_free(&r);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(sharing_keep_never_checks) {
  mlsba_platform_t *pl = cores_and_shared(1000, 100, 1.0, 0);
  mlsba_balance_result_t r;
  balance(pl, MLSBA_SHARING_KEEP, &r);
  ck_assert_uint_eq(r.left_out, 0);
  ck_assert_int_gt(r.load[2], 0);
  ck_assert_int_eq(runs_without_ocl0(&r, 0), 0);
  ck_assert_int_eq(lines_with(logbuf, "without it"), 0);
  mlsba_balance_result_free(&r);
  /* An unknown value is refused. */
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.sharing = (mlsba_sharing_t)7;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), MLSBA_EINVAL);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* One run that both leaves ocl0 out (it halves the cores' speed) and loses
 * core2 to a fault (its third share fails) tells the two apart: dropped
 * says why each is out. */
#define FAULT_AND_SHARING MLSBA_SOURCE_DIR "/tests/data/fault-and-sharing.json"
START_TEST(a_fault_and_a_left_out_device_are_told_apart) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_load(FAULT_AND_SHARING, &pl), 0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  mlsba_balance_result_t r;
  ck_assert_msg(mlsba_balance_gemm(ex, &product, &o, &r) == 0, "%s",
                mlsba_last_error());
  ck_assert_uint_eq(r.lost, 1);
  ck_assert_uint_eq(r.left_out, 1);
  ck_assert_int_eq(r.dropped[0], MLSBA_DROPPED_NONE);
  ck_assert_int_eq(r.dropped[1], MLSBA_DROPPED_NONE);
  ck_assert_int_eq(r.dropped[2], MLSBA_DROPPED_LEFT_OUT);
  ck_assert_int_eq(r.dropped[3], MLSBA_DROPPED_FAULT);
  ck_assert_int_eq(r.load[0] + r.load[1], product.n);
  ck_assert(r.converged);
  mlsba_balance_result_free(&r);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Where the decision about ocl0 is saved in the model directory dir. */
static void left_out_path(const char *dir, char *path, size_t len) {
  snprintf(path, len, "%s/ocl0.gemm-single-m1-k1.left-out", dir);
}

static void remove_dir(const char *dir) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}

/* The decision is saved beside the models: the next run leaves the device
 * out from the start and starts warm on the others (at most 2 runs); a
 * decision file of another device is not taken; deleting it, or a check
 * that keeps the device, makes the next run check again. */
START_TEST(a_left_out_device_stays_out_in_the_next_run) {
  char dir[] = "/tmp/mlsba-left-XXXXXX", path[256];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  left_out_path(dir, path, sizeof path);
  mlsba_platform_t *pl = cores_and_shared(1000, 100, 1.0, 0);
  mlsba_balance_result_t r;
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_uint_eq(r.left_out, 1);
  mlsba_balance_result_free(&r);
  ck_assert_int_eq(access(path, R_OK), 0);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_uint_eq(r.left_out, 1);
  ck_assert_uint_eq(r.warm, 2);
  ck_assert_uint_le(r.iterations, 2);
  ck_assert(r.converged);
  ck_assert_int_eq(runs_without_ocl0(&r, 0), (int)r.iterations);
  ck_assert_int_eq(lines_with(logbuf, "as a run before decided"), 1);
  mlsba_balance_result_free(&r);
  /* KEEP does not read it. */
  balance_in(pl, MLSBA_SHARING_KEEP, dir, &r);
  ck_assert_uint_eq(r.left_out, 0);
  ck_assert_int_gt(r.load[2], 0);
  mlsba_balance_result_free(&r);
  /* Another key (as another device or driver would write) is not taken. */
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "mlsba-left-out 1\nkey host=elsewhere device=ocl0\n");
  fclose(f);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_int_eq(lines_with(logbuf, "as a run before decided"), 0);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 left out"), 1); /* checked */
  mlsba_balance_result_free(&r);
  mlsba_platform_destroy(pl);
  /* A check that keeps the device removes a decision file (here a foreign
   * one, which the check did not take). */
  pl = cores_and_shared(1000, 2000, 0.05, 0);
  f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "mlsba-left-out 1\nkey host=elsewhere device=ocl0\n");
  fclose(f);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_uint_eq(r.left_out, 0);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 kept:"), 1);
  ck_assert_int_ne(access(path, F_OK), 0);
  mlsba_balance_result_free(&r);
  mlsba_platform_destroy(pl);
  remove_dir(dir);
}
END_TEST

/* A saved decision is not trusted forever: after ten balancings that took
 * it the next checks the device again, warm from its saved runs (here it
 * is still slow, so it is left out again and counted afresh); and a
 * balancing that finds the kept devices' saved models stale (the machine
 * changed: slower cores, a faster ocl0) makes the next check it, which
 * keeps it now. */
START_TEST(a_left_out_decision_is_checked_again) {
  char dir[] = "/tmp/mlsba-left-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  mlsba_platform_t *pl = cores_and_shared(1000, 100, 1.0, 0);
  mlsba_balance_result_t r;
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 left out: it computes"), 1);
  mlsba_balance_result_free(&r);
  for (int run = 1; run <= 10; run++) {
    balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
    ck_assert_msg(lines_with(logbuf, "as a run before decided") == 1, "%d: %s",
                  run, logbuf);
    ck_assert_int_eq(lines_with(logbuf, run == 10 ? "at the next balancing"
                                                  : "more balancing"),
                     1);
    ck_assert_int_eq(runs_without_ocl0(&r, 0), (int)r.iterations);
    mlsba_balance_result_free(&r);
  }
  /* ocl0's own runs were saved with the decision: the check starts warm,
   * giving it the small share its model says, not N/3. */
  char model[256];
  snprintf(model, sizeof model, "%s/ocl0.gemm-single-m1-k1.model", dir);
  ck_assert_int_eq(access(model, R_OK), 0);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_int_eq(lines_with(logbuf, "10 balancings have taken that"), 1);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 left out: it computes"), 1);
  ck_assert_int_eq(r.dropped[2], MLSBA_DROPPED_LEFT_OUT);
  ck_assert_uint_eq(r.warm, 3);
  ck_assert_int_gt(r.history_load[2], 0);
  ck_assert_int_lt(r.history_load[2], product.n / 6);
  mlsba_balance_result_free(&r);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_int_eq(lines_with(logbuf, "after 9 more balancings"), 1);
  mlsba_balance_result_free(&r);
  mlsba_platform_destroy(pl);
  /* The machine changes. */
  pl = cores_and_shared(500, 2000, 0.05, 0);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_int_eq(lines_with(logbuf, "as a run before decided"), 1);
  ck_assert_uint_ge(r.stale, 1);
  mlsba_balance_result_free(&r);
  balance_in(pl, MLSBA_SHARING_CHECK, dir, &r);
  ck_assert_msg(lines_with(logbuf, "found the others' saved models stale") == 1,
                "%s", logbuf);
  ck_assert_int_eq(lines_with(logbuf, "ocl0 kept:"), 1);
  ck_assert_int_eq(r.dropped[2], MLSBA_DROPPED_NONE);
  ck_assert_int_gt(r.load[2], 0);
  mlsba_balance_result_free(&r);
  char path[256];
  left_out_path(dir, path, sizeof path);
  ck_assert_int_ne(access(path, F_OK), 0);
  mlsba_platform_destroy(pl);
  remove_dir(dir);
}
END_TEST

/* contends_with must name other sim devices, once each; contention is a
 * positive number. The platform file round-trips them. */
START_TEST(contends_with_is_checked_and_saved) {
  static const char *const bad[] = {"[\"nobody\"]",   "[\"a\"]", "[\"cpu\"]",
                                    "[\"b\", \"b\"]", "\"b\"",   "[3]"};
  char text[512];
  mlsba_platform_t *pl = NULL;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(text, sizeof text,
             "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": "
             "[[1, 1]], \"contends_with\": %s}, {\"name\": \"b\", \"type\": "
             "\"sim\", \"speed\": [[1, 1]]}, {\"name\": \"cpu\", \"type\": "
             "\"cpu\", \"core\": 0}]}",
             bad[i]);
    ck_assert_int_eq(mlsba_platform_parse(text, "t", &pl), MLSBA_EFORMAT);
    ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "contends_with"));
  }
  static const char *const bad_c[] = {"0", "-1", "\"x\"", "1e9"};
  for (size_t i = 0; i < sizeof bad_c / sizeof *bad_c; i++) {
    snprintf(text, sizeof text,
             "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", \"speed\": "
             "[[1, 1]], \"contends_with\": [\"b\"], \"contention\": %s}, "
             "{\"name\": \"b\", \"type\": \"sim\", \"speed\": [[1, 1]]}]}",
             bad_c[i]);
    ck_assert_int_eq(mlsba_platform_parse(text, "t", &pl), MLSBA_EFORMAT);
    ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "contention"));
  }
  pl = cores_and_shared(1000, 100, 0.5, 0);
  char path[] = "/tmp/mlsba-shared-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(mlsba_platform_save(pl, path), 0);
  mlsba_platform_t *back = NULL;
  ck_assert_int_eq(mlsba_platform_load(path, &back), 0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(back, &ex), 0);
  double t[3];
  int64_t load[3] = {500, 1000, 500};
  ck_assert_int_eq(
      mlsba_executor_run_gemm(ex, &product, load, MLSBA_DRIVE_SHARED, t), 0);
  ck_assert_double_eq_tol(t[0], 0.75, 1e-12);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(back);
  mlsba_platform_destroy(pl);
  unlink(path);
}
END_TEST

static Suite *sharing_suite(void) {
  Suite *s = suite_create("sharing");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, contention_slows_the_named_devices_while_it_runs);
  tcase_add_test(tc, a_device_that_costs_more_than_it_gives_is_left_out);
  tcase_add_test(tc, a_device_that_pays_is_kept);
  tcase_add_test(tc, sharing_keep_never_checks);
  tcase_add_test(tc, a_left_out_device_stays_out_in_the_next_run);
  tcase_add_test(tc, a_fault_and_a_left_out_device_are_told_apart);
  tcase_add_test(tc, a_left_out_decision_is_checked_again);
  tcase_add_test(tc, contends_with_is_checked_and_saved);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(sharing_suite()); }
