/* The product across ranks as a PDGEMM user needs it, under mpirun (each
 * job bounded by a timeout, so a hang fails its test):
 *  - every op(A) op(B) combination in both precisions, sizes that are not
 *    multiples of the block, K = 1 (ranks that own no block of op(A) or
 *    op(B)), alpha and beta, on 1 to 4 ranks, equal to a serial reference
 *    on the application's own blocks, the fill callback asked only for
 *    blocks its rank owns (multiply_ranks shapes);
 *  - a fill that fails on one rank ends every rank with one line;
 *  - a multiplier's rerun gives bit-identical C; a drift triggers one
 *    balancing, once the runs apart have lost what a balancing costs; a
 *    saved distribution is taken without a run and checked by its
 *    products, which replace one that no longer holds once they have
 *    lost what a balancing costs (never after its first run alone);
 *  - ScaLAPACK descriptors: round trips between block-cyclic layouts of
 *    several grids, orders and block sizes and an owner function; the
 *    product on them equal to the reference and to ScaLAPACK's PDGEMM;
 *  - mlsba-inpa's -m -n -k, --transa, --transb, --repeat and its report's
 *    wall_s, a command line that differs on one rank; --model-dir: the
 *    second job runs the saved distribution, each rank's models in a
 *    folder of its own though both ranks name the same core; three
 *    ranks on cores 0, 1, 1 start INPA from their shares of the cores. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <check.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/run_ranks.h"
#include "support/run_suite.h"

#define DATA MLSBA_SOURCE_DIR "/tests/data/mpi/"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
            ranks_bin[] = MLSBA_MULTIPLY_RANKS_BIN,
            scalapack_bin[] = MLSBA_SCALAPACK_RANKS_BIN,
            inpa[] = MLSBA_INPA_BIN;

/* argv (NULL-terminated) on np oversubscribed ranks, killed after 240 s. */
static void run_job(int np, tool_run_t *r, char *const *args) {
  mpi_job_environment();
  setenv("MLSBA_NOPENCL", "0", 1); /* cores only: no pocl start-up */
  /* ScaLAPACK's BLAS on one thread a rank, as its users run it. */
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  run_ranks(timeout, "240", mpirun, np, args, r);
}

START_TEST(every_op_and_shape_equals_the_reference) {
  int np = _i + 1;
  char *args[] = {ranks_bin, "shapes", DATA "cpu%r.json", NULL};
  tool_run_t r;
  run_job(np, &r, args);
  check_all_ok(&r, 40);
  /* With K = 1 (one block of op(A) and op(B)), some rank of several owns
   * no block of A or B, and its C is right all the same. */
  size_t k1 = 0;
  for (const char *l = strstr(r.out, "x1 b 16"); l != NULL;
       l = strstr(l + 1, "x1 b 16")) {
    const char *at = strstr(l, "fills, ");
    long idle = -1;
    ck_assert_msg(at && sscanf(at, "fills, %ld rank(s)", &idle) == 1, "%s", l);
    ck_assert_msg(np == 1 ? idle == 0 : idle >= 1, "%d ranks: %.200s", np, l);
    k1++;
  }
  ck_assert_uint_eq(k1, 8);
  tool_run_free(&r);
}
END_TEST

/* Rank np - 1's fill fails: every rank stops (status 1), and the one
 * line, on rank 0, names that rank and what its fill was asked. */
START_TEST(a_failing_fill_ends_every_rank_with_one_line) {
  int np = _i + 2;
  char on[16];
  snprintf(on, sizeof on, "%d", np - 1);
  char *args[] = {ranks_bin, "fail", DATA "cpu%r.json", on, NULL};
  tool_run_t r;
  run_job(np, &r, args);
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  const char *hit = strstr(r.err, "multiply_ranks: ");
  ck_assert_msg(hit != NULL, "no message: %s", r.err);
  ck_assert_msg(strstr(hit + 1, "multiply_ranks: ") == NULL, "two messages: %s",
                r.err);
  char want[96];
  snprintf(want, sizeof want,
           "multiply_ranks: rank %d: the application's fill of ", np - 1);
  ck_assert_msg(strncmp(hit, want, strlen(want)) == 0 &&
                    strstr(hit, "returned 5\n") != NULL,
                "%s", r.err);
  tool_run_free(&r);
}
END_TEST

