/* mlsba-partition: partition N units over a platform of known models (sim
 * devices' profiles, measured devices' saved models) with any algorithm,
 * without running anything. The command line is in
 * tools/help/mlsba-partition.txt, the JSON report in
 * docs/partition-report.md. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/output.h"
#include "common/paths.h"
#include "common/text.h"
#include "common/timing.h"
#include "mlsba-partition_help.h" /* tools/help/mlsba-partition.txt */
#include "mlsba.h"

#define EXIT_USAGE CLI_EXIT_USAGE

static const char *prog = "mlsba-partition";

static int fail_usage(const char *what, const char *arg) {
  return cli_usage_error(prog, what, arg);
}

typedef struct {
  const mlsba_platform_t *pl;
  const mlsba_model_t **models;
  size_t *size, q, p;
  int64_t n;
  double unit_bytes; /* --unit-bytes: < 0 when not given */
} problem_t;

/* The product whose saved models a measured device's are: they are kept
 * per precision and shape (m x k; n is what is partitioned). */
typedef struct {
  const char *platform; /* as the user named it, for the hint */
  const char *models;   /* --models DIR, or NULL: the user's cache */
  int64_t m, k;         /* 0: not given */
  mlsba_precision_t precision;
} product_t;

typedef struct {
  mlsba_algorithm_t algo;
  int64_t *alpha, *beta;
  size_t *points;
  double makespan, overhead;
} result_t;

/* Runs one algorithm, repeating the call for a stable median time: at
 * least 5 calls and 0.2 s, at most 1001 calls, and only 3 when one call
 * takes more than 0.1 s. */
static int run(const problem_t *P, result_t *r) {
  enum { MAX_REPS = 1001 };
  static double times[MAX_REPS];
  mlsba_partition_info_t info;
  int reps = 0;
  double start = timing_now();
  for (;;) {
    double t0 = timing_now();
    int err = mlsba_partition_groups(r->algo, P->models, P->size, P->q, P->n,
                                     NULL, r->alpha, r->beta, r->points, &info);
    times[reps++] = timing_now() - t0;
    if (err)
      return err;
    double spent = timing_now() - start;
    if (reps == MAX_REPS || (reps >= 3 && times[0] > 0.1) ||
        (reps >= 5 && spent >= 0.2))
      break;
  }
  r->overhead = timing_median(times, (size_t)reps);
  r->makespan = info.makespan;
  return 0;
}

static json_t *int_array(const int64_t *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, json_integer(v[i]));
  return a;
}

static json_t *result_json(const problem_t *P, const result_t *r) {
  json_t *beta = json_array(), *per_group = json_array();
  size_t total = 0;
  for (size_t g = 0, f = 0; g < P->q; f += P->size[g++]) {
    json_array_append_new(beta, int_array(r->beta + f, P->size[g]));
    json_array_append_new(per_group, json_integer((json_int_t)r->points[g]));
    total += r->points[g];
  }
  json_t *o =
      json_pack("{s:s, s:I, s:o, s:o, s:f, s:{s:I, s:o}, s:f}", "algorithm",
                mlsba_algorithm_name(r->algo), "n", (json_int_t)P->n, "alpha",
                int_array(r->alpha, P->q), "beta", beta, "makespan",
                r->makespan, "points", "total", (json_int_t)total, "per_group",
                per_group, "overhead_s", r->overhead);
  if (o && P->unit_bytes >= 0)
    json_object_set_new(o, "unit_bytes", json_real(P->unit_bytes));
  return o;
}

/* With --unit-bytes, every device that has a host link ("link") moves its
 * share through it: its model becomes a copy with the link's affine cost
 * added (FPM plus communication), which every algorithm then balances. */
static int add_transfers(problem_t *P, mlsba_model_t **own) {
  for (size_t g = 0, j = 0; g < P->q; g++) {
    for (size_t k = 0; k < P->size[g]; k++, j++) {
      size_t dev = mlsba_platform_group_device(P->pl, g, k);
      mlsba_link_t link;
      double latency, per_unit;
      int err = mlsba_platform_device_link(P->pl, dev, &link);
      if (!err && !(link.bandwidth > 0))
        continue;
      if (!err)
        err = mlsba_link_transfer(&link, P->unit_bytes, &latency, &per_unit);
      if (!err)
        err = mlsba_model_clone(P->models[j], &own[j]);
      if (!err)
        err = mlsba_model_set_transfer(own[j], latency, per_unit);
      if (err)
        return err;
      P->models[j] = own[j];
    }
  }
  return 0;
}

