/* An application's own load across ranks: the head of the
 * one-dimensional INPA (lib/partition/divide.h) on synthetic nodes whose
 * time is a pure function of their units (converges where speeds differ,
 * stops as documented, refuses bad input); then <mlsba/mpi.h> under
 * mpirun: four simulated ranks of unequal speed converge through
 * mlsba-inpa --load mandelbrot, with every rank's share the head's;
 * two real ranks compute the Mandelbrot image that a single-rank
 * reference confirms; a divider's run computes every unit once, each
 * rank exactly its share; a bad rank (a missing platform, a load of
 * another size) stops every rank with one line; and the two-dimensional
 * product on an application's own matrices gives back its C (each rank's
 * rectangle and the gathered whole), a failing fill stopping every rank. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/divide.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

/* Node i's time for c units: speed (i + 1) * 100 units/s, RISING (small
 * ranges underuse the node: speed peak c / (c + 50)) when rising. */
static double node_time(size_t i, int64_t c, int rising) {
  double peak = 100.0 * (double)(i + 1);
  double s = rising ? peak * (double)c / ((double)c + 50) : peak;
  return (double)c / s;
}

/* Drives a head to its stop; returns the runs. */
static size_t drive(mlsba__divide_t *h, size_t q, int rising) {
  double t[8];
  size_t runs = 0;
  while (!mlsba__divide_done(h) && runs < 100) {
    const int64_t *c = mlsba__divide_counts(h);
    int64_t sum = 0;
    for (size_t i = 0; i < q; i++) {
      ck_assert_int_ge(c[i], 1);
      sum += c[i];
      t[i] = node_time(i, c[i], rising);
    }
    ck_assert_int_eq(sum, 10000);
    ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
    runs++;
  }
  return runs;
}

START_TEST(constant_speeds_balance_in_two_runs) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, NULL, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 0), 2);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  /* Shares in proportion to the speeds 1 : 2 : 3 : 4. */
  const int64_t *c = mlsba__divide_counts(h);
  for (size_t i = 0; i < 4; i++)
    ck_assert_msg(llabs(c[i] - 1000 * (int64_t)(i + 1)) <= 1, "node %zu: %lld",
                  i, (long long)c[i]);
  ck_assert(mlsba__divide_history_imbalance(h, 1) <= 0.05);
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(rising_speeds_converge_within_eps) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, NULL, &h), 0);
  size_t runs = drive(h, 4, 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  ck_assert(runs >= 2 && runs <= 20);
  ck_assert(mlsba__divide_history_imbalance(h, runs - 1) <= 0.05);
  /* The history holds every run, the last one the result's counts. */
  ck_assert_uint_eq(mlsba__divide_iterations(h), runs);
  ck_assert_mem_eq(mlsba__divide_history_counts(h, runs - 1),
                   mlsba__divide_counts(h), 4 * sizeof(int64_t));
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(baselines_stop_after_their_runs) {
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  o.algo = MLSBA__INPA_HOMOGENEOUS;
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 0), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_MAX_ITER);
  mlsba__divide_destroy(h);
  o.algo = MLSBA__INPA_SINGLE_CPM;
  ck_assert_int_eq(mlsba__divide_create(4, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 4, 1), 2);
  mlsba__divide_destroy(h);
  /* Equal nodes are balanced by the even split itself. */
  ck_assert_int_eq(mlsba__divide_create(1, 10000, &o, &h), 0);
  ck_assert_uint_eq(drive(h, 1, 1), 1);
  ck_assert_int_eq(mlsba__divide_stop(h), MLSBA_STOP_BALANCED);
  mlsba__divide_destroy(h);
}
END_TEST

/* A node that looks ever slower than its model: the counts come back to
 * an earlier run's (cycle) or stop moving (fixed point), never loop. */
START_TEST(noisy_nodes_stop_honestly) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(2, 10000, NULL, &h), 0);
  double t[2];
  int k = 0;
  while (!mlsba__divide_done(h) && k < 100) {
    const int64_t *c = mlsba__divide_counts(h);
    /* Node 1's time alternates by 30%: the models cannot settle. */
    t[0] = (double)c[0] / 100;
    t[1] = (double)c[1] / 100 * (k % 2 ? 1.3 : 1.0);
    ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
    k++;
  }
  ck_assert(mlsba__divide_done(h));
  mlsba_stop_reason_t s = mlsba__divide_stop(h);
  ck_assert_msg(s == MLSBA_STOP_CYCLE || s == MLSBA_STOP_FIXED_POINT ||
                    s == MLSBA_STOP_BALANCED || s == MLSBA_STOP_MAX_ITER,
                "stop %d", s);
  ck_assert_uint_le(mlsba__divide_iterations(h), 20);
  /* Resumed, it runs again from its models. */
  ck_assert_int_eq(mlsba__divide_resume(h), 0);
  ck_assert(!mlsba__divide_done(h));
  mlsba__divide_destroy(h);
}
END_TEST

