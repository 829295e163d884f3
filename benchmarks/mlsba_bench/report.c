#include "report.h"

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

void bench_progress_start(bench_t *B, const char *what) {
  snprintf(progress.what, sizeof progress.what, "%s", what);
  progress.doing[0] = '\0';
  if (!B->progress)
    return;
  char line[TEXT_COLUMNS];
  text_fit(line, sizeof line, "  %s: first run, N/P each", progress.what);
  progress_show(B, line);
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

/* ---- tables --------------------------------------------------------------- */

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
}

static double gflops(const bench_t *B, int64_t columns, double seconds) {
  double per_column = B->flop / (double)B->a->n;
  return seconds > 0 ? per_column * (double)columns / seconds * 1e-9 : 0.0;
}

/* Group-model points of the last partitioning, over all groups. */
static size_t points_total(const bench_t *B, const bench_row_t *r) {
  size_t total = 0;
  for (size_t g = 0; r->res.points && g < B->q; g++)
    total += r->res.points[g];
  return total;
}

/* One line of the detail table (68 columns). */
/* Device j's name as the terminal gets it: control characters escaped
 * (a newline in a name would forge a table line). */
static const char *shown_name(const bench_t *B, size_t j, char *buf,
                              size_t size) {
  escape_bytes(buf, size, mlsba_platform_device_name(B->pl, j), 0);
  return buf;
}

static void detail_line(const bench_t *B, const char *label, int64_t load,
                        double time) {
  printf("%-22.22s %10lld %7.1f%% %11.4f %9.1f\n", label, (long long)load,
         100.0 * (double)load / (double)B->a->n, time,
         gflops(B, load, time));
}

void bench_print_detail(const bench_t *B, const bench_row_t *r) {
  static const char bar[] = "----------------------------------------"
                            "----------------------------";
  printf("\nthe routine's last run:\n%-22s %10s %8s %11s %9s\n", "group / device", "load", "share",
         "time [s]", "GFLOPS");
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
    char label[64], name[48];
    snprintf(label, sizeof label, "group %zu%s%s", g, size == 1 ? ": " : "",
             size == 1 ? shown_name(B, mlsba_platform_group_device(B->pl, g, 0),
                                    name, sizeof name)
                       : "");
    detail_line(B, label, load, time);
    for (size_t k = 0; size > 1 && k < size; k++) {
      size_t j = mlsba_platform_group_device(B->pl, g, k);
      snprintf(label, sizeof label, "  %s",
               shown_name(B, j, name, sizeof name));
      detail_line(B, label, r->load[j], r->time[j]);
    }
  }
  printf("%s\n", bar);
  detail_line(B, "whole product", B->a->n, r->makespan);
  char text[512];
  mlsba_balance_result_describe(&r->res, text, sizeof text);
  printf("\n");
  text_wrap(stdout, "", 0, text);
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

/* Every row by the median of the steady rounds; an algorithm's last
 * routine run is shown beside it. */
void bench_print_compare(const bench_t *B, const bench_row_t *rows,
                         size_t n) {
  double best = rows[0].steady;
  for (size_t i = 1; i < n; i++)
    best = rows[i].steady < best ? rows[i].steady : best;
  printf("\n%-15s %9s %10s %8s %7s %4s %-11s %8s\n", "run", "last [s]",
         "median [s]", "GFLOPS", "vs best", "runs", "stop", "verified");
  for (size_t i = 0; i < n; i++) {
    const bench_row_t *r = &rows[i];
    printf("%-15.15s %9.4f %10.4f %8.1f %7.3f %4d %-11s %8s\n", r->name,
           r->makespan, r->steady, B->flop / r->steady * 1e-9,
           r->steady / best, r->iterations,
           r->stop >= 0 ? mlsba_stop_reason_name((mlsba_stop_reason_t)r->stop)
                        : "-",
           verified_word(r));
  }
  text_wrap(stdout, "", 0,
            B->sim ? "last: the routine's last run (a device alone: its run); "
                     "median: the same, as virtual time does not drift; vs "
                     "best: median over the best median"
                   : "last: the routine's last run (a device alone, BLIS: its "
                     "run); median: the headline, the median of 5 steady "
                     "rounds in which every row runs its final distribution "
                     "once; vs best: median over the best median");
}

/* ---- JSON (docs/bench-report.md) ------------------------------------------ */

static json_t *row_json(const bench_t *B, const bench_row_t *r) {
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
        json_pack("{s:i, s:f, s:f, s:o}", "iteration", it + 1, "makespan_s",
                  res->history_makespan ? res->history_makespan[it]
                                        : r->makespan,
                  "imbalance",
                  res->history_imbalance ? res->history_imbalance[it]
                                         : r->imbalance,
                  "loads", loads));
  }
  json_t *o = json_pack(
      "{s:s, s:s, s:I, s:I, s:I, s:s, s:i, s:b, s:f, s:f, s:f, s:{s:f, s:f},"
      " s:{s:I, s:o}}",
      "algorithm", r->name, "platform", B->platform, "m", (json_int_t)a->m,
      "n", (json_int_t)a->n, "k", (json_int_t)a->k, "precision",
      a->precision ? "double" : "single", "iterations", r->iterations,
      "converged", r->converged, "makespan_s", r->makespan, "gflops",
      B->flop / r->makespan * 1e-9, "imbalance", r->imbalance, "overhead_s",
      "total", res->overhead_total_s, "per_call", res->overhead_per_call_s,
      "points", "total", (json_int_t)points_total(B, r), "per_group",
      per_group);
  json_object_set_new(
      o, "verified", r->verified < 0 ? json_null() : json_boolean(r->verified));
  json_object_set_new(o, "max_rel_error",
                      r->verified < 0 ? json_null() : json_real(r->rel_error));
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
  return o;
}

json_t *bench_report_json(const bench_t *B, const bench_row_t *rows,
                          size_t n) {
  if (!B->a->compare)
    return row_json(B, &rows[0]);
  json_t *list = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(list, row_json(B, &rows[i]));
  return json_pack("{s:o}", "results", list);
}
