/* mlsba-bench: balance a real matrix multiplication across the machine
 * with the self-adaptive routine and show how the load was balanced and
 * what it gained. The command line and the JSON report are fixed in
 * DESIGN.md. */
#include <blis.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/timing.h"
#include "gemm_fill.h"
#include "mlsba.h"
#include "plot.h"

#define EXIT_USAGE CLI_EXIT_USAGE

static const char *prog = "mlsba-bench";

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: %s [--platform auto|FILE] [--algo ALGO|--compare]\n"
      "                   [--size N | -m M -n N -k K] [--precision "
      "single|double]\n"
      "                   [--eps E] [--max-iter I] [--models DIR]\n"
      "                   [--json FILE|-] [--plot DIR] [--quiet] "
      "[--keep-shared]\n"
      "                   [--separate-kinds]\n"
      "\n"
      "Balance C = A x B (split by columns) over the devices of a platform\n"
      "with the self-adaptive routine, verify the product, and report.\n"
      "\n"
      "  --platform auto|FILE  devices and groups (default: auto, every core\n"
      "                        and OpenCL device of this machine)\n"
      "  --algo ALGO           mlsba (default), mlfba2, slba, multiple-cpm,\n"
      "                        single-cpm, homogeneous, dlt\n"
      "  --compare             every algorithm, each device alone and BLIS\n"
      "                        on all cores, on the same problem\n"
      "  --size N              m = n = k = N (default 2048)\n"
      "  -m M -n N -k K        C is M x N, A is M x K\n"
      "  --precision P         single (default) or double\n"
      "  --eps E               balanced when device times agree within E\n"
      "                        (default 0.05)\n"
      "  --max-iter I          at most I runs (default 20)\n"
      "  --models DIR          saved device models (default models/<host>);\n"
      "                        'none' to start cold and save nothing\n"
      "  --json FILE|-         the report as JSON (- : standard output)\n"
      "  --plot DIR            pictures (PNG and SVG, gnuplot): speed\n"
      "                        functions and timelines\n"
      "  --quiet               no progress lines\n"
      "  --keep-shared         keep a device that computes on the other\n"
      "                        devices' cores (pocl) even when they run\n"
      "                        faster without it\n"
      "  --separate-kinds      model every device from its own runs (by\n"
      "                        default devices of one kind, such as the\n"
      "                        cores of one CPU, pool their runs while\n"
      "                        they agree)\n",
      prog);
}

static int bad_usage(const char *what, const char *arg) {
  return cli_usage_error(prog, what, arg);
}

static int parse_count(const char *s, int64_t max, int64_t *out) {
  char *end;
  if (*s == '\0' || strspn(s, "0123456789") != strlen(s))
    return -1;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || v < 1 || v > max)
    return -1;
  *out = v;
  return 0;
}

typedef struct {
  const char *platform, *algo, *json, *plot, *models;
  int compare, quiet, keep_shared, separate_kinds;
  int64_t m, n, k;
  mlsba_precision_t precision;
  double eps;
  unsigned max_iter;
} args_t;

