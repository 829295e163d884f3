/* One line per factorization: a digest of everything mlsba_getrf and
 * mlsba_potrf give back that does not depend on the wall clock, so that
 * two builds of the library (before and after a change that must not
 * change results) can be compared line by line. benchmarks/factor-compare
 * compiles it against each build's libmlsba; it is not part of the CMake
 * build, so that it links against an older tree too (only the public
 * header is used).
 *
 *   factor-compare-digest MODELS_DIR [--real]
 *
 * MODELS_DIR is the tree's models/sim. Every simulated case computes its
 * factors on the calling thread (exact and repeatable) and prints the
 * factors' and pivots' hashes, info, and the report: units, shares,
 * ahead devices, bytes, and every virtual time in hexadecimal floating
 * point (exact). --real adds cases on this machine's core 0 and its
 * first OpenCL device with a fixed slice, where shares and bytes are
 * exact too (their times are not printed: they are measured); an OpenCL
 * case prints "skipped" where there is no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"

typedef struct {
  const char *name;
  char op; /* 'g' getrf, 'L' or 'U' potrf */
  int64_t m, n;
  int kind; /* 0 random, 1 singular (LU) or not positive definite */
} shape_t;

static const shape_t shapes[] = {
    {"lu-520", 'g', 520, 520, 0},     {"lu-600x450", 'g', 600, 450, 0},
    {"lu-450x600", 'g', 450, 600, 0}, {"lu-sing-300", 'g', 300, 300, 1},
    {"lu-1", 'g', 1, 1, 0},           {"lu-0", 'g', 0, 0, 0},
    {"potrfL-520", 'L', 520, 520, 0}, {"potrfU-520", 'U', 520, 520, 0},
    {"potrfL-npd", 'L', 300, 300, 1}, {"potrfU-npd", 'U', 300, 300, 1},
    {"potrfL-64", 'L', 64, 64, 0},
};

/* Variants of the options, by name. */
enum { VARIANTS = 14 };
static const char *const variant_names[VARIANTS] = {
    "default",  "nb64",       "nb100",      "nb700",       "constant-ratio",
    "fixed",    "kernel",     "static",     "solve-split", "solve-core",
    "fraction", "use-subset", "unit-flops", "single"};

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t k = 0; k < n; k++)
    h = (h ^ b[k]) * 1099511628211ull;
  return h;
}

/* Random in [-1, 1); Cholesky: symmetric with n on the diagonal (or -1
 * at a third of it: not positive definite); LU singular: a zero column
 * at a third. */
static void fill(void *a, const shape_t *s, size_t es) {
  unsigned seed = 7;
  int64_t m = s->m, n = s->n, bad = n / 3;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      seed = seed * 1103515245u + 12345u;
      double v = ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
      size_t k = (size_t)(i + j * m), t = (size_t)(j + i * m);
      if (s->op != 'g' && i == j)
        v = s->kind && i == bad ? -1.0 : (double)n;
      else if (s->op != 'g' && i < j)
        v = es == 8 ? ((double *)a)[t] : ((float *)a)[t];
      else if (s->op == 'g' && s->kind && j == bad)
        v = 0;
      if (es == 8)
        ((double *)a)[k] = v;
      else
        ((float *)a)[k] = (float)v;
    }
}

static void print_report(const mlsba_factor_report_t *R, int times) {
  printf(" virt=%d p=%zu steps=%zu panel=%ld lost=%u flops=%a", R->virtual_time,
         R->p, R->steps, R->panel_device, R->lost, R->flops);
  printf(" bytes=%lld/%lld/%lld", (long long)R->bytes_to_devices,
         (long long)R->bytes_from_devices, (long long)R->transfers);
  for (size_t i = 0; R->dropped && i < R->p; i++)
    printf("%s%d", i ? "," : " dropped=", R->dropped[i]);
  if (times)
    printf(" seconds=%a gflops=%a", R->seconds, R->gflops);
  for (size_t k = 0; k < R->steps; k++) {
    printf(" |%zu u=%lld a=%ld", k, (long long)R->units[k], R->ahead_device[k]);
    if (times)
      printf(" t=%a pt=%a", R->step_seconds[k], R->panel_seconds[k]);
    for (size_t i = 0; i < R->p; i++) {
      printf(" %lld", (long long)R->share[k * R->p + i]);
      if (times)
        printf(":%a", R->time[k * R->p + i]);
    }
  }
}

