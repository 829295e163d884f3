#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/text.h"

/* ---- progress ------------------------------------------------------------
 * On a terminal one line, redrawn in place (carriage return, clear to the
 * end of the line): the routine, its run, the imbalance and what it is
 * doing. With --progress elsewhere, the same as a line per run. What the
 * routine decided along the way (a device left out, a model found stale)
 * stays on the screen, wrapped, above the line. */

/* The tool runs one routine at a time, on one thread: one progress. */
static struct {
  char what[32];  /* the routine's algorithm, or "steady rounds" */
  char doing[80]; /* what it does now, from its last log line */
  int shown;      /* a line in place is on the screen */
} progress;

static void progress_show(bench_t *B, const char *line) {
  if (B->progress == 2) {
    printf("\r\033[K%s", line);
    progress.shown = 1;
  } else {
    printf("%s\n", line);
  }
  fflush(stdout);
}

static void progress_clear(void) {
  if (progress.shown)
    printf("\r\033[K");
  progress.shown = 0;
}

/* Whether the platform has an OpenCL device: the first run of the tool
 * compiles its kernels (CLBlast's: seconds with pocl, minutes for a
 * large set), which its time and imbalance then include. */
static int has_opencl(const bench_t *B) {
  for (size_t j = 0; j < B->p; j++)
    if (mlsba_platform_device_type(B->pl, j) == MLSBA_DEVICE_OPENCL)
      return 1;
  return 0;
}

void bench_progress_start(bench_t *B, const char *what) {
  static int compiled; /* the kernels of this process are built */
  snprintf(progress.what, sizeof progress.what, "%s", what);
  progress.doing[0] = '\0';
  int compiling = !compiled && has_opencl(B);
  compiled = 1;
  if (!B->progress)
    return;
  char line[TEXT_COLUMNS];
  text_fit(line, sizeof line, "  %s: first run, N/P each%s", progress.what,
           compiling ? ", compiling the OpenCL kernels (seconds)" : "");
  progress_show(B, line);
  if (compiling) /* the run's imbalance says why, too */
    snprintf(progress.doing, sizeof progress.doing,
             "the OpenCL kernels compiled");
}

void bench_progress_run(bench_t *B, const mlsba_iteration_t *it) {
  if (!B->progress)
    return;
  char line[TEXT_COLUMNS];
  text_fit(line, sizeof line, "  %s run %u: %.4f s, imbalance %.1f%%%s%s%s",
           progress.what, it->iteration, it->makespan,
           mlsba_imbalance_percent(it->imbalance, B->a->eps),
           it->remeasured ? " (re-measured)" : "",
           progress.doing[0] ? "; " : "", progress.doing);
  progress_show(B, line);
  progress.doing[0] = '\0';
}

/* The routine's log: its line per iteration is the progress line's
 * already, its last line (how it went) the table's; its decisions go
 * above the line, and the last one says what it is doing. */
void bench_progress_log(bench_t *B, const char *line) {
  if (!B->progress || strstr(line, ": iteration ") != NULL ||
      strstr(line, ": balanced in ") != NULL ||
      strstr(line, ": not balanced") != NULL)
    return;
  progress_clear();
  text_wrap(stdout, "  - ", 4, line);
  snprintf(progress.doing, sizeof progress.doing, "%s", line);
  if (B->progress == 2) { /* the live line says what it does now */
    char now[TEXT_COLUMNS];
    text_fit(now, sizeof now, "  %s: %s", progress.what, progress.doing);
    progress_show(B, now);
  }
  fflush(stdout);
}

void bench_progress_round(bench_t *B, int round, int rounds) {
  if (!B->progress)
    return;
  char line[TEXT_COLUMNS];
  text_fit(line, sizeof line,
           "  steady rounds: %d of %d (every row's final distribution once)",
           round, rounds);
  progress_show(B, line);
}

void bench_progress_end(bench_t *B) {
  if (B->progress)
    progress_clear();
  fflush(stdout);
}

/* ---- tables ---------------------------------------------------------------
 */

/* A simulated platform's speeds count columns of one product
 * ("columns_of"); at another shape a column is more or less work than its
 * profile's, which its GFLOPS do not show: said, not hidden. */