static int parse_args(int argc, char **argv, args_t *a) {
  int64_t size = 0;
  *a = (args_t){
      .platform = "auto", .algo = "mlsba", .eps = 0.05, .max_iter = 20};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      exit(0);
    }
    if (!strcmp(o, "--version")) {
      printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
      exit(0);
    }
    if (!strcmp(o, "--compare")) {
      a->compare = 1;
      continue;
    }
    if (!strcmp(o, "--quiet")) {
      a->quiet = 1;
      continue;
    }
    if (!strcmp(o, "--keep-shared")) {
      a->keep_shared = 1;
      continue;
    }
    if (!strcmp(o, "--separate-kinds")) {
      a->separate_kinds = 1;
      continue;
    }
    static const char *const with_value[] = {
        "--platform",  "--algo", "--json",     "--plot", "--models",
        "--precision", "--eps",  "--max-iter", "--size", "-m",
        "-n",          "-k",     NULL};
    const char *const *known = with_value;
    while (*known && strcmp(*known, o) != 0)
      known++;
    if (*known == NULL)
      return bad_usage(
          strncmp(o, "-", 1) ? "unexpected argument " : "unknown option ", o);
    if (i + 1 >= argc)
      return bad_usage("a value is missing after ", o);
    const char *v = argv[++i];
    if (!strcmp(o, "--platform")) {
      a->platform = v;
    } else if (!strcmp(o, "--algo")) {
      a->algo = v;
    } else if (!strcmp(o, "--json")) {
      a->json = v;
    } else if (!strcmp(o, "--plot")) {
      a->plot = v;
    } else if (!strcmp(o, "--models")) {
      a->models = v;
    } else if (!strcmp(o, "--precision")) {
      if (strcmp(v, "single") && strcmp(v, "double"))
        return bad_usage("--precision must be single or double, got ", v);
      a->precision =
          strcmp(v, "double") ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
    } else if (!strcmp(o, "--eps")) {
      if (cli_parse_double(v, 0, 1, &a->eps) != 0 || !(a->eps < 1))
        return bad_usage("--eps must be a number in [0, 1), got ", v);
    } else if (!strcmp(o, "--max-iter")) {
      int64_t it;
      if (parse_count(v, 100000, &it))
        return bad_usage("--max-iter must be a whole number >= 1, got ", v);
      a->max_iter = (unsigned)it;
    } else if (!strcmp(o, "--size") || !strcmp(o, "-m") || !strcmp(o, "-n") ||
               !strcmp(o, "-k")) {
      int64_t *slot = !strcmp(o, "--size") ? &size
                      : !strcmp(o, "-m")   ? &a->m
                      : !strcmp(o, "-n")   ? &a->n
                                           : &a->k;
      if (parse_count(v, INT64_C(1) << 30, slot)) {
        char what[64];
        snprintf(what, sizeof what,
                 "%s must be a whole number from 1 to 2^30, got ", o);
        return bad_usage(what, v);
      }
    } else {
      return bad_usage("unknown option ", o);
    }
  }
  if (size && (a->m || a->n || a->k))
    return bad_usage("--size and -m/-n/-k exclude each other", "");
  if (!size && !a->m && !a->n && !a->k)
    size = 2048;
  if (size)
    a->m = a->n = a->k = size;
  if (!a->m || !a->n || !a->k)
    return bad_usage("-m, -n and -k go together", "");
  if (a->compare && strcmp(a->algo, "mlsba"))
    return bad_usage("--algo and --compare exclude each other", "");
  if (a->m * a->k > (INT64_C(1) << 31) || a->k * a->n > (INT64_C(1) << 31) ||
      a->m * a->n > (INT64_C(1) << 31))
    return bad_usage("the matrices would exceed 2^31 elements each", "");
  return 0;
}

/* One row of the report: an algorithm, a device alone, or BLIS. */
typedef struct {
  char name[96];
  int iterations, converged, verified; /* verified: -1 unknown (sim) */
  int stop; /* mlsba_stop_reason_t of the routine, or -1 (no routine) */
  double makespan, imbalance, overhead_total, overhead_per_call, rel_error;
  /* Median of rounds of runs of what the row chose, interleaved with the
   * other rows (measure_steady): what a user gets from it, measured like
   * the rows it is compared with. */
  double steady;
  unsigned char *dropped; /* p values of mlsba_dropped_t, or NULL */
  size_t points_total;
  size_t *points;         /* q, or NULL */
  int64_t *load;          /* p, or NULL (BLIS) */
  double *time;           /* p */
  int64_t *hist_load;     /* iterations x p */
  double *hist_time;      /* iterations x p */
  mlsba_model_t **models; /* p, the balancer's, or NULL */
  double *hist_makespan, *hist_imbalance;
} row_t;

static void row_free(row_t *r) {
  for (size_t j = 0; r->models && r->models[j]; j++)
    mlsba_model_destroy(r->models[j]);
  free(r->models);
  free(r->hist_time);
  free(r->points);
  free(r->load);
  free(r->time);
  free(r->hist_load);
  free(r->hist_makespan);
  free(r->hist_imbalance);
  free(r->dropped);
}

