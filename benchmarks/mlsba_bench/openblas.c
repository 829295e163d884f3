#include "openblas.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The CBLAS prototypes of OpenBLAS's LP64 build (int indices). */
enum { COL_MAJOR = 102, NO_TRANS = 111 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *,
                         int, const double *, int, double, double *, int);

/* LAPACK inside OpenBLAS (Fortran calling convention). */
typedef void (*getrf_fn)(const int *, const int *, void *, const int *, int *,
                         int *);
typedef void (*potrf_fn)(const char *, const int *, void *, const int *, int *,
                         size_t);
typedef void (*gesv_fn)(const int *, const int *, void *, const int *, int *,
                        void *, const int *, int *);
typedef void (*getrs_fn)(const char *, const int *, const int *, const void *,
                         const int *, const int *, void *, const int *, int *,
                         size_t);
typedef void (*posv_fn)(const char *, const int *, const int *, void *,
                        const int *, void *, const int *, int *, size_t);
typedef void (*potrs_fn)(const char *, const int *, const int *, const void *,
                         const int *, void *, const int *, int *, size_t);
typedef void (*geqrf_fn)(const int *, const int *, void *, const int *, void *,
                         void *, const int *, int *);

/* LAPACK's calls inside OpenBLAS, by name: the row of each call's pair
 * of pointers (single, double) in ob.lapack, found by one loop as s<name>_
 * and d<name>_. A call this OpenBLAS lacks stays NULL, and its wrapper
 * says so in its info. */
enum { GETRF, POTRF, GESV, GETRS, POSV, POTRS, GEQRF, LAPACK_CALLS };
static const char *const lapack_names[LAPACK_CALLS] = {
    "getrf", "potrf", "gesv", "getrs", "posv", "potrs", "geqrf"};

static struct {
  int tried, ok;
  void *lapack[LAPACK_CALLS][2]; /* [call][double?] */
  char why[160], label[128], corename[32], weak[256];
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  void (*set_threads)(int);
} ob;

/* The best family of the CPU's ISA, as OpenBLAS's dynamic build names
 * it, or NULL below AVX2. */
static const char *best_core_type(void) {
  const char *type = NULL;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    type = __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    type = "Haswell";
#endif
  return type;
}

/* OpenBLAS reads OPENBLAS_CORETYPE as it loads. Its own detection can
 * settle on older kernels than the CPU runs (Haswell on AVX-512 AMD
 * cores, Prescott on a Xeon that 0.3.21 did not know), so unless the user
 * chose, the best family of the CPU's ISA is asked for. It takes only
 * where this dlopen is the first load: a program that links OpenBLAS, as
 * libmlsba links Debian's liblapack.so.3 (OpenBLAS's), has it loaded and
 * its kernels chosen before main; openblas_weak() then says so. */
static void choose_core_type(void) {
  const char *type = best_core_type();
  if (!getenv("OPENBLAS_CORETYPE") && type)
    setenv("OPENBLAS_CORETYPE", type, 0);
}

/* A kernel family's vector width: 3 AVX-512, 2 AVX2, 1 AVX, 0 below (or
 * unknown here). */
static int core_rank(const char *name) {
  static const struct {
    const char *name;
    int rank;
  } known[] = {{"SkylakeX", 3},  {"Cooperlake", 3}, {"SapphireRapids", 3},
               {"Haswell", 2},   {"Zen", 2},        {"Sandybridge", 1},
               {"Bulldozer", 1}, {"Piledriver", 1}, {"Steamroller", 1},
               {"Excavator", 1}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcasecmp(known[i].name, name) == 0)
      return known[i].rank;
  return 0;
}

int openblas_load(const char **why) {
  if (!ob.tried) {
    ob.tried = 1;
#ifdef MLSBA_OPENBLAS_LIBRARY
    choose_core_type();
    /* Its idle threads spin for 2^28 cycles after a call by default, and
     * slowed the rows run after it by a fifth: they sleep at once here
     * (a wake-up costs microseconds against calls of 0.1 s and more). */
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    void *lib = dlopen(MLSBA_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      snprintf(ob.why, sizeof ob.why, "OpenBLAS: %s", dlerror());
    } else {
      ob.sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
      ob.dgemm = (dgemm_fn)dlsym(lib, "cblas_dgemm");
      for (int call = 0; call < LAPACK_CALLS; call++)
        for (int d = 0; d < 2; d++) {
          char name[16];
          snprintf(name, sizeof name, "%c%s_", d ? 'd' : 's',
                   lapack_names[call]);
          ob.lapack[call][d] = dlsym(lib, name);
        }
      *(void **)&ob.set_threads = dlsym(lib, "openblas_set_num_threads");
      char *(*corename)(void);
      char *(*config)(void);
      *(void **)&corename = dlsym(lib, "openblas_get_corename");
      *(void **)&config = dlsym(lib, "openblas_get_config");
      ob.ok = ob.sgemm && ob.dgemm && ob.set_threads && corename && config;
      if (ob.ok) {
        /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." : the version is its second word
         */
        char version[32] = "?";
        sscanf(config(), "OpenBLAS %31s", version);
        snprintf(ob.label, sizeof ob.label, "OpenBLAS %s, %s kernels", version,
                 corename());
        snprintf(ob.corename, sizeof ob.corename, "%s", corename());
        const char *best = best_core_type();
        if (best && core_rank(ob.corename) < core_rank(best))
          snprintf(ob.weak, sizeof ob.weak,
                   "OpenBLAS chose its %s kernels, not %s's;\n  export "
                   "OPENBLAS_CORETYPE=%s before the program starts",
                   ob.corename, best, best);
      } else {
        snprintf(ob.why, sizeof ob.why, "OpenBLAS: %s lacks the CBLAS calls",
                 MLSBA_OPENBLAS_LIBRARY);
      }
    }
#else
    snprintf(ob.why, sizeof ob.why,
             "OpenBLAS was not found when mlsba-bench was built (Debian: "
             "libopenblas-pthread-dev)");
#endif
  }
  *why = ob.why;
  return ob.ok ? 0 : 1;
}

