/* The split of one step's update between the devices. Pure (no I/O, no
 * clock): the MPI layer can call it for each rank's part of a
 * distributed factorization. The device models are flop rates as a
 * function of units; at step k a device's speed in units per second is
 * its rate divided by w_k, the flops of one unit, so the split follows
 * each speed function at the step's own size. */
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../partition/fpm.h"
#include "../partition/grouped.h"
#include "factor.h"

/* Loads below this are sampled on a doubling grid when the panel's time
 * is added to a model, so that t(x) + T keeps its shape between points. */
enum { GRID_FROM = 1 };

static int64_t cap_of(const mlsba_model_t *m, int64_t units) {
  int64_t c = m ? mlsba_model_max_load(m) : MLSBA_NO_MAX_LOAD;
  return c < 0 || c > units ? units : c;
}

/* The device's speed in units per second at step k, from its rate model:
 * every point's speed divided by w; plus panel_s on every point when the
 * device factorizes the next panel, sampled on a doubling grid as well. */
static int step_model(const mlsba_model_t *rate, double w, double panel_s,
                      int64_t units, int streaming, mlsba_model_t **out) {
  mlsba_model_t *m = NULL;
  int err = mlsba_model_create(&m);
  for (size_t k = 0; !err && k < mlsba_model_num_points(rate); k++) {
    double x, s;
    mlsba_model_get_point(rate, k, &x, &s);
    double t = x * w / s + panel_s;
    err = mlsba_model_set_point(m, x, x / t);
  }
  for (int64_t x = GRID_FROM; !err && panel_s > 0 && x <= units; x *= 2) {
    double t = (double)x * w / mlsba__fpm_speed(rate, (double)x) + panel_s;
    err = mlsba_model_set_point(m, (double)x, (double)x / t);
  }
  if (!err && !streaming)
    err = mlsba_model_set_max_load(m, mlsba_model_max_load(rate));
  if (err) {
    mlsba_model_destroy(m);
    return err;
  }
  *out = m;
  return 0;
}

/* A model that takes nothing: an inactive device. */
static int idle_model(mlsba_model_t **out) {
  int err = mlsba_model_create(out);
  if (!err)
    err = mlsba_model_set_point(*out, 1, 1);
  if (!err)
    err = mlsba_model_set_max_load(*out, 0);
  return err;
}

static int all_modelled(const mlsba__factor_split_in_t *in) {
  for (size_t i = 0; i < in->p; i++)
    if (in->active[i] &&
        (in->rate[i] == NULL || mlsba_model_num_points(in->rate[i]) == 0))
      return 0;
  return 1;
}

/* The active devices can hold the step within their max_loads. */
static int fits(const mlsba__factor_split_in_t *in) {
  int64_t room = 0;
  for (size_t i = 0; i < in->p; i++)
    if (in->active[i]) {
      room += cap_of(in->rate[i], in->units);
      if (room >= in->units)
        return 1;
    }
  return 0;
}

/* MLSBA over the groups with the step's models. */
static int split_fpm(const mlsba__factor_split_in_t *in, int64_t loads[]) {
  size_t p = in->p;
  mlsba_model_t **m = calloc(p, sizeof *m);
  int64_t *alpha = malloc(in->q * sizeof *alpha);
  int64_t *beta = malloc(p * sizeof *beta);
  int err = m && alpha && beta ? 0 : MLSBA_ENOMEM;
  int streaming = !fits(in);
  for (size_t k = 0; !err && k < p; k++) {
    size_t i = in->group_dev[k];
    if (in->active[i])
      err = step_model(in->rate[i], in->unit_flops,
                       (long)i == in->panel_dev ? in->panel_s : 0, in->units,
                       streaming, &m[k]);
    else
      err = idle_model(&m[k]);
  }
  if (!err)
    err = mlsba_partition_groups(
        MLSBA_ALGO_MLSBA, (const mlsba_model_t *const *)m, in->group_size,
        in->q, in->units, NULL, alpha, beta, NULL, NULL);
  for (size_t k = 0; !err && k < p; k++)
    loads[in->group_dev[k]] = beta[k];
  for (size_t k = 0; m && k < p; k++)
    mlsba_model_destroy(m[k]);
  free(m);
  free(alpha);
  free(beta);
  return err == MLSBA_ENOMEM ? mlsba__fail(err, "factor: out of memory") : err;
}

