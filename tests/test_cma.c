/* CMA: the real-valued column-based optimum against exhaustive search over
 * every grouping of nodes into columns, the integer arrangement's tiling
 * and totals on many random cases, and the edge cases. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/cma.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXQ 8

/* The brute-force optimum: every set partition of q nodes into columns,
 * enumerated as restricted growth strings (node i joins a column already
 * opened by a node before it, or opens the next one), each column costing
 * k S + 1 on the unit square. Column order and the order inside a column
 * do not change this cost, so the set partitions cover every arrangement.
 * Columns hold at most kmax nodes and there are at most cmax. */
static double brute_force(const double *a, int q, int kmax, int cmax) {
  double total = 0;
  for (int i = 0; i < q; i++)
    total += a[i];
  int col[MAXQ] = {0};
  double best = INFINITY;
  for (;;) {
    double S[MAXQ] = {0};
    int k[MAXQ] = {0}, ncols = 0, ok = 1;
    for (int i = 0; i < q; i++) {
      S[col[i]] += a[i] / total;
      k[col[i]]++;
      ncols = col[i] + 1 > ncols ? col[i] + 1 : ncols;
    }
    double cost = 0;
    for (int c = 0; c < ncols; c++) {
      cost += k[c] * S[c] + 1;
      ok &= k[c] <= kmax;
    }
    if (ok && ncols <= cmax && cost < best)
      best = cost;
    /* Next restricted growth string: col[i] <= 1 + max(col[0..i-1]). */
    int i = q - 1;
    for (; i > 0; i--) {
      int mx = 0;
      for (int j = 0; j < i; j++)
        mx = col[j] > mx ? col[j] : mx;
      if (col[i] <= mx) {
        col[i]++;
        break;
      }
      col[i] = 0;
    }
    if (i == 0)
      return best;
  }
}

/* The cost of the arrangement the DP returned, recomputed from its order
 * and column sizes; also checks that order is a permutation sorted by
 * area. */
static double cost_of(const double *a, int q, const size_t *order,
                      const size_t *col_size, size_t ncols) {
  double total = 0, cost = 0;
  int seen[MAXQ] = {0};
  for (int i = 0; i < q; i++)
    total += a[i];
  size_t k = 0;
  for (size_t c = 0; c < ncols; c++) {
    double S = 0;
    ck_assert_uint_ge(col_size[c], 1);
    for (size_t e = 0; e < col_size[c]; e++, k++) {
      ck_assert_uint_lt(order[k], (size_t)q);
      ck_assert(!seen[order[k]]);
      seen[order[k]] = 1;
      if (k > 0)
        ck_assert(a[order[k - 1]] <= a[order[k]]);
      S += a[order[k]] / total;
    }
    cost += (double)col_size[c] * S + 1;
  }
  ck_assert_uint_eq(k, (size_t)q);
  return cost;
}

static void random_areas(rng_t *r, double *a, int q) {
  int skew = (int)rng_range(r, 0, 2);
  for (int i = 0; i < q; i++) {
    double u = rng_uniform(r) + 1e-3;
    a[i] = skew == 0   ? u
           : skew == 1 ? pow(10, 3 * u)
                       : (double)rng_range(r, 1, 4);
  }
}