const char *openblas_label(void) { return ob.label; }

const char *openblas_corename(void) { return ob.corename; }

const char *openblas_best_core(void) {
  const char *best = best_core_type();
  return best ? best : "";
}

const char *openblas_weak(void) { return ob.weak; }

/* The call's function in the precision p, OpenBLAS set to `threads`
 * threads first; NULL when this OpenBLAS lacks it. The pointer is cast
 * to the call's own type by its wrapper (POSIX's dlsym rule). */
static void *lapack_call(int call, mlsba_precision_t p, unsigned threads) {
  ob.set_threads((int)threads);
  return ob.lapack[call][p == MLSBA_PRECISION_DOUBLE];
}

int openblas_getrf(mlsba_precision_t prec, int n, void *a, int *ipiv,
                   unsigned threads) {
  int info = -1;
  getrf_fn f;
  if ((*(void **)&f = lapack_call(GETRF, prec, threads)) != NULL)
    f(&n, &n, a, &n, ipiv, &info);
  return info;
}

int openblas_potrf(mlsba_precision_t prec, int n, void *a, unsigned threads) {
  int info = -1;
  potrf_fn f;
  if ((*(void **)&f = lapack_call(POTRF, prec, threads)) != NULL)
    f("L", &n, a, &n, &info, 1);
  return info;
}

int openblas_gesv(mlsba_precision_t prec, int n, int nrhs, void *a, int *ipiv,
                  void *b, unsigned threads) {
  int info = -100;
  gesv_fn f;
  if ((*(void **)&f = lapack_call(GESV, prec, threads)) != NULL)
    f(&n, &nrhs, a, &n, ipiv, b, &n, &info);
  return info;
}

int openblas_getrs(mlsba_precision_t prec, int n, int nrhs, const void *a,
                   const int *ipiv, void *b, unsigned threads) {
  int info = -100;
  getrs_fn f;
  if ((*(void **)&f = lapack_call(GETRS, prec, threads)) != NULL)
    f("N", &n, &nrhs, a, &n, ipiv, b, &n, &info, 1);
  return info;
}

int openblas_posv(mlsba_precision_t prec, int n, int nrhs, void *a, void *b,
                  unsigned threads) {
  int info = -100;
  posv_fn f;
  if ((*(void **)&f = lapack_call(POSV, prec, threads)) != NULL)
    f("L", &n, &nrhs, a, &n, b, &n, &info, 1);
  return info;
}

int openblas_potrs(mlsba_precision_t prec, int n, int nrhs, const void *a,
                   void *b, unsigned threads) {
  int info = -100;
  potrs_fn f;
  if ((*(void **)&f = lapack_call(POTRS, prec, threads)) != NULL)
    f("L", &n, &nrhs, a, &n, b, &n, &info, 1);
  return info;
}

int openblas_geqrf(mlsba_precision_t prec, int m, int n, void *a, void *tau,
                   unsigned threads) {
  int d = prec == MLSBA_PRECISION_DOUBLE, info = -1, lwork = -1;
  union {
    double d;
    float s;
  } best = {0}; /* the workspace query's answer, in the call's precision */
  geqrf_fn f;
  if ((*(void **)&f = lapack_call(GEQRF, prec, threads)) == NULL)
    return info;
  f(&m, &n, a, &m, tau, &best, &lwork, &info);
  lwork = d ? (int)best.d : (int)best.s;
  lwork = lwork > n ? lwork : n > 0 ? n : 1;
  void *work = malloc((size_t)lwork * (d ? sizeof(double) : sizeof(float)));
  if (work == NULL)
    return -1000;
  f(&m, &n, a, &m, tau, work, &lwork, &info);
  free(work);
  return info;
}

void openblas_gemm(const mlsba_gemm_t *g, int64_t ncols, unsigned threads) {
  ob.set_threads((int)threads);
  int m = (int)g->m, n = (int)ncols, k = (int)g->k;
  if (g->precision == MLSBA_PRECISION_DOUBLE)
    ob.dgemm(COL_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0, g->a, m, g->b, k, 0.0,
             g->c, m);
  else
    ob.sgemm(COL_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0f, g->a, m, g->b, k,
             0.0f, g->c, m);
}
