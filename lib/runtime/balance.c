/* The self-adaptive iterative routine of seed 002 §V.A: run, measure, add
 * one point per device to its model, re-partition, run again.
 *
 * The runtime never decides a distribution: the partitioner does, from the
 * models measured so far. What the routine adds:
 *  - the first run gives every device N/P units, within what it can hold;
 *  - a measured time far from its model's prediction is re-measured: a
 *    second measurement that agrees with it is trusted (the device really
 *    changed), one that does not replaces it (a timing spike);
 *  - devices of one kind share one model built from all their runs while
 *    their runs agree (measured.c);
 *  - it stops when the device times agree within eps at both levels, or
 *    when the next distribution moves no device by more than eps of its
 *    load (under timing noise the spread may never fall below eps while
 *    the models already know the best distribution), or when a
 *    distribution comes back (a cycle), or at max_iter; the last two are
 *    reported as not converged. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../partition/grouped.h"
#include "executor.h"
#include "kernel.h"
#include "measured.h"
#include "platform.h"
#include "store.h"

void mlsba_balance_opts_init(mlsba_balance_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->algorithm = MLSBA_ALGO_MLSBA;
  o->eps = 0.05;
  o->max_iter = 20;
  o->drive = MLSBA_DRIVE_SHARED;
  o->outlier = 0.25;
  o->drift = 2 * o->eps;
}

const char *mlsba_stop_reason_name(mlsba_stop_reason_t stop) {
  static const char *const names[] = {"balanced", "fixed-point", "max-iter",
                                      "cycle"};
  return (unsigned)stop < sizeof names / sizeof *names ? names[stop] : NULL;
}

const char *mlsba_stop_reason_text(mlsba_stop_reason_t stop) {
  static const char *const text[] = {
      [MLSBA_STOP_BALANCED] = "device times within eps",
      [MLSBA_STOP_FIXED_POINT] = "a fixed point: the models see no better "
                                 "distribution",
      [MLSBA_STOP_MAX_ITER] = "max-iter reached",
      [MLSBA_STOP_CYCLE] = "a distribution came back: a cycle"};
  return (unsigned)stop < sizeof text / sizeof *text ? text[stop] : NULL;
}

int mlsba_balance_result_describe(const mlsba_balance_result_t *r, char *out,
                                  size_t size) {
  if (r == NULL || out == NULL || size == 0 ||
      mlsba_stop_reason_name(r->stop) == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_result_describe: %s",
                       r && out && size ? "unknown stop reason"
                                        : "NULL or empty argument");
  const char *runs = r->iterations == 1 ? "run" : "runs";
  double imbalance = 100 * r->imbalance, eps = 100 * r->eps;
  /* Noise explains a stop above eps when a point needs more runs than
   * the routine had to be known within eps / 2. */
  char why[160] = "the models see no better distribution";
  if (r->variation > r->eps / 2)
    snprintf(why, sizeof why,
             "the devices' times vary by %.0f%% from run to run, so the "
             "split is the best the runs can tell",
             100 * r->variation);
  switch (r->stop) {
  case MLSBA_STOP_BALANCED:
    snprintf(out, size,
             "balanced in %u %s: the device times agree within eps (%g%%) "
             "between groups and inside each; imbalance %.1f%%",
             r->iterations, runs, eps, imbalance);
    break;
  case MLSBA_STOP_FIXED_POINT:
    snprintf(out, size,
             "not balanced: stopped after %u %s at a fixed point, imbalance "
             "%.1f%% (eps %g%%): %s",
             r->iterations, runs, imbalance, eps, why);
    break;
  case MLSBA_STOP_MAX_ITER:
    snprintf(out, size,
             "not balanced within max-iter (%u %s): imbalance %.1f%% (eps "
             "%g%%)%s%s",
             r->iterations, runs, imbalance, eps,
             r->variation > r->eps / 2 ? "; " : "",
             r->variation > r->eps / 2 ? why : "");
    break;
  default:
    snprintf(out, size,
             "not balanced: a distribution came back after %u %s (a cycle: "
             "the algorithm does not follow the models), imbalance %.1f%% "
             "(eps %g%%)",
             r->iterations, runs, imbalance, eps);
  }
  return 0;
}

void mlsba_balance_result_free(mlsba_balance_result_t *r) {
  if (r == NULL)
    return;
  for (size_t i = 0; r->models && i < r->p; i++)
    mlsba_model_destroy(r->models[i]);
  free(r->models);
  free(r->load);
  free(r->time);
  free(r->alpha);
  free(r->points);
  free(r->history_load);
  free(r->history_makespan);
  free(r->history_imbalance);
  free(r->history_time);
  free(r->dropped);
  memset(r, 0, sizeof *r);
}

/* (max - min) / max of the times of the loaded devices among idx[0..n-1]
 * (or of all n when idx is NULL); 0 when fewer than two. A device held at
 * what it can hold (cap, may be NULL) finishes early by necessity, as it
 * does in the optimum: it counts for the max, not for the min. */
static double spread(const double *time, const int64_t *load,
                     const int64_t *cap, const size_t *idx, size_t n) {
  double lo = INFINITY, hi = 0;
  for (size_t k = 0; k < n; k++) {
    size_t j = idx ? idx[k] : k;
    if (load[j] == 0)
      continue;
    if (!cap || load[j] < cap[j])
      lo = time[j] < lo ? time[j] : lo;
    hi = time[j] > hi ? time[j] : hi;
  }
  return hi > 0 && lo < INFINITY ? (hi - lo) / hi : 0;
}

/* Balanced at both levels: the groups' times (their slowest device) agree
 * within eps, and so do the devices inside every group. With flat grouping
 * every device is a group of its own: one level. */
static int balanced(const mlsba_platform_t *pl, int flat, const int64_t *load,
                    const int64_t *cap, const double *time, double eps,
                    double *group_time, int64_t *group_load,
                    int64_t *group_cap) {
  if (flat)
    return spread(time, load, cap, NULL, pl->ndev) <= eps;
  for (size_t g = 0; g < pl->ngroups; g++) {
    const size_t *idx = pl->group_dev + pl->group_start[g];
    size_t n = pl->group_start[g + 1] - pl->group_start[g];
    if (spread(time, load, cap, idx, n) > eps)
      return 0;
    group_time[g] = 0;
    group_load[g] = 0;
    group_cap[g] = 0;
    for (size_t k = 0; k < n; k++) {
      group_load[g] += load[idx[k]];
      group_cap[g] += cap[idx[k]];
      if (load[idx[k]] > 0 && time[idx[k]] > group_time[g])
        group_time[g] = time[idx[k]];
    }
  }
  return spread(group_time, group_load, group_cap, NULL, pl->ngroups) <= eps;
}

/* Seeds the measurements of a device from a stored model, with the runs
 * and spread saved with each point. */
static void seed_from(mlsba__measured_t *m, const mlsba_model_t *stored,
                      const unsigned *runs, const double *sd) {
  m->n = 0;
  for (size_t i = 0;
       i < mlsba_model_num_points(stored) && i < MLSBA__MAX_POINTS; i++) {
    mlsba_model_get_point(stored, i, &m->x[i], &m->speed[i]);
    m->count[i] = runs[i] ? runs[i] : 1;
    m->m2[i] = sd[i] * sd[i] * (m->count[i] - 1);
    m->n++;
  }
}

