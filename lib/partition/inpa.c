/* INPA's head node (seed 000 §3, steps 1-8) and the constant-model
 * baselines of its §4, as a state machine fed with measured times. See
 * inpa.h for the loop and its stop rules. */
#include "inpa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "slba.h"

/* Runs of step 5 at most, as the single-node routine allows. */
#define INPA_MAX_ITER 100000u

struct mlsba__inpa {
  size_t q;
  int64_t nb, W;
  mlsba__inpa_opts_t o;
  mlsba__inpa_phase_t phase;
  mlsba_stop_reason_t stop;
  mlsba_model_t **models;  /* q node models, blocks and blocks/s */
  int64_t *w;              /* current request */
  mlsba__cma_rect_t *rect; /* its arrangement */
  mlsba__cma_info_t info;  /* CMA's report on it */
  int64_t *next;           /* scratch: the proposal of step 7 */
  mlsba__cma_rect_t *next_rect;
  int64_t *alt;                /* scratch: another candidate's areas */
  mlsba__cma_rect_t *alt_rect; /* and its arrangement */
  double *speed;               /* scratch: constant speeds */
  mlsba__inpa_record_t *hist;  /* max_iter records */
  /* The run the models had stopped at when the run just fed explored
   * past it (explore()); SIZE_MAX when the run just fed was the models'. */
  size_t explored_from;
  size_t nhist;
};

static const char *const algo_names[MLSBA__INPA_ALGO_COUNT] = {
    [MLSBA__INPA_FPM] = "inpa",
    [MLSBA__INPA_MULTIPLE_CPM] = "multiple-cpm",
    [MLSBA__INPA_SINGLE_CPM] = "single-cpm",
    [MLSBA__INPA_HOMOGENEOUS] = "homogeneous",
};

const char *mlsba__inpa_algo_name(mlsba__inpa_algo_t algo) {
  return (unsigned)algo < MLSBA__INPA_ALGO_COUNT ? algo_names[algo] : NULL;
}

int mlsba__inpa_algo_from_name(const char *name, mlsba__inpa_algo_t *algo) {
  if (!name || !algo)
    return mlsba__fail(MLSBA_EINVAL, "inpa: %s is NULL",
                       !name ? "name" : "algo");
  for (int a = 0; a < MLSBA__INPA_ALGO_COUNT; a++) {
    if (strcmp(name, algo_names[a]) == 0) {
      *algo = (mlsba__inpa_algo_t)a;
      return 0;
    }
  }
  return mlsba__fail(MLSBA_EINVAL,
                     "unknown inter-node algorithm '%s' (inpa, multiple-cpm, "
                     "single-cpm, homogeneous)",
                     name);
}

void mlsba__inpa_opts_init(mlsba__inpa_opts_t *opts) {
  if (!opts)
    return;
  memset(opts, 0, sizeof *opts);
  opts->algo = MLSBA__INPA_FPM;
  opts->eps = 0.05;
  opts->max_iter = 20;
}

/* ---- GPA over node models -------------------------------------------- */

/* The node that the models expect to finish last among those that can
 * give a block away (w > 1); q <= sum w guarantees one. */
static size_t latest_donor(const mlsba_model_t *const models[], size_t q,
                           const int64_t w[]) {
  size_t best = q;
  double tbest = -1;
  for (size_t j = 0; j < q; j++) {
    if (w[j] <= 1)
      continue;
    double t = mlsba__fpm_time(models[j], (double)w[j]);
    if (t > tbest) {
      tbest = t;
      best = j;
    }
  }
  return best;
}

int mlsba__gpa_nodes(const mlsba_model_t *const models[], size_t q, int64_t W,
                     int64_t w[], double *makespan) {
  int err = mlsba__check_partition_args("gpa", models, q, W, w);
  if (err)
    return err;
  if ((uint64_t)q > (uint64_t)W)
    return mlsba__fail(MLSBA_EINVAL,
                       "gpa: %zu nodes but %lld blocks: every node needs one",
                       q, (long long)W);
  for (size_t i = 0; i < q; i++)
    if (mlsba__fpm_cap(models[i], W) < 1)
      return mlsba__fail(MLSBA_EINVAL,
                         "gpa: node %zu cannot hold a block (max_load 0)", i);
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  err = mlsba__slba(models, q, W, &opts, w, NULL, NULL);
  if (err)
    return err;
  /* CMA gives every node a rectangle of at least one block, so a node
   * that SLBA leaves idle (too slow to help) still gets one; it comes from
   * the node the models expect to finish last, which can only gain. */
  for (size_t i = 0; i < q; i++) {
    if (w[i] >= 1)
      continue;
    size_t j = latest_donor(models, q, w);
    w[j]--;
    w[i] = 1;
  }
  if (makespan) {
    double worst = 0;
    for (size_t i = 0; i < q; i++) {
      double t = mlsba__fpm_time(models[i], (double)w[i]);
      worst = t > worst ? t : worst;
    }
    *makespan = worst;
  }
  return 0;
}