static void print_columns_of(const bench_t *B) {
  int64_t m, k;
  if (!B->sim || !mlsba_platform_columns_of(B->pl, &m, &k) ||
      (m == B->a->m && k == B->a->k))
    return;
  char text[512];
  snprintf(text, sizeof text,
           "the simulated speeds are columns of an m=%lld k=%lld product "
           "(its platform's columns_of): they run here as columns of m=%lld "
           "k=%lld, %.3g times the work each, so the times are the "
           "profile's and the GFLOPS %.3g times its rate; -m %lld -k %lld "
           "(or --size %lld when m = k) runs the shape they were made for",
           (long long)m, (long long)k, (long long)B->a->m, (long long)B->a->k,
           (double)B->a->m * (double)B->a->k / ((double)m * (double)k),
           (double)B->a->m * (double)B->a->k / ((double)m * (double)k),
           (long long)m, (long long)k, (long long)m);
  text_wrap(stdout, "note: ", 4, text);
}

void bench_print_header(const bench_t *B) {
  const bench_args_t *a = B->a;
  char text[512];
  snprintf(text, sizeof text, "C = A x B, m=%lld n=%lld k=%lld, %s precision",
           (long long)a->m, (long long)a->n, (long long)a->k,
           a->precision ? "double" : "single");
  text_wrap(stdout, "mlsba-bench: ", 4, text);
  snprintf(text, sizeof text, "%s: %zu device%s in %zu group%s%s",
           mlsba_platform_name(B->pl), B->p, B->p == 1 ? "" : "s", B->q,
           B->q == 1 ? "" : "s", B->sim ? ", simulated (virtual time)" : "");
  text_wrap(stdout, "platform ", 4, text);
  if (!B->sim) {
    bench_kernels_text(&B->kernels, text, sizeof text);
    text_wrap(stdout, "cores run: ", 4, text);
  }
  print_columns_of(B);
}

static double gflops(const bench_t *B, int64_t columns, double seconds) {
  double per_column = B->flop / (double)B->a->n;
  return seconds > 0 ? per_column * (double)columns / seconds * 1e-9 : 0.0;
}

/* A core device's GFLOPS over the best single-thread GEMM measured here;
 * < 0 for other devices or when there is no peak. */
static double of_peak(const bench_t *B, size_t dev, int64_t load, double time) {
  if (B->peak_gflops <= 0 || time <= 0 || load <= 0 ||
      mlsba_platform_device_type(B->pl, dev) != MLSBA_DEVICE_CPU)
    return -1;
  return gflops(B, load, time) / B->peak_gflops;
}

/* "one core's best GEMM here: ..." after a table. */
static void print_peak(const bench_t *B) {
  if (B->peak_gflops <= 0)
    return;
  char text[512];
  snprintf(text, sizeof text,
           "%.1f GFLOPS (%s; the best of %d rounds on %lld columns of this "
           "product, the most a core ran); %% peak: a core device's GFLOPS "
           "over it",
           B->peak_gflops, B->peak_by, B->peak_rounds,
           (long long)B->peak_columns);
  text_wrap(stdout, "one core's best GEMM here: ", 4, text);
}

/* Group-model points of the last partitioning, over all groups. */
static size_t points_total(const bench_t *B, const bench_row_t *r) {
  size_t total = 0;
  for (size_t g = 0; r->res.points && g < B->q; g++)
    total += r->res.points[g];
  return total;
}

/* Device j's name as the terminal gets it: control characters escaped
 * (a newline in a name would forge a table line). */
static const char *shown_name(const bench_t *B, size_t j, char *buf,
                              size_t size) {
  escape_bytes(buf, size, mlsba_platform_device_name(B->pl, j), 0);
  return buf;
}

/* What each device can hold (its max_load, its memory), into a new array
 * that the caller frees; NULL when it cannot be told. */
static int64_t *device_caps(const bench_t *B) {
  int64_t *cap = calloc(B->p, sizeof *cap);
  if (cap && mlsba_executor_max_loads(B->ex, &B->g, cap) != 0) {
    free(cap);
    return NULL;
  }
  return cap;
}

/* A device given all it can hold finishes early: its time is no
 * imbalance, since no distribution can give it more. (A core can hold the
 * whole product: alone, it has no cap.) */
static int at_cap(const bench_t *B, const int64_t *cap, const int64_t *load,
                  size_t j) {
  return cap && load[j] > 0 && load[j] >= cap[j] && cap[j] < B->a->n;
}

/* One line of the detail table (75 columns). Its last column: a core's
 * share of the single-core peak (peak >= 0), "at cap" for a device given
 * all it can hold, else "-". */
