/* The hybrid factorizations' public calls (LU, Cholesky, QR): the arguments
 * checked as LAPACK would, the options with their defaults, the problem with
 * its operation's table (ops.c), handed to the driver (drive.c). The driver is
 * right-looking, blocked, with lookahead: panel 0 is factorized alone; then
 * every step splits the update after panel k between the devices (plan.c,
 * split.c) and runs it on the executor, the core that factorizes panels taking
 * the next panel's columns first and factorizing that panel before the rest of
 * its share, so that the panel overlaps the others' update. On a simulated
 * platform the devices take virtual time and the calling thread computes the
 * numbers. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "driver.h"

static const char *const split_names[] = {"fpm", "constant-ratio",
                                          "fixed-slice", "kernel-slice"};

const char *mlsba_factor_split_name(mlsba_factor_split_t split) {
  return (unsigned)split < MLSBA_FACTOR_SPLIT_COUNT ? split_names[split] : NULL;
}

void mlsba_factor_opts_init(mlsba_factor_opts_t *opts) {
  if (opts == NULL)
    return;
  memset(opts, 0, sizeof *opts);
  opts->block = 0; /* mlsba_factor_default_block() */
  opts->split = MLSBA_FACTOR_SPLIT_FPM;
  opts->compute = 1;
  opts->model_cache = 1;
}

void mlsba_factor_report_free(mlsba_factor_report_t *r) {
  if (r == NULL)
    return;
  free(r->dropped);
  free(r->units);
  free(r->step_seconds);
  free(r->panel_seconds);
  free(r->share);
  free(r->time);
  free(r->ahead_device);
  r->ahead_device = NULL;
  r->dropped = NULL;
  r->units = NULL;
  r->step_seconds = r->panel_seconds = r->time = NULL;
  r->share = NULL;
}