/* ---- the head --------------------------------------------------------- */

void mlsba__inpa_destroy(mlsba__inpa_t *h) {
  if (!h)
    return;
  if (h->models)
    for (size_t i = 0; i < h->q; i++)
      mlsba_model_destroy(h->models[i]);
  free(h->models);
  free(h->w);
  free(h->rect);
  free(h->next);
  free(h->next_rect);
  free(h->alt);
  free(h->alt_rect);
  free(h->speed);
  if (h->hist)
    for (size_t k = 0; k < h->nhist; k++)
      free((void *)h->hist[k].w); /* one block per record, see record() */
  free(h->hist);
  free(h);
}

/* Step 3: w_i = W / q, the remainder one block each to the first nodes. */
static void homogeneous(size_t q, int64_t W, int64_t *w) {
  for (size_t i = 0; i < q; i++)
    w[i] = W / (int64_t)q + ((int64_t)i < W % (int64_t)q ? 1 : 0);
}

/* Step 4 for the proposal in h->next: its arrangement into h->next_rect
 * and *info; the request is unchanged. */
static int arrange_next(mlsba__inpa_t *h, mlsba__cma_info_t *info) {
  return mlsba__cma(h->next, h->q, h->nb, h->next_rect, info);
}

static int propose_cpm(mlsba__inpa_t *h, const double *t, int64_t *w);

/* Another arrangement for the areas in h->alt: CMA's columns for them,
 * fitted to the models, into h->alt_rect; replaces h->next_rect when the
 * models predict it strictly shorter. */
static int try_alternative(mlsba__inpa_t *h, double *best) {
  double t;
  int err = mlsba__cma(h->alt, h->q, h->nb, h->alt_rect, NULL);
  if (!err)
    err = mlsba__cma_fit_models((const mlsba_model_t *const *)h->models, h->q,
                                h->nb, h->alt_rect, &t);
  if (!err && t < *best) {
    *best = t;
    memcpy(h->next_rect, h->alt_rect, h->q * sizeof *h->next_rect);
  }
  return err;
}

/* Step 4 under the models. Where the areas GPA asks for cannot be laid
 * out (every rectangle is a block wide and high at least, and a column's
 * heights fill the grid), CMA's rounding, not the models, would decide
 * the loads, and GPA would ask for the same areas again: a fixed point
 * far from balance. So the arrangement run is the best the models
 * predict among three candidates, each CMA's columns with the widths and
 * heights fitted to the models (mlsba__cma_fit_models, the constrained
 * optimum for those columns): the columns of GPA's areas; of the fitted
 * areas, re-arranged; and of the areas constant models would ask for
 * (what multiple-CPM runs next), so that INPA's choice includes the
 * baseline's. Ties keep GPA's. w stays what GPA asked; the info measures
 * the arrangement against it. */
static int fit_next(mlsba__inpa_t *h, const double *t,
                    mlsba__cma_info_t *info) {
  double best;
  int err = mlsba__cma_fit_models((const mlsba_model_t *const *)h->models, h->q,
                                  h->nb, h->next_rect, &best);
  for (size_t i = 0; !err && i < h->q; i++)
    h->alt[i] = h->next_rect[i].m * h->next_rect[i].n;
  if (!err)
    err = try_alternative(h, &best);
  if (!err)
    err = propose_cpm(h, t, h->alt);
  if (!err)
    err = try_alternative(h, &best);
  if (!err) {
    size_t columns = 0;
    for (size_t i = 0; i < h->q; i++)
      columns = h->next_rect[i].column + 1 > columns
                    ? h->next_rect[i].column + 1
                    : columns;
    info->columns = columns;
    mlsba__cma_measure(h->next, h->q, h->next_rect, info);
  }
  return err;
}