/* The table: 80 columns; the loads of every group and device below it,
 * wrapped. */
static void print_table(FILE *f, const problem_t *P, const result_t *res,
                        size_t nres) {
  double best = res[0].makespan;
  for (size_t i = 1; i < nres; i++)
    best = res[i].makespan < best ? res[i].makespan : best;
  fprintf(f, "%s: %zu device%s in %zu group%s, N = %lld\n",
          mlsba_platform_name(P->pl), P->p, P->p == 1 ? "" : "s", P->q,
          P->q == 1 ? "" : "s", (long long)P->n);
  if (P->unit_bytes >= 0)
    fprintf(f, "times include each device's link, %g bytes a unit\n",
            P->unit_bytes);
  fputc('\n', f);
  fprintf(f, "%-13s %14s %8s %14s  %s\n", "algorithm", "makespan [s]",
          "vs best", "overhead [ms]", "group-model points");
  for (size_t i = 0; i < nres; i++) {
    const result_t *r = &res[i];
    size_t total = 0;
    char per[256] = "";
    for (size_t g = 0; g < P->q; g++) {
      total += r->points[g];
      if (strlen(per) < sizeof per - 32)
        snprintf(per + strlen(per), sizeof per - strlen(per), "%s%zu",
                 g ? "+" : "", r->points[g]);
    }
    char line[TEXT_COLUMNS];
    text_fit(line, sizeof line, "%-13s %14.4f %8.3f %14.4f  %zu (%s)",
             mlsba_algorithm_name(r->algo), r->makespan,
             best > 0 ? r->makespan / best : 1.0, 1e3 * r->overhead, total,
             per);
    fprintf(f, "%s\n", line);
  }
  for (size_t i = 0; i < nres; i++) {
    const result_t *r = &res[i];
    fprintf(f, "\n%s loads:\n", mlsba_algorithm_name(r->algo));
    for (size_t g = 0, f0 = 0; g < P->q; f0 += P->size[g++]) {
      char text[1024], head[64];
      size_t len = 0;
      text[0] = '\0';
      for (size_t k = 0; k < P->size[g] && len < sizeof text; k++) {
        size_t dev = mlsba_platform_group_device(P->pl, g, k);
        len += (size_t)snprintf(
            text + len, sizeof text - len, "%s %s %lld", k ? " +" : "",
            mlsba_platform_device_name(P->pl, dev), (long long)r->beta[f0 + k]);
      }
      snprintf(head, sizeof head, "  group %zu: %lld = ", g,
               (long long)r->alpha[g]);
      text_wrap(f, head, 6, text);
    }
  }
}

/* The model folder: --models DIR, or the user's cache of this host (where
 * mlsba-bench saves them). */
static int model_folder(const product_t *w, const mlsba_platform_t *pl,
                        char *dir, size_t size) {
  if (w->models) {
    snprintf(dir, size, "%s", w->models);
    return 0;
  }
  int status = paths_models(prog, mlsba_platform_name(pl), 0, dir, size);
  if (status == 0 && dir[0] == '\0') {
    text_error(prog, "MLSBA_CACHE_DIR=none keeps no saved models: name "
                     "their folder with --models DIR");
    return EXIT_USAGE;
  }
  return status;
}

/* One measured device's saved model into *model; 0, or the exit status
 * after a line that says what is missing and how to make it. */
static int saved_model(mlsba_executor_t *ex, const mlsba_load_t *load,
                       const product_t *w, const char *dir,
                       const mlsba_platform_t *pl, size_t j,
                       mlsba_model_t **model) {
  char path[1024], text[8192], head[32];
  int err = mlsba_model_load_saved(ex, j, load, dir, model, path, sizeof path);
  snprintf(head, sizeof head, "%s: ", prog);
  if (err == MLSBA_EIO) {
    snprintf(text, sizeof text,
             "%s has no saved model for this product (%s, m=%lld k=%lld) "
             "in '%s': measure it first (mlsba-bench --platform %s -m %lld "
             "-n N -k %lld%s), or name the folder with --models DIR",
             mlsba_platform_device_name(pl, j),
             w->precision == MLSBA_PRECISION_DOUBLE ? "double" : "single",
             (long long)w->m, (long long)w->k, dir, w->platform,
             (long long)w->m, (long long)w->k,
             w->precision == MLSBA_PRECISION_DOUBLE ? " --precision double"
                                                    : "");
    text_wrap(stderr, head, 4, text);
  } else if (err) {
    text_wrap(stderr, head, 4, mlsba_last_error());
  }
  return err ? EXIT_USAGE : 0;
}

