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
#include "common/paths.h"
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
  int64_t repeat; /* products with one balancing (--repeat, 1) */
} args_t;

/* What a rank's command line asks for. */

/* Options without a value. Returns 1 when opt is one. */
static int flag_option(const char *opt, args_t *A) {
  if (!strcmp(opt, "--quiet"))
    A->quiet = 1;
  else if (!strcmp(opt, "--keep-shared"))
    A->o.keep_shared = 1;
  else if (!strcmp(opt, "--transa"))
    A->o.transa = 'T';
  else if (!strcmp(opt, "--transb"))
    A->o.transb = 'T';
  else
    return 0;
  return 1;
}

static int is_value_option(const char *opt) {
  static const char *const names[] = {
      "--platform", "--size",     "--block",     "--algo",  "--node-algo",
      "--eps",      "--max-iter", "--precision", "--json",  "--comm-model",
      "-m",         "-n",         "-k",          "--repeat"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(opt, names[i]))
      return 1;
  return 0;
}

/* Sizes up to 2^40 pass here; the layer refuses those it cannot run,
 * with the reason. */
static int units(const char *v, int64_t *out) {
  return cli_parse_units(v, INT64_C(1) << 40, out) || *out < 1;
}

/* One option's value; nonzero when it is bad. */
static int option_value(const char *opt, const char *v, args_t *A) {
  mlsba_mpi_opts_t *o = &A->o;
  int64_t it = 0;
  if (!strcmp(opt, "--platform"))
    return *(o->platform = v) == '\0';
  if (!strcmp(opt, "--size") || !strcmp(opt, "-n"))
    return units(v, &o->n);
  if (!strcmp(opt, "-m"))
    return units(v, &o->m);
  if (!strcmp(opt, "-k"))
    return units(v, &o->k);
  if (!strcmp(opt, "--repeat"))
    return cli_parse_units(v, 100000, &A->repeat) || A->repeat < 1;
  if (!strcmp(opt, "--block"))
    return units(v, &o->block);
  if (!strcmp(opt, "--algo"))
    return mlsba_mpi_algo_from_name(v, &o->algorithm) != 0;
  if (!strcmp(opt, "--node-algo")) {
    o->node_algorithm =
        !strcmp(v, "idpa") ? MLSBA_MPI_NODE_IDPA : MLSBA_MPI_NODE_MLSBA;
    return strcmp(v, "mlsba") && strcmp(v, "idpa");
  }
  if (!strcmp(opt, "--eps"))
    return cli_parse_double(v, 0, 1, &o->eps) || !(o->eps < 1);
  if (!strcmp(opt, "--max-iter")) {
    int bad = cli_parse_units(v, 10000, &it) || it < 1;
    o->max_iter = (unsigned)it;
    return bad;
  }
  if (!strcmp(opt, "--comm-model"))
    return mlsba_mpi_comm_model_from_name(v, &o->comm_model) != 0;
  if (!strcmp(opt, "--precision")) {
    o->precision =
        !strcmp(v, "single") ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
    return strcmp(v, "single") && strcmp(v, "double");
  }
  A->json = v; /* --json */
  return *v == '\0';
}

/* This rank's command line: RUN, HELP, VERSION, or USAGE with the reason
 * in why. Nothing is printed: the ranks first agree on the outcome. */
static int parse_args(int argc, char **argv, args_t *A, char *why) {
  mlsba_mpi_opts_init(&A->o);
  /* The defaults: a product every rank of a small job takes a share of
   * (16 x 16 blocks), as mlsba-bench's default size is 2048. */
  A->o.n = 2048;
  A->o.block = 128;
  A->repeat = 1;
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    if (!strcmp(opt, "-h") || !strcmp(opt, "--help"))
      return HELP;
    if (!strcmp(opt, "--version"))
      return VERSION;
    if (flag_option(opt, A))
      continue;
    if (!is_value_option(opt))
      return mpi_cli_usage(why, "unknown option ", opt);
    if (i + 1 >= argc)
      return mpi_cli_usage(why, "missing value after ", opt);
    const char *v = argv[++i];
    if (option_value(opt, v, A)) {
      char what[64];
      snprintf(what, sizeof what, "bad value for %s: ", opt);
      return mpi_cli_usage(why, what, *v ? v : "\"\"");
    }
  }
  return A->o.platform == NULL ? mpi_cli_usage(why, "missing ", "--platform")
                               : RUN;
}

