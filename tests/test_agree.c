/* Agreement across ranks (lib/mpi/agree.c): every collective entry of
 * <mlsba/mpi.h> agrees on its arguments before anything else, and on the
 * values every rank must pass alike, so that one rank's NULL or other
 * value stops every rank with one message naming that rank and both
 * values as the user wrote them, instead of leaving the others waiting
 * for ever (each job runs under a timeout: a hang fails its test). The
 * same on 1, 2 and 4 ranks, where the last rank is the odd one; with one
 * rank, a NULL is still refused and another value is no disagreement.
 * Then the tools: mlsba-inpa given --load, --width or --iterations on one
 * rank only, mlsba-master-worker given another split.
 *
 * The ranks are this program itself (test_agree --ranks CASE PLATFORM),
 * which also drives agree.c white-box (compiled in): how a double apart beyond
 * %g's digits is spelled, and a head's results shared by name. */
#include <check.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "mlsba/mpi.h"
#include "mpi/internal.h" /* white-box: agree.c, compiled in */
#include "support/run_ranks.h"
#include "support/run_suite.h"
#include "support/run_tool.h"

#define DATA MLSBA_SOURCE_DIR "/tests/data/mpi/"

static char mpirun[] = MLSBA_MPIRUN, timeout[] = MLSBA_TIMEOUT;
static char inpa[] = MLSBA_INPA_BIN, master_worker[] = MLSBA_MW_BIN;

/* ---- the ranks ------------------------------------------------------- */

/* A fill that the product never calls on simulated nodes. */
static int fill(void *user, int which, int64_t row, int64_t col, int64_t rows,
                int64_t cols, void *dst, int64_t ld) {
  (void)user, (void)which, (void)row, (void)col, (void)rows, (void)cols;
  (void)dst, (void)ld;
  return 0;
}

static int no_units(void *user, int64_t first, int64_t count) {
  (void)user, (void)first, (void)count;
  return 0;
}

/* The product of 16 x 16 blocks on simulated nodes; `odd` is this rank's
 * part in the case. */
static int multiply(const char *which, const char *platform, int odd) {
  mlsba_mpi_multiply_opts_t o;
  mlsba_mpi_multiply_opts_init(&o);
  o.platform = platform;
  o.n = 1024;
  o.block = 64;
  if (odd && !strcmp(which, "fill"))
    o.fill = fill;
  mlsba_mpi_result_t r;
  int err = mlsba_mpi_multiply(MPI_COMM_WORLD,
                               odd && !strcmp(which, "opts") ? NULL : &o,
                               odd && !strcmp(which, "result") ? NULL : &r);
  if (!err)
    mlsba_mpi_result_free(&r);
  return err;
}

/* 1000 units of an application's load on simulated ranks. */
static int divide(const char *which, const char *platform, int odd) {
  mlsba_load_t *load = NULL;
  mlsba_load_create("agree-test", 1000, &load);
  mlsba_load_set_cpu(load, no_units, NULL);
  mlsba_load_set_shape(load, odd && !strcmp(which, "shape") ? "x=2" : "x=1");
  mlsba_mpi_divide_opts_t o;
  mlsba_mpi_divide_opts_init(&o);
  o.platform = platform;
  o.eps = 0.1;
  const mlsba_mpi_divide_opts_t *opts =
      odd && !strcmp(which, "opts") ? NULL : &o; /* NULL: the defaults */
  int err;
  if (!strcmp(which, "divider")) {
    mlsba_mpi_divider_t *d = NULL;
    err = mlsba_mpi_divider_create(MPI_COMM_WORLD, load, opts, odd ? NULL : &d);
    mlsba_mpi_divider_destroy(d);
  } else {
    mlsba_mpi_divide_result_t r;
    err = mlsba_mpi_divide(MPI_COMM_WORLD, load, opts,
                           odd && !strcmp(which, "result") ? NULL : &r);
    if (!err)
      mlsba_mpi_divide_result_free(&r);
  }
  mlsba_load_destroy(load);
  return err;
}