/* The largest speed among a model's points: a device's peak. */
static double peak(const mlsba_model_t *m) {
  double best = 0;
  for (size_t k = 0; m && k < mlsba_model_num_points(m); k++) {
    double x, s;
    mlsba_model_get_point(m, k, &x, &s);
    best = s > best ? s : best;
  }
  return best;
}

/* Loads proportional to weights among the active devices, within their
 * max_loads unless they cannot hold the step. */
static int split_weighted(const mlsba__factor_split_in_t *in, const double *w,
                          int64_t loads[]) {
  size_t p = in->p;
  int64_t *cap = malloc(p * sizeof *cap);
  double *x = malloc(p * sizeof *x);
  if (cap == NULL || x == NULL) {
    free(cap);
    free(x);
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  }
  int streaming = !fits(in);
  double sum = 0;
  for (size_t i = 0; i < p; i++) {
    x[i] = in->active[i] && w[i] > 0 ? w[i] : 0;
    sum += x[i];
  }
  for (size_t i = 0; i < p; i++) {
    if (sum == 0) /* no weight known: an even split */
      x[i] = in->active[i] ? 1 : 0;
    cap[i] = !in->active[i] ? 0
             : streaming    ? in->units
                            : cap_of(in->rate[i], in->units);
  }
  mlsba__proportional(x, cap, p, in->units, loads);
  free(cap);
  free(x);
  return 0;
}

/* The device that factorizes the panels takes at least panel_min units,
 * from the devices with the most. */
static void hold_panel(const mlsba__factor_split_in_t *in, int64_t loads[]) {
  if (in->panel_dev < 0)
    return;
  size_t d = (size_t)in->panel_dev;
  int64_t need = in->panel_min < in->units ? in->panel_min : in->units;
  while (loads[d] < need) {
    size_t big = d;
    for (size_t i = 0; i < in->p; i++)
      if (i != d && (big == d || loads[i] > loads[big]))
        big = i;
    if (big == d || loads[big] == 0)
      break;
    int64_t move = need - loads[d] < loads[big] ? need - loads[d] : loads[big];
    loads[big] -= move;
    loads[d] += move;
  }
}

int mlsba__factor_split(const mlsba__factor_split_in_t *in, int64_t loads[],
                        int *fpm) {
  size_t p = in->p;
  int err = 0, any = 0;
  for (size_t i = 0; i < p; i++)
    any |= in->active[i];
  if (!any)
    return mlsba__fail(MLSBA_EDEVICE, "factor: no device left to take the "
                                      "update");
  *fpm = 0;
  for (size_t i = 0; i < p; i++)
    loads[i] = 0;
  if (in->units == 0)
    return 0;
  double *w = calloc(p, sizeof *w);
  if (w == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (in->split == MLSBA_FACTOR_SPLIT_FPM && all_modelled(in)) {
    err = split_fpm(in, loads);
    *fpm = err == 0;
  } else {
    for (size_t i = 0; i < p; i++) {
      if (in->split == MLSBA_FACTOR_SPLIT_FIXED_SLICE && in->fraction)
        w[i] = in->fraction[i];
      else if (in->split == MLSBA_FACTOR_SPLIT_CONSTANT_RATIO)
        w[i] = peak(in->rate[i]);
    }
    err = split_weighted(in, w, loads);
  }
  free(w);
  if (!err)
    hold_panel(in, loads);
  return err;
}