/* Saves a device's own measurements (not its kind's pool): the points
 * sorted by load, with the runs and spread behind each. */
static int save_measured(const mlsba__measured_t *m, int64_t max_load,
                         const char *path, const char *key) {
  unsigned runs[MLSBA__MAX_POINTS];
  double sd[MLSBA__MAX_POINTS];
  mlsba_model_t *own = NULL;
  int err = mlsba_model_create(&own);
  if (!err && (err = mlsba__measured_to_model(m, own)) == 0)
    err = mlsba_model_set_max_load(own, max_load);
  size_t n = err ? 0 : mlsba_model_num_points(own);
  for (size_t i = 0; i < n && i < MLSBA__MAX_POINTS; i++) {
    double x;
    mlsba_model_get_point(own, i, &x, NULL);
    runs[i] = 1;
    sd[i] = 0;
    for (size_t k = 0; k < m->n; k++) {
      if (m->x[k] == x) {
        runs[i] = m->count[k];
        sd[i] = m->count[k] > 1 ? sqrt(m->m2[k] / (m->count[k] - 1)) : 0;
      }
    }
  }
  if (!err)
    err = mlsba__model_save_stats(own, path, key, runs, sd);
  mlsba_model_destroy(own);
  return err;
}

/* Where a device's model lives, and the key that says what it is for:
 * host, device identity and driver, kernel, and the load's shape (for
 * GEMM the precision and the dimensions that are not partitioned). */
static int model_file(const mlsba_platform_t *pl, size_t j,
                      const mlsba_load_t *w, const char *dir, char *path,
                      size_t plen, char *key, size_t klen) {
  const device_t *d = &pl->dev[j];
  char host[128] = "unknown";
  gethostname(host, sizeof host - 1);
  char ident[384];
  switch (d->type) {
  case MLSBA_DEVICE_CPU:
    snprintf(ident, sizeof ident, "cpu core %lld", (long long)d->core);
    break;
  case MLSBA_DEVICE_OPENCL:
    snprintf(ident, sizeof ident, "opencl %lld.%lld %s (%s)",
             (long long)d->cl_platform, (long long)d->cl_device,
             d->model_name ? d->model_name : "", d->driver ? d->driver : "");
    break;
  default:
    snprintf(ident, sizeof ident, "sim");
  }
  int a = snprintf(path, plen, "%s/%s.%s.model", dir, d->name, w->tag);
  int b = snprintf(key, klen, "host=%s device=%s [%s] kernel=%s%s%s", host,
                   d->name, ident, w->name, w->shape[0] ? " " : "", w->shape);
  for (char *c = key; *c; c++)
    if (*c == '\n')
      *c = ' ';
  return a < 0 || (size_t)a >= plen || b < 0 || (size_t)b >= klen
             ? mlsba__fail(MLSBA_ERANGE, "%s: model path too long", dir)
             : 0;
}

/* Everything the routine keeps between balancings of one load on one
 * executor: the measurements behind every model, what each device can
 * hold, and the buffers of the partitioning problem. */
typedef struct {
  mlsba_executor_t *ex;
  const mlsba_load_t *w;
  mlsba_balance_opts_t o;
  size_t p, q;
  int64_t *max;       /* what each device can hold (0 when not in use) */
  unsigned char *use; /* device takes part in the partitioning */
  /* The partitioning problem over the devices in use, group by group. */
  const mlsba_model_t **pmodels;
  size_t *pdev, *psize, pq, pp;
  int64_t *palpha, *pbeta;
  size_t *ppoints;
  double *scratch;             /* 2 p: a second measurement; group times */
  int64_t *gload;              /* q */
  int64_t *gcap;               /* q */
  mlsba__measured_t *measured; /* p: each device's own runs */
  /* Devices of one kind (mlsba_kinds_t): kind_next chains them from the
   * first (kind_lead), and a kind of two or more has a pool. basis[j] is
   * what device j's model is built from: its own runs or its kind's. */
  size_t *kind_next, *kind_pool, npools;
  unsigned char *kind_lead, *apart;
  mlsba__measured_t *pools;
  const mlsba__measured_t **basis;
  const mlsba__measured_t **members; /* p scratch for pooling */
  size_t *member_dev;
  unsigned char *alike;
  unsigned char *warm; /* p: models to check against the first run */
  double *calls;       /* partitioning times, at most 2 max_iter + 1 */
  unsigned cycle_from; /* history rows before it do not count as cycles */
  /* The check of a device that shares the others' cores (sharing). */
  unsigned char *checked; /* p: checked once already */
  unsigned char *left;    /* p: left out by a check (or a saved one) */
  unsigned *trusted;      /* p: balancings that took a saved decision */
  long checking;          /* the device left out of the run under way */
  int early;              /* ... checked after the first run (see below) */
  double bar;             /* the makespan the run without it must beat */
  int kept_stop;          /* the run to come back to, and how it ended */
  int64_t kept_max, *kept_load;
  double kept_makespan, kept_imbalance, *kept_time;
} ctx_t;

/* Every loaded device's point is known well (mlsba__measured_known_well)
 * within eps/2. One run that looks balanced under timing noise is often
 * luck: with 3% noise on the sim desktop, single runs stopped the routine
 * up to 6% from the optimum; on this shared VM they fit splits to a slow
 * moment. When every loaded device has one model (one kind, pooled), the
 * distribution does not depend on the speeds measured, only on the
 * model's shape and the caps: no run could move it, and none is waited
 * for. */
static int all_known_well(const ctx_t *C, const int64_t *load) {
  const mlsba__measured_t *one = NULL;
  int shared = 1;
  for (size_t j = 0; j < C->p; j++) {
    if (load[j] > 0) {
      shared &= one == NULL || C->basis[j] == one;
      one = C->basis[j];
    }
  }
  if (shared)
    return 1;
  for (size_t j = 0; j < C->p; j++)
    if (load[j] > 0 && !mlsba__measured_known_well(C->basis[j], load[j],
                                                   C->o.eps, C->o.eps / 2))
      return 0;
  return 1;
}

static void logf_(const ctx_t *C, const char *fmt, ...) MLSBA__PRINTF(2, 3);
static void logf_(const ctx_t *C, const char *fmt, ...) {
  if (C->o.log == NULL)
    return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  C->o.log(C->o.log_ctx, line);
}

/* One run; a device failure under MLSBA_ON_FAULT_CONTINUE is reported
 * through *failed (the device) with the error. */
static int run_once(ctx_t *C, const int64_t *load, double *time, long *failed) {
  return mlsba_executor_run(C->ex, C->w, load, C->o.drive, time, failed);
}

/* Runs the loads, re-measuring outliers against the models; returns the
 * number of repeated runs in *again. */
