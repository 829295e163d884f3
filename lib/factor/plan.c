/* The per-step planner: which way a step runs (who updates the next
 * panel's columns, whether a panel's solve is split, whether the next
 * panel is factorized inside the update) and the split of that way
 * (split.c), the slice tuned once where the options ask for one, and the
 * layout of the shares for the executor. Pure: a function of the models,
 * the devices in use, the step and what it kept from the steps before
 * (mlsba__factor_memory_t), with no clock, no executor and no I/O; its
 * callers time it (the report's overhead). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../partition/fpm.h"
#include "driver.h"

typedef mlsba__factor_step_t step_t;
typedef mlsba__factor_ctx_t ctx_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* The split a step takes: the options' rule, the models' until a slice
 * that is tuned from the first update is (cfg.tunes_slice). */
static mlsba_factor_split_t split_now(const ctx_t *C,
                                      const mlsba__factor_memory_t *M) {
  return C->cfg.tunes_slice && !M->fraction ? MLSBA_FACTOR_SPLIT_FPM
                                            : C->cfg.split;
}

/* The split's input for units of unit_flops each between the devices
 * `active`, with nothing but their units counted. */
static mlsba__factor_split_in_t split_in(const ctx_t *C,
                                         mlsba_factor_split_t split,
                                         const unsigned char *active,
                                         int64_t units, double unit_flops) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  return (mlsba__factor_split_in_t){
      .split = split,
      .p = c->p,
      .q = c->q,
      .group_size = c->group_size,
      .group_dev = c->group_dev,
      .rate = (const mlsba_model_t *const *)C->models.rate,
      .active = active,
      .units = units,
      .unit_flops = unit_flops,
      .panel_dev = -1,
      .ahead_dev = -1};
}

/* Every device the step may use has a model: predictions can be
 * compared. */
static int all_modelled(const ctx_t *C) {
  for (size_t i = 0; i < C->cfg.p; i++)
    if ((C->dev.active[i] || (long)i == C->cfg.panel_dev) &&
        mlsba_model_num_points(C->models.rate[i]) == 0)
      return 0;
  return 1;
}

/* The device that updates the next panel's columns first. Every later
 * step waits for the chain of those columns and the panel, so on a
 * simulated platform it is whichever of the panel's core and the devices
 * in use finishes them soonest, within its max_load (an accelerator
 * several times faster than a core at that width: MAGMA's and NVIDIA's
 * HPL's lookahead on the GPU). On real devices it is the panel's core:
 * one executor run cannot make a core wait for another device's columns.
 * With it, ahead_s: that device's time for them. */
static void choose_ahead_device(const ctx_t *C, step_t *st) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  st->plan.ahead_dev = c->panel_dev;
  st->plan.ahead_s = 0;
  int64_t need = min64(st->jbn, st->units);
  if (c->panel_dev < 0 || !st->may_look || need == 0 || c->ways_static)
    return;
  double x = (double)need, best = -1;
  for (size_t i = 0; i < c->p; i++) {
    if ((long)i != c->panel_dev && (!c->virt || !C->dev.active[i]))
      continue;
    const mlsba_model_t *rate = C->models.rate[i];
    int64_t cap = mlsba_model_max_load(rate);
    if (mlsba_model_num_points(rate) == 0 ||
        (cap != MLSBA_NO_MAX_LOAD && cap < need))
      continue;
    double t = x * st->unit_flops / mlsba__fpm_speed(rate, x);
    if (best < 0 || t < best || ((long)i == c->panel_dev && t <= best)) {
      best = t;
      st->plan.ahead_dev = (long)i;
    }
  }
  st->plan.ahead_s = best > 0 ? best : 0;
}

/* The split of the step with `ahead` updating the next panel's columns;
 * *predicted: the step's time by the models. */