/* Seed 001's master and workers, the odd rank splitting another way. */
static int master_worker_split(const char *platform, int odd) {
  mlsba_mpi_master_worker_opts_t o;
  mlsba_mpi_master_worker_opts_init(&o);
  o.platform = platform;
  o.n = o.m = 20;
  o.k = 40;
  o.links = MLSBA_MPI_MW_LINKS_PLATFORM;
  o.split = odd ? MLSBA_MPI_MW_DLT : MLSBA_MPI_MW_FPM;
  mlsba_mpi_mw_result_t r;
  int err = mlsba_mpi_master_worker(MPI_COMM_WORLD, &o, &r);
  if (!err)
    mlsba_mpi_mw_result_free(&r);
  return err;
}

/* White-box: the odd rank's eps is rank 0's but for the last bits, which
 * %g does not show; the message spells both with every digit. */
static int values_apart_beyond_g(int odd) {
  double eps = odd ? 0.1 + 1e-12 : 0.1;
  unsigned iter = 20;
  const mlsba__mpi_value_t v[] = {MLSBA__MPI_NUMBER("option max_iter", iter),
                                  MLSBA__MPI_NUMBER("option eps", eps)};
  return mlsba__mpi_agree_values(MPI_COMM_WORLD, v, 2, "they must agree");
}

/* White-box: rank 0's results of every kind reach every rank. */
static int share(int rank) {
  int64_t big = rank == 0 ? -((int64_t)1 << 40) : 0;
  unsigned it = rank == 0 ? 7 : 0;
  short small = rank == 0 ? -3 : 0;
  double x = rank == 0 ? 0.1 : 0;
  mlsba_stop_reason_t stop = rank == 0 ? MLSBA_STOP_CYCLE : MLSBA_STOP_BALANCED;
  const mlsba__mpi_value_t v[] = {
      MLSBA__MPI_NUMBER("big", big), MLSBA__MPI_NUMBER("it", it),
      MLSBA__MPI_NUMBER("small", small), MLSBA__MPI_NUMBER("x", x),
      MLSBA__MPI_ENUM_VALUE("stop", stop, NULL)};
  mlsba__mpi_share_values(MPI_COMM_WORLD, 0, v, 5);
  int right = big == -((int64_t)1 << 40) && it == 7 && small == -3 &&
              x == 0.1 && stop == MLSBA_STOP_CYCLE;
  return right ? 0
               : mlsba__fail(MLSBA_EINVAL, "rank %d got other values", rank);
}

/* One rank's part: the last rank is the odd one. Rank 0 prints "ok" or
 * "error: <message>"; every rank exits 1 on an error. */
static int ranks_main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *c = argv[2], *platform = argc > 3 ? argv[3] : "";
  int odd = rank == size - 1, err;
  const char *public_error = NULL;
  if (!strncmp(c, "multiply-", 9))
    err = multiply(c + 9, platform, odd);
  else if (!strncmp(c, "divide-", 7))
    err = divide(c + 7, platform, odd);
  else if (!strcmp(c, "master-worker"))
    err = master_worker_split(platform, odd);
  else if (!strcmp(c, "values"))
    err = values_apart_beyond_g(odd), public_error = mlsba_last_error();
  else
    err = share(rank), public_error = mlsba_last_error();
  if (rank == 0 && err)
    printf("error: %s\n", public_error ? public_error : mlsba_mpi_last_error());
  else if (rank == 0)
    printf("ok\n");
  fflush(stdout);
  MPI_Finalize();
  return err ? 1 : 0;
}

/* ---- the jobs -------------------------------------------------------- */

static const int rank_counts[] = {1, 2, 4};
/* Each job's bound: a hang is killed and fails as status 124 (or 137). */
static char job_limit_s[] = "60";

/* An MPMD job of np ranks: 0 .. np - 2 run `common`, the last `last`
 * (NULL-terminated lists); with np = 1 the one rank runs `last`. */
