/* The context of one factorization: every part allocated at once and
 * freed at once, what is resolved once from the platform and the options
 * (cfg), and the devices in use. */
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "driver.h"

/* Which devices are simulated: all (virtual time), none, or a mix that
 * would add virtual seconds to real ones (refused). */
static int platform_kind(mlsba__factor_cfg_t *c) {
  size_t sims = 0;
  for (size_t i = 0; i < c->p; i++)
    sims += (mlsba__platform_device_roles(c->pl, i) & MLSBA__ROLE_VIRTUAL) != 0;
  if (sims > 0 && sims < c->p)
    return mlsba__fail(MLSBA_EINVAL, "factor: the platform mixes simulated "
                                     "and real devices");
  c->virt = sims > 0;
  return 0;
}

/* The core that factorizes panels: on a simulated platform the first
 * device of the first group (its driving core), else the first core in
 * group order. */
static long choose_panel_device(const mlsba__factor_cfg_t *c) {
  if (c->virt)
    return (long)c->pl->group_dev[0];
  for (size_t k = 0; k < c->p; k++)
    if (mlsba__factor_is_core(c, c->pl->group_dev[k]))
      return (long)c->pl->group_dev[k];
  return -1;
}

/* A switch of the environment: unset or "" leaves *on as it is; 1 and 0
 * (or on/off, yes/no) set it; any other value is refused, before the
 * matrix is touched. */
static int env_switch(const char *name, int *on) {
  static const char *const yes[] = {"1", "on", "yes", "true"}, *const no[] = {
                                                                   "0", "off",
                                                                   "no",
                                                                   "false"};
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return 0;
  for (size_t k = 0; k < 4; k++) {
    if (strcmp(v, yes[k]) == 0)
      return *on = 1, 0;
    if (strcmp(v, no[k]) == 0)
      return *on = 0, 0;
  }
  return mlsba__fail(MLSBA_EINVAL, "factor: %s='%.40s' must be 1 or 0", name,
                     v);
}

/* What the environment adds to the options: MLSBA_REPRODUCIBLE=1 turns
 * the reproducible split on, MLSBA_MODEL_CACHE=0 the cache off (neither
 * turns the caller's choice the other way). */
static int resolve_env(mlsba__factor_cfg_t *c) {
  int reproducible = c->o.reproducible != 0, cache = 1;
  int err = env_switch("MLSBA_REPRODUCIBLE", &reproducible);
  if (!err)
    err = env_switch("MLSBA_MODEL_CACHE", &cache);
  c->reproducible = c->o.reproducible || reproducible;
  c->model_cache = c->o.model_cache && cache && !c->reproducible;
  return err;
}

/* The options resolved once: the split, the ways, the solve's place. */
static void resolve(mlsba__factor_cfg_t *c) {
  const mlsba_factor_opts_t *o = &c->o;
  c->ways_static = o->ways == MLSBA_FACTOR_WAYS_STATIC;
  /* A reproducible split is a fixed slice: given, or even (context.c's
   * take_fraction). */
  c->split = c->reproducible ? MLSBA_FACTOR_SPLIT_FIXED_SLICE : o->split;
  c->slice_of_kernels = c->split == MLSBA_FACTOR_SPLIT_KERNEL_SLICE;
  c->tunes_slice =
      c->slice_of_kernels || (c->split == MLSBA_FACTOR_SPLIT_FIXED_SLICE &&
                              o->fraction == NULL && !c->reproducible);
  /* Static steps on a simulated platform split a panel's solve by the
   * row's own split at every step (seed 003 splits every DTRSM between
   * the GPU and the cores as it splits DGEMM). */
  c->solve = o->solve == MLSBA_FACTOR_SOLVE_AUTO && c->virt && c->ways_static
                 ? MLSBA_FACTOR_SOLVE_SPLIT
                 : o->solve;
}

static int open_cfg(mlsba__factor_ctx_t *C, mlsba_executor_t *ex,
                    const mlsba_factor_opts_t *o) {
  mlsba__factor_cfg_t *c = &C->cfg;
  c->ex = ex;
  c->pl = ex->pl;
  c->o = *o;
  c->p = c->pl->ndev;
  c->q = c->pl->ngroups;
  /* A simulated profile's unit: the caller's, else a column of the
   * product the platform says its speeds count (columns_of: 2 M K
   * flops), else a column of an n x n x n product. */
  double n = (double)C->P->n;
  int64_t cm = 0, ck = 0;
  int says = mlsba_platform_columns_of(c->pl, &cm, &ck);
  c->unit_ref = o->sim_unit_flops > 0 ? o->sim_unit_flops
                : says                ? 2 * (double)cm * (double)ck
                : 2 * n * n > 1       ? 2 * n * n
                                      : 1;
  int err = platform_kind(c);
  if (err)
    return err;
  c->panel_dev = choose_panel_device(c);
  if ((err = resolve_env(c)) != 0)
    return err;
  resolve(c);
  mlsba__factor_log_open(c);
  return 0;
}