static void detail_line(const bench_t *B, const char *label, int64_t load,
                        double time, double peak, int capped) {
  char last[16] = "-";
  if (capped)
    snprintf(last, sizeof last, "at cap");
  else if (peak >= 0)
    snprintf(last, sizeof last, "%.0f%%", 100.0 * peak);
  printf("%-22.22s %10lld %7.1f%% %11.4f %9.1f %6s\n", label, (long long)load,
         100.0 * (double)load / (double)B->a->n, time, gflops(B, load, time),
         last);
}

/* The devices at their cap, named, and what that means for the
 * imbalance (docs/bench-report.md defines it so). */
static void print_capped(const bench_t *B, const bench_row_t *r,
                         const int64_t *cap) {
  char names[256] = "";
  size_t n = 0, used = 0;
  for (size_t j = 0; j < B->p; j++) {
    if (!at_cap(B, cap, r->load, j))
      continue;
    int w = snprintf(names + used, sizeof names - used, "%s%s", n ? ", " : "",
                     mlsba_platform_device_name(B->pl, j));
    used = w > 0 && used + (size_t)w < sizeof names ? used + (size_t)w : used;
    n++;
  }
  if (n == 0)
    return;
  char text[512];
  snprintf(text, sizeof text,
           "%s %s all %s can hold (%s memory cap), so %s early; the "
           "imbalance is taken over the devices that could take more",
           names, n == 1 ? "has" : "have", n == 1 ? "it" : "they",
           n == 1 ? "its" : "their", n == 1 ? "it finishes" : "they finish");
  text_wrap(stdout, "at cap: ", 4, text);
}

void bench_print_detail(const bench_t *B, const bench_row_t *r) {
  static const char bar[] = "----------------------------------------"
                            "-----------------------------------";
  int64_t *cap = device_caps(B);
  printf("\nthe routine's last run:\n%-22s %10s %8s %11s %9s %6s\n",
         "group / device", "load", "share", "time [s]", "GFLOPS", "% peak");
  printf("%s\n", bar);
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
    char label[96], name[48]; /* detail_line shows its first 22 */
    snprintf(label, sizeof label, "group %zu%s%s", g, size == 1 ? ": " : "",
             size == 1 ? shown_name(B, mlsba_platform_group_device(B->pl, g, 0),
                                    name, sizeof name)
                       : "");
    size_t j0 = mlsba_platform_group_device(B->pl, g, 0);
    detail_line(B, label, load, time,
                size == 1 ? of_peak(B, j0, load, time) : -1,
                size == 1 && at_cap(B, cap, r->load, j0));
    for (size_t k = 0; size > 1 && k < size; k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      snprintf(label, sizeof label, "  %s",
               shown_name(B, j, name, sizeof name));
      detail_line(B, label, r->load[j], r->time[j],
                  of_peak(B, j, r->load[j], r->time[j]),
                  at_cap(B, cap, r->load, j));
    }
  }
  printf("%s\n", bar);
  detail_line(B, "whole product", B->a->n, r->makespan, -1, 0);
  print_peak(B);
  char text[512];
  mlsba_balance_result_describe(&r->res, text, sizeof text);
  printf("\n");
  text_wrap(stdout, "", 0, text);
  print_capped(B, r, cap);
  free(cap);
  for (size_t j = 0; r->res.dropped && j < B->p; j++)
    if (r->res.dropped[j]) {
      char name[256];
      snprintf(text, sizeof text, "%s (%s)",
               shown_name(B, j, name, sizeof name),
               r->res.dropped[j] == MLSBA_DROPPED_FAULT
                   ? "a device fault"
                   : "it computes on the other devices' cores, and they ran "
                     "faster without it");
      text_wrap(stdout, "left out: ", 4, text);
    }
  /* One headline number, and what it is. */
  if (B->sim)
    snprintf(text, sizeof text,
             "%.4f s, %.1f GFLOPS: the routine's last run, in virtual time "
             "(simulated devices do not drift, so it is not run again)",
             r->steady, B->flop / r->steady * 1e-9);
  else
    snprintf(text, sizeof text,
             "%.4f s, %.1f GFLOPS: the median of 3 steady rounds of the "
             "final distribution, run again after the routine (its last "
             "run above: %.4f s)",
             r->steady, B->flop / r->steady * 1e-9, r->makespan);
  text_wrap(stdout, "headline: ", 4, text);
  printf("partitioning: %.3f ms in total, %.3f ms per call; group-model "
         "points: %zu\n",
         1e3 * r->res.overhead_total_s, 1e3 * r->res.overhead_per_call_s,
         points_total(B, r));
  if (r->verified < 0)
    printf("verified: - (simulated devices compute nothing; times are "
           "virtual)\n");
  else
    printf("verified: %s (max relative error %.2g)\n",
           r->verified ? "yes" : "NO", r->rel_error);
}

