/* mlsba-master-worker: seed 001's application across MPI ranks, C = A x B
 * with rank 0 a master that does not compute and every other rank a
 * worker node, K's columns split by compute-only FPM, seed 001's DLT or
 * FPM plus communication (mlsba_mpi_master_worker()).
 *
 *   mpirun -np Q mlsba-master-worker [--platform auto|NAME|FILE]
 *                                    [-n N] [-m M] [-k K] [...]
 *
 * Every rank parses the same command line; rank 0 prints the table and the
 * JSON report. Bad input, or an error on any rank, gives one line on rank
 * 0's stderr and a non-zero exit on every rank. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/output.h"
#include "mlsba-master-worker_help.h" /* tools/help/mlsba-master-worker.txt */
#include "mlsba/mpi.h"
#include "mpi_cli.h"

static const char *prog = "mlsba-master-worker";

typedef struct {
  mlsba_mpi_mw_opts_t o;
  const char *json;
  int quiet;
} args_t;

static int parse_split(const char *v, void *to, char *why, size_t size) {
  (void)why, (void)size;
  return mlsba_mpi_mw_split_from_name(v, to) != 0;
}

static const char *const links[] = {"measure", "platform", NULL};
static const char *const precisions[] = {"single", "double", NULL};

/* What tools/help/mlsba-master-worker.txt lists. */
static const opt_t options[] = {
    {"--platform", OPT_TEXT, OPT_AT(args_t, o.platform), .nonempty = 1},
    {"-n", OPT_UNITS, OPT_AT(args_t, o.n), .lo = 1, .hi = INT64_C(1) << 40},
    {"-m", OPT_UNITS, OPT_AT(args_t, o.m), .lo = 1, .hi = INT64_C(1) << 40},
    {"-k", OPT_UNITS, OPT_AT(args_t, o.k), .lo = 1, .hi = INT64_C(1) << 40},
    {"--split", OPT_CUSTOM, OPT_AT(args_t, o.split), .parse = parse_split},
    {"--links", OPT_CHOICE, OPT_AT(args_t, o.links), .choices = links},
    {"--precision", OPT_CHOICE, OPT_AT(args_t, o.precision),
     .choices = precisions},
    {"--seed", OPT_UNITS, OPT_AT(args_t, o.seed), .hi = INT64_MAX},
    {"--json", OPT_TEXT, OPT_AT(args_t, json), .nonempty = 1},
    {"--quiet", OPT_FLAG, OPT_AT(args_t, quiet)},
};

/* The parser's outcomes are the ones the ranks agree on (mpi_cli.h). */
_Static_assert((int)OPTS_RUN == RUN && (int)OPTS_HELP == HELP &&
                   (int)OPTS_VERSION == VERSION && (int)OPTS_USAGE == USAGE,
               "one set of outcomes");

/* This rank's command line: RUN, HELP, VERSION, or USAGE with the reason
 * in why. Nothing is printed: the ranks first agree on the outcome. */
static int parse_args(int argc, char **argv, args_t *A, char *why) {
  mlsba_mpi_mw_opts_init(&A->o);
  const opts_table_t table = OPTS_TABLE(options);
  return opts_parse(&table, argc, argv, A, why, WHY_SIZE);
}

static json_t *verified_json(int v) {
  return v < 0 ? json_null() : json_boolean(v);
}