static void run_job(int np, char *const *common, char *const *last,
                    tool_run_t *r) {
  char *argv[96], npbuf[16];
  size_t n = mpi_job_start(argv, timeout, job_limit_s, mpirun);
  snprintf(npbuf, sizeof npbuf, "%d", np - 1);
  if (np > 1) {
    argv[n++] = "-np";
    argv[n++] = npbuf;
    for (size_t i = 0; common[i] && n < 60; i++)
      argv[n++] = common[i];
    argv[n++] = ":";
  }
  argv[n++] = "-np";
  argv[n++] = "1";
  for (size_t i = 0; last[i] && n + 1 < 96; i++)
    argv[n++] = last[i];
  argv[n] = NULL;
  run_tool(argv, r);
}

/* Every rank of this program on np ranks, in one case. */
static void run_self(int np, const char *c, const char *platform,
                     tool_run_t *r) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ck_assert(len > 0);
  self[len] = '\0';
  char *args[] = {self, "--ranks", (char *)c, (char *)platform, NULL};
  run_job(np, args, args, r);
}

/* The job ended on every rank with a failure, not a timeout, and says
 * `says` once in the lines starting with `prefix` of its stream. */
static void expect_one_line(const tool_run_t *r, const char *text,
                            const char *says, const char *prefix) {
  ck_assert_msg(
      r->exited && r->status != 0 && r->status != 124 && r->status != 137,
      "status %d (124, 137: a hang): %.400s%.800s", r->status, r->out, r->err);
  char *t = unwrap_lines(strdup(text));
  ck_assert_msg(strstr(t, says) != NULL, "no '%s' in: %s", says, t);
  int ours = 0;
  for (const char *p = t; (p = strstr(p, prefix)) != NULL; p++)
    ours++;
  ck_assert_msg(ours == 1, "not one line: %s", t);
  free(t);
}

static void expect_ok(const tool_run_t *r) {
  ck_assert_msg(r->exited && r->status == 0, "status %d: %.400s%.800s",
                r->status, r->out, r->err);
}

/* What a case expects: the rank (the last) and its words, or NULL where
 * a single rank has nothing to disagree with and runs. */
static const struct {
  const char *name, *platform, *says, *alone;
} cases[] = {
    {"multiply-result", DATA "sim%r.json", "mlsba_mpi_multiply: result is NULL",
     "mlsba_mpi_multiply: result is NULL"},
    {"multiply-opts", DATA "sim%r.json", "mlsba_mpi_multiply: opts is NULL",
     "mlsba_mpi_multiply: opts is NULL"},
    {"multiply-fill", DATA "sim%r.json",
     "option fill is set here, NULL on rank 0: every rank must pass the same "
     "options",
     NULL},
    {"divide-result", DATA "sim%r.json", "mlsba_mpi_divide: result is NULL",
     "mlsba_mpi_divide: result is NULL"},
    {"divide-divider", DATA "sim%r.json",
     "mlsba_mpi_divider_create: divider is NULL",
     "mlsba_mpi_divider_create: divider is NULL"},
    {"divide-opts", DATA "sim%r.json",
     "option eps is 0.05 here, 0.1 on rank 0: every rank passes the same load "
     "and options",
     NULL},
    {"divide-shape", DATA "sim%r.json",
     "the load's shape is 'x=2' here, 'x=1' on rank 0", NULL},
    {"master-worker", DATA "mw/worker%r.json",
     "option split is dlt here, fpm on rank 0",
     "master-worker needs a master and at least one worker"},
};

START_TEST(one_ranks_argument_stops_every_rank) {
  int k = _i / 3, np = rank_counts[_i % 3];
  tool_run_t r;
  run_self(np, cases[k].name, cases[k].platform, &r);
  const char *says = np == 1 ? cases[k].alone : cases[k].says;
  if (says == NULL) {
    expect_ok(&r);
  } else {
    char want[256];
    snprintf(want, sizeof want, "error: rank %d: %s", np - 1, says);
    expect_one_line(&r, r.out, want, "error: ");
  }
  tool_run_free(&r);
}
END_TEST

START_TEST(doubles_apart_beyond_g_are_spelled_whole) {
  tool_run_t r;
  run_self(2, "values", "", &r);
  expect_one_line(&r, r.out,
                  "error: rank 1: option eps is 0.10000000000100001 here, "
                  "0.10000000000000001 on rank 0: they must agree",
                  "error: ");
  tool_run_free(&r);
}
END_TEST

