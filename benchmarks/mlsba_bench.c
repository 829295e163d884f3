/* mlsba-bench: balance a real matrix multiplication across the machine
 * with the self-adaptive routine and show how the load was balanced and
 * what it gained. The command line is in tools/help/mlsba-bench.txt, the
 * JSON report in docs/bench-report.md. The parts: mlsba_bench/cli.c
 * (arguments), runners.c (what runs), report.c (what is shown). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/output.h"
#include "common/paths.h"
#include "common/text.h"
#include "gemm_fill.h"
#include "mlsba.h"
#include "mlsba_bench/cli.h"
#include "mlsba_bench/factor.h"
#include "mlsba_bench/report.h"
#include "mlsba_bench/runners.h"
#include "plot.h"

/* Exit status for an error of the library: bad input is 2. */
static int fail(int err) {
  text_error(bench_prog, "%s", mlsba_last_error());
  return err == MLSBA_EFORMAT || err == MLSBA_EIO || err == MLSBA_ECAPACITY
             ? CLI_EXIT_USAGE
             : 1;
}

/* Every row --compare (or a single run) asks for, into rows; *used rows
 * are filled. */
static int run_rows(bench_t *B, bench_row_t *rows, size_t *used) {
  const bench_args_t *a = B->a;
  int err = 0;
  if (!a->compare)
    return (err = bench_run_algorithm(B, a->algo, 1, &rows[0]))
               ? err
               : (*used = 1, 0);
  /* Each algorithm starts cold, so that none profits from another's
   * models. */
  for (int al = 0; !err && al < MLSBA_ALGO_COUNT; al++)
    if (!(err = bench_run_algorithm(B, (mlsba_algorithm_t)al, 0, &rows[*used])))
      ++*used;
  for (size_t j = 0; !err && j < B->p; j++) {
    int e = bench_run_device_alone(B, j, &rows[*used]);
    if (e > 0)
      bench_row_free(&rows[*used]); /* it cannot hold the product */
    else if (e == 0)
      ++*used;
    else
      err = e;
  }
  if (!err) {
    int e = bench_run_blis(B, &rows[*used]);
    if (e == 0)
      ++*used;
    else if (e < 0)
      err = e;
  }
  if (!err) {
    const char *why;
    int e = bench_run_openblas(B, &rows[*used], &why);
    if (e == 0)
      ++*used;
    else if (e < 0)
      err = e;
    else if (why[0] && !B->sim && !a->quiet)
      fprintf(stderr, "%s: note: no OpenBLAS row: %s\n", bench_prog, why);
  }
  return err;
}

/* The pictures of the first row (an algorithm's). */
static int plot(bench_t *B, const bench_row_t *r) {
  int64_t *max = calloc(B->p, sizeof *max);
  bench_plot_t P = {.pl = B->pl,
                    .models = (const mlsba_model_t *const *)r->res.models,
                    .hist_load = r->res.history_load,
                    .hist_time = r->res.history_time,
                    .runs = (size_t)r->iterations,
                    .makespan = r->makespan,
                    .dropped = r->res.dropped,
                    .n = B->a->n};
  if (max && mlsba_executor_max_loads(B->ex, &B->g, max) == 0)
    P.max_load = max;
  int status = bench_plot(B->a->plot, &P) ? 1 : 0;
  free(max);
  return status;
}

/* The report, the JSON and the pictures of finished rows. */
static int report(bench_t *B, const bench_row_t *rows, size_t used) {
  const bench_args_t *a = B->a;
  int to_stdout = a->json && strcmp(a->json, "-") == 0, status = 0;
  if (!to_stdout) {
    if (a->compare)
      bench_print_compare(B, rows, used);
    else
      bench_print_detail(B, &rows[0]);
  }
  if (a->json) {
    json_t *doc = bench_report_json(B, rows, used);
    status =
        output_json(bench_prog, "--json", a->json, doc, JSON_REAL_PRECISION(9));
    json_decref(doc);
  }
  if (!status && a->plot) {
    status = plot(B, &rows[0]);
    if (!status && !to_stdout)
      printf("pictures in %s\n", a->plot);
  }
  for (size_t i = 0; !status && i < used; i++)
    if (rows[i].verified == 0) {
      fprintf(stderr,
              "%s: %s: the product is WRONG (max relative error %.3g)\n",
              bench_prog, rows[i].name, rows[i].rel_error);
      status = 1;
    }
  return status;
}

