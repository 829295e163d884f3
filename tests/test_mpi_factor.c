/* LU and Cholesky across ranks (mlsba_mpi_getrf, _potrf, _getrs, _potrs on
 * mlsba_mpi_factor_matrix()'s layouts), under mpirun, each job bounded by
 * a timeout so that a hang fails its test (factor_ranks does the work and
 * prints one line a case):
 *  - on 1 to 4 ranks, homogeneous and model-drawn (fpm) layouts (LU on 9
 *    too, node columns of 3): odd N,
 *    N below the block, N not a multiple of it, more ranks than block
 *    columns, M x N both ways, blocks wider than the panel's leaf, a zero
 *    column (first and in the middle), exact ties in the pivot search
 *    across the ranks of a node column: the factors gathered on rank 0 equal
 *    LAPACK's (ipiv identical, scaled residual < 16), the solves' scaled
 *    residuals (HPL's) < 16, a singular and a non-positive-definite matrix
 *    give LAPACK's info on every rank, Cholesky leaves the upper triangle
 *    as it was;
 *  - a bad argument on one rank fails every rank with that rank's message;
 *  - a ScaLAPACK descriptor's matrix moved in, factorized and moved back;
 *  - seed 003's process scaling (ranks 1 and 2 one node): the ownership
 *    against eq. 3's grid and Algorithm 1's order, the factors LAPACK's;
 *    eqs. 1-2's process counts against a brute force;
 *  - mlsba-inpa --op getrf|potrf: its JSON report verified, every block
 *    of the matrix owned by one rank, the product's options refused and
 *    the factorizations' refused with the product; --compare's report
 *    with every layout and split, per-step times. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/run_ranks.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
            ranks_bin[] = MLSBA_FACTOR_RANKS_BIN, inpa[] = MLSBA_INPA_BIN;

#define DATA MLSBA_SOURCE_DIR "/tests/data/mpi/"

/* args (NULL-terminated) on np oversubscribed ranks, killed after 240 s,
 * one thread each in OpenMP and OpenBLAS. */
static void job(int np, tool_run_t *r, char *const *args) {
  mpi_job_environment();
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  run_ranks(timeout, "240", mpirun, np, args, r);
}

static void run_case(int np, char *what, char *arg, size_t lines) {
  char *args[] = {ranks_bin, what, arg, NULL};
  tool_run_t r;
  job(np, &r, args);
  check_all_ok(&r, lines);
  tool_run_free(&r);
}

START_TEST(lu_equals_lapack_homogeneous) {
  run_case(_i + 1, "lu", "homogeneous", 19);
}
END_TEST

START_TEST(lu_equals_lapack_fpm) { run_case(_i + 1, "lu", "fpm", 19); }
END_TEST

/* 9 ranks in ScaLAPACK's 3 x 3 grid: node columns of 3, where a rank's
 * candidate in the pivot search reaches the others cut to the columns
 * they read and the diagonal block's owner whole (factor_pivot.c; blocks
 * of 24 to 40, wider than the panel's leaf): the factors still LAPACK's. */
START_TEST(lu_on_node_columns_of_3_equals_lapack) {
  run_case(9, "lu", "homogeneous", 19);
}
END_TEST

/* Seed 003's process scaling (ranks 1 and 2 one node's processes) and
 * the constant-speed walk: the same cases, the same answers. */
START_TEST(lu_equals_lapack_process_scaling) {
  run_case(_i + 1, "lu", "process-scaling", 19);
}
END_TEST

START_TEST(cholesky_equals_lapack_process_scaling) {
  run_case(_i + 1, "chol", "process-scaling", 9);
}
END_TEST

/* And the factorizations' default block by size and ranks. */
START_TEST(process_counts_follow_eqs_1_2) { run_case(1, "counts", "", 2); }
END_TEST

START_TEST(cholesky_equals_lapack_homogeneous) {
  run_case(_i + 1, "chol", "homogeneous", 9);
}
END_TEST

START_TEST(cholesky_equals_lapack_fpm) { run_case(_i + 1, "chol", "fpm", 9); }
END_TEST