START_TEST(dp_matches_exhaustive_search) {
  rng_t r = {0x5eed0000u + (uint64_t)_i};
  double a[MAXQ];
  size_t order[MAXQ], col_size[MAXQ], ncols;
  for (int trial = 0; trial < 400; trial++) {
    int q = (int)rng_range(&r, 1, MAXQ);
    random_areas(&r, a, q);
    /* Unlimited, then limits on the columns and on the nodes per column
     * (a small grid's are both nb), which make the DP count columns. */
    int cmax = trial % 2 ? q : (int)rng_range(&r, 1, q);
    int kmax = trial % 2 ? q : (int)rng_range(&r, (q + cmax - 1) / cmax, q);
    double cost;
    int err = mlsba__cma_columns(a, (size_t)q, (size_t)kmax, (size_t)cmax,
                                 order, col_size, &ncols, &cost);
    ck_assert_msg(err == 0, "%s", mlsba_last_error());
    ck_assert_uint_le(ncols, (size_t)cmax);
    for (size_t c = 0; c < ncols; c++)
      ck_assert_uint_le(col_size[c], (size_t)kmax);
    double best = brute_force(a, q, kmax, cmax);
    ck_assert_msg(fabs(cost - best) <= 1e-12 * best,
                  "q=%d kmax=%d cmax=%d: DP %.15g, exhaustive %.15g", q, kmax,
                  cmax, cost, best);
    ck_assert(fabs(cost_of(a, q, order, col_size, ncols) - cost) <=
              1e-12 * cost);
  }
}
END_TEST

/* Random areas in blocks, each >= 1, summing to nb^2: skewed so that some
 * cases have one huge node and many one-block nodes. */
static void random_blocks(rng_t *r, int64_t nb, size_t q, int64_t *w) {
  int64_t W = nb * nb;
  double x[512], sum = 0;
  for (size_t i = 0; i < q; i++) {
    x[i] = pow(rng_uniform(r), 1 + 4 * rng_uniform(r));
    sum += x[i];
  }
  int64_t left = W - (int64_t)q;
  for (size_t i = 0; i < q; i++) {
    w[i] = 1 + (int64_t)floor((double)(W - (int64_t)q) * x[i] / sum);
    left -= w[i] - 1;
  }
  w[rng_range(r, 0, (int64_t)q - 1)] += left;
}

/* The invariants of every integer arrangement: rectangles at least one
 * block each way, tiling the grid exactly (every block covered once),
 * columns of one width whose heights sum to nb, and the info consistent
 * with the rectangles. Returns the largest |m n - w| minus (m + n + 1). */
static int64_t check_arrangement(const int64_t *w, size_t q, int64_t nb,
                                 const mlsba__cma_rect_t *rect,
                                 const mlsba__cma_info_t *info) {
  unsigned char *cover = calloc((size_t)(nb * nb), 1);
  int64_t *colw = calloc(q, sizeof *colw), *colh = calloc(q, sizeof *colh);
  int64_t *colx = calloc(q, sizeof *colx);
  ck_assert(cover && colw && colh && colx);
  int64_t H = 0, err_sum = 0, excess = INT64_MIN;
  double lb = 0, lb_arranged = 0, max_rel = 0;
  for (size_t i = 0; i < q; i++) {
    const mlsba__cma_rect_t *R = &rect[i];
    ck_assert_int_ge(R->m, 1);
    ck_assert_int_ge(R->n, 1);
    ck_assert_int_ge(R->row, 0);
    ck_assert_int_ge(R->col, 0);
    ck_assert_int_le(R->row + R->m, nb);
    ck_assert_int_le(R->col + R->n, nb);
    ck_assert_uint_lt(R->column, info->columns);
    if (colw[R->column] == 0) {
      colw[R->column] = R->n;
      colx[R->column] = R->col;
    }
    ck_assert_int_eq(colw[R->column], R->n);
    ck_assert_int_eq(colx[R->column], R->col);
    colh[R->column] += R->m;
    /* Check's assertions are costly in fork mode: count, assert once. */
    int64_t twice = 0;
    for (int64_t y = R->row; y < R->row + R->m; y++)
      for (int64_t x = R->col; x < R->col + R->n; x++)
        twice += cover[y * nb + x]++ != 0;
    ck_assert_msg(twice == 0, "node %zu covers %lld blocks already covered", i,
                  (long long)twice);
    int64_t e = llabs(R->m * R->n - w[i]);
    err_sum += e;
    max_rel = fmax(max_rel, (double)e / (double)w[i]);
    excess = e - (R->m + R->n + 1) > excess ? e - (R->m + R->n + 1) : excess;
    H += R->m + R->n;
    lb += 2 * sqrt((double)w[i]);
    lb_arranged += 2 * sqrt((double)(R->m * R->n));
  }
  int64_t width = 0;
  for (size_t c = 0; c < info->columns; c++) {
    ck_assert_int_eq(colh[c], nb);
    /* Columns left to right: each starts where the one before ends. */
    ck_assert_int_eq(colx[c], width);
    width += colw[c];
  }
  ck_assert_int_eq(width, nb);
  int64_t uncovered = 0;
  for (int64_t k = 0; k < nb * nb; k++)
    uncovered += !cover[k];
  ck_assert_int_eq(uncovered, 0);
  ck_assert_int_eq(info->half_perimeter, H);
  ck_assert_int_eq(info->total_area_error, err_sum);
  ck_assert(fabs(info->max_area_error - max_rel) <= 1e-12);
  ck_assert(fabs(info->lower_bound - lb) <= 1e-9 * lb);
  ck_assert(fabs(info->arranged_lower_bound - lb_arranged) <=
            1e-9 * lb_arranged);
  ck_assert(info->arranged_lower_bound <= (double)H * (1 + 1e-12));
  /* The real-valued arrangement has the areas asked: it cannot beat the
   * bound of square rectangles. */
  ck_assert(info->real_half_perimeter >= info->lower_bound * (1 - 1e-12));
  free(cover);
  free(colw);
  free(colh);
  free(colx);
  return excess;
}

