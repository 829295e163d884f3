/* Each rank's trailing update split between its node's devices
 * (mlsba_mpi_getrf_ex, mlsba_mpi_potrf_ex with a node platform), every job
 * under a timeout so that a hang fails its test (factor_node_ranks does
 * the work and prints one line a case):
 *  - two simulated devices a rank, on 1 to 3 ranks, and two real cores on
 *    one rank: the factors equal LAPACK's (ipiv identical, residual
 *    < 16), and every rank's report says more than one device took
 *    columns;
 *  - flat simulated speeds 1:2: the faster device takes about twice the
 *    columns, every step split by the models;
 *  - seed 004's fixed slice, given and tuned from the first step: each
 *    device's columns follow the slice, every step timed;
 *  - a platform that cannot be opened on one rank fails every rank;
 *  - under SMPI, mlsba-inpa-smpi --op getrf on 4 ranks whose nodes are
 *    twice as fast: each rank's virtual update time halves exactly, and
 *    the simulated makespan nearly so (the updates are charged to the
 *    simulated clock; the messages are not faster);
 *  - under SMPI on 9 and 16 ranks, a host each, LU and Cholesky: every
 *    rank's panels, TRSMs and copies are charged too (other_s), twice as
 *    fast on nodes twice as fast, and a run that skips the numbers
 *    (--skip-compute) charges the same times as the run that computes
 *    and verifies them;
 *  - under SMPI on 9 ranks, the panel on the node's cores together: four
 *    cores of one kind charge every rank's panels in less time than one
 *    core, and LU's block row of U is solved by every device of the
 *    node (an accelerator beside the core makes it faster);
 *  - under SMPI on 9 ranks, a node file's host memory ("memory") charges
 *    the copies: at the core rule's rate the same times, slower longer. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/run_ranks.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
            ranks_bin[] = MLSBA_FACTOR_NODE_RANKS_BIN;

#define DATA MLSBA_SOURCE_DIR "/tests/data/"

/* args (NULL-terminated) on np oversubscribed ranks, killed after 240 s,
 * one thread each in OpenMP and OpenBLAS. */
static void job(int np, tool_run_t *r, char *const *args) {
  mpi_job_environment();
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  run_ranks(timeout, "240", mpirun, np, args, r);
}

/* Exit status 0, `lines` lines, each "ok ...". */
static void run_case(int np, char *what, char *platform, size_t lines) {
  char *args[] = {ranks_bin, what, platform, NULL};
  tool_run_t r;
  job(np, &r, args);
  check_all_ok(&r, lines);
  tool_run_free(&r);
}

START_TEST(lu_on_two_simulated_devices_equals_lapack) {
  run_case(_i + 1, "lu", DATA "mpi/factor-node2.json", 3);
}
END_TEST

START_TEST(cholesky_on_two_simulated_devices_is_right) {
  run_case(_i + 1, "chol", DATA "mpi/factor-node2.json", 2);
}
END_TEST

/* Two real cores on one rank (cores 0 and 1 of this machine). */
START_TEST(lu_and_cholesky_on_two_cores_of_one_rank) {
  run_case(1, _i ? "chol" : "lu", DATA "two-cores.json", _i ? 2 : 3);
}
END_TEST

START_TEST(the_split_follows_the_simulated_speeds) {
  run_case(_i + 1, "ratio", DATA "mpi/factor-node2.json", 1);
}
END_TEST

START_TEST(a_fixed_slice_keeps_its_shares) {
  run_case(_i + 1, "fixed", DATA "mpi/factor-node2.json", 2);
}
END_TEST

START_TEST(a_platform_missing_on_one_rank_fails_every_rank) {
  run_case(_i + 2, "bad", DATA "mpi/factor-node2.json", 1);
}
END_TEST

#ifdef MLSBA_INPA_SMPI_BIN
/* One SMPI run of mlsba-inpa-smpi --op getrf on 4 ranks, every rank's node
 * the platform given; its JSON report. */
