/* LU with partial pivoting: what its steps are and what a core does with
 * them. The panel by LAPACK's unblocked routine (called, not rewritten)
 * inside a recursion whose products run on the cores' kernels; every
 * solve and product through the project's CPU kernels (cpu_blas.h). The
 * table that hands these to the driver is in ops.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return mlsba__factor_at(P, i, j);
}

/* Columns this narrow or narrower are factorized by LAPACK's ?getf2
 * itself; wider ones are split in two, as LAPACK's ?getrf2 does. */
enum { PANEL_LEAF = 16 };

int64_t mlsba__lu_units(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb) {
  return P->n - j - jb; /* the trailing columns */
}

double mlsba__lu_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb) {
  double b = (double)jb; /* solve with L11, product with L21 */
  return b * b + 2 * b * (double)(P->m - j - jb);
}

double mlsba__lu_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb) {
  double b = (double)jb;
  return (double)(P->m - j) * b * b - b * b * b / 3;
}

/* The leaves' ?getf2 (each column's pivot searched on one core), about
 * PANEL_LEAF flops per element of the panel, and the recursion's solves
 * with the top rows, under b^3 / 3: the rest is the recursion's products,
 * which split by rows. */
double mlsba__lu_panel_serial_flops(const mlsba__factor_problem_t *P, int64_t j,
                                    int64_t jb) {
  double b = (double)jb,
         serial = (double)(P->m - j) * b * PANEL_LEAF + b * b * b / 3;
  double all = mlsba__lu_panel_flops(P, j, jb);
  return serial < all ? serial : all;
}

double mlsba__lu_flops(const mlsba__factor_problem_t *P) {
  double m = (double)P->m, n = (double)P->n;
  return m >= n ? m * n * n - n * n * n / 3 : n * m * m - m * m * m / 3;
}

int mlsba__lu_unit_columns(int64_t N, int64_t u, int64_t cols[2]) {
  (void)N;
  cols[0] = u;
  return 1;
}

static void laswp(const mlsba__factor_problem_t *P, int64_t col, int64_t w,
                  int64_t k1, int64_t k2);

/* LAPACK's unblocked LU of rows [c, m) of columns [c, c + w), its pivots
 * made global. */
static void lu_leaf(mlsba__factor_problem_t *P, int64_t c, int64_t w) {
  int *piv = P->ipiv + c;
  int info = mlsba__lapack_getf2(P->prec, (int)(P->m - c), (int)w, at(P, c, c),
                                 (int)P->lda, piv);
  for (int64_t i = 0; i < w; i++)
    piv[i] += (int)c; /* ?getf2 counts from its first row */
  if (info > 0 && P->info == 0)
    P->info = c + info;
}

/* Recursive LU with partial pivoting of rows [c, m) of columns [c, c + w)
 * (Toledo's, LAPACK's ?getrf2): the left half, its swaps and solve on the
 * right half, the right half's product, the right half, its swaps on the
 * left half. ?getf2 alone does a rank-1 update of the whole panel per
 * column (memory bound: 12 GFLOPS here for a 3968 x 128 double panel);
 * the halves' products run on the cores' GEMM kernels, single threaded. */
static void lu_recursive(mlsba__factor_problem_t *P, int64_t c, int64_t w) {
  int64_t rows = P->m - c;
  /* A panel is never wider than it is tall (its width is at most the
   * rows left); the last one of a square matrix is square, and went to
   * ?getf2 whole when this said rows <= w: the last 256 x 256 panel of
   * a single-precision LU took 9.3 ms of 206 at n = 4096 here. */
  if (w <= PANEL_LEAF || rows < w) {
    lu_leaf(P, c, w);
    return;
  }
  int64_t n1 = w / 2 >= PANEL_LEAF ? w / 2 / 8 * 8 : w / 2, n2 = w - n1;
  lu_recursive(P, c, n1);
  laswp(P, c + n1, n2, c + 1, c + n1);
  mlsba__cpu_trsm(P->prec, 'L', 'L', 'N', 'U', n1, n2, 1.0, at(P, c, c), P->lda,
                  at(P, c, c + n1), P->lda, 1);
  mlsba__cpu_gemm(P->prec, 'N', 'N', rows - n1, n2, n1, -1.0, at(P, c + n1, c),
                  P->lda, at(P, c, c + n1), P->lda, 1.0, at(P, c + n1, c + n1),
                  P->lda, 1);
  lu_recursive(P, c + n1, n2);
  laswp(P, c, n1, c + n1 + 1, c + w);
}