static int split_with(const ctx_t *C, const mlsba__factor_memory_t *M,
                      const step_t *st, long ahead, double ahead_s,
                      int64_t loads[], int *fpm, double *predicted) {
  const mlsba__factor_plan_t *w = &st->plan;
  int panel = w->lookahead || w->diag_first;
  mlsba__factor_split_in_t in =
      split_in(C, split_now(C, M), C->dev.active, st->units, st->unit_flops);
  in.panel_dev = panel ? C->cfg.panel_dev : -1;
  in.panel_s = panel ? mlsba__factor_panel_estimate(C, st) : 0;
  in.panel_min = w->need;
  in.ahead_dev = ahead;
  in.ahead_s = ahead_s;
  in.diag_units = w->diag_first ? st->jbn : 0;
  in.diag_s = mlsba__factor_diag_update_time(C, st);
  size_t k =
      mlsba__factor_team_size(C, st, mlsba__factor_team(C, C->scratch.team));
  if (panel && k > 1) { /* the panel's team: its time and theirs */
    in.team_size = k;
    in.team = C->scratch.team;
    in.team_ahead_s = mlsba__factor_team_ahead_time(C, st, k);
    in.panel_s = mlsba__factor_team_panel_time(C, st, k);
  }
  in.fraction = M->fraction;
  int err = mlsba__factor_split(&in, loads, fpm);
  if (!err && predicted)
    *predicted = mlsba__factor_split_time(&in, loads);
  return err;
}

void mlsba__factor_solve_devices(const ctx_t *C, unsigned char *able) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  for (size_t i = 0; i < c->p; i++)
    able[i] = C->dev.active[i] && (c->virt || mlsba__factor_is_core(c, i));
  if (c->panel_dev >= 0)
    able[c->panel_dev] = 1;
}

int mlsba__factor_split_solve(const ctx_t *C, const mlsba__factor_memory_t *M,
                              const step_t *st, const unsigned char *able,
                              int64_t *load, double *predicted) {
  double b = (double)st->jbn;
  mlsba__factor_split_in_t in =
      split_in(C, split_now(C, M), able,
               C->P->ops->solve_rows(C->P, st->jn, st->jbn), b * b);
  in.fraction = M->fraction;
  int fpm, err = mlsba__factor_split(&in, load, &fpm);
  if (!err && predicted)
    *predicted = mlsba__factor_split_time(&in, load);
  return err;
}

/* ---- the ways a step may run ------------------------------------------- */

/* One way: who updates the next panel's columns (and its time for them),
 * whether the panel's solve is split, and whether the panel is
 * factorized inside the update (lookahead) or after it. */
typedef struct {
  long ahead;
  double ahead_s;
  int apart, look, diag;
} way_t;

enum { WAYS_MAX = 6 };

/* The next panel's columns on the panel's core or on the device that
 * would update them soonest; a splittable panel's solve on the core or
 * split, as the options allow; and on a simulated platform, where the
 * solve is split, no lookahead at all: the next panel's columns are units
 * like the others, in every device's one share (a device that runs them
 * first runs them as a small share of their own, at its speed for nb
 * units), and the panel's diagonal block (nb^3 / 3 flops) is factorized
 * either after the update or, with the block updated first on the
 * panel's core, inside that core's share (MAGMA's hybrid Cholesky: the
 * block goes to the host while the accelerator updates the rows below
 * it). */
static size_t ways_of(const ctx_t *C, const step_t *st, way_t ways[WAYS_MAX]) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  size_t n = 0;
  int modes[2] = {0, 1}, m0 = 0, m1 = 1;
  /* On real devices the models are of the update, not of the solve (a
   * TRSM, at a third of the GEMM's speed on a core), and a split solve
   * adds a run of the executor after the update: measured on this
   * machine's two cores, mlsba_potrf at n = 4096 ran at 0.76 of OpenBLAS's
   * dpotrf with AUTO choosing it, 0.86 without. */
  if (!mlsba__factor_solve_splittable(C, st) ||
      c->solve == MLSBA_FACTOR_SOLVE_CORE ||
      (!c->virt && c->solve == MLSBA_FACTOR_SOLVE_AUTO))
    m1 = 0;
  else if (c->solve == MLSBA_FACTOR_SOLVE_SPLIT)
    m0 = 1;
  for (int m = m0; m <= m1; m++) {
    ways[n++] = (way_t){c->panel_dev, 0, modes[m], 1, 0};
    if (st->plan.ahead_dev != c->panel_dev)
      ways[n++] = (way_t){st->plan.ahead_dev, st->plan.ahead_s, modes[m], 1, 0};
  }
  if (c->virt && m1 == 1 && !c->ways_static) {
    ways[n++] = (way_t){c->panel_dev, 0, 1, 0, 0};
    ways[n++] = (way_t){c->panel_dev, 0, 1, 0, 1};
  }
  return n;
}

