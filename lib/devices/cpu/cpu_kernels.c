/* The choice of BLIS kernels (cpu_kernels.h says why it is made here).
 *
 * With the static BLIS archive linked in (MLSBA_BLIS_CONTEXTS), every
 * sub-configuration of Debian's x86_64 BLIS can be reached through its
 * context initializer, bli_cntx_init_<name>, and passed to the expert
 * calls; the shared libblis exports none of them. Without the archive only
 * BLIS's own choice is possible, and the reason says so. */
#include <blis.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MLSBA__X86 1
#endif

#include "../../core/atomic_file.h"
#include "../../core/clock.h"
#include "cpu_kernels.h"

typedef void (*cntx_init_fn)(cntx_t *);

#ifdef MLSBA_BLIS_CONTEXTS
void bli_cntx_init_skx(cntx_t *);
void bli_cntx_init_zen3(cntx_t *);
void bli_cntx_init_haswell(cntx_t *);
void bli_cntx_init_sandybridge(cntx_t *);
void bli_cntx_init_penryn(cntx_t *);
void bli_cntx_init_generic(cntx_t *);
#define INIT(f) bli_cntx_init_##f
#else
#define INIT(f) NULL
#endif

/* Tier: the instruction family; below AVX2 only the best tier reached is
 * worth timing, above it every sub-configuration (their blocking differs). */
static const struct {
  mlsba__cpu_config_t config;
  int tier;
  cntx_init_fn init;
} configs[] = {
    {{"skx", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
     4,
     INIT(skx)},
    {{"zen3", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA}, 3, INIT(zen3)},
    {{"haswell", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA}, 3, INIT(haswell)},
    {{"sandybridge", MLSBA__CPU_AVX}, 2, INIT(sandybridge)},
    {{"penryn", MLSBA__CPU_SSSE3}, 1, INIT(penryn)},
    {{"generic", 0}, 0, INIT(generic)},
};
enum { NCONFIGS = sizeof configs / sizeof configs[0] };

size_t mlsba__cpu_kernel_candidates(unsigned features,
                                    const mlsba__cpu_config_t **out,
                                    size_t max) {
  size_t n = 0;
  int low_tier_taken = 0;
  for (size_t i = 0; i < NCONFIGS && n < max; i++) {
    if ((configs[i].config.needs & ~features) != 0)
      continue;
    if (configs[i].tier < 3) {
      if (low_tier_taken || n > 0)
        continue; /* a faster family is already there */
      low_tier_taken = 1;
    }
    out[n++] = &configs[i].config;
  }
  return n;
}

/* ---- the CPU's features ------------------------------------------------ */

static unsigned hidden_features(void) {
  const char *env = getenv("MLSBA_CPU_HIDE");
  static const struct {
    const char *name;
    unsigned bit;
  } names[] = {{"avx512", MLSBA__CPU_AVX512},
               {"avx2", MLSBA__CPU_AVX2},
               {"fma", MLSBA__CPU_FMA},
               {"avx", MLSBA__CPU_AVX},
               {"ssse3", MLSBA__CPU_SSSE3}};
  unsigned hide = 0;
  for (const char *p = env; p && *p;) {
    size_t len = strcspn(p, ", ");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0)
        hide |= names[i].bit;
    p += len + (p[len] != '\0');
  }
  /* Without a family's base, nothing above it runs either. */
  if (hide & MLSBA__CPU_AVX)
    hide |= MLSBA__CPU_AVX2 | MLSBA__CPU_FMA | MLSBA__CPU_AVX512;
  if (hide & (MLSBA__CPU_AVX2 | MLSBA__CPU_FMA))
    hide |= MLSBA__CPU_AVX512;
  return hide;
}

unsigned mlsba__cpu_features(void) {
  unsigned f = 0;
#ifdef MLSBA__X86
  /* __builtin_cpu_supports also checks that the OS saves the AVX and
   * AVX-512 registers (XGETBV), not only the CPUID bits. */
  __builtin_cpu_init();
  if (__builtin_cpu_supports("ssse3"))
    f |= MLSBA__CPU_SSSE3;
  if (__builtin_cpu_supports("avx"))
    f |= MLSBA__CPU_AVX;
  if (__builtin_cpu_supports("fma"))
    f |= MLSBA__CPU_FMA;
  if (__builtin_cpu_supports("avx2"))
    f |= MLSBA__CPU_AVX2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    f |= MLSBA__CPU_AVX512;
#endif
  return f & ~hidden_features();
}

