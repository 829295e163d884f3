/* A block of right-hand sides solved with the factors, as LAPACK's ?getrs
 * and ?potrs do it: the rows interchanged by the pivots, then two
 * triangle solves, every one through the project's CPU kernels
 * (cpu_blas.h), so that the cores' chosen BLIS kernels run them. */
#include "rhs.h"

#include "../devices/kernels.h"

/* Rows of columns [c, c + w) interchanged as LAPACK's ?laswp does with
 * the pivots 1..n, forward (incx 1) or backward (incx -1). A loop over
 * each column, whose n entries stay in cache while its swaps run. */
static void swap_rows(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      int backward) {
  int64_t n = s->n;
  for (int64_t j = c; j < c + w; j++) {
    if (s->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = (double *)s->b + j * s->ldb;
      for (int64_t k = 0; k < n; k++) {
        int64_t i = backward ? n - 1 - k : k, r = s->ipiv[i] - 1;
        double t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    } else {
      float *x = (float *)s->b + j * s->ldb;
      for (int64_t k = 0; k < n; k++) {
        int64_t i = backward ? n - 1 - k : k, r = s->ipiv[i] - 1;
        float t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    }
  }
}

/* Fewer columns than this are solved one by one with TRSV, more with
 * one TRSM. BLIS's TRSM packs the triangle at every call and computes a
 * micro-tile as wide as its kernels' (8 or more columns) however few
 * there are: on one core here (n = 2048 and 4096, double, each an L and
 * a U solve) one column took 1.4 and 23 ms by TRSV against 20 and 94 ms
 * by TRSM, two columns about the same either way below 4096, four
 * columns as long by either, eight half as long by TRSM. */
enum { TRSV_BELOW = 4 };

/* B = op(T)^-1 B for the triangle `uplo` of the factors. */
static void triangle(const mlsba__rhs_t *s, char uplo, char trans, char diag,
                     void *b, int64_t w, unsigned threads) {
  if (w >= TRSV_BELOW) {
    mlsba__cpu_trsm(s->prec, 'L', uplo, trans, diag, s->n, w, 1.0, s->a,
                    s->lda, b, s->ldb, threads);
    return;
  }
  size_t column = (size_t)s->ldb * (s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4);
  for (int64_t j = 0; j < w; j++)
    mlsba__cpu_trsv(s->prec, uplo, trans, diag, s->n, s->a, s->lda,
                    (char *)b + (size_t)j * column);
}

void mlsba__rhs_solve(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      unsigned threads) {
  if (s->n == 0 || w == 0)
    return;
  size_t esize = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  void *b = (char *)s->b + (size_t)c * (size_t)s->ldb * esize;
  if (s->ipiv && !s->trans) { /* A = P L U: X = U^-1 L^-1 P^T B */
    swap_rows(s, c, w, 0);
    triangle(s, 'L', 'N', 'U', b, w, threads);
    triangle(s, 'U', 'N', 'N', b, w, threads);
  } else if (s->ipiv) { /* A^T = U^T L^T P^T: X = P L^-T U^-T B */
    triangle(s, 'U', 'T', 'N', b, w, threads);
    triangle(s, 'L', 'T', 'U', b, w, threads);
    swap_rows(s, c, w, 1);
  } else if (s->lower) { /* A = L L^T */
    triangle(s, 'L', 'N', 'N', b, w, threads);
    triangle(s, 'L', 'T', 'N', b, w, threads);
  } else { /* A = U^T U */
    triangle(s, 'U', 'T', 'N', b, w, threads);
    triangle(s, 'U', 'N', 'N', b, w, threads);
  }
}