/* The first measured device (cpu, opencl: its model is saved, not in the
 * platform file), or NULL. */
static const char *first_measured(const mlsba_platform_t *pl) {
  for (size_t j = 0; j < mlsba_platform_num_devices(pl); j++)
    if (mlsba_platform_device_type(pl, j) != MLSBA_DEVICE_SIM)
      return mlsba_platform_device_name(pl, j);
  return NULL;
}

/* Every device's model in group order (P->models, P->size): a simulated
 * device's profile, a measured device's saved model (owned[j], to
 * destroy). 0, or the exit status after a line on stderr. */
static int gather_models(problem_t *P, const product_t *w,
                         mlsba_model_t **owned) {
  const mlsba_platform_t *pl = P->pl;
  const char *measured = first_measured(pl);
  if (measured == NULL) {
    if (mlsba_platform_grouped_models(pl, P->models, P->size) == 0)
      return 0;
    text_error(prog, "%s: %s", w->platform, mlsba_last_error());
    return EXIT_USAGE;
  }
  if (w->m == 0 || w->k == 0) {
    char what[256];
    snprintf(what, sizeof what,
             "%.64s is measured, and its saved models are per product: give "
             "the product's shape, --size N or -m M -k K",
             measured);
    return fail_usage(what, "");
  }
  char dir[4096];
  int status = model_folder(w, pl, dir, sizeof dir);
  if (status)
    return status;
  /* The load names the files and keys, as the balancer's did; nothing
   * runs, so one float stands for the matrices. */
  static float stand_in;
  mlsba_gemm_t g = {.m = w->m,
                    .n = P->n > 0 ? P->n : 1,
                    .k = w->k,
                    .precision = w->precision,
                    .a = &stand_in,
                    .b = &stand_in,
                    .c = &stand_in};
  mlsba_executor_t *ex = NULL;
  mlsba_load_t *load = NULL;
  int err = mlsba_executor_create(pl, &ex);
  if (!err)
    err = mlsba_load_gemm(&g, &load);
  if (err) {
    text_error(prog, "%s", mlsba_last_error());
    status = 1;
  }
  for (size_t j = 0; !status && j < P->p; j++)
    if (mlsba_platform_device_type(pl, j) != MLSBA_DEVICE_SIM)
      status = saved_model(ex, load, w, dir, pl, j, &owned[j]);
  for (size_t g0 = 0, k = 0; !status && g0 < P->q; g0++) {
    P->size[g0] = mlsba_platform_group_size(pl, g0);
    for (size_t i = 0; i < P->size[g0]; i++, k++) {
      size_t j = mlsba_platform_group_device(pl, g0, i);
      P->models[k] = owned[j] ? owned[j] : mlsba_platform_device_model(pl, j);
    }
  }
  mlsba_load_destroy(load);
  mlsba_executor_destroy(ex);
  return status;
}

typedef struct {
  int all;               /* --algo all */
  mlsba_algorithm_t one; /* otherwise */
} algo_choice_t;

/* The command line: what tools/help/mlsba-partition.txt lists. */
typedef struct {
  product_t w;       /* --platform, -m, -k, --precision, --models */
  int64_t n, size;   /* --n, --size: -1 when not given */
  double unit_bytes; /* --unit-bytes: -1 when not given */
  const char *json;
  algo_choice_t algo;
} args_t;

/* --algo: a name of the algorithm table, or all. */
static int parse_algo(const char *v, void *to, char *why, size_t size) {
  algo_choice_t *c = to;
  c->all = strcmp(v, "all") == 0;
  if (c->all || mlsba_algorithm_from_name(v, &c->one) == 0)
    return 0;
  snprintf(why, size, "--algo: %s, or all", mlsba_last_error());
  return 1;
}

static const char *const precisions[] = {"single", "double", NULL};

