/* "Tracked CMA": the heterogeneous 2-D block-cyclic layout drawn from the
 * node models (Lastovetsky and Reddy's Reverse algorithm, Parallel
 * Computing 33(12), 2007, taken to two dimensions over the column-based
 * arrangement of Kalinov and Lastovetsky, JPDC 61(4), 2001, and Beaumont
 * et al., IEEE TC 50(10), 2001).
 *
 * 1. The node columns: CMA's real-valued arrangement (cma.h) of the
 *    nodes' optimal areas of the whole matrix says which nodes share a
 *    node column. It stays for every trailing size: nothing moves.
 * 2. For every t < K = min(brows, bcols), the models' optimum of the
 *    trailing matrix from t (its blocks, or its lower triangle's for
 *    Cholesky: mlsba__layout_optimum) gives node column c the fraction
 *    f_c(t) of the trailing width and node i the fraction g_i(t) of its
 *    column's height (mlsba__layout_fractions). Past K (a rectangular
 *    matrix's last block rows or columns, in every step's trailing
 *    matrix and at the top of none) the fractions are the whole matrix's.
 * 3. A walk down (or up) the diagonal gives each block column to a node
 *    column and, in each node column, each block row to a node, keeping
 *    the counts of every trailing matrix within a block of f_c C and
 *    g_i R where the fractions hold still (layout_steer.c). The column
 *    walk and the row walks are independent: a column's deficits involve
 *    only columns, a row's only rows.
 *
 * Three walks, and the one whose step sum the models predict shortest
 * (MLSBA__WALK_BEST, the default):
 *   reverse  from the bottom right up, each trailing matrix steered
 *            towards its own optimum before the larger ones are drawn
 *            (the Reverse algorithm);
 *   forward  from the whole matrix down, each trailing matrix steered
 *            from the larger one before it;
 *   frozen   the reverse walk towards the whole matrix's fractions at
 *            every size (the constant layout, but with the models' shares
 *            of the whole matrix).
 * Why three: where a node's optimal share grows faster than one block a
 * step as the matrix grows (an accelerator's steep ramp), no nested
 * layout follows it. The reverse walk then balances the small trailing
 * matrices and leaves the large ones, which cost the most, behind; the
 * forward walk does the opposite; the frozen one follows neither. On 300
 * random square LU problems of random node models of the papers' shape
 * (q = 2..12, 20..300 blocks a side), the reverse walk's predicted step
 * sum was 8% below the frozen walk's on average but up to 2.2 times it
 * (44 times on rectangular ones); the best of the three is 9% below it
 * on average and never above (the reverse walk chosen 275 times, the
 * forward 11, the frozen 14).
 *
 * Caps (the blocks a node may own: its model's max_load, or a host's
 * memory) are whole-matrix counts: the walks keep every node within its
 * cap (layout_steer.c) or fail naming the block that does not fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cma.h"
#include "fpm.h"
#include "layout.h"
#include "layout_shares.h"
#include "layout_walk.h"

/* What every walk over these models shares. */
typedef struct {
  const mlsba_model_t *const *models;
  size_t q, ncols;
  int64_t m, n, nb, brows, bcols, steps;
  int lower;
  const double *link_s; /* q or NULL: mlsba__layout_opts_t's */
  int64_t *cap;         /* q */
  size_t *node_column;  /* q */
  size_t *column_size;  /* q (ncols used) */
  double *area;         /* q */
  double *f, *g;        /* steps x q each (f: steps x ncols used) */
} setup_t;

static void setup_free(setup_t *s) {
  free(s->cap);
  free(s->node_column);
  free(s->column_size);
  free(s->area);
  free(s->f);
  free(s->g);
}

static int setup_alloc(setup_t *s) {
  size_t q = s->q, st = (size_t)s->steps;
  s->cap = malloc(q * sizeof *s->cap);
  s->node_column = malloc(q * sizeof *s->node_column);
  s->column_size = calloc(q, sizeof *s->column_size);
  s->area = malloc(q * sizeof *s->area);
  s->f =
      st <= SIZE_MAX / q / sizeof *s->f ? malloc(st * q * sizeof *s->f) : NULL;
  s->g = s->f ? malloc(st * q * sizeof *s->g) : NULL;
  if (!s->cap || !s->node_column || !s->column_size || !s->area || !s->f ||
      !s->g)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  return 0;
}

/* The node columns from CMA's arrangement of the whole matrix's optimum,
 * at most per_column nodes a column. */
