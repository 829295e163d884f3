/* Cholesky, lower (A = L L^T) or upper (A = U^T U): what its steps are
 * and what a core does with them. A unit of a step is a pair of trailing
 * columns {c, N - 1 - c}, which cost the same where single columns do
 * not. The panel is in two parts, so that a lower panel's solve can be
 * split between the devices as the update is: the diagonal block on the
 * panel's core (LAPACK's ?potf2), then the rows below it, each
 * independent of the others. The table that hands these to the driver is
 * in ops.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return mlsba__factor_at(P, i, j);
}

static int lower(const mlsba__factor_problem_t *P) {
  return P->op == MLSBA__FACTOR_CHOL_LOWER;
}

/* Trailing columns after the panel [j, j + jb). */
static int64_t trailing(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb) {
  return P->n - j - jb;
}

int64_t mlsba__chol_units(const mlsba__factor_problem_t *P, int64_t j,
                          int64_t jb) {
  return (trailing(P, j, jb) + 1) / 2;
}

double mlsba__chol_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                              int64_t jb) {
  /* a pair holds N + 1 elements of the triangle, 2 jb flops each */
  return 2 * (double)jb * (double)(trailing(P, j, jb) + 1);
}

double mlsba__chol_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb) {
  double b = (double)jb;
  return b * b * b / 3 + (double)trailing(P, j, jb) * b * b;
}

/* The diagonal block's; the solve below it splits by rows. */
double mlsba__chol_panel_serial_flops(const mlsba__factor_problem_t *P,
                                      int64_t j, int64_t jb) {
  (void)P;
  (void)j;
  double b = (double)jb;
  return b * b * b / 3;
}

double mlsba__chol_flops(const mlsba__factor_problem_t *P) {
  double n = (double)P->n;
  return n * n * n / 3;
}

int mlsba__chol_unit_columns(int64_t N, int64_t u, int64_t cols[2]) {
  cols[0] = u;
  cols[1] = N - 1 - u;
  return cols[1] != u ? 2 : 1;
}

/* Rows (columns) [r0, r1) below (right of) the panel's diagonal block,
 * 0 its first, of the panel's solve (L21 = A21 L11^-T, or U12 =
 * U11^-T A12) as a product with the triangle's inverse, in place (TRMM:
 * the solve's own flops). A 3968 x 128 solve took 4.9 ms here by TRSM,
 * 3.5 by a GEMM with the full inverse through copies (twice the flops),
 * 2.1 by TRMM. 0: no memory (the caller solves). */
static int solve_by_inverse(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb, int64_t r0, int64_t r1) {
  char *inv = malloc((size_t)(jb * jb) * mlsba__factor_esize(P));
  if (inv == NULL)
    return 0;
  if (lower(P)) {
    mlsba__factor_invert_triangle(P, j, jb, 'L', 'N', inv);
    mlsba__cpu_trmm(P->prec, 'R', 'L', 'T', 'N', r1 - r0, jb, 1.0, inv, jb,
                    at(P, j + jb + r0, j), P->lda, 1);
  } else {
    mlsba__factor_invert_triangle(P, j, jb, 'U', 'N', inv);
    mlsba__cpu_trmm(P->prec, 'L', 'U', 'T', 'N', jb, r1 - r0, 1.0, inv, jb,
                    at(P, j, j + jb + r0), P->lda, 1);
  }
  free(inv);
  return 1;
}

/* Blocks this small or smaller are factorized by LAPACK's ?potf2 itself;
 * larger ones are split in two, as LAPACK's ?potrf2 does. */
enum { DIAG_LEAF = 32 };

/* LAPACK's unblocked Cholesky of the diagonal block [c, c + w): 0, or
 * the order (1-based, within the block) of the first leading minor that
 * is not positive definite. */
static int diag_leaf(mlsba__factor_problem_t *P, int64_t c, int64_t w) {
  return mlsba__lapack_potf2(P->prec, lower(P) ? 'L' : 'U', (int)w, at(P, c, c),
                             (int)P->lda);
}

/* Recursive Cholesky of the diagonal block [c, c + w) (LAPACK's ?potrf2):
 * the leading half, the solve of the off-diagonal half, its symmetric
 * product from the trailing half, the trailing half. ?potf2 alone is a
 * matrix-vector product per column (level 2); the halves' solve and
 * product run on the cores' kernels, single threaded. Returns as
 * diag_leaf. */
