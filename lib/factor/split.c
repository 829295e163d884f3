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

/* How a device's time for x units of the step is made up, beyond its
 * units' time x w / s(x): it may first wait until `ready` (the panel's
 * core, for the next panel's columns from another device), then add
 * `after` (the panel it factorizes); or it runs `first` units before the
 * rest as a share of their own, in `first_s` (the device that updates
 * the next panel's columns when that is not the panel's core). */
typedef struct {
  double ready, after;
  int64_t first;
  double first_s;
  int64_t diag; /* the panel's core: the next panel's diagonal block */
  double diag_s;
} step_cost_t;

/* The part of the next panel's diagonal block (c->diag columns) that x
 * units leave out, updated on the panel's core before the panel. */
static double diag_rest(const step_cost_t *c, double x) {
  double b = (double)c->diag, r = b - x;
  return c->diag > 0 && r > 0 ? c->diag_s * r * (r + 1) / (b * (b + 1)) : 0;
}

static double step_time(const mlsba_model_t *rate, double w,
                        const step_cost_t *c, double x) {
  double rest = x - (double)c->first, t = c->first_s;
  if (rest > 0)
    t += rest * w / mlsba__fpm_speed(rate, rest);
  return (t > c->ready ? t : c->ready) + c->after + diag_rest(c, x);
}

/* The device's speed in units per second at step k, from its rate model:
 * every point's speed divided by w, its time made up as c says, sampled
 * on a doubling grid as well when anything is added, so that the model
 * keeps the shape of its time between points. */
static int step_model(const mlsba_model_t *rate, double w, const step_cost_t *c,
                      int64_t units, int streaming, mlsba_model_t **out) {
  mlsba_model_t *m = NULL;
  int err = mlsba_model_create(&m);
  int added = c->ready > 0 || c->after > 0 || c->first > 0 || c->diag > 0;
  for (size_t k = 0; !err && k < mlsba_model_num_points(rate); k++) {
    double x, s;
    mlsba_model_get_point(rate, k, &x, &s);
    x += (double)c->first;
    err = mlsba_model_set_point(m, x, x / step_time(rate, w, c, x));
  }
  if (!err && c->first > 0)
    err = mlsba_model_set_point(m, (double)c->first,
                                (double)c->first /
                                    step_time(rate, w, c, (double)c->first));
  for (int64_t x = GRID_FROM; !err && added && x <= units; x *= 2)
    if (x > c->first)
      err = mlsba_model_set_point(m, (double)x,
                                  (double)x / step_time(rate, w, c, (double)x));
  /* the diagonal block's part, quadratic in the columns left out */
  for (int64_t k = 1; !err && c->diag > 0 && k <= 8; k++) {
    int64_t x = c->diag * k / 8;
    if (x >= 1 && x <= units)
      err = mlsba_model_set_point(m, (double)x,
                                  (double)x / step_time(rate, w, c, (double)x));
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

/* Another device updates the next panel's columns. */
static int ahead_apart(const mlsba__factor_split_in_t *in) {
  return in->panel_min > 0 && in->panel_dev >= 0 && in->ahead_dev >= 0 &&
         in->ahead_dev != in->panel_dev;
}

/* Device i factorizes the panel with panel_dev (not panel_dev itself). */
static int helps(const mlsba__factor_split_in_t *in, size_t i) {
  for (size_t k = 1; in->team && k < in->team_size; k++)
    if (in->team[k] == (long)i)
      return 1;
  return 0;
}

/* What device i's time holds beyond its units' time at this step. A team
 * that factorizes the panel shares the next panel's columns first: the
 * panel's core runs its part of them as a share of their own (first),
 * every other member waits for none of it and adds its part and the
 * panel after its units (the same sum). */
static step_cost_t cost_of(const mlsba__factor_split_in_t *in, size_t i) {
  step_cost_t c = {0, 0, 0, 0, 0, 0};
  int team = in->team_size > 1 && in->panel_dev >= 0 && !ahead_apart(in) &&
             in->panel_min > 0;
  if (team && (long)i == in->panel_dev) {
    c.after = in->panel_s;
    c.first = in->panel_min < in->units ? in->panel_min : in->units;
    c.first_s = in->team_ahead_s;
    return c;
  }
  if (team && helps(in, i)) {
    c.after = in->team_ahead_s + in->panel_s;
    return c;
  }
  if ((long)i == in->panel_dev) {
    c.after = in->panel_s;
    c.diag = in->diag_units;
    c.diag_s = in->diag_s;
    if (ahead_apart(in))
      c.ready = in->ahead_s;
  }
  if (ahead_apart(in) && (long)i == in->ahead_dev) {
    c.first = in->panel_min < in->units ? in->panel_min : in->units;
    c.first_s = in->ahead_s;
  }
  return c;
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
    step_cost_t c = cost_of(in, i);
    if (in->active[i])
      err = step_model(in->rate[i], in->unit_flops, &c, in->units, streaming,
                       &m[k]);
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

/* The device that updates the next panel's columns (the panel's core
 * unless another does) takes at least panel_min units, from the devices
 * with the most. */
static void hold_panel(const mlsba__factor_split_in_t *in, int64_t loads[]) {
  if (in->panel_dev < 0)
    return;
  size_t d = (size_t)(ahead_apart(in) ? in->ahead_dev : in->panel_dev);
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
      if ((in->split == MLSBA_FACTOR_SPLIT_FIXED_SLICE ||
           in->split == MLSBA_FACTOR_SPLIT_KERNEL_SLICE) &&
          in->fraction)
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

double mlsba__factor_split_time(const mlsba__factor_split_in_t *in,
                                const int64_t loads[]) {
  double worst = 0;
  for (size_t i = 0; i < in->p; i++) {
    step_cost_t c = cost_of(in, i);
    int busy = loads[i] > 0 || c.after > 0 || c.diag_s > 0;
    if (!busy || (loads[i] > 0 && (in->rate[i] == NULL ||
                                   mlsba_model_num_points(in->rate[i]) == 0)))
      continue;
    double t = step_time(in->rate[i], in->unit_flops, &c, (double)loads[i]);
    worst = t > worst ? t : worst;
  }
  return worst;
}
