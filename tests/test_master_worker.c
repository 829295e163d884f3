/* Seed 001's application across ranks: FPM plus communication
 * (mlsba_partition_nodes_comm) against a brute-force optimum of its own
 * cost model on random two-node platforms, with one message a node and
 * with the thesis's serial delivery, and its bad input refused; then the
 * master-worker mode of <mlsba/mpi.h> under mpirun: the three splits give
 * the serial product on real cores (rank 0 has no platform file: the
 * master opens no device and computes nothing), the workers' columns
 * tile K, and bad input (K below the workers, options that differ between
 * ranks, one rank, a missing platform, a worker the DLT cannot describe)
 * stops every rank with one line; under SimGrid's smpirun, the thesis's
 * cluster: FPM plus communication as fast as the DLT, the compute-only
 * split far slower. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/run_ranks.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

/* ---- FPM plus communication against brute force ------------------------ */

enum { K = 36, DEVICES = 2 };

typedef struct {
  double c[2][DEVICES], e[2][DEVICES]; /* device time c x + e */
  mlsba_link_t link[2];
} platform_t;

static double rnd(unsigned *s, double lo, double hi) {
  *s = *s * 1103515245u + 12345u;
  return lo + (hi - lo) * (double)((*s >> 8) & 0xffff) / 65535.0;
}

/* Models exact at every integer load 1..K. */
static mlsba_model_t *affine_model(double c, double e) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  for (int x = 1; x <= K; x++)
    ck_assert_int_eq(mlsba_model_set_point(m, x, x / (c * x + e)), 0);
  return m;
}

static double dev_time(const platform_t *P, int j, int d, int x) {
  return x > 0 ? P->c[j][d] * x + P->e[j][d] : 0;
}

/* Node j's time for columns x[] under the model the call documents. */
static double node_time(const platform_t *P, const mlsba_dlt_problem_t *pr,
                        int j, const int x[DEVICES], int serial) {
  double l = 1 / P->link[j].bandwidth, b = P->link[j].latency;
  double s = (double)pr->element_size, N = (double)pr->n, M = (double)pr->m;
  int share = 0;
  for (int d = 0; d < DEVICES; d++)
    share += x[d];
  if (share == 0)
    return 0;
  double T = 0;
  if (!serial) {
    for (int d = 0; d < DEVICES; d++)
      T = fmax(T, dev_time(P, j, d, x[d]));
    return T + l * s * N * M + 3 * b + l * s * (M + N) * share;
  }
  int prefix = 0, served = 0;
  for (int d = 0; d < DEVICES; d++) {
    if (x[d] == 0)
      continue;
    prefix += x[d];
    served++;
    T = fmax(T, l * s * M * prefix + served * b + dev_time(P, j, d, x[d]));
  }
  return l * s * N * M + b + T + l * s * N * share + b;
}

/* The best makespan over every split of K into 2 x DEVICES loads. */
static double brute_force(const platform_t *P, const mlsba_dlt_problem_t *pr,
                          int serial) {
  double best = INFINITY;
  for (int a = 0; a <= K; a++)
    for (int b = 0; a + b <= K; b++)
      for (int c = 0; a + b + c <= K; c++) {
        int x0[DEVICES] = {a, b}, x1[DEVICES] = {c, K - a - b - c};
        double t = fmax(node_time(P, pr, 0, x0, serial),
                        node_time(P, pr, 1, x1, serial));
        best = fmin(best, t);
      }
  return best;
}

static void random_platform(unsigned *seed, platform_t *P) {
  for (int j = 0; j < 2; j++) {
    for (int d = 0; d < DEVICES; d++) {
      P->c[j][d] = rnd(seed, 0.01, 0.2);
      P->e[j][d] = rnd(seed, 0, 0.3);
    }
    /* A column of B (400 bytes) costs 0.004 to 0.1 s. */
    P->link[j] = (mlsba_link_t){rnd(seed, 0, 0.02), rnd(seed, 4e3, 1e5)};
  }
}

/* On random platforms the call's split is within 1% of the brute-force
 * optimum of its own model, with one message a node and serially, and in
 * nine cases of ten the optimum itself (all 100 when this was written). */