static int diag_recursive(mlsba__factor_problem_t *P, int64_t c, int64_t w) {
  if (w <= DIAG_LEAF)
    return diag_leaf(P, c, w);
  int64_t n1 = w / 2 / 8 * 8, n2 = w - n1;
  int info = diag_recursive(P, c, n1);
  if (info)
    return info;
  if (lower(P)) { /* A21 = A21 L11^-T; A22 -= A21 A21^T */
    mlsba__cpu_trsm(P->prec, 'R', 'L', 'T', 'N', n2, n1, 1.0, at(P, c, c),
                    P->lda, at(P, c + n1, c), P->lda, 1);
    mlsba__cpu_gemmt(P->prec, 'L', 'N', 'T', n2, n1, -1.0, at(P, c + n1, c),
                     P->lda, at(P, c + n1, c), P->lda, 1.0,
                     at(P, c + n1, c + n1), P->lda, 1);
  } else { /* A12 = U11^-T A12; A22 -= A12^T A12 */
    mlsba__cpu_trsm(P->prec, 'L', 'U', 'T', 'N', n1, n2, 1.0, at(P, c, c),
                    P->lda, at(P, c, c + n1), P->lda, 1);
    mlsba__cpu_gemmt(P->prec, 'U', 'T', 'N', n2, n1, -1.0, at(P, c, c + n1),
                     P->lda, at(P, c, c + n1), P->lda, 1.0,
                     at(P, c + n1, c + n1), P->lda, 1);
  }
  info = diag_recursive(P, c + n1, n2);
  return info ? (int)n1 + info : 0;
}

/* The diagonal block of the panel [j, j + jb), recursively. Sets P->info
 * and returns 1 when it is not positive definite, else 0. */
int mlsba__chol_diag(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int info = diag_recursive(P, j, jb);
  if (info > 0) {
    P->info = j + info;
    return 1;
  }
  return 0;
}

void mlsba__chol_solve(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                       int64_t r0, int64_t r1) {
  if (r1 <= r0 || solve_by_inverse(P, j, jb, r0, r1))
    return;
  if (lower(P)) /* L21 = A21 L11^-T */
    mlsba__cpu_trsm(P->prec, 'R', 'L', 'T', 'N', r1 - r0, jb, 1.0, at(P, j, j),
                    P->lda, at(P, j + jb + r0, j), P->lda, 1);
  else /* U12 = U11^-T A12 */
    mlsba__cpu_trsm(P->prec, 'L', 'U', 'T', 'N', jb, r1 - r0, 1.0, at(P, j, j),
                    P->lda, at(P, j, j + jb + r0), P->lda, 1);
}

/* The rows of that solve: the panel's height below its diagonal block. */
int64_t mlsba__chol_solve_rows(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb) {
  return trailing(P, j, jb);
}

/* The two parts in a row, then the copy the update reads. */
int mlsba__chol_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  if (mlsba__chol_diag(P, j, jb))
    return 1;
  mlsba__chol_solve(P, j, jb, 0, trailing(P, j, jb));
  mlsba__factor_keep_panel(P, j, jb, lower(P));
  return 0;
}

/* The panel's part an update reads: L21's rows (lower) or U12's columns
 * (upper), index i (absolute) and k in [0, jb), at base + (i - first +
 * k ld) or base + (k + (i - first) ld) elements: in the matrix, or a copy
 * of the rows (columns) from first on. */
typedef struct {
  const char *base;
  int64_t ld, first;
} panel_t;

/* Where row (lower) or column (upper) i of the panel begins. */
static const void *panel_at(const mlsba__factor_problem_t *P, const panel_t *L,
                            int64_t i) {
  int64_t off = lower(P) ? i - L->first : (i - L->first) * L->ld;
  return L->base + (size_t)off * mlsba__factor_esize(P);
}

/* The panel's rows (columns) [first, n) as the update after the panel
 * [j, j + jb) reads them; *copy the buffer to free (NULL: in place). */