typedef struct {
  const args_t *a;
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  mlsba_gemm_t g; /* what runs: m = k = 1 on a simulated platform */
  size_t p, q;
  int sim;
  double flop;  /* of the product as asked */
  int progress; /* print a line per iteration */
  char models[512];
} bench_t;

static void on_iteration(void *ctx, const mlsba_iteration_t *it) {
  bench_t *B = ctx;
  if (!B->progress)
    return;
  printf("  run %2u: makespan %9.4f s  imbalance %5.1f%%  loads", it->iteration,
         it->makespan, 100 * it->imbalance);
  for (size_t j = 0; j < B->p; j++)
    printf(" %lld", (long long)it->load[j]);
  printf("%s\n", it->remeasured ? "  (re-measured)" : "");
  fflush(stdout);
}

/* What the routine decided along the way (a device left out, a model
 * found stale, a core apart from its kind, why it did not settle), among
 * the progress lines; its line per iteration is on_iteration's already. */
static void on_log(void *ctx, const char *line) {
  const bench_t *B = ctx;
  if (B->progress && strstr(line, ": iteration ") == NULL)
    printf("  - %s\n", line);
}

static void verify(bench_t *B, row_t *r) {
  r->verified = -1;
  if (B->sim)
    return;
  int ok = 0;
  if (mlsba_gemm_verify(&B->g, 12345, &r->rel_error, &ok) == 0)
    r->verified = ok;
}

/* The self-adaptive routine with one algorithm. */
static int run_algorithm(bench_t *B, mlsba_algorithm_t algo, int use_models,
                         row_t *r) {
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.algorithm = algo;
  o.eps = B->a->eps;
  o.max_iter = B->a->max_iter;
  o.sharing = B->a->keep_shared ? MLSBA_SHARING_KEEP : MLSBA_SHARING_CHECK;
  o.kinds = B->a->separate_kinds ? MLSBA_KINDS_SEPARATE : MLSBA_KINDS_POOL;
  o.progress = on_iteration;
  o.progress_ctx = B;
  o.log = on_log;
  o.log_ctx = B;
  o.model_dir = use_models && B->models[0] ? B->models : NULL;
  mlsba_balance_result_t res;
  if (B->progress)
    printf("%s:\n", mlsba_algorithm_name(algo));
  int err = mlsba_balance_gemm(B->ex, &B->g, &o, &res);
  if (err)
    return err;
  snprintf(r->name, sizeof r->name, "%s", mlsba_algorithm_name(algo));
  r->iterations = (int)res.iterations;
  r->converged = res.converged;
  r->stop = (int)res.stop;
  r->makespan = res.makespan;
  r->imbalance = res.imbalance;
  r->overhead_total = res.overhead_total_s;
  r->overhead_per_call = res.overhead_per_call_s;
  r->points = res.points;
  res.points = NULL;
  for (size_t g = 0; g < B->q; g++)
    r->points_total += r->points[g];
  r->load = res.load;
  r->time = res.time;
  r->hist_load = res.history_load;
  r->hist_makespan = res.history_makespan;
  r->hist_imbalance = res.history_imbalance;
  r->hist_time = res.history_time;
  /* Keep the models (for the pictures), NULL-terminated. */
  r->models = calloc(B->p + 1, sizeof *r->models);
  for (size_t j = 0; r->models && j < B->p; j++) {
    r->models[j] = res.models[j];
    res.models[j] = NULL;
  }
  r->dropped = res.dropped;
  res.dropped = NULL;
  res.load = NULL;
  res.time = NULL;
  res.history_load = NULL;
  res.history_time = NULL;
  res.history_makespan = res.history_imbalance = NULL;
  if (res.save_error)
    fprintf(stderr, "%s: warning: models not saved in '%s': %s\n", prog,
            B->models, mlsba_strerror(res.save_error));
  mlsba_balance_result_free(&res);
  verify(B, r);
  r->steady = r->makespan;
  return 0;
}

/* One device with the whole product: a warm-up run, then the median of
 * three. Returns 1 when the device cannot hold it. */