static int arrange(setup_t *s, size_t per_column) {
  double W = mlsba__layout_trailing_area(s->brows, s->bcols, 0, s->lower), T;
  int err = mlsba__layout_optimum(s->models, s->cap, s->q, W, s->area, &T);
  if (err)
    return err;
  size_t *order = malloc(s->q * sizeof *order);
  if (!order)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  /* CMA needs every area positive: a node the optimum leaves nothing
   * (a cap of zero) stands in a column with a token area, and its target
   * of nothing leaves it nothing. */
  for (size_t i = 0; i < s->q; i++)
    s->f[i] = s->area[i] > W * 1e-12 ? s->area[i] : W * 1e-12;
  double cost;
  err = mlsba__cma_columns(s->f, s->q, per_column, (size_t)s->bcols, order,
                           s->column_size, &s->ncols, &cost);
  for (size_t c = 0, k = 0; !err && c < s->ncols; c++)
    for (size_t e = 0; e < s->column_size[c]; e++)
      s->node_column[order[k++]] = c;
  free(order);
  return err;
}

/* The width fractions f (ncols) of the trailing matrix of C block
 * columns whose update the optimum gives T seconds, with each node
 * column's link cost a block of width counted (layout.h, link_s). */
static void count_links(const setup_t *s, double C, double T, double *f) {
  double total = 0;
  for (size_t c = 0; c < s->ncols; c++) {
    double k = 0, in = 0;
    for (size_t i = 0; i < s->q; i++)
      if (s->node_column[i] == c) {
        k += s->link_s[i];
        in++;
      }
    k = in > 0 ? k / in : 0;
    f[c] = T > 0 ? f[c] / (1 + f[c] * C * k / T) : f[c];
    total += f[c];
  }
  for (size_t c = 0; total > 0 && c < s->ncols; c++)
    f[c] /= total;
}

/* The optimum's fractions at every t. */
static int fractions(setup_t *s) {
  int64_t K = s->brows < s->bcols ? s->brows : s->bcols;
  for (int64_t t = 0; t < s->steps; t++) {
    double *f = s->f + (size_t)t * s->ncols, *g = s->g + (size_t)t * s->q;
    if (t >= K) {
      memcpy(f, s->f, s->ncols * sizeof *f);
      memcpy(g, s->g, s->q * sizeof *g);
      continue;
    }
    double W = mlsba__layout_trailing_area(s->brows, s->bcols, t, s->lower);
    double T;
    int err = mlsba__layout_optimum(s->models, s->cap, s->q, W, s->area, &T);
    if (err)
      return err;
    mlsba__layout_fractions(s->q, s->ncols, s->node_column, s->column_size,
                            s->area, f, g);
    if (s->link_s && !s->lower)
      count_links(s, (double)(s->bcols - t), T, f);
  }
  return 0;
}

/* ---- one walk -------------------------------------------------------- */

static void walk_free(mlsba__walk_t *w) {
  free(w->bcol_column);
  free(w->row_owner);
  free(w->count);
  free(w->used);
  free(w->width);
  free(w->tri);
  free(w->load);
  free(w->scratch);
  free(w->scratch_cap);
}

static int walk_alloc(const setup_t *s, mlsba__walk_t *w) {
  size_t q = s->q;
  *w = (mlsba__walk_t){.q = q,
                       .ncols = s->ncols,
                       .brows = s->brows,
                       .bcols = s->bcols,
                       .steps = s->steps,
                       .lower = s->lower,
                       .cap = s->cap,
                       .node_column = s->node_column,
                       .f = s->f,
                       .g = s->g};
  w->bcol_column = malloc((size_t)s->bcols * sizeof *w->bcol_column);
  w->row_owner = malloc(s->ncols * (size_t)s->brows * sizeof *w->row_owner);
  w->count = malloc(q * sizeof *w->count);
  w->used = malloc(q * sizeof *w->used);
  w->width = malloc(q * sizeof *w->width);
  w->tri = malloc(q * sizeof *w->tri);
  w->load = malloc(q * sizeof *w->load);
  w->scratch = malloc(q * sizeof *w->scratch);
  w->scratch_cap = malloc(q * sizeof *w->scratch_cap);
  if (!w->bcol_column || !w->row_owner || !w->count || !w->used || !w->width ||
      !w->tri || !w->load || !w->scratch || !w->scratch_cap)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  return 0;
}

static const mlsba__layout_kind_t kind_of[] = {
    [MLSBA__WALK_REVERSE] = MLSBA__LAYOUT_FPM_REVERSE,
    [MLSBA__WALK_FORWARD] = MLSBA__LAYOUT_FPM_FORWARD,
    [MLSBA__WALK_FROZEN] = MLSBA__LAYOUT_FPM_FROZEN,
};

