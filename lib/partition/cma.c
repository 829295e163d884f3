/* CMA: column-based arrangement of node areas minimising the sum of
 * half-perimeters (Beaumont, Boudet, Rastello & Robert 2001), real-valued
 * by dynamic programming, then rounded to whole blocks. See cma.h. */
#include "cma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "grouped.h"

/* ---- integer shares with a floor of one ------------------------------- */

int mlsba__shares_at_least_one(const double x[], size_t m, int64_t total,
                               int64_t out[]) {
  double *share = malloc(m * sizeof *share);
  int64_t *cap = malloc(m * sizeof *cap);
  unsigned char *fixed = calloc(m, 1);
  if (!share || !cap || !fixed) {
    free(share);
    free(cap);
    free(fixed);
    return mlsba__fail(MLSBA_ENOMEM, "shares: out of memory");
  }
  /* Water-filling from below: a share under one is fixed at one and the
   * others re-shared; each pass fixes at least one more or ends, and the
   * shares of the free entries only shrink, so m passes suffice. */
  for (;;) {
    double free_sum = 0;
    size_t nfixed = 0, nfree = 0;
    for (size_t i = 0; i < m; i++) {
      if (fixed[i])
        nfixed++;
      else {
        nfree++;
        free_sum += x[i] > 0 ? x[i] : 0;
      }
    }
    double rest = (double)(total - (int64_t)nfixed);
    int more = 0;
    for (size_t i = 0; i < m; i++) {
      if (fixed[i]) {
        share[i] = 1;
        continue;
      }
      double xi = x[i] > 0 ? x[i] : 0;
      share[i] = free_sum > 0 ? rest * (xi / free_sum) : rest / (double)nfree;
      if (share[i] < 1) {
        fixed[i] = 1;
        more = 1;
      }
    }
    if (!more)
      break;
  }
  for (size_t i = 0; i < m; i++)
    cap[i] = total;
  mlsba__round_shares(share, cap, m, total, out);
  free(share);
  free(cap);
  free(fixed);
  return 0;
}

/* ---- real-valued optimum --------------------------------------------- */

/* Areas sorted with their node index, ties by index, so that every rank
 * computing the arrangement gets the same one. */
typedef struct {
  double area;
  size_t i;
} keyed_t;

