/* libFuzzer target: the factorizations' options and shapes. The bytes
 * pick a simulated platform of one to three devices (speeds, caps, a
 * device that fails at its n-th share, contention), the operation (LU,
 * Cholesky lower and upper, QR), the precision, m, n, lda, the block
 * (from 0 to INT64_MAX), the split, the solve, the ways, fixed fractions
 * (of any value), the reproducible mode and the devices in use. Every
 * call must either refuse with a message and leave the matrix as it was
 * (the options are checked before it is touched), or end with factors
 * whose scaled residual is below 16 (a device lost on the way included)
 * and, for LU and Cholesky, LAPACK's info. Models are never saved: no
 * folder, no cache. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"

typedef struct {
  const uint8_t *p;
  size_t left;
} bytes_t;

static unsigned take(bytes_t *b) {
  if (b->left == 0)
    return 0;
  b->left--;
  return *b->p++;
}

/* A simulated platform: each device a rising speed profile, perhaps a
 * cap, a failure or contention with the first. */
static mlsba_platform_t *platform(bytes_t *b, size_t *ndev) {
  size_t p = 1 + take(b) % 3;
  char text[2048];
  size_t at = (size_t)snprintf(text, sizeof text, "{\"devices\": [");
  for (size_t i = 0; i < p; i++) {
    unsigned s = 1 + take(b), flags = take(b);
    at += (size_t)snprintf(text + at, sizeof text - at,
                           "%s{\"name\": \"d%zu\", \"type\": \"sim\", "
                           "\"speed\": [[1, %u], [64, %u]]",
                           i ? ", " : "", i, s, s * (1 + flags % 7));
    if (flags & 8)
      at += (size_t)snprintf(text + at, sizeof text - at, ", \"max_load\": %u",
                             1 + take(b));
    if (flags & 16)
      at += (size_t)snprintf(text + at, sizeof text - at, ", \"fail_at\": %u",
                             1 + take(b) % 8);
    if ((flags & 32) && i > 0)
      at += (size_t)snprintf(text + at, sizeof text - at,
                             ", \"contends_with\": [\"d0\"]");
    at += (size_t)snprintf(text + at, sizeof text - at, "}");
  }
  snprintf(text + at, sizeof text - at, "]}");
  mlsba_platform_t *pl = NULL;
  if (mlsba_platform_parse(text, "fuzz", &pl) != 0) {
    if (mlsba_last_error()[0] == 0)
      abort(); /* an error without a message */
    return NULL;
  }
  *ndev = p;
  return pl;
}

static const int64_t blocks[] = {0,  1,         2,         3,  7,         16,
                                 64, INT32_MAX, INT64_MAX, -1, INT64_MIN, 5};

/* A matrix LU and QR take as they come, Cholesky made positive definite
 * (or, one time in eight, not). */
static void fill(double *a, int64_t m, int64_t n, int64_t lda, int spd,
                 unsigned seed) {
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < lda; i++) {
      seed = seed * 1103515245u + 12345u;
      a[j * lda + i] = (double)(seed >> 8 & 0xffff) / 65536.0 - 0.5;
    }
  if (spd && lda >= m) /* a too small lda is refused: nothing to make */
    for (int64_t j = 0; j < n && j < m; j++) {
      for (int64_t i = 0; i < j; i++)
        a[j * lda + i] = a[i * lda + j];
      a[j * lda + j] += (double)n;
    }
}

