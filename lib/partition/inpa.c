/* INPA's head node (seed 000 §3, steps 1-8) and the constant-model
 * baselines of its §4, as a state machine fed with measured times. See
 * inpa.h for the loop and its stop rules. */
#include "inpa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "inpa_caps.h"

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
  int64_t *cap;                /* blocks each node can hold (or no limit) */
  double *speed;               /* scratch: constant speeds */
  double *total;               /* scratch: the times fed plus comm */
  /* Each node's communication per run (opts.comm_fixed and
   * comm_per_block, copied), or comm.fixed NULL for none. */
  double *comm_fixed, *comm_per_block;
  mlsba__comm_model_t comm;
  double *start;              /* opts.start_speed, copied, or NULL */
  mlsba__inpa_record_t *hist; /* max_iter records */
  /* The run the models had stopped at when the run just fed explored
   * past it (explore()); SIZE_MAX when the run just fed was the models'. */
  size_t explored_from;
  /* Nonzero while the fastest run measured runs once more before a stop
   * (rerun_fastest()); the stop it ends with. */
  int rerun;
  mlsba_stop_reason_t rerun_stop;
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
  free(h->total);
  free(h->comm_fixed);
  free(h->comm_per_block);
  free(h->start);
  free(h->cap);
  if (h->hist)
    for (size_t k = 0; k < h->nhist; k++)
      free((void *)h->hist[k].w); /* one block per record, see record() */
  free(h->hist);
  free(h);
}

/* Step 4 for the proposal in h->next: its arrangement into h->next_rect
 * and *info, within the nodes' capacities; the request is unchanged. */
static int arrange_next(mlsba__inpa_t *h, mlsba__cma_info_t *info) {
  int err = mlsba__cma(h->next, h->q, h->nb, h->next_rect, info);
  if (!err) /* alt: scratch, free once the proposal is laid out */
    mlsba__inpa_rects_within_caps(h->q, h->cap, h->next_rect, h->alt);
  return err;
}

static int propose_cpm(mlsba__inpa_t *h, const double *t, int64_t *w);

/* The head's communication model, NULL when it has none. */
static const mlsba__comm_model_t *comm_of(const mlsba__inpa_t *h) {
  return h->comm.fixed ? &h->comm : NULL;
}

/* Another arrangement for the areas in h->alt: CMA's columns for them,
 * fitted to the models, into h->alt_rect; replaces h->next_rect when the
 * models predict it strictly shorter. */