START_TEST(random_arrangements_tile_the_grid) {
  rng_t r = {0xc0a0000u + (uint64_t)_i};
  int64_t w[512];
  mlsba__cma_rect_t rect[512];
  mlsba__cma_info_t info;
  for (int trial = 0; trial < 300; trial++) {
    int64_t nb = rng_range(&r, 1, 80);
    int64_t qmax = nb * nb < 60 ? nb * nb : 60;
    size_t q = (size_t)rng_range(&r, 1, qmax);
    random_blocks(&r, nb, q, w);
    int err = mlsba__cma(w, q, nb, rect, &info);
    ck_assert_msg(err == 0, "%s", mlsba_last_error());
    /* Rounding a width and a height by less than a block each moves an
     * area by less than m + n + 1 blocks. (Shares lifted to one block can
     * in principle push the others further; these 1200 cases, many with
     * one-block nodes, never do.) */
    int64_t excess = check_arrangement(w, q, nb, rect, &info);
    ck_assert_msg(excess <= 0,
                  "nb=%lld q=%zu: an area is off by m + n + 1 "
                  "+ %lld blocks",
                  (long long)nb, q, (long long)excess);
  }
}
END_TEST

START_TEST(large_areas_are_within_one_row_and_column) {
  /* Nodes large against a block: every share is far above one, so the
   * rounding bound holds for every node and the relative error is small. */
  rng_t r = {77};
  int64_t w[16];
  mlsba__cma_rect_t rect[16];
  mlsba__cma_info_t info;
  for (int trial = 0; trial < 200; trial++) {
    int64_t nb = rng_range(&r, 200, 400);
    size_t q = (size_t)rng_range(&r, 1, 16);
    double x[16], sum = 0;
    for (size_t i = 0; i < q; i++)
      sum += x[i] = 1 + 3 * rng_uniform(&r);
    int64_t left = nb * nb;
    for (size_t i = 0; i < q; i++)
      left -= w[i] = (int64_t)((double)(nb * nb) * x[i] / sum);
    w[0] += left;
    ck_assert_int_eq(mlsba__cma(w, q, nb, rect, &info), 0);
    ck_assert_int_le(check_arrangement(w, q, nb, rect, &info), 0);
    ck_assert_msg(info.max_area_error < 0.05, "area error %g",
                  info.max_area_error);
    ck_assert(info.half_perimeter <= info.real_half_perimeter + 2 * (double)q);
  }
}
END_TEST

