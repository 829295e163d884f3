/* Q of a QR factorization applied to a matrix, LAPACK's ?ormqr: C = op(Q)
 * C (side L) or C op(Q) (side R), Q = H_1 ... H_k from the reflectors
 * mlsba_geqrf (or LAPACK's ?geqrf) left below R. Blocked as LAPACK's:
 * each block of reflectors becomes one block reflector I - V T V^T (T by
 * LAPACK's ?larft), applied as ?larfb applies it, through two GEMMs and
 * three TRMMs of the cores' kernels. The columns of C (side L) or its rows
 * (side R) are independent, so the split between the cores is the solves'
 * (solves.c): the calling thread runs each product with a thread a core,
 * which share one packed copy of V, from ORMQR_THREADED_FROM columns or
 * rows on; fewer stay on one thread, as a simulated platform's do. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"
#include "ormqr.h"
#include "rhs.h"

/* LAPACK (Fortran): the string lengths are the hidden last arguments. */
void dlarft_(const char *direct, const char *storev, const int *n, const int *k,
             const double *v, const int *ldv, const double *tau, double *t,
             const int *ldt, size_t direct_len, size_t storev_len);
void slarft_(const char *direct, const char *storev, const int *n, const int *k,
             const float *v, const int *ldv, const float *tau, float *t,
             const int *ldt, size_t direct_len, size_t storev_len);

/* Reflectors in a block: LAPACK's ?ormqr takes 32 (ilaenv's); a wider C
 * takes 64, so that its GEMMs run deeper, while a narrow one keeps 32,
 * because T costs about nb^2 flops a row of V whatever C's width (4 nb
 * flops a row and column of C are the application). */
enum { ORMQR_BLOCK_NARROW = 32, ORMQR_BLOCK_WIDE = 64, ORMQR_WIDE = 64 };

/* From this many independent columns (or rows) on, the products run on
 * every core; fewer on the calling thread alone: a GEMM's micro-tile is
 * 8 columns or more wide on this machine's kernels, so a thread with
 * fewer than two of them to compute waits for the other's packing. */
enum { ORMQR_THREADED_FROM = 16 };

static size_t esize_of(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

/* The width of C along which the reflectors do not act: its columns for
 * side L, its rows for side R. */
static int64_t free_width(int left, int64_t m, int64_t n) {
  return left ? n : m;
}

static int64_t block_of(int left, int64_t m, int64_t n, int64_t k) {
  int64_t nb = free_width(left, m, n) >= ORMQR_WIDE ? ORMQR_BLOCK_WIDE
                                                    : ORMQR_BLOCK_NARROW;
  return nb < k ? nb : k;
}

size_t mlsba__ormqr_work_bytes(mlsba_precision_t prec, int left, int64_t m,
                               int64_t n, int64_t k) {
  int64_t nb = block_of(left, m, n, k);
  /* T (nb x nb), then W (nb x n for side L, m x nb for side R). */
  return (size_t)(nb * nb + nb * free_width(left, m, n)) * esize_of(prec) + 1;
}

int mlsba__ormqr_check(const char *fn, mlsba_executor_t *ex,
                       mlsba_precision_t prec, char side, char trans, int64_t m,
                       int64_t n, int64_t k, const void *a, int64_t lda,
                       const void *tau, const void *c, int64_t ldc,
                       const int64_t *info) {
  int err = mlsba__factor_check_call(fn, ex, prec);
  if (err)
    return err;
  int left = side == 'L' || side == 'l';
  if (!left && side != 'R' && side != 'r')
    return mlsba__fail(MLSBA_EINVAL, "%s: side must be 'L' or 'R', got '%c'",
                       fn, side);
  if ((err = mlsba__factor_check_trans(fn, trans)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "m", m)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "n", n)))
    return err;
  int64_t nq = left ? m : n; /* the order of Q */
  if (k < 0 || k > nq)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: k %lld is outside 0..%lld (the order of Q, %s)", fn,
                       (long long)k, (long long)nq, left ? "m" : "n");
  if ((err = mlsba__factor_check_ld(fn, "lda", lda, nq)))
    return err;
  if ((err = mlsba__factor_check_ld(fn, "ldc", ldc, m)))
    return err;
  int empty = m == 0 || n == 0 || k == 0;
  if (a == NULL && !empty)
    return mlsba__fail(MLSBA_EINVAL, "%s: the reflectors a are NULL", fn);
  if (tau == NULL && !empty)
    return mlsba__fail(MLSBA_EINVAL, "%s: tau is NULL", fn);
  if (c == NULL && m > 0 && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix c is NULL", fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  return 0;
}