/* The arranged proposal becomes the request (step 8, back to 5). */
static void take_next(mlsba__inpa_t *h, const mlsba__cma_info_t *info) {
  memcpy(h->w, h->next, h->q * sizeof *h->w);
  mlsba__cma_rect_t *tmp = h->rect;
  h->rect = h->next_rect;
  h->next_rect = tmp;
  h->info = *info;
  h->phase = MLSBA__INPA_RUN;
}

/* Steps 3-4: the homogeneous distribution becomes the request. */
static int start_homogeneous(mlsba__inpa_t *h) {
  mlsba__cma_info_t info;
  homogeneous(h->q, h->W, h->next);
  int err = arrange_next(h, &info);
  if (!err)
    take_next(h, &info);
  return err;
}

int mlsba__inpa_create(size_t q, int64_t nb, const mlsba__inpa_opts_t *opts,
                       mlsba__inpa_t **head) {
  if (!head)
    return mlsba__fail(MLSBA_EINVAL, "inpa: head is NULL");
  *head = NULL;
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  if (opts)
    o = *opts;
  if ((unsigned)o.algo >= MLSBA__INPA_ALGO_COUNT)
    return mlsba__fail(MLSBA_EINVAL, "inpa: unknown algorithm %d", (int)o.algo);
  if (!(o.eps >= 0) || !isfinite(o.eps))
    return mlsba__fail(MLSBA_EINVAL,
                       "inpa: eps must be finite and >= 0, got %g", o.eps);
  if (o.max_iter < 1 || o.max_iter > INPA_MAX_ITER)
    return mlsba__fail(MLSBA_EINVAL, "inpa: max_iter must be 1 to %u, got %u",
                       INPA_MAX_ITER, o.max_iter);
  int err = mlsba__cma_check_grid("inpa", q, nb);
  if (err)
    return err;

  mlsba__inpa_t *h = calloc(1, sizeof *h);
  if (!h)
    return mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  h->q = q;
  h->nb = nb;
  h->W = nb * nb;
  h->o = o;
  h->explored_from = SIZE_MAX;
  h->models = calloc(q, sizeof *h->models);
  h->w = malloc(q * sizeof *h->w);
  h->rect = calloc(q, sizeof *h->rect);
  h->next = malloc(q * sizeof *h->next);
  h->next_rect = malloc(q * sizeof *h->next_rect);
  h->alt = malloc(q * sizeof *h->alt);
  h->alt_rect = malloc(q * sizeof *h->alt_rect);
  h->speed = malloc(q * sizeof *h->speed);
  h->hist = calloc(o.max_iter, sizeof *h->hist);
  if (!h->models || !h->w || !h->rect || !h->next || !h->next_rect || !h->alt ||
      !h->alt_rect || !h->speed || !h->hist)
    err = mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  for (size_t i = 0; i < q && !err; i++)
    err = mlsba_model_create(&h->models[i]);
  if (!err && o.algo == MLSBA__INPA_FPM) {
    /* Step 1: one block on every node, each on its own. */
    h->phase = MLSBA__INPA_SMALL;
    for (size_t i = 0; i < q; i++) {
      h->w[i] = 1;
      h->rect[i] = (mlsba__cma_rect_t){1, 1, 0, 0, 0};
    }
  } else if (!err) {
    /* The baselines need no small point: constant speeds are measured at
     * the distribution run. */
    err = start_homogeneous(h);
  }
  if (err) {
    mlsba__inpa_destroy(h);
    return err;
  }
  *head = h;
  return 0;
}

mlsba__inpa_phase_t mlsba__inpa_phase(const mlsba__inpa_t *h) {
  return h->phase;
}
const int64_t *mlsba__inpa_w(const mlsba__inpa_t *h) { return h->w; }
const mlsba__cma_rect_t *mlsba__inpa_rects(const mlsba__inpa_t *h) {
  return h->rect;
}
const mlsba__cma_info_t *mlsba__inpa_cma_info(const mlsba__inpa_t *h) {
  return &h->info;
}
mlsba_stop_reason_t mlsba__inpa_stop(const mlsba__inpa_t *h) { return h->stop; }
size_t mlsba__inpa_iterations(const mlsba__inpa_t *h) { return h->nhist; }
const mlsba__inpa_record_t *mlsba__inpa_history(const mlsba__inpa_t *h,
                                                size_t k) {
  return k < h->nhist ? &h->hist[k] : NULL;
}
static double makespan_of(const mlsba__inpa_record_t *r, size_t q) {
  double worst = 0;
  for (size_t i = 0; i < q; i++)
    worst = r->t[i] > worst ? r->t[i] : worst;
  return worst;
}

