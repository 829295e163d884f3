/* The step loop of a factorization. Step 0 factorizes panel 0; step k
 * plans the update after panel k - 1 (plan.c), runs it on the simulated
 * or the real executor (sim_step.c, real_step.c) and records it. With
 * lookahead (ops->lookahead) the core that factorizes panels takes the
 * next panel's units first and factorizes it inside its share; without,
 * the panel waits for the update. */
#include <stdio.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/even.h"
#include "driver.h"

typedef mlsba__factor_step_t step_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Step k's split as the log shows it: each device's units and time, and
 * the panel factorized in the step (its seconds). */
static void log_step(const mlsba__factor_ctx_t *C, size_t k) {
  const mlsba_factor_report_t *R = C->R;
  char line[768];
  size_t n = 0, p = C->cfg.p;
  int w = snprintf(line, sizeof line,
                   "%s step %zu: %lld units, %.4g s:", C->P->ops->name, k,
                   (long long)R->units[k], R->step_seconds[k]);
  n = w > 0 ? (size_t)w : 0;
  for (size_t i = 0; i < p && n < sizeof line; i++) {
    if (R->share[k * p + i] == 0 && R->time[k * p + i] == 0)
      continue;
    w = snprintf(line + n, sizeof line - n, " %s %lld (%.4g s)",
                 C->cfg.pl->dev[i].name, (long long)R->share[k * p + i],
                 R->time[k * p + i]);
    n += w > 0 ? (size_t)w : 0;
  }
  if (R->panel_seconds[k] > 0 && n < sizeof line)
    snprintf(line + n, sizeof line - n, "; panel %.4g s", R->panel_seconds[k]);
  mlsba__factor_log(C, "%s", line);
}

/* Step k of the report: the devices' shares and times, and the clock. */
static void record(mlsba__factor_ctx_t *C, const step_t *st, double extra) {
  mlsba_factor_report_t *R = C->R;
  size_t k = C->step++, p = C->cfg.p;
  const double *time = C->scratch.time;
  double longest = 0;
  for (size_t i = 0; i < p; i++) {
    R->share[k * p + i] = st->units ? C->lay.load[i] : 0;
    R->time[k * p + i] = st->units ? time[i] : 0;
    if (st->units && time[i] > longest)
      longest = time[i];
  }
  R->units[k] = st->units;
  R->step_seconds[k] = longest + extra;
  R->panel_seconds[k] = st->panel_s;
  R->ahead_device[k] =
      st->plan.lookahead && st->jbn > 0 ? st->plan.ahead_dev : -1;
  R->steps = C->step;
  C->clock += longest + extra;
  mlsba__factor_learn_panel(C, st);
  if (mlsba__factor_logging(C))
    log_step(C, k);
}

/* Without lookahead the next panel (its diagonal block, where its solve
 * is split) runs after the update: on the calling thread, or in virtual
 * time on the panel's device. */
static double panel_after(mlsba__factor_ctx_t *C, step_t *st) {
  const mlsba__factor_plan_t *w = &st->plan;
  if (w->lookahead || w->diag_first || st->jbn == 0)
    return 0;
  double t = mlsba__now();
  if (!C->cfg.virt || C->cfg.o.compute)
    st->stop = mlsba__factor_panel_alone(C, st);
  st->panel_s = C->cfg.virt
                    ? mlsba__factor_sim_panel_time(
                          C, mlsba__factor_next_panel_flops(C, st), st->jbn)
                    : mlsba__now() - t;
  return st->panel_s;
}

/* The step planned. The matrix is half done: where the models cannot
 * split it (a saved model no device could have slipped through), they
 * start again cold, with a warning, rather than leave it so. */
static int plan(mlsba__factor_ctx_t *C, step_t *st) {
  double t0 = mlsba__now();
  int err = mlsba__factor_plan(C, &C->plan, st, C->lay.load);
  if (err && err != MLSBA_ENOMEM) {
    mlsba__factor_warn(C,
                       "the models could not split step %zu (%s): they "
                       "start again cold",
                       C->step, mlsba_last_error());
    err = mlsba__factor_models_forget(C);
    if (!err)
      err = mlsba__factor_plan(C, &C->plan, st, C->lay.load);
  }
  C->R->overhead_s += mlsba__now() - t0;
  if (!err && st->plan.probe > 0)
    mlsba__factor_log(C,
                      "%s: its saved model gives it nothing at step %zu: "
                      "probed with %lld of %lld units",
                      C->cfg.pl->dev[st->plan.probe_dev].name, C->step,
                      (long long)st->plan.probe, (long long)st->units);
  return err;
}