static void take_way(step_t *st, const way_t *w) {
  mlsba__factor_plan_t *plan = &st->plan;
  plan->ahead_dev = w->ahead;
  plan->ahead_s = w->ahead_s;
  plan->solve_apart = w->apart;
  plan->lookahead = st->may_look && w->look;
  plan->need = plan->lookahead ? min64(st->jbn, st->units) : 0;
  plan->diag_first = st->may_look && !w->look && w->diag;
}

/* The way chosen at a step within a fifth of this one's size is kept:
 * the choice follows the size, and comparing every way at every step
 * would multiply the splitting time. Unless the device that updates the
 * next panel's columns is held to them: its share of the update has
 * shrunk below them, and another way may be shorter. 1: kept (or an
 * error in *err). */
static int keep_way(const ctx_t *C, const mlsba__factor_memory_t *M, step_t *st,
                    const way_t *ways, size_t n, int64_t load[], int *err) {
  for (size_t k = 0;
       M->way_units > 0 && 5 * st->units >= 4 * M->way_units && k < n; k++)
    if ((ways[k].ahead == C->cfg.panel_dev) == M->way_on_core &&
        ways[k].apart == M->way_apart && ways[k].look == M->way_look &&
        ways[k].diag == M->way_diag) {
      take_way(st, &ways[k]);
      mlsba__factor_plan_t *w = &st->plan;
      *err = split_with(C, M, st, w->ahead_dev, w->ahead_s, load, &w->fpm,
                        &w->predicted);
      return *err || !w->lookahead || w->ahead_dev < 0 ||
             load[w->ahead_dev] > w->need;
    }
  return 0;
}

/* The solve's predicted time where any way splits it (0 otherwise). */
static int solve_time(const ctx_t *C, mlsba__factor_memory_t *M,
                      const step_t *st, const way_t *ways, size_t n,
                      double *solve) {
  int any_apart = 0;
  for (size_t k = 0; k < n; k++)
    any_apart |= ways[k].apart;
  *solve = 0;
  if (!any_apart)
    return 0;
  unsigned char *able = calloc(C->cfg.p, 1);
  int err = able ? 0 : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (!err) {
    mlsba__factor_solve_devices(C, able);
    err = mlsba__factor_split_solve(C, M, st, able, M->rows, solve);
  }
  free(able);
  return err;
}

/* Each way split and the one the models predict shortest kept (the
 * first, the panel's core doing it all, on a tie). */
static int compare_ways(const ctx_t *C, mlsba__factor_memory_t *M, step_t *st,
                        const way_t *ways, size_t n, int64_t load[]) {
  double solve = 0, best = -1;
  int err = solve_time(C, M, st, ways, n, &solve);
  size_t pick = 0;
  for (size_t k = 0; !err && k < n; k++) {
    double t = 0;
    int f = 0;
    take_way(st, &ways[k]);
    err = split_with(C, M, st, ways[k].ahead, ways[k].ahead_s, M->cand, &f, &t);
    double update = t;
    t += ways[k].apart ? solve : 0;
    if (!ways[k].look && !ways[k].diag) /* the panel after the update */
      t += mlsba__factor_panel_estimate(C, st);
    if (!err && (best < 0 || t < best)) {
      best = t;
      pick = k;
      st->plan.fpm = f;
      st->plan.predicted = update;
      memcpy(load, M->cand, C->cfg.p * sizeof *load);
    }
  }
  take_way(st, &ways[pick]);
  M->way_units = st->units;
  M->way_on_core = ways[pick].ahead == C->cfg.panel_dev;
  M->way_apart = ways[pick].apart;
  M->way_look = ways[pick].look;
  M->way_diag = ways[pick].diag;
  return err;
}

/* The split of the step. Where it may run more than one way, each is
 * split and the one the models predict shortest is kept (the first, the
 * panel's core doing it all, on a tie or without models): another
 * device's columns for the panel run as a small share of their own,
 * slower per unit, and a split solve waits for the update, where on the
 * core it overlaps it. */
static int choose_and_split(const ctx_t *C, mlsba__factor_memory_t *M,
                            step_t *st, int64_t load[]) {
  way_t ways[WAYS_MAX];
  size_t n = ways_of(C, st, ways);
  mlsba__factor_plan_t *w = &st->plan;
  take_way(st, &ways[0]);
  w->fpm = 0;
  w->predicted = 0;
  if (n == 1 || !all_modelled(C))
    return split_with(C, M, st, w->ahead_dev, w->ahead_s, load, &w->fpm,
                      &w->predicted);
  int err = 0;
  if (keep_way(C, M, st, ways, n, load, &err))
    return err;
  return compare_ways(C, M, st, ways, n, load);
}

