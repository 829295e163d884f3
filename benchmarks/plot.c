#include "plot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gnuplot.h"

static const char prog[] = "mlsba-bench: --plot";

static FILE *open_in(const char *dir, const char *name) {
  return gnuplot_open_in(prog, dir, name);
}

static void gp_string(FILE *f, const char *s) { gnuplot_string(f, s); }

/* Whether two models have the same points: devices of one kind pooled
 * into one model, drawn once under all their names. */
static int same_model(const mlsba_model_t *a, const mlsba_model_t *b) {
  size_t n = mlsba_model_num_points(a);
  if (n == 0 || n != mlsba_model_num_points(b))
    return 0;
  for (size_t i = 0; i < n; i++) {
    double xa, sa, xb, sb;
    mlsba_model_get_point(a, i, &xa, &sa);
    mlsba_model_get_point(b, i, &xb, &sb);
    if (xa != xb || sa != sb)
      return 0;
  }
  return 1;
}

static int left_out(const bench_plot_t *P, size_t j) {
  return P->dropped && P->dropped[j];
}

/* speed.dat: one block per device of measured points; curve.dat: the
 * model sampled densely, one block per device; timeline.dat: device
 * index, first-run time, last-run time. Numbers only: names go into the
 * script, quoted. */
static double write_data(FILE *pts, FILE *curve, FILE *tl,
                         const bench_plot_t *P) {
  size_t p = mlsba_platform_num_devices(P->pl);
  double xmax = 1;
  for (size_t j = 0; j < p; j++)
    for (size_t r = 0; r < P->runs; r++)
      if ((double)P->hist_load[r * p + j] > xmax)
        xmax = (double)P->hist_load[r * p + j];
  /* Room for the memory limits below the whole load. */
  for (size_t j = 0; P->max_load && j < p; j++)
    if (P->max_load[j] > 0 && P->max_load[j] < P->n &&
        (double)P->max_load[j] > xmax)
      xmax = (double)P->max_load[j];
  xmax *= 1.1;
  for (size_t j = 0; j < p; j++) {
    for (size_t i = 0; i < mlsba_model_num_points(P->models[j]); i++) {
      double x, s;
      mlsba_model_get_point(P->models[j], i, &x, &s);
      fprintf(pts, "%g %g\n", x, s);
    }
    /* From x > 0: the log scale has no room for a speed of 0. */
    for (int i = 1; i <= 400 && mlsba_model_num_points(P->models[j]); i++) {
      double x = xmax * i / 400.0, s;
      if (mlsba_model_speed(P->models[j], x, &s) == 0 && s > 0)
        fprintf(curve, "%g %g\n", x, s);
    }
    /* gnuplot needs a point in every block it is told to draw. */
    fprintf(pts, "%s\n\n", mlsba_model_num_points(P->models[j]) ? "" : "0 1");
    fprintf(curve, "%s\n\n", mlsba_model_num_points(P->models[j]) ? "" : "0 1");
  }
  for (size_t j = 0; j < p; j++)
    fprintf(tl, "%zu %g %g\n", j, P->hist_time[j],
            P->hist_time[(P->runs - 1) * p + j]);
  return xmax;
}

static void write_script(FILE *gp, const bench_plot_t *P, double xmax) {
  size_t p = mlsba_platform_num_devices(P->pl);
  fprintf(gp,
          "# Made by mlsba-bench --plot; run again in this folder with:\n"
          "#   gnuplot plot.gp\n"
          "do for [fmt in 'png svg'] {\n"
          "  if (fmt eq 'png') { set terminal pngcairo size 1000,650 "
          "noenhanced } else { set terminal svg size 1000,650 noenhanced }\n"
          "  set output 'speed.'.fmt\n"
          "  set title 'Speed functions (log scale), memory limits and "
          "the final distribution (makespan %.4g s)'\n"
          "  set xlabel 'load (columns)'; set ylabel 'speed (columns/s)'\n"
          "  set logscale y; set key below; set grid\n",
          P->makespan);
  /* A device's memory limit: a dotted line at the load it can hold, when
   * it is less than the whole load. */
  for (size_t j = 0; P->max_load && j < p; j++) {
    double m = (double)P->max_load[j];
    if (P->max_load[j] <= 0 || P->max_load[j] >= P->n || m > xmax)
      continue;
    fprintf(gp,
            "  set arrow %zu from %g, graph 0 to %g, graph 1 nohead dt 3 "
            "lc %zu\n  set label %zu ",
            j + 1, m, m, j + 1, j + 1);
    char text[160];
    snprintf(text, sizeof text, "%s holds %lld",
             mlsba_platform_device_name(P->pl, j), (long long)P->max_load[j]);
    gp_string(gp, text);
    fprintf(gp, " at %g, graph 0.03 rotate by 90 offset -0.8,0 front\n", m);
  }
  fprintf(gp, "  plot [0:%g] ", xmax);
  for (size_t j = 0; j < p; j++) {
    int drawn = 0;
    for (size_t k = 0; k < j && !drawn; k++)
      drawn = same_model(P->models[k], P->models[j]);
    if (drawn)
      continue;
    /* The title: the device, the others of its pooled model, and the
     * devices left out marked as such. */
    char title[512];
    size_t len = (size_t)snprintf(title, sizeof title, "%s%s",
                                  mlsba_platform_device_name(P->pl, j),
                                  left_out(P, j) ? " (left out)" : "");
    for (size_t k = j + 1; k < p && len < sizeof title; k++)
      if (same_model(P->models[j], P->models[k]))
        len += (size_t)snprintf(title + len, sizeof title - len, " = %s%s",
                                mlsba_platform_device_name(P->pl, k),
                                left_out(P, k) ? " (left out)" : "");
    fprintf(gp, "'curve.dat' index %zu with lines lw 2 dt %d lc %zu title ", j,
            left_out(P, j) ? 2 : 1, j + 1);
    gp_string(gp, title);
    fprintf(gp, ", 'speed.dat' index %zu with points pt %d lc %zu notitle, ", j,
            left_out(P, j) ? 6 : 7, j + 1);
  }
  fprintf(gp,
          "x / %.17g with lines dt 2 lc rgb 'black' title 'x / makespan'\n"
          "  unset logscale y; unset arrow; unset label\n"
          "  set output 'timeline.'.fmt\n"
          "  set title 'Device times, first and last run'\n"
          "  set xlabel 'time from the common start (s)'; unset ylabel\n"
          "  set ytics (",
          P->makespan);
  for (size_t j = 0; j < p; j++) {
    char label[160];
    snprintf(label, sizeof label, "%s%s", mlsba_platform_device_name(P->pl, j),
             left_out(P, j) ? " (left out)" : "");
    fputs(j ? ", " : "", gp);
    gp_string(gp, label);
    fprintf(gp, " %zu", j);
  }
  fprintf(gp,
          ")\n  set yrange [-0.7:%zu.7]; set style fill solid 0.6\n"
          "  plot 'timeline.dat' using 2:1:(0):2:($1-0.4):($1-0.05) with "
          "boxxyerror lc rgb '#bb5555' title 'first run', \\\n"
          "       'timeline.dat' using 3:1:(0):3:($1+0.05):($1+0.4) with "
          "boxxyerror lc rgb '#4477aa' title 'last run'\n"
          "  unset ytics; set ytics auto; unset yrange\n"
          "}\n",
          p - 1);
}

