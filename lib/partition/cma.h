/* CMA: the communication minimising algorithm of INPA's head (Clarke et
 * al., seed 000 §3), the column-based 2-D arrangement of Beaumont,
 * Boudet, Rastello and Robert (IEEE TPDS 12(10), 2001).
 *
 * The N x N matrix C is an nb x nb grid of b x b blocks (nb = N / b). Node
 * i gets a rectangle of m_i x n_i blocks with m_i n_i close to its area
 * w_i; the rectangles tile the grid in columns: the column widths sum to
 * nb and the heights inside each column sum to nb. For the 2-D blocked
 * product the data a node receives is proportional to its half-perimeter
 * m_i + n_i, so CMA minimises H = sum (m_i + n_i).
 *
 * The real-valued problem on the unit square has an exact solution: sort
 * the areas; some optimal arrangement puts consecutive areas of that order
 * in each column (Beaumont et al., Theorem 2), and a column of k
 * rectangles with total area S is S wide and costs k S + 1 (each rectangle
 * is S + a / S), so a dynamic programme over where each column ends finds
 * it. The integer arrangement rounds the column widths, then the heights
 * in each column, to whole blocks summing exactly to nb, every rectangle
 * at least one block wide and high; its areas then differ from w_i by the
 * rounding, which the info reports.
 *
 * Pure functions: no I/O, no clock, no global state besides the thread's
 * last-error message. */
#ifndef MLSBA_PARTITION_CMA_H
#define MLSBA_PARTITION_CMA_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* One node's rectangle of C, in blocks. */
typedef struct mlsba__cma_rect {
  int64_t m;     /* height: rows of blocks (bm_i = b m_i) */
  int64_t n;     /* width: columns of blocks (bn_i = b n_i) */
  int64_t row;   /* block offset of the rectangle's first row */
  int64_t col;   /* block offset of its first column (its column's) */
  size_t column; /* index of its column, 0 = leftmost */
} mlsba__cma_rect_t;

/* What an arrangement costs, besides the rectangles. */
typedef struct mlsba__cma_info {
  size_t columns;         /* columns of the arrangement */
  int64_t half_perimeter; /* H = sum (m_i + n_i), integer arrangement */
  /* The real-valued column-based optimum scaled to the nb x nb grid
   * (nb times the unit-square cost): what H would be without rounding. */
  double real_half_perimeter;
  /* 2 sum sqrt(w_i): no arrangement of these areas, column-based or not,
   * has a smaller H (a rectangle of area w has half-perimeter at least
   * 2 sqrt(w)). */
  double lower_bound;
  /* 2 sum sqrt(m_i n_i): the same bound for the areas rounding gave,
   * which H never beats (m + n >= 2 sqrt(m n)); lower_bound can exceed H
   * when rounding shrank areas. */
  double arranged_lower_bound;
  /* max_i |m_i n_i - w_i| / w_i and sum_i |m_i n_i - w_i| (blocks): how
   * far rounding to whole blocks moved the areas from the ones asked. */
  double max_area_error;
  int64_t total_area_error;
} mlsba__cma_info_t;

/* The real-valued column-based optimum on the unit square.
 *
 * area: q > 0 finite areas (any scale: they are normalised to sum to 1).
 * max_per_column: the most rectangles one column may hold, and
 * max_columns the most columns (both >= 1; SIZE_MAX for no limit). The
 * integer arrangement passes nb for both, since every rectangle needs a
 * block of height and every column a block of width.
 * Outputs: order[q] the node indices in arrangement order (column by
 * column, top to bottom: the areas in non-decreasing order, ties by
 * index); col_size[q] the number of nodes in each column (first
 * *ncols entries used); *cost the sum of half-perimeters on the unit
 * square. Returns 0; MLSBA_EINVAL for bad arguments or when
 * q > max_per_column * max_columns (no arrangement fits); MLSBA_ENOMEM. */
int mlsba__cma_columns(const double area[], size_t q, size_t max_per_column,
                       size_t max_columns, size_t order[], size_t col_size[],
                       size_t *ncols, double *cost);

/* The widest grid: nb * nb blocks stay below 2^53, exact in a double
 * (94906265^2 < 2^53 < 94906266^2). */
