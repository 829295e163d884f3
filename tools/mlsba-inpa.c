/* mlsba-inpa: INPA across MPI ranks, then the heterogeneous 2-D blocked
 * product C = op(A) op(B) on every rank's devices, --repeat times.
 *
 *   mpirun -np Q mlsba-inpa [--platform auto|NAME|FILE] [--size N]
 *                           [--block B] [...]
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
#include "common/escape.h"
#include "common/options.h"
#include "common/output.h"
#include "common/text.h"
#include "inpa_factor.h"
#include "inpa_load.h"
#include "inpa_runs.h"
#include "mlsba-inpa_help.h" /* tools/help/mlsba-inpa.txt */
#include "mlsba/mpi.h"
#include "mpi_cli.h"

static const char *prog = "mlsba-inpa";

typedef struct {
  mlsba_mpi_opts_t o;
  const char *json;
  int quiet;
  int op;               /* --op: INPA_OP_GEMM (the product), _GETRF, _POTRF */
  int64_t repeat;       /* products with one balancing (--repeat, 1) */
  int transa, transb;   /* --transa, --transb: op(A), op(B) = A^T, B^T */
  int algo;             /* --algo: an mlsba_mpi_algo_t, or a FACTOR_* */
  inpa_factor_args_t f; /* --op getrf|potrf's own (inpa_factor.h) */
} args_t;

/* What a rank's command line asks for: what tools/help/mlsba-inpa.txt
 * lists (--load: tools/inpa_load.c). */

/* The product's algorithms, and the factorizations' layouts that are not
 * one of them: process-scaling and constant (INPA_ALGO_*). */
static int parse_algo(const char *v, void *to, char *why, size_t size) {
  (void)why, (void)size;
  mlsba_mpi_algo_t a;
  int *out = to;
  if (!strcmp(v, "process-scaling"))
    *out = INPA_ALGO_PROCESS_SCALING;
  else if (!strcmp(v, "constant"))
    *out = INPA_ALGO_CONSTANT;
  else if (mlsba_mpi_algo_from_name(v, &a) == 0)
    *out = (int)a;
  else
    return 1;
  return 0;
}

static int parse_comm_model(const char *v, void *to, char *why, size_t size) {
  (void)why, (void)size;
  return mlsba_mpi_comm_model_from_name(v, to) != 0;
}

static const char *const node_algos[] = {"mlsba", "idpa", NULL};
static const char *const precisions[] = {"single", "double", NULL};
static const char *const ops[] = {"gemm", "getrf", "potrf", NULL};
static const char *const splits[] = {"fpm", "fixed", NULL};

/* Sizes up to 2^40 pass here; the layer refuses those it cannot run,
 * with the reason. */