START_TEST(the_heads_results_reach_every_rank) {
  tool_run_t r;
  run_self(rank_counts[_i], "share", "", &r);
  expect_ok(&r);
  ck_assert_str_eq(r.out, "ok\n");
  tool_run_free(&r);
}
END_TEST

/* ---- the tools --------------------------------------------------------- */

#define LOAD_ARGS                                                              \
  "--load", "mandelbrot", "--platform",                                        \
      MLSBA_SOURCE_DIR "/models/sim/inpa-node%r.json", "--size", "256",        \
      "--quiet"

/* mlsba-inpa with --load on the last rank only took two paths whose
 * messages do not match (an MPI_ERR_TRUNCATE abort); another --width or
 * --iterations made another image (the load's shape). */
static const struct {
  char *last[16];
  const char *says;
} inpa_cases[] = {
    {{LOAD_ARGS, NULL},
     "was given --load, rank 0 was not: every rank must be given "
     "the same options"},
    {{LOAD_ARGS, "--width", "100", NULL},
     "the load's shape is 'width=100 iter=256"},
    {{LOAD_ARGS, "--iterations", "99", NULL},
     "the load's shape is 'width=256 iter=99"},
    {{LOAD_ARGS, "--size", "300", NULL},
     "the load's unit count is 300 here, 256 on rank 0"},
};

START_TEST(mlsba_inpa_options_on_one_rank_stop_every_rank) {
  int k = _i / 2, np = _i % 2 ? 4 : 2;
  char *common_load[] = {inpa, LOAD_ARGS, NULL};
  char *common_product[] = {inpa,     "--platform", DATA "sim%r.json",
                            "--size", "1024",       "--block",
                            "64",     "--quiet",    NULL};
  char *last[20] = {inpa};
  for (size_t i = 0; inpa_cases[k].last[i]; i++)
    last[i + 1] = inpa_cases[k].last[i];
  tool_run_t r;
  run_job(np, k == 0 ? common_product : common_load, last, &r);
  char want[160];
  snprintf(want, sizeof want, "rank %d: %s", np - 1, inpa_cases[k].says);
  expect_one_line(&r, r.err, want, "mlsba-inpa: ");
  tool_run_free(&r);
}
END_TEST

START_TEST(mlsba_master_worker_names_the_split) {
  char *common[] = {master_worker, "--platform", DATA "mw/worker%r.json",
                    "-n",          "20",         "-m",
                    "20",          "-k",         "40",
                    "--links",     "platform",   "--split",
                    "fpm",         "--quiet",    NULL};
  char *last[sizeof common / sizeof *common];
  memcpy(last, common, sizeof common);
  last[12] = "fpm-comm";
  tool_run_t r;
  run_job(3, common, last, &r);
  expect_one_line(&r, r.err,
                  "rank 2: option split is fpm-comm here, fpm on rank 0",
                  "mlsba-master-worker: ");
  tool_run_free(&r);
}
END_TEST

static Suite *agree_suite(void) {
  Suite *s = suite_create("agree");
  TCase *tc = tcase_create("entries");
  /* Oversubscribed jobs on a busy machine, each bounded by its own
   * timeout; a hang shows as that job's status. */
  tcase_set_timeout(tc, 120);
  int ncases = (int)(sizeof cases / sizeof *cases);
  tcase_add_loop_test(tc, one_ranks_argument_stops_every_rank, 0, 3 * ncases);
  tcase_add_test(tc, doubles_apart_beyond_g_are_spelled_whole);
  tcase_add_loop_test(tc, the_heads_results_reach_every_rank, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("tools");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, mlsba_inpa_options_on_one_rank_stop_every_rank, 0,
                      2 * (int)(sizeof inpa_cases / sizeof *inpa_cases));
  tcase_add_test(tc, mlsba_master_worker_names_the_split);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "--ranks"))
    return ranks_main(argc, argv);
  mpi_job_environment();
  setenv("MLSBA_NOPENCL", "0", 1); /* cores only: no pocl start-up */
  return run_suite(agree_suite());
}