static json_t *smpi_getrf(const char *platform) {
  char *args[] = {MLSBA_INPA_SMPI_BIN,
                  "--op",
                  "getrf",
                  "--algo",
                  "homogeneous",
                  "--platform",
                  (char *)platform,
                  "--size",
                  "400",
                  "--block",
                  "16",
                  "--json",
                  "-",
                  NULL};
  return run_smpi_verified(timeout, "240", MLSBA_SMPIRUN, "4",
                           DATA "mpi/smpi.xml", DATA "mpi/smpi.hosts", args);
}

/* Nodes twice as fast: every rank's virtual update time is half (the
 * same split, every device twice the speed), and the simulated makespan
 * between 1.7 and 2.05 times shorter; the makespan covers the longest
 * rank's updates, so they reached the simulated clock. */
/* One SMPI run of mlsba-inpa-smpi on np ranks, a host each (smpi16.xml),
 * homogeneous layout, N = 480, block 16; skip: --skip-compute. Its JSON
 * report, the run verified unless skipped. */
static json_t *smpi_factor(const char *np, const char *op, const char *platform,
                           int skip) {
  char *args[] = {"--cfg=smpi/bcast:binomial_tree",
                  MLSBA_INPA_SMPI_BIN,
                  "--op",
                  (char *)op,
                  "--algo",
                  "homogeneous",
                  "--platform",
                  (char *)platform,
                  "--size",
                  "480",
                  "--block",
                  "16",
                  "--json",
                  "-",
                  skip ? "--skip-compute" : NULL,
                  NULL};
  tool_run_t r;
  run_smpi_ranks(timeout, "240", MLSBA_SMPIRUN, np, DATA "mpi/smpi16.xml",
                 DATA "mpi/smpi16.hosts", args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_error_t e;
  json_t *j = json_loads(r.out, 0, &e);
  ck_assert_msg(j != NULL, "not JSON: %s", r.out);
  ck_assert(json_is_true(json_object_get(j, "skip_compute")) == !!skip);
  ck_assert(json_is_true(json_object_get(j, "verified")) == !skip);
  ck_assert_int_eq(json_array_size(json_object_get(j, "rank_other_s")),
                   (size_t)atoi(np));
  tool_run_free(&r);
  return j;
}

static double rank_value(json_t *j, const char *key, size_t i) {
  return json_real_value(json_array_get(json_object_get(j, key), i));
}

/* Nodes twice as fast (9 ranks, the numbers skipped): every rank's
 * charged panels, TRSMs and copies take half the virtual time, as its
 * updates do, and the makespan is between 1.7 and 2.05 times shorter;
 * the makespan covers every rank's charged compute. */
START_TEST(smpi_panels_are_charged_from_the_node_models) {
  const char *op = _i ? "potrf" : "getrf";
  json_t *slow = smpi_factor("9", op, DATA "mpi/factor-node-slow.json", 1);
  json_t *fast = smpi_factor("9", op, DATA "mpi/factor-node-fast.json", 1);
  double ms = json_real_value(json_object_get(slow, "makespan_s"));
  double mf = json_real_value(json_object_get(fast, "makespan_s"));
  for (size_t i = 0; i < 9; i++) {
    double os = rank_value(slow, "rank_other_s", i);
    double of = rank_value(fast, "rank_other_s", i);
    double us = rank_value(slow, "rank_update_s", i);
    ck_assert_msg(os > 0 && of > 0 && os / of > 1.99 && os / of < 2.01,
                  "%s rank %zu: other %g s slow, %g s fast", op, i, os, of);
    ck_assert_msg(ms >= os + us, "%s: makespan %g s < rank %zu's %g + %g s", op,
                  ms, i, os, us);
  }
  ck_assert_msg(ms / mf > 1.7 && ms / mf < 2.05,
                "%s: makespan %g s slow, %g s fast: ratio %g", op, ms, mf,
                ms / mf);
  json_decref(slow);
  json_decref(fast);
}
END_TEST

/* 16 ranks: the run that computes and verifies the factors and the one
 * that skips them charge each rank the same update time (the same
 * shapes), the same other time for Cholesky (LU's interchanges differ:
 * real pivots against drawn ones), and makespans within 10%. */
START_TEST(smpi_skipping_the_numbers_keeps_the_times) {
  const char *op = _i ? "potrf" : "getrf";
  json_t *real = smpi_factor("16", op, DATA "mpi/factor-node-slow.json", 0);
  json_t *skip = smpi_factor("16", op, DATA "mpi/factor-node-slow.json", 1);
  for (size_t i = 0; i < 16; i++) {
    double ur = rank_value(real, "rank_update_s", i);
    double us = rank_value(skip, "rank_update_s", i);
    double orr = rank_value(real, "rank_other_s", i);
    double os = rank_value(skip, "rank_other_s", i);
    ck_assert_msg(ur > 0 && us / ur > 0.999 && us / ur < 1.001,
                  "%s rank %zu: update %g s computed, %g s skipped", op, i, ur,
                  us);
    ck_assert_msg(orr > 0 && os / orr > (_i ? 0.999 : 0.8) &&
                      os / orr < (_i ? 1.001 : 1.25),
                  "%s rank %zu: other %g s computed, %g s skipped", op, i, orr,
                  os);
  }
  double mr = json_real_value(json_object_get(real, "makespan_s"));
  double ms = json_real_value(json_object_get(skip, "makespan_s"));
  ck_assert_msg(ms / mr > 0.9 && ms / mr < 1.1,
                "%s: makespan %g s computed, %g s skipped", op, mr, ms);
  json_decref(real);
  json_decref(skip);
}
END_TEST

/* The sum over the 9 ranks of key in j. */
static double ranks_sum(json_t *j, const char *key) {
  double sum = 0;
  for (size_t i = 0; i < 9; i++)
    sum += rank_value(j, key, i);
  return sum;
}

/* Four cores of kind "core" factor the panels together: every rank's
 * other compute (panels, copies; LU's solves too) takes less virtual
 * time than on one core, and in all at most 0.75 of it for LU, 0.85 for
 * Cholesky (1 when the panels took one core; 0.62 and 0.72 measured:
 * the copies, the diagonal blocks and the last steps' panels of fewer
 * than four blocks of rows keep to fewer cores). */
START_TEST(smpi_the_panel_runs_on_the_nodes_cores) {
  const char *op = _i ? "potrf" : "getrf";
  json_t *one = smpi_factor("9", op, DATA "mpi/factor-node-core1.json", 1);
  json_t *four = smpi_factor("9", op, DATA "mpi/factor-node-core4.json", 1);
  for (size_t i = 0; i < 9; i++) {
    double o1 = rank_value(one, "rank_other_s", i);
    double o4 = rank_value(four, "rank_other_s", i);
    ck_assert_msg(o1 > 0 && o4 > 0 && o4 < o1,
                  "%s rank %zu: other %g s on one core, %g s on four", op, i,
                  o1, o4);
  }
  double r = ranks_sum(four, "rank_other_s") / ranks_sum(one, "rank_other_s");
  ck_assert_msg(r < (_i ? 0.85 : 0.75),
                "%s: other compute on four cores %g of "
                "one core's",
                op, r);
  json_decref(one);
  json_decref(four);
}
END_TEST

/* LU's block row of U solved by the node's devices together: beside the
 * same core, an accelerator 8 times as fast takes most of the solve's
 * columns, so every rank's other compute (the same panels and copies on
 * the core, and the solves) is shorter than on the core alone. */
START_TEST(smpi_the_block_row_of_u_is_split_between_the_devices) {
  json_t *core =
      smpi_factor("9", "getrf", DATA "mpi/factor-node-core1.json", 1);
  json_t *acc =
      smpi_factor("9", "getrf", DATA "mpi/factor-node-core1-acc.json", 1);
  for (size_t i = 0; i < 9; i++) {
    double oc = rank_value(core, "rank_other_s", i);
    double oa = rank_value(acc, "rank_other_s", i);
    ck_assert_msg(oc > 0 && oa > 0 && oa < 0.98 * oc,
                  "rank %zu: other %g s on the core, %g s with the "
                  "accelerator",
                  i, oc, oa);
  }
  json_decref(core);
  json_decref(acc);
}
END_TEST

/* A node file's host memory ("memory") charges the copies: at the rate
 * the core's rule gives (two flops an element on the core: 2000 blocks
 * of 16 a second, 65.5 MB/s) every rank's other compute is the same as
 * without it; at a tenth of it, longer on every rank. */
START_TEST(smpi_copies_are_charged_at_the_host_memory) {
  json_t *core =
      smpi_factor("9", "getrf", DATA "mpi/factor-node-core1.json", 1);
  json_t *same = smpi_factor("9", "getrf",
                             DATA "mpi/factor-node-core1-memory-same.json", 1);
  json_t *slow = smpi_factor("9", "getrf",
                             DATA "mpi/factor-node-core1-memory-slow.json", 1);
  for (size_t i = 0; i < 9; i++) {
    double oc = rank_value(core, "rank_other_s", i);
    double os = rank_value(same, "rank_other_s", i);
    double ol = rank_value(slow, "rank_other_s", i);
    ck_assert_msg(oc > 0 && os > 0.999 * oc && os < 1.001 * oc && ol > 1.1 * oc,
                  "rank %zu: other %g s on the core's rule, %g s at its "
                  "rate in memory, %g s at a tenth",
                  i, oc, os, ol);
  }
  json_decref(core);
  json_decref(same);
  json_decref(slow);
}
END_TEST

START_TEST(smpi_makespan_follows_the_node_models) {
  json_t *slow = smpi_getrf(DATA "mpi/factor-node-slow.json");
  json_t *fast = smpi_getrf(DATA "mpi/factor-node-fast.json");
  json_t *us = json_object_get(slow, "rank_update_s");
  json_t *uf = json_object_get(fast, "rank_update_s");
  ck_assert_int_eq(json_array_size(us), 4);
  ck_assert_int_eq(json_array_size(uf), 4);
  double longest = 0;
  for (size_t i = 0; i < 4; i++) {
    double s = json_real_value(json_array_get(us, i));
    double f = json_real_value(json_array_get(uf, i));
    ck_assert_msg(s > 0 && f > 0 && s / f > 1.99 && s / f < 2.01,
                  "rank %zu: update %g s slow, %g s fast", i, s, f);
    longest = s > longest ? s : longest;
    ck_assert_int_gt(json_integer_value(json_array_get(
                         json_object_get(slow, "rank_split_steps"), i)),
                     0);
  }
  double ms = json_real_value(json_object_get(slow, "makespan_s"));
  double mf = json_real_value(json_object_get(fast, "makespan_s"));
  ck_assert_msg(ms >= longest, "makespan %g s < rank update %g s", ms, longest);
  ck_assert_msg(ms / mf > 1.7 && ms / mf < 2.05,
                "makespan %g s slow, %g s fast: ratio %g", ms, mf, ms / mf);
  json_decref(slow);
  json_decref(fast);
}
END_TEST
#endif

static Suite *node_suite(void) {
  Suite *s = suite_create("mpi_factor_node");
  TCase *tc = tcase_create("ranks");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, lu_on_two_simulated_devices_equals_lapack, 0, 3);
  tcase_add_loop_test(tc, cholesky_on_two_simulated_devices_is_right, 0, 3);
  tcase_add_loop_test(tc, lu_and_cholesky_on_two_cores_of_one_rank, 0, 2);
  tcase_add_loop_test(tc, the_split_follows_the_simulated_speeds, 0, 2);
  tcase_add_loop_test(tc, a_fixed_slice_keeps_its_shares, 0, 2);
  tcase_add_loop_test(tc, a_platform_missing_on_one_rank_fails_every_rank, 0,
                      2);
#ifdef MLSBA_INPA_SMPI_BIN
  tcase_add_test(tc, smpi_makespan_follows_the_node_models);
  tcase_add_loop_test(tc, smpi_panels_are_charged_from_the_node_models, 0, 2);
  tcase_add_loop_test(tc, smpi_skipping_the_numbers_keeps_the_times, 0, 2);
  tcase_add_loop_test(tc, smpi_the_panel_runs_on_the_nodes_cores, 0, 2);
  tcase_add_test(tc, smpi_the_block_row_of_u_is_split_between_the_devices);
  tcase_add_test(tc, smpi_copies_are_charged_at_the_host_memory);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(node_suite()); }