static void to_single(float *s, const double *d, size_t count) {
  for (size_t i = 0; i < count; i++)
    s[i] = (float)d[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bytes_t b = {data, size};
  size_t ndev = 0;
  mlsba_platform_t *pl = platform(&b, &ndev);
  if (pl == NULL)
    return 0;
  mlsba_executor_t *ex = NULL;
  if (mlsba_executor_create(pl, &ex) != 0) {
    mlsba_platform_destroy(pl);
    return 0;
  }
  unsigned op = take(&b) % 4; /* LU, Cholesky L, Cholesky U, QR */
  mlsba_precision_t prec =
      take(&b) & 1 ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
  int64_t m = take(&b) % 41, n = op == 1 || op == 2 ? m : take(&b) % 41;
  int64_t lda = (m > 0 ? m : 1) + take(&b) % 3;
  if (take(&b) == 255)
    lda = m > 1 ? m - 1 : 0; /* too small: refused */
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.model_cache = 0;
  o.block = blocks[take(&b) % (sizeof blocks / sizeof blocks[0])];
  unsigned k = take(&b);
  o.solve = (mlsba_factor_solve_t)(k % (MLSBA_FACTOR_SOLVE_COUNT + 1));
  o.ways = (mlsba_factor_ways_t)(k / 16 % (MLSBA_FACTOR_WAYS_COUNT + 1));
  o.reproducible = take(&b) % 3 == 0;
  double fractions[3];
  if (take(&b) & 1) {
    for (size_t i = 0; i < ndev; i++) {
      unsigned f = take(&b);
      fractions[i] = f == 255 ? NAN : f == 254 ? -1 : f / 128.0;
    }
    o.fraction = fractions;
  }
  unsigned char use[3] = {1, 1, 1};
  if (take(&b) & 1) {
    for (size_t i = 0; i < ndev; i++)
      use[i] = (unsigned char)(take(&b) & 1);
    o.use = use;
  }
  size_t count = (size_t)(lda * (n > 0 ? n : 1));
  double *a = malloc(count * sizeof *a), *orig = malloc(count * sizeof *a);
  float *sa = malloc(count * sizeof *sa), *sorig = malloc(count * sizeof *sa);
  double tau[41];
  int64_t ipiv[41], info = -7;
  if (!a || !orig || !sa || !sorig)
    abort();
  int spd = op == 1 || op == 2 ? take(&b) % 8 != 0 : 0;
  fill(orig, m, n, lda, spd, (unsigned)size);
  to_single(sorig, orig, count);
  int single = prec == MLSBA_PRECISION_SINGLE;
  void *work = single ? (void *)sa : (void *)a;
  const void *before = single ? (void *)sorig : (void *)orig;
  size_t bytes = count * (single ? sizeof(float) : sizeof(double));
  memcpy(work, before, bytes);
  mlsba_factor_report_t rep;
  memset(&rep, 0, sizeof rep);
  int err;
  char uplo = op == 2 ? 'U' : 'L';
  if (op == 0)
    err = mlsba_getrf_ex(ex, prec, m, n, work, lda, ipiv, &info, &o, &rep);
  else if (op == 3)
    err = mlsba_geqrf_ex(ex, prec, m, n, work, lda, tau, &info, &o, &rep);
  else
    err = mlsba_potrf_ex(ex, prec, uplo, n, work, lda, &info, &o, &rep);
  if (err != 0) {
    if (mlsba_last_error()[0] == 0)
      abort(); /* an error without a message */
    /* Refused before the matrix was touched, unless the devices failed
     * on the way (every one of them). */
    if (err != MLSBA_EDEVICE && memcmp(work, before, bytes) != 0)
      abort();
  } else {
    double res = 0, orth = 0;
    int rerr = op == 0   ? mlsba_getrf_residual(prec, m, n, before, lda, work,
                                                lda, ipiv, &res)
               : op == 3 ? mlsba_geqrf_residual(prec, m, n, before, lda, work,
                                                lda, tau, &res, &orth)
                         : mlsba_potrf_residual(prec, uplo, n, before, lda,
                                                work, lda, &res);
    /* A Cholesky that stopped (info > 0) has no full factor to check. */
    int checked = !((op == 1 || op == 2) && info > 0);
    if (rerr != 0 || (checked && !(res < MLSBA_FACTOR_RESIDUAL_OK)) ||
        !(orth < MLSBA_FACTOR_RESIDUAL_OK))
      abort();
    if ((op == 1 || op == 2) && spd && info != 0)
      abort(); /* positive definite by construction */
    if (op == 3 && info != 0)
      abort();
  }
  mlsba_factor_report_free(&rep);
  free(a);
  free(orig);
  free(sa);
  free(sorig);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  return 0;
}