START_TEST(nodes_comm_is_near_the_brute_force_optimum) {
  mlsba_dlt_problem_t pr = {.n = 100, .m = 100, .k = K, .element_size = 4};
  unsigned seed = 2024;
  int optimal = 0;
  for (int trial = 0; trial < 100; trial++) {
    platform_t P;
    random_platform(&seed, &P);
    int serial = trial % 2;
    mlsba_model_t *m[2][DEVICES];
    mlsba_comm_node_t nodes[2];
    for (int j = 0; j < 2; j++) {
      for (int d = 0; d < DEVICES; d++)
        m[j][d] = affine_model(P.c[j][d], P.e[j][d]);
      nodes[j] =
          (mlsba_comm_node_t){.models = (const mlsba_model_t *const *)m[j],
                              .devices = DEVICES,
                              .link = P.link[j],
                              .serial = serial};
    }
    int64_t share[2], cols[2 * DEVICES];
    double makespan = 0;
    ck_assert_int_eq(
        mlsba_partition_nodes_comm(&pr, nodes, 2, share, cols, &makespan), 0);
    ck_assert_int_eq(share[0] + share[1], K);
    ck_assert_int_eq(cols[0] + cols[1], share[0]);
    ck_assert_int_eq(cols[2] + cols[3], share[1]);
    int x0[DEVICES] = {(int)cols[0], (int)cols[1]};
    int x1[DEVICES] = {(int)cols[2], (int)cols[3]};
    double t = fmax(node_time(&P, &pr, 0, x0, serial),
                    node_time(&P, &pr, 1, x1, serial));
    /* The reported makespan is the model's time of the split returned. */
    ck_assert_msg(fabs(t - makespan) <= 1e-9 * t, "trial %d: %g vs %g", trial,
                  makespan, t);
    double best = brute_force(&P, &pr, serial);
    ck_assert_msg(t <= best * 1.01, "trial %d (serial %d): %g, optimum %g",
                  trial, serial, t, best);
    optimal += t <= best * (1 + 1e-9);
    for (int j = 0; j < 2; j++)
      for (int d = 0; d < DEVICES; d++)
        mlsba_model_destroy(m[j][d]);
  }
  ck_assert_int_ge(optimal, 90);
}
END_TEST

START_TEST(nodes_comm_refuses_bad_input) {
  mlsba_dlt_problem_t pr = {.n = 10, .m = 10, .k = 10, .element_size = 4};
  mlsba_model_t *m = affine_model(0.1, 0);
  const mlsba_model_t *ms[1] = {m};
  mlsba_comm_node_t nd = {.models = ms, .devices = 1, .link = {0, 1e6}};
  int64_t share[1], cols[1];
  ck_assert_int_eq(mlsba_partition_nodes_comm(&pr, &nd, 0, share, cols, NULL),
                   MLSBA_EINVAL);
  nd.link.latency = -1;
  ck_assert_int_eq(mlsba_partition_nodes_comm(&pr, &nd, 1, share, cols, NULL),
                   MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "link latency") != NULL);
  nd.link.latency = 0;
  nd.devices = 0;
  ck_assert_int_eq(mlsba_partition_nodes_comm(&pr, &nd, 1, share, cols, NULL),
                   MLSBA_EINVAL);
  ck_assert(strstr(mlsba_last_error(), "no device") != NULL);
  nd.devices = 1;
  pr.k = 0;
  ck_assert_int_eq(mlsba_partition_nodes_comm(&pr, &nd, 1, share, cols, NULL),
                   MLSBA_EINVAL);
  pr.k = 10;
  ck_assert_int_eq(mlsba_partition_nodes_comm(&pr, &nd, 1, share, cols, NULL),
                   0);
  ck_assert_int_eq(share[0], 10);
  mlsba_model_destroy(m);
}
END_TEST

/* ---- under mpirun -------------------------------------------------------- */

#ifdef MLSBA_MW_RANKS_BIN
static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
            ranks_bin[] = MLSBA_MW_RANKS_BIN, tool[] = MLSBA_MW_BIN;
#define MW_DATA MLSBA_SOURCE_DIR "/tests/data/mpi/mw/"

/* args on np ranks, the job killed after 120 s (tests/support/run_ranks). */
static void job(int np, char *const *args, tool_run_t *r) {
  mpi_job_environment();
  run_ranks(timeout, "120", mpirun, np, args, r);
}

static json_t *parse_json(const char *text) {
  json_error_t e;
  json_t *j = text ? json_loads(text, 0, &e) : NULL;
  ck_assert_msg(j != NULL, "not JSON: %.500s", text ? text : "(none)");
  return j;
}

