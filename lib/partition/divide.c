/* The head of a one-dimensional INPA (divide.h): node speed functions
 * from the times the nodes report (their runs kept as the balancing
 * routine keeps a device's, measured.h), the next counts by geometric
 * partitioning over them, the stops of the self-adaptive routine, and
 * the re-balance after a drift. */
#include "divide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/even.h"
#include "cma.h"
#include "fpm.h"
#include "measured.h"

struct mlsba__divide {
  size_t q;
  int64_t n;
  mlsba__inpa_opts_t o;
  mlsba_model_t **models;      /* built from measured after every run */
  mlsba__measured_t *measured; /* each node's runs */
  int64_t *counts;             /* the request, then the result */
  int64_t *next;
  double *speed; /* scratch: the baselines' shares */
  int done;
  mlsba_stop_reason_t stop;
  unsigned limit; /* runs allowed in total (max_iter, more after resume) */
  /* The balancing under way began at run `begun` (0, or the run fed by
   * the last resume): its stops look at its own runs only. */
  size_t begun;
  /* After a resume without a run, the next run fed is checked against the
   * models, with this tolerance (0: no check pending). */
  double check_tol;
  /* Every run: hist_counts[k * q + i], hist_times[k * q + i]. */
  size_t runs, cap;
  int64_t *hist_counts;
  double *hist_times, *hist_imbalance;
};

void mlsba__divide_destroy(mlsba__divide_t *h) {
  if (h == NULL)
    return;
  for (size_t i = 0; h->models && i < h->q; i++)
    mlsba_model_destroy(h->models[i]);
  free(h->models);
  free(h->measured);
  free(h->counts);
  free(h->next);
  free(h->speed);
  free(h->hist_counts);
  free(h->hist_times);
  free(h->hist_imbalance);
  free(h);
}

/* n / q each, the remainder to the first nodes. */
static void even(int64_t *c, size_t q, int64_t n) {
  for (size_t i = 0; i < q; i++)
    c[i] = mlsba__even_share(n, (int64_t)q, (int64_t)i);
}

int mlsba__divide_create(size_t q, int64_t n, const mlsba__inpa_opts_t *opts,
                         mlsba__divide_t **out) {
  *out = NULL;
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  if (opts)
    o = *opts;
  if (q < 1 || n < (int64_t)q || n > ((int64_t)1 << 53))
    return mlsba__fail(MLSBA_EINVAL,
                       "%lld units for %zu nodes: every node needs a unit "
                       "(and at most 2^53 units)",
                       (long long)n, q);
  if (!(o.eps >= 0) || o.max_iter < 1 || o.algo >= MLSBA__INPA_ALGO_COUNT)
    return mlsba__fail(MLSBA_EINVAL,
                       "eps must be >= 0, max_iter >= 1 and the algorithm "
                       "known");
  mlsba__divide_t *h = calloc(1, sizeof *h);
  if (h == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "divide: out of memory");
  h->q = q;
  h->n = n;
  h->o = o;
  h->limit = o.max_iter;
  h->models = calloc(q, sizeof *h->models);
  h->measured = calloc(q, sizeof *h->measured);
  h->counts = calloc(q, sizeof *h->counts);
  h->next = calloc(q, sizeof *h->next);
  h->speed = calloc(q, sizeof *h->speed);
  int err = h->models && h->measured && h->counts && h->next && h->speed
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "divide: out of memory");
  for (size_t i = 0; !err && i < q; i++)
    err = mlsba_model_create(&h->models[i]);
  if (err) {
    mlsba__divide_destroy(h);
    return err;
  }
  even(h->counts, q, n);
  *out = h;
  return 0;
}