static const char *verified_word(const bench_row_t *r) {
  return r->verified < 0 ? "-" : r->verified ? "yes" : "NO";
}

/* Below the table: what each row ran, its split over the devices (file
 * order) and the imbalance of its last run. */
static void print_splits(const bench_t *B, const bench_row_t *rows, size_t n) {
  char text[4096];
  size_t len = 0;
  for (size_t j = 0; j < B->p && len < sizeof text; j++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", j ? " " : "",
                            mlsba_platform_device_name(B->pl, j));
  if (len < sizeof text)
    snprintf(text + len, sizeof text - len,
             ") and the imbalance of each row's last run:");
  printf("\n");
  text_wrap(stdout, "split (units per device: ", 4, text);
  for (size_t i = 0; i < n; i++) {
    const bench_row_t *r = &rows[i];
    if (r->load == NULL)
      continue; /* BLIS on all cores: no split */
    len = (size_t)snprintf(text, sizeof text, "imbalance %.1f%%:",
                           mlsba_imbalance_percent(r->imbalance, B->a->eps));
    for (size_t j = 0; j < B->p && len < sizeof text; j++)
      len += (size_t)snprintf(text + len, sizeof text - len, " %lld",
                              (long long)r->load[j]);
    char head[32];
    snprintf(head, sizeof head, "  %-15.15s ", r->name);
    text_wrap(stdout, head, 18, text);
  }
}

/* Whether rows i and j cannot be ranked by this run: the ranges of their
 * rounds overlap. */
static int overlap(const bench_row_t *a, const bench_row_t *b) {
  return a->steady_min <= b->steady_max && b->steady_min <= a->steady_max;
}

/* The fastest row (by median), and whether row i is within the noise of
 * it: for the fastest itself, whether any other row is. */
static size_t best_row(const bench_row_t *rows, size_t n) {
  size_t b = 0;
  for (size_t i = 1; i < n; i++)
    b = rows[i].steady < rows[b].steady ? i : b;
  return b;
}

static int within_noise_of_best(const bench_row_t *rows, size_t n, size_t i) {
  size_t b = best_row(rows, n);
  for (size_t j = 0; j < n; j++)
    if (j != i && (i == b || j == b) && overlap(&rows[i], &rows[j]))
      return 1;
  return 0;
}

/* Every row by the median of the steady rounds, with the spread of its
 * rounds; an algorithm's last routine run is shown beside it. */
void bench_print_compare(const bench_t *B, const bench_row_t *rows, size_t n) {
  double best = rows[best_row(rows, n)].steady;
  int ties = 0;
  /* 80 columns, with room for "openblas-all-cores". */
  printf("\n%-18s %8s %8s %6s %7s %7s %4s %-11s %3s\n", "run", "last [s]",
         "median", "spread", "GFLOPS", "vs best", "runs", "stop", "ok");
  for (size_t i = 0; i < n; i++) {
    const bench_row_t *r = &rows[i];
    int tie = !B->sim && within_noise_of_best(rows, n, i);
    ties |= tie;
    char spread[16] = "-";
    if (!B->sim)
      snprintf(spread, sizeof spread, "%.0f%%",
               100.0 * (r->steady_max - r->steady_min) / r->steady);
    double vs = r->steady / best;
    printf("%-18.18s %8.4f %8.4f %6s %7.1f %6.*f%c %4d %-11s %3s\n", r->name,
           r->makespan, r->steady, spread, B->flop / r->steady * 1e-9,
           vs < 10    ? 3
           : vs < 100 ? 2
                      : 1,
           vs, tie ? '~' : ' ', r->iterations,
           r->stop >= 0 ? mlsba_stop_reason_name((mlsba_stop_reason_t)r->stop)
                        : "-",
           verified_word(r));
  }
  for (size_t i = 0; i < n; i++)
    if (rows[i].blas != BENCH_BLAS_NONE) {
      char label[32];
      snprintf(label, sizeof label, "%s: ", rows[i].name);
      text_wrap(stdout, label, 4, rows[i].kernels);
    }
  print_peak(B);
  text_wrap(stdout, "", 0,
            B->sim ? "last: the routine's last run (a device alone: its run); "
                     "median: the same, as virtual time does not drift; vs "
                     "best: median over the best median; ok: verified"
                   : "last: the routine's last run (a device alone, BLIS: its "
                     "run); median [s]: the headline, the median of 5 steady "
                     "rounds in which every row runs its final distribution "
                     "once; spread: (slowest - fastest) / median of those "
                     "rounds; vs best: median over the best median; ok: the "
                     "product verified");
  if (ties)
    text_wrap(stdout, "~: ", 4,
              "the rounds of this row and of the fastest overlap: this run "
              "cannot rank them (the machine's noise is larger than their "
              "difference)");
  print_splits(B, rows, n);
}