static const opt_t options[] = {
    {"--platform", OPT_TEXT, OPT_AT(args_t, o.platform), .nonempty = 1},
    {"--size", OPT_UNITS, OPT_AT(args_t, o.n), .lo = 1, .hi = INT64_C(1) << 40},
    /* C is m x n, the inner size k; -m and -k default to -n. */
    {"-m", OPT_UNITS, OPT_AT(args_t, o.m), .lo = 1, .hi = INT64_C(1) << 40},
    {"-n", OPT_UNITS, OPT_AT(args_t, o.n), .lo = 1, .hi = INT64_C(1) << 40},
    {"-k", OPT_UNITS, OPT_AT(args_t, o.k), .lo = 1, .hi = INT64_C(1) << 40},
    {"--transa", OPT_FLAG, OPT_AT(args_t, transa)},
    {"--transb", OPT_FLAG, OPT_AT(args_t, transb)},
    {"--repeat", OPT_UNITS, OPT_AT(args_t, repeat), .lo = 1, .hi = 100000},
    {"--block", OPT_UNITS, OPT_AT(args_t, o.block), .lo = 1,
     .hi = INT64_C(1) << 40},
    {"--algo", OPT_CUSTOM, OPT_AT(args_t, algo), .parse = parse_algo},
    {"--node-algo", OPT_CHOICE, OPT_AT(args_t, o.node_algorithm),
     .choices = node_algos},
    {"--eps", OPT_REAL, OPT_AT(args_t, o.eps), .max = 1, .below_max = 1},
    {"--max-iter", OPT_UNITS, OPT_AT(args_t, o.max_iter), .lo = 1, .hi = 10000},
    {"--precision", OPT_CHOICE, OPT_AT(args_t, o.precision),
     .choices = precisions},
    {"--json", OPT_TEXT, OPT_AT(args_t, json), .nonempty = 1},
    {"--comm-model", OPT_CUSTOM, OPT_AT(args_t, o.comm_model),
     .parse = parse_comm_model},
    {"--quiet", OPT_FLAG, OPT_AT(args_t, quiet)},
    {"--keep-shared", OPT_FLAG, OPT_AT(args_t, o.keep_shared)},
    {"--model-dir", OPT_TEXT, OPT_AT(args_t, o.model_dir), .nonempty = 1},
    {"--op", OPT_CHOICE, OPT_AT(args_t, op), .choices = ops},
    {"--split", OPT_CHOICE, OPT_AT(args_t, f.split), .choices = splits},
    {"--compare", OPT_FLAG, OPT_AT(args_t, f.compare)},
    {"--node-ranks", OPT_TEXT, OPT_AT(args_t, f.node_ranks), .nonempty = 1},
    {"--skip-compute", OPT_FLAG, OPT_AT(args_t, f.skip)},
    {"-m", OPT_UNITS, OPT_AT(args_t, o.m), .lo = 1, .hi = INT64_C(1) << 40},
    {"-n", OPT_UNITS, OPT_AT(args_t, o.n), .lo = 1, .hi = INT64_C(1) << 40},
    {"-k", OPT_UNITS, OPT_AT(args_t, o.k), .lo = 1, .hi = INT64_C(1) << 40},
    {"--repeat", OPT_UNITS, OPT_AT(args_t, repeat), .lo = 1, .hi = 100000},
    {"--transa", OPT_FLAG, OPT_AT(args_t, transa)},
    {"--transb", OPT_FLAG, OPT_AT(args_t, transb)},
};

/* The parser's outcomes are the ones the ranks agree on (mpi_cli.h). */
_Static_assert((int)OPTS_RUN == RUN && (int)OPTS_HELP == HELP &&
                   (int)OPTS_VERSION == VERSION && (int)OPTS_USAGE == USAGE,
               "one set of outcomes");

/* This rank's command line: RUN, HELP, VERSION, or USAGE with the reason
 * in why. Nothing is printed: the ranks first agree on the outcome. */
static int parse_args(int argc, char **argv, args_t *A, char *why) {
  mlsba_mpi_opts_init(&A->o);
  /* The defaults: a product every rank of a small job takes a share of
   * (16 x 16 blocks), as mlsba-bench's default size is 2048. */
  A->o.n = 2048;
  A->o.block = 0; /* --block's default below, by --op */
  A->repeat = 1;
  A->algo = (int)A->o.algorithm;
  const opts_table_t table = OPTS_TABLE(options);
  int outcome = opts_parse(&table, argc, argv, A, why, WHY_SIZE);
  A->f.algo = A->algo;
  if (A->algo < INPA_ALGO_PROCESS_SCALING)
    A->o.algorithm = (mlsba_mpi_algo_t)A->algo;
  /* The product's block is 128; the factorizations' grows with N and
   * shrinks with the ranks (mlsba_mpi_factor_block), as the library's
   * own default does. */
  if (A->o.block == 0) {
    int q = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &q);
    A->o.block =
        A->op == INPA_OP_GEMM ? 128 : mlsba_mpi_factor_block(A->o.n, A->o.n, q);
  }
  A->o.transa = A->transa ? 'T' : 'N';
  A->o.transb = A->transb ? 'T' : 'N';
  if (outcome == OPTS_RUN && A->o.platform == NULL)
    return mpi_cli_usage(why, "missing ", "--platform");
  /* The factorizations are of a square N x N matrix, once. */
  if (outcome == OPTS_RUN && A->op != INPA_OP_GEMM &&
      (A->o.m || A->o.k || A->transa || A->transb || A->repeat > 1))
    return mpi_cli_usage(why, ops[A->op],
                         ": -m, -k, --transa, --transb and --repeat are "
                         "the product's (--op gemm)");
  if (outcome == OPTS_RUN && A->op == INPA_OP_GEMM &&
      (A->algo >= INPA_ALGO_PROCESS_SCALING || A->f.split || A->f.compare ||
       A->f.node_ranks))
    return mpi_cli_usage(why, "--op gemm",
                         ": --algo process-scaling|constant, --split, "
                         "--compare and --node-ranks are the "
                         "factorizations' (--op getrf|potrf)");
  if (outcome == OPTS_RUN && A->op != INPA_OP_GEMM && A->o.model_dir)
    return mpi_cli_usage(why, "--model-dir", " is the product's (--op gemm)");
  if (outcome == OPTS_RUN && A->op == INPA_OP_GEMM && A->f.skip)
    return mpi_cli_usage(why, "--skip-compute",
                         " is for the factorizations (--op getrf|potrf)");
  return outcome;
}

