/* The column-based arrangement fitted to the node models: CMA's columns
 * and their nodes kept, the column widths and the heights in each column
 * chosen so that the largest time the models predict, max_i t_i(m_i n_i),
 * is the least that whole blocks allow. See cma.h.
 *
 * Why: CMA lays out the areas GPA asks for, and when some cannot be laid
 * out (a node far slower than the rest asks for less than a column of one
 * block wide can give it: every rectangle is at least one block wide and
 * high, and a column's heights fill all nb rows), its rounding decides
 * the loads, not the models, and the next GPA asks for the same areas: a
 * fixed point far from balance. Here the models decide under the
 * constraint instead.
 *
 * At a time T node i can run x_i(T) blocks (its model's load by time), so
 * at width w it can take floor(x_i / w) rows; a column fits at width w
 * when each of its nodes can take a row and together nb rows, and its
 * widest such w is found by bisection (the rows only fall as w grows). T
 * is feasible when the columns' widest widths add up to nb or more, which
 * holds for every T above the least feasible one: bisection on T again.
 * Each column's heights then come from the least T at which the column
 * fits at its width. O(q log nb) per trial T. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cma.h"
#include "fpm.h"

typedef struct {
  const mlsba_model_t *const *models;
  const mlsba__comm_model_t *comm; /* NULL: compute alone */
  double T;                        /* the trial time of loads_at */
  size_t q, ncols;
  int64_t nb;
  size_t *first;   /* ncols + 1: column c's nodes are members[first[c]..] */
  size_t *members; /* q: nodes column by column, top to bottom */
  double *x;       /* q: blocks each node can run by the trial time */
  int64_t *width;  /* ncols */
  int64_t *height; /* q, indexed like members */
  size_t *fill;    /* q: scratch */
} fit_t;

/* Loads by time T of every node into F->x. */
static void loads_at(fit_t *F, double T) {
  F->T = T;
  for (size_t i = 0; i < F->q; i++) {
    /* Never beyond what the node holds (its model's max_load). */
    double cap = (double)mlsba__fpm_cap(F->models[i], F->nb * F->nb);
    double x = mlsba__fpm_load_by_time(F->models[i], T);
    F->x[i] = x < cap ? x : cap;
  }
}

/* Whether node i can run r rows of width w by the trial time with its
 * communication: the panels of an r x w rectangle cost fixed + per_block
 * (r + w), which leaves the rest of the time to compute r w blocks. */
static int rows_fit(const fit_t *F, size_t i, int64_t w, int64_t r) {
  double left =
      F->T - F->comm->fixed[i] - F->comm->per_block[i] * (double)(r + w);
  if (r == 0)
    return 1;
  if (!(left >= 0))
    return 0;
  double cap = (double)mlsba__fpm_cap(F->models[i], F->nb * F->nb);
  double x = mlsba__fpm_load_by_time(F->models[i], left);
  return (double)r * (double)w <= (x < cap ? x : cap);
}

/* The most rows of width w node i can run by the trial time. Without
 * communication its load by time over w; with it, the largest r that
 * rows_fit (a prefix of 0..nb: more rows leave less time for more
 * blocks), by bisection. */