/* Where the inverse of panel j's L11 is kept. */
static void *linv_of(const mlsba__factor_problem_t *P, int64_t j) {
  size_t jb =
      (size_t)(P->nb < mlsba__factor_diag(P) ? P->nb : mlsba__factor_diag(P));
  return (char *)P->linv +
         (size_t)(j / P->nb % 2) * jb * jb * mlsba__factor_esize(P);
}

/* ---- a panel's interchanges as moves ----------------------------------
 * ?laswp swaps a column's rows one interchange after the other, each
 * load waiting for the swap before it (they may touch the same row); the
 * panel's jb interchanges compose into at most 2 jb moves, "row dst takes
 * row src", whose loads are independent. */

void mlsba__lu_open(mlsba__factor_problem_t *P) {
  P->moves = NULL;
  P->moves_j[0] = P->moves_j[1] = -1;
  int64_t k = mlsba__factor_diag(P);
  if ((P->nb < k ? P->nb : k) > 0)
    P->moves = malloc(8 * (size_t)P->nb * sizeof *P->moves);
}

void mlsba__lu_close(mlsba__factor_problem_t *P) {
  free(P->moves);
  P->moves = NULL;
}

static int64_t *moves_of(const mlsba__factor_problem_t *P, int64_t j) {
  return P->moves + (size_t)(j / P->nb % 2) * 4 * (size_t)P->nb;
}

/* The index of row r among the n rows touched so far, added if new. */
static int64_t touched(int64_t *rows, int64_t *from, int64_t *n, int64_t r) {
  for (int64_t k = 0; k < *n; k++)
    if (rows[k] == r)
      return k;
  rows[*n] = r;
  from[*n] = r;
  return (*n)++;
}

/* The interchanges of the panel [j, j + jb) as moves, for its update. */
static void compose_moves(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  if (P->moves == NULL)
    return;
  int64_t *dst = moves_of(P, j), *src = dst + 2 * P->nb, n = 0;
  for (int64_t i = j; i < j + jb; i++) {
    int64_t a = touched(dst, src, &n, i);
    int64_t b = touched(dst, src, &n, P->ipiv[i] - 1);
    int64_t keep = src[a];
    src[a] = src[b];
    src[b] = keep;
  }
  int64_t moved = 0;
  for (int64_t k = 0; k < n; k++)
    if (src[k] != dst[k]) {
      dst[moved] = dst[k];
      src[moved++] = src[k];
    }
  P->nmoves[j / P->nb % 2] = moved;
  P->moves_j[j / P->nb % 2] = j;
}

/* How many columns ahead the moves' rows are fetched. Each move touches
 * a cache line of its own far down the column, and a column's few hundred
 * of them wait on memory together; fetched while the columns before are
 * moved, the lines are there when their turn comes. 491 moves of 3840
 * single-precision columns at n = 4096 took 13.5-16.4 ms of one core's
 * time without, 5.1-6.3 ms two to four columns ahead (a test program on
 * this file's loop, thread CPU time, the machine busy). */
enum { FETCH_AHEAD = 2 };

/* The rows column k + FETCH_AHEAD's moves will read and write. */
static void fetch_ahead(const mlsba__factor_problem_t *P, int64_t k,
                        int64_t end, const int64_t *src, int64_t n) {
  if (k + FETCH_AHEAD >= end)
    return;
  const char *x = at(P, 0, k + FETCH_AHEAD);
  size_t e = mlsba__factor_esize(P);
  for (int64_t i = 0; i < n; i++) /* the moves' rows: sources and targets */
    __builtin_prefetch(x + (size_t)src[i] * e, 1, 3);
}

/* Columns [c, c + w) take the panel [j, j + jb)'s interchanges: by its
 * moves where the panel kept them, else as ?laswp would. */
