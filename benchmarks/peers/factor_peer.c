/* Reference LAPACK or libflame as peers of mlsba_getrf / mlsba_potrf /
 * mlsba_geqrf: their dgetrf / dpotrf (lower) / dgeqrf on the fast BLAS of
 * the machine (OpenBLAS, `--threads` threads), on the very matrix
 * mlsba-bench factorizes.
 *
 *   factor-peer --lib reference|libflame --op getrf|potrf|geqrf --size N
 *               [-m M] [--precision double|single] [--threads T] [--runs R]
 *
 * -m M (geqrf only, M >= N): an M x N matrix, as mlsba-bench's -m.
 * --precision single (geqrf only): sgeqrf on the same numbers rounded to
 * float, its residual checked in double against float's epsilon.
 *
 * Both are loaded at run time so that nothing else can answer for them:
 * the program links no BLAS or LAPACK. Reference LAPACK is loaded by its
 * path with its own dependencies (libblas.so.3, which must be OpenBLAS's);
 * libflame needs a BLAS in the global scope, so OpenBLAS's libblas.so.3 is
 * loaded first, and libflame binds its own symbols before any other's
 * (RTLD_DEEPBIND): its dgetrf_ is FLA_LU_piv, its dpotrf_ FLA_Chol, its
 * dgeqrf_ lapack2flame's (FLA_QR_UT with its T kept per block). Where
 * each routine and dgemm_ come from is printed, as found by the loader.
 *
 * Prints one JSON line: every run's seconds, the median, its GFLOPS and the
 * scaled residual ||P A x - L (U x)||_oo / (||A||_oo ||x||_oo n eps) of the
 * last run (HPL's form, with a random x; < 16 passes); for QR, where Q is
 * not formed, ||A^T (A x) - R^T (R x)||_oo / (||A||_1 ||A||_oo ||x||_oo m
 * eps) (A^T A = R^T R whatever Q). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef MLSBA_REFERENCE_LAPACK
#define MLSBA_REFERENCE_LAPACK "/usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3"
#endif
#ifndef MLSBA_SYSTEM_BLAS
#define MLSBA_SYSTEM_BLAS "libblas.so.3"
#endif
#ifndef MLSBA_LIBFLAME
#define MLSBA_LIBFLAME "libflame.so.1"
#endif

typedef void (*getrf_fn)(const int *, const int *, double *, const int *, int *,
                         int *);
typedef void (*potrf_fn)(const char *, const int *, double *, const int *,
                         int *, size_t);
typedef void (*geqrf_fn)(const int *, const int *, double *, const int *,
                         double *, double *, const int *, int *);
typedef void (*sgeqrf_fn)(const int *, const int *, float *, const int *,
                          float *, float *, const int *, int *);

typedef struct {
  const char *lib, *op;
  int n, m, threads, runs; /* m: rows (QR; else n) */
  int single;              /* sgeqrf (QR only) */
} args_t;

typedef struct {
  getrf_fn getrf;
  potrf_fn potrf;
  geqrf_fn geqrf;
  sgeqrf_fn sgeqrf;
  void (*set_threads)(int);
  char kernels[96];
  char from[512]; /* where the loader found each routine */
} peer_t;

static int usage(const char *why) {
  fprintf(stderr,
          "factor-peer: %s\nusage: factor-peer --lib reference|libflame "
          "--op getrf|potrf|geqrf --size N [-m M] "
          "[--precision double|single] [--threads T] [--runs R]\n",
          why);
  return 2;
}

static int parse(int argc, char **argv, args_t *a) {
  *a = (args_t){NULL, NULL, 0, 0, 2, 1, 0};
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc)
      return usage("an option lacks its value");
    const char *v = argv[i + 1];
    if (!strcmp(argv[i], "--lib"))
      a->lib = v;
    else if (!strcmp(argv[i], "--op"))
      a->op = v;
    else if (!strcmp(argv[i], "--size"))
      a->n = atoi(v);
    else if (!strcmp(argv[i], "-m"))
      a->m = atoi(v);
    else if (!strcmp(argv[i], "--threads"))
      a->threads = atoi(v);
    else if (!strcmp(argv[i], "--runs"))
      a->runs = atoi(v);
    else if (!strcmp(argv[i], "--precision") &&
             (!strcmp(v, "single") || !strcmp(v, "double")))
      a->single = !strcmp(v, "single");
    else if (!strcmp(argv[i], "--precision"))
      return usage("--precision must be double or single");
    else
      return usage("unknown option");
  }
  if (!a->lib || (strcmp(a->lib, "reference") && strcmp(a->lib, "libflame")))
    return usage("--lib must be reference or libflame");
  if (!a->op || (strcmp(a->op, "getrf") && strcmp(a->op, "potrf") &&
                 strcmp(a->op, "geqrf")))
    return usage("--op must be getrf, potrf or geqrf");
  if (a->n < 1 || a->n > 65536 || a->threads < 1 || a->runs < 1 || a->runs > 64)
    return usage("--size must be 1..65536, --threads >= 1, --runs 1..64");
  if (a->m == 0)
    a->m = a->n;
  if (a->m != a->n && strcmp(a->op, "geqrf"))
    return usage("-m is for --op geqrf");
  if (a->single && strcmp(a->op, "geqrf"))
    return usage("--precision single is for --op geqrf");
  if (a->m < a->n || a->m > 1 << 20 || (double)a->m * a->n > 1 << 28)
    return usage("-m must be at least --size, at most 2^20, m n at most 2^28");
  return 0;
}