static void print_table(const args_t *A, const inpa_runs_t *runs) {
  const mlsba_mpi_result_t *r = &runs->last;
  const mlsba_mpi_opts_t *o = &A->o;
  if (o->m == 0 && o->k == 0 && o->transa == 'N' && o->transb == 'N')
    printf("%s over %d ranks: N = %lld, block %lld, %s precision\n\n",
           mlsba_mpi_algo_name(o->algorithm), r->nodes, (long long)o->n,
           (long long)o->block,
           o->precision == MLSBA_PRECISION_DOUBLE ? "double" : "single");
  else
    printf("%s over %d ranks: C = %sA%s %sB%s, %lld x %lld x %lld, block "
           "%lld, %s precision\n\n",
           mlsba_mpi_algo_name(o->algorithm), r->nodes,
           o->transa == 'T' ? "T(" : "", o->transa == 'T' ? ")" : "",
           o->transb == 'T' ? "T(" : "", o->transb == 'T' ? ")" : "",
           (long long)(o->m ? o->m : o->n), (long long)o->n,
           (long long)(o->k ? o->k : o->n), (long long)o->block,
           o->precision == MLSBA_PRECISION_DOUBLE ? "double" : "single");
  printf("%5s %9s %13s %13s %10s %10s\n", "rank", "w", "m x n", "at row,col",
         "time s", "comm s");
  for (int i = 0; i < r->nodes; i++) {
    const mlsba_mpi_rank_t *k = &r->ranks[i];
    char mn[32], at[32];
    snprintf(mn, sizeof mn, "%lldx%lld", (long long)k->m, (long long)k->n);
    snprintf(at, sizeof at, "%lld,%lld", (long long)k->row, (long long)k->col);
    printf("%5d %9lld %13s %13s %10.4f %10.4f\n", i, (long long)k->w, mn, at,
           k->time, k->comm);
    for (size_t d = 0; d < k->ndevices; d++) {
      char name[256];
      escape_bytes(name, sizeof name, k->devices[d].full_name, 0);
      printf("%5s   %-24s %9lld columns %10.4f s\n", "", name,
             (long long)k->devices[d].load, k->devices[d].time);
    }
  }
  text_print_stop(r->iterations, r->stop, r->imbalance, A->o.eps);
  if (r->run_iteration != r->iterations)
    printf("ran         distribution %u, the fastest measured (the last "
           "was slower)\n",
           r->run_iteration);
  printf("imbalance   %.1f%% (max - min) / max of the node times\n",
         mlsba_imbalance_percent(r->imbalance, A->o.eps));
  printf("H           %lld blocks, lower bound %.1f (%.3fx)\n",
         (long long)r->half_perimeter_sum, r->half_perimeter_lower_bound,
         r->half_perimeter_lower_bound > 0
             ? (double)r->half_perimeter_sum / r->half_perimeter_lower_bound
             : 0.0);
  printf("product     %.4f s%s, %.2f GFLOPS%s\n", r->makespan_s,
         r->simulated ? " (virtual)" : "", r->gflops,
         A->repeat > 1 ? " (the median run)" : "");
  printf("comm share  %.1f%% of the time in MPI calls, waits included\n",
         100 * r->comm_share);
  if (A->o.comm_model == MLSBA_MPI_COMM_LINKS) {
    double most = 0, slowest = INFINITY;
    for (int i = 0; i < r->nodes; i++) {
      most =
          r->ranks[i].comm_modelled > most ? r->ranks[i].comm_modelled : most;
      if (r->ranks[i].link.bandwidth > 0 &&
          r->ranks[i].link.bandwidth < slowest)
        slowest = r->ranks[i].link.bandwidth;
    }
    printf("comm model  links: at most %.4f s of panels per rank modelled, "
           "slowest link %.3g MB/s\n",
           most, isfinite(slowest) ? slowest / 1e6 : 0.0);
  }
  if (r->verified < 0)
    printf("verified    n/a (%s)\n",
           r->simulated ? "simulated devices compute nothing" : "not checked");
  else
    printf("verified    %s (max relative error %.2e)\n",
           r->verified ? "yes" : "NO", r->max_rel_error);
  inpa_runs_print(runs);
}