/* "AMD EPYC 9B14|25.17.1|features 1f|BLIS 0.9.0": what the decision
 * depends on; another CPU, feature set or BLIS makes it again. */
static void cpu_key(unsigned features, char *buf, size_t size) {
  char brand[49] = "unknown CPU";
  unsigned family = 0, model = 0, stepping = 0;
#ifdef MLSBA__X86
  unsigned r[12] = {0}, a, b, c, d;
  if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000004u) {
    for (unsigned i = 0; i < 3; i++)
      __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2],
                  &r[4 * i + 3]);
    memcpy(brand, r, 48);
    brand[48] = '\0';
  }
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
    model = ((a >> 4) & 0xf) | ((a >> 12) & 0xf0);
    stepping = a & 0xf;
  }
#endif
  for (char *p = brand; *p; p++) /* one line, no separator inside */
    if (*p == '\n' || *p == '|' || (unsigned char)*p < 0x20)
      *p = ' ';
  snprintf(buf, size, "%s|%u.%u.%u|features %x|BLIS %s", brand, family, model,
           stepping, features, bli_info_get_version_str());
}

/* ---- the decision ------------------------------------------------------ */

/* Per precision: the index in configs[] (-1: BLIS's own) and its speed. */
typedef struct {
  int chosen[2];
  double gflops[2];
  char detected[32];
  char reason[256];
  cntx_t cntx[NCONFIGS];
} choice_t;

static choice_t choice = {.chosen = {-1, -1}};
static pthread_once_t choice_once = PTHREAD_ONCE_INIT;

static const char *name_of(int i) {
  return i >= 0 ? configs[i].config.name : "auto";
}

static int config_index(const char *name) {
  for (int i = 0; i < NCONFIGS; i++)
    if (strcmp(configs[i].config.name, name) == 0)
      return i;
  return -1;
}

static int usable(int i, unsigned features) {
  return i >= 0 && configs[i].init &&
         (configs[i].config.needs & ~features) == 0;
}

static cntx_t *context_of(int i) { return i >= 0 ? &choice.cntx[i] : NULL; }

/* Seconds of one single-thread n x n x n GEMM with context i. */
static double time_gemm(int i, mlsba_precision_t p, int64_t n, void *a, void *b,
                        void *c) {
  rntm_t rntm = BLIS_RNTM_INITIALIZER;
  bli_rntm_set_num_threads(1, &rntm);
  double t0 = mlsba__now();
  if (p == MLSBA_PRECISION_DOUBLE) {
    double one = 1, zero = 0;
    bli_dgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, 1, n,
                 b, 1, n, &zero, c, 1, n, context_of(i), &rntm);
  } else {
    float one = 1, zero = 0;
    bli_sgemm_ex(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, n, n, n, &one, a, 1, n,
                 b, 1, n, &zero, c, 1, n, context_of(i), &rntm);
  }
  return mlsba__now() - t0;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

enum { ROUNDS = 3, MAX_TIMED = NCONFIGS + 1 };

/* Times BLIS's own kernels (index -1) and each candidate in interleaved
 * rounds, after a warm-up call each; keeps the fastest median per
 * precision. BLIS's own stays unless another is 3% faster: a choice that
 * noise could flip is not worth a different rounding. */
static void measure(const int *idx, size_t n_idx) {
  enum { N = 768 };
  double *a = malloc(sizeof(double) * N * N);
  double *b = malloc(sizeof(double) * N * N);
  double *c = malloc(sizeof(double) * N * N);
  if (!a || !b || !c) {
    snprintf(choice.reason, sizeof choice.reason,
             "BLIS's own (no memory to time the others)");
    goto out;
  }
  for (size_t i = 0; i < (size_t)N * N; i++)
    a[i] = b[i] = (double)(i % 13) / 13.0;
  for (int p = 0; p < 2; p++) {
    double t[MAX_TIMED][ROUNDS];
    for (size_t j = 0; j < n_idx; j++)
      time_gemm(idx[j], (mlsba_precision_t)p, N, a, b, c);
    for (int r = 0; r < ROUNDS; r++)
      for (size_t j = 0; j < n_idx; j++)
        t[j][r] = time_gemm(idx[j], (mlsba_precision_t)p, N, a, b, c);
    double best = 0;
    for (size_t j = 0; j < n_idx; j++) {
      qsort(t[j], ROUNDS, sizeof(double), by_value);
      double g = 2.0 * N * N * N / t[j][ROUNDS / 2] / 1e9;
      int better = idx[j] == -1 ? g > best : g > 1.03 * best;
      if (j == 0 || better) {
        best = g;
        choice.chosen[p] = idx[j];
      }
    }
    choice.gflops[p] = best;
  }
  snprintf(choice.reason, sizeof choice.reason,
           "measured: the fastest of %zu on one core", n_idx);
out:
  free(a);
  free(b);
  free(c);
}