size_t mlsba__inpa_best_run(const mlsba__inpa_t *h) {
  size_t best = SIZE_MAX;
  double tbest = INFINITY;
  for (size_t k = 0; k < h->nhist; k++) {
    double t = makespan_of(&h->hist[k], h->q);
    if (t < tbest) {
      tbest = t;
      best = k;
    }
  }
  return best;
}
const mlsba_model_t *mlsba__inpa_model(const mlsba__inpa_t *h, size_t i) {
  return i < h->q ? h->models[i] : NULL;
}

/* Step 6's test, as libmlsba measures an imbalance everywhere (the
 * single-node routine, every report): (max t - min t) / max t. The seed
 * divides by min t; with that, a run reported as 4.9% apart under eps 5%
 * could still stop as not balanced, and the report would disagree with
 * the stop. */
static double imbalance(const double *t, size_t q) {
  double lo = INFINITY, hi = 0;
  for (size_t i = 0; i < q; i++) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
  }
  return (hi - lo) / hi;
}

/* Keeps the run just fed: w, arrangement and times in one block, so that
 * the record's arrays live as long as the head. */
static int record(mlsba__inpa_t *h, const double *t) {
  size_t q = h->q;
  void *block = malloc(
      q * (sizeof(int64_t) + sizeof(mlsba__cma_rect_t) + sizeof(double)));
  if (!block)
    return mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  int64_t *w = block;
  mlsba__cma_rect_t *rect = (mlsba__cma_rect_t *)(w + q);
  double *tt = (double *)(rect + q);
  memcpy(w, h->w, q * sizeof *w);
  memcpy(rect, h->rect, q * sizeof *rect);
  memcpy(tt, t, q * sizeof *tt);
  h->hist[h->nhist++] = (mlsba__inpa_record_t){w, rect, tt, imbalance(t, q),
                                               h->info.half_perimeter};
  return 0;
}

/* Step 7 replaced by the constant models of §4: w_i in proportion to the
 * speed a_i / t_i each node showed in the run just fed. */
static int propose_cpm(mlsba__inpa_t *h, const double *t, int64_t *w) {
  double sum = 0;
  for (size_t i = 0; i < h->q; i++) {
    h->speed[i] = (double)(h->rect[i].m * h->rect[i].n) / t[i];
    sum += h->speed[i];
  }
  for (size_t i = 0; i < h->q; i++)
    h->speed[i] = (double)h->W * (h->speed[i] / sum);
  return mlsba__shares_at_least_one(h->speed, h->q, h->W, w);
}

/* Runs are the same when every node gets a rectangle of the same m x n,
 * wherever it lies. */
static int same_shapes(const mlsba__cma_rect_t *a, const mlsba__cma_rect_t *b,
                       size_t q) {
  for (size_t i = 0; i < q; i++)
    if (a[i].m != b[i].m || a[i].n != b[i].n)
      return 0;
  return 1;
}

/* Whether the arranged proposal (h->next_rect) is a run already run: the
 * one just fed (a fixed point: GPA moved w by less than CMA's rounding,
 * the models have nothing new that whole blocks can express) or an
 * earlier one (a cycle). The run just fed is the last record; *which
 * receives the index of the run repeated. */
static int repeats(const mlsba__inpa_t *h, mlsba_stop_reason_t *stop,
                   size_t *which) {
  if (same_shapes(h->next_rect, h->rect, h->q)) {
    *stop = MLSBA_STOP_FIXED_POINT;
    *which = h->nhist - 1;
    return 1;
  }
  for (size_t k = 0; k + 1 < h->nhist; k++) {
    if (same_shapes(h->next_rect, h->hist[k].rect, h->q)) {
      *stop = MLSBA_STOP_CYCLE;
      *which = k;
      return 1;
    }
  }
  return 0;
}

/* Where the models propose again a run already run above eps, they have
 * nothing more to learn from it, yet they may be wrong between their
 * points (a node whose time has a large fixed part looks, by linear
 * speed between far points, far slower in between than it is). Before
 * stopping, INPA runs what a constant model measured on the last run
 * would ask for, laid out by CMA, when that is a run not yet run: its
 * points land where the models were guessing, and a constant model's
 * next step is always among INPA's. */
static int explore(mlsba__inpa_t *h, const double *t, mlsba__cma_info_t *info) {
  int err = propose_cpm(h, t, h->next);
  return err ? err : arrange_next(h, info);
}

