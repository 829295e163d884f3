/* What an OpenCL device's columns cost in transfers during mlsba_getrf
 * or mlsba_potrf: kept resident from step to step (the default) against
 * streamed at every step (opts.stream), on the same matrix and the same
 * fixed split (the device a fraction of every update's units, two cores
 * the rest), so the bytes and transfer counts are exact, not a matter of
 * timing.
 *
 *   bench-factor-transfers [--op getrf|potrf] [--uplo L|U] [--size N]
 *                          [--block NB] [--fraction F] [--devices 1|2]
 *                          [--precision single|double] [--rounds R]
 *
 * Platform: core 0 driving the first OpenCL device (platform 0, device
 * 0), core 1 alone; with --devices 2, core 1 driving the same device
 * listed again (pocl twice), each device half of the fraction. Prints, per
 * mode, the bytes host -> device and back, the transfers, the scaled residual
 * and the wall time, for R rounds (default 1) of both modes in turn after a
 * warm-up. Exit 77 when the machine has no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"

static const char platform_json2[] =
    "{\"devices\": ["
    "{\"name\": \"core0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
    "\"device\": 0},"
    "{\"name\": \"core1\", \"type\": \"cpu\", \"core\": 1},"
    "{\"name\": \"ocl1\", \"type\": \"opencl\", \"platform\": 0, "
    "\"device\": 0}],"
    "\"groups\": [[\"core0\", \"ocl0\"], [\"core1\", \"ocl1\"]]}";

static const char platform_json[] =
    "{\"devices\": ["
    "{\"name\": \"core0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
    "\"device\": 0},"
    "{\"name\": \"core1\", \"type\": \"cpu\", \"core\": 1}],"
    "\"groups\": [[\"core0\", \"ocl0\"], [\"core1\"]]}";

typedef struct {
  int chol;  /* potrf */
  char uplo; /* its triangle */
  int64_t n, nb;
  int devices; /* OpenCL devices: 1, or 2 (the same listed twice) */
  double fraction;
  mlsba_precision_t prec;
  int rounds;
} args_t;

static int parse(int argc, char **argv, args_t *a) {
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v && !strcmp(o, "--op") && (!strcmp(v, "getrf") || !strcmp(v, "potrf")))
      a->chol = !strcmp(v, "potrf");
    else if (v && !strcmp(o, "--uplo") && (!strcmp(v, "L") || !strcmp(v, "U")))
      a->uplo = v[0];
    else if (v && !strcmp(o, "--devices") &&
             (!strcmp(v, "1") || !strcmp(v, "2")))
      a->devices = atoi(v);
    else if (v && !strcmp(o, "--size"))
      a->n = atoll(v);
    else if (v && !strcmp(o, "--block"))
      a->nb = atoll(v);
    else if (v && !strcmp(o, "--rounds"))
      a->rounds = atoi(v);
    else if (v && !strcmp(o, "--fraction"))
      a->fraction = atof(v);
    else if (v && !strcmp(o, "--precision") &&
             (!strcmp(v, "single") || !strcmp(v, "double")))
      a->prec = !strcmp(v, "double") ? MLSBA_PRECISION_DOUBLE
                                     : MLSBA_PRECISION_SINGLE;
    else {
      fprintf(stderr,
              "usage: bench-factor-transfers [--op getrf|potrf] [--uplo L|U] "
              "[--size N] [--block NB] [--fraction F] [--devices 1|2] "
              "[--precision single|double] [--rounds R]\n");
      return 2;
    }
    i++;
  }
  if (a->n < 1 || a->nb < 1 || a->rounds < 1 ||
      !(a->fraction > 0 && a->fraction < 1)) {
    fprintf(stderr, "bench-factor-transfers: --size, --block and --rounds "
                    "must be at least 1, --fraction in (0, 1)\n");
    return 2;
  }
  return 0;
}

/* Random in [-1, 1); for Cholesky symmetric with n on the diagonal. */
static void fill(void *a, int64_t n, size_t es, int spd) {
  unsigned seed = 99;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      double v = ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
      size_t k = (size_t)(i + j * n), t = (size_t)(j + i * n);
      if (spd && i == j)
        v = (double)n;
      else if (spd && i < j) /* the mirror of an element set already */
        v = es == 8 ? ((double *)a)[t] : ((float *)a)[t];
      if (es == 8)
        ((double *)a)[k] = v;
      else
        ((float *)a)[k] = (float)v;
    }
}