static int run_device_alone(bench_t *B, size_t dev, row_t *r) {
  int64_t *max = calloc(B->p, sizeof *max);
  r->load = calloc(B->p, sizeof *r->load);
  r->time = calloc(B->p, sizeof *r->time);
  if (!max || !r->load || !r->time)
    return free(max), MLSBA_ENOMEM;
  int err = mlsba_executor_max_loads(B->ex, &B->g, max);
  int64_t cap = max[dev];
  free(max);
  if (err)
    return err;
  if (cap < B->g.n)
    return 1;
  r->load[dev] = B->g.n;
  /* A first run to warm up (CLBlast builds its kernels), then the one
   * shown as this row's run; measure_steady times it like the others. */
  for (int k = 0; k < 2 && !err; k++)
    err = mlsba_executor_run_gemm(B->ex, &B->g, r->load, MLSBA_DRIVE_SHARED,
                                  r->time);
  if (err)
    return err;
  snprintf(r->name, sizeof r->name, "device:%s",
           mlsba_platform_device_name(B->pl, dev));
  r->makespan = r->steady = r->time[dev];
  r->iterations = 1;
  r->converged = 1;
  r->stop = -1;
  verify(B, r);
  return 0;
}

/* The cores of the platform; BLIS gets one thread per core. */
static size_t platform_cores(const bench_t *B) {
  size_t cores = 0;
  for (size_t j = 0; j < B->p; j++)
    cores += mlsba_platform_device_type(B->pl, j) == MLSBA_DEVICE_CPU;
  return cores;
}

/* One multithreaded BLIS product of the whole problem; its seconds. */
static double blis_once(bench_t *B) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads((dim_t)platform_cores(B), &rntm);
  dim_t m = (dim_t)B->g.m, n = (dim_t)B->g.n, k = (dim_t)B->g.k;
  double t0 = timing_now();
  if (B->g.precision == MLSBA_PRECISION_DOUBLE) {
    double one = 1, zero = 0;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                 (double *)B->g.a, 1, m, (double *)B->g.b, 1, k, &zero,
                 (double *)B->g.c, 1, m, NULL, &rntm);
  } else {
    float one = 1, zero = 0;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one,
                 (float *)B->g.a, 1, m, (float *)B->g.b, 1, k, &zero,
                 (float *)B->g.c, 1, m, NULL, &rntm);
  }
  return timing_now() - t0;
}

/* What a user would run instead: BLIS with one thread per core of the
 * platform, on the whole product (unpinned, BLIS's own threading). */
static int run_blis(bench_t *B, row_t *r) {
  if (platform_cores(B) == 0 || B->sim)
    return 1;
  blis_once(B); /* warm up, as run_device_alone */
  snprintf(r->name, sizeof r->name, "blis-all-cores");
  r->makespan = r->steady = blis_once(B);
  r->iterations = 1;
  r->converged = 1;
  r->stop = -1;
  verify(B, r);
  return 0;
}

/* What each row chose, run again in rounds: every round runs every row
 * once (an algorithm's final distribution, a device alone, BLIS), so that
 * a machine whose speed drifts over minutes (a shared VM) weighs on every
 * row alike; steady is the median of the rounds. Virtual times do not
 * drift: on a sim platform steady stays the routine's last run. */
static int measure_steady(bench_t *B, row_t *rows, size_t n, int rounds) {
  if (B->sim)
    return 0;
  double *spans = calloc(n * (size_t)rounds, sizeof *spans);
  double *time = calloc(B->p, sizeof *time);
  int err = spans && time ? 0 : MLSBA_ENOMEM;
  for (int k = 0; k < rounds && !err; k++) {
    for (size_t i = 0; i < n && !err; i++) {
      double t = 0;
      if (rows[i].load == NULL) {
        t = blis_once(B);
      } else {
        err = mlsba_executor_run_gemm(B->ex, &B->g, rows[i].load,
                                      MLSBA_DRIVE_SHARED, time);
        for (size_t j = 0; j < B->p; j++)
          t = time[j] > t ? time[j] : t;
      }
      spans[i * (size_t)rounds + (size_t)k] = t;
    }
  }
  for (size_t i = 0; i < n && !err; i++)
    rows[i].steady = timing_median(spans + i * (size_t)rounds, (size_t)rounds);
  free(spans);
  free(time);
  return err;
}

