/* LU and Cholesky across ranks (mlsba_mpi_getrf, _potrf, _getrs, _potrs on
 * mlsba_mpi_factor_matrix()'s layouts), under mpirun, each job bounded by
 * a timeout so that a hang fails its test (factor_ranks does the work and
 * prints one line a case):
 *  - on 1 to 4 ranks, homogeneous and model-drawn (fpm) layouts: odd N,
 *    N below the block, N not a multiple of it, more ranks than block
 *    columns, M x N both ways: the factors gathered on rank 0 equal
 *    LAPACK's (ipiv identical, scaled residual < 16), the solves' scaled
 *    residuals (HPL's) < 16, a singular and a non-positive-definite matrix
 *    give LAPACK's info on every rank, Cholesky leaves the upper triangle
 *    as it was;
 *  - a bad argument on one rank fails every rank with that rank's message;
 *  - a ScaLAPACK descriptor's matrix moved in, factorized and moved back. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/run_suite.h"
#include "support/run_tool.h"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT,
            ranks_bin[] = MLSBA_FACTOR_RANKS_BIN;

/* argv (NULL-terminated) on np oversubscribed ranks, killed after 240 s. */
static void run_ranks(int np, tool_run_t *r, char *const *args) {
  char npbuf[16];
  snprintf(npbuf, sizeof npbuf, "%d", np);
  char *argv[40] = {timeout,
                    "-k",
                    "5",
                    "240",
                    mpirun,
                    "-np",
                    npbuf,
                    "--oversubscribe",
                    "--bind-to",
                    "none",
                    "--mca",
                    "btl",
                    "self,vader",
                    "--mca",
                    "mpi_yield_when_idle",
                    "1"};
  size_t n = 16;
  for (; *args && n + 1 < 40; args++)
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
  setenv("OMP_NUM_THREADS", "1", 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  run_tool(argv, r);
}

/* Exit status 0, `lines` lines, each starting "ok ". */
static void check_all_ok(const tool_run_t *r, size_t lines) {
  ck_assert_msg(r->exited && r->status == 0, "status %d: %s%s", r->status,
                r->out, r->err);
  ck_assert_msg(strstr(r->out, "WRONG") == NULL, "%s", r->out);
  ck_assert_msg(count_lines(r->out) == lines, "%zu lines, not %zu: %s",
                count_lines(r->out), lines, r->out);
  for (const char *l = r->out; l && *l;) {
    ck_assert_msg(strncmp(l, "ok ", 3) == 0, "%s", r->out);
    const char *nl = strchr(l, '\n');
    if (nl == NULL)
      break;
    l = nl + 1;
  }
}

static void run_case(int np, char *what, char *arg, size_t lines) {
  char *args[] = {ranks_bin, what, arg, NULL};
  tool_run_t r;
  run_ranks(np, &r, args);
  check_all_ok(&r, lines);
  tool_run_free(&r);
}

START_TEST(lu_equals_lapack_homogeneous) {
  run_case(_i + 1, "lu", "homogeneous", 13);
}
END_TEST

START_TEST(lu_equals_lapack_fpm) { run_case(_i + 1, "lu", "fpm", 13); }
END_TEST

START_TEST(cholesky_equals_lapack_homogeneous) {
  run_case(_i + 1, "chol", "homogeneous", 8);
}
END_TEST

START_TEST(cholesky_equals_lapack_fpm) { run_case(_i + 1, "chol", "fpm", 8); }
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
  run_ranks(_i + 1, &r, args);
  check_all_ok(&r, 1);
  tool_run_free(&r);
}
END_TEST

static Suite *factor_suite(void) {
  Suite *s = suite_create("mpi_factor");
  TCase *tc = tcase_create("ranks");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, lu_equals_lapack_homogeneous, 0, 4);
  tcase_add_loop_test(tc, lu_equals_lapack_fpm, 1, 4);
  tcase_add_loop_test(tc, cholesky_equals_lapack_homogeneous, 0, 4);
  tcase_add_loop_test(tc, cholesky_equals_lapack_fpm, 1, 4);
  tcase_add_loop_test(tc, a_bad_argument_on_one_rank_fails_every_rank, 0, 3);
  tcase_add_loop_test(tc, a_scalapack_matrix_moves_in_and_back, 0, 4);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(factor_suite()); }
