/* Householder QR (A = Q R, LAPACK's ?geqrf): what its steps are and what a
 * core does with them. A unit is a trailing column, as LU's. The panel is
 * LAPACK's ?geqrf on one core (called, not rewritten), then ?larft for
 * the triangular factor T of its block reflector, Q_k = I - V T V^T; the
 * update of the trailing columns is ?larfb's C = Q_k^T C = C - V (T^T
 * (V^T C)), every product through the project's CPU kernels (BLIS on a
 * pinned core), so that any split of the columns gives the same numbers.
 * The table that hands these to the driver is in ops.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return mlsba__factor_at(P, i, j);
}

int64_t mlsba__qr_units(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb) {
  return P->n - j - jb; /* the trailing columns */
}

/* One column of height h = m - j: V^T C and V W, 2 jb h flops each but
 * for the unit triangle's half (the TRMMs), and T^T W, jb^2. */
double mlsba__qr_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb) {
  double b = (double)jb;
  return 4 * b * (double)(P->m - j) - b * b;
}

/* ?geqrf of an h x jb panel, 2 jb^2 (h - jb / 3), and ?larft's T, about
 * jb^2 (h - jb / 3) more. */
double mlsba__qr_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb) {
  double b = (double)jb;
  return 3 * b * b * ((double)(P->m - j) - b / 3);
}

/* LAPACK's count for ?geqrf. */
double mlsba__qr_flops(const mlsba__factor_problem_t *P) {
  double m = (double)P->m, n = (double)P->n;
  return m >= n ? 2 * m * n * n - 2 * n * n * n / 3
                : 2 * n * m * m - 2 * m * m * m / 3;
}

/* The panels' width: the room for T and the workspace is sized by it. */
static int64_t width(const mlsba__factor_problem_t *P) {
  int64_t k = mlsba__factor_diag(P);
  return P->nb < k ? P->nb : k;
}

size_t mlsba__qr_room(const mlsba__factor_problem_t *P) {
  size_t b = (size_t)width(P);
  return (2 * b * b + MLSBA__QR_WORK_COLUMNS * b + 1) * mlsba__factor_esize(P);
}

/* Where the T of panel j is kept: two, by the panel's parity, as LU keeps
 * its inverses (the next panel is factorized while this one's update
 * still reads its T). */
static void *t_of(const mlsba__factor_problem_t *P, int64_t j) {
  size_t b = (size_t)width(P);
  return (char *)P->tfac +
         (size_t)(j / P->nb % 2) * b * b * mlsba__factor_esize(P);
}

const void *mlsba__qr_t(const mlsba__factor_problem_t *P, int64_t j) {
  return t_of(P, j);
}

/* The panel's workspace for ?geqrf, after the two T's. */
static void *work_of(const mlsba__factor_problem_t *P) {
  size_t b = (size_t)width(P);
  return (char *)P->tfac + 2 * b * b * mlsba__factor_esize(P);
}

static void *tau_at(const mlsba__factor_problem_t *P, int64_t j) {
  return (char *)P->tau + (size_t)j * mlsba__factor_esize(P);
}

/* T (jb x jb, leading dimension jb) of the reflectors of panel [j, j +
 * jb), from V in the matrix and their tau, by LAPACK's ?larft. */
static void form_t(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                   void *t) {
  mlsba__lapack_larft(P->prec, (int)(P->m - j), (int)jb, at(P, j, j),
                      (int)P->lda, tau_at(P, j), t, (int)jb);
}

int mlsba__qr_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int lwork = (int)(MLSBA__QR_WORK_COLUMNS * width(P));
  (void)mlsba__lapack_geqrf(P->prec, (int)(P->m - j), (int)jb, at(P, j, j),
                            (int)P->lda, tau_at(P, j), work_of(P), lwork);
  form_t(P, j, jb, t_of(P, j));
  mlsba__factor_keep_panel(P, j, jb, 1); /* V2, the rows below V1 */
  return 0;                              /* QR never stops */
}

/* Columns [c, c + w) (absolute) take Q_k^T of panel [j, j + jb) whose T
 * is t, as ?larfb (side L, trans T, forward, columnwise) computes it,
 * through W (jb x w): W = V1^T C1 + V2^T C2, W = T^T W, C2 -= V2 W,
 * C1 -= V1 W. V1 is the unit lower triangle of the panel's diagonal block
 * (R above it is not read), V2 the rows below it (v2, ldv). */