static const opt_t options[] = {
    {"--platform", OPT_TEXT, OPT_AT(args_t, w.platform)},
    {"--n", OPT_UNITS, OPT_AT(args_t, n), .hi = INT64_C(1) << 53,
     .must = "a whole number from 0 to 2^53"},
    {"--size", OPT_UNITS, OPT_AT(args_t, size), .hi = INT64_C(1) << 53,
     .must = "a whole number from 0 to 2^53"},
    {"-m", OPT_UNITS, OPT_AT(args_t, w.m), .lo = 1, .hi = INT64_C(1) << 31,
     .must = "a whole number from 1 to 2^31"},
    {"-k", OPT_UNITS, OPT_AT(args_t, w.k), .lo = 1, .hi = INT64_C(1) << 31,
     .must = "a whole number from 1 to 2^31"},
    {"--precision", OPT_CHOICE, OPT_AT(args_t, w.precision),
     .choices = precisions, .must = "single or double"},
    {"--models", OPT_TEXT, OPT_AT(args_t, w.models), .nonempty = 1,
     .must = "a folder path"},
    {"--algo", OPT_CUSTOM, OPT_AT(args_t, algo), .parse = parse_algo},
    {"--json", OPT_TEXT, OPT_AT(args_t, json)},
    {"--unit-bytes", OPT_REAL, OPT_AT(args_t, unit_bytes), .max = 1e30,
     .must = "a number of bytes from 0 to 1e30"},
};

/* The options that go together or exclude each other: 0, or the exit
 * status after a line naming the problem. */
static int check_args(args_t *a) {
  product_t *w = &a->w;
  if (w->platform == NULL)
    return fail_usage("missing --platform NAME|FILE", "");
  if (a->n >= 0 && a->size >= 0)
    return fail_usage("--n and --size exclude each other", "");
  if (a->n < 0 && a->size < 0)
    return fail_usage("missing --n N (or --size N)", "");
  if (a->size >= 0 && (w->m || w->k))
    return fail_usage("--size N and -m M -k K exclude each other", "");
  if (!w->m != !w->k)
    return fail_usage("-m M and -k K go together", "");
  if (a->size >= 0)
    w->m = w->k = a->size;
  return 0;
}

/* The command line read and checked: OPTS_RUN to go on; otherwise the
 * tool ends with *status (after --help, --version or a line naming the
 * problem). */
static int parse_args(int argc, char **argv, args_t *a, int *status) {
  *a = (args_t){.n = -1, .size = -1, .unit_bytes = -1};
  a->algo.one = MLSBA_ALGO_MLSBA;
  a->w.precision = MLSBA_PRECISION_SINGLE;
  const opts_table_t table = OPTS_TABLE(options);
  int outcome =
      opts_read(prog, mlsba_partition_help, &table, argc, argv, a, status);
  if (outcome == OPTS_RUN && (*status = check_args(a)) != 0)
    return OPTS_USAGE;
  return outcome;
}

/* The table and, with --json, the report; 0 or the exit status. */
static int write_outputs(const args_t *a, const problem_t *P,
                         const result_t *res, size_t nres) {
  const char *json_path = a->json;
  int all = a->algo.all, status = 0;
  if (json_path == NULL || strcmp(json_path, "-") != 0)
    print_table(stdout, P, res, nres);
  if (json_path) {
    json_t *doc;
    if (all) {
      json_t *list = json_array();
      for (size_t i = 0; i < nres; i++)
        json_array_append_new(list, result_json(P, &res[i]));
      doc = json_pack("{s:o}", "results", list);
    } else {
      doc = result_json(P, &res[0]);
    }
    if (doc == NULL) { /* a makespan JSON cannot hold (infinite) */
      fprintf(stderr, "%s: --json: the results cannot be written as JSON\n",
              prog);
      status = EXIT_USAGE;
    } else {
      status =
          output_json(prog, "--json", json_path, doc, JSON_REAL_PRECISION(9));
    }
    json_decref(doc);
  }
  return status;
}

/* Every algorithm asked for, run on the problem into res[nres]; 0 or the
 * exit status after a line on stderr. */