START_TEST(one_node_takes_the_whole_grid) {
  int64_t w[1] = {100};
  mlsba__cma_rect_t rect[1];
  mlsba__cma_info_t info;
  ck_assert_int_eq(mlsba__cma(w, 1, 10, rect, &info), 0);
  ck_assert_int_eq(rect[0].m, 10);
  ck_assert_int_eq(rect[0].n, 10);
  ck_assert_int_eq(rect[0].row, 0);
  ck_assert_int_eq(rect[0].col, 0);
  ck_assert_int_eq(info.half_perimeter, 20);
  ck_assert_int_eq(info.total_area_error, 0);
  ck_assert(fabs(info.lower_bound - 20) < 1e-12);
}
END_TEST

START_TEST(equal_areas_make_a_square_grid) {
  /* k^2 equal nodes on a grid of k r blocks: k columns of k squares of
   * r x r, which meets the lower bound. */
  for (int64_t k = 1; k <= 6; k++) {
    for (int64_t s = 1; s <= 5; s++) {
      int64_t nb = k * s, w[36];
      size_t q = (size_t)(k * k);
      mlsba__cma_rect_t rect[36];
      mlsba__cma_info_t info;
      for (size_t i = 0; i < q; i++)
        w[i] = s * s;
      ck_assert_int_eq(mlsba__cma(w, q, nb, rect, &info), 0);
      check_arrangement(w, q, nb, rect, &info);
      ck_assert_uint_eq(info.columns, (size_t)k);
      for (size_t i = 0; i < q; i++) {
        ck_assert_int_eq(rect[i].m, s);
        ck_assert_int_eq(rect[i].n, s);
      }
      ck_assert_int_eq(info.half_perimeter, 2 * s * (int64_t)q);
      ck_assert(fabs(info.real_half_perimeter - info.lower_bound) <
                1e-9 * info.lower_bound);
    }
  }
}
END_TEST

START_TEST(one_huge_node_and_small_ones) {
  /* 97 blocks of 100 on one node and one block on each of three: the
   * huge node keeps a column nearly to itself, the small ones share. */
  int64_t w[4] = {1, 97, 1, 1};
  mlsba__cma_rect_t rect[4];
  mlsba__cma_info_t info;
  ck_assert_int_eq(mlsba__cma(w, 4, 10, rect, &info), 0);
  check_arrangement(w, 4, 10, rect, &info);
  ck_assert_int_ge(rect[1].m * rect[1].n, 90);
  for (size_t i = 0; i < 4; i++)
    if (i != 1)
      ck_assert_int_le(rect[i].m * rect[i].n, 10);
}
END_TEST

START_TEST(as_many_nodes_as_blocks) {
  /* q = (N/b)^2: every node one block, nb columns of nb. */
  for (int64_t nb = 1; nb <= 12; nb++) {
    size_t q = (size_t)(nb * nb);
    int64_t *w = malloc(q * sizeof *w);
    mlsba__cma_rect_t *rect = malloc(q * sizeof *rect);
    mlsba__cma_info_t info;
    for (size_t i = 0; i < q; i++)
      w[i] = 1;
    ck_assert_int_eq(mlsba__cma(w, q, nb, rect, &info), 0);
    check_arrangement(w, q, nb, rect, &info);
    ck_assert_uint_eq(info.columns, (size_t)nb);
    ck_assert_int_eq(info.half_perimeter, 2 * (int64_t)q);
    ck_assert_int_eq(info.total_area_error, 0);
    free(w);
    free(rect);
  }
}
END_TEST