int bench_plot(const char *dir, const bench_plot_t *P) {
  FILE *pts = open_in(dir, "speed.dat"), *curve = open_in(dir, "curve.dat");
  FILE *tl = open_in(dir, "timeline.dat"), *gp = open_in(dir, "plot.gp");
  int bad = !pts || !curve || !tl || !gp;
  if (!bad) {
    write_script(gp, P, write_data(pts, curve, tl, P));
    bad = ferror(pts) | ferror(curve) | ferror(tl) | ferror(gp);
  }
  /* A file that cannot be written says why as it is closed. */
  FILE *all[] = {pts, curve, tl, gp};
  int unwritten = 0;
  for (size_t i = 0; i < 4; i++)
    if (all[i] && fclose(all[i]) != 0)
      unwritten = 1;
  if (bad || unwritten) {
    if (!unwritten)
      fprintf(stderr, "%s: error writing into %s\n", prog, dir);
    return -1;
  }
  return gnuplot_run(prog, dir, "plot.gp");
}

/* shares.dat: one block per row, a line per update step: the step, its
 * time, then every device's percent of its units. */
static void write_shares(FILE *f, const bench_shares_plot_t *P) {
  for (size_t r = 0; r < P->rows; r++) {
    const mlsba_factor_report_t *R = P->report[r];
    for (size_t k = 1; k < R->steps; k++) {
      fprintf(f, "%zu %g", k, R->step_seconds[k]);
      for (size_t i = 0; i < R->p; i++)
        fprintf(f, " %g",
                R->units[k] ? 100.0 * (double)R->share[k * R->p + i] /
                                  (double)R->units[k]
                            : 0.0);
      fputc('\n', f);
    }
    fputs("\n\n", f);
  }
}

static void write_shares_script(FILE *gp, const bench_shares_plot_t *P) {
  size_t p = mlsba_platform_num_devices(P->pl);
  fprintf(gp,
          "# Made by mlsba-bench --plot; run again in this folder with:\n"
          "#   gnuplot plot.gp\n"
          "do for [fmt in 'png svg'] {\n"
          "  if (fmt eq 'png') { set terminal pngcairo size 1000,%zu "
          "noenhanced } else { set terminal svg size 1000,%zu "
          "noenhanced }\n"
          "  set output 'shares.'.fmt\n"
          "  set multiplot layout %zu,1\n"
          "  set key outside right; set grid\n"
          "  set xlabel 'step'; set ylabel 'share of the update (%%)'\n"
          "  set yrange [0:100]; set y2label 'step time (s)'; "
          "set y2tics; set ytics nomirror\n",
          300 * P->rows + 100, 300 * P->rows + 100, P->rows);
  for (size_t r = 0; r < P->rows; r++) {
    fputs("  set title ", gp);
    gp_string(gp, P->name[r]);
    fputs("\n  plot ", gp);
    for (size_t i = 0; i < p; i++) {
      fprintf(gp,
              "'shares.dat' index %zu using 1:%zu with linespoints "
              "title ",
              r, i + 3);
      gp_string(gp, mlsba_platform_device_name(P->pl, i));
      fputs(", ", gp);
    }
    fprintf(gp,
            "'shares.dat' index %zu using 1:2 axes x1y2 with lines "
            "dt 2 lc black title 'step time'\n",
            r);
  }
  fputs("  unset multiplot\n}\n", gp);
}

int bench_plot_shares(const char *dir, const bench_shares_plot_t *P) {
  if (P->rows == 0)
    return 0;
  FILE *dat = open_in(dir, "shares.dat"), *gp = open_in(dir, "plot.gp");
  int bad = !dat || !gp;
  if (!bad) {
    write_shares(dat, P);
    write_shares_script(gp, P);
    bad = ferror(dat) | ferror(gp);
  }
  int unwritten = (dat && fclose(dat) != 0) | (gp && fclose(gp) != 0);
  if (bad || unwritten) {
    if (!unwritten)
      fprintf(stderr, "%s: error writing into %s\n", prog, dir);
    return -1;
  }
  return gnuplot_run(prog, dir, "plot.gp");
}
