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
  return paths_models(prog, mlsba_platform_name(pl), 0, dir, size);
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

int main(int argc, char **argv) {
  const char *platform_path = NULL, *n_arg = NULL, *algo_arg = "mlsba";
  const char *json_path = NULL, *size_arg = NULL, *m_arg = NULL, *k_arg = NULL;
  const char *unit_arg = NULL;
  const char *precision_arg = "single";
  product_t w = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      paths_print_help(stdout, mlsba_partition_help);
      return cli_finish_stdout(prog);
    }
    if (!strcmp(a, "--version")) {
      printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
      return cli_finish_stdout(prog);
    }
    const char **slot = !strcmp(a, "--platform")     ? &platform_path
                        : !strcmp(a, "--n")          ? &n_arg
                        : !strcmp(a, "--size")       ? &size_arg
                        : !strcmp(a, "-m")           ? &m_arg
                        : !strcmp(a, "-k")           ? &k_arg
                        : !strcmp(a, "--precision")  ? &precision_arg
                        : !strcmp(a, "--models")     ? &w.models
                        : !strcmp(a, "--algo")       ? &algo_arg
                        : !strcmp(a, "--json")       ? &json_path
                        : !strcmp(a, "--unit-bytes") ? &unit_arg
                                                     : NULL;
    if (slot == NULL)
      return fail_usage("unknown option ", a);
    if (i + 1 >= argc)
      return fail_usage("a value is missing after ", a);
    *slot = argv[++i];
  }
  if (platform_path == NULL)
    return fail_usage("missing --platform NAME|FILE", "");
  if (n_arg && size_arg)
    return fail_usage("--n and --size exclude each other", "");
  if (n_arg == NULL && size_arg == NULL)
    return fail_usage("missing --n N (or --size N)", "");
  if (size_arg && (m_arg || k_arg))
    return fail_usage("--size N and -m M -k K exclude each other", "");
  if (!m_arg != !k_arg)
    return fail_usage("-m M and -k K go together", "");
  problem_t P = {.unit_bytes = -1};
  if (cli_parse_units(n_arg ? n_arg : size_arg, INT64_C(1) << 53, &P.n) != 0)
    return fail_usage(n_arg ? "--n must be a whole number from 0 to 2^53, got "
                            : "--size must be a whole number from 0 to 2^53, "
                              "got ",
                      n_arg ? n_arg : size_arg);
  w.platform = platform_path;
  if (size_arg)
    w.m = w.k = P.n;
  if (m_arg && (cli_parse_units(m_arg, INT64_C(1) << 31, &w.m) || w.m < 1))
    return fail_usage("-m must be a whole number from 1 to 2^31, got ", m_arg);
  if (k_arg && (cli_parse_units(k_arg, INT64_C(1) << 31, &w.k) || w.k < 1))
    return fail_usage("-k must be a whole number from 1 to 2^31, got ", k_arg);
  if (strcmp(precision_arg, "single") && strcmp(precision_arg, "double"))
    return fail_usage("--precision must be single or double, got ",
                      precision_arg);
  w.precision = strcmp(precision_arg, "double") ? MLSBA_PRECISION_SINGLE
                                                : MLSBA_PRECISION_DOUBLE;
  if (w.models && w.models[0] == '\0')
    return fail_usage("--models must be a folder path, got \"\"", "");
  if (unit_arg && cli_parse_double(unit_arg, 0, 1e30, &P.unit_bytes) != 0)
    return fail_usage("--unit-bytes must be a number of bytes from 0 to 1e30, "
                      "got ",
                      unit_arg);
  mlsba_algorithm_t only = MLSBA_ALGO_MLSBA;
  int all = strcmp(algo_arg, "all") == 0;
  if (!all && mlsba_algorithm_from_name(algo_arg, &only) != 0) {
    char why[512];
    snprintf(why, sizeof why, "%s, or all", mlsba_last_error());
    return fail_usage("--algo: ", why);
  }

  int checked =
      json_path ? paths_check_output_file(prog, "--json", json_path) : 0;
  mlsba_platform_t *pl = NULL;
  if (!checked)
    checked = paths_load_platform(prog, platform_path, &pl);
  if (checked)
    return checked;
  P.pl = pl;
  P.p = mlsba_platform_num_devices(pl);
  P.q = mlsba_platform_num_groups(pl);
  size_t nres = all ? MLSBA_ALGO_COUNT : 1;
  P.models = calloc(P.p, sizeof *P.models);
  P.size = calloc(P.q, sizeof *P.size);
  mlsba_model_t **owned = calloc(P.p, sizeof *owned);
  mlsba_model_t **own = calloc(P.p, sizeof *own); /* with transfers */
  result_t *res = calloc(nres, sizeof *res);
  int status = 0;
  if (!P.models || !P.size || !owned || !own || !res) {
    fprintf(stderr, "%s: out of memory\n", prog);
    status = 1;
    goto done;
  }
  if ((status = gather_models(&P, &w, owned)) != 0)
    goto done;
  if (P.unit_bytes >= 0 && add_transfers(&P, own) != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, platform_path, mlsba_last_error());
    status = 1;
    goto done;
  }
  for (size_t i = 0; i < nres; i++) {
    result_t *r = &res[i];
    r->algo = all ? (mlsba_algorithm_t)i : only;
    r->alpha = calloc(P.q, sizeof *r->alpha);
    r->beta = calloc(P.p, sizeof *r->beta);
    r->points = calloc(P.q, sizeof *r->points);
    if (!r->alpha || !r->beta || !r->points) {
      fprintf(stderr, "%s: out of memory\n", prog);
      status = 1;
      goto done;
    }
    int err = run(&P, r);
    if (err) {
      text_error(prog, "%s: %s", mlsba_algorithm_name(r->algo),
                 mlsba_last_error());
      status = err == MLSBA_ECAPACITY || err == MLSBA_EINVAL ? EXIT_USAGE : 1;
      goto done;
    }
  }
  if (json_path == NULL || strcmp(json_path, "-") != 0)
    print_table(stdout, &P, res, nres);
  if (json_path) {
    json_t *doc;
    if (all) {
      json_t *list = json_array();
      for (size_t i = 0; i < nres; i++)
        json_array_append_new(list, result_json(&P, &res[i]));
      doc = json_pack("{s:o}", "results", list);
    } else {
      doc = result_json(&P, &res[0]);
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
done:
  if (cli_finish_stdout(prog) != 0 && status == 0)
    status = 1;
  for (size_t i = 0; res && i < nres; i++) {
    free(res[i].alpha);
    free(res[i].beta);
    free(res[i].points);
  }
  free(res);
  for (size_t j = 0; owned && j < P.p; j++)
    mlsba_model_destroy(owned[j]);
  free(owned);
  for (size_t j = 0; own && j < P.p; j++)
    mlsba_model_destroy(own[j]);
  free(own);
  free(P.models);
  free(P.size);
  mlsba_platform_destroy(pl);
  return status;
}