START_TEST(more_nodes_than_the_grid_allows_per_column) {
  /* 7 nodes on a 3 x 3 grid: the free DP would like a column of more than
   * 3 nodes for the small ones; the limited DP must keep 3 per column. */
  int64_t w[7] = {1, 1, 1, 1, 1, 1, 3};
  mlsba__cma_rect_t rect[7];
  mlsba__cma_info_t info;
  ck_assert_int_eq(mlsba__cma(w, 7, 3, rect, &info), 0);
  check_arrangement(w, 7, 3, rect, &info);
}
END_TEST

START_TEST(bad_arguments_are_rejected) {
  int64_t w[4] = {1, 1, 1, 1};
  mlsba__cma_rect_t rect[5];
  ck_assert_int_eq(mlsba__cma(NULL, 4, 2, rect, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__cma(w, 4, 2, NULL, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__cma(w, 0, 2, rect, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__cma(w, 4, 0, rect, NULL), MLSBA_EINVAL);
  /* Five nodes, four blocks: one would get none. */
  int64_t w5[5] = {1, 1, 1, 1, 0};
  ck_assert_int_eq(mlsba__cma(w5, 5, 2, rect, NULL), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "at least one block"));
  /* Areas that do not add up to (N/b)^2. */
  ck_assert_int_eq(mlsba__cma(w, 3, 2, rect, NULL), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "add up"));
  int64_t w0[4] = {2, 0, 1, 1};
  ck_assert_int_eq(mlsba__cma(w0, 4, 2, rect, NULL), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "node 1"));
  double a[3] = {1, -1, 2};
  size_t order[3], cs[3], nc;
  double cost;
  ck_assert_int_eq(mlsba__cma_columns(a, 3, 3, 3, order, cs, &nc, &cost),
                   MLSBA_EINVAL);
  a[1] = 1;
  ck_assert_int_eq(mlsba__cma_columns(a, 3, 1, 2, order, cs, &nc, &cost),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba__cma_columns(a, 3, 3, 1, order, cs, &nc, &cost), 0);
  ck_assert_uint_eq(nc, 1);
}
END_TEST

START_TEST(shares_sum_exactly_with_a_block_each) {
  rng_t r = {5};
  double x[40];
  int64_t out[40];
  for (int trial = 0; trial < 2000; trial++) {
    size_t m = (size_t)rng_range(&r, 1, 40);
    int64_t total = rng_range(&r, (int64_t)m, 5000);
    double sum = 0;
    for (size_t i = 0; i < m; i++) {
      x[i] = rng_uniform(&r) < 0.2 ? 0 : pow(rng_uniform(&r), 4);
      sum += x[i];
    }
    ck_assert_int_eq(mlsba__shares_at_least_one(x, m, total, out), 0);
    int64_t s = 0;
    for (size_t i = 0; i < m; i++) {
      ck_assert_int_ge(out[i], 1);
      s += out[i];
      /* No entry is further than one from its share once the shares
       * below one are lifted, and none above its proportional share by
       * more than one. */
      if (sum > 0)
        ck_assert(out[i] <= (double)total * x[i] / sum + 1 + 1e-9 ||
                  out[i] == 1);
    }
    ck_assert_int_eq(s, total);
  }
}
END_TEST

/* ---- the arrangement fitted to node models -------------------------- */

/* The least max_i t_i(m_i n_i) over every choice of column widths and
 * heights with the columns and their nodes of rect (brute force). */
typedef struct {
  mlsba_model_t *const *m;
  const mlsba__cma_rect_t *rect;
  size_t q, ncols;
  int64_t nb, width[8];
  const mlsba__comm_model_t *comm; /* NULL: compute alone */
} brute_t;

static double time_at(mlsba_model_t *m, int64_t a) {
  double t;
  ck_assert_int_eq(mlsba_model_time(m, (double)a, &t), 0);
  return t;
}

/* Node i's time for h rows of width w, its communication included. */
static double brute_time(const brute_t *B, size_t i, int64_t h, int64_t w) {
  double t = time_at(B->m[i], h * w);
  if (B->comm)
    t += B->comm->fixed[i] + B->comm->per_block[i] * (double)(h + w);
  return t;
}