/* The step planned and run until it runs: a simulated device that fails
 * is dropped and the step planned again. */
static int plan_and_run(mlsba__factor_ctx_t *C, step_t *st) {
  for (;;) {
    int err = plan(C, st);
    if (err)
      return err;
    mlsba__factor_lay_out(&C->cfg, &st->plan, &C->lay);
    long failed = -1;
    err = C->cfg.virt ? mlsba__factor_sim_step(C, st, &failed)
                      : mlsba__factor_real_step(C, st, &failed);
    if (!err)
      return 0;
    if (!C->cfg.virt || !mlsba__factor_drop_sim(C, failed))
      return err; /* a real core's columns may be half done: stop */
  }
}

static int update_step(mlsba__factor_ctx_t *C, step_t *st) {
  int err;
  if (!C->cfg.virt && (err = mlsba__factor_real_caps(C, st)) != 0)
    return err;
  if ((err = plan_and_run(C, st)) != 0)
    return err;
  if (C->cfg.virt && C->cfg.o.compute)
    mlsba__factor_compute_on_host(C, st);
  if (!C->cfg.virt)
    mlsba__factor_learn(C, st);
  double after = panel_after(C, st), solve = 0;
  if ((err = mlsba__factor_solve_step(C, st, &solve)) != 0)
    return err;
  record(C, st, solve + after);
  return 0;
}

/* Panel 0 alone (its solve split where the plan says so). */
static int first_panel(mlsba__factor_ctx_t *C, int64_t jb, int *stop) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  step_t st = {.jn = 0,
               .jbn = jb,
               .P = C->P,
               .cfg = c,
               .lay = &C->lay,
               .shares = &C->shares,
               .res = &C->res};
  double t0 = mlsba__now();
  st.plan.solve_apart = mlsba__factor_plan_first(C, &C->plan, &st);
  C->R->overhead_s += mlsba__now() - t0;
  double t = mlsba__now();
  if (!c->virt || c->o.compute)
    st.stop = mlsba__factor_panel_alone(C, &st);
  st.panel_s = c->virt ? mlsba__factor_sim_panel_time(
                             C, mlsba__factor_next_panel_flops(C, &st), jb)
                       : mlsba__now() - t;
  for (size_t i = 0; i < c->p; i++)
    C->scratch.time[i] = 0;
  if (c->panel_dev >= 0)
    C->scratch.time[c->panel_dev] = st.panel_s;
  double solve = 0;
  int err = mlsba__factor_solve_step(C, &st, &solve);
  if (err)
    return err;
  st.units = 1; /* so that record() keeps the panel core's time */
  memset(C->lay.load, 0, c->p * sizeof *C->lay.load);
  record(C, &st, solve);
  C->R->units[0] = 0;
  *stop = st.stop;
  return 0;
}

/* The resident columns back to the host, and the bytes moved into the
 * report. */
static void finish_transfers(mlsba__factor_ctx_t *C) {
  mlsba__factor_flush_resident(C);
  mlsba_factor_report_t *R = C->R;
  const mlsba__factor_traffic_t *T = &C->res.traffic;
  for (size_t i = 0; i < C->cfg.p; i++) {
    R->bytes_to_devices += T->to_dev[i];
    R->bytes_from_devices += T->from_dev[i];
    R->transfers += T->moves[i];
  }
}

static int finish_units(void *user, int64_t first, int64_t count) {
  const mlsba__factor_problem_t *P = user;
  P->ops->finish(P, first, first + count);
  return 0;
}

/* The units of the last phase cut so that the cores in use (in group
 * order, as the executor lays them out) take equal sums of the rows they
 * touch. LU's columns of the first panel take the interchanges of
 * every row below it, the last panel's none: cut into equal counts of
 * columns, the first core of two had 3.3 times the other's rows at n =
 * 2048, and the phase took its time. */