/* Every split, 2 and 3 workers on real cores, non-square: C is the serial
 * product of the application's A and B. Rank 0's platform (worker0.json)
 * does not exist: the master opens none. */
START_TEST(every_split_gives_the_serial_product) {
  static const char *const splits[] = {"fpm", "dlt", "fpm-comm"};
  for (int s = 0; s < 3; s++) {
    char *args[] = {
        ranks_bin,         MW_DATA "worker%r.json",         "70", "50", "90",
        (char *)splits[s], s == 2 ? "measure" : "platform", NULL};
    tool_run_t r;
    job(3, args, &r);
    ck_assert_msg(r.exited && r.status == 0, "%s: status %d: %.500s%.1000s",
                  splits[s], r.status, r.out, r.err);
    ck_assert_msg(strstr(r.out, "C right max_error 0 columns ") != NULL,
                  "%s: %s", splits[s], r.out);
    tool_run_free(&r);
  }
  char *four[] = {ranks_bin,  MW_DATA "worker%r.json",
                  "33",       "65",
                  "91",       "fpm-comm",
                  "platform", NULL};
  tool_run_t r;
  job(4, four, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.500s%.1000s", r.status,
                r.out, r.err);
  ck_assert(strstr(r.out, "C right max_error 0 columns ") != NULL);
  tool_run_free(&r);
}
END_TEST

/* The tool's report on simulated workers: only ranks 1 and 2 work, their
 * columns tile K in rank order and their devices' columns add up to
 * theirs; the accelerator's columns leave first and the master's clock
 * ends after every C came back. */