/* ---- reports ---------------------------------------------------------- */

static json_t *row_json(const bench_t *B, const row_t *r) {
  const args_t *a = B->a;
  json_t *groups = json_array(), *history = json_array();
  json_t *per_group = json_array();
  for (size_t g = 0; r->load && g < B->q; g++) {
    json_t *devices = json_array();
    int64_t load = 0;
    double time = 0;
    for (size_t k = 0; k < mlsba_platform_group_size(B->pl, g); k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      load += r->load[j];
      time = r->time[j] > time ? r->time[j] : time;
      json_array_append_new(
          devices, json_pack("{s:s, s:I, s:f}", "name",
                             mlsba_platform_device_name(B->pl, j), "load",
                             (json_int_t)r->load[j], "time", r->time[j]));
    }
    json_array_append_new(groups,
                          json_pack("{s:I, s:f, s:o}", "load", (json_int_t)load,
                                    "time", time, "devices", devices));
  }
  for (size_t g = 0; g < B->q; g++)
    json_array_append_new(
        per_group, json_integer(r->points ? (json_int_t)r->points[g] : 0));
  for (int it = 0; it < r->iterations; it++) {
    json_t *loads = json_array();
    for (size_t j = 0; r->load && j < B->p; j++)
      json_array_append_new(
          loads, json_integer(r->hist_load ? r->hist_load[it * B->p + j]
                                           : r->load[j]));
    json_array_append_new(
        history,
        json_pack("{s:i, s:f, s:f, s:o}", "iteration", it + 1, "makespan_s",
                  r->hist_makespan ? r->hist_makespan[it] : r->makespan,
                  "imbalance",
                  r->hist_imbalance ? r->hist_imbalance[it] : r->imbalance,
                  "loads", loads));
  }
  json_t *o = json_pack(
      "{s:s, s:s, s:I, s:I, s:I, s:s, s:i, s:b, s:f, s:f, s:f, s:{s:f, s:f},"
      " s:{s:I, s:o}}",
      "algorithm", r->name, "platform", a->platform, "m", (json_int_t)a->m, "n",
      (json_int_t)a->n, "k", (json_int_t)a->k, "precision",
      a->precision ? "double" : "single", "iterations", r->iterations,
      "converged", r->converged, "makespan_s", r->makespan, "gflops",
      B->flop / r->makespan * 1e-9, "imbalance", r->imbalance, "overhead_s",
      "total", r->overhead_total, "per_call", r->overhead_per_call, "points",
      "total", (json_int_t)r->points_total, "per_group", per_group);
  json_object_set_new(
      o, "verified", r->verified < 0 ? json_null() : json_boolean(r->verified));
  json_object_set_new(o, "max_rel_error",
                      r->verified < 0 ? json_null() : json_real(r->rel_error));
  json_object_set_new(o, "groups", groups);
  json_object_set_new(o, "history", history);
  /* Added to DESIGN.md's report: the median of the rounds of
   * measure_steady (five with --compare, else three) of the final
   * distribution, the devices left out (fault, or slower with them),
   * those of them dropped after a fault, and why the routine stopped. */
  json_object_set_new(o, "steady_s", json_real(r->steady));
  json_object_set_new(o, "steady_gflops",
                      json_real(B->flop / r->steady * 1e-9));
  json_t *left = json_array(), *faulty = json_array();
  for (size_t j = 0; r->dropped && j < B->p; j++) {
    const char *name = mlsba_platform_device_name(B->pl, j);
    if (r->dropped[j])
      json_array_append_new(left, json_string(name));
    if (r->dropped[j] == MLSBA_DROPPED_FAULT)
      json_array_append_new(faulty, json_string(name));
  }
  json_object_set_new(o, "left_out", left);
  json_object_set_new(o, "faulty", faulty);
  json_object_set_new(o, "stop",
                      r->stop < 0 ? json_null()
                                  : json_string(mlsba_stop_reason_name(
                                        (mlsba_stop_reason_t)r->stop)));
  return o;
}