START_TEST(bad_input_is_refused) {
  mlsba__divide_t *h = NULL;
  ck_assert_int_eq(mlsba__divide_create(4, 3, NULL, &h), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "every node needs a unit") != NULL);
  ck_assert_int_eq(mlsba__divide_create(2, 100, NULL, &h), 0);
  double t[2] = {1.0, NAN};
  ck_assert_int_eq(mlsba__divide_feed(h, t), MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "node 1") != NULL);
  t[1] = 1.0;
  ck_assert_int_eq(mlsba__divide_feed(h, t), 0);
  ck_assert(mlsba__divide_done(h));
  ck_assert_int_eq(mlsba__divide_feed(h, t), MLSBA_EINVAL);
  mlsba__divide_destroy(h);
}
END_TEST

/* ---- under mpirun ---------------------------------------------------------
 */

#ifdef MLSBA_INPA_BIN
static char mpirun[] = MLSBA_MPIRUN, inpa[] = MLSBA_INPA_BIN,
            ranks_bin[] = MLSBA_DIVIDE_RANKS_BIN;

/* Runs argv (after "timeout 120 mpirun -np NP ...") on np ranks. */
static void run_ranks(const char *np, char *const *args, tool_run_t *r) {
  char *argv[32] = {
      "/usr/bin/timeout", "120",       mpirun, "-np",   (char *)np,
      "--oversubscribe",  "--bind-to", "none", "--mca", "btl",
      "self,vader"};
  size_t n = 11;
  for (; *args && n + 1 < 32; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  /* Open MPI's own allocations cannot be suppressed by name (test_mpi). */
  const char *asan = getenv("ASAN_OPTIONS");
  char opts[512];
  snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "",
           asan && *asan ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("MLSBA_NOPENCL", "0", 1); /* cores only: no pocl start-up */
  run_tool(argv, r);
}

static json_t *parse_json(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %.500s", e.text, text);
  return j;
}

static json_int_t ival(json_t *o, const char *k) {
  return json_integer_value(json_object_get(o, k));
}

/* Four simulated ranks of unequal speed: balanced within eps; every
 * rank's share is the head's last distribution, the shares tile the rows
 * in rank order and each rank's devices take its count. */
START_TEST(four_simulated_ranks_converge_to_the_heads_shares) {
  char *args[] = {inpa,
                  "--load",
                  "mandelbrot",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                  "--size",
                  "4096",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_ranks("4", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "balanced");
  ck_assert(json_number_value(json_object_get(j, "imbalance")) <= 0.05);
  ck_assert(json_is_null(json_object_get(j, "verified")));
  json_t *hist = json_object_get(j, "history"),
         *ranks = json_object_get(j, "ranks");
  size_t len = json_array_size(hist);
  ck_assert_int_eq(ival(j, "iterations"), (json_int_t)len);
  ck_assert(len >= 2); /* the even split is not balanced here */
  json_t *last = json_object_get(json_array_get(hist, len - 1), "count");
  json_int_t at = 0;
  for (size_t i = 0; i < 4; i++) {
    json_t *k = json_array_get(ranks, i);
    ck_assert_int_eq(ival(k, "offset"), at);
    ck_assert_int_eq(ival(k, "count"),
                     json_integer_value(json_array_get(last, i)));
    json_int_t rows = 0;
    size_t d;
    json_t *dev;
    json_array_foreach(json_object_get(k, "devices"), d, dev) rows +=
        ival(dev, "load");
    ck_assert_int_eq(rows, ival(k, "count"));
    at += ival(k, "count");
  }
  ck_assert_int_eq(at, 4096);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

START_TEST(two_real_ranks_compute_the_reference_image) {
  char *args[] = {inpa,  "--load", "mandelbrot", "--size",
                  "512", "--json", "-",          NULL};
  tool_run_t r;
  run_ranks("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  ck_assert_int_eq(ival(j, "nodes"), 2);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A divider's run: each rank's callbacks computed exactly its share,
 * once, and the shares cover every unit. */
START_TEST(a_divider_run_computes_each_rank_its_share) {
  char *args[] = {ranks_bin, MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json",
                  "20000", NULL};
  tool_run_t r;
  run_ranks("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  long long end = 0;
  for (int rank = 0; rank < 2; rank++) {
    char head[32];
    snprintf(head, sizeof head, "rank %d share ", rank);
    const char *line = strstr(r.out, head);
    ck_assert_msg(line != NULL, "%s", r.out);
    long long off, count, a, b;
    long calls;
    ck_assert_msg(sscanf(line + strlen(head), "%lld %lld units %lld %lld %ld",
                         &off, &count, &a, &b, &calls) == 5,
                  "%s", r.out);
    ck_assert_int_eq(off, end);
    ck_assert_int_eq(a, off);
    ck_assert_int_eq(b, off + count);
    end = off + count;
  }
  ck_assert_int_eq(end, 20000);
  tool_run_free(&r);
}
END_TEST

/* One line, naming the rank, and a failure on every rank; no hang. */
static void expect_one_line_error(const char *np, char *const *args,
                                  const char *says, int on_stdout) {
  tool_run_t r;
  run_ranks(np, args, &r);
  ck_assert_msg(r.exited && r.status != 0 && r.status != 124,
                "status %d: %.300s", r.status, r.out);
  const char *text = on_stdout ? r.out : r.err;
  ck_assert_msg(strstr(text, says) != NULL, "no '%s' in: %s", says, text);
  /* One line of ours (mpirun adds its own about the exit status). */
  const char *prefix = on_stdout ? "error: " : "mlsba-inpa: ";
  int ours = 0;
  for (const char *p = text; (p = strstr(p, prefix)) != NULL; p++)
    ours++;
  ck_assert_msg(ours == 1, "not one line: %s", text);
  tool_run_free(&r);
}

START_TEST(a_bad_rank_stops_every_rank_with_one_line) {
  /* Rank 4 has no sample node inpa-node4. */
  char *missing[] = {inpa,          "--load", "mandelbrot", "--platform",
                     "inpa-node%r", "--size", "1000",       NULL};
  expect_one_line_error("5", missing, "rank 4: ", 0);
  /* Rank 1 passes a load of another size. */
  char *mismatch[] = {ranks_bin,
                      MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json", "1000",
                      "mismatch", NULL};
  expect_one_line_error("2", mismatch,
                        "error: rank 1: the load's unit count is 1001 here, "
                        "1000 on rank 0",
                        1);
}
END_TEST

/* mlsba-inpa --load at the sizes it accepts: a rank holds only the rows
 * it computes (simulated ranks none: an image of 200000 x 200000 pixels,
 * 149 GiB whole, once failed there with "the load is NULL"); what real
 * ranks would need is checked against the host's memory before anything
 * runs; a --json destination that cannot be written is refused before
 * the run. On 1, 2 and 4 ranks, one line of ours, every rank stopped. */
START_TEST(a_large_image_is_held_only_where_it_is_computed) {
  char *sim[] = {inpa,
                 "--load",
                 "mandelbrot",
                 "--platform",
                 MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                 "--size",
                 "200000",
                 "--json",
                 "-",
                 NULL};
  tool_run_t r;
  run_ranks("2", sim, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  json_t *j = parse_json(r.out);
  ck_assert_int_eq(ival(j, "n"), 200000);
  ck_assert_int_eq(ival(j, "width"), 200000);
  ck_assert(json_is_true(json_object_get(j, "simulated")));
  ck_assert(json_is_true(json_object_get(j, "converged")));
  json_decref(j);
  tool_run_free(&r);
  char *huge[] = {inpa,      "--load",  "mandelbrot", "--size",
                  "1000000", "--width", "1000000",    NULL};
  char *unwritable[] = {inpa,
                        "--load",
                        "mandelbrot",
                        "--size",
                        "512",
                        "--json",
                        "/nonexistent/report.json",
                        NULL};
  const char *np[] = {"1", "2", "4"};
  for (size_t i = 0; i < 3; i++) {
    /* The first line of each (the rest wraps where the numbers say). */
    expect_one_line_error(np[i], huge,
                          "--size 1000000 --width 1000000: rank 0's rows of "
                          "the image need",
                          0);
    expect_one_line_error(np[i], unwritable,
                          "--json: /nonexistent/report.json: cannot write: "
                          "its folder",
                          0);
  }
}
END_TEST

#ifdef MLSBA_INPA_SMPI_BIN
/* The same program built with smpicc, four simulated ranks under
 * SimGrid's smpirun: the ranks balance within eps, their devices' times
 * handed to SimGrid. */
START_TEST(four_ranks_under_smpi_balance) {
  char smpirun[] = MLSBA_SMPIRUN, bin[] = MLSBA_INPA_SMPI_BIN;
  char *argv[] = {"/usr/bin/timeout",
                  "120",
                  smpirun,
                  "-np",
                  "4",
                  "-platform",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.xml",
                  "-hostfile",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.hosts",
                  "--cfg=smpi/host-speed:10Gf",
                  "--cfg=smpi/simulate-computation:no",
                  "--cfg=smpi/privatization:no",
                  "--log=root.thres:warning",
                  bin,
                  "--load",
                  "mandelbrot",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                  "--size",
                  "4096",
                  "--width",
                  "16",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  ck_assert_str_eq(json_string_value(json_object_get(j, "stop")), "balanced");
  ck_assert(json_number_value(json_object_get(j, "imbalance")) <= 0.05);
  ck_assert(json_is_true(json_object_get(j, "simulated")));
  /* Simulated time passed: the balancing's wall time covers every run. */
  ck_assert(json_number_value(json_object_get(j, "wall_s")) >=
            json_number_value(json_object_get(j, "makespan_s")));
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* Under smpirun every simulated rank is in one process: an image each
 * (40 GB at 100000 x 100000) once failed there; simulated ranks hold
 * none. */
START_TEST(a_large_image_under_smpi_costs_nothing) {
  char smpirun[] = MLSBA_SMPIRUN, bin[] = MLSBA_INPA_SMPI_BIN;
  char *argv[] = {"/usr/bin/timeout",
                  "120",
                  smpirun,
                  "-np",
                  "4",
                  "-platform",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.xml",
                  "-hostfile",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/smpi.hosts",
                  "--cfg=smpi/host-speed:10Gf",
                  "--cfg=smpi/simulate-computation:no",
                  "--cfg=smpi/privatization:no",
                  "--log=root.thres:warning",
                  bin,
                  "--load",
                  "mandelbrot",
                  "--platform",
                  MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json",
                  "--size",
                  "100000",
                  "--json",
                  "-",
                  NULL};
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  ck_assert_int_eq(ival(j, "width"), 100000);
  ck_assert(json_is_true(json_object_get(j, "simulated")));
  json_decref(j);
  tool_run_free(&r);
}
END_TEST
#endif

#ifdef MLSBA_PDGEMM_BIN
/* The 2-D product on the application's own matrices (the example
 * tools/examples/mpi_pdgemm.c): every rank's rectangle of C and the
 * gathered C equal the exact products of the application's A and B; a
 * rank whose fill fails stops every rank with one line naming it. */
START_TEST(the_product_of_the_applications_matrices_is_right) {
  char pdgemm[] = MLSBA_PDGEMM_BIN;
  char *args[] = {pdgemm, "512", "64",
                  MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json", NULL};
  tool_run_t r;
  run_ranks("2", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "%.300s%.1000s", r.out, r.err);
  ck_assert(strstr(r.out, "rank 0: C(") && strstr(r.out, "rank 1: C("));
  ck_assert(strstr(r.out, "gathered C is right") != NULL);
  ck_assert(strstr(r.out, "WRONG") == NULL);
  tool_run_free(&r);
  char *failing[] = {pdgemm, "512",
                     "64",   MLSBA_SOURCE_DIR "/tests/data/mpi/cpu%r.json",
                     "1",    NULL};
  run_ranks("2", failing, &r);
  ck_assert_msg(r.exited && r.status != 0 && r.status != 124, "status %d",
                r.status);
  ck_assert_msg(strstr(r.err, "mpi_pdgemm: rank 1: the application's fill "
                              "of A rows") != NULL,
                "%s", r.err);
  int ours = 0;
  for (const char *p = r.err; (p = strstr(p, "mpi_pdgemm: ")) != NULL; p++)
    ours++;
  ck_assert_int_eq(ours, 1);
  tool_run_free(&r);
}
END_TEST
#endif
#endif

static Suite *divide_suite(void) {
  Suite *s = suite_create("divide");
  TCase *tc = tcase_create("head");
  tcase_add_test(tc, constant_speeds_balance_in_two_runs);
  tcase_add_test(tc, rising_speeds_converge_within_eps);
  tcase_add_test(tc, baselines_stop_after_their_runs);
  tcase_add_test(tc, noisy_nodes_stop_honestly);
  tcase_add_test(tc, bad_input_is_refused);
  suite_add_tcase(s, tc);
#ifdef MLSBA_INPA_BIN
  TCase *mpi = tcase_create("ranks");
  tcase_set_timeout(mpi, 240);
  tcase_add_test(mpi, four_simulated_ranks_converge_to_the_heads_shares);
  tcase_add_test(mpi, two_real_ranks_compute_the_reference_image);
  tcase_add_test(mpi, a_divider_run_computes_each_rank_its_share);
  tcase_add_test(mpi, a_bad_rank_stops_every_rank_with_one_line);
  tcase_add_test(mpi, a_large_image_is_held_only_where_it_is_computed);
#ifdef MLSBA_PDGEMM_BIN
  tcase_add_test(mpi, the_product_of_the_applications_matrices_is_right);
#endif
#ifdef MLSBA_INPA_SMPI_BIN
  tcase_add_test(mpi, four_ranks_under_smpi_balance);
  tcase_add_test(mpi, a_large_image_under_smpi_costs_nothing);
#endif
  suite_add_tcase(s, mpi);
#endif
  return s;
}

int main(void) { return run_suite(divide_suite()); }