START_TEST(a_rerun_gives_bit_identical_c) {
  char *args[] = {ranks_bin, "rerun", DATA "cpu%r.json", NULL};
  tool_run_t r;
  run_job(_i + 1, &r, args);
  check_all_ok(&r, 1);
  tool_run_free(&r);
}
END_TEST

START_TEST(a_drift_triggers_one_balancing) {
  char *args[] = {ranks_bin, "drift", DATA "multiplier-drift%r.json", NULL};
  tool_run_t r;
  run_job(2, &r, args);
  check_all_ok(&r, 1);
  tool_run_free(&r);
}
END_TEST

START_TEST(a_saved_distribution_is_checked_by_its_products) {
  char *args[] = {ranks_bin, "saved", DATA "multiplier-drift0.json", NULL};
  tool_run_t r;
  run_job(2, &r, args);
  check_all_ok(&r, 4);
  tool_run_free(&r);
}
END_TEST

START_TEST(scalapack_layouts_round_trip) {
  int np = _i + 1;
  char *args[] = {scalapack_bin, "roundtrip", NULL};
  tool_run_t r;
  run_job(np, &r, args);
  check_all_ok(&r, 3 + (np == 1 ? 2 : np == 4 ? 6 : 4));
  tool_run_free(&r);
}
END_TEST

START_TEST(scalapack_descriptors_multiply_as_pdgemm_does) {
  int np = _i + 1;
  char *args[] = {scalapack_bin, "pdgemm", DATA "cpu%r.json", NULL};
  tool_run_t r;
  run_job(np, &r, args);
  check_all_ok(&r, 2 * (np == 1 ? 2 : np == 4 ? 6 : 4));
  tool_run_free(&r);
}
END_TEST

/* 2-4 ranks: on one, the caller's B lies where the product wants it and
 * is used in place (never kept), which the checks do not expect. */
START_TEST(unchanged_operands_are_not_moved_again) {
  int np = _i + 1;
  char *args[] = {scalapack_bin, "reuse", DATA "cpu%r.json", NULL};
  tool_run_t r;
  run_job(np, &r, args);
  check_all_ok(&r, 13);
  tool_run_free(&r);
}
END_TEST

START_TEST(a_saved_distribution_spares_the_next_job_its_balancing) {
  int np = _i + 1;
  char *args[] = {scalapack_bin, "saved", DATA "cpu%r.json", NULL};
  tool_run_t r;
  run_job(np, &r, args);
  check_all_ok(&r, 9);
  tool_run_free(&r);
}
END_TEST

/* ---- mlsba-inpa --------------------------------------------------------- */

static json_t *parse_json(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  ck_assert_msg(j != NULL, "not JSON (%s): %.500s", e.text, text);
  return j;
}

static double num(json_t *o, const char *k) {
  json_t *v = json_object_get(o, k);
  ck_assert_msg(json_is_number(v), "no number %s", k);
  return json_number_value(v);
}

/* Any shape, both transposes, three products with one balancing: the
 * report's shape, every run, and the whole job's wall time beside the
 * product's, on real cores (verified) and simulated ranks. */