static void print_row_detail(const bench_t *B, const row_t *r) {
  static const char *bar = "----------------------------------------"
                           "----------------------------";
  printf("\n%-22s %10s %8s %11s %9s\n", "group / device", "load", "share",
         "time [s]", "GFLOPS");
  printf("%.68s\n", bar);
  double unit = B->flop / (double)B->a->n; /* flops per column */
  for (size_t g = 0; g < B->q; g++) {
    int64_t load = 0;
    double time = 0;
    size_t size = mlsba_platform_group_size(B->pl, g);
    for (size_t k = 0; k < size; k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      load += r->load[j];
      time = r->time[j] > time ? r->time[j] : time;
    }
    /* A group of one device is named by it; larger ones list theirs. */
    char label[64];
    snprintf(label, sizeof label, "group %zu%s%s", g, size == 1 ? ": " : "",
             size == 1 ? mlsba_platform_device_name(
                             B->pl, mlsba_platform_group_device(B->pl, g, 0))
                       : "");
    printf("%-22s %10lld %7.1f%% %11.4f %9.1f\n", label, (long long)load,
           100.0 * (double)load / (double)B->a->n, time,
           time > 0 ? unit * (double)load / time * 1e-9 : 0.0);
    for (size_t k = 0; size > 1 && k < size; k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      printf("  %-20s %10lld %7.1f%% %11.4f %9.1f\n",
             mlsba_platform_device_name(B->pl, j), (long long)r->load[j],
             100.0 * (double)r->load[j] / (double)B->a->n, r->time[j],
             r->time[j] > 0 ? unit * (double)r->load[j] / r->time[j] * 1e-9
                            : 0.0);
    }
  }
  printf("%.68s\n", bar);
  printf("%-22s %10lld %7.1f%% %11.4f %9.1f\n", "whole product",
         (long long)B->a->n, 100.0, r->makespan, B->flop / r->makespan * 1e-9);
  static const char *const how[] = {
      [MLSBA_STOP_BALANCED] = "device times within eps",
      [MLSBA_STOP_FIXED_POINT] = "at a fixed point: the models see no "
                                 "better distribution",
      [MLSBA_STOP_MAX_ITER] = "max-iter reached",
      [MLSBA_STOP_CYCLE] = "a distribution came back: a cycle"};
  printf("\n%s in %d run%s (%s), imbalance %.1f%%\n",
         r->converged ? "balanced" : "NOT converged", r->iterations,
         r->iterations == 1 ? "" : "s", r->stop >= 0 ? how[r->stop] : "one run",
         100 * r->imbalance);
  for (size_t j = 0; r->dropped && j < B->p; j++)
    if (r->dropped[j])
      printf("left out: %s (%s)\n", mlsba_platform_device_name(B->pl, j),
             r->dropped[j] == MLSBA_DROPPED_FAULT
                 ? "a device fault"
                 : "it computes on the other devices' cores, and they "
                   "ran faster without it");
  if (!B->sim)
    printf("the final distribution run 3 more times: median %.4f s, %.1f "
           "GFLOPS\n",
           r->steady, B->flop / r->steady * 1e-9);
  printf("partitioning: %.3f ms in total, %.3f ms per call; group-model "
         "points: %zu\n",
         1e3 * r->overhead_total, 1e3 * r->overhead_per_call, r->points_total);
  if (r->verified < 0)
    printf("verified: - (simulated devices compute nothing; times are "
           "virtual)\n");
  else
    printf("verified: %s (max relative error %.2g)\n",
           r->verified ? "yes" : "NO", r->rel_error);
}

/* Every row by the median of the rounds of measure_steady(); an
 * algorithm's last routine run is shown beside it. */