/* ---- JSON (docs/bench-report.md) ------------------------------------------
 */

static json_t *row_json(const bench_t *B, const bench_row_t *r,
                        const int64_t *cap) {
  const bench_args_t *a = B->a;
  json_t *groups = json_array(), *history = json_array();
  json_t *per_group = json_array();
  const mlsba_balance_result_t *res = &r->res;
  for (size_t g = 0; r->load && g < B->q; g++) {
    json_t *devices = json_array();
    int64_t load = 0;
    double time = 0;
    for (size_t k = 0; k < mlsba_platform_group_size(B->pl, g); k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      load += r->load[j];
      time = r->time[j] > time ? r->time[j] : time;
      json_t *d = json_pack("{s:s, s:I, s:f, s:b}", "name",
                            mlsba_platform_device_name(B->pl, j), "load",
                            (json_int_t)r->load[j], "time", r->time[j],
                            "at_cap", at_cap(B, cap, r->load, j));
      if (!B->sim && mlsba_platform_device_type(B->pl, j) == MLSBA_DEVICE_CPU)
        json_object_set_new(d, "kernels", json_string(B->kernels.description));
      double peak = of_peak(B, j, r->load[j], r->time[j]);
      if (peak >= 0)
        json_object_set_new(d, "of_peak", json_real(peak));
      json_array_append_new(devices, d);
    }
    json_array_append_new(groups,
                          json_pack("{s:I, s:f, s:o}", "load", (json_int_t)load,
                                    "time", time, "devices", devices));
  }
  for (size_t g = 0; g < B->q; g++)
    json_array_append_new(
        per_group, json_integer(res->points ? (json_int_t)res->points[g] : 0));
  for (int it = 0; it < r->iterations; it++) {
    json_t *loads = json_array();
    for (size_t j = 0; r->load && j < B->p; j++)
      json_array_append_new(
          loads, json_integer(res->history_load
                                  ? res->history_load[(size_t)it * B->p + j]
                                  : r->load[j]));
    json_array_append_new(
        history,
        json_pack(
            "{s:i, s:f, s:f, s:o}", "iteration", it + 1, "makespan_s",
            res->history_makespan ? res->history_makespan[it] : r->makespan,
            "imbalance",
            res->history_imbalance ? res->history_imbalance[it] : r->imbalance,
            "loads", loads));
  }
  json_t *o = json_pack(
      "{s:s, s:s, s:I, s:I, s:I, s:s, s:i, s:b, s:f, s:f, s:f, s:{s:f, s:f},"
      " s:{s:I, s:o}}",
      "algorithm", r->name, "platform", B->platform, "m", (json_int_t)a->m, "n",
      (json_int_t)a->n, "k", (json_int_t)a->k, "precision",
      a->precision ? "double" : "single", "iterations", r->iterations,
      "converged", r->converged, "makespan_s", r->makespan, "gflops",
      B->flop / r->makespan * 1e-9, "imbalance", r->imbalance, "overhead_s",
      "total", res->overhead_total_s, "per_call", res->overhead_per_call_s,
      "points", "total", (json_int_t)points_total(B, r), "per_group",
      per_group);
  json_object_set_new(
      o, "verified", r->verified < 0 ? json_null() : json_boolean(r->verified));
  /* JSON holds no NaN or Inf: an error that is not finite (a NaN in C)
   * is null, with verified false. */
  json_object_set_new(o, "max_rel_error",
                      r->verified < 0 || !isfinite(r->rel_error)
                          ? json_null()
                          : json_real(r->rel_error));
  json_object_set_new(o, "groups", groups);
  json_object_set_new(o, "history", history);
  /* After the base fields: the steady median (five rounds with --compare,
   * else three), the devices left out (fault, or slower with them), those
   * of them dropped after a fault, why the routine stopped, and the
   * devices' run-to-run variation (why it may stop above eps). */
  json_object_set_new(o, "steady_s", json_real(r->steady));
  json_object_set_new(o, "steady_gflops",
                      json_real(B->flop / r->steady * 1e-9));
  json_t *left = json_array(), *faulty = json_array();
  for (size_t j = 0; res->dropped && j < B->p; j++) {
    const char *name = mlsba_platform_device_name(B->pl, j);
    if (res->dropped[j])
      json_array_append_new(left, json_string(name));
    if (res->dropped[j] == MLSBA_DROPPED_FAULT)
      json_array_append_new(faulty, json_string(name));
  }
  json_object_set_new(o, "left_out", left);
  json_object_set_new(o, "faulty", faulty);
  json_object_set_new(o, "stop",
                      r->stop < 0 ? json_null()
                                  : json_string(mlsba_stop_reason_name(
                                        (mlsba_stop_reason_t)r->stop)));
  json_object_set_new(o, "variation", json_real(res->variation));
  if (r->blas != BENCH_BLAS_NONE)
    json_object_set_new(o, "kernels", json_string(r->kernels));
  json_object_set_new(o, "steady_min_s", json_real(r->steady_min));
  json_object_set_new(o, "steady_max_s", json_real(r->steady_max));
  return o;
}