static int by_area(const void *a, const void *b) {
  const keyed_t *x = a, *y = b;
  if (x->area != y->area)
    return x->area < y->area ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Cost of a column holding sorted nodes j..i-1: k S + 1 on the unit
 * square (width S, heights a / S). prefix[] holds normalised areas. */
static double column_cost(const double *prefix, size_t j, size_t i) {
  return (double)(i - j) * (prefix[i] - prefix[j]) + 1;
}

/* The DP with no limit on the number of columns: f[i] is the best cost of
 * the first i sorted nodes in whole columns of at most kmax nodes. Fills
 * start[i], where the last column of that optimum begins. */
static void dp_free_columns(const double *prefix, size_t q, size_t kmax,
                            double *f, size_t *start) {
  f[0] = 0;
  for (size_t i = 1; i <= q; i++) {
    f[i] = INFINITY;
    for (size_t j = i - 1;; j--) {
      double c = f[j] + column_cost(prefix, j, i);
      if (c < f[i]) {
        f[i] = c;
        start[i] = j;
      }
      if (j == 0 || i - j >= kmax)
        break;
    }
  }
}

/* The DP with at most cmax columns: g[c][i] is the best cost of the first
 * i sorted nodes in exactly c columns. O(cmax q kmax), run only when the
 * free DP used too many columns. Fills start[c * (q + 1) + i]; returns
 * the best number of columns, or 0 on failure to allocate. */
static size_t dp_limited_columns(const double *prefix, size_t q, size_t kmax,
                                 size_t cmax, size_t *start, double *cost) {
  size_t w = q + 1;
  double *g = malloc((cmax + 1) * w * sizeof *g);
  if (!g)
    return 0;
  for (size_t k = 0; k < (cmax + 1) * w; k++)
    g[k] = INFINITY;
  g[0] = 0;
  for (size_t c = 1; c <= cmax; c++) {
    for (size_t i = c; i <= q; i++) {
      for (size_t j = i - 1;; j--) {
        double prev = g[(c - 1) * w + j];
        if (prev < INFINITY) {
          double v = prev + column_cost(prefix, j, i);
          if (v < g[c * w + i]) {
            g[c * w + i] = v;
            start[c * w + i] = j;
          }
        }
        if (j == 0 || i - j >= kmax)
          break;
      }
    }
  }
  size_t best = 0;
  double best_cost = INFINITY;
  for (size_t c = 1; c <= cmax; c++) {
    if (g[c * w + q] < best_cost) {
      best_cost = g[c * w + q];
      best = c;
    }
  }
  free(g);
  *cost = best_cost;
  return best;
}

int mlsba__cma_columns(const double area[], size_t q, size_t max_per_column,
                       size_t max_columns, size_t order[], size_t col_size[],
                       size_t *ncols, double *cost) {
  if (!area || !order || !col_size || !ncols || !cost)
    return mlsba__fail(MLSBA_EINVAL, "cma: an argument is NULL");
  if (q == 0)
    return mlsba__fail(MLSBA_EINVAL, "cma: no nodes (q = 0)");
  if (max_per_column == 0 || max_columns == 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "cma: max_per_column and max_columns must be >= 1");
  double total = 0;
  for (size_t i = 0; i < q; i++) {
    if (!(area[i] > 0) || !isfinite(area[i]))
      return mlsba__fail(MLSBA_EINVAL,
                         "cma: area of node %zu must be finite and > 0, got %g",
                         i, area[i]);
    total += area[i];
  }
  if (!isfinite(total))
    return mlsba__fail(MLSBA_EINVAL, "cma: the areas add up to infinity");
  size_t kmax = max_per_column < q ? max_per_column : q;
  size_t cmax = max_columns < q ? max_columns : q;
  if (kmax * cmax < q) /* kmax, cmax <= q: no overflow for any sane q */
    return mlsba__fail(MLSBA_EINVAL,
                       "cma: %zu nodes do not fit in %zu columns of %zu", q,
                       cmax, kmax);

  double *prefix = malloc((q + 1) * sizeof *prefix);
  double *f = malloc((q + 1) * sizeof *f);
  size_t *start = malloc((q + 1) * sizeof *start);
  if (!prefix || !f || !start) {
    free(prefix);
    free(f);
    free(start);
    return mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
  }
  keyed_t *sorted = malloc(q * sizeof *sorted);
  if (!sorted) {
    free(prefix);
    free(f);
    free(start);
    return mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
  }
  for (size_t i = 0; i < q; i++)
    sorted[i] = (keyed_t){area[i], i};
  qsort(sorted, q, sizeof *sorted, by_area);
  prefix[0] = 0;
  for (size_t i = 0; i < q; i++) {
    order[i] = sorted[i].i;
    prefix[i + 1] = prefix[i] + sorted[i].area / total;
  }
  free(sorted);

  dp_free_columns(prefix, q, kmax, f, start);
  size_t c = 0;
  for (size_t i = q; i > 0; i = start[i])
    c++;
  int err = 0;
  if (c <= cmax) {
    *cost = f[q];
    *ncols = c;
    /* Column sizes from the back pointers, leftmost column first. */
    for (size_t i = q, k = c; i > 0; i = start[i])
      col_size[--k] = i - start[i];
  } else {
    size_t w = q + 1;
    size_t *lstart = malloc((cmax + 1) * w * sizeof *lstart);
    size_t best =
        lstart ? dp_limited_columns(prefix, q, kmax, cmax, lstart, cost) : 0;
    if (best == 0) {
      err = mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
    } else {
      *ncols = best;
      for (size_t i = q, k = best; k > 0; k--) {
        size_t j = lstart[k * w + i];
        col_size[k - 1] = i - j;
        i = j;
      }
    }
    free(lstart);
  }
  free(prefix);
  free(f);
  free(start);
  return err;
}

/* ---- integer arrangement --------------------------------------------- */

int mlsba__cma_check_grid(const char *fn, size_t q, int64_t nb) {
  if (q == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: no nodes (q = 0)", fn);
  if (nb < 1 || nb > MLSBA__CMA_MAX_NB)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: the grid must be 1 to %lld blocks wide (N/b), "
                       "got %lld",
                       fn, (long long)MLSBA__CMA_MAX_NB, (long long)nb);
  if ((uint64_t)q > (uint64_t)(nb * nb))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: %zu nodes but only %lld blocks (N/b = %lld): "
                       "every node needs at least one block",
                       fn, q, (long long)(nb * nb), (long long)nb);
  return 0;
}