/* One call's state: Q's reflectors, C, and the room for T and W. */
typedef struct {
  mlsba_precision_t prec;
  int left, tran;
  int64_t m, n, k, nb;
  const char *a;
  int64_t lda;
  const char *tau;
  char *c;
  int64_t ldc;
  char *t, *w;
  unsigned threads;
} apply_t;

static const void *a_at(const apply_t *s, int64_t i, int64_t j) {
  return s->a + (size_t)(i + j * s->lda) * esize_of(s->prec);
}

static void *c_at(const apply_t *s, int64_t i, int64_t j) {
  return s->c + (size_t)(i + j * s->ldc) * esize_of(s->prec);
}

/* rows x cols from x (leading dimension ldx) into y (ldy), or, with
 * subtract, y -= x. */
static void copy_or_subtract(mlsba_precision_t prec, int subtract, int64_t rows,
                             int64_t cols, const void *x, int64_t ldx, void *y,
                             int64_t ldy) {
  for (int64_t j = 0; j < cols; j++) {
    if (prec == MLSBA_PRECISION_DOUBLE) {
      const double *u = (const double *)x + j * ldx;
      double *v = (double *)y + j * ldy;
      for (int64_t i = 0; i < rows; i++)
        v[i] = subtract ? v[i] - u[i] : u[i];
    } else {
      const float *u = (const float *)x + j * ldx;
      float *v = (float *)y + j * ldy;
      for (int64_t i = 0; i < rows; i++)
        v[i] = subtract ? v[i] - u[i] : u[i];
    }
  }
}

/* T of reflectors [i, i + ib), whose vectors are h = nq - i long. */
static void form_t(const apply_t *s, int64_t i, int64_t ib, int64_t h) {
  int hh = (int)h, kk = (int)ib, lda = (int)s->lda;
  const void *tau = s->tau + (size_t)i * esize_of(s->prec);
  if (s->prec == MLSBA_PRECISION_DOUBLE)
    dlarft_("F", "C", &hh, &kk, a_at(s, i, i), &lda, tau, (double *)s->t, &kk,
            1, 1);
  else
    slarft_("F", "C", &hh, &kk, a_at(s, i, i), &lda, tau, (float *)s->t, &kk, 1,
            1);
}

/* Side L: rows [i, m) of C take H or H^T, H = I - V T V^T the block of
 * reflectors [i, i + ib), as ?larfb computes it through W (ib x n):
 * W = V1^T C1 + V2^T C2, W = op(T) W, C2 -= V2 W, C1 -= V1 W. V1 is the
 * unit lower triangle at (i, i) (what lies above it, R, is not read). */
static void apply_left(const apply_t *s, int64_t i, int64_t ib) {
  mlsba_precision_t p = s->prec;
  int64_t n = s->n, h2 = s->m - i - ib;
  unsigned th = s->threads;
  copy_or_subtract(p, 0, ib, n, c_at(s, i, 0), s->ldc, s->w, ib);
  mlsba__cpu_trmm(p, 'L', 'L', 'T', 'U', ib, n, 1.0, a_at(s, i, i), s->lda,
                  s->w, ib, th);
  if (h2 > 0)
    mlsba__cpu_gemm(p, 'T', 'N', ib, n, h2, 1.0, a_at(s, i + ib, i), s->lda,
                    c_at(s, i + ib, 0), s->ldc, 1.0, s->w, ib, th);
  mlsba__cpu_trmm(p, 'L', 'U', s->tran ? 'T' : 'N', 'N', ib, n, 1.0, s->t, ib,
                  s->w, ib, th);
  if (h2 > 0)
    mlsba__cpu_gemm(p, 'N', 'N', h2, n, ib, -1.0, a_at(s, i + ib, i), s->lda,
                    s->w, ib, 1.0, c_at(s, i + ib, 0), s->ldc, th);
  mlsba__cpu_trmm(p, 'L', 'L', 'N', 'U', ib, n, 1.0, a_at(s, i, i), s->lda,
                  s->w, ib, th);
  copy_or_subtract(p, 1, ib, n, s->w, ib, c_at(s, i, 0), s->ldc);
}

