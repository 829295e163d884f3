/* The simulated step's executor: the devices' shares run in virtual time
 * (their profiles' times scaled from a profile's unit to the step's), and
 * the numbers, where they are asked for, computed on the calling thread in
 * the order a core would compute them. */
#include <string.h>

#include "driver.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Runs simulated shares (virtual times into t). */
static int sim_run(mlsba__factor_ctx_t *C, int64_t units, const int64_t *load,
                   double *t, long *failed) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_create("factor-update", units, &w);
  if (!err)
    err = mlsba_executor_run(C->cfg.ex, w, load, MLSBA_DRIVE_SHARED, t, failed);
  mlsba_load_destroy(w);
  return err;
}

int mlsba__factor_sim_shares(mlsba__factor_ctx_t *C, const int64_t *load,
                             long first_dev, int64_t first, double *t,
                             double *first_t, long *failed) {
  size_t p = C->cfg.p;
  mlsba__factor_scratch_t *s = &C->scratch;
  int64_t sum = 0;
  for (size_t i = 0; i < p; i++) {
    int64_t cap = mlsba_model_max_load(C->models.rate[i]);
    s->clip[i] = cap >= 0 && load[i] > cap ? cap : load[i];
    if ((long)i == first_dev)
      s->clip[i] = min64(s->clip[i], first);
    sum += s->clip[i];
    t[i] = 0;
  }
  int err = sum > 0 ? sim_run(C, sum, s->clip, t, failed) : 0;
  *first_t = first_dev >= 0 && !err ? t[first_dev] : 0;
  for (size_t i = 0; !err && i < p; i++) {
    int64_t cap = mlsba_model_max_load(C->models.rate[i]);
    int64_t chunk = cap >= 0 ? cap : load[i];
    for (int64_t rest = load[i] - s->clip[i]; !err && rest > 0 && chunk > 0;) {
      memset(s->one, 0, p * sizeof *s->one);
      s->one[i] = min64(chunk, rest);
      err = sim_run(C, s->one[i], s->one, s->extra, failed);
      t[i] += err ? 0 : s->extra[i];
      rest -= s->one[i];
    }
  }
  return err;
}

/* The next panel's columns are updated by another device than the
 * panel's core in this step. */
static int ahead_apart(const mlsba__factor_ctx_t *C,
                       const mlsba__factor_step_t *st) {
  const mlsba__factor_plan_t *w = &st->plan;
  return w->lookahead && st->jbn > 0 && w->need > 0 && w->ahead_dev >= 0 &&
         w->ahead_dev != C->cfg.panel_dev;
}

/* A team of k cores factorizes the panel: the panel's core runs the next
 * panel's columns as a first share of their own, and every member takes
 * a k-th of their time and the panel's on k cores (the members start
 * their own units after it, as split.c counts them). */
static void team_times(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                       size_t k, double ahead) {
  const long *team = C->scratch.team;
  double *time = C->scratch.time, share = ahead / (double)k;
  st->panel_s = mlsba__factor_team_panel_time(C, st, k);
  time[team[0]] -= ahead;
  for (size_t m = 0; m < k; m++)
    time[team[m]] += share + st->panel_s;
}

/* Every time scaled from the profile's unit to this step's. A device that
 * updates the next panel's columns for the panel's core runs them as a
 * first share of their own; the core starts the panel when they are done
 * (and its own units are), so its time is max(its units, theirs) + the
 * panel. */
int mlsba__factor_sim_step(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                           long *failed) {
  const mlsba__factor_plan_t *w = &st->plan;
  double *time = C->scratch.time;
  int apart = ahead_apart(C, st);
  size_t k = (w->lookahead || w->diag_first) && st->jbn > 0
                 ? mlsba__factor_team_size(
                       C, st, mlsba__factor_team(C, C->scratch.team))
                 : 1;
  double ready = 0;
  int err = mlsba__factor_sim_shares(C, C->lay.load,
                                     apart   ? w->ahead_dev
                                     : k > 1 ? C->cfg.panel_dev
                                             : -1,
                                     w->need, time, &ready, failed);
  double scale = st->unit_flops / C->cfg.unit_ref;
  for (size_t i = 0; !err && i < C->cfg.p; i++)
    time[i] *= scale;
  if (!err && k > 1) {
    team_times(C, st, k, ready * scale);
  } else if (!err && (w->lookahead || w->diag_first) && st->jbn > 0) {
    long d = C->cfg.panel_dev;
    st->panel_s = mlsba__factor_sim_panel_time(
        C, mlsba__factor_next_panel_flops(C, st), st->jbn);
    double *t = &time[d];
    *t = (*t > ready * scale ? *t : ready * scale) + st->panel_s +
         mlsba__factor_diag_rest_time(C, st, C->lay.load[d]);
  }
  return err;
}

void mlsba__factor_compute_on_host(mlsba__factor_ctx_t *C,
                                   mlsba__factor_step_t *st) {
  mlsba__factor_problem_t *P = C->P;
  const mlsba__factor_ops_t *ops = P->ops;
  ops->update(P, st->j, st->jb, 0, st->plan.need);
  if (st->plan.lookahead && st->jbn > 0)
    st->stop = ops->panel(P, st->jn, st->jbn);
  ops->update(P, st->j, st->jb, st->plan.need, st->units);
  if (st->plan.diag_first && st->jbn > 0) /* the same numbers, whole */
    st->stop = ops->panel(P, st->jn, st->jbn);
}