static int try_alternative(mlsba__inpa_t *h, double *best) {
  double t;
  int err = mlsba__cma(h->alt, h->q, h->nb, h->alt_rect, NULL);
  if (!err)
    err = mlsba__cma_fit_models_comm((const mlsba_model_t *const *)h->models,
                                     comm_of(h), h->q, h->nb, h->alt_rect, &t);
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
  int err =
      mlsba__cma_fit_models_comm((const mlsba_model_t *const *)h->models,
                                 comm_of(h), h->q, h->nb, h->next_rect, &best);
  for (size_t i = 0; !err && i < h->q; i++)
    h->alt[i] = h->next_rect[i].m * h->next_rect[i].n;
  if (!err)
    err = try_alternative(h, &best);
  if (!err)
    err = propose_cpm(h, t, h->alt);
  if (!err)
    err = try_alternative(h, &best);
  if (!err) {
    mlsba__inpa_rects_within_caps(h->q, h->cap, h->next_rect, h->alt);
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

/* Steps 3-4: the homogeneous distribution becomes the request, or with
 * speeds known before any run (opts.start_speed) the distribution in
 * proportion to them. */
static int start_homogeneous(mlsba__inpa_t *h) {
  mlsba__cma_info_t info;
  int err = 0;
  if (h->start && h->o.algo != MLSBA__INPA_HOMOGENEOUS) {
    double sum = 0;
    for (size_t i = 0; i < h->q; i++)
      sum += h->start[i];
    for (size_t i = 0; i < h->q; i++)
      h->speed[i] = (double)h->W * (h->start[i] / sum);
    err = mlsba__shares_at_least_one(h->speed, h->q, h->W, h->next);
    if (!err)
      mlsba__inpa_shares_within_caps(h->q, h->cap, h->speed, h->next);
  } else {
    mlsba__inpa_even_split(h->q, h->W, h->cap, h->next);
  }
  if (!err)
    err = arrange_next(h, &info);
  if (!err)
    take_next(h, &info);
  return err;
}

/* The nodes' capacities, also as their models' max_load (so that GPA
 * keeps within them); refused when together they cannot hold W. */
static int take_caps(mlsba__inpa_t *h, const int64_t *caps) {
  int64_t sum = 0;
  for (size_t i = 0; i < h->q; i++) {
    int64_t c = caps && caps[i] >= 0 && caps[i] < h->W ? caps[i] : h->W;
    if (c < 1)
      return mlsba__fail(MLSBA_ECAPACITY,
                         "inpa: node %zu cannot hold a block of C", i);
    h->cap[i] = c;
    sum += c;
    int err = c < h->W ? mlsba_model_set_max_load(h->models[i], c) : 0;
    if (err)
      return err;
  }
  h->o.caps = NULL; /* the head keeps its copy */
  if (sum < h->W)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "inpa: the nodes hold %lld blocks together, C has "
                       "%lld",
                       (long long)sum, (long long)h->W);
  return 0;
}

/* The nodes' communication per run, copied; none when both are NULL. */
static int take_comm(mlsba__inpa_t *h, const double *fixed,
                     const double *per_block) {
  h->o.comm_fixed = h->o.comm_per_block = NULL; /* the head keeps a copy */
  if (!fixed && !per_block)
    return 0;
  if (!fixed || !per_block)
    return mlsba__fail(MLSBA_EINVAL,
                       "inpa: comm_fixed and comm_per_block go together, "
                       "%s is NULL",
                       !fixed ? "comm_fixed" : "comm_per_block");
  h->comm_fixed = malloc(h->q * sizeof *h->comm_fixed);
  h->comm_per_block = malloc(h->q * sizeof *h->comm_per_block);
  if (!h->comm_fixed || !h->comm_per_block)
    return mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  for (size_t i = 0; i < h->q; i++) {
    if (!(fixed[i] >= 0) || !isfinite(fixed[i]) || !(per_block[i] >= 0) ||
        !isfinite(per_block[i]))
      return mlsba__fail(MLSBA_EINVAL,
                         "inpa: node %zu's communication must be finite and "
                         ">= 0, got %g s per run and %g s per block of "
                         "half-perimeter",
                         i, fixed[i], per_block[i]);
    h->comm_fixed[i] = fixed[i];
    h->comm_per_block[i] = per_block[i];
  }
  h->comm = (mlsba__comm_model_t){h->comm_fixed, h->comm_per_block};
  return 0;
}

/* The speeds known before any run, copied; none when NULL. */
static int take_start(mlsba__inpa_t *h, const double *speed) {
  h->o.start_speed = NULL; /* the head keeps a copy */
  if (!speed)
    return 0;
  h->start = malloc(h->q * sizeof *h->start);
  if (!h->start)
    return mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  for (size_t i = 0; i < h->q; i++) {
    if (!(speed[i] > 0) || !isfinite(speed[i]))
      return mlsba__fail(MLSBA_EINVAL,
                         "inpa: node %zu's start speed must be finite and "
                         "> 0, got %g",
                         i, speed[i]);
    h->start[i] = speed[i];
  }
  return 0;
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
  h->total = malloc(q * sizeof *h->total);
  h->cap = malloc(q * sizeof *h->cap);
  h->hist = calloc(o.max_iter, sizeof *h->hist);
  if (!h->models || !h->w || !h->rect || !h->next || !h->next_rect || !h->alt ||
      !h->alt_rect || !h->speed || !h->total || !h->cap || !h->hist)
    err = mlsba__fail(MLSBA_ENOMEM, "inpa: out of memory");
  if (!err)
    err = take_comm(h, o.comm_fixed, o.comm_per_block);
  for (size_t i = 0; i < q && !err; i++)
    err = mlsba_model_create(&h->models[i]);
  if (!err)
    err = take_caps(h, o.caps);
  if (!err)
    err = take_start(h, o.start_speed);
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
  int err = mlsba__shares_at_least_one(h->speed, h->q, h->W, w);
  if (!err)
    mlsba__inpa_shares_within_caps(h->q, h->cap, h->speed, w);
  return err;
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

/* Before INPA stops at a fixed point or a cycle, when an earlier run
 * measured faster than the last (the models are wrong between their
 * points, or a cycle went round past its best), that run is run once
 * more, max_iter permitting, and the head stops after it with the same
 * reason (balanced if the rerun came within eps): its result is then the
 * fastest distribution measured, the last run as at every stop. Returns whether
 * it asked for the rerun. */
static int rerun_fastest(mlsba__inpa_t *h, mlsba_stop_reason_t stop) {
  size_t best = mlsba__inpa_best_run(h);
  if (best == SIZE_MAX || best + 1 == h->nhist || h->nhist >= h->o.max_iter ||
      !(makespan_of(&h->hist[best], h->q) <
        makespan_of(&h->hist[h->nhist - 1], h->q)))
    return 0;
  const mlsba__inpa_record_t *r = &h->hist[best];
  memcpy(h->w, r->w, h->q * sizeof *h->w);
  memcpy(h->rect, r->rect, h->q * sizeof *h->rect);
  size_t columns = 0;
  for (size_t i = 0; i < h->q; i++)
    columns = r->rect[i].column + 1 > columns ? r->rect[i].column + 1 : columns;
  h->info.columns = columns;
  mlsba__cma_measure(h->w, h->q, h->rect, &h->info);
  h->rerun = 1;
  h->rerun_stop = stop;
  h->phase = MLSBA__INPA_RUN;
  return 1;
}

/* After a run that neither balanced nor was the last: take the
 * proposal, or stop where it repeats a run. INPA explores first (see
 * explore()); when the models, having seen the exploration, choose again
 * the run they had stopped at, it is run once more and the loop goes on
 * from it (its next proposal, the same, explores what it explored before
 * and stops there at a fixed point). */
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
  /* Back to where they had stopped: it runs again, so that the result is
   * the last run as at every stop (the MPI product starts from the node
   * balancing of the last run), and the next proposal ends it. */
  if (h->o.algo == MLSBA__INPA_FPM && from != SIZE_MAX && which == from) {
    take_next(h, info);
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
    if (!rerun_fastest(h, stop))
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

/* Steps 5-8 after a run. t: what the nodes measured (compute); the head
 * judges the run by t plus each node's modelled communication. */
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
    h->total[i] = t[i];
    if (h->comm.fixed)
      h->total[i] +=
          h->comm.fixed[i] +
          h->comm.per_block[i] * (double)(h->rect[i].m + h->rect[i].n);
  }
  t = h->total;
  if (h->rerun) { /* the fastest run again: the stop it was rerun for, or
                     balanced when it came within eps this time (real
                     devices' times move from run to run) */
    int err = record(h, t);
    if (!err)
      finish(h,
             imbalance(t, q) <= h->o.eps ? MLSBA_STOP_BALANCED : h->rerun_stop);
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
              ? mlsba__gpa_nodes_comm((const mlsba_model_t *const *)h->models,
                                      comm_of(h), q, h->W, h->next, NULL)
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
