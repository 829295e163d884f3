/* What a device does with a step's units, and the panel: LAPACK's
 * unblocked routines for the panel (called, not rewritten), every solve
 * and product through the project's CPU kernels (cpu_blas.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../devices/kernels.h"
#include "factor.h"
#include "panel.h"

/* LAPACK (Fortran): the string lengths are the hidden last arguments. */
void dgetf2_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void sgetf2_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void dpotf2_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotf2_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

size_t mlsba__factor_esize(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return (char *)P->a + (size_t)(i + j * P->lda) * mlsba__factor_esize(P);
}

int64_t mlsba__factor_diag(const mlsba__factor_problem_t *P) {
  return P->m < P->n ? P->m : P->n;
}

/* Trailing columns after the panel [j, j + jb). */
static int64_t trailing(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb) {
  return P->n - j - jb;
}

int64_t mlsba__factor_units(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb) {
  int64_t N = trailing(P, j, jb);
  return P->op == MLSBA__FACTOR_LU ? N : (N + 1) / 2;
}

double mlsba__factor_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                                int64_t jb) {
  double b = (double)jb;
  if (P->op == MLSBA__FACTOR_LU) /* solve with L11, product with L21 */
    return b * b + 2 * b * (double)(P->m - j - jb);
  /* a pair holds N + 1 elements of the triangle, 2 jb flops each */
  return 2 * b * (double)(trailing(P, j, jb) + 1);
}

double mlsba__factor_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                                 int64_t jb) {
  double b = (double)jb;
  if (P->op == MLSBA__FACTOR_LU)
    return (double)(P->m - j) * b * b - b * b * b / 3;
  return b * b * b / 3 + (double)trailing(P, j, jb) * b * b;
}

double mlsba__factor_flops(const mlsba__factor_problem_t *P) {
  double m = (double)P->m, n = (double)P->n;
  if (P->op != MLSBA__FACTOR_LU)
    return n * n * n / 3;
  return m >= n ? m * n * n - n * n * n / 3 : n * m * m - m * m * m / 3;
}

/* Columns this narrow or narrower are factorized by LAPACK's ?getf2
 * itself; wider ones are split in two, as LAPACK's ?getrf2 does. */
enum { PANEL_LEAF = 16 };

static void laswp(const mlsba__factor_problem_t *P, int64_t col, int64_t w,
                  int64_t k1, int64_t k2);
static void keep_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb);

/* LAPACK's unblocked LU of rows [c, m) of columns [c, c + w), its pivots
 * made global. */