static int run_all(const args_t *a, const problem_t *P, result_t *res,
                   size_t nres) {
  for (size_t i = 0; i < nres; i++) {
    result_t *r = &res[i];
    r->algo = a->algo.all ? (mlsba_algorithm_t)i : a->algo.one;
    r->alpha = calloc(P->q, sizeof *r->alpha);
    r->beta = calloc(P->p, sizeof *r->beta);
    r->points = calloc(P->q, sizeof *r->points);
    if (!r->alpha || !r->beta || !r->points) {
      fprintf(stderr, "%s: out of memory\n", prog);
      return 1;
    }
    int err = run(P, r);
    if (err) {
      text_error(prog, "%s: %s", mlsba_algorithm_name(r->algo),
                 mlsba_last_error());
      return err == MLSBA_ECAPACITY || err == MLSBA_EINVAL ? EXIT_USAGE : 1;
    }
  }
  return 0;
}

/* What main() allocates for a platform's p devices and q groups, and
 * frees at the end. */
typedef struct {
  mlsba_model_t **owned; /* measured devices' saved models */
  mlsba_model_t **own;   /* models with transfers (--unit-bytes) */
  result_t *res;
  size_t nres;
} work_t;

static int work_alloc(problem_t *P, work_t *k, size_t nres) {
  P->models = calloc(P->p, sizeof *P->models);
  P->size = calloc(P->q, sizeof *P->size);
  k->owned = calloc(P->p, sizeof *k->owned);
  k->own = calloc(P->p, sizeof *k->own);
  k->res = calloc(nres, sizeof *k->res);
  k->nres = nres;
  if (P->models && P->size && k->owned && k->own && k->res)
    return 0;
  fprintf(stderr, "%s: out of memory\n", prog);
  return 1;
}

static void work_free(problem_t *P, work_t *k) {
  for (size_t i = 0; k->res && i < k->nres; i++) {
    free(k->res[i].alpha);
    free(k->res[i].beta);
    free(k->res[i].points);
  }
  free(k->res);
  for (size_t j = 0; k->owned && j < P->p; j++)
    mlsba_model_destroy(k->owned[j]);
  free(k->owned);
  for (size_t j = 0; k->own && j < P->p; j++)
    mlsba_model_destroy(k->own[j]);
  free(k->own);
  free(P->models);
  free(P->size);
}

/* --unit-bytes counts host links: on a platform without any it would
 * change nothing while the report said that times include them. 0, or
 * the usage status after a line. */
static int check_links(const mlsba_platform_t *pl, double unit_bytes) {
  if (unit_bytes < 0)
    return 0;
  for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++) {
    mlsba_link_t link;
    if (mlsba_platform_device_link(pl, i, &link) == 0 && link.bandwidth > 0)
      return 0;
  }
  text_error(prog,
             "--unit-bytes: no device of %s has a host link (\"link\" in "
             "its platform file), so it would change nothing",
             mlsba_platform_name(pl));
  return CLI_EXIT_USAGE;
}

int main(int argc, char **argv) {
  args_t a;
  int status = 0;
  if (parse_args(argc, argv, &a, &status) != OPTS_RUN)
    return status;
  if (a.json && (status = paths_check_output_file(prog, "--json", a.json)))
    return status;
  mlsba_platform_t *pl = NULL;
  if ((status = paths_load_platform(prog, a.w.platform, &pl)) != 0)
    return status;
  if ((status = check_links(pl, a.unit_bytes)) != 0) {
    mlsba_platform_destroy(pl);
    return status;
  }
  problem_t P = {.pl = pl,
                 .n = a.n >= 0 ? a.n : a.size,
                 .unit_bytes = a.unit_bytes,
                 .p = mlsba_platform_num_devices(pl),
                 .q = mlsba_platform_num_groups(pl)};
  work_t k = {0};
  status = work_alloc(&P, &k, a.algo.all ? MLSBA_ALGO_COUNT : 1);
  if (!status)
    status = gather_models(&P, &a.w, k.owned);
  if (!status && P.unit_bytes >= 0 && add_transfers(&P, k.own) != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, a.w.platform, mlsba_last_error());
    status = 1;
  }
  if (!status)
    status = run_all(&a, &P, k.res, k.nres);
  if (!status)
    status = write_outputs(&a, &P, k.res, k.nres);
  if (cli_finish_stdout(prog) != 0 && status == 0)
    status = 1;
  work_free(&P, &k);
  mlsba_platform_destroy(pl);
  return status;
}