static int alloc_report(mlsba__factor_ctx_t *C) {
  mlsba_factor_report_t *R = C->R;
  int64_t kmax = mlsba__factor_diag(C->P);
  size_t steps = (size_t)((kmax + C->P->nb - 1) / C->P->nb) + 1;
  size_t p = C->cfg.p;
  R->p = p;
  R->virtual_time = C->cfg.virt;
  R->panel_device = C->cfg.panel_dev;
  R->flops = C->P->ops->flops(C->P);
  R->dropped = calloc(p, 1);
  R->units = calloc(steps, sizeof *R->units);
  R->step_seconds = calloc(steps, sizeof *R->step_seconds);
  R->panel_seconds = calloc(steps, sizeof *R->panel_seconds);
  R->share = calloc(steps * p, sizeof *R->share);
  R->time = calloc(steps * p, sizeof *R->time);
  R->ahead_device = malloc(steps * sizeof *R->ahead_device);
  if (!R->dropped || !R->units || !R->step_seconds || !R->panel_seconds ||
      !R->share || !R->time || !R->ahead_device)
    return MLSBA_ENOMEM;
  return 0;
}

/* calloc(n, sizeof *ptr) into ptr, or ENOMEM. */
#define ALLOC(ptr, n)                                                          \
  do {                                                                         \
    if (((ptr) = calloc((n), sizeof *(ptr))) == NULL)                          \
      return MLSBA_ENOMEM;                                                     \
  } while (0)

static int alloc_parts(mlsba__factor_ctx_t *C) {
  mlsba__factor_cfg_t *c = &C->cfg;
  size_t p = c->p;
  ALLOC(c->group_size, c->q);
  ALLOC(C->models.rate, p);
  ALLOC(C->dev.active, p);
  ALLOC(C->models.warm, p);
  ALLOC(C->models.saved, p);
  ALLOC(C->models.seeded, p);
  ALLOC(C->lay.load, p);
  ALLOC(C->lay.exec_off, p);
  ALLOC(C->lay.log_off, p);
  ALLOC(C->plan.cand, p);
  ALLOC(C->plan.rows, p);
  ALLOC(C->scratch.clip, p);
  ALLOC(C->scratch.one, p);
  ALLOC(C->scratch.time, p);
  ALLOC(C->scratch.extra, p);
  ALLOC(C->scratch.team, p);
  C->lay.p = p;
  for (size_t g = 0; g < c->q; g++)
    c->group_size[g] = c->pl->group_start[g + 1] - c->pl->group_start[g];
  c->group_dev = c->pl->group_dev;
  return 0;
}

/* What resident columns need: per device, and a row per column where an
 * OpenCL device may hold columns. */
static int alloc_resident(mlsba__factor_ctx_t *C) {
  mlsba__factor_residency_t *r = &C->res;
  size_t p = C->cfg.p, n = C->P->n > 0 ? (size_t)C->P->n : 1;
  size_t accels = 0;
  for (size_t i = 0; i < p; i++)
    accels += (size_t)mlsba__factor_is_accel(&C->cfg, i);
  r->stream = C->cfg.o.stream;
  ALLOC(r->lo, p);
  ALLOC(r->hi, p);
  ALLOC(r->sent_row, accels ? n : 1);
  ALLOC(r->cap, p);
  ALLOC(r->streams, p);
  ALLOC(r->env, p);
  ALLOC(r->lost, p);
  ALLOC(r->traffic.to_dev, p);
  ALLOC(r->traffic.from_dev, p);
  ALLOC(r->traffic.moves, p);
  return 0;
}

/* What the cores need to take from each other's shares. */
static int alloc_shares(mlsba__factor_ctx_t *C) {
  mlsba__factor_shares_t *s = &C->shares;
  ALLOC(s->next, C->cfg.p);
  ALLOC(s->end, C->cfg.p);
  ALLOC(s->did, C->cfg.p);
  ALLOC(s->started, C->cfg.p);
  if (pthread_mutex_init(&s->mu, NULL) != 0)
    return MLSBA_ENOMEM;
  s->mu_ready = 1;
  return 0;
}

