/* mlsba-inpa --load mandelbrot: the built-in Mandelbrot rows as an
 * application's load across the ranks (mlsba_mpi_divide()). Every rank
 * computes the rows of its range into its copy of the image; rank 0 sums
 * the copies (each row is computed by exactly one rank) and checks the
 * image against a single-rank reference, every row computed again on
 * one thread. */
#include "inpa_load.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/paths.h"
#include "common/text.h"
#include "mlsba.h"
#include "mlsba/mpi.h"
#include "mpi_cli.h"

static const char *prog = "mlsba-inpa";

typedef struct {
  mlsba_mpi_divide_opts_t o;
  int64_t rows, width;
  int32_t iters;
  int load; /* --load: its index among the built-in loads (mandelbrot) */
  const char *json;
  int quiet;
} load_args_t;

int inpa_load_wanted(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--load"))
      return 1;
  return 0;
}

static int parse_algo(const char *v, void *to, char *why, size_t size) {
  (void)why, (void)size;
  return mlsba_mpi_algo_from_name(v, to) != 0;
}

/* The product's options, which the one-dimensional load has no use for:
 * said so rather than unknown. */
static int not_for_load(const char *opt, char *why, size_t size) {
  snprintf(why, size, "not an option of --load: %s", opt);
  return 1;
}

static int refuse_block(const char *v, void *to, char *why, size_t size) {
  (void)v, (void)to;
  return not_for_load("--block", why, size);
}

static int refuse_precision(const char *v, void *to, char *why, size_t size) {
  (void)v, (void)to;
  return not_for_load("--precision", why, size);
}

static const char *const loads[] = {"mandelbrot", NULL};

/* What tools/help/mlsba-inpa.txt lists for --load. */
static const opt_t options[] = {
    {"--load", OPT_CHOICE, OPT_AT(load_args_t, load), .choices = loads},
    {"--platform", OPT_TEXT, OPT_AT(load_args_t, o.platform)},
    {"--size", OPT_UNITS, OPT_AT(load_args_t, rows), .lo = 1,
     .hi = INT64_C(1) << 30},
    {"--width", OPT_UNITS, OPT_AT(load_args_t, width), .lo = 1,
     .hi = INT64_C(1) << 20},
    {"--iterations", OPT_UNITS, OPT_AT(load_args_t, iters), .lo = 1,
     .hi = 1 << 20},
    {"--algo", OPT_CUSTOM, OPT_AT(load_args_t, o.algorithm),
     .parse = parse_algo},
    {"--eps", OPT_REAL, OPT_AT(load_args_t, o.eps), .max = 1, .below_max = 1},
    {"--max-iter", OPT_UNITS, OPT_AT(load_args_t, o.max_iter), .lo = 1,
     .hi = 10000},
    {"--json", OPT_TEXT, OPT_AT(load_args_t, json)},
    {"--quiet", OPT_FLAG, OPT_AT(load_args_t, quiet)},
    {"--block", OPT_CUSTOM, OPT_AT(load_args_t, load), .parse = refuse_block},
    {"--precision", OPT_CUSTOM, OPT_AT(load_args_t, load),
     .parse = refuse_precision},
};

/* This rank's command line: OPTS_RUN, OPTS_HELP, OPTS_VERSION, or
 * OPTS_USAGE with the reason in why (every rank parses the same command
 * line; rank 0 says it). */
static int parse(int argc, char **argv, load_args_t *A, char *why,
                 size_t size) {
  mlsba_mpi_divide_opts_init(&A->o);
  A->rows = -1;
  A->iters = 256;
  const opts_table_t table = OPTS_TABLE(options);
  int outcome = opts_parse(&table, argc, argv, A, why, size);
  if (outcome != OPTS_RUN)
    return outcome;
  if (A->rows < 0) {
    snprintf(why, size, "missing --size");
    return OPTS_USAGE;
  }
  if (A->width < 1)
    A->width = A->rows;
  A->o.drift = 2 * A->o.eps;
  return OPTS_RUN;
}

/* Every rank's devices, as JSON text gathered on rank 0. */
enum { DEVICES_TEXT = 8192 };

static void devices_text(const mlsba_mpi_divide_result_t *r, char *out) {
  json_t *devs = json_array();
  for (size_t d = 0; d < r->ndevices; d++)
    json_array_append_new(devs, json_pack("{s:s, s:I, s:f}", "name",
                                          r->devices[d].name, "load",
                                          (json_int_t)r->devices[d].load,
                                          "time", r->devices[d].time));
  char *text = json_dumps(devs, JSON_COMPACT);
  snprintf(out, DEVICES_TEXT, "%s",
           text && strlen(text) < DEVICES_TEXT ? text : "[]");
  free(text);
  json_decref(devs);
}