static panel_t panel_of(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t first, void **copy) {
  int low = lower(P);
  *copy = NULL;
  if (mlsba__factor_kept(P, j))
    return (panel_t){.base = mlsba__factor_kept_copy(P, j),
                     .ld = low ? P->kept_ld : jb,
                     .first = j + jb};
  int64_t count = P->n - first, ld = low ? mlsba__factor_padded(P, count) : jb;
  *copy = !mlsba__factor_aliases(P) ? NULL
          : low ? mlsba__factor_copy_block(P, first, j, count, jb, ld)
                : mlsba__factor_copy_block(P, j, first, jb, count, ld);
  if (*copy)
    return (panel_t){.base = *copy, .ld = ld, .first = first};
  return (panel_t){
      .base = low ? at(P, 0, j) : at(P, j, 0), .ld = P->lda, .first = 0};
}

/* The lower (upper) triangle of the update on the diagonal block
 * [d, d + w), the other triangle untouched, in one GEMMT: 47 GFLOPS of
 * useful work for a run of 892 columns on one core here, where halving
 * it down to blocks of 64 (each block a GEMM into scratch) ran at four
 * fifths of that. */
static void triangle(const mlsba__factor_problem_t *P, const panel_t *L,
                     int64_t jb, int64_t d, int64_t w) {
  const void *x = panel_at(P, L, d);
  if (lower(P)) /* L21(d..) L21(d..)^T */
    mlsba__cpu_gemmt(P->prec, 'L', 'N', 'T', w, jb, -1.0, x, L->ld, x, L->ld,
                     1.0, at(P, d, d), P->lda, 1);
  else /* U12(d..)^T U12(d..) */
    mlsba__cpu_gemmt(P->prec, 'U', 'T', 'N', w, jb, -1.0, x, L->ld, x, L->ld,
                     1.0, at(P, d, d), P->lda, 1);
}

/* Columns [c, c + w) of the trailing matrix, absolute indices, after the
 * panel [j, j + jb): the run's own triangle, then the rectangle off it in
 * one product. */
static void columns(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                    int64_t c, int64_t w) {
  int64_t s0 = j + jb; /* the trailing matrix's first row and column */
  int low = lower(P);
  void *copy;
  panel_t L = panel_of(P, j, jb, low ? c : s0, &copy);
  triangle(P, &L, jb, c, w);
  if (low && c + w < P->n) /* below the run */
    mlsba__cpu_gemm(P->prec, 'N', 'T', P->n - c - w, w, jb, -1.0,
                    panel_at(P, &L, c + w), L.ld, panel_at(P, &L, c), L.ld, 1.0,
                    at(P, c + w, c), P->lda, 1);
  if (!low && c > s0) /* above the run */
    mlsba__cpu_gemm(P->prec, 'T', 'N', c - s0, w, jb, -1.0, panel_at(P, &L, s0),
                    L.ld, panel_at(P, &L, c), L.ld, 1.0, at(P, s0, c), P->lda,
                    1);
  free(copy);
}

void mlsba__chol_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t u0, int64_t u1) {
  int64_t s0 = j + jb, N = trailing(P, j, jb);
  if (u1 <= u0)
    return;
  /* Pair u is columns u and N - 1 - u (one column in the middle when N is
   * odd): units [u0, u1) are two runs, the second from N - u1 on, never
   * below u1. */
  columns(P, j, jb, s0 + u0, u1 - u0);
  int64_t lo = N - u1 > u1 ? N - u1 : u1, hi = N - u0;
  if (hi > lo)
    columns(P, j, jb, s0 + lo, hi - lo);
}

/* The host's replay of the updates that a resident column missed when
 * its device failed: column by column, a product with one column each,
 * so that no element of the other triangle is written (lower: rows c to
 * n; upper: rows top to c). Only a failure takes this path; speed does
 * not matter. */
void mlsba__chol_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t c0, int64_t c1, int64_t top) {
  for (int64_t c = c0; c < c1; c++) {
    if (lower(P)) /* rows [c, n) -= L21 L21(c)^T */
      mlsba__cpu_gemm(P->prec, 'N', 'T', P->n - c, 1, jb, -1.0, at(P, c, j),
                      P->lda, at(P, c, j), P->lda, 1.0, at(P, c, c), P->lda, 1);
    else if (c >= top) /* rows [top, c] -= U12(top..c)^T U12(c) */
      mlsba__cpu_gemm(P->prec, 'T', 'N', c + 1 - top, 1, jb, -1.0,
                      at(P, j, top), P->lda, at(P, j, c), P->lda, 1.0,
                      at(P, top, c), P->lda, 1);
  }
}