/* One walk of the given kind, made into a layout. */
static int run_walk(const setup_t *s, mlsba__walk_t *w,
                    mlsba__layout_walk_t how, mlsba__layout_t **out) {
  for (size_t i = 0; i < s->q; i++) {
    w->count[i] = w->used[i] = w->width[i] = w->tri[i] = 0;
    w->load[i] = 0;
  }
  w->frozen = how == MLSBA__WALK_FROZEN;
  int forward = how == MLSBA__WALK_FORWARD;
  int err =
      forward ? mlsba__walk_forward_columns(w) : mlsba__walk_reverse_columns(w);
  for (size_t c = 0; !err && c < s->ncols; c++)
    err = forward ? mlsba__walk_forward_rows(w, c)
                  : mlsba__walk_reverse_rows(w, c);
  if (err)
    return err;
  mlsba__layout_spec_t spec = {.m = s->m,
                               .n = s->n,
                               .nb = s->nb,
                               .ranks = s->q,
                               .nodes = s->q,
                               .columns = s->ncols,
                               .rank_column = s->node_column,
                               .bcol_column = w->bcol_column,
                               .row_owner = w->row_owner};
  err = mlsba__layout_create(&spec, out);
  if (!err)
    mlsba__layout_set_kind(*out, kind_of[how]);
  return err;
}

/* The walks asked for; for BEST the one of least predicted step sum
 * (the first of equals; a walk the caps stop is skipped unless all are).
 * With sum, its step sum there (computed for a single walk too). */
static int best_walk(const setup_t *s, mlsba__layout_walk_t how,
                     mlsba__layout_t **out, double *sum_out) {
  mlsba__walk_t w;
  int err = walk_alloc(s, &w), first_err = 0;
  mlsba__layout_walk_t lo = how == MLSBA__WALK_BEST ? MLSBA__WALK_REVERSE : how;
  mlsba__layout_walk_t hi = how == MLSBA__WALK_BEST ? MLSBA__WALK_FROZEN : how;
  double best = INFINITY;
  for (mlsba__layout_walk_t k = lo; !err && k <= hi; k++) {
    mlsba__layout_t *L = NULL;
    double sum = 0;
    int e = run_walk(s, &w, k, &L);
    if (!e && (lo < hi || sum_out))
      e = mlsba__layout_step_sum(L, s->models, s->lower, &sum);
    if (e == MLSBA_ECAPACITY) {
      first_err = first_err ? first_err : e;
      continue;
    }
    err = e;
    if (!err && (*out == NULL || sum < best)) {
      best = sum;
      mlsba__layout_destroy(*out);
      *out = L;
      L = NULL;
    }
    mlsba__layout_destroy(L);
  }
  walk_free(&w);
  if (!err && !*out)
    err = first_err;
  if (!err && sum_out)
    *sum_out = best;
  if (err) {
    mlsba__layout_destroy(*out);
    *out = NULL;
  }
  return err;
}

/* ---- the layouts ----------------------------------------------------- */

static int check_args(const mlsba_model_t *const models[], size_t q, int64_t m,
                      int64_t n, int64_t nb, const mlsba__layout_opts_t *o,
                      mlsba__layout_t **out) {
  if (!out || !models)
    return mlsba__fail(MLSBA_EINVAL, "layout: %s is NULL",
                       out ? "models" : "out");
  *out = NULL;
  if (q == 0)
    return mlsba__fail(MLSBA_EINVAL, "layout: no nodes (q = 0)");
  for (size_t i = 0; i < q; i++) {
    int err = mlsba__fpm_check_usable(models[i], i);
    if (err)
      return err;
  }
  int err = mlsba__layout_check_size(m, n, nb);
  if (err)
    return err;
  int64_t br = (m - 1) / nb + 1, bc = (n - 1) / nb + 1;
  if (o->lower && m != n)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: the lower triangle needs a square matrix, "
                       "got %lld x %lld",
                       (long long)m, (long long)n);
  for (size_t i = 0; o->link_s && i < q; i++)
    if (!(o->link_s[i] >= 0 && isfinite(o->link_s[i])))
      return mlsba__fail(MLSBA_EINVAL,
                         "layout: node %zu's link cost %g s a block "
                         "column is not a finite time >= 0",
                         i, o->link_s[i]);
  if (!(o->alike >= 0 && isfinite(o->alike)))
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: alike %g is not a finite relative "
                       "difference >= 0",
                       o->alike);
  if (!(o->kin_alike >= 0 && isfinite(o->kin_alike)))
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: kin_alike %g is not a finite relative "
                       "difference >= 0",
                       o->kin_alike);
  if ((unsigned)o->walk > MLSBA__WALK_FROZEN)
    return mlsba__fail(MLSBA_EINVAL, "layout: unknown walk %d", (int)o->walk);
  if ((double)q > (double)br * (double)bc)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: %zu nodes but only %lld blocks (%lld x "
                       "%lld): every node column needs a block",
                       q, (long long)(br * bc), (long long)br, (long long)bc);
  return 0;
}