static void lu_leaf(mlsba__factor_problem_t *P, int64_t c, int64_t w) {
  int m = (int)(P->m - c), n = (int)w, lda = (int)P->lda, info = 0;
  int *piv = P->ipiv + c;
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    dgetf2_(&m, &n, at(P, c, c), &lda, piv, &info);
  else
    sgetf2_(&m, &n, at(P, c, c), &lda, piv, &info);
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
  if (w <= PANEL_LEAF || rows <= w) {
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

/* x (jb x jb, leading dimension jb) = the inverse of the triangle at
 * (j, j): the identity solved with it. */
static void invert_triangle(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb, char uplo, char diag, void *x) {
  memset(x, 0, (size_t)(jb * jb) * mlsba__factor_esize(P));
  for (int64_t i = 0; i < jb; i++) {
    if (P->prec == MLSBA_PRECISION_DOUBLE)
      ((double *)x)[i + i * jb] = 1;
    else
      ((float *)x)[i + i * jb] = 1;
  }
  mlsba__cpu_trsm(P->prec, 'L', uplo, 'N', diag, jb, jb, 1.0, at(P, j, j),
                  P->lda, x, jb, 1);
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

/* Columns [c, c + w) take the panel [j, j + jb)'s interchanges: by its
 * moves where the panel kept them, else as ?laswp would. */
static void swap_panel_rows(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb, int64_t c, int64_t w) {
  int64_t par = j / P->nb % 2, n = P->nmoves[par];
  void *t = P->moves && P->moves_j[par] == j ? malloc((size_t)n * 8 + 1) : NULL;
  if (t == NULL) {
    laswp(P, c, w, j + 1, j + jb);
    return;
  }
  const int64_t *dst = moves_of(P, j), *src = dst + 2 * P->nb;
  for (int64_t k = c; k < c + w; k++) {
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

static int lu_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  lu_recursive(P, j, jb);
  compose_moves(P, j, jb);
  if (P->linv) /* for the update: inv(L11) */
    invert_triangle(P, j, jb, 'L', 'U', linv_of(P, j));
  keep_panel(P, j, jb);
  return 0;
}

/* Rows (columns) [r0, r1) below (right of) the panel's diagonal block,
 * 0 its first, of the Cholesky panel's solve (L21 = A21 L11^-T, or U12 =
 * U11^-T A12) as a product with the triangle's inverse, in place (TRMM:
 * the solve's own flops). A 3968 x 128 solve took 4.9 ms here by TRSM,
 * 3.5 by a GEMM with the full inverse through copies (twice the flops),
 * 2.1 by TRMM. 0: no memory (the caller solves). */
static int chol_solve_by_inverse(const mlsba__factor_problem_t *P, int64_t j,
                                 int64_t jb, int64_t r0, int64_t r1) {
  char *inv = malloc((size_t)(jb * jb) * mlsba__factor_esize(P));
  if (inv == NULL)
    return 0;
  if (P->op == MLSBA__FACTOR_CHOL_LOWER) {
    invert_triangle(P, j, jb, 'L', 'N', inv);
    mlsba__cpu_trmm(P->prec, 'R', 'L', 'T', 'N', r1 - r0, jb, 1.0, inv, jb,
                    at(P, j + jb + r0, j), P->lda, 1);
  } else {
    invert_triangle(P, j, jb, 'U', 'N', inv);
    mlsba__cpu_trmm(P->prec, 'L', 'U', 'T', 'N', jb, r1 - r0, 1.0, inv, jb,
                    at(P, j, j + jb + r0), P->lda, 1);
  }
  free(inv);
  return 1;
}

int mlsba__factor_chol_diag(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int n = (int)jb, lda = (int)P->lda, info = 0;
  const char *uplo = P->op == MLSBA__FACTOR_CHOL_LOWER ? "L" : "U";
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    dpotf2_(uplo, &n, at(P, j, j), &lda, &info, 1);
  else
    spotf2_(uplo, &n, at(P, j, j), &lda, &info, 1);
  if (info > 0) {
    P->info = j + info;
    return 1;
  }
  return 0;
}

void mlsba__factor_chol_solve(const mlsba__factor_problem_t *P, int64_t j,
                              int64_t jb, int64_t r0, int64_t r1) {
  if (r1 <= r0 || chol_solve_by_inverse(P, j, jb, r0, r1))
    return;
  if (P->op == MLSBA__FACTOR_CHOL_LOWER) /* L21 = A21 L11^-T */
    mlsba__cpu_trsm(P->prec, 'R', 'L', 'T', 'N', r1 - r0, jb, 1.0, at(P, j, j),
                    P->lda, at(P, j + jb + r0, j), P->lda, 1);
  else /* U12 = U11^-T A12 */
    mlsba__cpu_trsm(P->prec, 'L', 'U', 'T', 'N', jb, r1 - r0, 1.0, at(P, j, j),
                    P->lda, at(P, j, j + jb + r0), P->lda, 1);
}

int64_t mlsba__factor_chol_solve_rows(const mlsba__factor_problem_t *P,
                                      int64_t j, int64_t jb) {
  return trailing(P, j, jb);
}

static int chol_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  if (mlsba__factor_chol_diag(P, j, jb))
    return 1;
  mlsba__factor_chol_solve(P, j, jb, 0, trailing(P, j, jb));
  keep_panel(P, j, jb);
  return 0;
}

int mlsba__factor_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  return P->op == MLSBA__FACTOR_LU ? lu_panel(P, j, jb) : chol_panel(P, j, jb);
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

void mlsba__factor_swap_rows(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb, int64_t c, int64_t w) {
  swap_panel_rows(P, j, jb, c, w);
}

/* A leading dimension of a multiple of 1 KiB (a matrix of order 4096)
 * maps a column's elements to the same cache sets: BLIS's GEMM, packing
 * such operands, ran at half its speed in single precision here (46
 * against 86 GFLOPS for 3840 x 1967 x 128 on one core), which OpenBLAS
 * does not. The update's operands from the panel then go through copies
 * with a leading dimension off those multiples (their rows, or columns,
 * times jb elements against the product's 2 w jb flops a row). */
static int aliases(const mlsba__factor_problem_t *P) {
  return (size_t)P->lda * mlsba__factor_esize(P) % 1024 == 0;
}

/* A leading dimension of at least rows, a multiple of 16 elements, not of
 * 1 KiB. */
static int64_t padded(const mlsba__factor_problem_t *P, int64_t rows) {
  int64_t ld = (rows + 15) / 16 * 16;
  return (size_t)ld * mlsba__factor_esize(P) % 1024 == 0 ? ld + 16 : ld;
}

/* rows x cols of the matrix from (i, c) into b, of leading dimension ld. */
static void copy_into(const mlsba__factor_problem_t *P, int64_t i, int64_t c,
                      int64_t rows, int64_t cols, char *b, int64_t ld) {
  for (int64_t k = 0; k < cols; k++)
    memcpy(b + (size_t)(k * ld) * mlsba__factor_esize(P), at(P, i, c + k),
           (size_t)rows * mlsba__factor_esize(P));
}

/* The same into a new buffer (NULL: no memory). */
static void *copy_block(const mlsba__factor_problem_t *P, int64_t i, int64_t c,
                        int64_t rows, int64_t cols, int64_t ld) {
  char *b = malloc((size_t)(ld * cols) * mlsba__factor_esize(P) + 1);
  if (b)
    copy_into(P, i, c, rows, cols, b, ld);
  return b;
}

/* ---- the panel's copy, made once for every device ------------------------
 * Each update of a step read its panel's operand through a copy of its
 * own, as many as there are devices and pieces of shares in the step
 * (each as long as packing the operand again); the panel's core now makes
 * one, after the panel, for all of them. */

static int64_t kept_width(const mlsba__factor_problem_t *P) {
  int64_t k = mlsba__factor_diag(P);
  return P->nb < k ? P->nb : k;
}

void mlsba__factor_scratch_open(mlsba__factor_problem_t *P) {
  P->kept = NULL;
  P->kept_j[0] = P->kept_j[1] = -1;
  P->kept_ld = padded(P, P->m > P->n ? P->m : P->n);
  if (aliases(P) && kept_width(P) > 0) /* LU, lower: rows; upper: columns */
    P->kept = malloc(2 * (size_t)(P->kept_ld * kept_width(P)) *
                     mlsba__factor_esize(P));
  P->moves = NULL;
  P->moves_j[0] = P->moves_j[1] = -1;
  if (P->op == MLSBA__FACTOR_LU && kept_width(P) > 0)
    P->moves = malloc(8 * (size_t)P->nb * sizeof *P->moves);
}

void mlsba__factor_scratch_close(mlsba__factor_problem_t *P) {
  free(P->kept);
  free(P->moves);
  P->kept = NULL;
  P->moves = NULL;
}

static char *kept_copy(const mlsba__factor_problem_t *P, int64_t j) {
  size_t each = (size_t)(P->kept_ld * kept_width(P)) * mlsba__factor_esize(P);
  return (char *)P->kept + (size_t)(j / P->nb % 2) * each;
}

/* Whether the copy of panel j is kept. */
static int kept(const mlsba__factor_problem_t *P, int64_t j) {
  return P->kept && P->kept_j[j / P->nb % 2] == j;
}

/* After the panel [j, j + jb): its rows below the diagonal block (LU,
 * lower Cholesky) or columns right of it (upper) into the copy of its
 * parity; the update of the step before still reads the other one. */
static void keep_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  if (P->kept == NULL)
    return;
  char *b = kept_copy(P, j);
  if (P->op == MLSBA__FACTOR_CHOL_UPPER)
    copy_into(P, j, j + jb, jb, P->n - j - jb, b, jb);
  else
    copy_into(P, j + jb, j, P->m - j - jb, jb, b, P->kept_ld);
  P->kept_j[j / P->nb % 2] = j;
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

/* LU: columns [c, c + w) after the panel [j, j + jb). */
static void lu_columns(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                       int64_t c, int64_t w) {
  swap_panel_rows(P, j, jb, c, w);
  lu_solve(P, j, jb, c, w);
  int64_t h = P->m - j - jb, ldl = kept(P, j) ? P->kept_ld : padded(P, h);
  void *own = h > 0 && !kept(P, j) && aliases(P)
                  ? copy_block(P, j + jb, j, h, jb, ldl)
                  : NULL;
  const void *l21 = kept(P, j) ? kept_copy(P, j) : own;
  if (h > 0)
    mlsba__cpu_gemm(P->prec, 'N', 'N', h, w, jb, -1.0,
                    l21 ? l21 : at(P, j + jb, j), l21 ? ldl : P->lda,
                    at(P, j, c), P->lda, 1.0, at(P, j + jb, c), P->lda, 1);
  free(own);
}

/* The panel's part a Cholesky update reads: L21's rows (lower) or U12's
 * columns (upper), index i (absolute) and k in [0, jb), at
 * base + (i - first + k ld) or base + (k + (i - first) ld) elements: in
 * the matrix, or a copy of the rows (columns) from first on. */
typedef struct {
  const char *base;
  int64_t ld, first;
} panel_t;

/* Where row (lower) or column (upper) i of the panel begins. */
static const void *panel_at(const mlsba__factor_problem_t *P, const panel_t *L,
                            int64_t i) {
  int64_t off =
      P->op == MLSBA__FACTOR_CHOL_LOWER ? i - L->first : (i - L->first) * L->ld;
  return L->base + (size_t)off * mlsba__factor_esize(P);
}

/* The panel's rows (columns) [first, n) as the update after the panel
 * [j, j + jb) reads them; *copy the buffer to free (NULL: in place). */
static panel_t panel_of(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t first, void **copy) {
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  *copy = NULL;
  if (kept(P, j))
    return (panel_t){.base = kept_copy(P, j),
                     .ld = lower ? P->kept_ld : jb,
                     .first = j + jb};
  int64_t count = P->n - first, ld = lower ? padded(P, count) : jb;
  *copy = !aliases(P) ? NULL
          : lower     ? copy_block(P, first, j, count, jb, ld)
                      : copy_block(P, j, first, jb, count, ld);
  if (*copy)
    return (panel_t){.base = *copy, .ld = ld, .first = first};
  return (panel_t){
      .base = lower ? at(P, 0, j) : at(P, j, 0), .ld = P->lda, .first = 0};
}

/* The lower (upper) triangle of the update on the diagonal block
 * [d, d + w), the other triangle untouched, in one GEMMT: 47 GFLOPS of
 * useful work for a run of 892 columns on one core here, where halving
 * it down to blocks of 64 (each block a GEMM into scratch) ran at four
 * fifths of that. */
static void chol_triangle(const mlsba__factor_problem_t *P, const panel_t *L,
                          int64_t jb, int64_t d, int64_t w) {
  const void *x = panel_at(P, L, d);
  if (P->op == MLSBA__FACTOR_CHOL_LOWER) /* L21(d..) L21(d..)^T */
    mlsba__cpu_gemmt(P->prec, 'L', 'N', 'T', w, jb, -1.0, x, L->ld, x, L->ld,
                     1.0, at(P, d, d), P->lda, 1);
  else /* U12(d..)^T U12(d..) */
    mlsba__cpu_gemmt(P->prec, 'U', 'T', 'N', w, jb, -1.0, x, L->ld, x, L->ld,
                     1.0, at(P, d, d), P->lda, 1);
}

/* Cholesky: columns [c, c + w) of the trailing matrix, absolute indices,
 * after the panel [j, j + jb): the run's own triangle, then the rectangle
 * off it in one product. */
static void chol_columns(const mlsba__factor_problem_t *P, int64_t j,
                         int64_t jb, int64_t c, int64_t w) {
  int64_t s0 = j + jb; /* the trailing matrix's first row and column */
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  void *copy;
  panel_t L = panel_of(P, j, jb, lower ? c : s0, &copy);
  chol_triangle(P, &L, jb, c, w);
  if (lower && c + w < P->n) /* below the run */
    mlsba__cpu_gemm(P->prec, 'N', 'T', P->n - c - w, w, jb, -1.0,
                    panel_at(P, &L, c + w), L.ld, panel_at(P, &L, c), L.ld, 1.0,
                    at(P, c + w, c), P->lda, 1);
  if (!lower && c > s0) /* above the run */
    mlsba__cpu_gemm(P->prec, 'T', 'N', c - s0, w, jb, -1.0, panel_at(P, &L, s0),
                    L.ld, panel_at(P, &L, c), L.ld, 1.0, at(P, s0, c), P->lda,
                    1);
  free(copy);
}

void mlsba__factor_update(const mlsba__factor_problem_t *P, int64_t j,
                          int64_t jb, int64_t u0, int64_t u1) {
  int64_t s0 = j + jb, N = trailing(P, j, jb);
  if (u1 <= u0)
    return;
  if (P->op == MLSBA__FACTOR_LU) {
    lu_columns(P, j, jb, s0 + u0, u1 - u0);
    return;
  }
  /* Pair u is columns u and N - 1 - u (one column in the middle when N is
   * odd): units [u0, u1) are two runs, the second from N - u1 on, never
   * below u1. */
  chol_columns(P, j, jb, s0 + u0, u1 - u0);
  int64_t lo = N - u1 > u1 ? N - u1 : u1, hi = N - u0;
  if (hi > lo)
    chol_columns(P, j, jb, s0 + lo, hi - lo);
}

/* Rows [r0, m) of columns [col, col + w) rearranged so that row t takes
 * row perm[t - r0]: one gather per column through a scratch column. */
static void permute_rows(const mlsba__factor_problem_t *P, int64_t col,
                         int64_t w, int64_t r0, const int64_t *perm,
                         void *scratch) {
  int64_t h = P->m - r0;
  for (int64_t c = col; c < col + w; c++) {
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

/* Each panel's columns take the interchanges of every later panel. Those
 * composed into one permutation per panel and applied by gathers: swap by
 * swap (?laswp) it took 17 ms of a 0.57 s LU at n = 4096 here, 13 ms so. */
void mlsba__factor_swap_left(const mlsba__factor_problem_t *P, int64_t c0,
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