static int measure(ctx_t *C, mlsba_balance_result_t *r, const int64_t *load,
                   double *time, unsigned *again, long *failed) {
  int err = run_once(C, load, time, failed);
  *again = 0;
  if (err)
    return err;
  int outliers = 0;
  double *pred = C->scratch, *second = C->scratch + C->p;
  for (size_t j = 0; j < C->p; j++) {
    pred[j] = 0;
    if (load[j] == 0 || mlsba_model_num_points(r->models[j]) == 0)
      continue;
    mlsba_model_time(r->models[j], (double)load[j], &pred[j]);
    outliers |= fabs(time[j] / pred[j] - 1) > C->o.outlier;
  }
  if (!outliers)
    return 0;
  *again = 1;
  if ((err = run_once(C, load, second, failed)) != 0)
    return err;
  for (size_t j = 0; j < C->p; j++) {
    if (pred[j] == 0)
      continue;
    if (fabs(second[j] / time[j] - 1) <= C->o.outlier)
      time[j] = 0.5 * (time[j] + second[j]); /* confirmed: a real change */
    else if (fabs(second[j] / pred[j] - 1) < fabs(time[j] / pred[j] - 1))
      time[j] = second[j]; /* the first was a spike */
  }
  return 0;
}

/* Re-partitions the load over the devices in use from their models. */
static int repartition(ctx_t *C, mlsba_balance_result_t *r, int64_t *load,
                       double *seconds) {
  const mlsba_platform_t *pl = C->ex->pl;
  int flat = C->o.grouping == MLSBA_GROUPING_FLAT;
  mlsba_partition_opts_t po;
  mlsba_partition_opts_init(&po);
  po.granularity = C->o.granularity;
  C->pp = C->pq = 0;
  for (size_t g = 0; g < pl->ngroups; g++) {
    size_t before = C->pp;
    for (size_t k = pl->group_start[g]; k < pl->group_start[g + 1]; k++) {
      size_t j = pl->group_dev[k];
      if (!C->use[j] || mlsba_model_num_points(r->models[j]) == 0)
        continue;
      C->pdev[C->pp] = j;
      C->pmodels[C->pp++] = r->models[j];
      if (flat)
        C->psize[C->pq++] = 1;
    }
    if (!flat && C->pp > before)
      C->psize[C->pq++] = C->pp - before;
  }
  double t0 = mlsba__now();
  int err = mlsba_partition_groups(C->o.algorithm, C->pmodels, C->psize, C->pq,
                                   C->w->units, &po, C->palpha, C->pbeta,
                                   C->ppoints, NULL);
  *seconds = mlsba__now() - t0;
  if (err)
    return err;
  memset(load, 0, C->p * sizeof *load);
  for (size_t k = 0; k < C->pp; k++)
    load[C->pdev[k]] = C->pbeta[k];
  /* Group-model points, back on the platform's groups. */
  memset(r->points, 0, C->q * sizeof *r->points);
  for (size_t k = 0, pg = 0, pk = 0; k < C->pq; k++) {
    size_t j = C->pdev[pk]; /* the first device of partition group k */
    for (size_t g = 0; g < pl->ngroups; g++)
      for (size_t i = pl->group_start[g]; i < pl->group_start[g + 1]; i++)
        if (pl->group_dev[i] == j)
          r->points[g] += C->ppoints[pg];
    pk += C->psize[k];
    pg++;
  }
  return 0;
}

/* The first distribution when the models cannot give one: N/P per device
 * in use, within what each can hold. */
static void even_start(ctx_t *C, int64_t *load) {
  mlsba__proportional(NULL, C->max, C->p, C->w->units, load);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void ctx_free(ctx_t *C) {
  free(C->max);
  free(C->use);
  free((void *)C->pmodels);
  free(C->pdev);
  free(C->psize);
  free(C->palpha);
  free(C->pbeta);
  free(C->ppoints);
  free(C->scratch);
  free(C->gload);
  free(C->gcap);
  free(C->measured);
  free(C->kind_next);
  free(C->kind_pool);
  free(C->kind_lead);
  free(C->apart);
  free(C->pools);
  free((void *)C->basis);
  free((void *)C->members);
  free(C->member_dev);
  free(C->alike);
  free(C->warm);
  free(C->calls);
  free(C->checked);
  free(C->left);
  free(C->trusted);
  free(C->kept_load);
  free(C->kept_time);
  memset(C, 0, sizeof *C);
}

static int ctx_alloc(ctx_t *C, mlsba_balance_result_t *r) {
  size_t p = C->p, q = C->q, iters = C->o.max_iter;
  r->p = p;
  r->q = q;
  r->models = calloc(p, sizeof *r->models);
  r->load = calloc(p, sizeof *r->load);
  r->time = calloc(p, sizeof *r->time);
  r->alpha = calloc(q, sizeof *r->alpha);
  r->points = calloc(q, sizeof *r->points);
  r->history_load = calloc(iters * p, sizeof *r->history_load);
  r->history_makespan = calloc(iters, sizeof *r->history_makespan);
  r->history_imbalance = calloc(iters, sizeof *r->history_imbalance);
  r->history_time = calloc(iters * p, sizeof *r->history_time);
  r->dropped = calloc(p, 1);
  C->max = calloc(p, sizeof *C->max);
  C->use = calloc(p, 1);
  C->pmodels = calloc(p, sizeof *C->pmodels);
  C->pdev = calloc(p, sizeof *C->pdev);
  C->psize = calloc(p, sizeof *C->psize);
  C->palpha = calloc(p, sizeof *C->palpha);
  C->pbeta = calloc(p, sizeof *C->pbeta);
  C->ppoints = calloc(p, sizeof *C->ppoints);
  C->scratch = calloc(2 * p, sizeof *C->scratch);
  C->gload = calloc(q, sizeof *C->gload);
  C->gcap = calloc(q, sizeof *C->gcap);
  C->measured = calloc(p, sizeof *C->measured);
  C->kind_next = calloc(p, sizeof *C->kind_next);
  C->kind_pool = calloc(p, sizeof *C->kind_pool);
  C->kind_lead = calloc(p, 1);
  C->apart = calloc(p, 1);
  C->basis = calloc(p, sizeof *C->basis);
  C->members = calloc(p, sizeof *C->members);
  C->member_dev = calloc(p, sizeof *C->member_dev);
  C->alike = calloc(p, 1);
  C->warm = calloc(p, 1);
  C->calls = calloc(2 * iters + 1, sizeof *C->calls); /* <= 2 a run */
  C->checked = calloc(p, 1);
  C->left = calloc(p, 1);
  C->trusted = calloc(p, sizeof *C->trusted);
  C->kept_load = calloc(p, sizeof *C->kept_load);
  C->kept_time = calloc(p, sizeof *C->kept_time);
  int ok = C->checked && C->left && C->trusted && C->kept_load &&
           C->kept_time && C->measured && C->kind_next && C->kind_pool &&
           C->kind_lead && C->apart && C->basis && C->members &&
           C->member_dev && C->alike && C->warm && C->gcap && r->models &&
           r->load && r->time && r->alpha && r->points && r->history_load &&
           r->history_makespan && r->history_imbalance && r->history_time &&
           r->dropped && C->max && C->use && C->pmodels && C->pdev &&
           C->psize && C->palpha && C->pbeta && C->ppoints && C->scratch &&
           C->gload && C->calls;
  for (size_t j = 0; ok && j < p; j++)
    ok = mlsba_model_create(&r->models[j]) == 0;
  return ok ? 0 : mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
}

/* The devices in use and what they hold; MLSBA_ECAPACITY when those left
 * cannot hold the load together. */
static int set_capacity(ctx_t *C, mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  int64_t capacity = 0;
  for (size_t gi = 0; gi < pl->ngroups; gi++) {
    for (size_t k = pl->group_start[gi]; k < pl->group_start[gi + 1]; k++) {
      size_t j = pl->group_dev[k];
      int devoted = C->o.drive == MLSBA_DRIVE_DEVOTED &&
                    mlsba__platform_is_driver(pl, gi, k);
      C->use[j] = C->max[j] > 0 && !devoted && !r->dropped[j];
      C->max[j] = C->use[j] ? C->max[j] : 0;
      mlsba_model_set_max_load(r->models[j], C->max[j]);
      capacity += C->max[j];
      if (capacity > C->w->units)
        capacity = C->w->units;
    }
  }
  if (capacity < C->w->units)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "balance: the devices %scan hold %lld units of %s "
                       "together, it has %lld",
                       r->lost ? "left " : "", (long long)capacity, C->w->name,
                       (long long)C->w->units);
  return 0;
}