static void finish_by_rows(const mlsba__factor_problem_t *P,
                           const mlsba__factor_cfg_t *c,
                           const unsigned char *active, int64_t cores,
                           int64_t *load) {
  int64_t kmax = mlsba__factor_diag(P);
  double total = 0;
  for (int64_t u = 0; u < kmax; u++)
    total += (double)P->ops->finish_rows(P, u);
  int64_t u = 0, k = 0;
  double sum = 0;
  for (size_t g = 0; g < c->p; g++) {
    size_t i = c->group_dev[g];
    if (!(active[i] && mlsba__factor_is_core(c, i)))
      continue;
    int64_t first = u;
    if (++k == cores) /* the last core takes what is left */
      u = kmax;
    else
      while (u < kmax && sum < total * (double)k / (double)cores)
        sum += (double)P->ops->finish_rows(P, u++);
    load[i] = u - first;
  }
}

/* The operation's last phase (LU's last interchanges, on the columns left
 * of each panel): memory bound (13 ms of a 0.57 s factorization at n =
 * 4096 on one core here), so every core in use takes an equal share of
 * it. */
static int finish(mlsba__factor_ctx_t *C) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  mlsba__factor_problem_t *P = C->P;
  int64_t kmax = mlsba__factor_diag(P), cores = 0, *load = C->scratch.one;
  for (size_t i = 0; !c->virt && i < c->p; i++)
    cores += C->dev.active[i] && mlsba__factor_is_core(c, i);
  if (cores == 0) { /* simulated, or accelerators only: the caller's thread */
    if (!c->virt || c->o.compute)
      P->ops->finish(P, 0, kmax);
    return 0;
  }
  for (size_t i = 0, k = 0; i < c->p; i++) {
    int core = C->dev.active[i] && mlsba__factor_is_core(c, i);
    load[i] = core ? mlsba__even_share(kmax, cores, (int64_t)k) : 0;
    k += (size_t)core;
  }
  if (P->ops->finish_rows)
    finish_by_rows(P, c, C->dev.active, cores, load);
  mlsba_load_t *w = NULL;
  long failed = -1;
  int err = mlsba_load_create(P->ops->finish_load, kmax, &w);
  if (!err)
    err = mlsba_load_set_cpu(w, finish_units, P);
  if (!err)
    err = mlsba_executor_run(c->ex, w, load, MLSBA_DRIVE_SHARED,
                             C->scratch.time, &failed);
  mlsba_load_destroy(w);
  return err;
}

static int run(mlsba__factor_ctx_t *C) {
  mlsba__factor_problem_t *P = C->P;
  int64_t kmax = mlsba__factor_diag(P), nb = P->nb;
  double t0 = mlsba__now();
  int stop = 0;
  if (kmax > 0) {
    int err = first_panel(C, min64(nb, kmax), &stop);
    if (err)
      return err;
  }
  for (int64_t j = 0; j < kmax && !stop; j += nb) {
    step_t st;
    mlsba__factor_step_init(C, &st, j, min64(nb, kmax - j));
    if (st.units == 0)
      break;
    int err = update_step(C, &st);
    if (err) {
      finish_transfers(C);
      return err;
    }
    stop = st.stop;
  }
  finish_transfers(C);
  if (P->ops->finish && kmax > 0) {
    int err = finish(C);
    if (err)
      return err;
  }
  mlsba_factor_report_t *R = C->R;
  R->seconds = C->cfg.virt ? C->clock : mlsba__now() - t0;
  R->gflops = R->seconds > 0 ? R->flops / R->seconds / 1e9 : 0;
  return 0;
}

int mlsba__factor_drive(mlsba_executor_t *ex, mlsba__factor_problem_t *P,
                        const mlsba_factor_opts_t *o,
                        mlsba_factor_report_t *R) {
  mlsba__factor_ctx_t C;
  int err = mlsba__factor_ctx_open(&C, ex, P, o, R);
  if (!err)
    err = run(&C);
  if (!err) {
    double t0 = mlsba__now();
    mlsba__factor_models_save(&C);
    R->models_save_s = mlsba__now() - t0;
  }
  mlsba__factor_ctx_close(&C);
  return err;
}