/* 6 ranks on ScaLAPACK's 2 x 3 grid: three node columns of two ranks,
 * so the rows of L that a rank reads only for its block columns come
 * forwarded by its node column's owner of them (factor_deliver.c), not
 * from the panel's node column; the factors must not change. */
START_TEST(cholesky_forwarded_rows_equal_lapack) {
  run_case(6, "chol", "homogeneous", 9);
}
END_TEST

/* LU's cases on 3 ranks, MLSBA_MPI_PIECE_BYTES set to 256 on rank 0
 * alone (as mpirun leaves the environment of the ranks on other hosts):
 * the ranks agree on the smallest piece, so that no message is cut
 * otherwise on its two sides (Open MPI aborted the job with
 * MPI_ERR_TRUNCATE). */
static void run_lu_pieces_on_rank_0(void) {
  char *argv[MPI_JOB_START_WORDS + 16];
  size_t n = mpi_job_start(argv, timeout, "240", mpirun);
  char *const job[] = {"-np",     "1",  "env",     "MLSBA_MPI_PIECE_BYTES=256",
                       ranks_bin, "lu", "fpm",     ":",
                       "-np",     "2",  ranks_bin, "lu",
                       "fpm",     NULL};
  for (size_t i = 0; job[i] != NULL; i++)
    argv[n++] = job[i];
  argv[n] = NULL;
  mpi_job_environment();
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  unsetenv("MLSBA_MPI_PIECE_BYTES");
  tool_run_t r;
  run_tool(argv, &r);
  check_all_ok(&r, 19);
  tool_run_free(&r);
}

/* Every step's larger messages (a panel's rows, Cholesky's forwards, the
 * interchanged rows, U's block row) in pieces of a column or a few
 * (MLSBA_MPI_PIECE_BYTES: 256 bytes standing for the 2^30 that keep a
 * message's count and bytes below 2^31 at 64 Keeneland nodes): the
 * factors still LAPACK's. LU on 3 ranks (the size given to rank 0
 * alone: run_lu_pieces_on_rank_0) and Cholesky on 3, Cholesky on 10
 * (2 x 5: five node columns of two ranks, the rows a rank reads for its
 * block columns forwarded down its node column, and the block rows
 * along the row broadcast's tree, factor_deliver.c); the 16 SMPI ranks
 * below cut theirs too. */
START_TEST(messages_in_pieces_equal_lapack) {
  if (_i == 0) {
    run_lu_pieces_on_rank_0();
    return;
  }
  setenv("MLSBA_MPI_PIECE_BYTES", "256", 1);
  if (_i == 1)
    run_case(3, "chol", "fpm", 9);
  else
    run_case(10, "chol", "homogeneous", 9);
  unsetenv("MLSBA_MPI_PIECE_BYTES");
}
END_TEST

START_TEST(a_bad_argument_on_one_rank_fails_every_rank) {
  int np = _i + 2;
  char on[16];
  snprintf(on, sizeof on, "%d", np - 1);
  run_case(np, "bad", on, 1);
}
END_TEST

START_TEST(a_scalapack_matrix_moves_in_and_back) {
  char *args[] = {ranks_bin, "scalapack", NULL};
  tool_run_t r;
  job(_i + 1, &r, args);
  check_all_ok(&r, 1);
  tool_run_free(&r);
}
END_TEST

/* --op getrf (inpa: the layout from INPA's node models of simulated
 * ranks of unequal speeds) and --op potrf (homogeneous) on 3 ranks, N not
 * a multiple of the block: the report says verified with a residual
 * below 16, info 0, and its blocks per rank cover the matrix once. */