static void print_table(const load_args_t *A,
                        const mlsba_mpi_divide_result_t *r, json_t *devices,
                        int verified, double wall) {
  printf("%s over %d ranks: mandelbrot, %lld rows of %lld pixels\n\n",
         mlsba_mpi_algo_name(A->o.algorithm), r->nodes, (long long)A->rows,
         (long long)A->width);
  printf("%5s %10s %10s %10s\n", "rank", "offset", "count", "time s");
  for (int i = 0; i < r->nodes; i++) {
    printf("%5d %10lld %10lld %10.4f\n", i, (long long)r->offsets[i],
           (long long)r->counts[i], r->time[i]);
    size_t k;
    json_t *d;
    json_array_foreach(json_array_get(devices, (size_t)i), k, d)
        printf("%5s   %-24.24s %9lld rows %10.4f s\n", "",
               json_string_value(json_object_get(d, "name")),
               (long long)json_integer_value(json_object_get(d, "load")),
               json_number_value(json_object_get(d, "time")));
  }
  text_print_stop(r->iterations, r->stop, r->imbalance, A->o.eps);
  printf("imbalance   %.4f (max - min) / max of the rank times\n",
         r->imbalance);
  printf("makespan    %.4f s%s, the last run\n", r->makespan,
         r->simulated ? " (virtual)" : "");
  printf("wall time   %.4f s, the whole balancing\n", wall);
  if (verified < 0)
    printf("verified    n/a (simulated devices compute nothing)\n");
  else
    printf("verified    %s (the image against a single-rank reference)\n",
           verified ? "yes" : "NO");
}

static json_t *report(const load_args_t *A, const mlsba_mpi_divide_result_t *r,
                      json_t *devices, int verified) {
  size_t q = (size_t)r->nodes;
  json_t *hist = json_array(), *ranks = json_array();
  for (size_t k = 0; k < r->history_len; k++) {
    json_t *c = json_array(), *t = json_array();
    for (size_t i = 0; i < q; i++) {
      json_array_append_new(c, json_integer(r->history_count[k * q + i]));
      json_array_append_new(t, json_real(r->history_time[k * q + i]));
    }
    json_array_append_new(hist,
                          json_pack("{s:I, s:o, s:o, s:f}", "iteration",
                                    (json_int_t)k + 1, "count", c, "time", t,
                                    "imbalance", r->history_imbalance[k]));
  }
  for (size_t i = 0; i < q; i++)
    json_array_append_new(
        ranks,
        json_pack("{s:i, s:I, s:I, s:f, s:O}", "rank", (int)i, "offset",
                  (json_int_t)r->offsets[i], "count", (json_int_t)r->counts[i],
                  "time", r->time[i], "devices", json_array_get(devices, i)));
  return json_pack(
      "{s:s, s:s, s:i, s:I, s:I, s:I, s:b, s:s, s:f, s:f, s:f, s:b, s:o, "
      "s:o, s:o}",
      "algorithm", mlsba_mpi_algo_name(A->o.algorithm), "load", "mandelbrot",
      "nodes", r->nodes, "n", (json_int_t)A->rows, "width",
      (json_int_t)A->width, "iterations", (json_int_t)r->iterations,
      "converged", r->converged, "stop", mlsba_stop_reason_name(r->stop), "eps",
      A->o.eps, "imbalance", r->imbalance, "makespan_s", r->makespan,
      "simulated", r->simulated, "verified",
      verified < 0 ? json_null() : json_boolean(verified), "history", hist,
      "ranks", ranks);
}

/* The image from every rank's rows on rank 0, checked there: 1, 0 (a
 * wrong pixel or a row nobody computed), or -1 on simulated ranks. */
static int verify(const mlsba_mandelbrot_t *mb,
                  const mlsba_mpi_divide_result_t *r, int rank) {
  if (r->simulated)
    return -1;
  size_t n = (size_t)mb->width * (size_t)mb->height, w = (size_t)mb->width;
  /* Only the rows of this rank's final share: the balancing's earlier
   * runs computed other rows here too. A row nobody computed stays 0,
   * which the reference never is over a whole row of this region. */
  int32_t *mine = calloc(n, sizeof *mine);
  int32_t *sum = rank == 0 ? calloc(n, sizeof *sum) : NULL;
  for (int64_t u = r->offset; mine && u < r->offset + r->count; u++) {
    int64_t row = mlsba_mandelbrot_row(mb, u);
    memcpy(mine + (size_t)row * w, mb->out + (size_t)row * w, w * sizeof *mine);
  }
  int ok = 0;
  MPI_Reduce(mine ? mine : mb->out, sum, (int)n, MPI_INT32_T, MPI_SUM, 0,
             MPI_COMM_WORLD);
  free(mine);
  if (rank == 0 && sum) {
    mlsba_mandelbrot_t whole = *mb;
    whole.out = sum;
    int64_t wrong = 0;
    ok = mlsba_mandelbrot_verify(&whole, &wrong) == 0 && wrong == 0;
  }
  free(sum);
  return ok;
}

