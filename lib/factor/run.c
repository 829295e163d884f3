/* The step loop of a factorization. Step 0 factorizes panel 0; step k
 * splits the update after panel k - 1 and runs it. With lookahead (LU and
 * lower Cholesky) the core that factorizes panels takes the next panel's
 * units first and factorizes it inside its share; upper Cholesky solves
 * the next panel's block row across every column, so its panel waits for
 * the update. */
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../core/load.h"
#include "../partition/fpm.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"
#include "run.h"

typedef mlsba__factor_step_t step_t;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int is_sim(const mlsba_platform_t *pl, size_t i) {
  return pl->dev[i].backend->type == MLSBA_DEVICE_SIM;
}

/* Which devices are simulated: all (virtual time), none, or a mix that
 * would add virtual seconds to real ones (refused). */
static int platform_kind(mlsba__factor_run_t *F) {
  size_t sims = 0;
  for (size_t i = 0; i < F->p; i++)
    sims += (size_t)is_sim(F->pl, i);
  if (sims > 0 && sims < F->p)
    return mlsba__fail(MLSBA_EINVAL, "factor: the platform mixes simulated "
                                     "and real devices");
  F->virt = sims > 0;
  return 0;
}

/* The core that factorizes panels: on a simulated platform the first
 * device of the first group (its driving core), else the first CPU core
 * in group order. */
static long choose_panel_device(const mlsba__factor_run_t *F) {
  if (F->virt)
    return (long)F->pl->group_dev[0];
  for (size_t k = 0; k < F->p; k++)
    if (F->pl->dev[F->pl->group_dev[k]].backend->type == MLSBA_DEVICE_CPU)
      return (long)F->pl->group_dev[k];
  return -1;
}

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