static double rows_of(const fit_t *F, size_t i, int64_t w) {
  if (!F->comm)
    return floor(F->x[i] / (double)w);
  int64_t lo = 0, hi = F->nb;
  while (lo < hi) {
    int64_t mid = hi - (hi - lo) / 2;
    if (rows_fit(F, i, w, mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return (double)lo;
}

/* Whether column c fits at width w: every node a row, nb rows in all. */
static int column_fits(const fit_t *F, size_t c, int64_t w) {
  double rows = 0;
  for (size_t k = F->first[c]; k < F->first[c + 1]; k++) {
    double r = rows_of(F, F->members[k], w);
    if (r < 1)
      return 0;
    rows += r;
  }
  return rows >= (double)F->nb;
}

/* The widest width at which column c fits, 0 when none does. */
static int64_t widest(const fit_t *F, size_t c) {
  if (!column_fits(F, c, 1))
    return 0;
  int64_t lo = 1, hi = F->nb;
  while (lo < hi) {
    int64_t mid = hi - (hi - lo) / 2;
    if (column_fits(F, c, mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static int feasible(fit_t *F, double T) {
  loads_at(F, T);
  int64_t total = 0;
  for (size_t c = 0; c < F->ncols; c++) {
    int64_t w = widest(F, c);
    if (w == 0)
      return 0;
    total += w;
  }
  return total >= F->nb;
}

/* Takes sum(v) - target away from v[0..m-1] (sum >= target >= m), in
 * proportion to what each has above one, none going below one. */
static void trim_to(int64_t *v, size_t m, int64_t target) {
  int64_t sum = 0, spare = 0;
  for (size_t i = 0; i < m; i++) {
    sum += v[i];
    spare += v[i] - 1;
  }
  int64_t excess = sum - target;
  if (excess <= 0)
    return;
  int64_t left = excess;
  for (size_t i = 0; i < m && spare > 0; i++) {
    int64_t cut =
        (int64_t)((double)excess * (double)(v[i] - 1) / (double)spare);
    cut = cut > v[i] - 1 ? v[i] - 1 : cut > left ? left : cut;
    v[i] -= cut;
    left -= cut;
  }
  for (size_t i = 0; left > 0; i = (i + 1) % m) {
    if (v[i] > 1) {
      v[i]--;
      left--;
    }
  }
}

/* The least T (by bisection on [lo, hi], hi feasible) for which ok(F, T, c)
 * holds; ok must be monotone in T. */
static double least_time(fit_t *F, size_t c, double lo, double hi,
                         int (*ok)(fit_t *, double, size_t)) {
  for (int k = 0; k < 200; k++) {
    double mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi))
      break;
    if (ok(F, mid, c))
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

static int whole_fits(fit_t *F, double T, size_t c) {
  (void)c;
  return feasible(F, T);
}

static int column_fits_at(fit_t *F, double T, size_t c) {
  loads_at(F, T);
  return column_fits(F, c, F->width[c]);
}

/* Column c's heights at its width: the rows its nodes take at the least
 * time it fits, trimmed to nb. */
static void column_heights(fit_t *F, size_t c, double T) {
  double Tc = least_time(F, c, 0, T, column_fits_at);
  loads_at(F, Tc);
  size_t f = F->first[c], k = F->first[c + 1] - f;
  for (size_t e = 0; e < k; e++) {
    double r = rows_of(F, F->members[f + e], F->width[c]);
    F->height[f + e] = r > (double)F->nb ? F->nb : (int64_t)r;
  }
  trim_to(F->height + f, k, F->nb);
}

double mlsba__rect_time(const mlsba_model_t *model,
                        const mlsba__comm_model_t *comm, size_t i, int64_t m,
                        int64_t n) {
  int64_t area = m * n;
  /* An arrangement that gives a node more than it holds cannot run. */
  if (area > mlsba__fpm_cap(model, area))
    return INFINITY;
  double t = mlsba__fpm_time(model, (double)area);
  if (comm)
    t += comm->fixed[i] + comm->per_block[i] * (double)(m + n);
  return t;
}

static double predicted(const fit_t *F, const mlsba__cma_rect_t *rect) {
  double worst = 0;
  for (size_t i = 0; i < F->q; i++) {
    double t = mlsba__rect_time(F->models[i], F->comm, i, rect[i].m, rect[i].n);
    worst = t > worst ? t : worst;
  }
  return worst;
}

/* Columns and their nodes (top to bottom) from an arrangement; fill is
 * scratch of q. */
static void read_columns(fit_t *F, const mlsba__cma_rect_t *rect,
                         size_t *fill) {
  F->ncols = 0;
  for (size_t i = 0; i < F->q; i++)
    F->ncols = rect[i].column + 1 > F->ncols ? rect[i].column + 1 : F->ncols;
  memset(F->first, 0, (F->ncols + 1) * sizeof *F->first);
  for (size_t i = 0; i < F->q; i++)
    F->first[rect[i].column + 1]++;
  for (size_t c = 0; c < F->ncols; c++)
    F->first[c + 1] += F->first[c];
  /* Insertion by row keeps each column top to bottom. */
  memcpy(fill, F->first, F->ncols * sizeof *fill);
  for (size_t i = 0; i < F->q; i++) {
    size_t c = rect[i].column, k = fill[c]++;
    while (k > F->first[c] && rect[F->members[k - 1]].row > rect[i].row) {
      F->members[k] = F->members[k - 1];
      k--;
    }
    F->members[k] = i;
  }
}

static void lay_out(const fit_t *F, mlsba__cma_rect_t *rect) {
  int64_t col = 0;
  for (size_t c = 0; c < F->ncols; c++) {
    int64_t row = 0;
    for (size_t k = F->first[c]; k < F->first[c + 1]; k++) {
      rect[F->members[k]] =
          (mlsba__cma_rect_t){F->height[k], F->width[c], row, col, c};
      row += F->height[k];
    }
    col += F->width[c];
  }
}

static void fit_free(fit_t *F) {
  free(F->first);
  free(F->members);
  free(F->x);
  free(F->width);
  free(F->height);
  free(F->fill);
}

int mlsba__cma_fit_models(const mlsba_model_t *const models[], size_t q,
                          int64_t nb, mlsba__cma_rect_t rect[],
                          double *makespan) {
  return mlsba__cma_fit_models_comm(models, NULL, q, nb, rect, makespan);
}

int mlsba__cma_fit_models_comm(const mlsba_model_t *const models[],
                               const mlsba__comm_model_t *comm, size_t q,
                               int64_t nb, mlsba__cma_rect_t rect[],
                               double *makespan) {
  fit_t F = {.models = models, .comm = comm, .q = q, .nb = nb};
  F.first = malloc((q + 1) * sizeof *F.first);
  F.members = malloc(q * sizeof *F.members);
  F.x = malloc(q * sizeof *F.x);
  F.width = malloc(q * sizeof *F.width);
  F.height = malloc(q * sizeof *F.height);
  F.fill = malloc(q * sizeof *F.fill);
  if (!F.first || !F.members || !F.x || !F.width || !F.height || !F.fill) {
    fit_free(&F);
    return mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
  }
  read_columns(&F, rect, F.fill);
  double T0 = predicted(&F, rect);
  /* Over a node's capacity the arrangement given cannot run: search up to
   * the time every node takes for all it holds instead. */
  if (!isfinite(T0)) {
    T0 = 0;
    for (size_t i = 0; i < q; i++) {
      int64_t c = mlsba__fpm_cap(models[i], nb * nb);
      /* All it holds, in one column of nb rows: the most panel any
       * rectangle within the cap costs. */
      double t =
          mlsba__fpm_time(models[i], (double)c) +
          (comm ? comm->fixed[i] + comm->per_block[i] * 2.0 * (double)nb : 0);
      T0 = t > T0 ? t : T0;
    }
  }
  /* The arrangement given fits at its own makespan on models whose time
   * grows with the load; on others it may not, and then it stays. */
  if (feasible(&F, T0)) {
    double T = least_time(&F, 0, 0, T0, whole_fits);
    loads_at(&F, T);
    for (size_t c = 0; c < F.ncols; c++)
      F.width[c] = widest(&F, c);
    trim_to(F.width, F.ncols, nb);
    for (size_t c = 0; c < F.ncols; c++)
      column_heights(&F, c, T);
    mlsba__cma_rect_t *fitted = malloc(q * sizeof *fitted);
    if (!fitted) {
      fit_free(&F);
      return mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
    }
    lay_out(&F, fitted);
    if (predicted(&F, fitted) < T0)
      memcpy(rect, fitted, q * sizeof *rect);
    free(fitted);
  }
  if (makespan)
    *makespan = predicted(&F, rect);
  fit_free(&F);
  return 0;
}
