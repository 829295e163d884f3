/* mlsba-inpa: INPA across MPI ranks, then the heterogeneous 2-D blocked
 * product C = A x B on every rank's devices.
 *
 *   mpirun -np Q mlsba-inpa --platform FILE --size N --block B [...]
 *
 * Every rank parses the same command line; rank 0 prints the table and the
 * JSON report. Bad input, or an error on any rank, gives one line on rank
 * 0's stderr and a non-zero exit on every rank. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/paths.h"
#include "inpa_load.h"
#include "mlsba-inpa_help.h" /* tools/help/mlsba-inpa.txt */
#include "mlsba/mpi.h"

static const char *prog = "mlsba-inpa";

typedef struct {
  mlsba_mpi_opts_t o;
  const char *json;
  int quiet, help;
} args_t;

static int parse_count(const char *s, int64_t *out) {
  if (*s == '\0' || strspn(s, "0123456789") != strlen(s))
    return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno == ERANGE || v > (1ULL << 40))
    return -1;
  *out = (int64_t)v;
  return 0;
}

/* Returns 0, or the exit status of a usage error (printed when loud). */
static int parse_args(int argc, char **argv, args_t *A, int loud) {
  mlsba_mpi_opts_init(&A->o);
  A->o.n = A->o.block = -1;
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
      A->help = 1;
      return 0;
    }
    if (!strcmp(opt, "--quiet")) {
      A->quiet = 1;
      continue;
    }
    if (!strcmp(opt, "--keep-shared")) {
      A->o.keep_shared = 1;
      continue;
    }
    if (i + 1 >= argc)
      return loud ? cli_usage_error(prog, "missing value after ", opt)
                  : CLI_EXIT_USAGE;
    const char *v = argv[++i];
    int bad = 0;
    if (!strcmp(opt, "--platform"))
      A->o.platform = v;
    else if (!strcmp(opt, "--size"))
      bad = parse_count(v, &A->o.n) || A->o.n < 1;
    else if (!strcmp(opt, "--block"))
      bad = parse_count(v, &A->o.block) || A->o.block < 1;
    else if (!strcmp(opt, "--algo"))
      bad = mlsba_mpi_algo_from_name(v, &A->o.algorithm) != 0;
    else if (!strcmp(opt, "--node-algo")) {
      bad = strcmp(v, "mlsba") && strcmp(v, "idpa");
      A->o.node_algorithm =
          !strcmp(v, "idpa") ? MLSBA_MPI_NODE_IDPA : MLSBA_MPI_NODE_MLSBA;
    } else if (!strcmp(opt, "--eps")) {
      char *end;
      A->o.eps = strtod(v, &end);
      bad = *end != '\0' || !(A->o.eps >= 0 && A->o.eps < 1);
    } else if (!strcmp(opt, "--max-iter")) {
      int64_t it;
      bad = parse_count(v, &it) || it < 1 || it > 10000;
      A->o.max_iter = (unsigned)it;
    } else if (!strcmp(opt, "--precision")) {
      bad = strcmp(v, "single") && strcmp(v, "double");
      A->o.precision = !strcmp(v, "single") ? MLSBA_PRECISION_SINGLE
                                            : MLSBA_PRECISION_DOUBLE;
    } else if (!strcmp(opt, "--json"))
      A->json = v;
    else
      return loud ? cli_usage_error(prog, "unknown option ", opt)
                  : CLI_EXIT_USAGE;
    if (bad) {
      char what[64];
      snprintf(what, sizeof what, "bad value for %s: ", opt);
      return loud ? cli_usage_error(prog, what, v) : CLI_EXIT_USAGE;
    }
  }
  const char *missing = A->o.platform == NULL ? "--platform"
                        : A->o.n < 0          ? "--size"
                        : A->o.block < 0      ? "--block"
                                              : NULL;
  if (missing)
    return loud ? cli_usage_error(prog, "missing ", missing) : CLI_EXIT_USAGE;
  return 0;
}

/* Why INPA stopped, in words: a fixed point converged, but may have left
 * the node times further apart than eps. */
static const char *stop_words(const mlsba_mpi_result_t *r, double eps) {
  switch (r->stop) {
  case MLSBA_STOP_BALANCED:
    return "balanced: node times within eps";
  case MLSBA_STOP_FIXED_POINT:
    return r->imbalance > eps ? "converged at a fixed point, imbalance above eps"
                              : "converged at a fixed point";
  case MLSBA_STOP_MAX_ITER:
    return "not converged: --max-iter reached";
  default:
    return "not converged: a distribution came back";
  }
}