/* Why INPA stopped, in words: a fixed point converged, but may have left
 * the node times further apart than eps. */
static const char *stop_words(const mlsba_mpi_result_t *r, double eps) {
  switch (r->stop) {
  case MLSBA_STOP_BALANCED:
    return "balanced: node times within eps";
  case MLSBA_STOP_FIXED_POINT:
    return r->imbalance > eps
               ? "converged at a fixed point, imbalance above eps"
               : "converged at a fixed point";
  case MLSBA_STOP_MAX_ITER:
    return "not converged: --max-iter reached";
  default:
    return "not converged: a distribution came back";
  }
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
  printf("\niterations  %u (%s)\n", r->iterations, stop_words(r, A->o.eps));
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
      "simulated", r->simulated, "stop", mlsba_mpi_stop_name(r->stop), "eps",
      A->o.eps, "history", hist, "ranks", ranks);
  /* Added after the fields above, which the report's readers know. */
  if (j != NULL) {
    json_object_set_new(j, "run_iteration", json_integer(r->run_iteration));
    json_object_set_new(
        j, "comm_model",
        json_string(mlsba_mpi_comm_model_name(A->o.comm_model)));
    inpa_runs_json(runs, &A->o, j);
  }
  return j;
}

static int write_json(const char *path, json_t *j) {
  int flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9);
  int rc = !strcmp(path, "-") ? json_dumpf(j, stdout, flags)
                              : json_dump_file(j, path, flags);
  if (!strcmp(path, "-"))
    putchar('\n');
  return rc;
}

/* --platform as the other tools take it, for this rank: "%r", "%h" and
 * "%l" expanded, then a sample platform's name (inpa-node%r) looked up
 * where they look. Collective. 0 with the path in out; otherwise the
 * library opens the pattern as given and reports, collectively, the file
 * that is not there. */
static int resolve_platform(const char *pattern, char *out, size_t size) {
  char expanded[4096];
  int err = mlsba_mpi_platform_path(MPI_COMM_WORLD, pattern, expanded,
                                    sizeof expanded);
  return err || strchr(expanded, '%') ||
                 paths_find_platform(expanded, out, size) != 0
             ? -1
             : 0;
}

/* The table and the report, on rank 0; 0 or 1 (an output that cannot be
 * written). */
static int write_outputs(const args_t *A, const inpa_runs_t *r) {
  int status = 0;
  if (!A->quiet && !(A->json && !strcmp(A->json, "-")))
    print_table(A, r);
  if (A->json) {
    json_t *j = report(A, r);
    if (j == NULL || write_json(A->json, j) != 0) {
      fprintf(stderr, "%s: cannot write the JSON report to %s\n", prog,
              A->json);
      status = 1;
    }
    json_decref(j);
  }
  return cli_finish_stdout(prog) || status;
}

static void print_version(void) {
  printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
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
    int load_status = inpa_load_main(argc, argv);
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
    if (rank == 0 && outcome == HELP)
      paths_print_help(stdout, mlsba_inpa_help);
    if (rank == 0 && outcome == VERSION)
      print_version();
    int status = outcome == USAGE ? USAGE
                 : rank == 0      ? cli_finish_stdout(prog)
                                  : 0;
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
  }
  char platform[4096];
  if (resolve_platform(A.o.platform, platform, sizeof platform) == 0)
    A.o.platform = platform;
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