static int check_opts(const mlsba_balance_opts_t *o) {
  if (!(o->eps >= 0) || !isfinite(o->eps) || o->max_iter < 1 ||
      o->max_iter > 100000 || !(o->outlier > 0) ||
      (unsigned)o->algorithm >= MLSBA_ALGO_COUNT)
    return mlsba__fail(MLSBA_EINVAL,
                       "balance: eps must be >= 0, max_iter in 1..100000, "
                       "outlier > 0, algorithm known (got %g, %u, %g, %d)",
                       o->eps, o->max_iter, o->outlier, (int)o->algorithm);
  if (!(o->drift >= 0) || !isfinite(o->drift) || o->granularity < 0 ||
      (unsigned)o->grouping > MLSBA_GROUPING_FLAT ||
      (unsigned)o->on_fault > MLSBA_ON_FAULT_STOP ||
      (unsigned)o->drive > MLSBA_DRIVE_DEVOTED ||
      (unsigned)o->sharing > MLSBA_SHARING_KEEP ||
      (unsigned)o->kinds > MLSBA_KINDS_SEPARATE)
    return mlsba__fail(MLSBA_EINVAL,
                       "balance: drift must be >= 0, granularity >= 0, and "
                       "grouping, on_fault, drive, sharing and kinds known "
                       "values");
  return 0;
}

typedef struct {
  const char *kind;
  size_t j;
} kind_entry_t;

static int cmp_kind(const void *a, const void *b) {
  const kind_entry_t *x = a, *y = b;
  int c = strcmp(x->kind, y->kind);
  return c ? c : (x->j > y->j) - (x->j < y->j);
}

/* Chains the devices of each kind, first to last (sorted: p may be large),
 * and gives every kind of two or more devices a pool. */