const int64_t *mlsba__divide_counts(const mlsba__divide_t *h) {
  return h->counts;
}
int mlsba__divide_done(const mlsba__divide_t *h) { return h->done; }
mlsba_stop_reason_t mlsba__divide_stop(const mlsba__divide_t *h) {
  return h->stop;
}
size_t mlsba__divide_iterations(const mlsba__divide_t *h) { return h->runs; }
const int64_t *mlsba__divide_history_counts(const mlsba__divide_t *h,
                                            size_t k) {
  return h->hist_counts + k * h->q;
}
const double *mlsba__divide_history_times(const mlsba__divide_t *h, size_t k) {
  return h->hist_times + k * h->q;
}
double mlsba__divide_history_imbalance(const mlsba__divide_t *h, size_t k) {
  return h->hist_imbalance[k];
}
const mlsba_model_t *mlsba__divide_model(const mlsba__divide_t *h, size_t i) {
  return h->models[i];
}

/* (max - min) / max of the times. */
static double spread(const double *t, size_t q) {
  double lo = t[0], hi = t[0];
  for (size_t i = 1; i < q; i++) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
  }
  return hi > 0 ? (hi - lo) / hi : 0;
}

static int record(mlsba__divide_t *h, const double *t, double imbalance) {
  if (h->runs == h->cap) {
    size_t cap = h->cap ? 2 * h->cap : 8;
    int64_t *c = realloc(h->hist_counts, cap * h->q * sizeof *c);
    if (c)
      h->hist_counts = c;
    double *tt = realloc(h->hist_times, cap * h->q * sizeof *tt);
    if (tt)
      h->hist_times = tt;
    double *im = realloc(h->hist_imbalance, cap * sizeof *im);
    if (im)
      h->hist_imbalance = im;
    if (!c || !tt || !im)
      return mlsba__fail(MLSBA_ENOMEM, "divide: out of memory");
    h->cap = cap;
  }
  memcpy(h->hist_counts + h->runs * h->q, h->counts, h->q * sizeof *h->counts);
  memcpy(h->hist_times + h->runs * h->q, t, h->q * sizeof *t);
  h->hist_imbalance[h->runs++] = imbalance;
  return 0;
}

/* The baselines: shares in proportion to the speeds of the last run. */
static int propose_cpm(mlsba__divide_t *h, const double *t) {
  for (size_t i = 0; i < h->q; i++)
    h->speed[i] = (double)h->counts[i] / t[i];
  return mlsba__shares_at_least_one(h->speed, h->q, h->n, h->next);
}

/* Fixed point: the next counts move no node by more than eps / 4 of its
 * units, nor by more than one unit where that is more. */
static int barely_moves(const mlsba__divide_t *h) {
  for (size_t i = 0; i < h->q; i++) {
    double moved = fabs((double)(h->next[i] - h->counts[i]));
    if (moved > 1 && moved > h->o.eps / 4 * (double)h->counts[i])
      return 0;
  }
  return 1;
}

/* Cycle: the next counts are those of an earlier run of this balancing
 * (runs from before a drift measured other nodes). */
static int came_back(const mlsba__divide_t *h) {
  for (size_t k = h->begun; k < h->runs; k++)
    if (!memcmp(h->hist_counts + k * h->q, h->next, h->q * sizeof *h->next))
      return 1;
  return 0;
}

static void finish(mlsba__divide_t *h, mlsba_stop_reason_t stop) {
  h->done = 1;
  h->stop = stop;
}

/* What a run of the current counts taught: each node's time is a point of
 * its speed function, joining the nearest point within eps (repeated runs
 * near the balance average their noise out, as the balancing routine's
 * do). Checked first when tol > 0: a node whose function the run
 * contradicts by more than tol has changed, and its older points are
 * forgotten (measured.h). */
static int learn(mlsba__divide_t *h, const double *t, double tol) {
  int err = 0;
  for (size_t i = 0; !err && i < h->q; i++) {
    mlsba__measured_t *m = &h->measured[i];
    if (tol > 0)
      mlsba__measured_forget_if_stale(m, h->models[i], h->counts[i], t[i], tol,
                                      NULL);
    mlsba__measured_add(m, h->counts[i], t[i], h->o.eps);
    err = mlsba__measured_to_model(m, h->models[i]);
  }
  return err;
}