int mlsba__factor_check_call(const char *fn, const mlsba_executor_t *ex,
                             mlsba_precision_t prec) {
  if (ex == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: the executor is NULL", fn);
  if (prec != MLSBA_PRECISION_SINGLE && prec != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: precision %d is neither single nor double", fn,
                       (int)prec);
  return 0;
}

int mlsba__factor_check_count(const char *fn, const char *name, int64_t v) {
  if (v < 0 || v > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s %lld is outside 0..%d", fn, name,
                       (long long)v, INT_MAX);
  return 0;
}

int mlsba__factor_check_ld(const char *fn, const char *name, int64_t ld,
                           int64_t rows) {
  if (ld < (rows > 1 ? rows : 1) || ld > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: %s %lld must be at least max(1, %lld) (and at "
                       "most %d)",
                       fn, name, (long long)ld, (long long)rows, INT_MAX);
  return 0;
}

int mlsba__factor_check_trans(const char *fn, char trans) {
  if (trans != 'N' && trans != 'n' && trans != 'T' && trans != 't' &&
      trans != 'C' && trans != 'c')
    return mlsba__fail(
        MLSBA_EINVAL, "%s: trans must be 'N', 'T' or 'C', got '%c'", fn, trans);
  return 0;
}

/* The arguments LAPACK would check, with a message naming the bad one;
 * sizes within LAPACK's int. */
static int check_args(const char *fn, mlsba_executor_t *ex,
                      mlsba_precision_t prec, int64_t m, int64_t n,
                      const void *a, int64_t lda, const void *info,
                      const mlsba_factor_opts_t *o) {
  int err = mlsba__factor_check_call(fn, ex, prec);
  if (err || (err = mlsba__lapack_check(fn)))
    return err;
  if (m < 0 || n < 0 || m > INT_MAX || n > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: the size %lld x %lld is outside 0.."
                       "%d",
                       fn, (long long)m, (long long)n, INT_MAX);
  if ((err = mlsba__factor_check_ld(fn, "lda", lda, m)))
    return err;
  if (a == NULL && m > 0 && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix is NULL", fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  if (o->block < 1 || o->block > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: block %lld must be at least 1", fn,
                       (long long)o->block);
  if ((unsigned)o->split >= MLSBA_FACTOR_SPLIT_COUNT)
    return mlsba__fail(MLSBA_EINVAL, "%s: unknown split %d", fn, (int)o->split);
  if ((unsigned)o->solve >= MLSBA_FACTOR_SOLVE_COUNT)
    return mlsba__fail(MLSBA_EINVAL, "%s: unknown solve placement %d", fn,
                       (int)o->solve);
  if ((unsigned)o->ways >= MLSBA_FACTOR_WAYS_COUNT)
    return mlsba__fail(MLSBA_EINVAL, "%s: unknown ways %d", fn, (int)o->ways);
  if (!(o->sim_unit_flops >= 0) || o->sim_unit_flops > 1e30)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: sim_unit_flops %g must be in [0, "
                       "1e30]",
                       fn, o->sim_unit_flops);
  if (o->model_dir && o->model_dir[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "%s: the model directory is \"\"", fn);
  return 0;
}

/* The block when the caller leaves it to the library: min(m, n) / 16 in
 * multiples of 64, from 128 to 192 in double precision and to 256 in
 * single. A deeper product runs faster when both cores compute (the
 * trailing matrix is read and written once per panel), worth the wider
 * panels from about 16 steps on: at n = 4096 on this machine's two cores
 * mlsba_getrf and mlsba_potrf ran at 0.92-0.94 of OpenBLAS's with 128,
 * 0.93-1.01 with 192, 0.89-0.95 with 256 (double); in single precision
 * the update's product on one core ran at 75 GFLOPS 128 deep, 100 at 256. */
int64_t mlsba_factor_default_block(mlsba_precision_t prec, int64_t m,
                                   int64_t n) {
  int64_t k = m < n ? m : n, nb = k / 16 / 64 * 64;
  int64_t most = prec == MLSBA_PRECISION_DOUBLE ? 192 : 256;
  return nb < 128 ? 128 : nb > most ? most : nb;
}

/* QR's panel weighs 1.5x LU's at the same block (mlsba/factor.h): 128
 * ran faster than LU's 192 and 256 at n = 4096 on this machine's cores
 * and lifted the simulated desktop's PPE from 0.87 to 0.92 at n = 8400
 * (benchmarks/RESULTS.md). Below 1024 columns, 64: the panel (3 nb^2 h
 * flops on one core) hides behind the update of the w trailing columns
 * (4 nb h w on every core) only while nb stays below about w / 4, and a
 * tall-skinny matrix has few columns to update: at 20000 x 500 the
 * panels were 83-86% of the run at 128, which 64 ran 2x faster (busy
 * machine, alternating runs). */
int64_t mlsba_geqrf_default_block(mlsba_precision_t prec, int64_t m,
                                  int64_t n) {
  (void)prec;
  (void)m;
  return n < 1024 ? 64 : 128;
}

/* Options with the defaults where the caller gave none. */
static mlsba_factor_opts_t options_of(const mlsba_factor_opts_t *opts,
                                      mlsba_precision_t prec, int64_t m,
                                      int64_t n) {
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  if (opts)
    o = *opts;
  if (o.block == 0)
    o.block = mlsba_factor_default_block(prec, m, n);
  return o;
}

/* The panels' width: the block, at most min(m, n) (one panel then), so
 * that the scratch sized by it is sized by the matrix (a block of
 * INT_MAX on an 8 x 8 LU asked for 128 GiB). */
static int64_t width_of(const mlsba_factor_opts_t *o, int64_t m, int64_t n) {
  int64_t k = m < n ? m : n;
  return o->block < k ? o->block : k > 0 ? k : 1;
}

/* A call's entry, for the report's call_s and kernels_s: the clock, and
 * whether the cores' kernels had been chosen (the choice may fall inside
 * a call: the first use of the kernels in a process without cores in
 * its executor). */
typedef struct {
  double t0;
  int chosen;
} call_entry_t;

static call_entry_t call_entry(void) {
  return (call_entry_t){mlsba__now(), mlsba__cpu_kernel_choice_made()};
}

static void call_exit(const call_entry_t *e, mlsba_factor_report_t *R) {
  if (R == NULL)
    return;
  if (!e->chosen && mlsba__cpu_kernel_choice_made())
    R->kernels_s = mlsba__cpu_kernel_choice_seconds();
  R->call_s = mlsba__now() - e->t0;
}

static int factorize(mlsba_executor_t *ex, mlsba__factor_problem_t *P,
                     const mlsba_factor_opts_t *o,
                     mlsba_factor_report_t *report) {
  mlsba_factor_report_t local;
  mlsba_factor_report_t *R = report ? report : &local;
  memset(R, 0, sizeof *R);
  mlsba__factor_scratch_open(P, ex);
  int err = mlsba__factor_drive(ex, P, o, R);
  mlsba__factor_scratch_close(P, ex);
  if (report == NULL)
    mlsba_factor_report_free(&local);
  return err;
}

int mlsba_getrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                   int64_t n, void *a, int64_t lda, int64_t *ipiv,
                   int64_t *info, const mlsba_factor_opts_t *opts,
                   mlsba_factor_report_t *report) {
  call_entry_t entry = call_entry();
  if (report)
    memset(report, 0, sizeof *report);
  mlsba_factor_opts_t o = options_of(opts, prec, m, n);
  int err = check_args("mlsba_getrf", ex, prec, m, n, a, lda, info, &o);
  if (err)
    return err;
  int64_t k = m < n ? m : n;
  if (ipiv == NULL && k > 0)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_getrf: ipiv is NULL");
  *info = 0;
  mlsba__factor_problem_t P = {.ops = &mlsba__factor_getrf_ops,
                               .op = MLSBA__FACTOR_LU,
                               .prec = prec,
                               .m = m,
                               .n = n,
                               .lda = lda,
                               .nb = width_of(&o, m, n),
                               .a = a};
  P.ipiv = calloc(k > 0 ? (size_t)k : 1, sizeof *P.ipiv);
  if (P.ipiv == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_getrf: out of memory");
  size_t jb = (size_t)(o.block < k ? o.block : k);
  P.linv = malloc(2 * jb * jb * mlsba__factor_esize(&P) +
                  1); /* NULL: the update solves */
  err = factorize(ex, &P, &o, report);
  call_exit(&entry, report);
  free(P.linv);
  if (!err) {
    for (int64_t i = 0; i < k; i++)
      ipiv[i] = P.ipiv[i];
    *info = P.info;
  }
  free(P.ipiv);
  return err;
}

int mlsba_getrf(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                int64_t n, void *a, int64_t lda, int64_t *ipiv, int64_t *info) {
  return mlsba_getrf_ex(ex, prec, m, n, a, lda, ipiv, info, NULL, NULL);
}

int mlsba_potrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                   int64_t n, void *a, int64_t lda, int64_t *info,
                   const mlsba_factor_opts_t *opts,
                   mlsba_factor_report_t *report) {
  call_entry_t entry = call_entry();
  if (report)
    memset(report, 0, sizeof *report);
  mlsba_factor_opts_t o = options_of(opts, prec, n, n);
  int err = check_args("mlsba_potrf", ex, prec, n, n, a, lda, info, &o);
  if (err)
    return err;
  int lower = uplo == 'L' || uplo == 'l';
  if (!lower && uplo != 'U' && uplo != 'u')
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_potrf: uplo must be 'L' or 'U', "
                       "got '%c'",
                       uplo);
  *info = 0;
  mlsba__factor_problem_t P = {.ops = lower ? &mlsba__factor_potrf_lower_ops
                                            : &mlsba__factor_potrf_upper_ops,
                               .op = lower ? MLSBA__FACTOR_CHOL_LOWER
                                           : MLSBA__FACTOR_CHOL_UPPER,
                               .prec = prec,
                               .m = n,
                               .n = n,
                               .lda = lda,
                               .nb = width_of(&o, n, n),
                               .a = a};
  err = factorize(ex, &P, &o, report);
  call_exit(&entry, report);
  if (!err)
    *info = P.info;
  return err;
}

int mlsba_potrf(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                int64_t n, void *a, int64_t lda, int64_t *info) {
  return mlsba_potrf_ex(ex, prec, uplo, n, a, lda, info, NULL, NULL);
}

int mlsba_geqrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                   int64_t n, void *a, int64_t lda, void *tau, int64_t *info,
                   const mlsba_factor_opts_t *opts,
                   mlsba_factor_report_t *report) {
  call_entry_t entry = call_entry();
  if (report)
    memset(report, 0, sizeof *report);
  mlsba_factor_opts_t o = options_of(opts, prec, m, n);
  if (opts == NULL || opts->block == 0)
    o.block = mlsba_geqrf_default_block(prec, m, n);
  int err = check_args("mlsba_geqrf", ex, prec, m, n, a, lda, info, &o);
  if (err)
    return err;
  int64_t k = m < n ? m : n;
  if (tau == NULL && k > 0)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_geqrf: tau is NULL");
  mlsba__factor_problem_t P = {.ops = &mlsba__factor_geqrf_ops,
                               .op = MLSBA__FACTOR_QR,
                               .prec = prec,
                               .m = m,
                               .n = n,
                               .lda = lda,
                               .nb = o.block,
                               .a = a,
                               .tau = tau};
  /* An update without memory for its product falls back on the stack,
   * a slice of columns at a time (qr.c): one column of the block must
   * fit. */
  size_t es = mlsba__factor_esize(&P);
  if ((size_t)o.block * es > MLSBA__QR_STACK_BYTES)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_geqrf: block %lld must be at most %zu",
                       (long long)o.block, MLSBA__QR_STACK_BYTES / es);
  *info = 0;
  P.tfac = malloc(mlsba__qr_room(&P));
  if (P.tfac == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_geqrf: out of memory");
  err = factorize(ex, &P, &o, report);
  call_exit(&entry, report);
  free(P.tfac);
  return err;
}

int mlsba_geqrf(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                int64_t n, void *a, int64_t lda, void *tau, int64_t *info) {
  return mlsba_geqrf_ex(ex, prec, m, n, a, lda, tau, info, NULL, NULL);
}