static int set_kinds(ctx_t *C) {
  const mlsba_platform_t *pl = C->ex->pl;
  kind_entry_t *e = calloc(C->p ? C->p : 1, sizeof *e);
  if (e == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
  size_t n = 0;
  for (size_t j = 0; j < C->p; j++) {
    C->kind_next[j] = SIZE_MAX;
    C->kind_lead[j] = 1;
    if (pl->dev[j].kind)
      e[n++] = (kind_entry_t){pl->dev[j].kind, j};
  }
  qsort(e, n, sizeof *e, cmp_kind);
  for (size_t k = 1; k < n; k++) {
    if (strcmp(e[k].kind, e[k - 1].kind) == 0) {
      C->kind_next[e[k - 1].j] = e[k].j;
      C->kind_lead[e[k].j] = 0;
    }
  }
  free(e);
  for (size_t j = 0; j < C->p; j++)
    if (C->kind_lead[j] && C->kind_next[j] != SIZE_MAX)
      C->kind_pool[j] = C->npools++;
  C->pools = calloc(C->npools ? C->npools : 1, sizeof *C->pools);
  return C->pools ? 0 : mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
}

/* What every device's model is built from (basis): its own runs, or the
 * pool of its kind while its runs agree with the others' (mlsba_kinds_t);
 * then the models, rebuilt. A device with no runs keeps its model. */
static int rebuild_models(ctx_t *C, mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  for (size_t j = 0; j < C->p; j++)
    C->basis[j] = &C->measured[j];
  for (size_t lead = 0; C->o.kinds == MLSBA_KINDS_POOL && lead < C->p; lead++) {
    if (!C->kind_lead[lead] || C->kind_next[lead] == SIZE_MAX)
      continue;
    size_t n = 0;
    for (size_t j = lead; j != SIZE_MAX; j = C->kind_next[j]) {
      if (!C->use[j] || C->measured[j].n == 0)
        continue;
      C->member_dev[n] = j;
      C->alike[n] = !C->apart[j];
      C->members[n++] = &C->measured[j];
    }
    if (n < 2)
      continue;
    mlsba__measured_t *pool = &C->pools[C->kind_pool[lead]];
    int err =
        mlsba__measured_pool(C->members, n, C->o.eps, C->o.eps, pool, C->alike);
    if (err)
      return err;
    for (size_t k = 0; k < n; k++) {
      size_t j = C->member_dev[k];
      if (C->alike[k])
        C->basis[j] = pool;
      if (C->apart[j] != !C->alike[k])
        logf_(C, "%s: %s its kind (%s)", pl->dev[j].name,
              C->alike[k] ? "its runs agree again with"
                          : "modelled from its own runs, apart from",
              pl->dev[j].kind);
      C->apart[j] = !C->alike[k];
    }
  }
  for (size_t j = 0; j < C->p; j++) {
    int err = C->basis[j]->n
                  ? mlsba__measured_to_model(C->basis[j], r->models[j])
                  : 0;
    if (err)
      return err;
  }
  return 0;
}

static int ctx_init(ctx_t *C, mlsba_executor_t *ex, const mlsba_load_t *w,
                    const mlsba_balance_opts_t *opts,
                    mlsba_balance_result_t *r) {
  memset(C, 0, sizeof *C);
  memset(r, 0, sizeof *r);
  mlsba_balance_opts_init(&C->o);
  if (opts)
    C->o = *opts;
  int err = check_opts(&C->o);
  if (err)
    return err;
  C->ex = ex;
  C->w = w;
  C->p = ex->pl->ndev;
  C->q = ex->pl->ngroups;
  if ((err = ctx_alloc(C, r)) == 0 && (err = set_kinds(C)) == 0 &&
      (err = mlsba_executor_max_units(ex, w, C->max)) == 0)
    err = set_capacity(C, r);
  for (size_t j = 0; !err && j < C->p; j++)
    C->basis[j] = &C->measured[j];
  return err;
}

/* Puts device j back after a check that kept it, after one that could
 * not start, or when the others cannot hold the load without it. */
static int restore_checked(ctx_t *C, mlsba_balance_result_t *r, size_t j) {
  r->dropped[j] = MLSBA_DROPPED_NONE;
  C->max[j] = C->kept_max;
  return set_capacity(C, r);
}

/* A left-out decision is kept beside the models, so that the next run
 * starts warm without the device instead of learning the interference
 * again: the model file's name ending in .left-out, holding the model's
 * key (a decision about another device or driver is not taken) and how
 * many balancings have taken it. It is not trusted forever: after
 * LEFT_OUT_TRUST of them, or after one that found a kept device's model
 * stale (the machine changed), the next checks the device again. Deleting
 * the file does that at once. */
#define LEFT_OUT_MAGIC "mlsba-left-out 1"
#define LEFT_OUT_TRUST 10u

static int left_out_file(const ctx_t *C, size_t j, char *path, size_t plen,
                         char *key, size_t klen) {
  int e = model_file(C->ex->pl, j, C->w, C->o.model_dir, path, plen, key, klen);
  size_t n = strlen(path) - strlen(".model");
  if (!e && snprintf(path + n, plen - n, ".left-out") >= (int)(plen - n))
    e = mlsba__fail(MLSBA_ERANGE, "%s: model path too long", C->o.model_dir);
  return e;
}

/* Whether a decision about device j is saved; *trusted: how many
 * balancings have taken it (0 in files written before the count was); *stale:
 * the last of them found a kept device's model stale. */
static int left_out_saved(const ctx_t *C, size_t j, unsigned *trusted,
                          unsigned *stale) {
  char path[1024], key[1024], line[1200];
  *trusted = *stale = 0;
  if (left_out_file(C, j, path, sizeof path, key, sizeof key) != 0)
    return 0;
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  int ok = fgets(line, sizeof line, f) &&
           strcmp(line, LEFT_OUT_MAGIC "\n") == 0 &&
           fgets(line, sizeof line, f) && strncmp(line, "key ", 4) == 0;
  if (ok) {
    line[strcspn(line, "\n")] = '\0';
    ok = strcmp(line + 4, key) == 0;
  }
  while (ok && fgets(line, sizeof line, f))
    if (sscanf(line, "trusted %u", trusted) != 1)
      sscanf(line, "stale %u", stale);
  fclose(f);
  return ok;
}

/* Writes (left) or removes (kept) the decision about device j, with the
 * number of balancings that took it and whether a model it kept was
 * stale. */
static int save_left_out(const ctx_t *C, size_t j, int left, unsigned trusted,
                         int stale) {
  char path[1024], key[1024], text[1200];
  int e = left_out_file(C, j, path, sizeof path, key, sizeof key);
  if (e)
    return e;
  if (!left)
    return unlink(path) == 0 || errno == ENOENT
               ? 0
               : mlsba__fail(MLSBA_EIO, "%s: cannot remove: %s", path,
                             strerror(errno));
  int n = snprintf(text, sizeof text,
                   "%s\nkey %s\nreason the other devices ran faster "
                   "without it\ntrusted %u\nstale %d\n",
                   LEFT_OUT_MAGIC, key, trusted, stale);
  if (n < 0 || (size_t)n >= sizeof text)
    return mlsba__fail(MLSBA_ERANGE, "%s: model key too long", path);
  return mlsba__write_atomic(path, text, (size_t)n);
}

/* Seeds the models from the files saved for this load; true when every
 * device in use has one. */
static int load_stored(ctx_t *C, mlsba_balance_result_t *r, int *all) {
  const mlsba_platform_t *pl = C->ex->pl;
  char path[1024], key[1024];
  size_t warm = 0, used = 0;
  int err = 0;
  /* Devices a run before found not worth keeping stay out, for a while. */
  for (size_t j = 0; C->o.model_dir && j < C->p; j++) {
    unsigned trusted, stale;
    if (!C->use[j] || !C->ex->dev[j].shares_cores ||
        C->o.sharing != MLSBA_SHARING_CHECK ||
        !left_out_saved(C, j, &trusted, &stale))
      continue;
    if (trusted >= LEFT_OUT_TRUST || stale) {
      if (stale)
        logf_(C,
              "%s: checked again (a run before left it out, and the "
              "last run found the others' saved models stale)",
              pl->dev[j].name);
      else
        logf_(C,
              "%s: checked again (a run before left it out, and %u "
              "balancings have taken that since)",
              pl->dev[j].name, trusted);
      continue;
    }
    C->kept_max = C->max[j];
    r->dropped[j] = MLSBA_DROPPED_LEFT_OUT;
    C->checked[j] = C->left[j] = 1;
    if (set_capacity(C, r) != 0) { /* the others cannot hold it all */
      C->checked[j] = C->left[j] = 0;
      if ((err = restore_checked(C, r, j)) != 0)
        return err;
      continue;
    }
    C->trusted[j] = trusted + 1;
    r->left_out++;
    unsigned more = LEFT_OUT_TRUST - C->trusted[j];
    char when[64] = "at the next balancing";
    if (more > 0)
      snprintf(when, sizeof when, "after %u more balancing%s", more,
               more == 1 ? "" : "s");
    logf_(C,
          "%s left out, as a run before decided (checked again %s, or at "
          "the next if its .left-out file in %s is deleted)",
          pl->dev[j].name, when, C->o.model_dir);
  }
  for (size_t j = 0; !err && C->o.model_dir && j < C->p; j++) {
    if (!C->use[j])
      continue;
    used++;
    mlsba_model_t *stored = NULL;
    unsigned runs[MLSBA__MAX_POINTS];
    double sd[MLSBA__MAX_POINTS];
    if (model_file(pl, j, C->w, C->o.model_dir, path, sizeof path, key,
                   sizeof key) != 0)
      continue;
    int e = mlsba__model_load_stats(path, key, &stored, runs, sd,
                                    MLSBA__MAX_POINTS);
    if (e == 0) {
      seed_from(&C->measured[j], stored, runs, sd);
      mlsba_model_destroy(stored);
      C->warm[j] = 1;
      warm++;
    } else if (e != MLSBA_EIO) {
      r->ignored++; /* corrupt, foreign or of another version */
      logf_(C, "model file ignored: %s", mlsba_last_error());
    }
  }
  r->warm = (unsigned)warm;
  *all = used > 0 && warm == used;
  return err || warm == 0 ? err : rebuild_models(C, r);
}

/* Saves what was learned; a failed save is reported, the result stands. */
static void save_models(ctx_t *C, mlsba_balance_result_t *r) {
  char path[1024], key[1024];
  for (size_t j = 0; C->o.model_dir && j < C->p; j++) {
    int e = 0;
    /* The decision of a check, either way; one taken from a file counts
     * one more balancing, and is checked next time when a model kept beside it
     * was stale. */
    if (C->checked[j])
      e = save_left_out(C, j, C->left[j], C->trusted[j],
                        C->trusted[j] && r->stale);
    int out = C->left[j] && C->measured[j].n > 0; /* left out, runs kept */
    if (!e &&
        ((C->use[j] && mlsba_model_num_points(r->models[j]) > 0) || out)) {
      e = model_file(C->ex->pl, j, C->w, C->o.model_dir, path, sizeof path, key,
                     sizeof key);
      if (!e)
        e = save_measured(&C->measured[j], C->max[j], path, key);
    }
    if (e && !r->save_error) {
      r->save_error = e;
      logf_(C, "models not saved: %s", mlsba_last_error());
    }
  }
}

/* Whether every device in use has a model to be partitioned by. */
static int all_modelled(const ctx_t *C, const mlsba_balance_result_t *r) {
  for (size_t j = 0; j < C->p; j++)
    if (C->use[j] && mlsba_model_num_points(r->models[j]) == 0)
      return 0;
  return 1;
}

/* A device failed in a run: under MLSBA_ON_FAULT_CONTINUE it is dropped
 * and the load goes to the others; returns 0 when the run may be retried
 * with *load redistributed. */
static int drop_failed(ctx_t *C, mlsba_balance_result_t *r, int err,
                       long failed, int64_t *load) {
  if (C->o.on_fault != MLSBA_ON_FAULT_CONTINUE || failed < 0 ||
      (err != MLSBA_EDEVICE && err != MLSBA_EDEVMEM))
    return err;
  char why[512];
  snprintf(why, sizeof why, "%s", mlsba_last_error());
  r->dropped[failed] = MLSBA_DROPPED_FAULT;
  r->lost++;
  logf_(C, "%s dropped after a fault, the others take its share: %s",
        C->ex->pl->dev[failed].name, why);
  int e = set_capacity(C, r);
  if (e)
    return e;
  double seconds;
  if (!all_modelled(C, r) || repartition(C, r, load, &seconds) != 0)
    even_start(C, load);
  return 0;
}

/* Runs r->load until a run completes (measure(), re-measuring outliers,
 * when remeasure; else one run per try): a device that fails is dropped
 * (drop_failed) and the others run its share, at most once per device.
 * *dropped says whether one was. */
static int run_until_done(ctx_t *C, mlsba_balance_result_t *r, double *time,
                          int remeasure, unsigned *again, int *dropped) {
  *dropped = 0;
  for (unsigned retries = 0;; retries++) {
    long failed;
    *again = 0;
    int err = remeasure ? measure(C, r, r->load, time, again, &failed)
                        : run_once(C, r->load, time, &failed);
    if (err == 0)
      return 0;
    if (retries >= C->p || (err = drop_failed(C, r, err, failed, r->load)))
      return err;
    *dropped = 1;
  }
}

/* The largest of the p times: a run's makespan. */
static double largest(const double *time, size_t p) {
  double worst = 0;
  for (size_t j = 0; j < p; j++)
    worst = time[j] > worst ? time[j] : worst;
  return worst;
}

/* Under MLSBA_SHARING_CHECK: of the loaded devices that compute on the
 * cores of others and were not checked yet, the one with the smallest
 * load; -1 when there is none or fewer than two devices are loaded. */
static long sharing_candidate(const ctx_t *C, const int64_t *load) {
  long best = -1;
  size_t loaded = 0;
  for (size_t j = 0; j < C->p; j++) {
    loaded += load[j] > 0;
    if (load[j] > 0 && C->ex->dev[j].shares_cores && !C->checked[j] &&
        (best < 0 || load[j] < load[best]))
      best = (long)j;
  }
  return C->o.sharing == MLSBA_SHARING_CHECK && loaded >= 2 ? best : -1;
}

/* The makespan of the last run's devices if they were balanced at the
 * speeds they just showed: N over the sum of their speeds. */
static double balanced_at_last_speeds(const ctx_t *C,
                                      const mlsba_balance_result_t *r) {
  double speed = 0;
  for (size_t j = 0; j < C->p; j++)
    if (r->load[j] > 0 && r->time[j] > 0)
      speed += (double)r->load[j] / r->time[j];
  return speed > 0 ? (double)C->w->units / speed : 0;
}

/* Starts the check of device j: the next run leaves it out and the others
 * take the load from their models. The last run is kept to come back to.
 * A settled run is the bar the run without j must beat. After the first
 * run (early), nothing is balanced yet: the bar is that run balanced at
 * the speeds it showed, less 2 eps (a speed that grows with the load could
 * do better), and only a clear loss leaves j out at once; a keep then is
 * provisional, and the check comes again once the routine settles. On
 * this machine that leaves pocl out at the second run instead of the
 * tenth. Returns 1 with the distribution in next, or 0 (the others cannot
 * hold the load without it) with everything as it was. */
static int start_check(ctx_t *C, mlsba_balance_result_t *r, size_t j, int stop,
                       int early, int64_t *next, double *overhead) {
  C->checked[j] = 1;
  C->kept_max = C->max[j];
  r->dropped[j] = MLSBA_DROPPED_LEFT_OUT;
  if (set_capacity(C, r) != 0 || repartition(C, r, next, overhead) != 0) {
    restore_checked(C, r, j);
    return 0;
  }
  C->checking = (long)j;
  C->early = early;
  C->bar =
      early ? (1 - 2 * C->o.eps) * balanced_at_last_speeds(C, r) : r->makespan;
  C->kept_stop = stop;
  C->kept_makespan = r->makespan;
  C->kept_imbalance = r->imbalance;
  memcpy(C->kept_load, r->load, C->p * sizeof *r->load);
  memcpy(C->kept_time, r->time, C->p * sizeof *r->time);
  return 1;
}

/* The next distribution from the models, into proposal; *stop becomes
 * MLSBA_STOP_FIXED_POINT or MLSBA_STOP_CYCLE when the routine should end
 * there instead. */
static int propose(ctx_t *C, mlsba_balance_result_t *r, unsigned it,
                   int64_t *proposal, double *overhead, int *stop) {
  const mlsba_balance_opts_t *o = &C->o;
  memcpy(proposal, r->load, C->p * sizeof *proposal);
  int err = repartition(C, r, proposal, overhead);
  if (err)
    return err;
  /* A fixed point: the proposal moves no device by more than eps of its
   * load, and the models expect it to gain less than eps over the loads
   * just run (a small move of a large load can still be worth more). Both
   * makespans come from the same models: the measured one is biased up
   * by noise (it is the largest of several noisy times). And every
   * loaded device's point at its load is known well: two runs or more,
   * with a standard error of their mean within eps / 2. With timing
   * noise of a few percent one run per point misplaces some device by
   * more than eps about one time in four; the routine measures how noisy
   * its devices are and averages until it is not. (The measurements
   * behind these choices are in benchmarks/RESULTS.md.) */
  int moved = 0;
  double now_pred = 0, next_pred = 0, next_min = INFINITY, t;
  for (size_t j = 0; j < C->p; j++) {
    double tol = o->eps * (double)r->load[j];
    moved |= fabs((double)(proposal[j] - r->load[j])) > (tol > 1 ? tol : 1);
    if (proposal[j] > 0 &&
        mlsba_model_time(r->models[j], (double)proposal[j], &t) == 0) {
      next_pred = t > next_pred ? t : next_pred;
      if (proposal[j] < C->max[j]) /* a capped device may finish early */
        next_min = t < next_min ? t : next_min;
    }
    if (r->load[j] > 0 &&
        mlsba_model_time(r->models[j], (double)r->load[j], &t) == 0)
      now_pred = t > now_pred ? t : now_pred;
  }
  /* ... and the models themselves must call the proposal balanced: an
   * algorithm that ignores them (homogeneous) repeats itself without
   * converging. */
  int settled =
      !moved && next_pred > (1 - o->eps) * now_pred &&
      (next_min == INFINITY || next_pred - next_min <= o->eps * next_pred);
  if (settled && all_known_well(C, r->load)) {
    *stop = MLSBA_STOP_FIXED_POINT;
    return 0;
  }
  /* A distribution run before (since the last device left) comes back.
   * The one just run, proposed again and settled, is a repeat that
   * averages its points (until they are known well, or max_iter); an
   * algorithm that repeats a distribution its models call unbalanced
   * (homogeneous) has cycled. */
  if (settled && !memcmp(r->load, proposal, C->p * sizeof *proposal))
    return 0;
  for (unsigned k = C->cycle_from; k + 1 < it; k++) {
    if (!memcmp(r->history_load + k * C->p, proposal,
                C->p * sizeof *proposal)) {
      *stop = MLSBA_STOP_CYCLE;
      return 0;
    }
  }
  return 0;
}

/* The run-to-run variation of the devices in use: the largest relative
 * standard deviation of single runs of a device at one load, from its
 * model's measurements (its kind's when pooled); *at: which device (-1
 * when no load was run twice). */
static double variation(const ctx_t *C, const mlsba_balance_result_t *r,
                        long *at) {
  double worst = 0;
  *at = -1;
  for (size_t j = 0; j < C->p; j++) {
    double noise = r->load[j] > 0 ? mlsba__measured_noise(C->basis[j]) : 0;
    if (noise > worst) {
      worst = noise;
      *at = (long)j;
    }
  }
  return worst;
}

/* After max_iter: when the device times vary from run to run by more
 * than eps / 2, that is why (a point is known well once the standard
 * error of its runs is within eps / 2), and the log says so, with what
 * would let the routine settle. */
static void explain_noise(const ctx_t *C, const mlsba_balance_result_t *r) {
  long at = -1;
  double worst = variation(C, r, &at);
  double tol = C->o.eps / 2;
  if (at < 0 || worst <= tol)
    return;
  double runs = ceil(worst * worst / (tol * tol));
  logf_(C,
        "%s's times vary by %.1f%% from run to run (the most of the devices "
        "in use): a point is known within eps/2 after about %.0f runs of it. "
        "A larger eps or max_iter, or a quieter machine, lets the routine "
        "settle",
        C->ex->pl->dev[at].name, 100 * worst, runs);
}

/* The iterative routine (seed 002 §V.A) from the current models: warm
 * starts from them when start_warm, else from N/P. */
static int routine(ctx_t *C, mlsba_balance_result_t *r, int start_warm) {
  const mlsba_platform_t *pl = C->ex->pl;
  const mlsba_balance_opts_t *o = &C->o;
  int flat = o->grouping == MLSBA_GROUPING_FLAT;
  unsigned ncalls = 0;
  double overhead = 0;
  int err = 0;
  r->iterations = 0;
  r->overhead_total_s = 0;
  r->overhead_per_call_s = 0;
  C->checking = -1;
  C->cycle_from = 0;
  if (start_warm) {
    if ((err = repartition(C, r, r->load, &overhead)) != 0)
      return err;
    C->calls[ncalls++] = overhead;
    r->overhead_total_s += overhead;
  } else {
    even_start(C, r->load);
  }
  for (unsigned it = 1;; it++) {
    unsigned again;
    int dropped;
    if ((err = run_until_done(C, r, r->time, 1, &again, &dropped)) != 0)
      return err;
    r->iterations = it;
    double makespan = largest(r->time, C->p);
    double imbalance = spread(r->time, r->load, C->max, NULL, C->p);
    memcpy(r->history_load + (it - 1) * C->p, r->load, C->p * sizeof *r->load);
    memcpy(r->history_time + (it - 1) * C->p, r->time, C->p * sizeof *r->time);
    r->history_makespan[it - 1] = makespan;
    r->history_imbalance[it - 1] = imbalance;
    logf_(C, "%s: iteration %u: makespan %.4f s, imbalance %.1f%%%s",
          C->w->name, it, makespan, 100 * imbalance,
          again ? " (outlier re-measured)" : "");
    if (o->progress) {
      mlsba_iteration_t info = {it,        r->load,  r->time, makespan,
                                imbalance, overhead, again};
      o->progress(o->progress_ctx, &info);
    }
    int stop = -1;
    int64_t *proposal = it < o->max_iter ? r->history_load + it * C->p : NULL;
    long cj = C->checking;
    C->checking = -1;
    if (cj >= 0 && !(makespan < C->bar)) {
      /* The device pays its way: back to the run with it. This run is not
       * added to the models: the others ran alone, faster than beside it. */
      logf_(C, "%s kept%s: %.4f s without it, %.4f s with it%s",
            pl->dev[cj].name, C->early ? " for now" : "", makespan, C->bar,
            C->early ? " if balanced at its first speeds" : "");
      C->checked[cj] = !C->early;
      if ((err = restore_checked(C, r, (size_t)cj)) != 0)
        return err;
      memcpy(r->load, C->kept_load, C->p * sizeof *r->load);
      memcpy(r->time, C->kept_time, C->p * sizeof *r->time);
      r->makespan = C->kept_makespan;
      r->imbalance = C->kept_imbalance;
      stop = C->kept_stop;
      if (stop < 0 && proposal == NULL)
        stop = MLSBA_STOP_MAX_ITER;
      if (stop < 0 && (err = propose(C, r, it, proposal, &overhead, &stop)))
        return err;
      if (stop < 0) {
        C->calls[ncalls++] = overhead;
        r->overhead_total_s += overhead;
        memcpy(r->load, proposal, C->p * sizeof *proposal);
        continue;
      }
      r->stop = (mlsba_stop_reason_t)stop;
      break;
    }
    if (cj >= 0) {
      /* Faster without it: it stays out, and what the others measured
       * beside it no longer holds. Its own runs (beside the others, as
       * it would run again) are kept and saved, so that the balancing
       * that checks it again starts warm. */
      r->left_out++;
      C->left[cj] = 1;
      logf_(C,
            "%s left out: it computes on the others' cores, and they take "
            "%.4f s without it, %.4f s with it%s",
            pl->dev[cj].name, makespan, C->bar,
            C->early ? " if balanced at its first speeds" : "");
      for (size_t j = 0; j < C->p; j++)
        if (j != (size_t)cj)
          C->measured[j].n = 0;
      C->cycle_from = it;
    }
    for (size_t j = 0; j < C->p; j++) {
      if (r->load[j] == 0)
        continue;
      /* A stored model the first run contradicts (measure() has already
       * confirmed the time with a second run) is stale: the machine
       * changed. Only what is measured now is kept. */
      double pred;
      if (it == 1 && C->warm[j] &&
          mlsba_model_time(r->models[j], (double)r->load[j], &pred) == 0 &&
          fabs(r->time[j] / pred - 1) > o->outlier) {
        C->measured[j].n = 0;
        r->stale++;
        logf_(C,
              "%s: the saved model is stale (predicted %.4f s, measured "
              "%.4f s); measuring afresh",
              pl->dev[j].name, pred, r->time[j]);
      }
      mlsba__measured_add(&C->measured[j], r->load[j], r->time[j], o->eps);
    }
    if ((err = rebuild_models(C, r)) != 0)
      return err;
    memset(C->warm, 0, C->p);
    r->makespan = makespan;
    r->imbalance = imbalance;
    if (balanced(pl, flat, r->load, C->max, r->time, o->eps, C->scratch + C->p,
                 C->gload, C->gcap) &&
        all_known_well(C, r->load))
      stop = MLSBA_STOP_BALANCED;
    else if (proposal == NULL)
      stop = MLSBA_STOP_MAX_ITER;
    if (stop < 0) {
      /* The next distribution goes in the history's next row. */
      if ((err = propose(C, r, it, proposal, &overhead, &stop)) != 0)
        return err;
      C->calls[ncalls++] = overhead;
      r->overhead_total_s += overhead;
    }
    /* After the first run (early), once settled, or half-way without
     * settling: check that a device which computes on the others' cores
     * pays its way (mlsba_sharing_t, start_check). */
    int early = it == 1 && stop < 0;
    long check = proposal && (stop >= 0 || early || it == (o->max_iter + 1) / 2)
                     ? sharing_candidate(C, r->load)
                     : -1;
    if (check >= 0 &&
        start_check(C, r, (size_t)check, stop, early, proposal, &overhead)) {
      logf_(C, "%s computes on the cores of others: a run without it",
            pl->dev[check].name);
      C->calls[ncalls++] = overhead; /* the partitioning without it */
      r->overhead_total_s += overhead;
      memcpy(r->load, proposal, C->p * sizeof *proposal);
      continue;
    }
    if (stop >= 0) {
      r->stop = (mlsba_stop_reason_t)stop;
      break;
    }
    memcpy(r->load, proposal, C->p * sizeof *proposal);
  }
  r->converged =
      r->stop == MLSBA_STOP_BALANCED || r->stop == MLSBA_STOP_FIXED_POINT;
  if (ncalls) {
    qsort(C->calls, ncalls, sizeof *C->calls, cmp_double);
    r->overhead_per_call_s = C->calls[ncalls / 2];
  }
  for (size_t gi = 0; gi < pl->ngroups; gi++) {
    r->alpha[gi] = 0;
    for (size_t k = pl->group_start[gi]; k < pl->group_start[gi + 1]; k++)
      r->alpha[gi] += r->load[pl->group_dev[k]];
  }
  long at;
  r->eps = C->o.eps;
  r->variation = variation(C, r, &at);
  char how[512];
  mlsba_balance_result_describe(r, how, sizeof how);
  logf_(C, "%s: %s", C->w->name, how);
  if (r->stop == MLSBA_STOP_MAX_ITER)
    explain_noise(C, r);
  save_models(C, r);
  return 0;
}

/* Cold or warm start of a fresh context. */
static int first_balancing(ctx_t *C, mlsba_balance_result_t *r) {
  int all_warm = 0;
  int err = load_stored(C, r, &all_warm);
  return err ? err : routine(C, r, all_warm);
}

int mlsba_balance_load(mlsba_executor_t *ex, const mlsba_load_t *w,
                       const mlsba_balance_opts_t *opts,
                       mlsba_balance_result_t *r) {
  if (ex == NULL || w == NULL || r == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_load: %s is NULL",
                       ex == NULL  ? "executor"
                       : w == NULL ? "load"
                                   : "result");
  ctx_t C;
  int err = ctx_init(&C, ex, w, opts, r);
  if (!err)
    err = first_balancing(&C, r);
  ctx_free(&C);
  if (err)
    mlsba_balance_result_free(r);
  return err;
}

int mlsba_balance_gemm(mlsba_executor_t *ex, const mlsba_gemm_t *g,
                       const mlsba_balance_opts_t *opts,
                       mlsba_balance_result_t *r) {
  if (r)
    memset(r, 0, sizeof *r);
  mlsba_load_t *w = NULL;
  int err = ex == NULL || r == NULL
                ? mlsba__fail(MLSBA_EINVAL, "mlsba_balance_gemm: %s is NULL",
                              ex == NULL ? "executor" : "result")
                : mlsba_load_gemm(g, &w);
  if (!err)
    err = mlsba_balance_load(ex, w, opts, r);
  mlsba_load_destroy(w);
  return err;
}

/* ---- balance once, run many times ---------------------------------------- */

struct mlsba_balancer {
  mlsba_platform_t *owned; /* the discovered platform of mlsba_balance() */
  const mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  ctx_t C;
  mlsba_balance_result_t r;
  unsigned drifted; /* runs in a row with imbalance above drift */
};

void mlsba_balancer_destroy(mlsba_balancer_t *b) {
  if (b == NULL)
    return;
  ctx_free(&b->C);
  mlsba_balance_result_free(&b->r);
  mlsba_executor_destroy(b->ex);
  mlsba_platform_destroy(b->owned);
  free(b);
}

int mlsba_balance_ex(const mlsba_platform_t *pl, mlsba_load_t *w,
                     const mlsba_balance_opts_t *opts, mlsba_balancer_t **out) {
  if (w == NULL || out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_ex: %s is NULL",
                       w == NULL ? "load" : "balancer");
  *out = NULL;
  mlsba_balancer_t *b = calloc(1, sizeof *b);
  if (b == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "balancer: out of memory");
  int err = 0;
  if (pl == NULL && (err = mlsba_platform_discover(&b->owned)) == 0)
    pl = b->owned;
  b->pl = pl;
  if (!err)
    err = mlsba_executor_create(pl, &b->ex);
  if (!err)
    err = ctx_init(&b->C, b->ex, w, opts, &b->r);
  if (!err)
    err = first_balancing(&b->C, &b->r);
  if (err) {
    mlsba_balancer_destroy(b);
    return err;
  }
  *out = b;
  return 0;
}

int mlsba_balance(mlsba_load_t *w, mlsba_balancer_t **out) {
  return mlsba_balance_ex(NULL, w, NULL, out);
}

int mlsba_balancer_rebalance(mlsba_balancer_t *b) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_rebalance: NULL");
  /* Start from the models learned so far, checked against the first run
   * like stored models: a device that changed is measured afresh. */
  memcpy(b->C.warm, b->C.use, b->C.p);
  b->drifted = 0;
  return routine(&b->C, &b->r, all_modelled(&b->C, &b->r));
}

