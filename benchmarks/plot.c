#include "plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static FILE *open_in(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL)
    fprintf(stderr, "mlsba-bench: --plot: cannot write %s: %s\n", path,
            strerror(errno));
  return f;
}

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

int bench_plot(const char *dir, const mlsba_platform_t *pl,
               const mlsba_model_t *const *models, const int64_t *hist_load,
               const double *hist_time, size_t runs, double makespan) {
  size_t p = mlsba_platform_num_devices(pl);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "mlsba-bench: --plot: cannot create %s: %s\n", dir,
            strerror(errno));
    return -1;
  }
  /* speed.dat: one block per device of measured points; curve.dat: the
   * piecewise-linear model sampled densely, one block per device. */
  FILE *pts = open_in(dir, "speed.dat"), *curve = open_in(dir, "curve.dat");
  FILE *tl = open_in(dir, "timeline.dat"), *gp = open_in(dir, "plot.gp");
  if (!pts || !curve || !tl || !gp) {
    if (pts)
      fclose(pts);
    if (curve)
      fclose(curve);
    if (tl)
      fclose(tl);
    if (gp)
      fclose(gp);
    return -1;
  }
  double xmax = 1;
  for (size_t j = 0; j < p; j++)
    for (size_t r = 0; r < runs; r++)
      if ((double)hist_load[r * p + j] > xmax)
        xmax = (double)hist_load[r * p + j];
  xmax *= 1.1;
  for (size_t j = 0; j < p; j++) {
    fprintf(pts, "# %s\n", mlsba_platform_device_name(pl, j));
    fprintf(curve, "# %s\n", mlsba_platform_device_name(pl, j));
    for (size_t i = 0; i < mlsba_model_num_points(models[j]); i++) {
      double x, s;
      mlsba_model_get_point(models[j], i, &x, &s);
      fprintf(pts, "%g %g\n", x, s);
    }
    for (int i = 0; i <= 400 && mlsba_model_num_points(models[j]); i++) {
      double x = xmax * i / 400.0, s;
      mlsba_model_speed(models[j], x, &s);
      fprintf(curve, "%g %g\n", x, s);
    }
    fprintf(pts, "\n\n");
    fprintf(curve, "\n\n");
  }
  /* timeline.dat: device, first-run time, last-run time. */
  for (size_t j = 0; j < p; j++)
    fprintf(tl, "%zu \"%s\" %g %g\n", j, mlsba_platform_device_name(pl, j),
            hist_time[j], hist_time[(runs - 1) * p + j]);
  fprintf(gp,
          "# Made by mlsba-bench --plot; run again with: gnuplot plot.gp\n"
          "do for [fmt in \"png svg\"] {\n"
          "  if (fmt eq \"png\") { set terminal pngcairo size 1000,650 "
          "noenhanced } else { set terminal svg size 1000,650 noenhanced }\n"
          "  set output \"speed.\".fmt\n"
          "  set title \"Device speed functions and the final distribution "
          "line (makespan %.4g s)\"\n"
          "  set xlabel \"load (columns)\"; set ylabel \"speed (columns/s)\"\n"
          "  set key outside right; set grid\n"
          "  plot [0:%g] ",
          makespan, xmax);
  for (size_t j = 0; j < p; j++) {
    int drawn = 0;
    for (size_t k = 0; k < j && !drawn; k++)
      drawn = same_model(models[k], models[j]);
    if (drawn)
      continue;
    fprintf(gp, "\"curve.dat\" index %zu with lines lw 2 lc %zu title \"%s", j,
            j + 1, mlsba_platform_device_name(pl, j));
    for (size_t k = j + 1; k < p; k++)
      if (same_model(models[j], models[k]))
        fprintf(gp, " = %s", mlsba_platform_device_name(pl, k));
    fprintf(gp,
            "\", \"speed.dat\" index %zu with points pt 7 lc %zu "
            "notitle, ",
            j, j + 1);
  }
  fprintf(gp,
          "x / %.17g with lines dt 2 lc rgb \"black\" title \"x / makespan\"\n"
          "  set output \"timeline.\".fmt\n"
          "  set title \"Device times, first and last run\"\n"
          "  set xlabel \"time from the common start (s)\"; unset ylabel\n"
          "  set ytics (",
          makespan);
  for (size_t j = 0; j < p; j++)
    fprintf(gp, "%s\"%s\" %zu", j ? ", " : "",
            mlsba_platform_device_name(pl, j), j);
  fprintf(gp,
          ")\n  set yrange [-0.7:%zu.7]; set style fill solid 0.6\n"
          "  plot \"timeline.dat\" using 3:1:(0):3:($1-0.4):($1-0.05) with "
          "boxxyerror lc rgb \"#bb5555\" title \"first run\", \\\n"
          "       \"timeline.dat\" using 4:1:(0):4:($1+0.05):($1+0.4) with "
          "boxxyerror lc rgb \"#4477aa\" title \"last run\"\n"
          "  unset ytics; set ytics auto; unset yrange\n"
          "}\n",
          p - 1);
  int bad = ferror(pts) | ferror(curve) | ferror(tl) | ferror(gp);
  bad |= fclose(pts) | fclose(curve) | fclose(tl) | fclose(gp);
  if (bad) {
    fprintf(stderr, "mlsba-bench: --plot: error writing into %s\n", dir);
    return -1;
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot plot.gp 2>gnuplot.log", dir);
  if (system(cmd) != 0) {
    fprintf(stderr,
            "mlsba-bench: --plot: gnuplot failed (is gnuplot-nox installed? "
            "see %s/gnuplot.log)\n",
            dir);
    return -1;
  }
  return 0;
}
