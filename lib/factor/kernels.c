/* What a device does with a step's units, and the panel: LAPACK's
 * unblocked routines for the panel (called, not rewritten), every solve
 * and product through the project's CPU kernels (cpu_blas.h). */
#include <stddef.h>

#include "../devices/cpu/cpu_blas.h"
#include "factor.h"

/* LAPACK (Fortran): the string lengths are the hidden last arguments. */
void dgetf2_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void sgetf2_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);
void dpotf2_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotf2_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

/* The diagonal blocks of a Cholesky update are computed apart in blocks of
 * this many columns, so that the other triangle is never written. */
enum { DIAG_BLOCK = 64 };

static size_t esize(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return (char *)P->a + (size_t)(i + j * P->lda) * esize(P);
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

static int lu_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int m = (int)(P->m - j), n = (int)jb, lda = (int)P->lda, info = 0;
  int *piv = P->ipiv + j;
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    dgetf2_(&m, &n, at(P, j, j), &lda, piv, &info);
  else
    sgetf2_(&m, &n, at(P, j, j), &lda, piv, &info);
  for (int64_t i = 0; i < jb; i++)
    piv[i] += (int)j; /* ?getf2 counts from the panel's first row */
  if (info > 0 && P->info == 0)
    P->info = j + info;
  return 0;
}

static int chol_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int n = (int)jb, lda = (int)P->lda, info = 0;
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  const char *uplo = lower ? "L" : "U";
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    dpotf2_(uplo, &n, at(P, j, j), &lda, &info, 1);
  else
    spotf2_(uplo, &n, at(P, j, j), &lda, &info, 1);
  if (info > 0) {
    P->info = j + info;
    return 1;
  }
  int64_t rest = trailing(P, j, jb);
  if (rest == 0)
    return 0;
  if (lower) /* L21 = A21 L11^-T */
    mlsba__cpu_trsm(P->prec, 'R', 'L', 'T', 'N', rest, jb, 1.0, at(P, j, j),
                    P->lda, at(P, j + jb, j), P->lda, 1);
  else /* U12 = U11^-T A12 */
    mlsba__cpu_trsm(P->prec, 'L', 'U', 'T', 'N', jb, rest, 1.0, at(P, j, j),
                    P->lda, at(P, j, j + jb), P->lda, 1);
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
  laswp(P, c, w, j + 1, j + jb);
}

/* LU: columns [c, c + w) after the panel [j, j + jb). */
static void lu_columns(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                       int64_t c, int64_t w) {
  laswp(P, c, w, j + 1, j + jb);
  mlsba__cpu_trsm(P->prec, 'L', 'L', 'N', 'U', jb, w, 1.0, at(P, j, j), P->lda,
                  at(P, j, c), P->lda, 1);
  int64_t h = P->m - j - jb;
  if (h > 0)
    mlsba__cpu_gemm(P->prec, 'N', 'N', h, w, jb, -1.0, at(P, j + jb, j), P->lda,
                    at(P, j, c), P->lda, 1.0, at(P, j + jb, c), P->lda, 1);
}

/* The s x s diagonal block at (d, d) of a Cholesky update, through a
 * scratch block so that the other triangle stays as it was. */
static void chol_diag_block(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb, int64_t d, int64_t s) {
  double scratch[DIAG_BLOCK * DIAG_BLOCK];
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  if (lower) /* L21(d) L21(d)^T */
    mlsba__cpu_gemm(P->prec, 'N', 'T', s, s, jb, 1.0, at(P, d, j), P->lda,
                    at(P, d, j), P->lda, 0.0, scratch, s, 1);
  else /* U12(d)^T U12(d) */
    mlsba__cpu_gemm(P->prec, 'T', 'N', s, s, jb, 1.0, at(P, j, d), P->lda,
                    at(P, j, d), P->lda, 0.0, scratch, s, 1);
  float *fs = (float *)scratch;
  for (int64_t c = 0; c < s; c++) {
    int64_t r0 = lower ? c : 0, r1 = lower ? s : c + 1;
    for (int64_t r = r0; r < r1; r++) {
      if (P->prec == MLSBA_PRECISION_DOUBLE)
        *(double *)at(P, d + r, d + c) -= scratch[r + c * s];
      else
        *(float *)at(P, d + r, d + c) -= fs[r + c * s];
    }
  }
}

/* Cholesky: columns [c, c + w) of the trailing matrix, absolute indices,
 * after the panel [j, j + jb): the rectangle off the run's diagonal in one
 * product, the run's own triangle in blocks. */
static void chol_columns(const mlsba__factor_problem_t *P, int64_t j,
                         int64_t jb, int64_t c, int64_t w) {
  int64_t s0 = j + jb; /* the trailing matrix's first row and column */
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  for (int64_t d = c; d < c + w; d += DIAG_BLOCK) {
    int64_t s = c + w - d < DIAG_BLOCK ? c + w - d : DIAG_BLOCK;
    chol_diag_block(P, j, jb, d, s);
    int64_t rest = c + w - d - s; /* of the run, beyond this block */
    if (rest == 0)
      continue;
    if (lower) /* rows of the run below the block, the block's columns */
      mlsba__cpu_gemm(P->prec, 'N', 'T', rest, s, jb, -1.0, at(P, d + s, j),
                      P->lda, at(P, d, j), P->lda, 1.0, at(P, d + s, d), P->lda,
                      1);
    else /* the block's rows, the run's columns right of the block */
      mlsba__cpu_gemm(P->prec, 'T', 'N', s, rest, jb, -1.0, at(P, j, d), P->lda,
                      at(P, j, d + s), P->lda, 1.0, at(P, d, d + s), P->lda, 1);
  }
  if (lower && c + w < P->n) /* below the run */
    mlsba__cpu_gemm(P->prec, 'N', 'T', P->n - c - w, w, jb, -1.0,
                    at(P, c + w, j), P->lda, at(P, c, j), P->lda, 1.0,
                    at(P, c + w, c), P->lda, 1);
  if (!lower && c > s0) /* above the run */
    mlsba__cpu_gemm(P->prec, 'T', 'N', c - s0, w, jb, -1.0, at(P, j, s0),
                    P->lda, at(P, j, c), P->lda, 1.0, at(P, s0, c), P->lda, 1);
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

void mlsba__factor_swap_left(const mlsba__factor_problem_t *P) {
  int64_t kmax = mlsba__factor_diag(P);
  for (int64_t j = 0; j < kmax; j += P->nb) {
    int64_t jb = kmax - j < P->nb ? kmax - j : P->nb;
    if (j + jb < kmax)
      laswp(P, j, jb, j + jb + 1, kmax);
  }
}
