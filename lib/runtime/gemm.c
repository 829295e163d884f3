/* C = A x B sliced by columns of B and C, and its verification. */
#include "gemm.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "../core/error.h"

size_t mlsba__gemm_elem(const mlsba_gemm_t *g) {
  return g->precision == MLSBA_PRECISION_DOUBLE ? sizeof(double)
                                                : sizeof(float);
}

int mlsba__gemm_check(const mlsba_gemm_t *g) {
  if (g == NULL)
    return mlsba__fail(MLSBA_EINVAL, "gemm: the problem is NULL");
  if (g->m < 1 || g->n < 1 || g->k < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "gemm: sizes must be >= 1, got m=%lld n=%lld k=%lld",
                       (long long)g->m, (long long)g->n, (long long)g->k);
  /* Every element count must fit comfortably in size_t and int. */
  const int64_t limit = INT64_C(1) << 31;
  if (g->m >= limit || g->n >= limit || g->k >= limit ||
      (double)g->m * (double)(g->n > g->k ? g->n : g->k) >= 0x1p62)
    return mlsba__fail(MLSBA_ERANGE,
                       "gemm: m=%lld n=%lld k=%lld is too large",
                       (long long)g->m, (long long)g->n, (long long)g->k);
  if (g->precision != MLSBA_PRECISION_SINGLE &&
      g->precision != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL, "gemm: unknown precision %d",
                       (int)g->precision);
  if (g->a == NULL || g->b == NULL || g->c == NULL)
    return mlsba__fail(MLSBA_EINVAL, "gemm: matrix %s is NULL",
                       g->a == NULL ? "A" : g->b == NULL ? "B" : "C");
  return 0;
}

const void *mlsba__gemm_b_slice(const mlsba_gemm_t *g, int64_t off) {
  return (const char *)g->b + (size_t)off * (size_t)g->k * mlsba__gemm_elem(g);
}

void *mlsba__gemm_c_slice(const mlsba_gemm_t *g, int64_t off) {
  return (char *)g->c + (size_t)off * (size_t)g->m * mlsba__gemm_elem(g);
}

/* Element (i) of a column-major matrix of either precision, widened. */
static long double at(const mlsba_gemm_t *g, const void *base, size_t i) {
  return g->precision == MLSBA_PRECISION_DOUBLE
             ? (long double)((const double *)base)[i]
             : (long double)((const float *)base)[i];
}

int mlsba_gemm_verify(const mlsba_gemm_t *g, uint64_t seed,
                      double *max_rel_error, int *ok) {
  int err = mlsba__gemm_check(g);
  if (err)
    return err;
  if (max_rel_error == NULL || ok == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_gemm_verify: output is NULL");
  size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
  long double *x = malloc(n * sizeof *x), *bx = malloc(k * sizeof *bx);
  long double *abs_bx = malloc(k * sizeof *abs_bx);
  long double *r = malloc(m * sizeof *r), *scale = malloc(m * sizeof *scale);
  if (!x || !bx || !abs_bx || !r || !scale) {
    err = mlsba__fail(MLSBA_ENOMEM, "mlsba_gemm_verify: out of memory");
    goto done;
  }
  double u = g->precision == MLSBA_PRECISION_DOUBLE ? DBL_EPSILON / 2
                                                    : FLT_EPSILON / 2;
  double bound = 4.0 * (double)k * u, worst = 0;
  uint64_t state = seed;
  for (int trial = 0; trial < 2; trial++) {
    /* x with entries in [1, 2) so that no column of C escapes the check. */
    for (size_t j = 0; j < n; j++) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x[j] = 1 + (long double)(state >> 11) * 0x1p-53L;
    }
    /* bx = B x and |B| x, then r = C x - A (B x), scale = |A| (|B| x). */
    for (size_t p = 0; p < k; p++)
      bx[p] = abs_bx[p] = 0;
    for (size_t j = 0; j < n; j++)
      for (size_t p = 0; p < k; p++) {
        long double b = at(g, g->b, j * k + p);
        bx[p] += b * x[j];
        abs_bx[p] += fabsl(b) * x[j];
      }
    for (size_t i = 0; i < m; i++)
      r[i] = scale[i] = 0;
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < m; i++)
        r[i] += at(g, g->c, j * m + i) * x[j];
    for (size_t p = 0; p < k; p++)
      for (size_t i = 0; i < m; i++) {
        long double a = at(g, g->a, p * m + i);
        r[i] -= a * bx[p];
        scale[i] += fabsl(a) * abs_bx[p];
      }
    for (size_t i = 0; i < m; i++) {
      double e = scale[i] > 0 ? (double)(fabsl(r[i]) / scale[i])
                              : (r[i] == 0 ? 0 : INFINITY);
      if (!(e <= worst)) /* also takes a NaN */
        worst = isnan(e) ? INFINITY : e;
    }
  }
  *max_rel_error = worst;
  *ok = worst <= bound;
done:
  free(x);
  free(bx);
  free(abs_bx);
  free(r);
  free(scale);
  return err;
}