/* ---- the slice ----------------------------------------------------------- */

/* p fractions of the step's units from a split of them. */
static int keep_slice(const ctx_t *C, mlsba__factor_memory_t *M,
                      const int64_t *load, int64_t units) {
  M->fraction = calloc(C->cfg.p, sizeof *M->fraction);
  if (M->fraction == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  for (size_t i = 0; i < C->cfg.p; i++)
    M->fraction[i] = (double)load[i] / (double)units;
  return 0;
}

/* Seed 004's slice as its paper tunes it: the kernels' speeds alone,
 * i.e. the models' split of the first update with no panel and no
 * lookahead counted, kept as fractions. */
static int tune_kernel_slice(const ctx_t *C, mlsba__factor_memory_t *M,
                             const step_t *st) {
  mlsba__factor_split_in_t in = split_in(
      C, MLSBA_FACTOR_SPLIT_FPM, C->dev.active, st->units, st->unit_flops);
  int fpm = 0, err = mlsba__factor_split(&in, M->cand, &fpm);
  if (err || !fpm)
    return err; /* no models yet: tuned at a later step */
  return keep_slice(C, M, M->cand, st->units);
}

/* ---- a starved device ---------------------------------------------------
 * A saved model so slow that the split gives its device nothing is never
 * corrected by itself: the device never runs, so it is never timed again
 * (a model saved while another process held the device, another
 * machine's in a shared home). Such a device, whose saved model no step
 * has checked yet, is given a probe: a few units taken from the device
 * with the most, as many as its saved model says it runs in half the
 * step's predicted time (so that, where the model is right, the probe
 * ends before the others and costs the step nothing), at most an
 * eighth of the step and at least one unit. The step measures it, and
 * models.c replaces the model where it was stale. Once per device and
 * factorization: the measured point clears models.saved. */

/* The units device i's saved model runs within `budget` seconds. */
static int64_t probe_units(const mlsba_model_t *rate, double unit_flops,
                           int64_t most, double budget) {
  int64_t lo = 1, hi = most;
  while (lo < hi) { /* the largest x whose predicted time fits */
    int64_t x = lo + (hi - lo + 1) / 2;
    double s = mlsba__fpm_speed(rate, (double)x);
    if (s > 0 && (double)x * unit_flops / s <= budget)
      lo = x;
    else
      hi = x - 1;
  }
  return lo;
}

static void probe_starved(const ctx_t *C, step_t *st, int64_t load[]) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  mlsba__factor_plan_t *w = &st->plan;
  w->probe_dev = -1;
  w->probe = 0;
  if (c->virt || !w->fpm || C->models.saved == NULL || st->units < 2)
    return;
  for (size_t i = 0; i < c->p; i++) {
    if (!C->dev.active[i] || !C->models.saved[i] || load[i] > 0 ||
        mlsba_model_max_load(C->models.rate[i]) == 0)
      continue;
    size_t big = i;
    for (size_t k = 0; k < c->p; k++)
      if (k != i && (big == i || load[k] > load[big]))
        big = k;
    /* the ahead device keeps the next panel's columns */
    int64_t keep = (long)big == w->ahead_dev ? w->need : 0;
    int64_t most = min64(st->units / 8, load[big] - keep);
    if (big == i || most < 1)
      return;
    int64_t x =
        probe_units(C->models.rate[i], st->unit_flops, most, w->predicted / 2);
    load[big] -= x;
    load[i] = x;
    w->probe_dev = (long)i;
    w->probe = x;
    return; /* one device a step: the next starved one at the next */
  }
}

/* The split of a step whose ahead device is chosen; a slice to tune is
 * tuned (kernel-slice before the split, fixed-slice from it); a starved
 * device probed (after the slice, which keeps the models' split). */
static int split_step(const ctx_t *C, mlsba__factor_memory_t *M, step_t *st,
                      int64_t load[]) {
  int tune = C->cfg.tunes_slice && !C->cfg.slice_of_kernels && !M->fraction;
  int err = 0;
  if (C->cfg.slice_of_kernels && !M->fraction)
    err = tune_kernel_slice(C, M, st);
  if (!err)
    err = choose_and_split(C, M, st, load);
  if (!err && tune && st->plan.fpm)
    err = keep_slice(C, M, load, st->units);
  if (!err)
    probe_starved(C, st, load);
  return err;
}