/* Side R: columns [i, n) of C take H or H^T through W (m x ib): W = C1
 * V1 + C2 V2, W = W op(T), C2 -= W V2^T, C1 -= W V1^T. */
static void apply_right(const apply_t *s, int64_t i, int64_t ib) {
  mlsba_precision_t p = s->prec;
  int64_t m = s->m, h2 = s->n - i - ib;
  unsigned th = s->threads;
  copy_or_subtract(p, 0, m, ib, c_at(s, 0, i), s->ldc, s->w, m);
  mlsba__cpu_trmm(p, 'R', 'L', 'N', 'U', m, ib, 1.0, a_at(s, i, i), s->lda,
                  s->w, m, th);
  if (h2 > 0)
    mlsba__cpu_gemm(p, 'N', 'N', m, ib, h2, 1.0, c_at(s, 0, i + ib), s->ldc,
                    a_at(s, i + ib, i), s->lda, 1.0, s->w, m, th);
  mlsba__cpu_trmm(p, 'R', 'U', s->tran ? 'T' : 'N', 'N', m, ib, 1.0, s->t, ib,
                  s->w, m, th);
  if (h2 > 0)
    mlsba__cpu_gemm(p, 'N', 'T', m, h2, ib, -1.0, s->w, m, a_at(s, i + ib, i),
                    s->lda, 1.0, c_at(s, 0, i + ib), s->ldc, th);
  mlsba__cpu_trmm(p, 'R', 'L', 'T', 'U', m, ib, 1.0, a_at(s, i, i), s->lda,
                  s->w, m, th);
  copy_or_subtract(p, 1, m, ib, s->w, m, c_at(s, 0, i), s->ldc);
}

void mlsba__ormqr_apply(mlsba_executor_t *ex, mlsba_precision_t prec, char side,
                        char trans, int64_t m, int64_t n, int64_t k,
                        const void *a, int64_t lda, const void *tau, void *c,
                        int64_t ldc, void *work) {
  if (m == 0 || n == 0 || k == 0)
    return;
  int left = side == 'L' || side == 'l';
  int tran = trans != 'N' && trans != 'n';
  apply_t s = {.prec = prec,
               .left = left,
               .tran = tran,
               .m = m,
               .n = n,
               .k = k,
               .nb = block_of(left, m, n, k),
               .a = a,
               .lda = lda,
               .tau = tau,
               .c = c,
               .ldc = ldc,
               .t = work,
               .threads = free_width(left, m, n) >= ORMQR_THREADED_FROM
                              ? mlsba__solve_threads(ex)
                              : 1};
  s.w = s.t + (size_t)(s.nb * s.nb) * esize_of(prec);
  /* Q = H_1 ... H_k: Q^T C and C Q take H_1 first, Q C and C Q^T H_k
   * first (the blocks in the same order, as LAPACK's ?ormqr). */
  int forward = left == tran;
  int64_t nq = left ? m : n, blocks = (k + s.nb - 1) / s.nb;
  for (int64_t b = 0; b < blocks; b++) {
    int64_t i = (forward ? b : blocks - 1 - b) * s.nb;
    int64_t ib = k - i < s.nb ? k - i : s.nb;
    form_t(&s, i, ib, nq - i);
    if (left)
      apply_left(&s, i, ib);
    else
      apply_right(&s, i, ib);
  }
}

int mlsba_ormqr(mlsba_executor_t *ex, mlsba_precision_t prec, char side,
                char trans, int64_t m, int64_t n, int64_t k, const void *a,
                int64_t lda, const void *tau, void *c, int64_t ldc,
                int64_t *info) {
  const char *fn = "mlsba_ormqr";
  int err = mlsba__ormqr_check(fn, ex, prec, side, trans, m, n, k, a, lda, tau,
                               c, ldc, info);
  if (err)
    return err;
  *info = 0;
  if (m == 0 || n == 0 || k == 0)
    return 0;
  int left = side == 'L' || side == 'l';
  void *work = malloc(mlsba__ormqr_work_bytes(prec, left, m, n, k));
  if (work == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", fn);
  mlsba__ormqr_apply(ex, prec, side, trans, m, n, k, a, lda, tau, c, ldc, work);
  free(work);
  return 0;
}