START_TEST(inpa_runs_any_shape_repeatedly) {
  const char *platform = _i ? DATA "sim%r.json" : DATA "cpu%r.json";
  char *args[] = {inpa,       "--platform", (char *)platform,
                  "-m",       "700",        "-n",
                  "300",      "-k",         "333",
                  "--block",  "64",         "--transa",
                  "--transb", "--repeat",   "3",
                  "--json",   "-",          NULL};
  tool_run_t r;
  run_job(2, &r, args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out);
  ck_assert(num(j, "m") == 700 && num(j, "n") == 300 && num(j, "k") == 333);
  ck_assert_str_eq(json_string_value(json_object_get(j, "transa")), "T");
  ck_assert_str_eq(json_string_value(json_object_get(j, "transb")), "T");
  ck_assert(num(j, "repeat") == 3);
  ck_assert_uint_eq(json_array_size(json_object_get(j, "runs")), 3);
  json_t *wall = json_object_get(j, "wall");
  double parts = num(wall, "balance_s") + num(wall, "fill_s") +
                 num(wall, "product_s") + num(wall, "check_s") +
                 num(wall, "gather_s") + num(wall, "move_s");
  /* The parts lie within the whole; the balancing ran once at least. */
  ck_assert(num(j, "wall_s") >= parts * 0.999 && num(wall, "balance_s") > 0);
  ck_assert(_i || num(j, "wall_s") >= num(j, "makespan_s"));
  ck_assert(num(j, "gflops") > 0);
  ck_assert(_i ? json_is_null(json_object_get(j, "verified"))
               : json_is_true(json_object_get(j, "verified")));
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* A shape that is not a multiple of the block (before: "size 1000 is not
 * a positive multiple of the block 64"), verified. */
START_TEST(inpa_runs_sizes_that_are_not_multiples_of_the_block) {
  char *args[] = {inpa,      "--platform", DATA "cpu%r.json", "--size", "1000",
                  "--block", "64",         "--json",          "-",      NULL};
  tool_run_t r;
  run_job(3, &r, args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  ck_assert(num(j, "m") == 1000 && num(j, "k") == 1000);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* dir and what it holds, down to depth levels of folders, removed: how
 * many entries were in it, or -1 when one could not be removed. */
static int remove_tree(const char *dir, int depth) {
  char path[1024];
  int n = 0;
  DIR *d = opendir(dir);
  if (d == NULL)
    return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    int below = -1;
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
      below = e->d_type == DT_DIR && depth > 0 ? remove_tree(path, depth - 1)
              : remove(path) == 0              ? 0
                                               : -1;
    n = n < 0 || below < 0 ? -1 : n + 1 + below;
  }
  closedir(d);
  return remove(dir) == 0 ? n : -1;
}

/* How many folders named node-* in dir hold at least one file. */
static int folders_with_models(const char *dir) {
  char path[1024];
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    if (strncmp(e->d_name, "node-", 5) != 0 ||
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >=
            (int)sizeof path)
      continue;
    DIR *f = opendir(path);
    int files = 0;
    for (struct dirent *x; f && (x = readdir(f)) != NULL;)
      files += x->d_name[0] != '.';
    if (f)
      closedir(f);
    n += files > 0;
  }
  if (d)
    closedir(d);
  return n;
}

/* --model-dir: two ranks naming the same core (one platform file for
 * both) each keep their models in a folder of their own (they shared,
 * and overwrote, one file before); the second job runs the saved
 * distribution (from_saved), verified. */
START_TEST(inpa_keeps_its_balancing_in_model_dir) {
  char dir[] = "/tmp/mlsba-inpa-models-XXXXXX";
  ck_assert(mkdtemp(dir) != NULL);
  char sub[sizeof dir + 8];
  snprintf(sub, sizeof sub, "%s/m", dir); /* made by the job */
  char *args[] = {
      inpa, "--platform", DATA "cpu0.json", "--size", "512", "--block",
      "64", "--eps",      "0.99",           "--json", "-",   "--model-dir",
      sub,  NULL};
  for (int job = 0; job < 2; job++) {
    tool_run_t r;
    run_job(2, &r, args);
    ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
    json_t *j = parse_json(r.out);
    ck_assert(json_is_true(json_object_get(j, "verified")));
    ck_assert_msg(json_is_boolean(json_object_get(j, "from_saved")) &&
                      json_is_true(json_object_get(j, "from_saved")) == job,
                  "job %d: %s", job, r.out);
    json_decref(j);
    tool_run_free(&r);
  }
  ck_assert_int_eq(folders_with_models(sub), 2);
  ck_assert_int_gt(remove_tree(dir, 2), 2);
}
END_TEST

/* Three ranks, two of them on one core (cores 0, 1, 1, as
 * benchmarks/peers/ranks3): INPA's first run gives each its share of its
 * core (1 : 1/2 : 1/2 of the 8 x 8 blocks), not the even split, which
 * would cost its steps at 2/3 of the work on core 1. */
START_TEST(ranks_that_share_a_core_start_from_their_shares) {
  char *args[] = {inpa,     "--platform", DATA "shared%r.json",
                  "--size", "512",        "--block",
                  "64",     "--eps",      "0.99",
                  "--json", "-",          NULL};
  tool_run_t r;
  run_job(3, &r, args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_t *j = parse_json(r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  json_t *first = json_array_get(json_object_get(j, "history"), 0);
  json_t *w = json_object_get(first, "w");
  ck_assert_msg(json_array_size(w) == 3 &&
                    json_integer_value(json_array_get(w, 0)) == 32 &&
                    json_integer_value(json_array_get(w, 1)) == 16 &&
                    json_integer_value(json_array_get(w, 2)) == 16,
                "first run's blocks: %s", r.out);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* Bad values and a transpose on one rank only: one line, every rank
 * stops. */
START_TEST(inpa_refuses_what_it_cannot_run) {
  static const struct {
    const char *opt, *value, *want;
  } bad[] = {{"-m", "0", "bad value for -m: 0"},
             {"--repeat", "0", "bad value for --repeat: 0"},
             {"-k", "x", "bad value for -k: x"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *args[] = {inpa,
                    "--platform",
                    DATA "sim%r.json",
                    (char *)bad[i].opt,
                    (char *)bad[i].value,
                    NULL};
    tool_run_t r;
    run_job(2, &r, args);
    ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, bad[i].want) != NULL, "%s", r.err);
    tool_run_free(&r);
  }
}
END_TEST

START_TEST(a_transpose_on_one_rank_only_stops_all) {
  char *argv[MPI_JOB_START_WORDS + 24];
  size_t n = mpi_job_start(argv, timeout, "120", mpirun);
  char *const job[] = {
      "-np",    "1",    inpa,      "--platform", DATA "sim%r.json",
      "--size", "1024", "--block", "64",         ":",
      "-np",    "1",    inpa,      "--platform", DATA "sim%r.json",
      "--size", "1024", "--block", "64",         "--transa",
      NULL};
  for (size_t i = 0; job[i] != NULL; i++)
    argv[n++] = job[i];
  argv[n] = NULL;
  mpi_job_environment();
  tool_run_t r;
  run_tool(argv, &r);
  ck_assert_msg(r.exited && r.status == 1, "status %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.err, "mlsba-inpa: rank 1: option transa is T here, "
                              "N on rank 0") != NULL,
                "%s", r.err);
  const char *hit = strstr(r.err, "mlsba-inpa: ");
  ck_assert_msg(strstr(hit + 1, "mlsba-inpa: ") == NULL, "two messages: %s",
                r.err);
  tool_run_free(&r);
}
END_TEST

static Suite *multiply_suite(void) {
  Suite *s = suite_create("multiply");
  TCase *tc = tcase_create("ranks");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, every_op_and_shape_equals_the_reference, 0, 4);
  tcase_add_loop_test(tc, a_failing_fill_ends_every_rank_with_one_line, 0, 3);
  tcase_add_loop_test(tc, a_rerun_gives_bit_identical_c, 0, 2);
  tcase_add_test(tc, a_drift_triggers_one_balancing);
  tcase_add_test(tc, a_saved_distribution_is_checked_by_its_products);
  tcase_add_loop_test(tc, scalapack_layouts_round_trip, 0, 4);
  tcase_add_loop_test(tc, scalapack_descriptors_multiply_as_pdgemm_does, 0, 4);
  tcase_add_loop_test(tc, unchanged_operands_are_not_moved_again, 1, 4);
  tcase_add_loop_test(
      tc, a_saved_distribution_spares_the_next_job_its_balancing, 1, 3);
  tcase_add_loop_test(tc, inpa_runs_any_shape_repeatedly, 0, 2);
  tcase_add_test(tc, inpa_runs_sizes_that_are_not_multiples_of_the_block);
  tcase_add_test(tc, inpa_refuses_what_it_cannot_run);
  tcase_add_test(tc, inpa_keeps_its_balancing_in_model_dir);
  tcase_add_test(tc, ranks_that_share_a_core_start_from_their_shares);
  tcase_add_test(tc, a_transpose_on_one_rank_only_stops_all);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(multiply_suite()); }