/* OpenBLAS reads OPENBLAS_CORETYPE as it loads: the core type of this
 * CPU's best ISA family, as mlsba-bench chooses it, unless the user did. */
static void choose_core_type(void) {
  if (getenv("OPENBLAS_CORETYPE"))
    return;
  const char *type = NULL;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    type = __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    type = "Haswell";
#endif
  if (type)
    setenv("OPENBLAS_CORETYPE", type, 0);
}

/* "dgetrf_ liblapack.so.3.11.0" appended to p->from. */
static void note_origin(peer_t *p, void *lib, const char *name) {
  Dl_info info;
  void *sym = dlsym(lib, name);
  char real[PATH_MAX];
  const char *file = "(absent)";
  if (sym && dladdr(sym, &info) && info.dli_fname)
    file = realpath(info.dli_fname, real) ? real : info.dli_fname;
  size_t used = strlen(p->from);
  snprintf(p->from + used, sizeof p->from - used, "%s%s %s", used ? ", " : "",
           name, file);
}

static int load(const args_t *a, peer_t *p) {
  choose_core_type();
  void *lib;
  if (!strcmp(a->lib, "reference")) {
    lib = dlopen(MLSBA_REFERENCE_LAPACK, RTLD_NOW | RTLD_LOCAL);
  } else {
    if (!dlopen(MLSBA_SYSTEM_BLAS, RTLD_NOW | RTLD_GLOBAL)) {
      fprintf(stderr, "factor-peer: %s\n", dlerror());
      return 1;
    }
    lib = dlopen(MLSBA_LIBFLAME, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  }
  if (!lib) {
    fprintf(stderr, "factor-peer: %s\n", dlerror());
    return 1;
  }
  *(void **)&p->getrf = dlsym(lib, "dgetrf_");
  *(void **)&p->potrf = dlsym(lib, "dpotrf_");
  *(void **)&p->geqrf = dlsym(lib, "dgeqrf_");
  *(void **)&p->sgeqrf = dlsym(lib, "sgeqrf_");
  /* The BLAS: reference LAPACK reaches it through its own dependencies,
   * libflame through the global scope. */
  void *blas = strcmp(a->lib, "reference") ? RTLD_DEFAULT : lib;
  note_origin(p, lib, "dgetrf_");
  note_origin(p, lib, "dpotrf_");
  note_origin(p, lib, a->single ? "sgeqrf_" : "dgeqrf_");
  note_origin(p, blas, "dgemm_");
  *(void **)&p->set_threads = dlsym(blas, "openblas_set_num_threads");
  char *(*corename)(void);
  char *(*config)(void);
  *(void **)&corename = dlsym(blas, "openblas_get_corename");
  *(void **)&config = dlsym(blas, "openblas_get_config");
  if (!p->getrf || !p->potrf || !p->geqrf || !p->sgeqrf) {
    fprintf(stderr,
            "factor-peer: %s lacks dgetrf_, dpotrf_, dgeqrf_ or sgeqrf_\n",
            a->lib);
    return 1;
  }
  if (!p->set_threads || !corename || !config) {
    fprintf(stderr, "factor-peer: the BLAS under %s is not OpenBLAS (%s)\n",
            a->lib, p->from);
    return 1;
  }
  char version[32] = "?";
  sscanf(config(), "OpenBLAS %31s", version);
  snprintf(p->kernels, sizeof p->kernels, "OpenBLAS %s, %s kernels", version,
           corename());
  return 0;
}

/* mlsba-bench's matrix (benchmarks/mlsba_bench/factor.c, fill()): the
 * same generator, so that every peer factorizes the same numbers (m rows:
 * QR's; m = n otherwise). */
static void fill(double *a, int m, int n, int spd) {
  unsigned s = 12345;
  for (long j = 0; j < n; j++)
    for (long i = 0; i < m; i++) {
      s = s * 1103515245u + 12345u;
      double v = ((s >> 8) & 0xFFFF) / 32768.0 - 1.0;
      if (spd && i < j)
        v = a[j + i * n];
      if (spd && i == j)
        v = (double)n;
      a[i + j * (long)m] = v;
    }
}

/* x = U x (upper, with its diagonal) or L x (unit diagonal unless chol),
 * column by column; t is scratch of n. */
static void upper_times(const double *f, int n, double *x, double *t) {
  memset(t, 0, (size_t)n * sizeof *t);
  for (long j = 0; j < n; j++)
    for (long i = 0; i <= j; i++)
      t[i] += f[i + j * n] * x[j];
  memcpy(x, t, (size_t)n * sizeof *x);
}

static void lower_times(const double *f, int n, int unit, double *x,
                        double *t) {
  memset(t, 0, (size_t)n * sizeof *t);
  for (long j = 0; j < n; j++) {
    t[j] += (unit ? 1.0 : f[j + j * n]) * x[j];
    for (long i = j + 1; i < n; i++)
      t[i] += f[i + j * n] * x[j];
  }
  memcpy(x, t, (size_t)n * sizeof *x);
}

/* ||P A x - L U x||_oo / (||A||_oo ||x||_oo n eps), or for Cholesky
 * ||A x - L L^T x|| (A's lower triangle read as the symmetric matrix). */
static double residual(const double *a0, const double *f, const int *ipiv,
                       int n, int chol) {
  double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y),
         *ax = calloc((size_t)n, sizeof *ax),
         *rows = calloc((size_t)n, sizeof *rows);
  unsigned s = 777;
  for (int i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = y[i] = ((s >> 8) & 0xFFFF) / 32768.0 - 1.0;
  }
  for (long j = 0; j < n; j++)
    for (long i = 0; i < n; i++) {
      double v = chol && i < j ? a0[j + i * n] : a0[i + j * n];
      ax[i] += v * x[j];
      rows[i] += fabs(v);
    }
  double anorm = 0, xnorm = 0, rnorm = 0;
  for (int i = 0; i < n; i++) {
    anorm = fmax(anorm, rows[i]);
    xnorm = fmax(xnorm, fabs(x[i]));
  }
  double *t = calloc((size_t)n, sizeof *t);
  if (chol) { /* y = L (L^T x); (L^T x)_j is column j of L times x */
    for (long j = 0; j < n; j++)
      for (long i = j; i < n; i++)
        t[j] += f[i + j * n] * y[i];
    memcpy(y, t, (size_t)n * sizeof *y);
    lower_times(f, n, 0, y, t);
  } else { /* P A x: apply the interchanges to A x; y = L (U x) */
    for (int i = 0; i < n; i++) {
      double swap = ax[i];
      ax[i] = ax[ipiv[i] - 1];
      ax[ipiv[i] - 1] = swap;
    }
    upper_times(f, n, y, t);
    lower_times(f, n, 1, y, t);
  }
  free(t);
  for (int i = 0; i < n; i++)
    rnorm = fmax(rnorm, fabs(ax[i] - y[i]));
  free(x);
  free(y);
  free(ax);
  free(rows);
  return rnorm / (anorm * xnorm * n * DBL_EPSILON);
}