#define MLSBA__CMA_MAX_NB INT64_C(94906265)

/* Check q nodes on an nb x nb grid: q >= 1, nb in 1..MLSBA__CMA_MAX_NB,
 * and a block for every node (q <= nb * nb). fn names the caller in the
 * message. Returns 0 or MLSBA_EINVAL. */
int mlsba__cma_check_grid(const char *fn, size_t q, int64_t nb);

/* The integer column-based arrangement of q nodes on an nb x nb grid.
 *
 * w: q areas in blocks, each >= 1, summing exactly to nb * nb (nb in
 * 1..MLSBA__CMA_MAX_NB). q must be at most nb * nb: with fewer blocks than
 * nodes some node would get no block (MLSBA_EINVAL says so).
 * rect[q] receives each node's rectangle (indexed like w); info may be
 * NULL. Returns 0, MLSBA_EINVAL (the message names the bad argument) or
 * MLSBA_ENOMEM. */
int mlsba__cma(const int64_t w[], size_t q, int64_t nb,
               mlsba__cma_rect_t rect[], mlsba__cma_info_t *info);

/* The arrangement rect[q] (as mlsba__cma made it, on an nb x nb grid)
 * fitted to the node models (time in seconds for an area in blocks):
 * the same columns holding the same nodes in the same order, the column
 * widths and the heights in each column chosen so that the largest
 * predicted time max_i t_i(m_i n_i) is the least whole blocks allow with
 * those columns. Where the areas asked of CMA can be laid out this moves
 * them little; where they cannot (a node slower than a one-block-wide
 * column allows), this is the constrained optimum instead of CMA's
 * rounding. rect is replaced only when the fit predicts a strictly
 * shorter makespan, which goes to *makespan (may be NULL) either way.
 * Returns 0 or MLSBA_ENOMEM. */
int mlsba__cma_fit_models(const mlsba_model_t *const models[], size_t q,
                          int64_t nb, mlsba__cma_rect_t rect[],
                          double *makespan);

/* Each node's communication in one run of the 2-D product, as the head
 * of INPA models it: fixed[i] + per_block[i] (m + n) seconds for an
 * m x n rectangle (the panels of A and B it receives over the nb steps
 * grow with its half-perimeter, not its area). q entries each, finite,
 * >= 0. */
typedef struct mlsba__comm_model {
  const double *fixed;
  const double *per_block;
} mlsba__comm_model_t;

/* Node i's predicted time for an m x n rectangle: the model's time for
 * its area plus its communication (comm NULL: none); INFINITY beyond
 * the model's max_load. */
double mlsba__rect_time(const mlsba_model_t *model,
                        const mlsba__comm_model_t *comm, size_t i, int64_t m,
                        int64_t n);

/* mlsba__cma_fit_models with each node's time its rectangle's
 * (mlsba__rect_time): compute for the area plus communication for the
 * half-perimeter, so that the widths and heights trade one against the
 * other. comm NULL is mlsba__cma_fit_models. The same optimality holds:
 * at a time T node i can run the most rows r of width w with
 * t_i(r w) + fixed_i + per_block_i (r + w) <= T, fewer as w grows, so
 * the bisections on T and on the widths stay exact. */
int mlsba__cma_fit_models_comm(const mlsba_model_t *const models[],
                               const mlsba__comm_model_t *comm, size_t q,
                               int64_t nb, mlsba__cma_rect_t rect[],
                               double *makespan);

/* Fills info's half_perimeter, lower_bound, arranged_lower_bound and the
 * area errors of the arrangement rect[q] for the areas w[q] asked;
 * columns and real_half_perimeter are left as they are. */
void mlsba__cma_measure(const int64_t w[], size_t q,
                        const mlsba__cma_rect_t rect[],
                        mlsba__cma_info_t *info);

/* Integer parts of real shares x[0..m-1] (each >= 0) summing to total,
 * every part at least 1 (total >= m): shares below one block are raised
 * to it and the rest re-shared in proportion (water-filling), then
 * rounded by largest remainder. Used by CMA for widths and heights and by
 * INPA's constant-model baselines for w. Returns 0 or MLSBA_ENOMEM. */
int mlsba__shares_at_least_one(const double x[], size_t m, int64_t total,
                               int64_t out[]);

#endif
