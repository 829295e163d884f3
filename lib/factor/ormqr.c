/* Q of a QR factorization applied to a matrix, LAPACK's ?ormqr: C = op(Q)
 * C (side L) or C op(Q) (side R), Q = H_1 ... H_k from the reflectors
 * mlsba_geqrf (or LAPACK's ?geqrf) left below R. Blocked as LAPACK's:
 * each block of reflectors becomes one block reflector I - V T V^T (T by
 * LAPACK's ?larft), applied as ?larfb applies it, through two GEMMs and
 * three TRMMs of the cores' kernels.
 *
 * The split between the cores runs along V's rows, not C's free columns:
 * each core owns a range of C's rows (side L; columns for side R) and
 * runs one-thread kernels on its pinned thread of the executor, summing
 * its share of V2^T C2 and subtracting its share of V2 W, so that each
 * core packs only its own rows of V and C, and nothing waits inside a
 * kernel. The parts form the T's in their first run, then the calling
 * thread adds the shares, applies T and updates the block's top rows
 * between two runs: one run a block of reflectors. BLIS's own threads (one call
 * on a thread a core, which share one packed V) wait for each other at spinning
 * barriers many times a call: on a loaded machine each wait lasted a
 * scheduler's time slice, and Q^T C took 20-44 s where one core took 0.1-0.3 s
 * (benchmarks/RESULTS.md). */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"
#include "ormqr.h"
#include "rhs.h"

/* Reflectors in a block: LAPACK's ?ormqr takes 32 (ilaenv's); a wider C
 * takes 64, so that its GEMMs run deeper, while a narrow one keeps 32,
 * because T costs about nb^2 flops a row of V whatever C's width (4 nb
 * flops a row and column of C are the application). */
enum { ORMQR_BLOCK_NARROW = 32, ORMQR_BLOCK_WIDE = 64, ORMQR_WIDE = 64 };

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

/* From this many independent columns of C (side L) or rows (side R) on,
 * the products are split between the cores; fewer stay on the calling
 * thread, as a simulated platform's do. bench-ormqr places it: on this
 * machine's two cores (quiet, Q of 4096 x 512, double) the split lost
 * 5% at 16 columns and 26% at 24, and won 15% at 32 and 20% at 64.
 * mlsba__ormqr_set_split_from() moves it. */
enum { ORMQR_SPLIT_FROM = 32 };

static atomic_llong split_from = ORMQR_SPLIT_FROM;

void mlsba__ormqr_set_split_from(int64_t width) {
  atomic_store(&split_from, width > 0 ? (long long)width : ORMQR_SPLIT_FROM);
}

static unsigned parts_of(mlsba_executor_t *ex, int left, int64_t m, int64_t n) {
  if (free_width(left, m, n) < atomic_load(&split_from))
    return 1;
  return mlsba__crew_parts(ex);
}

size_t mlsba__ormqr_work_bytes(mlsba_executor_t *ex, mlsba_precision_t prec,
                               int left, int64_t m, int64_t n, int64_t k) {
  int64_t nb = block_of(left, m, n, k), fw = free_width(left, m, n);
  int64_t blocks = nb > 0 ? (k + nb - 1) / nb : 0;
  /* T of every block, then W and a partial W a part (nb x n for side L,
   * m x nb for side R): as many parts as the executor has cores, whatever
   * the threshold when the room is used. */
  int64_t parts = mlsba__crew_parts(ex);
  return (size_t)(blocks * nb * nb + (1 + parts) * nb * fw) * esize_of(prec) +
         1;
}

