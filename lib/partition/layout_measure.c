/* A layout against node models, trailing matrix by trailing matrix: the
 * step's predicted makespan, the models' optimum at that size, and how
 * far the shares per dimension are from the optimum's. See layout.h.
 *
 * The counts are kept from the bottom right up, as the walk draws them:
 * going from t + 1 to t adds block column t to its node column and block
 * row t to each node column's owner of it, so every t costs O(ranks)
 * besides the optimum's bisection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "layout.h"
#include "layout_shares.h"

typedef struct {
  const mlsba__layout_t *L;
  const mlsba__layout_dims_t *d;
  const mlsba_model_t *const *models;
  int lower;
  int64_t *cap;        /* nodes */
  int64_t *width;      /* columns: block columns from t */
  int64_t *rows;       /* ranks: block rows from t in its column */
  int64_t *area;       /* ranks: blocks of the trailing matrix */
  double *node_area;   /* nodes */
  double *optimum;     /* nodes: the optimum's areas */
  double *rank_opt;    /* ranks: a node's optimum shared by its ranks */
  double *f, *g;       /* columns, ranks */
  size_t *rank_column; /* ranks */
  size_t *column_size; /* columns */
} measure_t;

static void measure_free(measure_t *M) {
  free(M->cap);
  free(M->width);
  free(M->rows);
  free(M->area);
  free(M->node_area);
  free(M->optimum);
  free(M->rank_opt);
  free(M->f);
  free(M->g);
  free(M->rank_column);
  free(M->column_size);
}

static int measure_alloc(measure_t *M) {
  size_t R = M->d->ranks, N = M->d->nodes, C = M->d->columns;
  M->cap = malloc(N * sizeof *M->cap);
  M->width = calloc(C, sizeof *M->width);
  M->rows = calloc(R, sizeof *M->rows);
  M->area = calloc(R, sizeof *M->area);
  M->node_area = malloc(N * sizeof *M->node_area);
  M->optimum = malloc(N * sizeof *M->optimum);
  M->rank_opt = malloc(R * sizeof *M->rank_opt);
  M->f = malloc(C * sizeof *M->f);
  M->g = malloc(R * sizeof *M->g);
  M->rank_column = malloc(R * sizeof *M->rank_column);
  M->column_size = malloc(C * sizeof *M->column_size);
  if (!M->cap || !M->width || !M->rows || !M->area || !M->node_area ||
      !M->optimum || !M->rank_opt || !M->f || !M->g || !M->rank_column ||
      !M->column_size)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  for (size_t r = 0; r < R; r++)
    M->rank_column[r] = mlsba__layout_rank_column(M->L, r);
  for (size_t c = 0; c < C; c++)
    mlsba__layout_column_ranks(M->L, c, &M->column_size[c]);
  return 0;
}

/* From t + 1 to t: block column t, then block row t. For the lower
 * triangle, column t adds to each rank of its node column the rows it
 * holds below t, and row t the diagonal block to its owner in t's node
 * column. */
static void add_line(measure_t *M, int64_t t) {
  const mlsba__layout_dims_t *d = M->d;
  if (t < d->bcols) {
    size_t c = mlsba__layout_bcol_column(M->L, t), k;
    M->width[c]++;
    const size_t *ranks = mlsba__layout_column_ranks(M->L, c, &k);
    for (size_t e = 0; M->lower && e < k; e++)
      M->area[ranks[e]] += M->rows[ranks[e]];
  }
  if (t < d->brows) {
    for (size_t c = 0; c < d->columns; c++) {
      size_t r = mlsba__layout_row_owner(M->L, c, t);
      M->rows[r]++;
      if (M->lower && t < d->bcols && mlsba__layout_bcol_column(M->L, t) == c)
        M->area[r]++;
    }
  }
}

/* The predicted makespan of the trailing matrix now counted. */
static double makespan(measure_t *M) {
  const mlsba__layout_dims_t *d = M->d;
  for (size_t i = 0; i < d->nodes; i++)
    M->node_area[i] = 0;
  for (size_t r = 0; r < d->ranks; r++) {
    int64_t a =
        M->lower ? M->area[r] : M->rows[r] * M->width[M->rank_column[r]];
    M->node_area[mlsba__layout_rank_node(M->L, r)] += (double)a;
  }
  double worst = 0;
  for (size_t i = 0; i < d->nodes; i++) {
    double time = mlsba__fpm_time(M->models[i], M->node_area[i]);
    worst = time > worst ? time : worst;
  }
  return worst;
}

