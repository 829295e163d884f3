/* The devices' models of the update: flop rates by units. A simulated
 * device's comes from its profile; a real device's from what its shares
 * took, step by step, starting from the models saved in opts.model_dir,
 * where they are saved back. */
#include <stdio.h>
#include <stdlib.h>

#include "driver.h"

/* A simulated device's rate: its profile in units per second times the
 * flops of a unit of the profile. */
static int sim_rate(const mlsba_model_t *profile, double unit,
                    mlsba_model_t **out) {
  int err = mlsba_model_create(out);
  for (size_t k = 0; !err && k < mlsba_model_num_points(profile); k++) {
    double x, s;
    mlsba_model_get_point(profile, k, &x, &s);
    err = mlsba_model_set_point(*out, x, s * unit);
  }
  if (!err)
    err = mlsba_model_set_max_load(*out, mlsba_model_max_load(profile));
  return err;
}

/* ---- the files of opts.model_dir (real devices) ------------------------ */

static const char *precision_name(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? "double" : "single";
}

static void model_path(const mlsba__factor_ctx_t *C, size_t i, char *buf,
                       size_t size) {
  const mlsba__factor_problem_t *P = C->P;
  snprintf(buf, size, "%s/%s-update-%s-nb%lld-%s.model", C->cfg.o.model_dir,
           P->ops->name, precision_name(P), (long long)P->nb,
           C->cfg.pl->dev[i].name);
}

static void model_key(const mlsba__factor_ctx_t *C, size_t i, char *buf,
                      size_t size) {
  const mlsba__factor_problem_t *P = C->P;
  const mlsba_platform_t *pl = C->cfg.pl;
  char ident[256] = "";
  const mlsba__device_t *d = &C->cfg.ex->opened[i];
  d->ops->ident(d, pl->dev[i].model_name, pl->dev[i].driver, ident,
                sizeof ident);
  snprintf(buf, size,
           "factor %s update, flops per second by units, %s, "
           "nb=%lld, %s",
           P->ops->name, precision_name(P), (long long)P->nb, ident);
}

/* The saved models of the devices in use; a device without one starts
 * cold. */
static void load_saved(mlsba__factor_ctx_t *C) {
  for (size_t i = 0; i < C->cfg.p; i++) {
    if (C->cfg.virt || !C->dev.active[i])
      continue;
    char path[4096], key[512];
    model_path(C, i, path, sizeof path);
    model_key(C, i, key, sizeof key);
    mlsba_model_t *m = NULL;
    if (mlsba_model_load(path, key, &m) == 0) {
      mlsba_model_destroy(C->models.rate[i]);
      C->models.rate[i] = m;
    }
  }
}

int mlsba__factor_models_save(const mlsba__factor_ctx_t *C) {
  int err = 0;
  mlsba_model_t *const *rate = C->models.rate;
  for (size_t i = 0; !err && i < C->cfg.p; i++) {
    if (C->cfg.virt || rate[i] == NULL || mlsba_model_num_points(rate[i]) == 0)
      continue;
    char path[4096], key[512];
    model_path(C, i, path, sizeof path);
    model_key(C, i, key, sizeof key);
    err = mlsba_model_save(rate[i], path, key);
  }
  return err;
}

int mlsba__factor_models_open(mlsba__factor_ctx_t *C) {
  int err = 0;
  const mlsba__factor_cfg_t *c = &C->cfg;
  for (size_t i = 0; !err && i < c->p; i++)
    err = c->virt ? sim_rate(mlsba_platform_device_model(c->pl, i), c->unit_ref,
                             &C->models.rate[i])
                  : mlsba_model_create(&C->models.rate[i]);
  if (!err && c->o.model_dir)
    load_saved(C);
  return err;
}

void mlsba__factor_models_close(mlsba__factor_ctx_t *C) {
  for (size_t i = 0; C->models.rate && i < C->cfg.p; i++)
    mlsba_model_destroy(C->models.rate[i]);
  free(C->models.rate);
  free(C->models.warm);
}

/* ---- what a real step teaches ------------------------------------------ */

/* A measured point joins the one within a tenth of its load (their mean
 * at the older load): steps of nearby sizes follow each other, and one
 * noisy step on a shared machine would otherwise swing the next split.
 * Another process only ever makes a step slower: a rate far below the
 * point's counts a quarter (a 50 ms stall of one core at n = 4096 halved
 * its rate, and the mean then misled five further steps by 14-18%). */
static void add_point(mlsba_model_t *m, double x, double rate) {
  for (size_t k = 0; k < mlsba_model_num_points(m); k++) {
    double px, ps;
    mlsba_model_get_point(m, k, &px, &ps);
    if (px >= 0.9 * x && px <= 1.1 * x) {
      double w = rate < 0.75 * ps ? 0.25 : 0.5;
      mlsba_model_set_point(m, px, (1 - w) * ps + w * rate);
      return;
    }
  }
  mlsba_model_set_point(m, x, rate);
}

/* Every device's point: its share's flops over its time (the panel's
 * time taken out of the core that factorized it). */
void mlsba__factor_learn(mlsba__factor_ctx_t *C,
                         const mlsba__factor_step_t *st) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  const int64_t *load = C->lay.load;
  /* An accelerator's first share compiles its kernels (CLBlast's, on first
   * use in the process) on the thread of its group's core: neither's
   * speed. A model that slow would give them nothing again, and nothing
   * would correct it, so that step teaches nothing. */
  int warming = 0;
  for (size_t i = 0; i < c->p; i++)
    if (load[i] > 0 && mlsba__factor_is_accel(c, i) && !C->models.warm[i])
      warming = C->models.warm[i] = 1;
  for (size_t i = 0; i < c->p && !warming; i++) {
    if (load[i] <= 0)
      continue;
    double t = C->scratch.time[i];
    if ((long)i == c->panel_dev && st->plan.lookahead)
      t -= st->panel_s;
    double rate = (double)load[i] * st->unit_flops / t;
    if (t > 0 && rate >= MLSBA_SPEED_MIN && rate <= MLSBA_SPEED_MAX)
      add_point(C->models.rate[i], (double)load[i], rate);
  }
}

/* The panel's time, measured or virtual, for the next panel's estimate
 * (mlsba__factor_panel_estimate). */
void mlsba__factor_learn_panel(mlsba__factor_ctx_t *C,
                               const mlsba__factor_step_t *st) {
  if (st->panel_s > 0) {
    C->models.panel_s = st->panel_s;
    C->models.panel_flops = mlsba__factor_next_panel_flops(C, st);
  }
}