/* The devices of every rank, on rank 0, as a JSON array per rank. */
static json_t *gather_devices(const mlsba_mpi_divide_result_t *r, int rank) {
  char mine[DEVICES_TEXT];
  devices_text(r, mine);
  char *all = rank == 0 ? malloc((size_t)r->nodes * DEVICES_TEXT) : NULL;
  MPI_Gather(mine, DEVICES_TEXT, MPI_CHAR, all, DEVICES_TEXT, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  json_t *out = json_array();
  for (int i = 0; rank == 0 && all && i < r->nodes; i++) {
    json_t *d = json_loads(all + (size_t)i * DEVICES_TEXT, 0, NULL);
    json_array_append_new(out, d ? d : json_array());
  }
  free(all);
  return out;
}

static int run(const load_args_t *A, int rank) {
  size_t pixels = (size_t)A->width * (size_t)A->rows;
  /* calloc: a simulated rank never writes, so its image costs no memory. */
  mlsba_mandelbrot_t mb = {.width = A->width,
                           .height = A->rows,
                           .x0 = -2.0,
                           .y0 = -1.25,
                           .x1 = 0.5,
                           .y1 = 1.25,
                           .max_iter = A->iters,
                           .out = calloc(pixels, sizeof(int32_t))};
  mlsba_load_t *load = NULL;
  int err = mb.out ? mlsba_load_mandelbrot(&mb, &load) : MLSBA_ENOMEM;
  mlsba_mpi_divide_result_t r;
  /* A rank without its load still takes part: the call reports it. The
   * wall time of the whole balancing is simulated time under SMPI. */
  double t0 = MPI_Wtime();
  err = mlsba_mpi_divide(MPI_COMM_WORLD, err ? NULL : load, &A->o, &r);
  double wall = MPI_Wtime() - t0;
  if (err) {
    if (rank == 0)
      fprintf(stderr, "%s: %s\n", prog, mlsba_mpi_last_error());
    mlsba_load_destroy(load);
    free(mb.out);
    return 1;
  }
  int verified = verify(&mb, &r, rank);
  json_t *devices = gather_devices(&r, rank);
  int status = 0;
  if (rank == 0) {
    if (!A->quiet && !(A->json && !strcmp(A->json, "-")))
      print_table(A, &r, devices, verified, wall);
    json_t *j = A->json ? report(A, &r, devices, verified) : NULL;
    json_object_set_new(j, "wall_s", json_real(wall));
    int flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6);
    if (A->json && (j == NULL || (!strcmp(A->json, "-")
                                      ? json_dumpf(j, stdout, flags)
                                      : json_dump_file(j, A->json, flags)))) {
      fprintf(stderr, "%s: cannot write the JSON report to %s\n", prog,
              A->json);
      status = 1;
    }
    if (A->json && !strcmp(A->json, "-"))
      putchar('\n');
    json_decref(j);
    status = status || verified == 0 || cli_finish_stdout(prog);
  }
  json_decref(devices);
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mlsba_mpi_divide_result_free(&r);
  mlsba_load_destroy(load);
  free(mb.out);
  return status;
}

/* What a command line that does not run asks for, on rank 0: --help or
 * --version (a refused one was said by mpi_cli_agree). The exit status. */
static int done_without_run(int outcome, const char *help, int rank) {
  if (rank != 0)
    return 0;
  if (outcome == OPTS_HELP)
    paths_print_help(stdout, help);
  else
    opts_print_version(prog);
  return cli_finish_stdout(prog);
}

int inpa_load_main(int argc, char **argv, const char *help) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  load_args_t A;
  memset(&A, 0, sizeof A);
  char why[WHY_SIZE] = "";
  int outcome = parse(argc, argv, &A, why, sizeof why);
  /* Every rank parsed its own command line: one refused alone would leave
   * the others waiting in their first message. All stop; rank 0 prints
   * the first such rank's reason (tools/mpi_cli.c). */
  outcome = mpi_cli_agree(MPI_COMM_WORLD, outcome, why, prog);
  if (outcome == OPTS_USAGE)
    return CLI_EXIT_USAGE;
  if (outcome != OPTS_RUN)
    return done_without_run(outcome, help, rank);
  /* --platform as the other tools take it (see mlsba-inpa.c). */
  char expanded[4096], platform[4096];
  if (mlsba_mpi_platform_path(MPI_COMM_WORLD, A.o.platform, expanded,
                              sizeof expanded) == 0 &&
      !strchr(expanded, '%') &&
      paths_find_platform(expanded, platform, sizeof platform) == 0)
    A.o.platform = platform;
  return run(&A, rank);
}