static int alloc_report(mlsba__factor_run_t *F) {
  mlsba_factor_report_t *R = F->R;
  int64_t kmax = mlsba__factor_diag(F->P);
  size_t steps = (size_t)((kmax + F->P->nb - 1) / F->P->nb) + 1, p = F->p;
  R->p = p;
  R->virtual_time = F->virt;
  R->panel_device = F->panel_dev;
  R->flops = F->P->ops->flops(F->P);
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

static int alloc_scratch(mlsba__factor_run_t *F) {
  size_t p = F->p;
  F->group_size = calloc(F->q, sizeof *F->group_size);
  F->rate = calloc(p, sizeof *F->rate);
  F->active = calloc(p, 1);
  F->warm = calloc(p, 1);
  F->load = calloc(p, sizeof *F->load);
  F->exec_off = calloc(p, sizeof *F->exec_off);
  F->log_off = calloc(p, sizeof *F->log_off);
  F->clip = calloc(p, sizeof *F->clip);
  F->one = calloc(p, sizeof *F->one);
  F->time = calloc(p, sizeof *F->time);
  F->extra = calloc(p, sizeof *F->extra);
  if (!F->group_size || !F->rate || !F->active || !F->warm || !F->load ||
      !F->exec_off || !F->log_off || !F->clip || !F->one || !F->time ||
      !F->extra)
    return MLSBA_ENOMEM;
  for (size_t g = 0; g < F->q; g++)
    F->group_size[g] = F->pl->group_start[g + 1] - F->pl->group_start[g];
  F->group_dev = F->pl->group_dev;
  return 0;
}

/* Devices that take units: those the options name that have code for the
 * update (cores, simulated devices, OpenCL devices). By default
 * every one but a device that computes on the other devices' cores (pocl
 * beside the cores), which would slow them with every unit it took. */
static int choose_active(mlsba__factor_run_t *F) {
  size_t n = 0;
  for (size_t i = 0; i < F->p; i++) {
    mlsba_device_type_t type = F->pl->dev[i].backend->type;
    int capable =
        F->virt || type == MLSBA_DEVICE_CPU || type == MLSBA_DEVICE_OPENCL;
    int wanted = F->o.use ? F->o.use[i] != 0 : !F->ex->opened[i].shares_cores;
    F->active[i] = (unsigned char)(capable && wanted);
    n += F->active[i];
  }
  if (n == 0)
    return mlsba__fail(MLSBA_EINVAL, "factor: no device in use can take the "
                                     "update (cores, simulated devices and "
                                     "OpenCL devices can)");
  return 0;
}

static int is_accel(const mlsba__factor_run_t *F, size_t i) {
  return F->pl->dev[i].backend->type == MLSBA_DEVICE_OPENCL;
}

/* What resident columns need: per device, and a row per column where an
 * OpenCL device may hold columns. */
static int alloc_resident(mlsba__factor_run_t *F) {
  size_t p = F->p, n = F->P->n > 0 ? (size_t)F->P->n : 1;
  size_t accels = 0;
  for (size_t i = 0; i < p; i++)
    accels += (size_t)is_accel(F, i);
  F->res_lo = calloc(p, sizeof *F->res_lo);
  F->res_hi = calloc(p, sizeof *F->res_hi);
  F->sent_row = calloc(accels ? n : 1, sizeof *F->sent_row);
  F->cl_cap = calloc(p, sizeof *F->cl_cap);
  F->streams = calloc(p, 1);
  F->cl_env = calloc(p, sizeof *F->cl_env);
  F->to_dev = calloc(p, sizeof *F->to_dev);
  F->from_dev = calloc(p, sizeof *F->from_dev);
  F->moves = calloc(p, sizeof *F->moves);
  return F->res_lo && F->res_hi && F->sent_row && F->cl_cap && F->streams &&
                 F->cl_env && F->to_dev && F->from_dev && F->moves
             ? 0
             : MLSBA_ENOMEM;
}

/* What the cores need to take from each other's shares. */
static int alloc_shares(mlsba__factor_run_t *F) {
  F->next = calloc(F->p, sizeof *F->next);
  F->end = calloc(F->p, sizeof *F->end);
  F->did = calloc(F->p, sizeof *F->did);
  F->started = calloc(F->p, 1);
  if (!F->next || !F->end || !F->did || !F->started)
    return MLSBA_ENOMEM;
  if (pthread_mutex_init(&F->share_mu, NULL) != 0)
    return MLSBA_ENOMEM;
  F->share_mu_ready = 1;
  return 0;
}

/* The caller's fixed slice (opts.fraction), checked. */
static int take_fraction(mlsba__factor_run_t *F) {
  if (F->o.split != MLSBA_FACTOR_SPLIT_FIXED_SLICE || F->o.fraction == NULL)
    return 0;
  double sum = 0;
  for (size_t i = 0; i < F->p; i++) {
    double f = F->o.fraction[i];
    if (!isfinite(f) || f < 0)
      return mlsba__fail(MLSBA_EINVAL,
                         "factor: fraction[%zu] = %g must be finite and "
                         ">= 0",
                         i, f);
    sum += F->active[i] ? f : 0;
  }
  if (!(sum > 0))
    return mlsba__fail(MLSBA_EINVAL, "factor: the fractions of the devices in "
                                     "use sum to 0");
  F->fraction = malloc(F->p * sizeof *F->fraction);
  if (F->fraction == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  memcpy(F->fraction, F->o.fraction, F->p * sizeof *F->fraction);
  return 0;
}

static int open_models(mlsba__factor_run_t *F) {
  int err = 0;
  for (size_t i = 0; !err && i < F->p; i++)
    err = F->virt ? sim_rate(mlsba_platform_device_model(F->pl, i), F->unit_ref,
                             &F->rate[i])
                  : mlsba_model_create(&F->rate[i]);
  if (!err && F->o.model_dir)
    mlsba__factor_run_load_models(F);
  return err;
}

int mlsba__factor_run_open(mlsba__factor_run_t *F, mlsba_executor_t *ex,
                           mlsba__factor_problem_t *P,
                           const mlsba_factor_opts_t *o,
                           mlsba_factor_report_t *R) {
  memset(F, 0, sizeof *F);
  F->ex = ex;
  F->pl = ex->pl;
  F->P = P;
  F->o = *o;
  F->R = R;
  F->p = F->pl->ndev;
  F->q = F->pl->ngroups;
  double n = (double)P->n;
  F->unit_ref = o->sim_unit_flops > 0 ? o->sim_unit_flops
                : 2 * n * n > 1       ? 2 * n * n
                                      : 1;
  int err = platform_kind(F);
  if (err)
    return err;
  F->panel_dev = choose_panel_device(F);
  F->ahead_dev = F->panel_dev;
  if (alloc_scratch(F) || alloc_report(F) || alloc_resident(F) ||
      alloc_shares(F))
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if ((err = choose_active(F)) != 0 || (err = take_fraction(F)) != 0 ||
      (err = open_models(F)) != 0)
    return err;
  return 0;
}

void mlsba__factor_run_close(mlsba__factor_run_t *F) {
  for (size_t i = 0; F->rate && i < F->p; i++)
    mlsba_model_destroy(F->rate[i]);
  free(F->rate);
  free(F->group_size);
  free(F->active);
  free(F->warm);
  free(F->fraction);
  free(F->load);
  free(F->exec_off);
  free(F->log_off);
  free(F->clip);
  free(F->one);
  free(F->time);
  free(F->extra);
  for (size_t i = 0; F->cl_env && i < F->p; i++)
    if (F->cl_env[i])
      mlsba__factor_cl_release(F, i);
  mlsba_load_destroy(F->work);
  free(F->res_lo);
  free(F->res_hi);
  free(F->sent_row);
  free(F->cl_cap);
  free(F->streams);
  free(F->cl_env);
  free(F->to_dev);
  free(F->from_dev);
  free(F->moves);
  free(F->next);
  free(F->end);
  free(F->did);
  free(F->started);
  if (F->share_mu_ready)
    pthread_mutex_destroy(&F->share_mu);
}

/* ---- one step ----------------------------------------------------------- */

/* The virtual time of a panel on the device that factorizes it: its flops
 * at that device's rate for the panel's width. */
static double sim_panel_time(const mlsba__factor_run_t *F, double flops,
                             int64_t jb) {
  long d = F->panel_dev >= 0 ? F->panel_dev : 0;
  return flops / mlsba__fpm_speed(F->rate[d], (double)jb);
}

/* Lower Cholesky with lookahead: the panel's core factorizes only the
 * next panel's diagonal block, and the solve of the rows below it (h x
 * nb x nb flops, as much as the panel's columns' update at the end) is
 * split between the devices after the update (solve_step), instead of
 * lengthening the chain of panels that every step waits for. */
static int solve_apart(const mlsba__factor_run_t *F, const step_t *st) {
  (void)F;
  return st->solve_apart;
}

/* The step's panel has a solve that may be split. */
static int solve_splittable(const mlsba__factor_run_t *F, const step_t *st) {
  return F->P->ops->solve_rows && st->may_look && st->jbn > 0 &&
         F->P->ops->solve_rows(F->P, st->jn, st->jbn) > 0;
}

/* The next panel's flops on the panel's core. */
static double next_panel_flops(const mlsba__factor_run_t *F, const step_t *st) {
  double b = (double)st->jbn;
  return solve_apart(F, st) ? b * b * b / 3
                            : F->P->ops->panel_flops(F->P, st->jn, st->jbn);
}

/* The next panel, as far as its core factorizes it. */
static int panel_on_core(mlsba__factor_run_t *F, const step_t *st) {
  return solve_apart(F, st) ? F->P->ops->panel_diag(F->P, st->jn, st->jbn)
                            : F->P->ops->panel(F->P, st->jn, st->jbn);
}

/* The next panel after an update or first: on a simulated platform the
 * calling thread computes it whole (a split solve's rows are only timed
 * there), else its core as far as it factorizes it. */
static int panel_alone(mlsba__factor_run_t *F, const step_t *st) {
  return F->virt ? F->P->ops->panel(F->P, st->jn, st->jbn)
                 : panel_on_core(F, st);
}

/* A step without lookahead where the panel's core factorizes the next
 * panel's diagonal block inside its share: the update of that whole
 * block's lower triangle with the step's panel, jb nb (nb + 1) flops, on
 * the panel's core. 0 otherwise. */
static double diag_update_time(const mlsba__factor_run_t *F, const step_t *st) {
  if (!st->diag_first)
    return 0;
  double b = (double)st->jbn;
  return sim_panel_time(F, (double)st->jb * b * (b + 1), st->jbn);
}

/* Its part that the core's own x units leave out: its share begins with
 * the next panel's first columns, so it updates the rest of the block,
 * r = nb - x columns of it, r (r + 1) / (nb (nb + 1)) of the whole (their
 * owners update those columns whole as well: counted twice, not saved). */
static double diag_rest_time(const mlsba__factor_run_t *F, const step_t *st,
                             int64_t x) {
  double b = (double)st->jbn, r = (double)(st->jbn - x);
  return r > 0 ? diag_update_time(F, st) * r * (r + 1) / (b * (b + 1)) : 0;
}

/* The next panel's time as the split sees it: virtual, or the last panel
 * measured scaled by the flops. */
static double panel_estimate(const mlsba__factor_run_t *F, const step_t *st) {
  if (st->jbn == 0)
    return 0;
  if (F->virt)
    return sim_panel_time(F, next_panel_flops(F, st), st->jbn);
  if (F->panel_flops <= 0)
    return F->panel_s;
  return F->panel_s * next_panel_flops(F, st) / F->panel_flops;
}

/* The executor lays shares out group by group; the step's units are laid
 * out with the device that updates the next panel's columns first (the
 * panel's core unless another does), so that its share begins with them,
 * then the other cores, and the accelerators at the right end (the first
 * in group order rightmost): the trailing matrix shrinks from the left, so
 * an accelerator's share of step k + 1 overlaps most of its columns of
 * step k, and only its left boundary moves. */
static void lay_out(mlsba__factor_run_t *F) {
  int64_t off = 0, log = 0;
  for (size_t k = 0; k < F->p; k++) {
    size_t i = F->group_dev[k];
    F->exec_off[i] = off;
    off += F->load[i];
  }
  long first = F->ahead_dev >= 0 ? F->ahead_dev : F->panel_dev;
  if (first >= 0) {
    F->log_off[first] = 0;
    log = F->load[first];
  }
  for (size_t k = 0; k < F->p; k++) {
    size_t i = F->group_dev[k];
    if ((long)i == first || is_accel(F, i))
      continue;
    F->log_off[i] = log;
    log += F->load[i];
  }
  for (size_t k = 0; k < F->p; k++) {
    size_t i = F->group_dev[k];
    if ((long)i == first || !is_accel(F, i))
      continue;
    off -= F->load[i];
    F->log_off[i] = off;
  }
}

long mlsba__factor_share_device(const mlsba__factor_run_t *F, int64_t first) {
  for (size_t i = 0; i < F->p; i++)
    if (F->load[i] > 0 && F->exec_off[i] == first)
      return (long)i;
  return -1;
}

/* A redo's units [u0, u1) through its remap, run by run of consecutive
 * logical units. */
static void update_remapped(const step_t *st, int64_t u0, int64_t u1) {
  while (u0 < u1) {
    int64_t run = 1;
    while (u0 + run < u1 && st->remap[u0 + run] == st->remap[u0] + run)
      run++;
    st->F->P->ops->update(st->F->P, st->j, st->jb, st->remap[u0],
                          st->remap[u0] + run);
    u0 += run;
  }
}

/* ---- cores share the ends of their shares ------------------------------ */

/* The models split a step before it runs; a core still ends before or
 * after the other by a few percent (a step that another process or the
 * panel's time made longer, a model point a tenth off): 55 ms of a 0.6 s
 * LU at n = 4096 here, one core idle at the end of every step. So a core
 * updates its share in pieces from its front, a large one first (all but
 * an eighth), then halves, and a core whose share is done takes half of what
 * another core has not begun, from its end. Every extra piece packs the panel's
 * operand again (as much as 11 columns' update, 3968 rows), so no piece
 * is smaller than SHARE_PIECE units unless it is all that is left. */
enum { SHARE_PIECE = 32 };

/* Before a run: each core's range of logical units, the next panel's
 * units excepted (the panel's core updates them first, then factorizes
 * the panel). Sharing needs two cores and no redo (a redo's units are
 * remapped). */
static void open_shares(mlsba__factor_run_t *F, step_t *st) {
  size_t cores = 0;
  for (size_t i = 0; i < F->p; i++) {
    int core =
        F->load[i] > 0 && F->pl->dev[i].backend->type == MLSBA_DEVICE_CPU;
    int64_t ahead =
        (long)i == F->panel_dev && st->lookahead && st->jbn > 0 ? st->need : 0;
    F->next[i] = core ? F->log_off[i] + ahead : 0;
    F->end[i] = core ? F->log_off[i] + F->load[i] : 0;
    F->did[i] = core ? ahead : F->load[i]; /* the others keep theirs */
    F->started[i] = 0;
    cores += (size_t)core;
  }
  st->sharing = cores >= 2 && st->remap == NULL;
}

/* The next piece of core i's own share: *n units from *u (0: none left). */
static void take_own(mlsba__factor_run_t *F, const step_t *st, size_t i,
                     int64_t *u, int64_t *n) {
  pthread_mutex_lock(&F->share_mu);
  int64_t rest = F->end[i] - F->next[i];
  *n = !st->sharing || rest < 2 * SHARE_PIECE ? rest
       : rest / 8 >= SHARE_PIECE              ? rest - rest / 8
                                              : rest / 2;
  *u = F->next[i];
  F->next[i] += *n;
  F->did[i] += *n;
  pthread_mutex_unlock(&F->share_mu);
}

/* Half of what the core furthest from its end has not begun, from that
 * end, for core i: 0 when no core has two pieces left. A core that has
 * not begun is left alone: if its group fails before it does, a redo
 * takes its whole share. */
static int take_other(mlsba__factor_run_t *F, size_t i, int64_t *u,
                      int64_t *n) {
  pthread_mutex_lock(&F->share_mu);
  size_t from = F->p;
  int64_t most = 2 * SHARE_PIECE - 1;
  for (size_t v = 0; v < F->p; v++)
    if (v != i && F->started[v] && F->end[v] - F->next[v] > most) {
      most = F->end[v] - F->next[v];
      from = v;
    }
  if (from < F->p) {
    *n = most / 2;
    F->end[from] -= *n;
    *u = F->end[from];
    F->did[i] += *n;
  }
  pthread_mutex_unlock(&F->share_mu);
  return from < F->p;
}

/* A core's units after the next panel's: its own in pieces, then, when
 * the step shares, what it can take from the others. */
static void update_shared(mlsba__factor_run_t *F, const step_t *st, size_t i) {
  int64_t u, n;
  for (take_own(F, st, i, &u, &n); n > 0; take_own(F, st, i, &u, &n))
    F->P->ops->update(F->P, st->j, st->jb, u, u + n);
  while (st->sharing && take_other(F, i, &u, &n))
    F->P->ops->update(F->P, st->j, st->jb, u, u + n);
}

/* A core's share of the step: units [first, first + count) as the
 * executor numbers them, the next panel factorized after its units. */
static int update_units(void *user, int64_t first, int64_t count) {
  step_t *st = user;
  mlsba__factor_run_t *F = st->F;
  long i = mlsba__factor_share_device(F, first);
  if (i < 0)
    return 1; /* not a range this step gave out */
  if (st->remap) {
    update_remapped(st, first, first + count);
    st->done[i] = 1;
    return 0;
  }
  pthread_mutex_lock(&F->share_mu);
  F->started[i] = 1;
  pthread_mutex_unlock(&F->share_mu);
  int64_t lo = F->log_off[i];
  if (i == F->panel_dev && st->lookahead && st->jbn > 0) {
    F->P->ops->update(F->P, st->j, st->jb, lo, lo + st->need);
    double t = mlsba__now();
    st->stop = panel_on_core(F, st);
    st->panel_s = mlsba__now() - t;
    st->panel_done = 1;
  }
  update_shared(F, st, (size_t)i);
  st->done[i] = 1;
  return 0;
}

static int has_opencl(const mlsba__factor_run_t *F) {
  for (size_t i = 0; i < F->p; i++)
    if (is_accel(F, i))
      return 1;
  return 0;
}

/* The factorization's one load, set for a run of `units` units of this
 * step: an OpenCL device keeps its state (and columns) while it runs the
 * same load. Its OpenCL code is set on every platform with an OpenCL
 * device, dropped or not, so that the step it sees is this one. */
static int work_load(mlsba__factor_run_t *F, step_t *st, int64_t units) {
  int err =
      F->work ? 0 : mlsba_load_create(F->P->ops->update_load, units, &F->work);
  if (err)
    return err;
  F->work->units = units;
  err = mlsba_load_set_cpu(F->work, update_units, st);
  if (!err && has_opencl(F))
    err = mlsba__factor_set_opencl(F->work, st);
  return err;
}

static int real_run(mlsba__factor_run_t *F, step_t *st, int64_t units,
                    long *failed) {
  memset(st->done, 0, F->p);
  open_shares(F, st);
  int err = work_load(F, st, units);
  if (!err)
    err = mlsba_executor_run(F->ex, F->work, F->load, MLSBA_DRIVE_SHARED,
                             F->time, failed);
  if (!err && st->sharing) /* what each core updated: its point's load */
    memcpy(F->load, F->did, F->p * sizeof *F->load);
  return err;
}

/* ---- resident columns (OpenCL devices) ---------------------------------- */

/* The host computes the updates a resident column of device i missed:
 * from the panel of its checkpoint up to, not including, panel j_stop
 * (runs of columns sent at the same step together; upper Cholesky: on
 * the rows from top_row down, above it they came back already). The
 * columns are the host's again. */
static void replay_resident(mlsba__factor_run_t *F, size_t i, int64_t j_stop) {
  mlsba__factor_problem_t *P = F->P;
  int64_t kmax = mlsba__factor_diag(P);
  for (int64_t c = F->res_lo[i]; c < F->res_hi[i];) {
    int64_t e = c, r = F->sent_row[c];
    while (e < F->res_hi[i] && F->sent_row[e] == r)
      e++;
    for (int64_t j = r; j < j_stop; j += P->nb)
      P->ops->replay(P, j, min64(P->nb, kmax - j), c, e, F->top_row);
    c = e;
  }
  F->res_lo[i] = F->res_hi[i] = 0;
}

static void drop_accelerator(mlsba__factor_run_t *F, size_t i) {
  F->active[i] = 0;
  F->R->dropped[i] = 1;
  F->R->lost++;
}

/* Device i's resident columns outside [lo, hi) come back to the host. */
static int fetch_outside(mlsba__factor_run_t *F, size_t i, int64_t lo,
                         int64_t hi) {
  int64_t rlo = F->res_lo[i], rhi = F->res_hi[i];
  int err = 0;
  if (rlo < rhi && rlo < lo)
    err = mlsba__factor_cl_fetch(F, i, rlo, min64(rhi, lo));
  if (!err && rlo < rhi && rhi > hi)
    err = mlsba__factor_cl_fetch(F, i, rlo > hi ? rlo : hi, rhi);
  if (!err) {
    F->res_lo[i] = rlo > lo ? rlo : lo;
    F->res_hi[i] = min64(rhi, hi);
    if (F->res_lo[i] >= F->res_hi[i])
      F->res_lo[i] = F->res_hi[i] = 0;
  }
  return err;
}

/* Before a run: each accelerator keeps its columns of this step resident
 * or streams them; what it holds beyond the columns it keeps comes back.
 * A device whose read fails is dropped and the host replays its columns:
 * returns 1 then (the step is split again). */
static int settle_resident(mlsba__factor_run_t *F, step_t *st) {
  for (size_t i = 0; i < F->p; i++) {
    if (!is_accel(F, i))
      continue;
    int64_t lo = F->log_off[i], hi = lo + F->load[i];
    int keep = F->load[i] > 0 && mlsba__factor_cl_resident(st, i, &lo, &hi);
    F->streams[i] = F->load[i] > 0 && !keep;
    if (!keep)
      lo = hi = 0;
    if (F->res_lo[i] < F->res_hi[i] && fetch_outside(F, i, lo, hi) != 0) {
      replay_resident(F, i, st->j);
      drop_accelerator(F, i);
      return 1;
    }
  }
  return 0;
}

/* After a step without lookahead: the next panel's columns that an
 * accelerator holds come back before the panel is factorized (upper
 * Cholesky: its block row of every resident column, and its own columns
 * are the host's from then on). A failed read: the host replays that
 * device's columns through this step. */
static void return_next_panel(mlsba__factor_run_t *F, const step_t *st) {
  int64_t end = st->jn + st->jbn;
  int upper = F->P->ops->returns_block_row;
  for (size_t i = 0; st->jbn > 0 && i < F->p; i++) {
    if (F->res_lo[i] >= F->res_hi[i] || (!upper && F->res_lo[i] >= end))
      continue;
    int64_t c1 = min64(F->res_hi[i], end);
    if (upper ? mlsba__factor_cl_fetch_rows(F, i, st->jn, end) != 0
              : mlsba__factor_cl_fetch(F, i, F->res_lo[i], c1) != 0) {
      replay_resident(F, i, st->j + st->jb);
      drop_accelerator(F, i);
      continue;
    }
    F->res_lo[i] = c1 > F->res_lo[i] ? c1 : F->res_lo[i];
    if (c1 >= F->res_hi[i])
      F->res_lo[i] = F->res_hi[i] = 0;
  }
  F->top_row = end;
}

/* At the end (or a stop): every resident column comes back; where a
 * device cannot give them, the host replays them. */
static void flush_resident(mlsba__factor_run_t *F) {
  for (size_t i = 0; i < F->p; i++) {
    if (F->res_lo[i] >= F->res_hi[i])
      continue;
    if (mlsba__factor_cl_fetch(F, i, F->res_lo[i], F->res_hi[i]) == 0)
      F->res_lo[i] = F->res_hi[i] = 0;
    else
      replay_resident(F, i, F->applied);
  }
}

/* ---- streamed shares and failures --------------------------------------- */

/* Every trailing column, from the panel's first row down, kept before a
 * step in which an OpenCL device streams its share: a device that fails
 * may have written part of its columns back. */
static int backup_accelerators(mlsba__factor_run_t *F, const step_t *st,
                               void **copy) {
  *copy = NULL;
  int streams = 0;
  for (size_t i = 0; i < F->p; i++)
    streams |= F->streams[i];
  if (!streams)
    return 0;
  size_t es = mlsba__factor_esize(F->P);
  size_t rows = (size_t)(F->P->m - st->j);
  size_t cols = (size_t)(F->P->n - st->j - st->jb);
  char *b = malloc(rows * cols * es);
  if (b == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  const char *a = F->P->a;
  for (size_t c = 0; c < cols; c++)
    memcpy(b + c * rows * es,
           a + ((size_t)st->j +
                ((size_t)(st->j + st->jb) + c) * (size_t)F->P->lda) *
                   es,
           rows * es);
  *copy = b;
  return 0;
}

/* Puts back trailing column c (relative) from the copy. */
static void restore_column(mlsba__factor_run_t *F, const step_t *st,
                           const void *copy, int64_t c) {
  size_t es = mlsba__factor_esize(F->P);
  size_t rows = (size_t)(F->P->m - st->j);
  char *a = F->P->a;
  memcpy(
      a + ((size_t)st->j + (size_t)(st->j + st->jb + c) * (size_t)F->P->lda) *
              es,
      (const char *)copy + (size_t)c * rows * es, rows * es);
}

/* Puts back the columns of the logical units [lo, hi): columns for LU,
 * each pair's two columns for Cholesky. */
static void restore_units(mlsba__factor_run_t *F, const step_t *st,
                          const void *copy, int64_t lo, int64_t hi) {
  int64_t N = F->P->n - st->j - st->jb, cols[2];
  for (int64_t u = lo; u < hi; u++)
    for (int k = 0, n = F->P->ops->unit_columns(N, u, cols); k < n; k++)
      restore_column(F, st, copy, cols[k]);
}

/* After a run that failed on OpenCL device `failed`: the device is
 * dropped; the accelerators' resident columns are replayed on the host up
 * to this step (their device copies cannot be trusted), their streamed
 * columns go back to the copy, and the units of the accelerators and of
 * the cores that did not finish are done again by the cores, then the
 * next panel if its core did not factorize it. */
static int redo_step(mlsba__factor_run_t *F, step_t *st, long failed,
                     const void *copy) {
  int64_t *remap = malloc((size_t)st->units * sizeof *remap);
  if (remap == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  drop_accelerator(F, (size_t)failed);
  for (size_t i = 0; i < F->p; i++)
    if (F->res_lo[i] < F->res_hi[i])
      replay_resident(F, i, st->j);
  int64_t n = 0;
  for (size_t k = 0; k < F->p; k++) {
    size_t i = F->group_dev[k];
    int accel = is_accel(F, i);
    if (F->load[i] == 0 || (!accel && st->done[i]))
      continue;
    if (accel && F->streams[i])
      restore_units(F, st, copy, F->log_off[i], F->log_off[i] + F->load[i]);
    for (int64_t u = 0; u < F->load[i]; u++)
      remap[n++] = F->log_off[i] + u;
  }
  memset(F->streams, 0, F->p);
  int err = 0;
  if (n > 0) {
    unsigned char *cores = calloc(F->p, 1);
    for (size_t i = 0; cores && i < F->p; i++)
      cores[i] =
          F->active[i] && F->pl->dev[i].backend->type == MLSBA_DEVICE_CPU;
    mlsba__factor_split_in_t in = {.split = MLSBA_FACTOR_SPLIT_FPM,
                                   .p = F->p,
                                   .q = F->q,
                                   .group_size = F->group_size,
                                   .group_dev = F->group_dev,
                                   .rate =
                                       (const mlsba_model_t *const *)F->rate,
                                   .active = cores,
                                   .units = n,
                                   .unit_flops = st->unit_flops,
                                   .panel_dev = -1,
                                   .ahead_dev = -1};
    int fpm;
    err = cores ? mlsba__factor_split(&in, F->load, &fpm)
                : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
    free(cores);
    lay_out(F);
    st->remap = remap;
    long again = -1;
    if (!err)
      err = real_run(F, st, n, &again);
    st->remap = NULL;
  }
  if (!err && st->lookahead && st->jbn > 0 && !st->panel_done) {
    double t = mlsba__now();
    st->stop = panel_on_core(F, st);
    st->panel_s = mlsba__now() - t;
  }
  free(remap);
  return err;
}

static int split_step(mlsba__factor_run_t *F, step_t *st);

/* A real step: the accelerators' columns settled, the run, and after an
 * OpenCL device failed, the redo. */
static int real_step(mlsba__factor_run_t *F, step_t *st, long *failed) {
  int err;
  while ((err = settle_resident(F, st)) == 1) { /* a device was dropped */
    if ((err = split_step(F, st)) != 0)
      return err;
    lay_out(F);
  }
  void *copy = NULL;
  unsigned char *done = calloc(F->p, 1);
  err = done ? backup_accelerators(F, st, &copy)
             : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  st->done = done;
  st->panel_done = 0;
  if (!err)
    err = real_run(F, st, st->units, failed);
  long f = *failed;
  if (err && f >= 0 && is_accel(F, (size_t)f) && (copy || !F->streams[f])) {
    *failed = -1;
    err = redo_step(F, st, f, copy);
  }
  if (!err) {
    F->applied = st->j + st->jb;
    return_next_panel(F, st);
  }
  st->done = NULL;
  free(done);
  free(copy);
  return err;
}

/* Runs simulated shares (virtual times into t). */
static int sim_run(mlsba__factor_run_t *F, int64_t units, const int64_t *load,
                   double *t, long *failed) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_create("factor-update", units, &w);
  if (!err)
    err = mlsba_executor_run(F->ex, w, load, MLSBA_DRIVE_SHARED, t, failed);
  mlsba_load_destroy(w);
  return err;
}

/* The next panel's columns are updated by another device than the
 * panel's core in this step. */
static int ahead_apart(const mlsba__factor_run_t *F, const step_t *st) {
  return st->lookahead && st->jbn > 0 && st->need > 0 && F->ahead_dev >= 0 &&
         F->ahead_dev != F->panel_dev;
}

/* Simulated devices: their shares within what they hold in one run, a
 * share beyond that streamed in further runs; every time scaled from the
 * profile's unit to this step's. A device that updates the next panel's
 * columns for the panel's core runs them as a first share of their own;
 * the core starts the panel when they are done (and its own units are),
 * so its time is max(its units, theirs) + the panel. */
/* Simulated shares load[] in profile time into t[]: within what each
 * device holds in one run, the rest streamed in further runs; device
 * `first_dev` runs its first `first` units apart, their time in *first_t
 * (-1: none). */
static int sim_shares(mlsba__factor_run_t *F, const int64_t *load,
                      long first_dev, int64_t first, double *t, double *first_t,
                      long *failed) {
  int64_t sum = 0;
  for (size_t i = 0; i < F->p; i++) {
    int64_t cap = mlsba_model_max_load(F->rate[i]);
    F->clip[i] = cap >= 0 && load[i] > cap ? cap : load[i];
    if ((long)i == first_dev)
      F->clip[i] = min64(F->clip[i], first);
    sum += F->clip[i];
    t[i] = 0;
  }
  int err = sum > 0 ? sim_run(F, sum, F->clip, t, failed) : 0;
  *first_t = first_dev >= 0 && !err ? t[first_dev] : 0;
  for (size_t i = 0; !err && i < F->p; i++) {
    int64_t cap = mlsba_model_max_load(F->rate[i]);
    int64_t chunk = cap >= 0 ? cap : load[i];
    for (int64_t rest = load[i] - F->clip[i]; !err && rest > 0 && chunk > 0;) {
      memset(F->one, 0, F->p * sizeof *F->one);
      F->one[i] = min64(chunk, rest);
      err = sim_run(F, F->one[i], F->one, F->extra, failed);
      t[i] += err ? 0 : F->extra[i];
      rest -= F->one[i];
    }
  }
  return err;
}

/* Simulated devices: their shares, every time scaled from the profile's
 * unit to this step's. A device that updates the next panel's columns for
 * the panel's core runs them as a first share of their own; the core
 * starts the panel when they are done (and its own units are), so its
 * time is max(its units, theirs) + the panel. */
static int sim_step(mlsba__factor_run_t *F, step_t *st, long *failed) {
  int apart = ahead_apart(F, st);
  double ready = 0;
  int err = sim_shares(F, F->load, apart ? F->ahead_dev : -1, st->need, F->time,
                       &ready, failed);
  double scale = st->unit_flops / F->unit_ref;
  for (size_t i = 0; !err && i < F->p; i++)
    F->time[i] *= scale;
  if (!err && (st->lookahead || st->diag_first) && st->jbn > 0) {
    st->panel_s = sim_panel_time(F, next_panel_flops(F, st), st->jbn);
    double *t = &F->time[F->panel_dev];
    *t = (*t > ready * scale ? *t : ready * scale) + st->panel_s +
         diag_rest_time(F, st, F->load[F->panel_dev]);
  }
  return err;
}

/* Every step runs the same way (the seeds' baselines). */
static int is_static(const mlsba__factor_run_t *F) {
  return F->o.ways == MLSBA_FACTOR_WAYS_STATIC;
}

/* Where a lower Cholesky panel's solve may run: as the options say,
 * static steps on a simulated platform split it by the row's own split
 * at every step (seed 003 splits every DTRSM between the GPU and the
 * cores as it splits DGEMM). */
static mlsba_factor_solve_t solve_placement(const mlsba__factor_run_t *F) {
  if (F->o.solve == MLSBA_FACTOR_SOLVE_AUTO && F->virt && is_static(F))
    return MLSBA_FACTOR_SOLVE_SPLIT;
  return F->o.solve;
}

/* The device that updates the next panel's columns first. Every later
 * step waits for the chain of those columns and the panel, so on a
 * simulated platform it is whichever of the panel's core and the devices
 * in use finishes them soonest, within its max_load (an accelerator
 * several times faster than a core at that width: MAGMA's and NVIDIA's
 * HPL's lookahead on the GPU). On real devices it is the panel's core:
 * one executor run cannot make a core wait for another device's columns.
 * Sets F->ahead_s, that device's time for them. */
static void choose_ahead_device(mlsba__factor_run_t *F, const step_t *st) {
  F->ahead_dev = F->panel_dev;
  F->ahead_s = 0;
  int64_t need = min64(st->jbn, st->units);
  if (F->panel_dev < 0 || !st->may_look || need == 0 || is_static(F))
    return;
  double x = (double)need, best = -1;
  for (size_t i = 0; i < F->p; i++) {
    if ((long)i != F->panel_dev && (!F->virt || !F->active[i]))
      continue;
    int64_t cap = mlsba_model_max_load(F->rate[i]);
    if (mlsba_model_num_points(F->rate[i]) == 0 ||
        (cap != MLSBA_NO_MAX_LOAD && cap < need))
      continue;
    double t = x * st->unit_flops / mlsba__fpm_speed(F->rate[i], x);
    if (best < 0 || t < best || ((long)i == F->panel_dev && t <= best)) {
      best = t;
      F->ahead_dev = (long)i;
    }
  }
  F->ahead_s = best > 0 ? best : 0;
}

/* The split of the step with `ahead` updating the next panel's columns;
 * *predicted: the step's time by the models. */
static int split_with(mlsba__factor_run_t *F, const step_t *st, long ahead,
                      double ahead_s, int64_t loads[], int *fpm,
                      double *predicted) {
  mlsba__factor_split_in_t in = {
      .split = F->o.split,
      .p = F->p,
      .q = F->q,
      .group_size = F->group_size,
      .group_dev = F->group_dev,
      .rate = (const mlsba_model_t *const *)F->rate,
      .active = F->active,
      .units = st->units,
      .unit_flops = st->unit_flops,
      .panel_dev = st->lookahead || st->diag_first ? F->panel_dev : -1,
      .panel_s = st->lookahead || st->diag_first ? panel_estimate(F, st) : 0,
      .panel_min = st->need,
      .ahead_dev = ahead,
      .ahead_s = ahead_s,
      .diag_units = st->diag_first ? st->jbn : 0,
      .diag_s = diag_update_time(F, st),
      .fraction = F->fraction};
  /* The fixed slice is the models' split of the first update, kept. */
  if (F->o.split == MLSBA_FACTOR_SPLIT_FIXED_SLICE && !F->fraction)
    in.split = MLSBA_FACTOR_SPLIT_FPM;
  int err = mlsba__factor_split(&in, loads, fpm);
  if (!err && predicted)
    *predicted = mlsba__factor_split_time(&in, loads);
  return err;
}

/* Every device the step may use has a model: predictions can be
 * compared. */
static int all_modelled(const mlsba__factor_run_t *F) {
  for (size_t i = 0; i < F->p; i++)
    if ((F->active[i] || (long)i == F->panel_dev) &&
        mlsba_model_num_points(F->rate[i]) == 0)
      return 0;
  return 1;
}

static void solve_devices(const mlsba__factor_run_t *F, unsigned char *able);

/* The split of the solve's rows (like an update whose unit is a row of
 * nb^2 flops) into load[]; *predicted: its time by the models. */
static int split_solve(mlsba__factor_run_t *F, const step_t *st,
                       const unsigned char *able, int64_t *load,
                       double *predicted) {
  double b = (double)st->jbn;
  mlsba__factor_split_in_t in = {
      .split = F->o.split,
      .p = F->p,
      .q = F->q,
      .group_size = F->group_size,
      .group_dev = F->group_dev,
      .rate = (const mlsba_model_t *const *)F->rate,
      .active = able,
      .units = F->P->ops->solve_rows(F->P, st->jn, st->jbn),
      .unit_flops = b * b,
      .panel_dev = -1,
      .ahead_dev = -1,
      .fraction = F->fraction};
  /* Before the slice is tuned (the first panel's, the first update's
   * prediction) the models split it, as they tune the slice. */
  if ((F->o.split == MLSBA_FACTOR_SPLIT_FIXED_SLICE ||
       F->o.split == MLSBA_FACTOR_SPLIT_KERNEL_SLICE) &&
      !F->fraction)
    in.split = MLSBA_FACTOR_SPLIT_FPM;
  int fpm, err = mlsba__factor_split(&in, load, &fpm);
  if (!err && predicted)
    *predicted = mlsba__factor_split_time(&in, load);
  return err;
}

/* One way to run a step: who updates the next panel's columns (and its
 * time for them), whether the panel's solve is split, and whether the
 * panel is factorized inside the update (lookahead) or after it. */
typedef struct {
  long ahead;
  double ahead_s;
  int apart, look, diag;
} way_t;

enum { WAYS_MAX = 6 };

/* The ways the step may run: the next panel's columns on the panel's
 * core or on the device that would update them soonest; a lower Cholesky
 * panel's solve on the core or split, as the options allow; and on a
 * simulated platform, where the solve is split, no lookahead at all: the
 * next panel's columns are units like the others, in every device's one
 * share (a device that runs them first runs them as a small share of
 * their own, at its speed for nb units), and the panel's diagonal block
 * (nb^3 / 3 flops) is factorized either after the update or, with the
 * block updated first on the panel's core, inside that core's share
 * (MAGMA's hybrid Cholesky: the block goes to the host while the
 * accelerator updates the rows below it). */
static size_t ways_of(const mlsba__factor_run_t *F, const step_t *st,
                      way_t ways[WAYS_MAX]) {
  size_t n = 0;
  int modes[2] = {0, 1}, m0 = 0, m1 = 1;
  /* On real devices the models are of the update, not of the solve (a
   * TRSM, at a third of the GEMM's speed on a core), and a split solve
   * adds a run of the executor after the update: measured on this
   * machine's two cores, mlsba_potrf at n = 4096 ran at 0.76 of OpenBLAS's
   * dpotrf with AUTO choosing it, 0.86 without. */
  mlsba_factor_solve_t placed = solve_placement(F);
  if (!solve_splittable(F, st) || placed == MLSBA_FACTOR_SOLVE_CORE ||
      (!F->virt && placed == MLSBA_FACTOR_SOLVE_AUTO))
    m1 = 0;
  else if (placed == MLSBA_FACTOR_SOLVE_SPLIT)
    m0 = 1;
  for (int m = m0; m <= m1; m++) {
    ways[n++] = (way_t){F->panel_dev, 0, modes[m], 1, 0};
    if (F->ahead_dev != F->panel_dev)
      ways[n++] = (way_t){F->ahead_dev, F->ahead_s, modes[m], 1, 0};
  }
  if (F->virt && m1 == 1 && !is_static(F)) {
    ways[n++] = (way_t){F->panel_dev, 0, 1, 0, 0};
    ways[n++] = (way_t){F->panel_dev, 0, 1, 0, 1};
  }
  return n;
}

static void take_way(mlsba__factor_run_t *F, step_t *st, const way_t *w) {
  F->ahead_dev = w->ahead;
  F->ahead_s = w->ahead_s;
  st->solve_apart = w->apart;
  st->lookahead = st->may_look && w->look;
  st->need = st->lookahead ? min64(st->jbn, st->units) : 0;
  st->diag_first = st->may_look && !w->look && w->diag;
}

/* The split of the step. Where it may run more than one way, each is
 * split and the one the models predict shortest is kept (the first, the
 * panel's core doing it all, on a tie or without models): another
 * device's columns for the panel run as a small share of their own,
 * slower per unit, and a split solve waits for the update, where on the
 * core it overlaps it. */
static int choose_and_split(mlsba__factor_run_t *F, step_t *st, int *fpm) {
  way_t ways[WAYS_MAX];
  size_t n = ways_of(F, st, ways);
  take_way(F, st, &ways[0]);
  if (n == 1 || !all_modelled(F))
    return split_with(F, st, F->ahead_dev, F->ahead_s, F->load, fpm, NULL);
  /* The way chosen at a step within a fifth of this one's size is kept:
   * the choice follows the size, and comparing every way at every step
   * would multiply the splitting time. Unless the device that updates
   * the next panel's columns is held to them: its share of the update
   * has shrunk below them, and another way may be shorter. */
  for (size_t k = 0;
       F->way_units > 0 && 5 * st->units >= 4 * F->way_units && k < n; k++)
    if ((ways[k].ahead == F->panel_dev) == F->way_on_core &&
        ways[k].apart == F->way_apart && ways[k].look == F->way_look &&
        ways[k].diag == F->way_diag) {
      take_way(F, st, &ways[k]);
      int err = split_with(F, st, F->ahead_dev, F->ahead_s, F->load, fpm, NULL);
      if (err || !st->lookahead || F->ahead_dev < 0 ||
          F->load[F->ahead_dev] > st->need)
        return err;
      break;
    }
  double solve = 0, best = -1;
  int err = 0;
  int any_apart = 0;
  for (size_t k = 0; k < n; k++)
    any_apart |= ways[k].apart;
  if (any_apart) {
    unsigned char *able = calloc(F->p, 1);
    err = able ? 0 : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
    if (!err) {
      solve_devices(F, able);
      err = split_solve(F, st, able, F->one, &solve);
    }
    free(able);
  }
  size_t pick = 0;
  for (size_t k = 0; !err && k < n; k++) {
    double t = 0;
    int f = 0;
    take_way(F, st, &ways[k]);
    err = split_with(F, st, ways[k].ahead, ways[k].ahead_s, F->clip, &f, &t);
    t += ways[k].apart ? solve : 0;
    if (!ways[k].look && !ways[k].diag) /* the panel after the update */
      t += panel_estimate(F, st);
    if (!err && (best < 0 || t < best)) {
      best = t;
      pick = k;
      *fpm = f;
      memcpy(F->load, F->clip, F->p * sizeof *F->load);
    }
  }
  take_way(F, st, &ways[pick]);
  F->way_units = st->units;
  F->way_on_core = ways[pick].ahead == F->panel_dev;
  F->way_apart = ways[pick].apart;
  F->way_look = ways[pick].look;
  F->way_diag = ways[pick].diag;
  return err;
}

/* Seed 004's slice as its paper tunes it: the kernels' speeds alone,
 * i.e. the models' split of the first update with no panel and no
 * lookahead counted, kept as fractions. */
static int tune_kernel_slice(mlsba__factor_run_t *F, const step_t *st) {
  mlsba__factor_split_in_t in = {.split = MLSBA_FACTOR_SPLIT_FPM,
                                 .p = F->p,
                                 .q = F->q,
                                 .group_size = F->group_size,
                                 .group_dev = F->group_dev,
                                 .rate = (const mlsba_model_t *const *)F->rate,
                                 .active = F->active,
                                 .units = st->units,
                                 .unit_flops = st->unit_flops,
                                 .panel_dev = -1,
                                 .ahead_dev = -1};
  int fpm = 0, err = mlsba__factor_split(&in, F->clip, &fpm);
  if (err || !fpm)
    return err; /* no models yet: tuned at a later step */
  F->fraction = calloc(F->p, sizeof *F->fraction);
  if (F->fraction == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  for (size_t i = 0; i < F->p; i++)
    F->fraction[i] = (double)F->clip[i] / (double)st->units;
  return 0;
}

static int split_step(mlsba__factor_run_t *F, step_t *st) {
  int tune = F->o.split == MLSBA_FACTOR_SPLIT_FIXED_SLICE && !F->fraction;
  double t = mlsba__now();
  int fpm = 0, err = 0;
  if (F->o.split == MLSBA_FACTOR_SPLIT_KERNEL_SLICE && !F->fraction)
    err = tune_kernel_slice(F, st);
  if (!err)
    err = choose_and_split(F, st, &fpm);
  F->R->overhead_s += mlsba__now() - t;
  if (!err && tune && fpm) {
    F->fraction = calloc(F->p, sizeof *F->fraction);
    if (F->fraction == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
    for (size_t i = 0; i < F->p; i++)
      F->fraction[i] = (double)F->load[i] / (double)st->units;
  }
  return err;
}

/* A simulated device that failed is dropped and its units go to the
 * others: nothing of the step was computed yet. */
static int drop_device(mlsba__factor_run_t *F, long failed) {
  if (failed < 0 || failed == F->panel_dev || !F->active[failed])
    return 0;
  F->active[failed] = 0;
  F->R->dropped[failed] = 1;
  F->R->lost++;
  if (F->fraction) /* the fixed slice without it: the rest scaled up */
    F->fraction[failed] = 0;
  return 1;
}

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

/* Real devices: every device's point, its share's flops over its time
 * (the panel's time taken out of the core that factorized it). */
static void learn(mlsba__factor_run_t *F, const step_t *st) {
  /* An accelerator's first share compiles its kernels (CLBlast's, on first
   * use in the process) on the thread of its group's core: neither's
   * speed. A model that slow would give them nothing again, and nothing
   * would correct it, so that step teaches nothing. */
  int warming = 0;
  for (size_t i = 0; i < F->p; i++)
    if (F->load[i] > 0 && F->pl->dev[i].backend->type == MLSBA_DEVICE_OPENCL &&
        !F->warm[i])
      warming = F->warm[i] = 1;
  for (size_t i = 0; i < F->p && !warming; i++) {
    if (F->load[i] <= 0)
      continue;
    double t = F->time[i];
    if ((long)i == F->panel_dev && st->lookahead)
      t -= st->panel_s;
    double rate = (double)F->load[i] * st->unit_flops / t;
    if (t > 0 && rate >= MLSBA_SPEED_MIN && rate <= MLSBA_SPEED_MAX)
      add_point(F->rate[i], (double)F->load[i], rate);
  }
}

/* The calling thread computes a simulated step's numbers, in the order a
 * core would: the next panel's units, the panel, the rest. */
static void compute_on_host(mlsba__factor_run_t *F, step_t *st) {
  F->P->ops->update(F->P, st->j, st->jb, 0, st->need);
  if (st->lookahead && st->jbn > 0)
    st->stop = F->P->ops->panel(F->P, st->jn, st->jbn);
  F->P->ops->update(F->P, st->j, st->jb, st->need, st->units);
  if (st->diag_first && st->jbn > 0) /* the same numbers, whole */
    st->stop = F->P->ops->panel(F->P, st->jn, st->jbn);
}

/* Without lookahead the next panel (its diagonal block, where its solve
 * is split) runs after the update: on the calling thread, or in virtual
 * time on the panel's device. */
static double panel_after(mlsba__factor_run_t *F, step_t *st) {
  if (st->lookahead || st->diag_first || st->jbn == 0)
    return 0;
  double t = mlsba__now();
  if (!F->virt || F->o.compute)
    st->stop = panel_alone(F, st);
  st->panel_s = F->virt ? sim_panel_time(F, next_panel_flops(F, st), st->jbn)
                        : mlsba__now() - t;
  return st->panel_s;
}

static void record(mlsba__factor_run_t *F, const step_t *st, double extra) {
  mlsba_factor_report_t *R = F->R;
  size_t k = F->step++;
  double longest = 0;
  for (size_t i = 0; i < F->p; i++) {
    R->share[k * F->p + i] = st->units ? F->load[i] : 0;
    R->time[k * F->p + i] = st->units ? F->time[i] : 0;
    if (st->units && F->time[i] > longest)
      longest = F->time[i];
  }
  R->units[k] = st->units;
  R->step_seconds[k] = longest + extra;
  R->panel_seconds[k] = st->panel_s;
  R->ahead_device[k] = st->lookahead && st->jbn > 0 ? F->ahead_dev : -1;
  R->steps = F->step;
  F->clock += longest + extra;
  if (st->panel_s > 0) {
    F->panel_s = st->panel_s;
    F->panel_flops = next_panel_flops(F, st);
  }
}

/* Real devices: what each can hold of this step (an accelerator's memory)
 * becomes its model's max_load, which the split respects. */
static int real_caps(mlsba__factor_run_t *F, step_t *st) {
  int64_t *max = calloc(F->p, sizeof *max);
  int err = max ? work_load(F, st, st->units)
                : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (!err)
    err = mlsba_executor_max_units(F->ex, F->work, max);
  for (size_t i = 0; !err && i < F->p; i++) {
    mlsba_model_set_max_load(F->rate[i],
                             max[i] >= st->units ? MLSBA_NO_MAX_LOAD : max[i]);
    F->cl_cap[i] = max[i];
  }
  free(max);
  return err;
}

/* A core's rows of the split solve (units are rows, as the executor
 * numbers them: any row is any other's equal). */
static int solve_rows(void *user, int64_t first, int64_t count) {
  const step_t *st = user;
  st->F->P->ops->solve(st->F->P, st->jn, st->jbn, first, first + count);
  return 0;
}

static int real_solve(mlsba__factor_run_t *F, step_t *st, int64_t rows,
                      const int64_t *load, double *t, long *failed) {
  mlsba_load_t *w = NULL;
  int err = mlsba_load_create(F->P->ops->solve_load, rows, &w);
  if (!err)
    err = mlsba_load_set_cpu(w, solve_rows, st);
  if (!err)
    err = mlsba_executor_run(F->ex, w, load, MLSBA_DRIVE_SHARED, t, failed);
  mlsba_load_destroy(w);
  return err;
}

/* Devices that can take rows of the solve: the panel's core and, of the
 * devices in use, cores and simulated devices (the OpenCL path has no
 * solve). */
static void solve_devices(const mlsba__factor_run_t *F, unsigned char *able) {
  for (size_t i = 0; i < F->p; i++)
    able[i] = F->active[i] &&
              (F->virt || F->pl->dev[i].backend->type == MLSBA_DEVICE_CPU);
  if (F->panel_dev >= 0)
    able[F->panel_dev] = 1;
}

/* Splits and runs the solve of the next panel's rows below its diagonal
 * block like an update whose unit is a row of nb^2 flops (the row's own
 * split by the same rule as the update's); *seconds: its time. */
static int run_solve(mlsba__factor_run_t *F, step_t *st, int64_t rows,
                     unsigned char *able, int64_t *load, double *t,
                     double *seconds) {
  double b = (double)st->jbn;
  for (;;) {
    double t0 = mlsba__now(), first_t;
    int err = split_solve(F, st, able, load, NULL);
    F->R->overhead_s += mlsba__now() - t0;
    if (err)
      return err;
    long failed = -1;
    t0 = mlsba__now();
    err = F->virt ? sim_shares(F, load, -1, 0, t, &first_t, &failed)
                  : real_solve(F, st, rows, load, t, &failed);
    if (!err) {
      double longest = 0;
      for (size_t i = 0; i < F->p; i++)
        longest = t[i] > longest ? t[i] : longest;
      *seconds = F->virt ? longest * b * b / F->unit_ref : mlsba__now() - t0;
      return 0;
    }
    if (!F->virt || failed == F->panel_dev || !drop_device(F, failed))
      return err;
    able[failed] = 0;
  }
}

static int solve_step(mlsba__factor_run_t *F, step_t *st, double *seconds) {
  *seconds = 0;
  int64_t rows = st->solve_apart && !st->stop
                     ? F->P->ops->solve_rows(F->P, st->jn, st->jbn)
                     : 0;
  if (rows == 0)
    return 0;
  unsigned char *able = calloc(F->p, 1);
  int64_t *load = calloc(F->p, sizeof *load);
  double *t = calloc(F->p, sizeof *t);
  int err = able && load && t
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  if (!err) {
    solve_devices(F, able);
    err = run_solve(F, st, rows, able, load, t, seconds);
  }
  free(able);
  free(load);
  free(t);
  return err;
}

static int update_step(mlsba__factor_run_t *F, step_t *st) {
  int err;
  if (!F->virt && (err = real_caps(F, st)) != 0)
    return err;
  for (;;) {
    choose_ahead_device(F, st);
    if ((err = split_step(F, st)) != 0)
      return err;
    lay_out(F);
    long failed = -1;
    err = F->virt ? sim_step(F, st, &failed) : real_step(F, st, &failed);
    if (!err)
      break;
    if (!F->virt || !drop_device(F, failed))
      return err; /* a real core's columns may be half done: stop */
  }
  if (F->virt && F->o.compute)
    compute_on_host(F, st);
  if (!F->virt)
    learn(F, st);
  double after = panel_after(F, st), solve = 0;
  if ((err = solve_step(F, st, &solve)) != 0)
    return err;
  record(F, st, solve + after);
  return 0;
}

/* Simulated lower Cholesky: the first panel's solve is split like the
 * later panels' where the models predict it shorter than on the panel's
 * core (all the other devices wait for this panel). */
static int first_solve_apart(mlsba__factor_run_t *F, step_t *st) {
  st->may_look = F->panel_dev >= 0;
  if (!F->virt || !solve_splittable(F, st) ||
      solve_placement(F) == MLSBA_FACTOR_SOLVE_CORE || !all_modelled(F))
    return 0;
  if (solve_placement(F) == MLSBA_FACTOR_SOLVE_SPLIT)
    return 1;
  unsigned char *able = calloc(F->p, 1);
  double solve = 0;
  int apart = 0;
  if (able) {
    solve_devices(F, able);
    double whole = panel_estimate(F, st);
    st->solve_apart = 1;
    apart = split_solve(F, st, able, F->one, &solve) == 0 &&
            panel_estimate(F, st) + solve < whole;
  }
  free(able);
  return apart;
}

static int first_panel(mlsba__factor_run_t *F, int64_t jb, int *stop) {
  step_t st = {.F = F, .jn = 0, .jbn = jb};
  double t0 = mlsba__now();
  st.solve_apart = first_solve_apart(F, &st);
  F->R->overhead_s += mlsba__now() - t0;
  double t = mlsba__now();
  if (!F->virt || F->o.compute)
    st.stop = panel_alone(F, &st);
  st.panel_s = F->virt ? sim_panel_time(F, next_panel_flops(F, &st), jb)
                       : mlsba__now() - t;
  for (size_t i = 0; i < F->p; i++)
    F->time[i] = 0;
  if (F->panel_dev >= 0)
    F->time[F->panel_dev] = st.panel_s;
  double solve = 0;
  int err = solve_step(F, &st, &solve);
  if (err)
    return err;
  st.units = 1; /* so that record() keeps the panel core's time */
  memset(F->load, 0, F->p * sizeof *F->load);
  record(F, &st, solve);
  F->R->units[0] = 0;
  *stop = st.stop;
  return 0;
}

/* The resident columns back to the host, and the bytes moved into the
 * report. */
static void finish_transfers(mlsba__factor_run_t *F) {
  flush_resident(F);
  mlsba_factor_report_t *R = F->R;
  for (size_t i = 0; i < F->p; i++) {
    R->bytes_to_devices += F->to_dev[i];
    R->bytes_from_devices += F->from_dev[i];
    R->transfers += F->moves[i];
  }
}

static int finish_units(void *user, int64_t first, int64_t count) {
  const mlsba__factor_problem_t *P = user;
  P->ops->finish(P, first, first + count);
  return 0;
}

/* LU's last interchanges, on the columns left of each panel: memory bound
 * (13 ms of a 0.57 s factorization at n = 4096 on one core here), so
 * every core in use takes an even share. */
static int swap_left(mlsba__factor_run_t *F) {
  int64_t kmax = mlsba__factor_diag(F->P), cores = 0;
  for (size_t i = 0; !F->virt && i < F->p; i++)
    cores += F->active[i] && F->pl->dev[i].backend->type == MLSBA_DEVICE_CPU;
  if (cores == 0) { /* simulated, or accelerators only: the caller's thread */
    if (!F->virt || F->o.compute)
      F->P->ops->finish(F->P, 0, kmax);
    return 0;
  }
  for (size_t i = 0, k = 0; i < F->p; i++) {
    int core = F->active[i] && F->pl->dev[i].backend->type == MLSBA_DEVICE_CPU;
    F->load[i] = core ? kmax / cores + ((int64_t)k < kmax % cores) : 0;
    k += (size_t)core;
  }
  mlsba_load_t *w = NULL;
  long failed = -1;
  int err = mlsba_load_create(F->P->ops->finish_load, kmax, &w);
  if (!err)
    err = mlsba_load_set_cpu(w, finish_units, F->P);
  if (!err)
    err = mlsba_executor_run(F->ex, w, F->load, MLSBA_DRIVE_SHARED, F->time,
                             &failed);
  mlsba_load_destroy(w);
  return err;
}

int mlsba__factor_run(mlsba__factor_run_t *F) {
  mlsba__factor_problem_t *P = F->P;
  int64_t kmax = mlsba__factor_diag(P), nb = P->nb;
  double t0 = mlsba__now();
  int stop = 0;
  if (kmax > 0) {
    int err = first_panel(F, min64(nb, kmax), &stop);
    if (err)
      return err;
  }
  for (int64_t j = 0; j < kmax && !stop; j += nb) {
    step_t st = {.F = F, .j = j, .jb = min64(nb, kmax - j)};
    st.units = P->ops->units(P, j, st.jb);
    if (st.units == 0)
      break;
    st.unit_flops = P->ops->unit_flops(P, j, st.jb);
    st.jn = j + st.jb;
    st.jbn = st.jn < kmax ? min64(nb, kmax - st.jn) : 0;
    st.may_look = P->ops->lookahead && F->panel_dev >= 0;
    st.lookahead = st.may_look;
    st.need = st.lookahead ? min64(st.jbn, st.units) : 0;
    int err = update_step(F, &st);
    if (err) {
      finish_transfers(F);
      return err;
    }
    stop = st.stop;
  }
  finish_transfers(F);
  if (P->ops->finish && kmax > 0) {
    int err = swap_left(F);
    if (err)
      return err;
  }
  mlsba_factor_report_t *R = F->R;
  R->seconds = F->virt ? F->clock : mlsba__now() - t0;
  R->gflops = R->seconds > 0 ? R->flops / R->seconds / 1e9 : 0;
  return 0;
}