/* The measures of the trailing matrix from t into *s. */
static int measure_at(measure_t *M, int64_t t, mlsba__layout_step_t *s) {
  const mlsba__layout_dims_t *d = M->d;
  s->makespan = makespan(M);
  double W = mlsba__layout_trailing_area(d->brows, d->bcols, t, M->lower);
  int err = mlsba__layout_optimum(M->models, M->cap, d->nodes, W, M->optimum,
                                  &s->optimum);
  if (err)
    return err;
  for (size_t r = 0; r < d->ranks; r++) {
    size_t node = mlsba__layout_rank_node(M->L, r);
    M->rank_opt[r] =
        M->optimum[node] / (double)mlsba__layout_node_ranks(M->L, node);
  }
  mlsba__layout_fractions(d->ranks, d->columns, M->rank_column, M->column_size,
                          M->rank_opt, M->f, M->g);
  double C = (double)(d->bcols - t), R = (double)(d->brows - t);
  s->width_dev = 0;
  s->height_dev = 0;
  for (size_t c = 0; c < d->columns; c++) {
    double dev = fabs((double)M->width[c] - M->f[c] * C);
    s->width_dev = dev > s->width_dev ? dev : s->width_dev;
  }
  for (size_t r = 0; r < d->ranks; r++) {
    double dev = fabs((double)M->rows[r] - M->g[r] * R);
    s->height_dev = dev > s->height_dev ? dev : s->height_dev;
  }
  return 0;
}

static int check_models(const mlsba__layout_t *L,
                        const mlsba_model_t *const models[], int lower) {
  if (!L || !models)
    return mlsba__fail(MLSBA_EINVAL, "layout: an argument is NULL");
  const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
  for (size_t i = 0; i < d->nodes; i++) {
    int err = mlsba__fpm_check_usable(models[i], i);
    if (err)
      return err;
  }
  if (lower && d->m != d->n)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: the lower triangle needs a square matrix, "
                       "got %lld x %lld",
                       (long long)d->m, (long long)d->n);
  return 0;
}

int mlsba__layout_measure(const mlsba__layout_t *L,
                          const mlsba_model_t *const models[],
                          const mlsba__layout_opts_t *opts,
                          mlsba__layout_step_t steps[],
                          mlsba__layout_summary_t *summary) {
  mlsba__layout_opts_t o = opts ? *opts : (mlsba__layout_opts_t){0};
  int err = check_models(L, models, o.lower);
  if (err)
    return err;
  measure_t M = {
      .L = L, .d = mlsba__layout_dims(L), .models = models, .lower = o.lower};
  err = measure_alloc(&M);
  if (!err)
    mlsba__layout_caps(models, M.d->nodes, o.caps, M.cap);
  int64_t K = M.d->brows < M.d->bcols ? M.d->brows : M.d->bcols;
  int64_t top = M.d->brows > M.d->bcols ? M.d->brows : M.d->bcols;
  mlsba__layout_summary_t sum = {0};
  for (int64_t t = top - 1; !err && t >= 0; t--) {
    add_line(&M, t);
    if (t >= K)
      continue;
    mlsba__layout_step_t s;
    err = measure_at(&M, t, &s);
    if (err)
      break;
    if (steps)
      steps[t] = s;
    if (t >= 1) {
      sum.step_sum += s.makespan;
      sum.optimum_sum += s.optimum;
    }
    sum.max_width_dev = fmax(sum.max_width_dev, s.width_dev);
    sum.max_height_dev = fmax(sum.max_height_dev, s.height_dev);
  }
  if (!err && summary)
    *summary = sum;
  measure_free(&M);
  return err;
}

int mlsba__layout_step_sum(const mlsba__layout_t *L,
                           const mlsba_model_t *const models[], int lower,
                           double *step_sum) {
  int err = check_models(L, models, lower);
  if (err)
    return err;
  measure_t M = {
      .L = L, .d = mlsba__layout_dims(L), .models = models, .lower = lower};
  err = measure_alloc(&M);
  int64_t K = M.d->brows < M.d->bcols ? M.d->brows : M.d->bcols;
  int64_t top = M.d->brows > M.d->bcols ? M.d->brows : M.d->bcols;
  double sum = 0;
  for (int64_t t = top - 1; !err && t >= 1; t--) {
    add_line(&M, t);
    if (t < K)
      sum += makespan(&M);
  }
  *step_sum = sum;
  measure_free(&M);
  return err;
}