static unsigned detected_needs(const char *name);

/* ---- the cache --------------------------------------------------------- */

/* DIR/HOST/cpu-kernels; 0 when there is no cache (MLSBA_CACHE_DIR=none, no
 * home). Makes the folders it may: the cache root's "mlsba" and the host's. */
static int cache_path(char *buf, size_t size) {
  char root[512];
  const char *env = getenv("MLSBA_CACHE_DIR");
  if (env && strcmp(env, "none") == 0)
    return 0;
  if (env && *env) {
    snprintf(root, sizeof root, "%s", env);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) {
      snprintf(root, sizeof root, "%s/mlsba", xdg);
    } else if (home && *home) {
      /* A new account may have no ~/.cache yet: it is the user's, 0700. */
      snprintf(root, sizeof root, "%s/.cache", home);
      if (mkdir(root, 0700) != 0 && errno != EEXIST)
        return 0;
      snprintf(root, sizeof root, "%s/.cache/mlsba", home);
    } else {
      return 0;
    }
    if (mkdir(root, 0755) != 0 && errno != EEXIST)
      return 0;
  }
  char host[128] = {0};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0' ||
      strchr(host, '/') || host[0] == '.')
    snprintf(host, sizeof host, "localhost");
  int len = snprintf(buf, size, "%s/%s", root, host);
  if (len < 0 || (size_t)len >= size)
    return 0;
  if (mkdir(buf, 0755) != 0 && errno != EEXIST)
    return 0;
  len = snprintf(buf, size, "%s/%s/cpu-kernels", root, host);
  return len > 0 && (size_t)len < size;
}

/* The saved choice for this key, or 0. Never trusted beyond what the CPU
 * executes: a name this CPU cannot run is a foreign file. */
static int cache_read(const char *path, const char *key, unsigned features) {
  FILE *f = NULL;
  if (mlsba__open_regular(path, &f) != 0)
    return 0;
  char line[512], names[2][32];
  double g[2];
  int ok =
      fgets(line, sizeof line, f) && strcmp(line, "mlsba cpu-kernels 1\n") == 0;
  ok = ok && fgets(line, sizeof line, f) && strncmp(line, "key ", 4) == 0;
  if (ok) {
    line[strcspn(line, "\n")] = '\0';
    ok = strcmp(line + 4, key) == 0;
  }
  ok = ok && fscanf(f, "single %31s %lf\n", names[0], &g[0]) == 2 &&
       fscanf(f, "double %31s %lf\n", names[1], &g[1]) == 2;
  fclose(f);
  for (int p = 0; ok && p < 2; p++) {
    int i = strcmp(names[p], "auto") == 0 ? -1 : config_index(names[p]);
    ok = (i == -1 ? (detected_needs(choice.detected) & ~features) == 0
                  : usable(i, features)) &&
         g[p] >= 0 && g[p] < 1e7;
    choice.chosen[p] = i;
    choice.gflops[p] = g[p];
  }
  if (ok)
    snprintf(choice.reason, sizeof choice.reason,
             "measured on this CPU earlier, kept in %.100s", path);
  return ok;
}

static void cache_write(const char *path, const char *key) {
  char text[768];
  int len = snprintf(text, sizeof text,
                     "mlsba cpu-kernels 1\nkey %s\nsingle %s %.1f\n"
                     "double %s %.1f\n",
                     key, name_of(choice.chosen[0]), choice.gflops[0],
                     name_of(choice.chosen[1]), choice.gflops[1]);
  if (len > 0 && (size_t)len < sizeof text)
    (void)mlsba__write_atomic(path, text,
                              (size_t)len); /* a cache: best effort */
}