START_TEST(inpa_factorizes_and_verifies) {
  char *op = _i == 0 ? "getrf" : "potrf";
  char *algo = _i == 0 ? "inpa" : "homogeneous";
  char *args[] = {
      inpa,     "--op",   op,        "--platform", DATA "sim%r.json",
      "--size", "200",    "--block", "32",         "--algo",
      algo,     "--json", "-",       NULL};
  tool_run_t r;
  job(3, &r, args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s%s", r.status, r.out,
                r.err);
  json_error_t e;
  json_t *j = json_loads(r.out, 0, &e);
  ck_assert_msg(j != NULL, "not JSON: %s", r.out);
  ck_assert_str_eq(json_string_value(json_object_get(j, "op")), op);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  double res = json_real_value(json_object_get(j, "residual"));
  ck_assert_msg(res >= 0 && res < 16, "residual %g", res);
  ck_assert_int_eq(json_integer_value(json_object_get(j, "info")), 0);
  ck_assert(json_real_value(json_object_get(j, "makespan_s")) > 0);
  ck_assert(json_real_value(json_object_get(j, "gflops")) > 0);
  json_t *blocks = json_object_get(j, "rank_blocks");
  ck_assert_int_eq(json_array_size(blocks), 3);
  json_int_t total = 0;
  for (size_t i = 0; i < 3; i++)
    total += json_integer_value(json_array_get(blocks, i));
  ck_assert_int_eq(total, 7 * 7); /* ceil(200 / 32) squared */
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* The layout of ranks pinned to cores: the inpa run above's 3 ranks,
 * with _i == 0 unpinned and _i == 1 rank 0 on core 0 and ranks 1 and 2
 * on core 1 (as benchmarks/peers/ranks3 pins the product's peer run).
 * Unpinned, CMA stands rank 2 (2 simulated cores) in rank 0's node
 * column (the GPU node's); pinned, ranks 1 and 2 share a core and each
 * stands alone: three columns. Verified either way. Needs two online
 * cores. */
START_TEST(inpa_keeps_ranks_sharing_a_core_apart) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    return;
  char pin[] = "case $OMPI_COMM_WORLD_RANK in 0) c=0 ;; *) c=1 ;; esac; "
               "exec taskset -c $c \"$0\" \"$@\"";
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char *args[] = {sh,       dash_c,  pin,          inpa,
                  "--op",   "getrf", "--platform", DATA "sim%r.json",
                  "--size", "200",   "--block",    "32",
                  "--algo", "inpa",  "--json",     "-",
                  NULL};
  tool_run_t r;
  job(3, &r, _i == 0 ? args + 3 : args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s%s", r.status, r.out,
                r.err);
  json_error_t e;
  json_t *j = json_loads(r.out, 0, &e);
  ck_assert_msg(j != NULL, "not JSON: %s", r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  json_t *col = json_object_get(j, "rank_column");
  json_int_t c0 = json_integer_value(json_array_get(col, 0));
  json_int_t c1 = json_integer_value(json_array_get(col, 1));
  json_int_t c2 = json_integer_value(json_array_get(col, 2));
  if (_i == 0)
    ck_assert_msg(c0 == c2 && c1 != c0,
                  "unpinned: ranks 0, 1, 2 in columns %lld, %lld, %lld",
                  (long long)c0, (long long)c1, (long long)c2);
  else
    ck_assert_msg(c0 != c1 && c0 != c2 && c1 != c2,
                  "pinned: ranks 0, 1, 2 in columns %lld, %lld, %lld",
                  (long long)c0, (long long)c1, (long long)c2);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* The product's shape options with --op getrf: one line, status 2. */
START_TEST(inpa_refuses_the_products_options_with_a_factorization) {
  char *args[] = {inpa, "--op", "getrf", "--platform", DATA "sim%r.json",
                  "-m", "300",  NULL};
  tool_run_t r;
  job(2, &r, args);
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.err, "are the product's (--op gemm)") != NULL, "%s",
                r.err);
  tool_run_free(&r);
}
END_TEST

/* A row's report phases (rank_total_s ... rank_update_wall_s, one a
 * rank): every rank's total positive, each phase within it and the
 * phases together no more than it (they are parts of one wall clock);
 * and rank_column numbering the node columns 0, 1, ... left to right,
 * none skipped. */
static void check_phases(json_t *row, size_t q) {
  const char *parts[] = {"rank_panel_s", "rank_wait_s", "rank_swap_s",
                         "rank_update_wall_s"};
  json_t *total = json_object_get(row, "rank_total_s");
  json_t *column = json_object_get(row, "rank_column");
  ck_assert_int_eq(json_array_size(total), q);
  ck_assert_int_eq(json_array_size(column), q);
  json_int_t most = -1;
  for (size_t r = 0; r < q; r++) {
    double t = json_real_value(json_array_get(total, r)), sum = 0;
    ck_assert_msg(t > 0, "rank %zu total %g", r, t);
    for (size_t p = 0; p < 4; p++) {
      json_t *a = json_object_get(row, parts[p]);
      ck_assert_int_eq(json_array_size(a), q);
      double v = json_real_value(json_array_get(a, r));
      ck_assert_msg(v >= 0 && v <= t, "rank %zu %s %g of %g", r, parts[p], v,
                    t);
      sum += v;
    }
    ck_assert_msg(sum <= t * 1.000001, "rank %zu phases %g of %g", r, sum, t);
    json_int_t c = json_integer_value(json_array_get(column, r));
    ck_assert(c >= 0 && c < (json_int_t)q);
    most = c > most ? c : most;
  }
  for (json_int_t c = 0; c <= most; c++) {
    int found = 0;
    for (size_t r = 0; r < q && !found; r++)
      found = json_integer_value(json_array_get(column, r)) == c;
    ck_assert_msg(found, "node column %lld has no rank", (long long)c);
  }
}

/* --compare on 3 ranks of simulated nodes (three devices each), ranks 1
 * and 2 one node for process scaling: the JSON parses and has every row,
 * each layout with both splits, each verified, its blocks covering the
 * matrix once, a time for every step (the slowest rank's, its update's
 * within it on simulated devices only in virtual time, so not compared),
 * and the fixed rows' layouts the same as their per-step twins'. */
START_TEST(inpa_compares_every_layout) {
  char *op = _i == 0 ? "getrf" : "potrf";
  char *args[] = {
      inpa,           "--op", op,        "--platform", DATA "sim%r.json",
      "--size",       "200",  "--block", "32",         "--compare",
      "--node-ranks", "1,2",  "--json",  "-",          NULL};
  tool_run_t r;
  job(3, &r, args);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s%s", r.status, r.out,
                r.err);
  json_error_t e;
  json_t *j = json_loads(r.out, 0, &e);
  ck_assert_msg(j != NULL, "not JSON: %s", r.out);
  ck_assert_str_eq(json_string_value(json_object_get(j, "algo")), "compare");
  json_t *rows = json_object_get(j, "results");
  ck_assert_int_eq(json_array_size(rows), 8);
  const char *layouts[] = {"fpm", "homogeneous", "constant", "process-scaling"};
  for (size_t i = 0; i < 8; i++) {
    json_t *row = json_array_get(rows, i);
    ck_assert_str_eq(json_string_value(json_object_get(row, "layout")),
                     layouts[i % 4]);
    ck_assert_str_eq(json_string_value(json_object_get(row, "split")),
                     i < 4 ? "fpm" : "fixed");
    ck_assert_msg(json_is_true(json_object_get(row, "verified")), "row %zu", i);
    ck_assert(json_real_value(json_object_get(row, "makespan_s")) > 0);
    ck_assert(json_real_value(json_object_get(row, "gflops")) > 0);
    json_t *blocks = json_object_get(row, "rank_blocks");
    json_t *twin = json_object_get(json_array_get(rows, i % 4), "rank_blocks");
    json_int_t total = 0;
    for (size_t k = 0; k < 3; k++) {
      total += json_integer_value(json_array_get(blocks, k));
      ck_assert_int_eq(json_integer_value(json_array_get(blocks, k)),
                       json_integer_value(json_array_get(twin, k)));
    }
    ck_assert_int_eq(total, 7 * 7);
    json_t *steps = json_object_get(row, "step_s");
    ck_assert_int_eq(json_array_size(steps), 7); /* ceil(200 / 32) */
    ck_assert_int_eq(json_array_size(json_object_get(row, "step_update_s")), 7);
    for (size_t k = 0; k < 7; k++)
      ck_assert(json_real_value(json_array_get(steps, k)) > 0);
    check_phases(row, 3);
  }
  /* Process scaling with ranks 1 and 2 one node: a 1 x 3 grid, the same
   * share for every process (7 block columns: 3, 2, 2). */
  json_t *ps = json_object_get(json_array_get(rows, 3), "rank_blocks");
  ck_assert_int_eq(json_integer_value(json_array_get(ps, 0)), 14);
  ck_assert_int_eq(json_integer_value(json_array_get(ps, 1)), 21);
  ck_assert_int_eq(json_integer_value(json_array_get(ps, 2)), 14);
  /* ... each process in its own node column, the two-process node's
   * first (Algorithm 1): rank 1 (3 block columns) leftmost, rank 0 last. */
  json_t *pc = json_object_get(json_array_get(rows, 3), "rank_column");
  const json_int_t at[] = {2, 0, 1};
  for (size_t i = 0; i < 3; i++)
    ck_assert_int_eq(json_integer_value(json_array_get(pc, i)), at[i]);
  json_decref(j);
  tool_run_free(&r);
}
END_TEST

/* The factorizations' options with the product, and a --node-ranks that
 * does not count the job's ranks: one line, status 2. */
START_TEST(inpa_refuses_misplaced_factorization_options) {
  char *gemm[] = {inpa,      "--platform", DATA "sim%r.json",
                  "--split", "fixed",      NULL};
  char *count[] = {inpa,
                   "--op",
                   "getrf",
                   "--platform",
                   DATA "sim%r.json",
                   "--algo",
                   "process-scaling",
                   "--node-ranks",
                   "2,2",
                   NULL};
  tool_run_t r;
  job(2, &r, _i == 0 ? gemm : count);
  ck_assert_msg(r.exited && r.status == 2, "status %d: %s", r.status, r.err);
  ck_assert_msg(strstr(r.err, _i == 0
                                  ? "are the factorizations'"
                                  : "counts 4 ranks; the job has 2") != NULL,
                "%s", r.err);
  /* One line from rank 0 (mpirun adds its own about the exit status). */
  const char *first = strstr(r.err, "mlsba-inpa: ");
  ck_assert_msg(first && !strstr(first + 1, "mlsba-inpa: "), "%s", r.err);
  tool_run_free(&r);
}
END_TEST

/* --skip-compute outside SMPI (nothing would take the numbers' time):
 * every rank stops with the library's one line, status 1; with the
 * product (--op gemm) it is a usage error, status 2. */
START_TEST(inpa_skips_the_numbers_only_under_smpi) {
  char *op = _i ? "gemm" : "getrf";
  char *args[] = {
      inpa,  "--op",    op,   "--platform", DATA "sim%r.json", "--size",
      "200", "--block", "32", "--algo",     "homogeneous",     "--skip-compute",
      NULL};
  tool_run_t r;
  job(2, &r, args);
  ck_assert_msg(r.exited && r.status == (_i ? 2 : 1), "status %d: %s", r.status,
                r.err);
  ck_assert_msg(strstr(r.err, _i ? "is for the factorizations"
                                 : "skip_compute is only for SimGrid's SMPI") !=
                    NULL,
                "%s", r.err);
  tool_run_free(&r);
}
END_TEST

#ifdef MLSBA_INPA_SMPI_BIN
/* args on np simulated ranks (smpi.xml): exit status 0 and a JSON
 * report that says verified; the report (the caller frees it). */
static json_t *smpi_verified(const char *np, char **args) {
  return run_smpi_verified(timeout, "240", MLSBA_SMPIRUN, np, DATA "smpi.xml",
                           DATA "smpi.hosts", args);
}

/* mlsba-inpa-smpi --op getrf|potrf on 9 and 16 simulated ranks (SimGrid,
 * the cores compute): the layout from INPA's node models, verified.
 * Case 4: Cholesky on 12 in the homogeneous layout, 3 x 4: a node
 * column's block columns (every fourth) have their diagonal blocks' rows
 * at each of its three ranks in turn, so the chains that forward them
 * down the node column start at every rank, and without the ring cut at
 * its wrap (factor_deliver.c's cut_rings) every rank's forward waited
 * for the one before it round the ring: SimGrid stopped the job as
 * deadlocked at the first step. */
START_TEST(smpi_ranks_factorize_and_verify) {
  char *np = _i < 2 ? "9" : _i < 4 ? "16" : "12";
  char *op = _i % 2 || _i == 4 ? "potrf" : "getrf";
  const char *layout = _i == 4 ? "homogeneous" : "fpm";
  char *args[] = {MLSBA_INPA_SMPI_BIN,
                  "--op",
                  op,
                  "--platform",
                  DATA "sim1.json",
                  "--size",
                  "400",
                  "--block",
                  "16",
                  "--json",
                  "-",
                  _i == 4 ? "--algo" : NULL,
                  "homogeneous",
                  NULL};
  /* 12 and 16 ranks: every message in pieces
   * (messages_in_pieces_equal_lapack) */
  if (_i >= 2)
    setenv("MLSBA_MPI_PIECE_BYTES", "256", 1);
  json_t *j = smpi_verified(np, args);
  unsetenv("MLSBA_MPI_PIECE_BYTES");
  ck_assert_str_eq(json_string_value(json_object_get(j, "layout")), layout);
  ck_assert_int_eq(json_array_size(json_object_get(j, "rank_blocks")),
                   (size_t)atoi(np));
  json_decref(j);
}
END_TEST

/* LU on 16 simulated ranks in ScaLAPACK's 4 x 4 grid at N = 2048, b =
 * 128: U's block rows (512 KiB on the first steps) go down the node
 * columns of 4 ranks as a pipeline of pieces, each rank updating a
 * piece's columns while the next comes (factor_lu.c's chain_update):
 * the factors computed that way verify. MLSBA_MPI_GATHER_ROWS 1024: the
 * first half's panels take the pivot search across their node column's
 * 4 ranks, the second half's are gathered onto one rank and factored
 * there (factor_panel.c), so both ways and the switch between them are
 * in the factors checked. */
START_TEST(smpi_lu_pipelines_u_and_verifies) {
  char *args[] = {MLSBA_INPA_SMPI_BIN,
                  "--op",
                  "getrf",
                  "--algo",
                  "homogeneous",
                  "--platform",
                  DATA "sim1.json",
                  "--size",
                  "2048",
                  "--block",
                  "128",
                  "--json",
                  "-",
                  NULL};
  setenv("MLSBA_MPI_GATHER_ROWS", "1024", 1);
  json_t *j = smpi_verified("16", args);
  unsetenv("MLSBA_MPI_GATHER_ROWS");
  ck_assert_int_eq(json_integer_value(json_object_get(j, "info")), 0);
  json_decref(j);
}
END_TEST
#endif

static Suite *factor_suite(void) {
  Suite *s = suite_create("mpi_factor");
  TCase *tc = tcase_create("ranks");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, lu_equals_lapack_homogeneous, 0, 4);
  tcase_add_loop_test(tc, lu_equals_lapack_fpm, 1, 4);
  tcase_add_test(tc, lu_on_node_columns_of_3_equals_lapack);
  tcase_add_loop_test(tc, cholesky_equals_lapack_homogeneous, 0, 4);
  tcase_add_loop_test(tc, cholesky_equals_lapack_fpm, 1, 4);
  tcase_add_test(tc, cholesky_forwarded_rows_equal_lapack);
  tcase_add_loop_test(tc, messages_in_pieces_equal_lapack, 0, 3);
  tcase_add_loop_test(tc, lu_equals_lapack_process_scaling, 1, 4);
  tcase_add_loop_test(tc, cholesky_equals_lapack_process_scaling, 2, 4);
  tcase_add_test(tc, process_counts_follow_eqs_1_2);
  tcase_add_loop_test(tc, a_bad_argument_on_one_rank_fails_every_rank, 0, 3);
  tcase_add_loop_test(tc, a_scalapack_matrix_moves_in_and_back, 0, 4);
  tcase_add_loop_test(tc, inpa_factorizes_and_verifies, 0, 2);
  tcase_add_loop_test(tc, inpa_keeps_ranks_sharing_a_core_apart, 0, 2);
  tcase_add_test(tc, inpa_refuses_the_products_options_with_a_factorization);
  tcase_add_loop_test(tc, inpa_compares_every_layout, 0, 2);
  tcase_add_loop_test(tc, inpa_refuses_misplaced_factorization_options, 0, 2);
  tcase_add_loop_test(tc, inpa_skips_the_numbers_only_under_smpi, 0, 2);
#ifdef MLSBA_INPA_SMPI_BIN
  tcase_add_loop_test(tc, smpi_ranks_factorize_and_verify, 0, 5);
  tcase_add_test(tc, smpi_lu_pipelines_u_and_verifies);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(factor_suite()); }