/* A device's whole name as a JSON string; a name that is not UTF-8 (a
 * driver's) with its other bytes as \xNN, rather than a device missing
 * from the report. */
static json_t *json_name(const char *name) {
  json_t *s = json_string(name);
  if (s == NULL) {
    char safe[1024];
    escape_bytes(safe, sizeof safe, name, 1);
    s = json_string(safe);
  }
  return s;
}

static json_t *report(const args_t *A, const inpa_runs_t *runs) {
  const mlsba_mpi_result_t *r = &runs->last;
  json_t *hist = json_array();
  for (size_t k = 0; k < r->history_len; k++) {
    json_t *w = json_array(), *t = json_array();
    for (int i = 0; i < r->nodes; i++) {
      json_array_append_new(
          w, json_integer(r->history_w[k * (size_t)r->nodes + (size_t)i]));
      json_array_append_new(
          t, json_real(r->history_time[k * (size_t)r->nodes + (size_t)i]));
    }
    json_array_append_new(hist,
                          json_pack("{s:I, s:o, s:o, s:f}", "iteration",
                                    (json_int_t)(k + 1), "w", w, "time", t,
                                    "imbalance", r->history_imbalance[k]));
  }
  json_t *ranks = json_array();
  for (int i = 0; i < r->nodes; i++) {
    const mlsba_mpi_rank_t *k = &r->ranks[i];
    json_t *devs = json_array();
    for (size_t d = 0; d < k->ndevices; d++)
      json_array_append_new(devs,
                            json_pack("{s:o, s:I, s:f}", "name",
                                      json_name(k->devices[d].full_name),
                                      "load", (json_int_t)k->devices[d].load,
                                      "time", k->devices[d].time));
    json_t *rk = json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:o}",
                           "rank", i, "w", (json_int_t)k->w, "m",
                           (json_int_t)k->m, "n", (json_int_t)k->n, "row",
                           (json_int_t)k->row, "col", (json_int_t)k->col,
                           "time", k->time, "comm_s", k->comm, "devices", devs);
    /* Added: the link the communication model took, and its prediction. */
    if (rk != NULL && A->o.comm_model == MLSBA_MPI_COMM_LINKS) {
      json_object_set_new(
          rk, "link",
          json_pack("{s:f, s:f, s:s}", "latency", k->link.latency, "bandwidth",
                    k->link.bandwidth, "source",
                    k->link_source == 1 ? "platform" : "measured"));
      json_object_set_new(rk, "comm_modelled_s", json_real(k->comm_modelled));
    }
    json_array_append_new(ranks, rk);
  }
  json_t *verified = r->verified < 0 ? json_null() : json_boolean(r->verified);
  json_t *j = json_pack(
      "{s:s, s:i, s:I, s:I, s:I, s:b, s:f, s:I, s:f, s:f, s:f, s:f, s:o, "
      "s:s, s:s, s:b, s:s, s:f, s:o, s:o}",
      "algorithm", mlsba_mpi_algo_name(A->o.algorithm), "nodes", r->nodes, "n",
      (json_int_t)A->o.n, "block", (json_int_t)A->o.block, "iterations",
      (json_int_t)r->iterations, "converged", r->converged, "imbalance",
      r->imbalance, "half_perimeter_sum", (json_int_t)r->half_perimeter_sum,
      "half_perimeter_lower_bound", r->half_perimeter_lower_bound, "makespan_s",
      r->makespan_s, "gflops", r->gflops, "comm_share", r->comm_share,
      "verified", verified, "node_algorithm",
      A->o.node_algorithm == MLSBA_MPI_NODE_IDPA ? "idpa" : "mlsba",
      "precision",
      A->o.precision == MLSBA_PRECISION_DOUBLE ? "double" : "single",
      "simulated", r->simulated, "stop", mlsba_stop_reason_name(r->stop), "eps",
      A->o.eps, "history", hist, "ranks", ranks);
  /* Added after the fields above, which the report's readers know. */
  if (j != NULL) {
    json_object_set_new(j, "run_iteration", json_integer(r->run_iteration));
    json_object_set_new(j, "from_saved", json_boolean(r->from_saved));
    json_object_set_new(
        j, "comm_model",
        json_string(mlsba_mpi_comm_model_name(A->o.comm_model)));
    inpa_runs_json(runs, &A->o, j);
  }
  return j;
}