/* The next counts of the algorithm, into h->next: GPA over the speed
 * functions, the last run's speeds (CPM), or the even split. */
static int propose(mlsba__divide_t *h, const double *t) {
  switch (h->o.algo) {
  case MLSBA__INPA_FPM:
    return mlsba__gpa_nodes((const mlsba_model_t *const *)h->models, h->q, h->n,
                            h->next, NULL);
  case MLSBA__INPA_HOMOGENEOUS:
    even(h->next, h->q, h->n);
    return 0;
  default:
    return propose_cpm(h, t);
  }
}

static int check_times(const mlsba__divide_t *h, const double t[]) {
  for (size_t i = 0; i < h->q; i++)
    if (!isfinite(t[i]) || !(t[i] > 0))
      return mlsba__fail(MLSBA_EINVAL,
                         "divide: node %zu reported time %g (it must be a "
                         "positive number of seconds)",
                         i, t[i]);
  return 0;
}

/* Records and learns the run t of the current counts (checked against the
 * models with tolerance tol when tol > 0), then stops or draws the next
 * counts. The stops count this balancing's runs only. */
static int take_run(mlsba__divide_t *h, const double t[], double tol) {
  double imbalance = spread(t, h->q);
  int err = record(h, t, imbalance);
  /* Every run is a point of every node's speed function (the baselines'
   * too, so that their models can be compared). */
  if (!err)
    err = learn(h, t, tol);
  if (err)
    return err;
  mlsba__inpa_algo_t a = h->o.algo;
  size_t runs = h->runs - h->begun;
  int last = h->runs >= h->limit || a == MLSBA__INPA_HOMOGENEOUS ||
             (a == MLSBA__INPA_SINGLE_CPM && runs >= 2);
  if (imbalance <= h->o.eps || last) {
    finish(h,
           imbalance <= h->o.eps ? MLSBA_STOP_BALANCED : MLSBA_STOP_MAX_ITER);
    return 0;
  }
  if ((err = propose(h, t)) != 0)
    return err;
  if (a != MLSBA__INPA_SINGLE_CPM && barely_moves(h))
    finish(h, MLSBA_STOP_FIXED_POINT);
  else if (a != MLSBA__INPA_SINGLE_CPM && came_back(h))
    finish(h, MLSBA_STOP_CYCLE);
  else
    memcpy(h->counts, h->next, h->q * sizeof *h->next);
  return 0;
}

int mlsba__divide_feed(mlsba__divide_t *h, const double t[]) {
  if (h->done)
    return mlsba__fail(MLSBA_EINVAL, "divide: the head has stopped");
  int err = check_times(h, t);
  if (err)
    return err;
  double tol = h->check_tol;
  h->check_tol = 0;
  return take_run(h, t, tol);
}

int mlsba__divide_resume(mlsba__divide_t *h, const double t[], double tol) {
  if (!h->done)
    return 0;
  if (!(tol > 0) || !isfinite(tol))
    return mlsba__fail(MLSBA_EINVAL,
                       "divide: the drift tolerance must be a positive "
                       "number, got %g",
                       tol);
  int err = t != NULL ? check_times(h, t) : 0;
  if (err)
    return err;
  h->done = 0;
  h->begun = h->runs;
  h->limit = (unsigned)h->runs + h->o.max_iter;
  if (t != NULL)
    return take_run(h, t, tol);
  /* No run since the last (a stopped head has run at least once): the
   * next counts from the models as they are, or from the last run's
   * speeds, and the run of them checks the models. */
  err = propose(h, h->hist_times + (h->runs - 1) * h->q);
  if (err) {
    h->done = 1;
    return err;
  }
  memcpy(h->counts, h->next, h->q * sizeof *h->next);
  h->check_tol = tol;
  return 0;
}