static json_t *report(const args_t *A, const mlsba_mpi_mw_result_t *r) {
  json_t *ranks = json_array();
  for (int w = 0; w < r->workers; w++) {
    const mlsba_mpi_mw_worker_t *x = &r->worker[w];
    json_t *dev = json_array();
    for (size_t d = 0; d < x->ndevices; d++)
      json_array_append_new(dev, json_pack("{s:s, s:I, s:f}", "name",
                                           x->devices[d].full_name, "load",
                                           (json_int_t)x->devices[d].load,
                                           "time", x->devices[d].time));
    json_array_append_new(
        ranks,
        json_pack("{s:i, s:I, s:I, s:{s:f, s:f}, s:f, s:f, s:f, s:f, s:f, "
                  "s:o}",
                  "rank", x->rank, "col0", (json_int_t)x->col0, "columns",
                  (json_int_t)x->columns, "link", "latency", x->link.latency,
                  "bandwidth", x->link.bandwidth, "a_arrived", x->a_arrived,
                  "sent", x->sent, "arrived", x->arrived, "finished",
                  x->finished, "returned", x->returned, "devices", dev));
  }
  /* JSON holds no NaN or Inf: such an error is null (verified false). */
  json_t *err =
      isfinite(r->max_rel_error) ? json_real(r->max_rel_error) : json_null();
  json_t *j = json_pack(
      "{s:s, s:s, s:i, s:I, s:I, s:I, s:s, s:f, s:f, s:o, s:o, s:o, s:b, "
      "s:o}",
      "mode", "master-worker", "split", mlsba_mpi_mw_split_name(r->split),
      "workers", r->workers, "n", (json_int_t)A->o.n, "m", (json_int_t)A->o.m,
      "k", (json_int_t)A->o.k, "links",
      A->o.links == MLSBA_MPI_MW_LINKS_PLATFORM ? "platform" : "measure",
      "makespan_s", r->makespan_s, "predicted_s", r->predicted_s, "dlt_model_s",
      isfinite(r->dlt_model_s) ? json_real(r->dlt_model_s) : json_null(),
      "verified", verified_json(r->verified), "max_rel_error", err, "simulated",
      r->simulated, "ranks", ranks);
  return j;
}

static void print_table(const mlsba_mpi_mw_result_t *r) {
  printf("%-9s %4s %8s %10s %9s %9s %9s %9s  %s\n", "split", "rank", "columns",
         "link Mb/s", "sent", "arrived", "finished", "returned", "devices");
  for (int w = 0; w < r->workers; w++) {
    const mlsba_mpi_mw_worker_t *x = &r->worker[w];
    printf("%-9s %4d %8lld %10.1f %9.3f %9.3f %9.3f %9.3f ",
           mlsba_mpi_mw_split_name(r->split), x->rank, (long long)x->columns,
           x->link.bandwidth * 8 / 1e6, x->sent, x->arrived, x->finished,
           x->returned);
    for (size_t d = 0; d < x->ndevices; d++)
      printf(" %s:%lld", x->devices[d].name, (long long)x->devices[d].load);
    putchar('\n');
  }
  printf("makespan %.4f s, predicted %.4f s, DLT model %.4f s, %s\n",
         r->makespan_s, r->predicted_s, r->dlt_model_s,
         r->verified < 0    ? "not verified (simulated)"
         : r->verified == 1 ? "verified"
                            : "WRONG");
}

static int write_outputs(const args_t *A, const mlsba_mpi_mw_result_t *r) {
  int status = 0;
  if (!A->quiet && !(A->json && !strcmp(A->json, "-")))
    print_table(r);
  if (A->json) {
    json_t *j = report(A, r);
    status = output_json(prog, "--json", A->json, j,
                         JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                             JSON_REAL_PRECISION(9));
    json_decref(j);
  }
  return cli_finish_stdout(prog) || status;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  args_t A;
  memset(&A, 0, sizeof A);
  char why[WHY_SIZE] = "";
  int outcome = parse_args(argc, argv, &A, why);
  if (outcome == RUN && rank == 0 && A.json)
    outcome = mpi_cli_check_json(A.json, why);
  outcome = mpi_cli_agree(MPI_COMM_WORLD, outcome, why, prog);
  if (outcome != RUN) {
    int status =
        mpi_cli_finish(MPI_COMM_WORLD, outcome, prog, mlsba_master_worker_help);
    MPI_Finalize();
    return status;
  }
  char platform[4096];
  if (mpi_cli_platform(MPI_COMM_WORLD, A.o.platform, platform,
                       sizeof platform) == 0)
    A.o.platform = platform;
  mlsba_mpi_mw_result_t r;
  int err = mlsba_mpi_master_worker(MPI_COMM_WORLD, &A.o, &r);
  if (err) {
    if (rank == 0)
      fprintf(stderr, "%s: %s\n", prog, mlsba_mpi_last_error());
    MPI_Finalize();
    return 1;
  }
  int status = 0;
  if (rank == 0)
    status = write_outputs(&A, &r) || r.verified == 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mlsba_mpi_mw_result_free(&r);
  MPI_Finalize();
  return status;
}