/* Column c's least makespan at width w: every split of nb rows among its
 * nodes, each at least one. */
static double best_heights(const brute_t *B, size_t c, int64_t w) {
  size_t nodes[8], k = 0;
  for (size_t i = 0; i < B->q; i++)
    if (B->rect[i].column == c)
      nodes[k++] = i;
  int64_t h[8];
  double best = INFINITY;
  for (size_t e = 0; e < k; e++)
    h[e] = 1;
  h[k - 1] = B->nb - (int64_t)k + 1;
  for (;;) { /* compositions of nb into k parts >= 1, last part implied */
    if (h[k - 1] >= 1) {
      double t = 0;
      for (size_t e = 0; e < k; e++)
        t = fmax(t, brute_time(B, nodes[e], h[e], w));
      best = fmin(best, t);
    }
    size_t e = k - 1;
    while (e-- > 0) {
      h[e]++;
      int64_t rest = B->nb;
      for (size_t f = 0; f < k - 1; f++)
        rest -= h[f];
      if (rest >= 1) {
        h[k - 1] = rest;
        break;
      }
      h[e] = 1;
    }
    if (e == (size_t)-1)
      return best;
  }
}

static double brute_widths(brute_t *B, size_t c, int64_t left) {
  if (c == B->ncols - 1) {
    B->width[c] = left;
    double t = 0;
    for (size_t d = 0; d < B->ncols; d++)
      t = fmax(t, best_heights(B, d, B->width[d]));
    return t;
  }
  double best = INFINITY;
  for (int64_t w = 1; w <= left - (int64_t)(B->ncols - 1 - c); w++) {
    B->width[c] = w;
    best = fmin(best, brute_widths(B, c + 1, left - w));
  }
  return best;
}

START_TEST(the_fit_to_models_is_the_constrained_optimum) {
  rng_t r = {.state = 9100 + (uint64_t)_i};
  int improved = 0;
  for (int trial = 0; trial < 150; trial++) {
    size_t q = (size_t)rng_range(&r, 1, 5);
    int64_t nb = rng_range(&r, 3, 7);
    int64_t w[8];
    mlsba_model_t *m[8];
    mlsba__cma_rect_t rect[8];
    mlsba__cma_info_t info;
    random_blocks(&r, nb, q, w);
    for (size_t i = 0; i < q; i++)
      m[i] = random_paper_model(&r, 6, (double)(nb * nb));
    ck_assert_int_eq(mlsba__cma(w, q, nb, rect, &info), 0);
    double before = 0, after = 0, reported;
    for (size_t i = 0; i < q; i++)
      before = fmax(before, time_at(m[i], rect[i].m * rect[i].n));
    ck_assert_int_eq(mlsba__cma_fit_models((const mlsba_model_t *const *)m, q,
                                           nb, rect, &reported),
                     0);
    mlsba__cma_measure(w, q, rect, &info);
    check_arrangement(w, q, nb, rect, &info);
    for (size_t i = 0; i < q; i++)
      after = fmax(after, time_at(m[i], rect[i].m * rect[i].n));
    ck_assert_double_eq(after, reported);
    ck_assert_double_le(after, before);
    brute_t B = {.m = m, .rect = rect, .q = q, .ncols = info.columns, .nb = nb};
    double best = brute_widths(&B, 0, nb);
    ck_assert_msg(after == best,
                  "trial %d q=%zu nb=%lld: fit %.17g, "
                  "optimum %.17g (CMA %.17g)",
                  trial, q, (long long)nb, after, best, before);
    improved += after < before;
    for (size_t i = 0; i < q; i++)
      mlsba_model_destroy(m[i]);
  }
  ck_assert_int_gt(improved, 10); /* CMA's rounding alone is not it */
}
END_TEST

/* With each node's panels in its time (fixed + per_block (m + n)), the
 * fit is still the optimum of its columns: checked against every width
 * and height, on costs from negligible to dominant. */