/* The table and the report, on rank 0; 0 or 1 (an output that cannot be
 * written). */
static int write_outputs(const args_t *A, const inpa_runs_t *r) {
  int status = 0;
  if (!A->quiet && !(A->json && !strcmp(A->json, "-")))
    print_table(A, r);
  if (A->json) {
    json_t *j = report(A, r);
    status = output_json(prog, "--json", A->json, j,
                         JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                             JSON_REAL_PRECISION(9));
    json_decref(j);
  }
  return cli_finish_stdout(prog) || status;
}

/* --load takes the one-dimensional path (tools/inpa_load.c), whose
 * messages a rank of the product would not expect: every rank takes rank
 * 0's path, or all stop naming the first rank given the other. RUN with
 * *wanted set, or USAGE. Collective. */
static int agree_on_load(int argc, char **argv, int *wanted) {
  int mine = inpa_load_wanted(argc, argv), head = mine, any = 0;
  MPI_Bcast(&head, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int differs = mine != head;
  MPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  *wanted = head;
  if (!any)
    return RUN;
  char why[WHY_SIZE] = "";
  int outcome = differs ? mpi_cli_usage(why,
                                        mine ? "was given --load, rank 0 "
                                               "was not"
                                             : "was not given --load, "
                                               "rank 0 was",
                                        ": every rank must be given the "
                                        "same options")
                        : RUN;
  return mpi_cli_agree(MPI_COMM_WORLD, outcome, why, prog);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, wants_load = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (agree_on_load(argc, argv, &wants_load) != RUN) {
    MPI_Finalize();
    return USAGE;
  }
  if (wants_load) { /* the 1-D API: tools/inpa_load.c */
    int load_status = inpa_load_main(argc, argv, mlsba_inpa_help);
    MPI_Finalize();
    return load_status;
  }
  args_t A;
  memset(&A, 0, sizeof A);
  char why[WHY_SIZE] = "";
  int outcome = parse_args(argc, argv, &A, why);
  if (outcome == RUN && rank == 0 && A.json)
    outcome = mpi_cli_check_json(A.json, why);
  outcome = mpi_cli_agree(MPI_COMM_WORLD, outcome, why, prog);
  if (outcome != RUN) {
    int status = mpi_cli_finish(MPI_COMM_WORLD, outcome, prog, mlsba_inpa_help);
    MPI_Finalize();
    return status;
  }
  char platform[4096];
  if (mpi_cli_platform(MPI_COMM_WORLD, A.o.platform, platform,
                       sizeof platform) == 0)
    A.o.platform = platform;
  if (A.op != INPA_OP_GEMM) { /* tools/inpa_factor.c */
    A.f.op = A.op;
    A.f.json = A.json;
    A.f.quiet = A.quiet;
    int factor_status = inpa_factor_main(&A.o, &A.f, prog);
    MPI_Finalize();
    return factor_status;
  }
  inpa_runs_t runs;
  int err = inpa_runs(MPI_COMM_WORLD, &A.o, A.repeat, &runs);
  if (err) {
    if (rank == 0)
      fprintf(stderr, "%s: %s\n", prog,
              err > 0 ? "out of memory for the runs' records"
                      : mlsba_mpi_last_error());
    inpa_runs_free(&runs);
    MPI_Finalize();
    return 1;
  }
  int status = 0;
  if (rank == 0)
    status = write_outputs(&A, &runs) || runs.last.verified == 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  inpa_runs_free(&runs);
  MPI_Finalize();
  return status;
}
