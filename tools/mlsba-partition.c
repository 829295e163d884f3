/* mlsba-partition: partition N units over a platform of known models (sim
 * devices) with any algorithm, without running anything. The command line
 * is in tools/help/mlsba-partition.txt, the JSON report in
 * docs/partition-report.md. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
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
        len += (size_t)snprintf(text + len, sizeof text - len, "%s %s %lld",
                                k ? " +" : "",
                                mlsba_platform_device_name(P->pl, dev),
                                (long long)r->beta[f0 + k]);
      }
      snprintf(head, sizeof head, "  group %zu: %lld = ", g,
               (long long)r->alpha[g]);
      text_wrap(f, head, 6, text);
    }
  }
}

int main(int argc, char **argv) {
  const char *platform_path = NULL, *n_arg = NULL, *algo_arg = "mlsba";
  const char *json_path = NULL, *unit_arg = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(mlsba_partition_help, stdout);
      return 0;
    }
    if (!strcmp(a, "--version")) {
      printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
      return 0;
    }
    const char **slot = !strcmp(a, "--platform")     ? &platform_path
                        : !strcmp(a, "--n")          ? &n_arg
                        : !strcmp(a, "--size")       ? &n_arg
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
  if (n_arg == NULL)
    return fail_usage("missing --n N (or --size N)", "");
  problem_t P = {.unit_bytes = -1};
  if (cli_parse_units(n_arg, INT64_C(1) << 53, &P.n) != 0)
    return fail_usage("--n must be a whole number from 0 to 2^53, got ", n_arg);
  if (unit_arg && cli_parse_double(unit_arg, 0, 1e30, &P.unit_bytes) != 0)
    return fail_usage("--unit-bytes must be a number of bytes from 0 to 1e30, "
                      "got ",
                      unit_arg);
  mlsba_algorithm_t only = MLSBA_ALGO_MLSBA;
  int all = strcmp(algo_arg, "all") == 0;
  if (!all && mlsba_algorithm_from_name(algo_arg, &only) != 0)
    return fail_usage("--algo: ", mlsba_last_error());

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
  mlsba_model_t **own = calloc(P.p, sizeof *own);
  result_t *res = calloc(nres, sizeof *res);
  int status = 0;
  if (!P.models || !P.size || !own || !res) {
    fprintf(stderr, "%s: out of memory\n", prog);
    status = 1;
    goto done;
  }
  if (mlsba_platform_grouped_models(pl, P.models, P.size) != 0) {
    fprintf(stderr, "%s: %s: %s\n", prog, platform_path, mlsba_last_error());
    status = EXIT_USAGE;
    goto done;
  }
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
      fprintf(stderr, "%s: %s: %s\n", prog, mlsba_algorithm_name(r->algo),
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
    int to_stdout = strcmp(json_path, "-") == 0;
    FILE *f = doc == NULL  ? NULL
              : to_stdout ? stdout
                          : fopen(json_path, "w");
    if (doc == NULL) { /* a makespan JSON cannot hold (infinite) */
      fprintf(stderr, "%s: --json: the results cannot be written as JSON\n",
              prog);
      status = EXIT_USAGE;
    } else if (f == NULL) {
      fprintf(stderr, "%s: --json: cannot write '%s': %s\n", prog, json_path,
              strerror(errno));
      status = EXIT_USAGE;
    } else {
      json_dumpf(doc, f, JSON_REAL_PRECISION(9));
      fputc('\n', f);
      if ((!to_stdout && fclose(f) != 0) || (to_stdout && fflush(f) != 0)) {
        fprintf(stderr, "%s: --json: error writing '%s'\n", prog, json_path);
        status = 1;
      }
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
  for (size_t j = 0; own && j < P.p; j++)
    mlsba_model_destroy(own[j]);
  free(own);
  free(P.models);
  free(P.size);
  mlsba_platform_destroy(pl);
  return status;
}