int mlsba__ormqr_check(const char *fn, mlsba_executor_t *ex,
                       mlsba_precision_t prec, char side, char trans, int64_t m,
                       int64_t n, int64_t k, const void *a, int64_t lda,
                       const void *tau, const void *c, int64_t ldc,
                       const int64_t *info) {
  int err = mlsba__factor_check_call(fn, ex, prec);
  if (err || (err = mlsba__lapack_check(fn)))
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

/* One call's state: Q's reflectors, C, the room for the T's and W, and
 * the split. Part t owns C's rows (side L) or columns (side R) [bound[t],
 * bound[t + 1]) for the whole call, so that what it subtracts from them
 * for one block it reads again for the next with no other part between. */
typedef struct {
  mlsba_precision_t prec;
  int left, tran, forward;
  int64_t m, n, k, nb, blocks;
  const char *a;
  int64_t lda;
  const char *tau;
  char *c;
  int64_t ldc;
  char *ts, *w, *partial; /* T of every block; W; a partial W a part */
  unsigned parts;
  int64_t bound[MLSBA__CREW_MAX + 1];
  /* The run in flight: every T formed (form_ts, the first), the block
   * whose W the parts subtract (apply; -1: none), the block whose partial
   * W they compute (sum; -1: none). */
  int form_ts;
  int64_t apply, sum;
} apply_t;

static const void *a_at(const apply_t *s, int64_t i, int64_t j) {
  return s->a + (size_t)(i + j * s->lda) * esize_of(s->prec);
}

static void *c_at(const apply_t *s, int64_t i, int64_t j) {
  return s->c + (size_t)(i + j * s->ldc) * esize_of(s->prec);
}

/* The order of Q, along which the reflectors act. */
static int64_t order_of(const apply_t *s) { return s->left ? s->m : s->n; }

/* The first reflector of the q-th block applied, and the block's size. */
static int64_t block_start(const apply_t *s, int64_t q) {
  return (s->forward ? q : s->blocks - 1 - q) * s->nb;
}

static int64_t block_size(const apply_t *s, int64_t i) {
  return s->k - i < s->nb ? s->k - i : s->nb;
}

static void *t_of(const apply_t *s, int64_t q) {
  return s->ts + (size_t)(q * s->nb * s->nb) * esize_of(s->prec);
}

/* W's shape: ib x n (side L) or m x ib (side R); its leading dimension. */
static int64_t w_ld(const apply_t *s, int64_t ib) {
  return s->left ? ib : s->m;
}

static void *partial_of(const apply_t *s, unsigned t) {
  size_t size = (size_t)(s->nb * free_width(s->left, s->m, s->n));
  return s->partial + (size_t)t * size * esize_of(s->prec);
}

/* Part t's share of V2 = rows [i + ib, order) of the block at i: its
 * first row r0, and how many (0: none). */
static int64_t part_rows(const apply_t *s, unsigned t, int64_t i, int64_t ib,
                         int64_t *r0) {
  int64_t lo = i + ib;
  *r0 = s->bound[t] > lo ? s->bound[t] : lo;
  return s->bound[t + 1] > *r0 ? s->bound[t + 1] - *r0 : 0;
}

/* Row x of C (side L; column for side R) is worked on by every block
 * whose V2 reaches it: min(x / nb, blocks - 1) of them below k, all from
 * k on. */
static double row_weight(const void *user, int64_t x) {
  const apply_t *s = user;
  if (x >= s->k)
    return (double)s->blocks;
  return (double)(x / s->nb < s->blocks - 1 ? x / s->nb : s->blocks - 1);
}

/* rows x cols of x (leading dimension ldx) into y (ldy): copied (how 0),
 * added (1) or subtracted (-1). */
static void combine(mlsba_precision_t prec, int how, int64_t rows, int64_t cols,
                    const void *x, int64_t ldx, void *y, int64_t ldy) {
  for (int64_t j = 0; j < cols; j++) {
    if (prec == MLSBA_PRECISION_DOUBLE) {
      const double *u = (const double *)x + j * ldx;
      double *v = (double *)y + j * ldy;
      for (int64_t i = 0; i < rows; i++)
        v[i] = how == 0 ? u[i] : how > 0 ? v[i] + u[i] : v[i] - u[i];
    } else {
      const float *u = (const float *)x + j * ldx;
      float *v = (float *)y + j * ldy;
      for (int64_t i = 0; i < rows; i++)
        v[i] = how == 0 ? u[i] : how > 0 ? v[i] + u[i] : v[i] - u[i];
    }
  }
}

/* T of the q-th block, from its reflectors [i, i + ib), h = nq - i long. */
static void form_t(const apply_t *s, int64_t q) {
  int64_t i = block_start(s, q);
  int kk = (int)block_size(s, i);
  const void *tau = s->tau + (size_t)i * esize_of(s->prec);
  mlsba__lapack_larft(s->prec, (int)(order_of(s) - i), kk, a_at(s, i, i),
                      (int)s->lda, tau, t_of(s, q), kk);
}

/* Part t's partial W of the q-th block: V2^T C2 (side L) or C2 V2 (side
 * R) over its rows of V2, on one thread. */
static void part_sum(const apply_t *s, unsigned t, int64_t q) {
  int64_t i = block_start(s, q), ib = block_size(s, i), r0;
  int64_t rows = part_rows(s, t, i, ib, &r0);
  if (rows == 0)
    return;
  void *p = partial_of(s, t);
  if (s->left)
    mlsba__cpu_gemm(s->prec, 'T', 'N', ib, s->n, rows, 1.0, a_at(s, r0, i),
                    s->lda, c_at(s, r0, 0), s->ldc, 0.0, p, ib, 1);
  else
    mlsba__cpu_gemm(s->prec, 'N', 'N', s->m, ib, rows, 1.0, c_at(s, 0, r0),
                    s->ldc, a_at(s, r0, i), s->lda, 0.0, p, s->m, 1);
}

/* Part t's rows of C2 take the q-th block's W: C2 -= V2 W (side L) or
 * C2 -= W V2^T (side R), on one thread. */
static void part_subtract(const apply_t *s, unsigned t, int64_t q) {
  int64_t i = block_start(s, q), ib = block_size(s, i), r0;
  int64_t rows = part_rows(s, t, i, ib, &r0);
  if (rows == 0)
    return;
  if (s->left)
    mlsba__cpu_gemm(s->prec, 'N', 'N', rows, s->n, ib, -1.0, a_at(s, r0, i),
                    s->lda, s->w, ib, 1.0, c_at(s, r0, 0), s->ldc, 1);
  else
    mlsba__cpu_gemm(s->prec, 'N', 'T', s->m, rows, ib, -1.0, s->w, s->m,
                    a_at(s, r0, i), s->lda, 1.0, c_at(s, 0, r0), s->ldc, 1);
}

static void run_part(void *user, unsigned t) {
  const apply_t *s = user;
  if (s->form_ts)
    for (int64_t q = t; q < s->blocks; q += s->parts)
      form_t(s, q);
  if (s->apply >= 0)
    part_subtract(s, t, s->apply);
  if (s->sum >= 0)
    part_sum(s, t, s->sum);
}

/* The q-th block finished by the calling thread, between two runs of the
 * parts, as ?larfb finishes it: W = V1^T C1 + the parts' V2^T C2, W =
 * op(T) W, C1 -= V1 W (side L; side R: W = C1 V1 + C2 V2, W = W op(T),
 * C1 -= W V1^T). V1 is the unit lower triangle at (i, i) (what lies
 * above it, R, is not read); the parts subtract V2 W in the next run. */
static void finish_block(const apply_t *s, int64_t q) {
  mlsba_precision_t p = s->prec;
  int64_t i = block_start(s, q), ib = block_size(s, i), ld = w_ld(s, ib), r0;
  int64_t rows = s->left ? ib : s->m, cols = s->left ? s->n : ib;
  char side = s->left ? 'L' : 'R', op = s->tran ? 'T' : 'N';
  void *c1 = s->left ? c_at(s, i, 0) : c_at(s, 0, i), *x = partial_of(s, 0);
  combine(p, 0, rows, cols, c1, s->ldc, s->w, ld);
  mlsba__cpu_trmm(p, side, 'L', s->left ? 'T' : 'N', 'U', rows, cols, 1.0,
                  a_at(s, i, i), s->lda, s->w, ld, 1);
  for (unsigned t = 0; t < s->parts; t++)
    if (part_rows(s, t, i, ib, &r0) > 0)
      combine(p, 1, rows, cols, partial_of(s, t), ld, s->w, ld);
  mlsba__cpu_trmm(p, side, 'U', op, 'N', rows, cols, 1.0, t_of(s, q), ib, s->w,
                  ld, 1);
  combine(p, 0, rows, cols, s->w, ld, x, ld);
  mlsba__cpu_trmm(p, side, 'L', s->left ? 'N' : 'T', 'U', rows, cols, 1.0,
                  a_at(s, i, i), s->lda, x, ld, 1);
  combine(p, -1, rows, cols, x, ld, c1, s->ldc);
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
               /* Q = H_1 ... H_k: Q^T C and C Q take H_1 first, Q C and
                * C Q^T H_k first (the blocks in the same order, as
                * LAPACK's ?ormqr). */
               .forward = left == tran,
               .m = m,
               .n = n,
               .k = k,
               .nb = block_of(left, m, n, k),
               .a = a,
               .lda = lda,
               .tau = tau,
               .c = c,
               .ldc = ldc,
               .ts = work,
               .parts = parts_of(ex, left, m, n)};
  s.blocks = (k + s.nb - 1) / s.nb;
  s.w = s.ts + (size_t)(s.blocks * s.nb * s.nb) * esize_of(prec);
  s.partial = s.w + (size_t)(s.nb * free_width(left, m, n)) * esize_of(prec);
  /* The partials are written with beta 0; zeroed once all the same, so
   * that no kernel ever reads a NaN the room held before. */
  memset(s.partial, 0,
         (size_t)(s.parts * s.nb * free_width(left, m, n)) * esize_of(prec));
  mlsba__crew_bounds(s.bound, s.parts, order_of(&s), row_weight, &s);
  mlsba__crew_t crew;
  mlsba__crew_start(&crew, ex, s.parts, run_part, &s);
  /* Run q forms every T (the first: part t those of blocks t, t + parts,
   * ..., each into its own room, through the library's LAPACK, whose
   * ?larft several cores may call at once, test_lapack), subtracts block
   * q - 1's W from the parts' rows and sums their share of block q's;
   * the calling thread finishes block q between run q and run q + 1.
   * BLIS's TRMM beside GEMMs on other cores is reentrant (test
   * cpu_reentrant), but the TRMMs stay with the calling thread all the
   * same: they act on the block's top rows, which no part owns. */
  for (int64_t q = 0; q <= s.blocks; q++) {
    s.form_ts = q == 0;
    s.apply = q - 1;
    s.sum = q < s.blocks ? q : -1;
    mlsba__crew_run(&crew);
    if (q < s.blocks)
      finish_block(&s, q);
  }
  mlsba__crew_end(&crew);
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
  void *work = malloc(mlsba__ormqr_work_bytes(ex, prec, left, m, n, k));
  if (work == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", fn);
  mlsba__ormqr_apply(ex, prec, side, trans, m, n, k, a, lda, tau, c, ldc, work);
  free(work);
  return 0;
}