void bench_kernels_text(const mlsba_cpu_kernels_t *k, char *buf, size_t size) {
  const char *source;
  double choice_s, setup_s;
  mlsba_cpu_kernels_choice(&source, &choice_s, &setup_s);
  const char *how = !strcmp(source, "timed") ? "choice timed in this process"
                    : !strcmp(source, "retimed") ? "choice timed again in this "
                                                   "process"
                    : !strcmp(source, "cache")   ? "choice read from the cache"
                    : !strcmp(source, "forced")  ? "choice forced"
                                                 : "nothing to time";
  snprintf(buf, size, "%s; %s: %.3f s", k->description, how,
           choice_s > 0 ? choice_s : setup_s);
}

json_t *bench_kernels_json(const mlsba_cpu_kernels_t *k) {
  const char *source;
  double choice_s, setup_s;
  mlsba_cpu_kernels_choice(&source, &choice_s, &setup_s);
  json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "library", k->library,
                        "single", k->single_kernels, "double",
                        k->double_kernels, "detected", k->detected, "reason",
                        k->reason, "description", k->description);
  /* Per shape class and precision: the kernels and their speed when
   * timed. */
  json_t *classes = json_array();
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA_CPU_CLASS_COUNT; c++) {
      const char *name, *kernels;
      double g;
      if (mlsba_cpu_class_kernels((mlsba_precision_t)p, (mlsba_cpu_class_t)c,
                                  &name, &kernels, &g) == 0)
        json_array_append_new(classes,
                              json_pack("{s:s, s:s, s:s, s:f}", "precision",
                                        p ? "double" : "single", "class", name,
                                        "kernels", kernels, "gflops", g));
    }
  json_object_set_new(o, "classes", classes);
  /* What the choice cost this process, apart from any row's time. */
  json_object_set_new(o, "source", json_string(source));
  json_object_set_new(o, "choice_s", json_real(choice_s));
  json_object_set_new(o, "setup_s", json_real(setup_s));
  return o;
}

/* What the cores run and the best one core reaches, for the report's top
 * level (nothing on a simulated platform). */
static void machine_json(const bench_t *B, json_t *o) {
  if (B->sim)
    return;
  json_object_set_new(o, "cpu_kernels", bench_kernels_json(&B->kernels));
  if (B->peak_gflops > 0)
    json_object_set_new(o, "single_core_peak",
                        json_pack("{s:f, s:s, s:I, s:i}", "gflops",
                                  B->peak_gflops, "by", B->peak_by, "columns",
                                  (json_int_t)B->peak_columns, "rounds",
                                  B->peak_rounds));
}

json_t *bench_report_json(const bench_t *B, const bench_row_t *rows, size_t n) {
  int64_t *cap = device_caps(B);
  json_t *report;
  if (!B->a->compare) {
    report = row_json(B, &rows[0], cap);
  } else {
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
      json_t *o = row_json(B, &rows[i], cap);
      json_object_set_new(
          o, "within_noise_of_best",
          json_boolean(!B->sim && within_noise_of_best(rows, n, i)));
      json_array_append_new(list, o);
    }
    report = json_pack("{s:o}", "results", list);
  }
  free(cap);
  machine_json(B, report);
  return report;
}