static void print_compare(const bench_t *B, const row_t *rows, size_t n) {
  double best = rows[0].steady;
  for (size_t i = 1; i < n; i++)
    best = rows[i].steady < best ? rows[i].steady : best;
  printf("\n%-22s %10s %10s %9s %8s %6s %10s %9s\n", "run", "last run",
         "median [s]", "GFLOPS", "vs best", "runs", "converged", "verified");
  for (size_t i = 0; i < n; i++)
    printf("%-22s %10.4f %10.4f %9.1f %8.3f %6d %10s %9s\n", rows[i].name,
           rows[i].makespan, rows[i].steady, B->flop / rows[i].steady * 1e-9,
           rows[i].steady / best, rows[i].iterations,
           rows[i].converged ? "yes" : "no",
           rows[i].verified < 0 ? "-"
           : rows[i].verified   ? "yes"
                                : "NO");
}

static int write_json(const char *path, json_t *doc) {
  int to_stdout = strcmp(path, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "%s: --json: cannot write '%s': %s\n", prog, path,
            strerror(errno));
    return EXIT_USAGE;
  }
  json_dumpf(doc, f, JSON_REAL_PRECISION(9));
  fputc('\n', f);
  if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) {
    fprintf(stderr, "%s: --json: error writing '%s'\n", prog, path);
    return 1;
  }
  return 0;
}

/* mkdir -p for the models directory. */
static int make_dirs(const char *path) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
      if (c == '\0')
        return 0;
      *p = c;
    }
  }
}