static int factorize(mlsba_executor_t *ex, const args_t *a, void *work,
                     int64_t *ipiv, const mlsba_factor_opts_t *o,
                     mlsba_factor_report_t *r, const void *a0, double *res) {
  int64_t info = 0;
  int err = a->chol ? mlsba_potrf_ex(ex, a->prec, a->uplo, a->n, work, a->n,
                                     &info, o, r)
                    : mlsba_getrf_ex(ex, a->prec, a->n, a->n, work, a->n, ipiv,
                                     &info, o, r);
  if (!err && a->chol)
    err =
        mlsba_potrf_residual(a->prec, a->uplo, a->n, a0, a->n, work, a->n, res);
  else if (!err)
    err = mlsba_getrf_residual(a->prec, a->n, a->n, a0, a->n, work, a->n, ipiv,
                               res);
  return err;
}

/* One factorization; prints its row. */
static int run(mlsba_executor_t *ex, const args_t *a, int stream, int show,
               const void *a0, void *work, int64_t *ipiv) {
  size_t es = a->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  size_t bytes = (size_t)(a->n * a->n) * es;
  memcpy(work, a0, bytes);
  double core = (1 - a->fraction) / 2;
  double dev = a->fraction / a->devices;
  double fraction[4] = {core, dev, core, dev};
  unsigned char use[4] = {1, 1, 1, 1};
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = a->nb;
  o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
  o.fraction = fraction;
  o.use = use;
  o.stream = stream;
  mlsba_factor_report_t r;
  double res = -1;
  int err = factorize(ex, a, work, ipiv, &o, &r, a0, &res);
  if (err) {
    fprintf(stderr, "bench-factor-transfers: %s\n", mlsba_last_error());
    mlsba_factor_report_free(&r);
    return 1;
  }
  int64_t units = 0; /* the OpenCL devices' */
  for (size_t k = 0; k < r.steps; k++)
    for (size_t i = 1; i < r.p; i += 2)
      units += r.share[k * r.p + i];
  if (show)
    printf("%-9s %15lld %15lld %10lld %12lld %9.3g %9.3f\n",
           stream ? "streamed" : "resident", (long long)r.bytes_to_devices,
           (long long)r.bytes_from_devices, (long long)r.transfers,
           (long long)units, res, r.seconds);
  mlsba_factor_report_free(&r);
  return 0;
}

int main(int argc, char **argv) {
  args_t a = {.uplo = 'L',
              .n = 2048,
              .nb = 128,
              .fraction = 0.5,
              .prec = MLSBA_PRECISION_DOUBLE,
              .rounds = 1,
              .devices = 1};
  int rc = parse(argc, argv, &a);
  if (rc)
    return rc;
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  if (mlsba_platform_parse(a.devices == 2 ? platform_json2 : platform_json,
                           "core-pocl", &pl) ||
      mlsba_executor_create(pl, &ex)) {
    fprintf(stderr, "bench-factor-transfers: no OpenCL device: %s\n",
            mlsba_last_error());
    mlsba_platform_destroy(pl);
    return 77;
  }
  size_t es = a.prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  size_t count = (size_t)(a.n * a.n);
  void *a0 = malloc(count * es), *work = malloc(count * es);
  int64_t *ipiv = malloc((size_t)a.n * sizeof *ipiv);
  if (!a0 || !work || !ipiv) {
    fprintf(stderr, "bench-factor-transfers: out of memory\n");
    return 1;
  }
  fill(a0, a.n, es, a.chol);
  printf("%s n = %lld, nb = %lld, %s; %s %.2f of every update\n",
         a.chol ? (a.uplo == 'L' ? "potrf lower" : "potrf upper") : "getrf",
         (long long)a.n, (long long)a.nb,
         a.prec == MLSBA_PRECISION_DOUBLE ? "double" : "single",
         a.devices == 2 ? "two devices (pocl twice)" : "the device",
         a.fraction);
  printf("%-9s %15s %15s %10s %12s %9s %9s\n", "mode", "bytes_to_dev",
         "bytes_from_dev", "transfers", "device_units", "residual", "seconds");
  /* A first run builds CLBlast's kernels for pocl: not shown. */
  rc = run(ex, &a, 0, 0, a0, work, ipiv);
  for (int k = 0; !rc && k < 2 * a.rounds; k++)
    rc = run(ex, &a, k % 2, 1, a0, work, ipiv);
  free(a0);
  free(work);
  free(ipiv);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  return rc;
}
