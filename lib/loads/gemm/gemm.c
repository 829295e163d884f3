/* C = A x B sliced by columns of B and C, and its verification. */
#include "gemm.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/load.h"
#ifdef MLSBA_HAVE_OPENCL
#include "mlsba/opencl.h"
#endif

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
    return mlsba__fail(MLSBA_ERANGE, "gemm: m=%lld n=%lld k=%lld is too large",
                       (long long)g->m, (long long)g->n, (long long)g->k);
  if (g->precision != MLSBA_PRECISION_SINGLE &&
      g->precision != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL, "gemm: unknown precision %d",
                       (int)g->precision);
  if (g->a == NULL || g->b == NULL || g->c == NULL)
    return mlsba__fail(MLSBA_EINVAL, "gemm: matrix %s is NULL",
                       g->a == NULL   ? "A"
                       : g->b == NULL ? "B"
                                      : "C");
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

/* Relative error of one computed value against its reference, scaled by
 * what its rounding errors can add up to; a NaN or a nonzero error on a
 * zero scale counts as infinite. */
static double relative(long double computed, long double ref,
                       long double scale) {
  long double diff = fabsl(computed - ref);
  if (isnan(diff))
    return INFINITY;
  if (scale > 0)
    return (double)(diff / scale);
  return diff == 0 ? 0 : INFINITY;
}

/* Up to this many multiply-adds, every column is checked element by
 * element; above, a sample of columns is, plus a check of all columns at
 * once. */
#define FULL_CHECK_FLOPS 0x1p27
#define SAMPLED_COLUMNS 64

/* Element-wise check of column j: c_ij against sum_p a_ip b_pj in long
 * double, relative to sum_p |a_ip| |b_pj|. */
static double check_column(const mlsba_gemm_t *g, size_t j, long double *ref,
                           long double *scale) {
  size_t m = (size_t)g->m, k = (size_t)g->k;
  for (size_t i = 0; i < m; i++)
    ref[i] = scale[i] = 0;
  for (size_t p = 0; p < k; p++) {
    long double b = at(g, g->b, j * k + p), ab = fabsl(b);
    for (size_t i = 0; i < m; i++) {
      long double a = at(g, g->a, p * m + i);
      ref[i] += a * b;
      scale[i] += fabsl(a) * ab;
    }
  }
  double worst = 0;
  for (size_t i = 0; i < m; i++) {
    double e = relative(at(g, g->c, j * m + i), ref[i], scale[i]);
    worst = e > worst ? e : worst;
  }
  return worst;
}

/* Freivalds: C x against A (B x) for x in [1, 2)^n, row by row relative
 * to |A| (|B| x). Touches every column of C at O(mn + mk + kn) cost, so a
 * column left uncomputed or written in the wrong place shows. */
static double check_all_columns(const mlsba_gemm_t *g, uint64_t *state,
                                long double *x, long double *bx,
                                long double *abs_bx, long double *r,
                                long double *scale) {
  size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
  for (size_t j = 0; j < n; j++) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    x[j] = 1 + (long double)(*state >> 11) * 0x1p-53L;
  }
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
  double worst = 0;
  for (size_t p = 0; p < k; p++)
    for (size_t i = 0; i < m; i++) {
      long double a = at(g, g->a, p * m + i);
      r[i] -= a * bx[p];
      scale[i] += fabsl(a) * abs_bx[p];
    }
  for (size_t i = 0; i < m; i++) {
    double e = relative(r[i], 0, scale[i]);
    worst = e > worst ? e : worst;
  }
  return worst;
}

int mlsba_gemm_verify(const mlsba_gemm_t *g, uint64_t seed,
                      double *max_rel_error, int *ok) {
  int err = mlsba__gemm_check(g);
  if (err)
    return err;
  if (max_rel_error == NULL || ok == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_gemm_verify: output is NULL");
  size_t m = (size_t)g->m, n = (size_t)g->n, k = (size_t)g->k;
  size_t rows = m > k ? m : k;
  long double *x = malloc(n * sizeof *x), *bx = malloc(k * sizeof *bx);
  long double *abs_bx = malloc(k * sizeof *abs_bx);
  long double *r = malloc(rows * sizeof *r);
  long double *scale = malloc(rows * sizeof *scale);
  if (!x || !bx || !abs_bx || !r || !scale) {
    err = mlsba__fail(MLSBA_ENOMEM, "mlsba_gemm_verify: out of memory");
    goto done;
  }
  double u = g->precision == MLSBA_PRECISION_DOUBLE ? DBL_EPSILON / 2
                                                    : FLT_EPSILON / 2;
  uint64_t state = seed;
  double worst = 0;
  if ((double)m * (double)n * (double)k <= FULL_CHECK_FLOPS) {
    for (size_t j = 0; j < n; j++) {
      double e = check_column(g, j, r, scale);
      worst = e > worst ? e : worst;
    }
  } else {
    for (size_t s = 0; s < SAMPLED_COLUMNS && s < n; s++) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t j = s == 0 ? 0 : s == 1 ? n - 1 : (size_t)(state >> 33) % n;
      double e = check_column(g, j, r, scale);
      worst = e > worst ? e : worst;
    }
    double e = check_all_columns(g, &state, x, bx, abs_bx, r, scale);
    worst = e > worst ? e : worst;
  }
  *max_rel_error = worst;
  *ok = worst <= 4.0 * (double)k * u;
done:
  free(x);
  free(bx);
  free(abs_bx);
  free(r);
  free(scale);
  return err;
}

int mlsba_load_gemm(const mlsba_gemm_t *g, mlsba_load_t **out) {
  int err = out ? mlsba__gemm_check(g)
                : mlsba__fail(MLSBA_EINVAL, "mlsba_load_gemm: load is NULL");
  if (err)
    return err;
  void *copy;
  if ((err = mlsba__load_create_kept("mlsba_load_gemm", "gemm", g->n, g,
                                     sizeof *g, out, &copy)) != 0)
    return err;
  mlsba_load_t *w = *out;
  const char *prec =
      g->precision == MLSBA_PRECISION_DOUBLE ? "double" : "single";
  char text[128];
  snprintf(text, sizeof text, "precision=%s m=%lld k=%lld", prec,
           (long long)g->m, (long long)g->k);
  mlsba_load_set_shape(w, text);
  /* A share of columns crosses a host link as B's columns in and C's out. */
  mlsba_load_set_unit_bytes(
      w, (double)(g->m + g->k) *
             (g->precision == MLSBA_PRECISION_DOUBLE ? 8.0 : 4.0));
  /* The file names of the models saved before loads were general. */
  snprintf(text, sizeof text, "gemm-%s-m%lld-k%lld", prec, (long long)g->m,
           (long long)g->k);
  mlsba__load_set_tag(w, text);
  mlsba_load_set_cpu(w, mlsba__gemm_blis, copy);
#ifdef MLSBA_HAVE_OPENCL
  mlsba_load_set_opencl(w, mlsba__gemm_clblast_ops(), copy);
#endif
  return 0;
}