void mlsba__factor_swap_rows(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb, int64_t c, int64_t w) {
  int64_t par = j / P->nb % 2, n = P->nmoves[par];
  void *t = P->moves && P->moves_j[par] == j ? malloc((size_t)n * 8 + 1) : NULL;
  if (t == NULL) {
    laswp(P, c, w, j + 1, j + jb);
    return;
  }
  const int64_t *dst = moves_of(P, j), *src = dst + 2 * P->nb;
  for (int64_t k = c; k < c + w; k++) {
    fetch_ahead(P, k, c + w, src, n);
    if (P->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = at(P, 0, k), *y = t;
      for (int64_t i = 0; i < n; i++)
        y[i] = x[src[i]];
      for (int64_t i = 0; i < n; i++)
        x[dst[i]] = y[i];
    } else {
      float *x = at(P, 0, k), *y = t;
      for (int64_t i = 0; i < n; i++)
        y[i] = x[src[i]];
      for (int64_t i = 0; i < n; i++)
        x[dst[i]] = y[i];
    }
  }
  free(t);
}

int mlsba__lu_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  lu_recursive(P, j, jb);
  compose_moves(P, j, jb);
  if (P->linv) /* for the update: inv(L11) */
    mlsba__factor_invert_triangle(P, j, jb, 'L', 'U', linv_of(P, j));
  mlsba__factor_keep_panel(P, j, jb, 1);
  return 0;
}

/* Rows k1..k2 (1-based) of columns [col, col + w) interchanged with the
 * rows ipiv names, in order, as LAPACK's ?laswp does. A loop of our own:
 * a multithreaded LAPACK's ?laswp (OpenBLAS's) hands every call to its
 * thread pool, whose threads then spin on the cores the other devices
 * compute on. */
static void laswp(const mlsba__factor_problem_t *P, int64_t col, int64_t w,
                  int64_t k1, int64_t k2) {
  for (int64_t c = col; c < col + w; c++) {
    if (P->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = at(P, 0, c);
      for (int64_t i = k1 - 1; i < k2; i++) {
        int64_t r = P->ipiv[i] - 1;
        double t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    } else {
      float *x = at(P, 0, c);
      for (int64_t i = k1 - 1; i < k2; i++) {
        int64_t r = P->ipiv[i] - 1;
        float t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    }
  }
}

/* U12 = L11^-1 A12 for columns [c, c + w), in place, by the product with
 * the inverse the panel left (TRMM): a solve with a jb-wide triangle runs
 * at a third of the GEMM's speed on one core here (16 against 50 GFLOPS,
 * double, jb = 128), and GPU HPL codes solve with the inverse for the
 * same reason. Half of a 3968-row LU update at n = 4096 took 47.5 ms on
 * one core with the product through copies (the full inverse, twice the
 * flops), 42 ms by TRMM. */
static void lu_solve(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                     int64_t c, int64_t w) {
  if (P->linv)
    mlsba__cpu_trmm(P->prec, 'L', 'L', 'N', 'U', jb, w, 1.0, linv_of(P, j), jb,
                    at(P, j, c), P->lda, 1);
  else
    mlsba__cpu_trsm(P->prec, 'L', 'L', 'N', 'U', jb, w, 1.0, at(P, j, j),
                    P->lda, at(P, j, c), P->lda, 1);
}

/* Columns [c, c + w) after the panel [j, j + jb). */
static void lu_columns(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                       int64_t c, int64_t w) {
  mlsba__factor_swap_rows(P, j, jb, c, w);
  lu_solve(P, j, jb, c, w);
  int kept = mlsba__factor_kept(P, j);
  int64_t h = P->m - j - jb,
          ldl = kept ? P->kept_ld : mlsba__factor_padded(P, h);
  void *own = h > 0 && !kept && mlsba__factor_aliases(P)
                  ? mlsba__factor_copy_block(P, j + jb, j, h, jb, ldl)
                  : NULL;
  const void *l21 = kept ? mlsba__factor_kept_copy(P, j) : own;
  if (h > 0)
    mlsba__cpu_gemm(P->prec, 'N', 'N', h, w, jb, -1.0,
                    l21 ? l21 : at(P, j + jb, j), l21 ? ldl : P->lda,
                    at(P, j, c), P->lda, 1.0, at(P, j + jb, c), P->lda, 1);
  free(own);
}

void mlsba__lu_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t u0, int64_t u1) {
  if (u1 > u0)
    lu_columns(P, j, jb, j + jb + u0, u1 - u0);
}

/* The inverses kept are the last panels': a replay of older ones
 * solves. */
void mlsba__lu_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t c0, int64_t c1, int64_t top) {
  (void)top;
  mlsba__factor_problem_t solving = *P;
  solving.linv = NULL;
  mlsba__lu_update(&solving, j, jb, c0 - (j + jb), c1 - (j + jb));
}