static void print_table(const args_t *A, const mlsba_mpi_result_t *r) {
  printf("%s over %d ranks: N = %lld, block %lld, %s precision\n\n",
         mlsba_mpi_algo_name(A->o.algorithm), r->nodes, (long long)A->o.n,
         (long long)A->o.block,
         A->o.precision == MLSBA_PRECISION_DOUBLE ? "double" : "single");
  printf("%5s %9s %13s %13s %10s %10s\n", "rank", "w", "m x n", "at row,col",
         "time s", "comm s");
  for (int i = 0; i < r->nodes; i++) {
    const mlsba_mpi_rank_t *k = &r->ranks[i];
    char mn[32], at[32];
    snprintf(mn, sizeof mn, "%lldx%lld", (long long)k->m, (long long)k->n);
    snprintf(at, sizeof at, "%lld,%lld", (long long)k->row, (long long)k->col);
    printf("%5d %9lld %13s %13s %10.4f %10.4f\n", i, (long long)k->w, mn, at,
           k->time, k->comm);
    for (size_t d = 0; d < k->ndevices; d++)
      printf("%5s   %-24.24s %9lld columns %10.4f s\n", "",
             k->devices[d].name, (long long)k->devices[d].load,
             k->devices[d].time);
  }
  printf("\niterations  %u (%s)\n", r->iterations, stop_words(r, A->o.eps));
  printf("imbalance   %.4f (max - min) / max of the node times\n",
         r->imbalance);
  printf("H           %lld blocks, lower bound %.1f (%.3fx)\n",
         (long long)r->half_perimeter_sum, r->half_perimeter_lower_bound,
         r->half_perimeter_lower_bound > 0
             ? (double)r->half_perimeter_sum / r->half_perimeter_lower_bound
             : 0.0);
  printf("product     %.4f s%s, %.2f GFLOPS\n", r->makespan_s,
         r->simulated ? " (virtual)" : "", r->gflops);
  printf("comm share  %.1f%% of the time in MPI calls, waits included\n",
         100 * r->comm_share);
  if (r->verified < 0)
    printf("verified    n/a (%s)\n",
           r->simulated ? "simulated devices compute nothing" : "not checked");
  else
    printf("verified    %s (max relative error %.2e)\n",
           r->verified ? "yes" : "NO", r->max_rel_error);
}

static json_t *report(const args_t *A, const mlsba_mpi_result_t *r) {
  json_t *hist = json_array();
  for (size_t k = 0; k < r->history_len; k++) {
    json_t *w = json_array(), *t = json_array();
    for (int i = 0; i < r->nodes; i++) {
      json_array_append_new(
          w, json_integer(r->history_w[k * (size_t)r->nodes + (size_t)i]));
      json_array_append_new(
          t, json_real(r->history_time[k * (size_t)r->nodes + (size_t)i]));
    }
    json_array_append_new(hist, json_pack("{s:I, s:o, s:o, s:f}", "iteration",
                                          (json_int_t)(k + 1), "w", w, "time",
                                          t, "imbalance",
                                          r->history_imbalance[k]));
  }
  json_t *ranks = json_array();
  for (int i = 0; i < r->nodes; i++) {
    const mlsba_mpi_rank_t *k = &r->ranks[i];
    json_t *devs = json_array();
    for (size_t d = 0; d < k->ndevices; d++)
      json_array_append_new(
          devs, json_pack("{s:s, s:I, s:f}", "name", k->devices[d].name, "load",
                          (json_int_t)k->devices[d].load, "time",
                          k->devices[d].time));
    json_array_append_new(
        ranks, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:o}",
                         "rank", i, "w", (json_int_t)k->w, "m",
                         (json_int_t)k->m, "n", (json_int_t)k->n, "row",
                         (json_int_t)k->row, "col", (json_int_t)k->col,
                         "time", k->time, "comm_s", k->comm, "devices", devs));
  }
  json_t *verified = r->verified < 0 ? json_null() : json_boolean(r->verified);
  return json_pack(
      "{s:s, s:i, s:I, s:I, s:I, s:b, s:f, s:I, s:f, s:f, s:f, s:f, s:o, "
      "s:s, s:s, s:b, s:s, s:f, s:o, s:o}",
      "algorithm", mlsba_mpi_algo_name(A->o.algorithm), "nodes", r->nodes,
      "n", (json_int_t)A->o.n, "block", (json_int_t)A->o.block, "iterations",
      (json_int_t)r->iterations, "converged", r->converged, "imbalance",
      r->imbalance, "half_perimeter_sum", (json_int_t)r->half_perimeter_sum,
      "half_perimeter_lower_bound", r->half_perimeter_lower_bound,
      "makespan_s", r->makespan_s, "gflops", r->gflops, "comm_share",
      r->comm_share, "verified", verified, "node_algorithm",
      A->o.node_algorithm == MLSBA_MPI_NODE_IDPA ? "idpa" : "mlsba",
      "precision",
      A->o.precision == MLSBA_PRECISION_DOUBLE ? "double" : "single",
      "simulated", r->simulated, "stop", mlsba_mpi_stop_name(r->stop), "eps", A->o.eps,
      "history", hist, "ranks", ranks);
}

static int write_json(const char *path, json_t *j) {
  int flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6);
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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (inpa_load_wanted(argc, argv)) { /* the 1-D API: tools/inpa_load.c */
    int load_status = inpa_load_main(argc, argv);
    MPI_Finalize();
    return load_status;
  }
  args_t A;
  memset(&A, 0, sizeof A);
  /* Every rank parses; only rank 0 speaks. */
  int status = parse_args(argc, argv, &A, rank == 0);
  if (status == 0 && A.help) {
    if (rank == 0)
      fputs(mlsba_inpa_help, stdout);
    MPI_Finalize();
    return 0;
  }
  if (status != 0) {
    MPI_Finalize();
    return status;
  }
  char platform[4096];
  if (resolve_platform(A.o.platform, platform, sizeof platform) == 0)
    A.o.platform = platform;
  mlsba_mpi_result_t r;
  int err = mlsba_mpi_multiply(MPI_COMM_WORLD, &A.o, &r);
  if (err) {
    if (rank == 0)
      fprintf(stderr, "%s: %s\n", prog, mlsba_mpi_last_error());
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    if (!A.quiet && !(A.json && !strcmp(A.json, "-")))
      print_table(&A, &r);
    if (A.json) {
      json_t *j = report(&A, &r);
      if (j == NULL || write_json(A.json, j) != 0) {
        fprintf(stderr, "%s: cannot write the JSON report to %s\n", prog,
                A.json);
        status = 1;
      }
      json_decref(j);
    }
    if (r.verified == 0)
      status = 1;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mlsba_mpi_result_free(&r);
  MPI_Finalize();
  return status;
}