/* Options of variant v on a platform of p devices. */
static mlsba_precision_t set_variant(int v, size_t p, mlsba_factor_opts_t *o,
                                     double *fraction, unsigned char *use) {
  mlsba_factor_opts_init(o);
  static const int64_t nbs[] = {0, 64, 100, 700};
  if (v <= 3)
    o->block = nbs[v];
  else
    o->block = 64;
  o->split = v == 4    ? MLSBA_FACTOR_SPLIT_CONSTANT_RATIO
             : v == 5  ? MLSBA_FACTOR_SPLIT_FIXED_SLICE
             : v == 6  ? MLSBA_FACTOR_SPLIT_KERNEL_SLICE
             : v == 10 ? MLSBA_FACTOR_SPLIT_FIXED_SLICE
                       : MLSBA_FACTOR_SPLIT_FPM;
  if (v == 7)
    o->ways = MLSBA_FACTOR_WAYS_STATIC;
  o->solve = v == 8   ? MLSBA_FACTOR_SOLVE_SPLIT
             : v == 9 ? MLSBA_FACTOR_SOLVE_CORE
                      : MLSBA_FACTOR_SOLVE_AUTO;
  for (size_t i = 0; i < p; i++) {
    fraction[i] = 1.0 + (double)(i % 3);
    use[i] = i == 0 || i % 2 == 1;
  }
  if (v == 10)
    o->fraction = fraction;
  if (v == 11)
    o->use = use;
  if (v == 12)
    o->sim_unit_flops = 3e6;
  return v == 13 ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
}

static int factorize(mlsba_executor_t *ex, const shape_t *s,
                     mlsba_precision_t prec, void *a, int64_t *ipiv,
                     const mlsba_factor_opts_t *o, mlsba_factor_report_t *R,
                     int64_t *info) {
  int64_t lda = s->m > 1 ? s->m : 1;
  return s->op == 'g'
             ? mlsba_getrf_ex(ex, prec, s->m, s->n, a, lda, ipiv, info, o, R)
             : mlsba_potrf_ex(ex, prec, s->op, s->n, a, lda, info, o, R);
}

/* One case: its line. */
static void run_case(const char *tag, mlsba_executor_t *ex, const shape_t *s,
                     const char *vname, mlsba_precision_t prec,
                     const mlsba_factor_opts_t *o, int times) {
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  size_t cells = (size_t)(s->m * s->n) + 1;
  void *a = calloc(cells, es);
  int64_t *ipiv = calloc((size_t)s->n + 1, sizeof *ipiv);
  if (a == NULL || ipiv == NULL) {
    printf("%s %s %s: out of memory\n", tag, s->name, vname);
    free(a);
    free(ipiv);
    return;
  }
  fill(a, s, es);
  mlsba_factor_report_t R;
  memset(&R, 0, sizeof R);
  int64_t info = -1;
  int err = factorize(ex, s, prec, a, ipiv, o, &R, &info);
  int64_t k = s->m < s->n ? s->m : s->n;
  printf("%s %s %s err=%d", tag, s->name, vname, err);
  if (err)
    printf(" (%s)", mlsba_last_error());
  else
    printf(" info=%lld a=%016llx ipiv=%016llx", (long long)info,
           (unsigned long long)fnv(14695981039346656037ull, a,
                                   (size_t)(s->m * s->n) * es),
           (unsigned long long)(s->op == 'g'
                                    ? fnv(14695981039346656037ull, ipiv,
                                          (size_t)k * sizeof *ipiv)
                                    : 0));
  print_report(&R, times);
  printf("\n");
  mlsba_factor_report_free(&R);
  free(a);
  free(ipiv);
}

/* Every case on a fresh executor, so that a device's faults and noise
 * count from the case's first share. */
static void sim_platform(const char *tag, mlsba_platform_t *pl) {
  mlsba_executor_t *ex = NULL;
  size_t p = mlsba_platform_num_devices(pl);
  double fraction[64];
  unsigned char use[64];
  for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++)
    for (int v = 0; v < VARIANTS; v++) {
      mlsba_factor_opts_t o;
      mlsba_precision_t prec = set_variant(v, p, &o, fraction, use);
      if (mlsba_executor_create(pl, &ex) != 0) {
        printf("%s: no executor (%s)\n", tag, mlsba_last_error());
        return;
      }
      run_case(tag, ex, &shapes[c], variant_names[v], prec, &o, 1);
      mlsba_executor_destroy(ex);
    }
  if (mlsba_executor_create(pl, &ex) != 0) {
    printf("%s: no executor (%s)\n", tag, mlsba_last_error());
    return;
  }
  /* Virtual time only, at a size the host could not compute quickly. */
  static const shape_t big[] = {{"lu-8400", 'g', 8400, 8400, 0},
                                {"potrfL-8400", 'L', 8400, 8400, 0},
                                {"potrfU-8400", 'U', 8400, 8400, 0}};
  for (size_t c = 0; c < 3; c++) {
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.compute = 0;
    o.block = 128;
    mlsba_factor_report_t R;
    memset(&R, 0, sizeof R);
    int64_t info = -1, *ipiv = calloc(8400, sizeof *ipiv);
    double one = 1;
    int err = ipiv ? big[c].op == 'g'
                         ? mlsba_getrf_ex(ex, MLSBA_PRECISION_DOUBLE, 8400,
                                          8400, &one, 8400, ipiv, &info, &o, &R)
                         : mlsba_potrf_ex(ex, MLSBA_PRECISION_DOUBLE, big[c].op,
                                          8400, &one, 8400, &info, &o, &R)
                   : -1;
    printf("%s %s nocompute err=%d info=%lld", tag, big[c].name, err,
           (long long)info);
    print_report(&R, 1);
    printf("\n");
    mlsba_factor_report_free(&R);
    free(ipiv);
  }
  mlsba_executor_destroy(ex);
}