static void larfb_through(const mlsba__factor_problem_t *P, int64_t j,
                          int64_t jb, const void *t, const void *v2,
                          int64_t ldv, int64_t c, int64_t w, char *W) {
  size_t es = mlsba__factor_esize(P);
  int64_t h = P->m - j - jb;
  for (int64_t k = 0; k < w; k++) /* W = C1 */
    memcpy(W + (size_t)(k * jb) * es, at(P, j, c + k), (size_t)jb * es);
  mlsba__cpu_trmm(P->prec, 'L', 'L', 'T', 'U', jb, w, 1.0, at(P, j, j), P->lda,
                  W, jb, 1);
  if (h > 0)
    mlsba__cpu_gemm(P->prec, 'T', 'N', jb, w, h, 1.0, v2, ldv, at(P, j + jb, c),
                    P->lda, 1.0, W, jb, 1);
  mlsba__cpu_trmm(P->prec, 'L', 'U', 'T', 'N', jb, w, 1.0, t, jb, W, jb, 1);
  if (h > 0)
    mlsba__cpu_gemm(P->prec, 'N', 'N', h, w, jb, -1.0, v2, ldv, W, jb, 1.0,
                    at(P, j + jb, c), P->lda, 1);
  mlsba__cpu_trmm(P->prec, 'L', 'L', 'N', 'U', jb, w, 1.0, at(P, j, j), P->lda,
                  W, jb, 1);
  for (int64_t k = 0; k < w; k++) { /* C1 -= V1 W */
    if (P->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = at(P, j, c + k);
      const double *y = (const double *)(const void *)W + k * jb;
      for (int64_t i = 0; i < jb; i++)
        x[i] -= y[i];
    } else {
      float *x = at(P, j, c + k);
      const float *y = (const float *)(const void *)W + k * jb;
      for (int64_t i = 0; i < jb; i++)
        x[i] -= y[i];
    }
  }
}

/* The same on columns [c, c + w), V2 read from the panel's copy where one
 * is kept (else from a copy of its own where the leading dimension calls
 * for one, kernels.c), W on the heap, or without memory in slices of
 * columns on the stack (mlsba_geqrf keeps jb within MLSBA__QR_STACK_BYTES). */
static void larfb(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                  const void *t, int64_t c, int64_t w) {
  size_t es = mlsba__factor_esize(P);
  int64_t h = P->m - j - jb;
  int kept = mlsba__factor_kept(P, j);
  int64_t ldv = kept ? P->kept_ld : mlsba__factor_padded(P, h);
  void *own = h > 0 && !kept && mlsba__factor_aliases(P)
                  ? mlsba__factor_copy_block(P, j + jb, j, h, jb, ldv)
                  : NULL;
  const void *v2 = kept ? mlsba__factor_kept_copy(P, j) : own;
  if (v2 == NULL) {
    v2 = at(P, j + jb, j);
    ldv = P->lda;
  }
  char *W = malloc((size_t)(jb * w) * es + 1);
  if (W) {
    larfb_through(P, j, jb, t, v2, ldv, c, w, W);
  } else {
    _Alignas(64) char room[MLSBA__QR_STACK_BYTES];
    int64_t slice = (int64_t)(sizeof room / ((size_t)jb * es));
    for (int64_t k = 0; k < w; k += slice)
      larfb_through(P, j, jb, t, v2, ldv, c + k, w - k < slice ? w - k : slice,
                    room);
  }
  free(W);
  free(own);
}

void mlsba__qr_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t u0, int64_t u1) {
  if (u1 > u0)
    larfb(P, j, jb, t_of(P, j), j + jb + u0, u1 - u0);
}

/* The T's kept are the last two panels': a replay forms the one of panel
 * j again from V and tau, which no later step writes. */
void mlsba__qr_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t c0, int64_t c1, int64_t top) {
  (void)top;
  void *t = malloc((size_t)(jb * jb) * mlsba__factor_esize(P) + 1);
  if (t == NULL || c1 <= c0) {
    free(t);
    return;
  }
  form_t(P, j, jb, t);
  larfb(P, j, jb, t, c0, c1 - c0);
  free(t);
}