static int check_cma_args(const int64_t w[], size_t q, int64_t nb,
                          const mlsba__cma_rect_t rect[]) {
  if (!w || !rect)
    return mlsba__fail(MLSBA_EINVAL, "cma: %s is NULL", !w ? "w" : "rect");
  int err = mlsba__cma_check_grid("cma", q, nb);
  if (err)
    return err;
  int64_t W = nb * nb, sum = 0;
  for (size_t i = 0; i < q; i++) {
    if (w[i] < 1 || w[i] > W)
      return mlsba__fail(MLSBA_EINVAL,
                         "cma: area of node %zu must be 1 to %lld blocks, "
                         "got %lld",
                         i, (long long)W, (long long)w[i]);
    sum += w[i]; /* each <= W <= 2^53: stop before it can overflow */
    if (sum > W)
      break;
  }
  if (sum != W)
    return mlsba__fail(MLSBA_EINVAL,
                       "cma: the areas must add up to (N/b)^2 = %lld blocks, "
                       "got %s%lld",
                       (long long)W, sum > W ? "more than " : "",
                       (long long)(sum > W ? W : sum));
  return 0;
}

/* Rounds the column widths and the heights within each column and lays
 * the rectangles out left to right, top to bottom. */
static int lay_out(const int64_t w[], size_t q, int64_t nb, const size_t *order,
                   const size_t *col_size, size_t ncols,
                   mlsba__cma_rect_t rect[]) {
  double *x = calloc(q, sizeof *x);
  int64_t *width = malloc(ncols * sizeof *width);
  int64_t *height = malloc(q * sizeof *height);
  int err = 0;
  if (!x || !width || !height) {
    err = mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
    goto done;
  }
  /* A column holding S blocks of area is S / nb blocks wide. */
  for (size_t c = 0, k = 0; c < ncols; c++) {
    int64_t S = 0;
    for (size_t e = 0; e < col_size[c]; e++)
      S += w[order[k++]];
    x[c] = (double)S / (double)nb;
  }
  err = mlsba__shares_at_least_one(x, ncols, nb, width);
  int64_t col = 0;
  for (size_t c = 0, k = 0; c < ncols && !err; c++) {
    int64_t S = 0;
    for (size_t e = 0; e < col_size[c]; e++)
      S += w[order[k + e]];
    /* Heights in proportion to the areas, whatever the rounded width:
     * they must fill the column's nb rows exactly. */
    for (size_t e = 0; e < col_size[c]; e++)
      x[e] = (double)nb * ((double)w[order[k + e]] / (double)S);
    err = mlsba__shares_at_least_one(x, col_size[c], nb, height);
    int64_t row = 0;
    for (size_t e = 0; e < col_size[c] && !err; e++, k++) {
      mlsba__cma_rect_t *r = &rect[order[k]];
      r->m = height[e];
      r->n = width[c];
      r->row = row;
      r->col = col;
      r->column = c;
      row += height[e];
    }
    col += width[c];
  }
done:
  free(x);
  free(width);
  free(height);
  return err;
}

void mlsba__cma_measure(const int64_t w[], size_t q,
                        const mlsba__cma_rect_t rect[],
                        mlsba__cma_info_t *info) {
  info->half_perimeter = 0;
  info->lower_bound = 0;
  info->arranged_lower_bound = 0;
  info->total_area_error = 0;
  info->max_area_error = 0;
  for (size_t i = 0; i < q; i++) {
    int64_t a = rect[i].m * rect[i].n;
    int64_t e = a > w[i] ? a - w[i] : w[i] - a;
    double rel = (double)e / (double)w[i];
    info->half_perimeter += rect[i].m + rect[i].n;
    info->lower_bound += 2 * sqrt((double)w[i]);
    info->arranged_lower_bound += 2 * sqrt((double)a);
    info->total_area_error += e;
    info->max_area_error =
        rel > info->max_area_error ? rel : info->max_area_error;
  }
}

int mlsba__cma(const int64_t w[], size_t q, int64_t nb,
               mlsba__cma_rect_t rect[], mlsba__cma_info_t *info) {
  int err = check_cma_args(w, q, nb, rect);
  if (err)
    return err;
  double *area = malloc(q * sizeof *area);
  size_t *order = malloc(q * sizeof *order);
  size_t *col_size = malloc(q * sizeof *col_size);
  if (!area || !order || !col_size) {
    err = mlsba__fail(MLSBA_ENOMEM, "cma: out of memory");
    goto done;
  }
  for (size_t i = 0; i < q; i++)
    area[i] = (double)w[i];
  size_t ncols = 0;
  double cost = 0;
  /* Each rectangle needs a row of blocks, each column a column of them. */
  err = mlsba__cma_columns(area, q, (size_t)nb, (size_t)nb, order, col_size,
                           &ncols, &cost);
  if (!err)
    err = lay_out(w, q, nb, order, col_size, ncols, rect);
  if (!err && info) {
    memset(info, 0, sizeof *info);
    info->columns = ncols;
    info->real_half_perimeter = cost * (double)nb;
    mlsba__cma_measure(w, q, rect, info);
  }
done:
  free(area);
  free(order);
  free(col_size);
  return err;
}