START_TEST(the_fit_with_communication_is_the_constrained_optimum) {
  rng_t r = {.state = 9300 + (uint64_t)_i};
  int improved = 0;
  for (int trial = 0; trial < 150; trial++) {
    size_t q = (size_t)rng_range(&r, 1, 5);
    int64_t nb = rng_range(&r, 3, 7);
    int64_t w[8];
    mlsba_model_t *m[8];
    mlsba__cma_rect_t rect[8];
    mlsba__cma_info_t info;
    double fixed[8], per[8];
    random_blocks(&r, nb, q, w);
    for (size_t i = 0; i < q; i++) {
      m[i] = random_paper_model(&r, 6, (double)(nb * nb));
      /* the time of one block, times 0.001 to 10 */
      double one = time_at(m[i], 1);
      per[i] = one * exp(log(1e-3) + log(1e4) * rng_uniform(&r));
      fixed[i] = rng_uniform(&r) < 0.5 ? 0 : one * rng_uniform(&r);
    }
    mlsba__comm_model_t comm = {fixed, per};
    ck_assert_int_eq(mlsba__cma(w, q, nb, rect, &info), 0);
    brute_t B = {.m = m,
                 .rect = rect,
                 .q = q,
                 .ncols = info.columns,
                 .nb = nb,
                 .comm = &comm};
    double before = 0, after = 0, reported;
    for (size_t i = 0; i < q; i++)
      before = fmax(before, brute_time(&B, i, rect[i].m, rect[i].n));
    ck_assert_int_eq(mlsba__cma_fit_models_comm((const mlsba_model_t *const *)m,
                                                &comm, q, nb, rect, &reported),
                     0);
    mlsba__cma_measure(w, q, rect, &info);
    check_arrangement(w, q, nb, rect, &info);
    for (size_t i = 0; i < q; i++) {
      after = fmax(after, brute_time(&B, i, rect[i].m, rect[i].n));
      ck_assert_double_eq(
          mlsba__rect_time(m[i], &comm, i, rect[i].m, rect[i].n),
          brute_time(&B, i, rect[i].m, rect[i].n));
    }
    ck_assert_double_eq(after, reported);
    ck_assert_double_le(after, before);
    double best = brute_widths(&B, 0, nb);
    ck_assert_msg(after == best,
                  "trial %d q=%zu nb=%lld: fit %.17g, "
                  "optimum %.17g (CMA %.17g)",
                  trial, q, (long long)nb, after, best, before);
    improved += after < before;
    for (size_t i = 0; i < q; i++)
      mlsba_model_destroy(m[i]);
  }
  ck_assert_int_gt(improved, 10);
}
END_TEST

static Suite *cma_suite(void) {
  Suite *s = suite_create("cma");
  TCase *tc = tcase_create("cases");
  tcase_add_test(tc, one_node_takes_the_whole_grid);
  tcase_add_test(tc, equal_areas_make_a_square_grid);
  tcase_add_test(tc, one_huge_node_and_small_ones);
  tcase_add_test(tc, as_many_nodes_as_blocks);
  tcase_add_test(tc, more_nodes_than_the_grid_allows_per_column);
  tcase_add_test(tc, bad_arguments_are_rejected);
  tcase_add_test(tc, shares_sum_exactly_with_a_block_each);
  suite_add_tcase(s, tc);
  tc = tcase_create("brute-force");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, dp_matches_exhaustive_search, 0, 4);
  tcase_add_loop_test(tc, random_arrangements_tile_the_grid, 0, 4);
  tcase_add_test(tc, large_areas_are_within_one_row_and_column);
  tcase_add_loop_test(tc, the_fit_to_models_is_the_constrained_optimum, 0, 2);
  tcase_add_loop_test(tc, the_fit_with_communication_is_the_constrained_optimum,
                      0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(cma_suite()); }