int main(int argc, char **argv) {
  bench_args_t a;
  int status = bench_parse_args(argc, argv, &a);
  if (status)
    return status == BENCH_ARGS_DONE ? cli_finish_stdout(bench_prog) : status;
  /* Destinations are checked before anything runs. */
  if ((a.json &&
       (status = paths_check_output_file(bench_prog, "--json", a.json))) ||
      (a.plot && (status = paths_make_dir(bench_prog, "--plot", a.plot))))
    return status;
  char models[4096] = "";
  bench_t B = {.a = &a, .platform = a.platform};
  if ((status = paths_load_platform(bench_prog, a.platform, &B.pl)))
    return status;
  bench_row_t *rows = NULL;
  void *A = NULL, *Bm = NULL, *C = NULL;
  size_t nrows = 0, used = 0;
  int err;
  B.p = mlsba_platform_num_devices(B.pl);
  B.q = mlsba_platform_num_groups(B.pl);
  size_t nsim = 0;
  for (size_t j = 0; j < B.p; j++)
    nsim += mlsba_platform_device_type(B.pl, j) == MLSBA_DEVICE_SIM;
  if (nsim && nsim < B.p) {
    text_error(bench_prog,
               "%s mixes simulated and real devices: their times (virtual "
               "and wall-clock) cannot be compared",
               a.platform);
    status = CLI_EXIT_USAGE;
    goto done;
  }
  B.sim = nsim == B.p;
  if (a.models && strcmp(a.models, "none") != 0) {
    /* Refused rather than cut short, which put the models elsewhere. */
    if (a.models[0] == '\0' || strlen(a.models) >= sizeof models) {
      status = cli_usage_error(bench_prog,
                               "--models must be a folder path (or none), "
                               "got ",
                               a.models[0] ? "one too long" : "\"\"");
      goto done;
    }
    snprintf(models, sizeof models, "%s", a.models);
  } else if (!a.models &&
             (status = paths_models(bench_prog, mlsba_platform_name(B.pl),
                                    B.sim, models, sizeof models)))
    goto done;
  /* One rule for every destination a user names: the folder itself is
   * made, never a chain of them; the cache folder is the tools' own. */
  if (models[0] &&
      (status = a.models ? paths_make_dir(bench_prog, "--models", models)
                         : paths_make_dirs(bench_prog, "--models", models)))
    goto done;
  B.models = models[0] ? models : NULL;
  if (a.op != BENCH_OP_GEMM) {
    status = bench_factor(&a, B.pl, B.sim, B.models);
    goto done;
  }
  B.flop = 2.0 * (double)a.m * (double)a.n * (double)a.k;
  int to_stdout = a.json && strcmp(a.json, "-") == 0;
  B.progress = a.quiet || to_stdout    ? 0
               : isatty(STDOUT_FILENO) ? 2
               : a.progress            ? 1
                                       : 0;

  /* The matrices: real ones for real devices; a simulated platform
   * computes nothing, so a 1 x n x 1 stand-in carries the columns. */
  size_t s = a.precision ? sizeof(double) : sizeof(float);
  int64_t mm = B.sim ? 1 : a.m, kk = B.sim ? 1 : a.k;
  A = calloc((size_t)(mm * kk), s);
  Bm = calloc((size_t)(kk * a.n), s);
  C = calloc((size_t)(mm * a.n), s);
  nrows = a.compare ? MLSBA_ALGO_COUNT + B.p + 2 : 1;
  rows = calloc(nrows, sizeof *rows);
  if (!A || !Bm || !C || !rows) {
    fprintf(stderr, "%s: out of memory for %lldx%lldx%lld\n", bench_prog,
            (long long)a.m, (long long)a.n, (long long)a.k);
    status = 1;
    goto done;
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
    status = fail(err);
    goto done;
  }
  /* The cores' kernels are chosen before anything is timed. */
  if (!B.sim)
    mlsba_cpu_kernels(&B.kernels);
  if (!to_stdout)
    bench_print_header(&B);
  err = run_rows(&B, rows, &used);
  if (!err)
    err = bench_measure_steady(&B, rows, used, a.compare ? 5 : 3);
  if (!err)
    err = bench_measure_peak(&B, 3);
  status = err ? fail(err) : report(&B, rows, used);
done:
  for (size_t i = 0; rows && i < nrows; i++)
    bench_row_free(&rows[i]);
  free(rows);
  mlsba_executor_destroy(B.ex);
  mlsba_platform_destroy(B.pl);
  free(A);
  free(Bm);
  free(C);
  return cli_finish_stdout(bench_prog) != 0 && status == 0 ? 1 : status;
}