static void finish(mlsba__inpa_t *h, mlsba_stop_reason_t stop) {
  h->phase = MLSBA__INPA_DONE;
  h->stop = stop;
}

/* After a run that neither balanced nor was the last: take the
 * proposal, or stop where it repeats a run. INPA explores first (see
 * explore()); when the models, having seen the exploration, choose again
 * the run they had stopped at, that run is their fixed point and the
 * result (it is not run again: its times are in the history). */
static int next_step(mlsba__inpa_t *h, const double *t,
                     mlsba__cma_info_t *info) {
  size_t from = h->explored_from, which;
  mlsba_stop_reason_t stop, again;
  h->explored_from = SIZE_MAX;
  /* Single-CPM runs its one re-partitioning whatever it is. */
  if (h->o.algo == MLSBA__INPA_SINGLE_CPM || !repeats(h, &stop, &which)) {
    take_next(h, info);
    return 0;
  }
  if (h->o.algo == MLSBA__INPA_FPM && from != SIZE_MAX && which == from) {
    take_next(h, info);
    finish(h, MLSBA_STOP_FIXED_POINT);
    return 0;
  }
  if (h->o.algo != MLSBA__INPA_FPM) {
    finish(h, stop);
    return 0;
  }
  int err = explore(h, t, info);
  if (err)
    return err;
  /* The stop says what the models found, whatever the exploration would
   * have repeated. */
  if (repeats(h, &again, &from)) {
    finish(h, stop);
    return 0;
  }
  take_next(h, info);
  h->explored_from = which;
  return 0;
}

/* Steps 1-2 done: the small points go in and the first distribution
 * (steps 3-4) is asked for. */
static int feed_small(mlsba__inpa_t *h, const double *t) {
  for (size_t i = 0; i < h->q; i++) {
    int err = mlsba_model_set_point(h->models[i], 1.0, 1.0 / t[i]);
    if (err)
      return err;
  }
  return start_homogeneous(h);
}

/* Steps 5-8 after a run. */
static int feed_run(mlsba__inpa_t *h, const double *t) {
  size_t q = h->q;
  /* The point of step 6 at the area each node ran; set_point replaces a
   * point at the same area, so feeding the same times again after an
   * error leaves the models as one feed would. */
  for (size_t i = 0; i < q; i++) {
    double a = (double)(h->rect[i].m * h->rect[i].n);
    int err = mlsba_model_set_point(h->models[i], a, a / t[i]);
    if (err)
      return err;
  }
  unsigned runs = (unsigned)h->nhist + 1;
  int balanced = imbalance(t, q) <= h->o.eps;
  int last = runs >= h->o.max_iter || h->o.algo == MLSBA__INPA_HOMOGENEOUS ||
             (h->o.algo == MLSBA__INPA_SINGLE_CPM && runs >= 2);
  int err = 0;
  mlsba__cma_info_t info;
  if (!balanced && !last) { /* steps 7 and 4 */
    err = h->o.algo == MLSBA__INPA_FPM
              ? mlsba__gpa_nodes((const mlsba_model_t *const *)h->models, q,
                                 h->W, h->next, NULL)
              : propose_cpm(h, t, h->next);
    if (!err)
      err = arrange_next(h, &info);
    if (!err && h->o.algo == MLSBA__INPA_FPM)
      err = fit_next(h, t, &info);
  }
  if (!err)
    err = record(h, t);
  if (err)
    return err;
  if (balanced || last)
    finish(h, balanced ? MLSBA_STOP_BALANCED : MLSBA_STOP_MAX_ITER);
  else
    err = next_step(h, t, &info);
  return err;
}

int mlsba__inpa_feed(mlsba__inpa_t *h, const double t[]) {
  if (!h || !t)
    return mlsba__fail(MLSBA_EINVAL, "inpa: %s is NULL", !h ? "head" : "t");
  if (h->phase == MLSBA__INPA_DONE)
    return mlsba__fail(MLSBA_EINVAL,
                       "inpa: the head has stopped (%s); nothing to feed",
                       mlsba_stop_reason_name(h->stop));
  for (size_t i = 0; i < h->q; i++)
    if (!(t[i] > 0) || !isfinite(t[i]))
      return mlsba__fail(MLSBA_EINVAL,
                         "inpa: time of node %zu must be finite and > 0, "
                         "got %g",
                         i, t[i]);
  return h->phase == MLSBA__INPA_SMALL ? feed_small(h, t) : feed_run(h, t);
}