/* Devices that take units: those the options name that have code for the
 * update (cores, simulated devices, accelerators where the operation has
 * an OpenCL half). By default every one but a device that computes on
 * the other devices' cores (pocl beside the cores), which would slow them
 * with every unit it took. */
static int choose_active(mlsba__factor_ctx_t *C) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  size_t n = 0;
  for (size_t i = 0; i < c->p; i++) {
    int capable = c->virt || mlsba__factor_is_core(c, i) ||
                  (mlsba__factor_is_accel(c, i) && C->P->ops->cl != NULL);
    int wanted = c->o.use ? c->o.use[i] != 0 : !c->ex->opened[i].shares_cores;
    C->dev.active[i] = (unsigned char)(capable && wanted);
    n += C->dev.active[i];
  }
  if (n == 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "factor: no device in use can take the update of "
                       "%s (cores and simulated devices can; OpenCL "
                       "devices %s)",
                       C->P->ops->name,
                       C->P->ops->cl ? "can too" : "cannot yet");
  return 0;
}

/* A reproducible split without the caller's fractions: every device in
 * use takes as many units. */
static int even_fraction(mlsba__factor_ctx_t *C) {
  size_t p = C->cfg.p;
  if ((C->plan.fraction = calloc(p, sizeof *C->plan.fraction)) == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  for (size_t i = 0; i < p; i++)
    C->plan.fraction[i] = C->dev.active[i] ? 1 : 0;
  return 0;
}

/* The caller's fixed slice (opts.fraction), checked. */
static int take_fraction(mlsba__factor_ctx_t *C) {
  const mlsba__factor_cfg_t *c = &C->cfg;
  if (c->reproducible && c->o.fraction == NULL)
    return even_fraction(C);
  if (c->split != MLSBA_FACTOR_SPLIT_FIXED_SLICE || c->o.fraction == NULL)
    return 0;
  double sum = 0;
  for (size_t i = 0; i < c->p; i++) {
    double f = c->o.fraction[i];
    if (!isfinite(f) || f < 0)
      return mlsba__fail(MLSBA_EINVAL,
                         "factor: fraction[%zu] = %g must be finite and "
                         ">= 0",
                         i, f);
    sum += C->dev.active[i] ? f : 0;
  }
  if (!(sum > 0))
    return mlsba__fail(MLSBA_EINVAL, "factor: the fractions of the devices in "
                                     "use sum to 0");
  C->plan.fraction = malloc(c->p * sizeof *C->plan.fraction);
  if (C->plan.fraction == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  memcpy(C->plan.fraction, c->o.fraction, c->p * sizeof *C->plan.fraction);
  return 0;
}

int mlsba__factor_ctx_open(mlsba__factor_ctx_t *C, mlsba_executor_t *ex,
                           mlsba__factor_problem_t *P,
                           const mlsba_factor_opts_t *o,
                           mlsba_factor_report_t *R) {
  memset(C, 0, sizeof *C);
  C->P = P;
  C->R = R;
  int err = open_cfg(C, ex, o);
  if (err)
    return err;
  if (alloc_parts(C) || alloc_report(C) || alloc_resident(C) || alloc_shares(C))
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if ((err = choose_active(C)) != 0 || (err = take_fraction(C)) != 0)
    return err;
  double t0 = mlsba__now();
  err = mlsba__factor_models_open(C);
  R->models_read_s = mlsba__now() - t0;
  return err;
}

void mlsba__factor_ctx_close(mlsba__factor_ctx_t *C) {
  mlsba__factor_models_close(C);
  free(C->cfg.group_size);
  free(C->dev.active);
  free(C->plan.fraction);
  free(C->plan.cand);
  free(C->plan.rows);
  free(C->lay.load);
  free(C->lay.exec_off);
  free(C->lay.log_off);
  free(C->scratch.clip);
  free(C->scratch.one);
  free(C->scratch.time);
  free(C->scratch.extra);
  free(C->scratch.team);
  mlsba__factor_release_resident(C);
  mlsba__factor_residency_t *r = &C->res;
  free(r->lo);
  free(r->hi);
  free(r->sent_row);
  free(r->cap);
  free(r->streams);
  free(r->env);
  free(r->lost);
  free(r->traffic.to_dev);
  free(r->traffic.from_dev);
  free(r->traffic.moves);
  mlsba__factor_shares_t *s = &C->shares;
  free(s->next);
  free(s->end);
  free(s->did);
  free(s->started);
  if (s->mu_ready)
    pthread_mutex_destroy(&s->mu);
}