/* Rows [r0, r0 + h) of column c fetched into the cache, a line at a
 * time. */
static void fetch_column(const mlsba__factor_problem_t *P, int64_t c,
                         int64_t r0, int64_t h) {
  const char *x = at(P, r0, c);
  size_t bytes = (size_t)h * mlsba__factor_esize(P);
  for (size_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(x + b, 1, 3);
}

/* Rows [r0, m) of columns [col, col + w) rearranged so that row t takes
 * row perm[t - r0]: one gather per column through a scratch column. The
 * gather reads the column in the permutation's order, each line a miss
 * waited for in turn where the column is not in the cache: the next
 * column is fetched, line after line, while this one is gathered (the
 * last interchanges of an LU at n = 2048 took 2.7-3.8 ms of its 0.1 s on
 * two cores before). */
static void permute_rows(const mlsba__factor_problem_t *P, int64_t col,
                         int64_t w, int64_t r0, const int64_t *perm,
                         void *scratch) {
  int64_t h = P->m - r0;
  if (w > 0)
    fetch_column(P, col, r0, h);
  for (int64_t c = col; c < col + w; c++) {
    if (c + 1 < col + w)
      fetch_column(P, c + 1, r0, h);
    if (P->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = at(P, 0, c), *y = scratch;
      for (int64_t t = 0; t < h; t++)
        y[t] = x[perm[t]];
      memcpy(x + r0, y, (size_t)h * sizeof *y);
    } else {
      float *x = at(P, 0, c), *y = scratch;
      for (int64_t t = 0; t < h; t++)
        y[t] = x[perm[t]];
      memcpy(x + r0, y, (size_t)h * sizeof *y);
    }
  }
}

/* The interchanges of rows k1..k2 (1-based, as ?laswp takes them)
 * composed into one permutation of rows [k1 - 1, m). */
static void compose_swaps(const mlsba__factor_problem_t *P, int64_t k1,
                          int64_t k2, int64_t *perm) {
  int64_t r0 = k1 - 1;
  for (int64_t t = r0; t < P->m; t++)
    perm[t - r0] = t;
  for (int64_t i = r0; i < k2; i++) {
    int64_t r = P->ipiv[i] - 1, keep = perm[i - r0];
    perm[i - r0] = perm[r - r0];
    perm[r - r0] = keep;
  }
}

int64_t mlsba__lu_swap_left_rows(const mlsba__factor_problem_t *P, int64_t c) {
  int64_t kmax = mlsba__factor_diag(P), j = c / P->nb * P->nb;
  int64_t jb = kmax - j < P->nb ? kmax - j : P->nb;
  return j + jb >= kmax ? 0 : P->m - (j + jb);
}

/* Each panel's columns take the interchanges of every later panel. Those
 * composed into one permutation per panel and applied by gathers: swap by
 * swap (?laswp) it took 17 ms of a 0.57 s LU at n = 4096 here, 13 ms so. */
void mlsba__lu_swap_left(const mlsba__factor_problem_t *P, int64_t c0,
                         int64_t c1) {
  int64_t kmax = mlsba__factor_diag(P);
  int64_t *perm = malloc((size_t)P->m * sizeof *perm);
  void *scratch = malloc((size_t)P->m * mlsba__factor_esize(P));
  for (int64_t j = c0 / P->nb * P->nb; j < c1 && j < kmax; j += P->nb) {
    int64_t jb = kmax - j < P->nb ? kmax - j : P->nb;
    int64_t lo = c0 > j ? c0 : j, hi = c1 < j + jb ? c1 : j + jb;
    if (j + jb >= kmax || hi <= lo)
      continue;
    if (perm == NULL || scratch == NULL) { /* no memory: swap by swap */
      laswp(P, lo, hi - lo, j + jb + 1, kmax);
      continue;
    }
    compose_swaps(P, j + jb + 1, kmax, perm);
    permute_rows(P, lo, hi - lo, j + jb, perm, scratch);
  }
  free(perm);
  free(scratch);
}