int mlsba__factor_plan(const ctx_t *C, mlsba__factor_memory_t *M, step_t *st,
                       int64_t load[]) {
  choose_ahead_device(C, st);
  return split_step(C, M, st, load);
}

int mlsba__factor_replan(const ctx_t *C, mlsba__factor_memory_t *M, step_t *st,
                         int64_t load[]) {
  return split_step(C, M, st, load);
}

int mlsba__factor_plan_redo(const ctx_t *C, int64_t units, double unit_flops,
                            int64_t load[]) {
  size_t p = C->cfg.p;
  unsigned char *cores = calloc(p, 1);
  for (size_t i = 0; cores && i < p; i++)
    cores[i] = C->dev.active[i] && mlsba__factor_is_core(&C->cfg, i);
  mlsba__factor_split_in_t in =
      split_in(C, MLSBA_FACTOR_SPLIT_FPM, cores, units, unit_flops);
  int fpm;
  int err = cores ? mlsba__factor_split(&in, load, &fpm)
                  : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  free(cores);
  return err;
}

void mlsba__factor_plan_forget(mlsba__factor_memory_t *M, size_t i) {
  if (M->fraction) /* the fixed slice without it: the rest scaled up */
    M->fraction[i] = 0;
}

/* Simulated: the first panel's solve is split like the later panels'
 * where the models predict it shorter than on the panel's core (all the
 * other devices wait for this panel). */
int mlsba__factor_plan_first(const ctx_t *C, mlsba__factor_memory_t *M,
                             step_t *st) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  st->may_look = c->panel_dev >= 0;
  if (!c->virt || !mlsba__factor_solve_splittable(C, st) ||
      c->solve == MLSBA_FACTOR_SOLVE_CORE || !all_modelled(C))
    return 0;
  if (c->solve == MLSBA_FACTOR_SOLVE_SPLIT)
    return 1;
  unsigned char *able = calloc(c->p, 1);
  double solve = 0;
  int apart = 0;
  if (able) {
    mlsba__factor_solve_devices(C, able);
    double whole = mlsba__factor_panel_estimate(C, st);
    st->plan.solve_apart = 1;
    apart = mlsba__factor_split_solve(C, M, st, able, M->rows, &solve) == 0 &&
            mlsba__factor_panel_estimate(C, st) + solve < whole;
  }
  free(able);
  return apart;
}

/* ---- the layout -------------------------------------------------------- */

/* The executor lays shares out group by group; the step's units are laid
 * out with the device that updates the next panel's columns first (the
 * panel's core unless another does), so that its share begins with them,
 * then the other cores, and the accelerators at the right end (the first
 * in group order rightmost): the trailing matrix shrinks from the left, so
 * an accelerator's share of step k + 1 overlaps most of its columns of
 * step k, and only its left boundary moves. */
void mlsba__factor_lay_out(const mlsba__factor_cfg_t *c,
                           const mlsba__factor_plan_t *plan,
                           mlsba__factor_layout_t *lay) {
  const int64_t *load = lay->load;
  int64_t off = 0, log = 0;
  for (size_t k = 0; k < c->p; k++) {
    size_t i = c->group_dev[k];
    lay->exec_off[i] = off;
    off += load[i];
  }
  long first = plan->ahead_dev >= 0 ? plan->ahead_dev : c->panel_dev;
  if (first >= 0) {
    lay->log_off[first] = 0;
    log = load[first];
  }
  for (size_t k = 0; k < c->p; k++) {
    size_t i = c->group_dev[k];
    if ((long)i == first || mlsba__factor_is_accel(c, i))
      continue;
    lay->log_off[i] = log;
    log += load[i];
  }
  for (size_t k = 0; k < c->p; k++) {
    size_t i = c->group_dev[k];
    if ((long)i == first || !mlsba__factor_is_accel(c, i))
      continue;
    off -= load[i];
    lay->log_off[i] = off;
  }
}

long mlsba__factor_share_device(const mlsba__factor_layout_t *lay,
                                int64_t first) {
  for (size_t i = 0; i < lay->p; i++)
    if (lay->load[i] > 0 && lay->exec_off[i] == first)
      return (long)i;
  return -1;
}