/* Whether the arrangement in s stands a node that shares its cores
 * (apart) in a node column with another node. */
static int stacks_sharing(const setup_t *s, const size_t *apart) {
  for (size_t i = 0; apart && i < s->q; i++)
    for (size_t j = 0; apart[i] != 0 && j < s->q; j++)
      if (j != i && s->node_column[i] == s->node_column[j])
        return 1;
  return 0;
}

/* The walks of opts over these models on CMA's arrangement with at most
 * per_column nodes a column; its predicted step sum in *sum (when not
 * NULL). *skipped: the arrangement stacks nodes that share cores and was
 * not walked (only when apart is given and per_column > 1). */
static int tracked_at(const mlsba_model_t *const models[], size_t q, int64_t m,
                      int64_t n, int64_t nb, const mlsba__layout_opts_t *o,
                      size_t per_column, mlsba__layout_t **out, double *sum,
                      int *skipped) {
  setup_t s = {.models = models, .q = q, .m = m, .n = n, .nb = nb};
  s.brows = (m - 1) / nb + 1;
  s.bcols = (n - 1) / nb + 1;
  s.steps = s.brows > s.bcols ? s.brows : s.bcols;
  s.lower = o->lower;
  s.link_s = o->link_s;
  *skipped = 0;
  int err = setup_alloc(&s);
  if (!err) {
    mlsba__layout_caps(models, q, o->caps, s.cap);
    err = arrange(&s, per_column);
  }
  if (!err && per_column > 1 && stacks_sharing(&s, o->apart))
    *skipped = 1;
  else if (!err)
    err = fractions(&s);
  if (!err && !*skipped)
    err = best_walk(&s, o->walk, out, sum);
  setup_free(&s);
  return err;
}

/* The walks of opts over these models: on CMA's arrangement; with apart,
 * the least predicted step sum over the arrangements of at most k nodes
 * a column that stand every node sharing its cores alone (layout.h).
 * Measured on this machine (3 ranks, ranks 1 and 2 pinned to one core;
 * LU, N = 4096, busy): CMA stood ranks 1 and 2 in one column, 8.2 s
 * against 4.1 s with every rank alone; an arrangement that stood rank 0
 * with rank 1 took 33 s, its panels 24 s: every pivot's collective
 * waited for core 1 to turn from rank 2's update to rank 1. The models,
 * which time each node's compute alone, predict all three alike. */
static int tracked(const mlsba_model_t *const models[], size_t q, int64_t m,
                   int64_t n, int64_t nb, const mlsba__layout_opts_t *o,
                   mlsba__layout_t **out) {
  int64_t brows = (m - 1) / nb + 1;
  int skipped = 0;
  if (o->apart == NULL)
    return tracked_at(models, q, m, n, nb, o, (size_t)brows, out, NULL,
                      &skipped);
  double best = INFINITY;
  int err = 0;
  size_t most = q < (size_t)brows ? q : (size_t)brows;
  /* From CMA's own (no limit) down: the first of equal sums wins. */
  for (size_t k = most; !err && k >= 1; k--) {
    mlsba__layout_t *L = NULL;
    double sum = INFINITY;
    err = tracked_at(models, q, m, n, nb, o, k == most ? (size_t)brows : k, &L,
                     &sum, &skipped);
    /* Caps that one arrangement cannot keep may fit another. */
    if (err == MLSBA_ECAPACITY && (k > 1 || *out))
      err = 0;
    if (!err && L && (*out == NULL || sum < best)) {
      best = sum;
      mlsba__layout_destroy(*out);
      *out = L;
      L = NULL;
    }
    mlsba__layout_destroy(L);
  }
  if (err) {
    mlsba__layout_destroy(*out);
    *out = NULL;
  }
  return err;
}

/* The models the layouts walk with: use[q], each node's own model or,
 * where o->alike or o->kin groups it with others, its group's (held in
 * pooled[q]). */
typedef struct {
  mlsba_model_t **pooled;
  const mlsba_model_t **use;
} pooled_t;

/* P made for models[q]; pool_close() frees it, whatever this returns
 * (and a P zeroed and never made). */