/* A simulated desktop whose second accelerator fails at its fifth share
 * and whose second core fails at its eighth. */
static const char failing_json[] =
    "{\"name\": \"failing\", \"devices\": ["
    "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100.0], "
    "[8400, 1400.0]]},"
    "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[100, 2000.0], "
    "[4000, 24000.0]], \"max_load\": 300},"
    "{\"name\": \"core1\", \"type\": \"sim\", \"speed\": [[1, 100.0], "
    "[8400, 1400.0]], \"fail_at\": 8},"
    "{\"name\": \"gpu1\", \"type\": \"sim\", \"speed\": [[100, 900.0], "
    "[4000, 9000.0]], \"fail_at\": 5}],"
    "\"groups\": [[\"core0\", \"gpu0\"], [\"core1\", \"gpu1\"]]}";

static const char *const real_json[] = {
    "{\"name\": \"core\", \"devices\": [{\"name\": \"core0\", \"type\": "
    "\"cpu\", \"core\": 0}], \"groups\": [[\"core0\"]]}",
    "{\"name\": \"core-ocl\", \"devices\": [{\"name\": \"core0\", \"type\": "
    "\"cpu\", \"core\": 0}, {\"name\": \"ocl0\", \"type\": \"opencl\", "
    "\"platform\": 0, \"device\": 0}], \"groups\": [[\"core0\", \"ocl0\"]]}",
    "{\"name\": \"core-ocl-small\", \"devices\": [{\"name\": \"core0\", "
    "\"type\": \"cpu\", \"core\": 0}, {\"name\": \"ocl0\", \"type\": "
    "\"opencl\", \"platform\": 0, \"device\": 0, \"mem_limit_mb\": 1}], "
    "\"groups\": [[\"core0\", \"ocl0\"]]}"};

/* Real devices with a fixed slice: shares and bytes are exact. */
static void real_platform(size_t which) {
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  char tag[64];
  snprintf(tag, sizeof tag, "real%zu", which);
  if (mlsba_platform_parse(real_json[which], "real", &pl) != 0 ||
      mlsba_executor_create(pl, &ex) != 0) {
    printf("%s: skipped\n", tag);
    mlsba_platform_destroy(pl);
    return;
  }
  static const shape_t real_shapes[] = {{"lu-400", 'g', 400, 400, 0},
                                        {"lu-300x200", 'g', 300, 200, 0},
                                        {"potrfL-400", 'L', 400, 400, 0},
                                        {"potrfU-400", 'U', 400, 400, 0},
                                        {"potrfL-npd", 'L', 300, 300, 1}};
  double fraction[2] = {0.4, 0.6};
  unsigned char use[2] = {1, 1};
  for (size_t c = 0; c < sizeof real_shapes / sizeof *real_shapes; c++)
    for (int v = 0; v < 4; v++) {
      mlsba_factor_opts_t o;
      mlsba_factor_opts_init(&o);
      o.block = 64;
      o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
      o.fraction = fraction;
      o.use = use;
      o.stream = v == 1;
      if (v == 2)
        o.solve = MLSBA_FACTOR_SOLVE_SPLIT;
      if (v == 3)
        o.block = 96;
      static const char *const names[] = {"resident", "stream", "solve-split",
                                          "nb96"};
      run_case(tag, ex, &real_shapes[c], names[v], MLSBA_PRECISION_DOUBLE, &o,
               0);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: factor-compare-digest MODELS_DIR [--real]\n");
    return 2;
  }
  static const char *const files[] = {"desktop-seed002", "inpa-node1",
                                      "cores-and-pocl", "inpa-node3",
                                      "desktop-seed002-noise3"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", argv[1], files[f]);
    mlsba_platform_t *pl = NULL;
    if (mlsba_platform_load(path, &pl) != 0) {
      printf("%s: %s\n", files[f], mlsba_last_error());
      continue;
    }
    sim_platform(files[f], pl);
    mlsba_platform_destroy(pl);
  }
  mlsba_platform_t *pl = NULL;
  if (mlsba_platform_parse(failing_json, "failing", &pl) == 0)
    sim_platform("failing", pl);
  else
    printf("failing: %s\n", mlsba_last_error());
  mlsba_platform_destroy(pl);
  if (argc > 2 && strcmp(argv[2], "--real") == 0)
    for (size_t k = 0; k < sizeof real_json / sizeof *real_json; k++)
      real_platform(k);
  return 0;
}