/* MLSBA_CPU_KERNELS: 1 when it decided. */
static int forced(unsigned features) {
  const char *env = getenv("MLSBA_CPU_KERNELS");
  if (!env || !*env)
    return 0;
  int own = strcmp(env, "auto") == 0;
  int i = own ? -1 : config_index(env);
  if (own ? (detected_needs(choice.detected) & ~features) != 0
          : !usable(i, features)) {
    snprintf(choice.reason, sizeof choice.reason,
             "MLSBA_CPU_KERNELS=%.40s refused (%s); ", env,
             own || (i >= 0 && configs[i].init)
                 ? "this CPU lacks its instructions"
             : i < 0 ? "no such sub-configuration"
                     : "not in this build");
    return 0;
  }
  if (i >= 0)
    configs[i].init(&choice.cntx[i]);
  choice.chosen[0] = choice.chosen[1] = i;
  snprintf(choice.reason, sizeof choice.reason, "forced by MLSBA_CPU_KERNELS");
  return 1;
}

/* The features BLIS's own sub-configuration (by its name) runs on: under
 * MLSBA_CPU_HIDE its choice, made from the real CPU, is not taken when it
 * needs a hidden feature, as on a CPU that lacks it. */
static unsigned detected_needs(const char *name) {
  static const struct {
    const char *name;
    unsigned needs;
  } known[] = {
      {"skx", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"knl", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"haswell", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen2", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen3", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"excavator", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"steamroller", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"piledriver", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"bulldozer", MLSBA__CPU_AVX},
      {"sandybridge", MLSBA__CPU_AVX},
      {"penryn", MLSBA__CPU_SSSE3},
      {"generic", 0},
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(known[i].name, name) == 0)
      return known[i].needs;
  return MLSBA__CPU_AVX512; /* unknown to us: only on a CPU with it all */
}

/* Among the timed indices (-1: BLIS's own): by the count, the cache, or
 * by timing them. */
static void decide(unsigned features, const int *idx, size_t n_idx,
                   int own_usable) {
  if (n_idx == 0 || (n_idx == 1 && own_usable)) {
    snprintf(choice.reason, sizeof choice.reason,
             "BLIS's own (this build reaches no other sub-configuration)");
    return;
  }
  if (n_idx == 1) { /* one sub-configuration left: nothing to time */
    choice.chosen[0] = choice.chosen[1] = idx[0];
    snprintf(choice.reason, sizeof choice.reason,
             "the only one this CPU's features allow");
    return;
  }
  char key[256], path[640];
  cpu_key(features, key, sizeof key);
  int cached = cache_path(path, sizeof path);
  if (cached && cache_read(path, key, features))
    return;
  measure(idx, n_idx);
  if (cached && choice.gflops[0] > 0)
    cache_write(path, key);
}

static void choose(void) {
  bli_init();
  snprintf(choice.detected, sizeof choice.detected, "%s",
           bli_arch_string(bli_arch_query_id()));
  unsigned features = mlsba__cpu_features();
  int idx[MAX_TIMED];
  size_t n_idx = 0;
  int own_usable = (detected_needs(choice.detected) & ~features) == 0;
  if (own_usable)
    idx[n_idx++] = -1;
  const mlsba__cpu_config_t *cand[NCONFIGS];
  size_t nc = mlsba__cpu_kernel_candidates(features, cand, NCONFIGS);
  for (size_t j = 0; j < nc; j++) {
    int i = config_index(cand[j]->name);
    if (usable(i, features)) {
      configs[i].init(&choice.cntx[i]);
      idx[n_idx++] = i;
    }
  }
  if (forced(features))
    return;
  char refused[256]; /* why a forced name was not taken, or "" */
  memcpy(refused, choice.reason, sizeof refused);
  decide(features, idx, n_idx, own_usable);
  if (refused[0]) {
    char tail[256];
    memcpy(tail, choice.reason, sizeof tail);
    snprintf(choice.reason, sizeof choice.reason, "%.150s%.100s", refused,
             tail);
  }
}

static void ensure_chosen(void) { pthread_once(&choice_once, choose); }

void *mlsba__cpu_kernel_context(mlsba_precision_t p) {
  ensure_chosen();
  return context_of(choice.chosen[p == MLSBA_PRECISION_DOUBLE]);
}

const char *mlsba__cpu_kernel_name(mlsba_precision_t p) {
  ensure_chosen();
  return name_of(choice.chosen[p == MLSBA_PRECISION_DOUBLE]);
}

const char *mlsba__cpu_kernel_detected(void) {
  ensure_chosen();
  return choice.detected;
}

const char *mlsba__cpu_kernel_reason(void) {
  ensure_chosen();
  return choice.reason;
}

double mlsba__cpu_kernel_gflops(mlsba_precision_t p) {
  ensure_chosen();
  return choice.gflops[p == MLSBA_PRECISION_DOUBLE];
}