int mlsba_balancer_run(mlsba_balancer_t *b, mlsba_run_info_t *info) {
  if (b == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balancer_run: balancer is NULL");
  ctx_t *C = &b->C;
  mlsba_balance_result_t *r = &b->r;
  double *time = C->scratch;
  unsigned again;
  int rebalanced; /* a device dropped: the others took over its share */
  int err = run_until_done(C, r, time, 0, &again, &rebalanced);
  if (err)
    return err;
  double makespan = largest(time, C->p);
  double imbalance = spread(time, r->load, C->max, NULL, C->p);
  b->drifted = C->o.drift > 0 && imbalance > C->o.drift ? b->drifted + 1 : 0;
  if (b->drifted >= 2 || rebalanced) {
    logf_(C, "%s: imbalance %.1f%% drifted past %.1f%%: re-balancing",
          C->w->name, 100 * imbalance, 100 * C->o.drift);
    if ((err = mlsba_balancer_rebalance(b)) != 0)
      return err;
    rebalanced = 1;
    makespan = r->makespan;
    imbalance = r->imbalance;
  }
  if (info) {
    info->makespan = makespan;
    info->imbalance = imbalance;
    info->rebalanced = rebalanced;
  }
  return 0;
}

const mlsba_balance_result_t *mlsba_balancer_result(const mlsba_balancer_t *b) {
  return b ? &b->r : NULL;
}

const mlsba_platform_t *mlsba_balancer_platform(const mlsba_balancer_t *b) {
  return b ? b->pl : NULL;
}