/* QR without Q: A^T A = R^T R. ||A^T (A x) - R^T (R x)||_oo / (||A||_1
 * ||A||_oo ||x||_oo m eps), R the upper triangle of f's first n rows. */
static double qr_residual(const double *a0, const double *f, int m, int n,
                          double eps) {
  double *x = malloc((size_t)n * sizeof *x), *ax = calloc((size_t)m, 8),
         *atax = calloc((size_t)n, 8), *rx = calloc((size_t)n, 8),
         *rtrx = calloc((size_t)n, 8), *rows = calloc((size_t)m, 8);
  unsigned s = 777;
  double xnorm = 0, norm1 = 0, norminf = 0, rnorm = 0;
  for (int i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = ((s >> 8) & 0xFFFF) / 32768.0 - 1.0;
    xnorm = fmax(xnorm, fabs(x[i]));
  }
  for (long j = 0; j < n; j++) {
    double col = 0;
    for (long i = 0; i < m; i++) {
      double v = a0[i + j * m];
      ax[i] += v * x[j];
      rows[i] += fabs(v);
      col += fabs(v);
    }
    norm1 = fmax(norm1, col);
  }
  for (long i = 0; i < m; i++)
    norminf = fmax(norminf, rows[i]);
  for (long j = 0; j < n; j++)
    for (long i = 0; i < m; i++)
      atax[j] += a0[i + j * m] * ax[i];
  for (long j = 0; j < n; j++) /* R x */
    for (long i = 0; i <= j; i++)
      rx[i] += f[i + j * m] * x[j];
  for (long j = 0; j < n; j++) /* R^T (R x): row j of R^T is column j */
    for (long i = 0; i <= j; i++)
      rtrx[j] += f[i + j * m] * rx[i];
  for (int j = 0; j < n; j++)
    rnorm = fmax(rnorm, fabs(atax[j] - rtrx[j]));
  free(x);
  free(ax);
  free(atax);
  free(rx);
  free(rtrx);
  free(rows);
  return rnorm / (norm1 * norminf * xnorm * m * eps);
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void print_json(const args_t *a, const peer_t *p, double *t, int info,
                       double res) {
  double n = a->n, m = a->m;
  double flops = !strcmp(a->op, "geqrf")   ? 2 * m * n * n - 2 * n * n * n / 3
                 : !strcmp(a->op, "getrf") ? 2 * n * n * n / 3
                                           : n * n * n / 3;
  printf("{\"peer\": \"%s\", \"op\": \"%s\", \"precision\": \"%s\", "
         "\"n\": %d, \"m\": %d, \"threads\": %d, \"seconds\": [",
         a->lib, a->op, a->single ? "single" : "double", a->n, a->m,
         a->threads);
  for (int r = 0; r < a->runs; r++)
    printf("%s%.6f", r ? ", " : "", t[r]);
  qsort(t, (size_t)a->runs, sizeof *t, by_value);
  double median = t[a->runs / 2];
  printf("], \"median_s\": %.6f, \"gflops\": %.3f, \"info\": %d, "
         "\"residual\": %.4g, \"verified\": %s, \"kernels\": \"%s\", "
         "\"from\": \"%s\"}\n",
         median, flops / median * 1e-9, info, res,
         info == 0 && res < 16 ? "true" : "false", p->kernels, p->from);
}

int main(int argc, char **argv) {
  args_t a;
  peer_t p = {0};
  if (parse(argc, argv, &a))
    return 2;
  if (load(&a, &p))
    return 1;
  p.set_threads(a.threads);
  int n = a.n, m = a.m, chol = !strcmp(a.op, "potrf"), info = 0;
  int qr = !strcmp(a.op, "geqrf");
  size_t bytes = (size_t)m * (size_t)n * sizeof(double);
  double *a0 = malloc(bytes), *work = malloc(bytes);
  int *ipiv = malloc((size_t)n * sizeof *ipiv);
  double *t = malloc((size_t)a.runs * sizeof *t);
  double *tau = malloc((size_t)n * sizeof *tau), query = 0;
  /* Single precision: the matrix, tau and the workspace in floats. */
  float *fwork =
            a.single ? malloc((size_t)m * (size_t)n * sizeof *fwork) : NULL,
        *ftau = a.single ? malloc((size_t)n * sizeof *ftau) : NULL, fquery = 0;
  int lwork = -1;
  if (qr && a.single) /* the workspace the library asks for, untimed */
    p.sgeqrf(&m, &n, fwork, &m, ftau, &fquery, &lwork, &info);
  else if (qr)
    p.geqrf(&m, &n, work, &m, tau, &query, &lwork, &info);
  if (a.single)
    query = fquery;
  lwork = query > n ? (int)query : n;
  double *qwork = malloc((size_t)lwork * sizeof *qwork);
  if (!a0 || !work || !ipiv || !t || !tau || !qwork ||
      (a.single && (!fwork || !ftau))) {
    fprintf(stderr, "factor-peer: out of memory for n = %d\n", n);
    return 1;
  }
  fill(a0, m, n, chol);
  size_t mn = (size_t)m * (size_t)n;
  if (a.single) /* the numbers sgeqrf sees, and the residual's A */
    for (size_t i = 0; i < mn; i++)
      a0[i] = (float)a0[i];
  for (int r = 0; r < a.runs; r++) {
    memcpy(work, a0, bytes);
    for (size_t i = 0; a.single && i < mn; i++)
      fwork[i] = (float)a0[i];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (qr && a.single) /* qwork holds lwork floats and more */
      p.sgeqrf(&m, &n, fwork, &m, ftau, (float *)qwork, &lwork, &info);
    else if (qr)
      p.geqrf(&m, &n, work, &m, tau, qwork, &lwork, &info);
    else if (chol)
      p.potrf("L", &n, work, &n, &info, 1);
    else
      p.getrf(&n, &n, work, &n, ipiv, &info);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    t[r] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  }
  for (size_t i = 0; a.single && i < mn; i++)
    work[i] = fwork[i];
  double res =
      info != 0 ? INFINITY
      : qr ? qr_residual(a0, work, m, n, a.single ? FLT_EPSILON : DBL_EPSILON)
           : residual(a0, work, ipiv, n, chol);
  print_json(&a, &p, t, info, res);
  int ok = info == 0 && res < 16;
  free(a0);
  free(work);
  free(ipiv);
  free(t);
  free(tau);
  free(qwork);
  free(fwork);
  free(ftau);
  return ok ? 0 : 1;
}