static int pool_open(const mlsba_model_t *const models[], size_t q, int64_t m,
                     int64_t n, int64_t nb, const mlsba__layout_opts_t *o,
                     pooled_t *P) {
  P->pooled = calloc(q, sizeof *P->pooled);
  P->use = malloc(q * sizeof *P->use);
  if (P->pooled == NULL || P->use == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  int err = 0;
  if ((o->alike > 0 || o->kin) && q > 1) {
    int64_t *cap = malloc(q * sizeof *cap);
    if (cap == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
    mlsba__layout_caps(models, q, o->caps, cap);
    double W = mlsba__layout_trailing_area((m - 1) / nb + 1, (n - 1) / nb + 1,
                                           0, o->lower);
    err = mlsba__layout_pool_alike(models, cap, q, W, o->alike, o->kin,
                                   o->kin_alike, P->pooled);
    free(cap);
  }
  for (size_t i = 0; i < q; i++)
    P->use[i] = P->pooled[i] ? P->pooled[i] : models[i];
  return err;
}

static void pool_close(pooled_t *P, size_t q) {
  for (size_t i = 0; P->pooled && i < q; i++)
    mlsba_model_destroy(P->pooled[i]);
  free(P->pooled);
  free(P->use);
}

int mlsba__layout_fpm(const mlsba_model_t *const models[], size_t q, int64_t m,
                      int64_t n, int64_t nb, const mlsba__layout_opts_t *opts,
                      mlsba__layout_t **out) {
  mlsba__layout_opts_t o = opts ? *opts : (mlsba__layout_opts_t){0};
  int err = check_args(models, q, m, n, nb, &o, out);
  if (err)
    return err;
  pooled_t P = {0};
  err = pool_open(models, q, m, n, nb, &o, &P);
  if (!err)
    err = tracked((const mlsba_model_t *const *)P.use, q, m, n, nb, &o, out);
  pool_close(&P, q);
  return err;
}

/* Each node's constant: the speed its model gives at its optimal share of
 * the whole matrix, transfer included (area over time). */
static int flatten(const mlsba_model_t *const models[], size_t q, int64_t m,
                   int64_t n, int64_t nb, const mlsba__layout_opts_t *o,
                   mlsba_model_t **flat) {
  int64_t *cap = malloc(q * sizeof *cap);
  double *area = malloc(q * sizeof *area);
  int err =
      cap && area ? 0 : mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  if (!err) {
    mlsba__layout_caps(models, q, o->caps, cap);
    double W = mlsba__layout_trailing_area((m - 1) / nb + 1, (n - 1) / nb + 1,
                                           0, o->lower);
    double T;
    err = mlsba__layout_optimum(models, cap, q, W, area, &T);
  }
  for (size_t i = 0; !err && i < q; i++) {
    double a = area[i] > 0 ? area[i] : 1;
    double s = a / mlsba__fpm_time(models[i], a);
    err = mlsba_model_create(&flat[i]);
    if (!err)
      err = mlsba__fpm_set_point(flat[i], 1, s > 0 && isfinite(s) ? s : 1e-30);
    if (!err)
      err = mlsba_model_set_max_load(flat[i], mlsba_model_max_load(models[i]));
  }
  free(cap);
  free(area);
  return err;
}

int mlsba__layout_constant(const mlsba_model_t *const models[], size_t q,
                           int64_t m, int64_t n, int64_t nb,
                           const mlsba__layout_opts_t *opts,
                           mlsba__layout_t **out) {
  mlsba__layout_opts_t o = opts ? *opts : (mlsba__layout_opts_t){0};
  int err = check_args(models, q, m, n, nb, &o, out);
  if (err)
    return err;
  mlsba_model_t **flat = calloc(q, sizeof *flat);
  pooled_t P = {0};
  err = flat ? pool_open(models, q, m, n, nb, &o, &P)
             : mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  if (!err)
    err = flatten((const mlsba_model_t *const *)P.use, q, m, n, nb, &o, flat);
  pool_close(&P, q);
  /* Constant fractions: the three walks draw alike; the reverse one is
   * Kalinov and Lastovetsky's periodic layout. */
  o.walk = MLSBA__WALK_REVERSE;
  if (!err)
    err = tracked((const mlsba_model_t *const *)flat, q, m, n, nb, &o, out);
  if (!err)
    mlsba__layout_set_kind(*out, MLSBA__LAYOUT_CONSTANT);
  for (size_t i = 0; flat && i < q; i++)
    mlsba_model_destroy(flat[i]);
  free(flat);
  return err;
}
