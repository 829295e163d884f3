/* mlsba-inpa --load mandelbrot: the built-in Mandelbrot rows as an
 * application's load across the ranks (mlsba_mpi_divide()). Every rank
 * computes the rows of its range into its image, which is reserved, not
 * allocated: only the rows a rank computes take memory, and a rank of
 * simulated devices, which compute nothing, has none. What the ranks of a
 * host hold at the even distribution is checked against its memory before
 * anything runs. Then every rank checks its rows against a one-thread
 * reference (every row computed again), and rank 0 that the ranks' rows
 * cover the image once. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include "inpa_load.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/output.h"
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

/* Every rank's rows checked where they were computed, and the ranks'
 * ranges, the same on every rank, checked to cover the rows once: 1, 0
 * (a wrong pixel, or a row nobody computed), or -1 on simulated ranks. */
static int verify(const mlsba_mandelbrot_t *mb,
                  const mlsba_mpi_divide_result_t *r) {
  if (r->simulated)
    return -1;
  int64_t wrong = 0, all = 0;
  if (mlsba_mandelbrot_verify_units(mb, r->offset, r->count, &wrong) != 0)
    wrong = 1;
  MPI_Allreduce(&wrong, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  int64_t at = 0;
  for (int i = 0; i < r->nodes; i++)
    at = r->offsets[i] == at && r->counts[i] >= 0 ? at + r->counts[i] : -1;
  return all == 0 && at == mb->height;
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

/* Whether every device of this rank's platform is simulated; -1 when
 * the file cannot be read here (the divider then says why, on every
 * rank). "auto" finds real devices. */
static int rank_simulated(const char *platform) {
  mlsba_platform_t *pl = NULL;
  if (platform == NULL || strcmp(platform, "auto") == 0)
    return 0;
  if (mlsba_platform_load(platform, &pl) != 0)
    return -1;
  size_t p = mlsba_platform_num_devices(pl), nsim = 0;
  for (size_t j = 0; j < p; j++)
    nsim += mlsba_platform_device_type(pl, j) == MLSBA_DEVICE_SIM;
  mlsba_platform_destroy(pl);
  return p > 0 && nsim == p;
}

/* Physical memory of this host in bytes; 0 when unknown. */
static double host_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* The bytes of image a real rank touches at the even distribution: its
 * rows, each at least a page (the rows of a range are spread over the
 * whole image, so short rows touch a page each), at most the image. */
static double image_bytes(const load_args_t *A, int ranks) {
  double row = 4.0 * (double)A->width, page = (double)sysconf(_SC_PAGE_SIZE);
  double rows = ceil((double)A->rows / ranks);
  double touched = rows * (row > page ? row : page);
  double whole = row * (double)A->rows;
  return touched < whole ? touched : whole;
}

/* Collective: what the real ranks of a host hold at the even
 * distribution, which no balancing lowers on every rank at once, must
 * fit its memory (as the product checks its matrices); past it the
 * kernel kills a rank partway through. Under SMPI every rank is in this
 * process. 0, or 1 on every rank after one line on rank 0. */
static int check_memory(const load_args_t *A, int sim, int rank) {
  int ranks;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm host = MPI_COMM_WORLD;
#ifndef MLSBA_SMPI
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &host);
#endif
  double mine = sim == 1 ? 0 : image_bytes(A, ranks), on_host = 0;
  int local = 1;
  MPI_Allreduce(&mine, &on_host, 1, MPI_DOUBLE, MPI_SUM, host);
  MPI_Comm_size(host, &local);
  if (host != MPI_COMM_WORLD)
    MPI_Comm_free(&host);
  double have = host_memory();
  int over = have > 0 && on_host > have ? rank : ranks, first = ranks;
  MPI_Allreduce(&over, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == ranks)
    return 0;
  /* The first such rank's figures, said by rank 0. */
  double figures[4] = {mine, on_host, have, local};
  MPI_Bcast(figures, 4, MPI_DOUBLE, first, MPI_COMM_WORLD);
  if (rank == 0) {
    double gib = 1024.0 * 1024 * 1024;
    char others[96] = "";
    if (figures[3] > 1)
      snprintf(others, sizeof others,
               " (%.1f GiB with the other %d rank%s of its host)",
               figures[1] / gib, (int)figures[3] - 1,
               figures[3] > 2 ? "s" : "");
    text_error(prog,
               "--size %lld --width %lld: rank %d's rows of the image need "
               "%.1f GiB of memory at the even distribution%s, the host has "
               "%.1f GiB: use a smaller --size or --width, or more hosts",
               (long long)A->rows, (long long)A->width, first, figures[0] / gib,
               others, figures[2] / gib);
  }
  return 1;
}

/* The image of a rank: on real devices, reserved for every row and
 * backed only where rows are computed (the range of units a rank is
 * given moves from run to run, and its rows lie across the image); a
 * rank of simulated devices computes nothing and gets a stand-in that
 * is never written (lib/devices/sim runs no code of the load). */
static int32_t *image_open(const load_args_t *A, int sim, size_t *bytes) {
  static int32_t stand_in;
  *bytes = 0;
  if (sim == 1)
    return &stand_in;
  double want = 4.0 * (double)A->width * (double)A->rows;
  if (want >= 0x1p62)
    return NULL;
  void *p = mmap(NULL, (size_t)want, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  *bytes = (size_t)want;
  return p;
}

static void image_close(int32_t *image, size_t bytes) {
  if (bytes > 0)
    munmap(image, bytes);
}

static int run(const load_args_t *A, int rank) {
  int sim = rank_simulated(A->o.platform);
  if (check_memory(A, sim, rank) != 0)
    return 1;
  size_t bytes;
  mlsba_mandelbrot_t mb = {.width = A->width,
                           .height = A->rows,
                           .x0 = -2.0,
                           .y0 = -1.25,
                           .x1 = 0.5,
                           .y1 = 1.25,
                           .max_iter = A->iters,
                           .out = image_open(A, sim, &bytes)};
  /* Every rank learns whether one could not reserve its image, and none
   * goes on alone into the divider. */
  int failed = mb.out == NULL ? rank : INT_MAX, first = INT_MAX;
  MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first != INT_MAX) {
    if (rank == 0)
      text_error(prog,
                 "rank %d cannot reserve the address space of an image of "
                 "%lld x %lld pixels: use a smaller --size or --width",
                 first, (long long)A->rows, (long long)A->width);
    image_close(mb.out, bytes);
    return 1;
  }
  mlsba_load_t *load = NULL;
  int err = mlsba_load_mandelbrot(&mb, &load);
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
    image_close(mb.out, bytes);
    return 1;
  }
  int verified = verify(&mb, &r);
  json_t *devices = gather_devices(&r, rank);
  int status = 0;
  if (rank == 0) {
    if (!A->quiet && !(A->json && !strcmp(A->json, "-")))
      print_table(A, &r, devices, verified, wall);
    json_t *j = A->json ? report(A, &r, devices, verified) : NULL;
    json_object_set_new(j, "wall_s", json_real(wall));
    if (A->json)
      status = output_json(prog, "--json", A->json, j,
                           JSON_INDENT(1) | JSON_PRESERVE_ORDER |
                               JSON_REAL_PRECISION(6));
    json_decref(j);
    status = status || verified == 0 || cli_finish_stdout(prog);
  }
  json_decref(devices);
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mlsba_mpi_divide_result_free(&r);
  mlsba_load_destroy(load);
  image_close(mb.out, bytes);
  return status;
}

int inpa_load_main(int argc, char **argv, const char *help) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  load_args_t A;
  memset(&A, 0, sizeof A);
  char why[WHY_SIZE] = "";
  int outcome = parse(argc, argv, &A, why, sizeof why);
  /* The report's destination is checked by rank 0 before anything runs,
   * as part of the outcome the ranks agree on. */
  if (outcome == OPTS_RUN && rank == 0 && A.json)
    outcome = mpi_cli_check_json(A.json, why);
  /* Every rank parsed its own command line: one refused alone would leave
   * the others waiting in their first message. All stop; rank 0 prints
   * the first such rank's reason (tools/mpi_cli.c). */
  outcome = mpi_cli_agree(MPI_COMM_WORLD, outcome, why, prog);
  if (outcome != OPTS_RUN)
    return mpi_cli_finish(MPI_COMM_WORLD, outcome, prog, help);
  char platform[4096];
  if (mpi_cli_platform(MPI_COMM_WORLD, A.o.platform, platform,
                       sizeof platform) == 0)
    A.o.platform = platform;
  return run(&A, rank);
}