int main(int argc, char **argv) {
  args_t a;
  int status = parse_args(argc, argv, &a);
  if (status)
    return status;
  mlsba_algorithm_t algo = MLSBA_ALGO_MLSBA;
  if (mlsba_algorithm_from_name(a.algo, &algo) != 0)
    return bad_usage("--algo: ", mlsba_last_error());

  bench_t B = {.a = &a};
  int err = strcmp(a.platform, "auto") == 0
                ? mlsba_platform_discover(&B.pl)
                : mlsba_platform_load(a.platform, &B.pl);
  if (err) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    return err == MLSBA_EFORMAT || err == MLSBA_EIO ? EXIT_USAGE : 1;
  }
  B.p = mlsba_platform_num_devices(B.pl);
  B.q = mlsba_platform_num_groups(B.pl);
  size_t nsim = 0;
  for (size_t j = 0; j < B.p; j++)
    nsim += mlsba_platform_device_type(B.pl, j) == MLSBA_DEVICE_SIM;
  if (nsim && nsim < B.p) {
    fprintf(stderr,
            "%s: %s mixes simulated and real devices: their times (virtual "
            "and wall-clock) cannot be compared\n",
            prog, a.platform);
    mlsba_platform_destroy(B.pl);
    return EXIT_USAGE;
  }
  B.sim = nsim == B.p;
  B.flop = 2.0 * (double)a.m * (double)a.n * (double)a.k;
  B.progress = !a.quiet && isatty(STDOUT_FILENO) &&
               !(a.json && strcmp(a.json, "-") == 0);
  if (!a.models) {
    char host[128] = "localhost";
    gethostname(host, sizeof host - 1);
    snprintf(B.models, sizeof B.models, "models/%s", host);
  } else if (strcmp(a.models, "none") != 0) {
    /* Refused rather than cut short, which put the models elsewhere. */
    if (a.models[0] == '\0' || strlen(a.models) >= sizeof B.models) {
      mlsba_platform_destroy(B.pl);
      return bad_usage("--models must be a folder path of 1 to 511 bytes, "
                       "or none; got ",
                       a.models[0] ? "a longer one" : "\"\"");
    }
    snprintf(B.models, sizeof B.models, "%s", a.models);
  }
  if (B.models[0] && make_dirs(B.models) != 0) {
    fprintf(stderr, "%s: --models: cannot create '%s': %s\n", prog, B.models,
            strerror(errno));
    mlsba_platform_destroy(B.pl);
    return EXIT_USAGE;
  }

  /* The matrices: real ones for real devices; a simulated platform
   * computes nothing, so a 1 x n x 1 stand-in carries the columns. */
  size_t s = a.precision ? sizeof(double) : sizeof(float);
  int64_t mm = B.sim ? 1 : a.m, kk = B.sim ? 1 : a.k;
  void *A = calloc((size_t)(mm * kk), s), *Bm = calloc((size_t)(kk * a.n), s);
  void *C = calloc((size_t)(mm * a.n), s);
  if (!A || !Bm || !C) {
    fprintf(stderr, "%s: out of memory for %lldx%lldx%lld\n", prog,
            (long long)a.m, (long long)a.n, (long long)a.k);
    return 1;
  }
  B.g = (mlsba_gemm_t){.m = mm,
                       .n = a.n,
                       .k = kk,
                       .precision = a.precision,
                       .a = A,
                       .b = Bm,
                       .c = C};
  bench_fill_random(&B.g, 42);
  if ((err = mlsba_executor_create(B.pl, &B.ex)) != 0) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    return 1;
  }
  int to_stdout = a.json && strcmp(a.json, "-") == 0;
  if (!to_stdout)
    printf("%s: platform %s (%zu devices in %zu groups%s), C = A x B with "
           "m=%lld n=%lld k=%lld, %s precision\n",
           prog, a.platform, B.p, B.q, B.sim ? ", simulated" : "",
           (long long)a.m, (long long)a.n, (long long)a.k,
           a.precision ? "double" : "single");

  size_t nrows = a.compare ? MLSBA_ALGO_COUNT + B.p + 1 : 1, used = 0;
  row_t *rows = calloc(nrows, sizeof *rows);
  if (rows == NULL)
    return 1;
  if (!a.compare) {
    err = run_algorithm(&B, algo, 1, &rows[used++]);
  } else {
    /* Each algorithm starts cold, so that none profits from another's
     * models. */
    for (int al = 0; !err && al < MLSBA_ALGO_COUNT; al++)
      err = run_algorithm(&B, (mlsba_algorithm_t)al, 0, &rows[used++]);
    for (size_t j = 0; !err && j < B.p; j++) {
      int e = run_device_alone(&B, j, &rows[used]);
      if (e > 0) {
        row_free(&rows[used]);
        memset(&rows[used], 0, sizeof rows[used]);
      } else if (e == 0) {
        used++;
      } else {
        err = e;
      }
    }
    if (!err && run_blis(&B, &rows[used]) == 0)
      used++;
  }
  if (!err) {
    if (B.progress)
      printf("the final distributions again, %d rounds of every row\n",
             a.compare ? 5 : 3);
    err = measure_steady(&B, rows, used, a.compare ? 5 : 3);
  }
  if (err) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    status = err == MLSBA_ECAPACITY ? EXIT_USAGE : 1;
  } else {
    if (!to_stdout) {
      if (a.compare)
        print_compare(&B, rows, used);
      else
        print_row_detail(&B, &rows[0]);
    }
    if (a.json) {
      json_t *doc;
      if (a.compare) {
        json_t *list = json_array();
        for (size_t i = 0; i < used; i++)
          json_array_append_new(list, row_json(&B, &rows[i]));
        doc = json_pack("{s:o}", "results", list);
      } else {
        doc = row_json(&B, &rows[0]);
      }
      status = write_json(a.json, doc);
      json_decref(doc);
    }
    if (!status && a.plot) {
      const row_t *r = &rows[0];
      if (!r->models) {
        fprintf(stderr, "%s: --plot: no models to draw\n", prog);
        status = 1;
      } else if (bench_plot(a.plot, B.pl,
                            (const mlsba_model_t *const *)r->models,
                            r->hist_load, r->hist_time, (size_t)r->iterations,
                            r->makespan) != 0) {
        status = 1;
      } else if (!to_stdout) {
        printf("pictures in %s\n", a.plot);
      }
    }
    for (size_t i = 0; !status && i < used; i++)
      if (rows[i].verified == 0) {
        fprintf(stderr,
                "%s: %s: the product is WRONG (max relative error "
                "%.3g)\n",
                prog, rows[i].name, rows[i].rel_error);
        status = 1;
      }
  }
  for (size_t i = 0; i < nrows; i++)
    row_free(&rows[i]);
  free(rows);
  mlsba_executor_destroy(B.ex);
  mlsba_platform_destroy(B.pl);
  free(A);
  free(Bm);
  free(C);
  return cli_finish_stdout(prog) != 0 && status == 0 ? 1 : status;
}