START_TEST(the_workers_tile_k_and_the_master_computes_nothing) {
  char *args[] = {tool,       "--platform", MW_DATA "sim%r.json",
                  "-n",       "256",        "-m",
                  "256",      "-k",         "1000",
                  "--split",  "dlt",        "--links",
                  "platform", "--json",     "-",
                  NULL};
  tool_run_t r;
  job(3, args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  ck_assert_str_eq(json_string_value(json_object_get(j, "mode")),
                   "master-worker");
  ck_assert(json_is_null(json_object_get(j, "verified")));
  json_t *ranks = json_object_get(j, "ranks");
  ck_assert_int_eq(json_array_size(ranks), 2);
  json_int_t at = 0;
  double makespan = json_number_value(json_object_get(j, "makespan_s"));
  for (size_t w = 0; w < 2; w++) {
    json_t *x = json_array_get(ranks, w);
    ck_assert_int_eq(json_integer_value(json_object_get(x, "rank")),
                     (json_int_t)w + 1);
    ck_assert_int_eq(json_integer_value(json_object_get(x, "col0")), at);
    json_int_t cols = json_integer_value(json_object_get(x, "columns"));
    at += cols;
    json_int_t sum = 0;
    json_t *dev = json_object_get(x, "devices");
    for (size_t d = 0; d < json_array_size(dev); d++)
      sum +=
          json_integer_value(json_object_get(json_array_get(dev, d), "load"));
    ck_assert_int_eq(sum, cols);
    /* The GPU takes most of it (it is 40 times a core). */
    ck_assert(json_integer_value(
                  json_object_get(json_array_get(dev, 0), "load")) > cols / 2);
    ck_assert(json_number_value(json_object_get(x, "returned")) <= makespan);
  }
  ck_assert_int_eq(at, 1000);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* Runs args on np ranks: not a success, not a timeout, and says text on
 * rank 0's stream once (of the lines starting with prefix). */
static void expect_one_line_error(int np, char *const *args, const char *says,
                                  const char *prefix, int on_stdout) {
  tool_run_t r;
  job(np, args, &r);
  ck_assert_msg(r.exited && r.status != 0 && r.status != 124,
                "status %d: %.300s", r.status, r.out);
  char *text = unwrap_lines(on_stdout ? r.out : r.err);
  ck_assert_msg(strstr(text, says) != NULL, "no '%s' in: %s", says, text);
  int ours = 0;
  for (const char *p = text; (p = strstr(p, prefix)) != NULL; p++)
    ours++;
  ck_assert_msg(ours == 1, "not one line: %s", text);
  tool_run_free(&r);
}

START_TEST(bad_input_stops_every_rank_with_one_line) {
  char *few[] = {tool,       "--platform", MW_DATA "worker%r.json",
                 "-k",       "1",          "--links",
                 "platform", NULL};
  expect_one_line_error(3, few, "K = 1 columns for 2 workers",
                        "mlsba-master-worker: ", 0);
  char *alone[] = {tool, "--platform", MW_DATA "worker%r.json", NULL};
  expect_one_line_error(1, alone, "needs a master and at least one worker",
                        "mlsba-master-worker: ", 0);
  char *missing[] = {tool,       "--platform", MW_DATA "nothere%r.json",
                     "-k",       "64",         "--links",
                     "platform", NULL};
  expect_one_line_error(3, missing, "rank 1: ", "mlsba-master-worker: ", 0);
  char *two_gpus[] = {tool,       "--platform", MW_DATA "twogpu%r.json",
                      "-n",       "64",         "-m",
                      "64",       "-k",         "100",
                      "--split",  "dlt",        "--links",
                      "platform", NULL};
  expect_one_line_error(3, two_gpus,
                        "rank 1 has two accelerators; seed 001's DLT takes "
                        "at most one a node",
                        "mlsba-master-worker: ", 0);
  char *mismatch[] = {ranks_bin,  MW_DATA "worker%r.json",
                      "20",       "20",
                      "40",       "fpm",
                      "platform", "mismatch",
                      NULL};
  expect_one_line_error(3, mismatch,
                        "error: rank 1: option k is 41 here, 40 on rank 0",
                        "error: ", 1);
}
END_TEST

#ifdef MLSBA_MW_SMPI_BIN
/* The thesis's cluster under smpirun at K = 10000: FPM plus communication
 * as fast as the network-aware DLT (within 0.1%), the compute-only split
 * over 10% slower (A's transfer left out, as Table 11 does); simulated
 * time, the same on every machine. */
START_TEST(the_thesis_cluster_under_smpi) {
  char smpirun[] = MLSBA_SMPIRUN, bin[] = MLSBA_MW_SMPI_BIN;
  static const char *const splits[] = {"fpm", "dlt", "fpm-comm"};
  double t[3];
  for (int s = 0; s < 3; s++) {
    char *argv[] = {"/usr/bin/timeout",
                    "120",
                    smpirun,
                    "-np",
                    "3",
                    "-platform",
                    MLSBA_SOURCE_DIR "/models/cluster/thesis-001/platform.xml",
                    "-hostfile",
                    MLSBA_SOURCE_DIR "/models/cluster/thesis-001/hosts",
                    "--cfg=smpi/host-speed:10Gf",
                    "--cfg=smpi/simulate-computation:no",
                    "--cfg=smpi/privatization:no",
                    "--log=root.thres:warning",
                    bin,
                    "--platform",
                    MLSBA_SOURCE_DIR "/models/cluster/thesis-001/node%r.json",
                    "-n",
                    "10000",
                    "-m",
                    "10000",
                    "-k",
                    "10000",
                    "--precision",
                    "single",
                    "--split",
                    (char *)splits[s],
                    "--json",
                    "-",
                    NULL};
    tool_run_t r;
    run_tool(argv, &r);
    ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                  r.err);
    json_t *j = parse_json(strchr(r.out, '{'));
    /* Table 11's times leave A's transfer out: so does this. */
    json_t *ranks = json_object_get(j, "ranks");
    double a = 0;
    for (size_t w = 0; w < json_array_size(ranks); w++)
      a = fmax(a, json_number_value(
                      json_object_get(json_array_get(ranks, w), "a_arrived")));
    t[s] = json_number_value(json_object_get(j, "makespan_s")) - a;
    ck_assert(json_is_true(json_object_get(j, "simulated")));
    json_decref(j);
    tool_run_free(&r);
  }
  ck_assert_msg(t[2] <= t[1] * 1.001, "fpm-comm %g, dlt %g", t[2], t[1]);
  ck_assert_msg(t[0] >= t[1] * 1.1, "fpm %g, dlt %g", t[0], t[1]);
}
END_TEST
#endif
#endif

/* The command line (tools/common/options.c): every option's bad value
 * and missing value, and what is no option, in the words of the other
 * tools; one rank is enough, as a rank refuses its arguments before it
 * looks for a worker. */
static const struct {
  const char *arg, *value, *want;
} cli[] = {
    {"--platform", "", "rank 0: bad value for --platform: \"\""},
    {"-n", "0", "rank 0: bad value for -n: 0"},
    {"-m", "12x", "rank 0: bad value for -m: 12x"},
    {"-k", "1099511627777", "rank 0: bad value for -k: 1099511627777"},
    {"--split", "fast", "rank 0: bad value for --split: fast"},
    {"--links", "guess", "rank 0: bad value for --links: guess"},
    {"--precision", "half", "rank 0: bad value for --precision: half"},
    {"--seed", "-1", "rank 0: bad value for --seed: -1"},
    {"--json", "", "rank 0: bad value for --json: \"\""},
    {"--bogus", NULL, "rank 0: unknown option --bogus"},
    {"stray", NULL, "rank 0: unexpected argument stray"},
    {"--platform", NULL, "rank 0: a value is missing after --platform"},
    {"-n", NULL, "rank 0: a value is missing after -n"},
    {"-m", NULL, "rank 0: a value is missing after -m"},
    {"-k", NULL, "rank 0: a value is missing after -k"},
    {"--split", NULL, "rank 0: a value is missing after --split"},
    {"--links", NULL, "rank 0: a value is missing after --links"},
    {"--precision", NULL, "rank 0: a value is missing after --precision"},
    {"--seed", NULL, "rank 0: a value is missing after --seed"},
    {"--json", NULL, "rank 0: a value is missing after --json"},
};
/* Under the sanitizers the first twelve (each option's bad value, an
 * unknown option, a stray argument, a missing value): each case is one
 * rank's start-up and its refusal, the value parsers run under ASan in
 * tools/fuzz (fuzz_args) and test_tools, and every case here in the
 * plain build. */
#if defined(__SANITIZE_ADDRESS__)
enum { cli_cases = 12 };
#else
enum { cli_cases = (int)(sizeof cli / sizeof cli[0]) };
#endif

START_TEST(every_option_refuses_a_bad_or_missing_value) {
  char *args[] = {tool, "--platform",        MW_DATA "sim%r.json",  "-k",
                  "64", (char *)cli[_i].arg, (char *)cli[_i].value, NULL};
  tool_run_t r;
  mpi_job_environment();
  run_rank_alone(timeout, "120", args, &r); /* one rank: no mpirun needed */
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  char *text = unwrap_lines(r.err);
  ck_assert_msg(strstr(text, cli[_i].want) != NULL, "no '%s' in: %s",
                cli[_i].want, text);
  ck_assert_msg(strstr(text, "Try 'mlsba-master-worker --help'.") != NULL, "%s",
                text);
  ck_assert_str_eq(r.out, "");
  tool_run_free(&r);
}
END_TEST

/* A repeated option: the last one wins, as in the other tools. */
START_TEST(the_last_of_a_repeated_option_wins) {
  char *args[] = {tool,      "--platform", MW_DATA "sim%r.json",
                  "-k",      "500",        "-k",
                  "1000",    "--split",    "fpm",
                  "--split", "dlt",        "--links",
                  "measure", "--links",    "platform",
                  "--json",  "-",          NULL};
  tool_run_t r;
  job(3, args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %.1000s", r.status,
                r.err);
  json_t *j = parse_json(strchr(r.out, '{'));
  ck_assert_int_eq(json_integer_value(json_object_get(j, "k")), 1000);
  ck_assert_str_eq(json_string_value(json_object_get(j, "split")), "dlt");
  ck_assert_str_eq(json_string_value(json_object_get(j, "links")), "platform");
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

static Suite *master_worker_suite(void) {
  Suite *s = suite_create("master_worker");
  TCase *tc = tcase_create("nodes_comm");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, nodes_comm_is_near_the_brute_force_optimum);
  tcase_add_test(tc, nodes_comm_refuses_bad_input);
  suite_add_tcase(s, tc);
#ifdef MLSBA_MW_RANKS_BIN
  TCase *mpi = tcase_create("ranks");
  tcase_set_timeout(mpi, 400);
  tcase_add_test(mpi, every_split_gives_the_serial_product);
  tcase_add_test(mpi, the_workers_tile_k_and_the_master_computes_nothing);
  tcase_add_test(mpi, bad_input_stops_every_rank_with_one_line);
  tcase_add_loop_test(mpi, every_option_refuses_a_bad_or_missing_value, 0,
                      cli_cases);
  tcase_add_test(mpi, the_last_of_a_repeated_option_wins);
#ifdef MLSBA_MW_SMPI_BIN
  tcase_add_test(mpi, the_thesis_cluster_under_smpi);
#endif
  suite_add_tcase(s, mpi);
#endif
  return s;
}

int main(void) { return run_suite(master_worker_suite()); }
