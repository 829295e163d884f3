/* The private OpenBLAS (cpu_openblas.h says why and how). Only dlmopen,
 * dlsym and OpenBLAS's documented interface are used: its CBLAS calls,
 * openblas_get_config/_corename/_num_threads, and the environment
 * variables it documents, read by its own copy of the C library. */
#define _GNU_SOURCE /* dlmopen, dlinfo, Lmid_t */
#include "cpu_openblas.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_kernels.h"

/* CBLAS's enumerations (cblas.h), the values every CBLAS shares. */
enum {
  COL_MAJOR = 102,
  NO_TRANS = 111,
  TRANS = 112,
  UPPER = 121,
  LOWER = 122,
  NON_UNIT = 131,
  UNIT = 132,
  LEFT = 141,
  RIGHT = 142
};

/* The LP64 build's prototypes (int dimensions). */
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *,
                         int, const double *, int, double, double *, int);
typedef void (*ssyrk_fn)(int, int, int, int, int, float, const float *, int,
                         float, float *, int);
typedef void (*dsyrk_fn)(int, int, int, int, int, double, const double *, int,
                         double, double *, int);
typedef void (*stri_fn)(int, int, int, int, int, int, int, float, const float *,
                        int, float *, int);
typedef void (*dtri_fn)(int, int, int, int, int, int, int, double,
                        const double *, int, double *, int);

static struct {
  int loaded;
  void *libc, *lib;
  char label[96];
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  ssyrk_fn ssyrk;
  dsyrk_fn dsyrk;
  stri_fn strsm, strmm;
  dtri_fn dtrsm, dtrmm;
} ob;

const char *mlsba__openblas_core_type(unsigned features) {
  if (features & MLSBA__CPU_AVX512)
    return "SkylakeX";
  if ((features & (MLSBA__CPU_AVX2 | MLSBA__CPU_FMA)) ==
      (MLSBA__CPU_AVX2 | MLSBA__CPU_FMA))
    return "Haswell";
  return NULL;
}

#ifdef MLSBA_OPENBLAS_PATH

void mlsba__openblas_key(unsigned features, char *buf, size_t size) {
  const char *type = mlsba__openblas_core_type(features);
  char *real = realpath(MLSBA_OPENBLAS_PATH, NULL);
  struct stat st;
  if (type == NULL)
    snprintf(buf, size, "none (no AVX2)");
  else if (real == NULL || stat(real, &st) != 0)
    snprintf(buf, size, "none (not installed)");
  else
    snprintf(buf, size, "%.100s %lld %s",
             strrchr(real, '/') ? strrchr(real, '/') + 1 : real,
             (long long)st.st_size, type);
  free(real);
}

static void unload(void) {
  if (ob.lib)
    dlclose(ob.lib);
  if (ob.libc)
    dlclose(ob.libc);
  memset(&ob, 0, sizeof ob);
}

/* Its symbols; 0 when one is missing. */
static int find_calls(void) {
  *(void **)&ob.sgemm = dlsym(ob.lib, "cblas_sgemm");
  *(void **)&ob.dgemm = dlsym(ob.lib, "cblas_dgemm");
  *(void **)&ob.ssyrk = dlsym(ob.lib, "cblas_ssyrk");
  *(void **)&ob.dsyrk = dlsym(ob.lib, "cblas_dsyrk");
  *(void **)&ob.strsm = dlsym(ob.lib, "cblas_strsm");
  *(void **)&ob.dtrsm = dlsym(ob.lib, "cblas_dtrsm");
  *(void **)&ob.strmm = dlsym(ob.lib, "cblas_strmm");
  *(void **)&ob.dtrmm = dlsym(ob.lib, "cblas_dtrmm");
  return ob.sgemm && ob.dgemm && ob.ssyrk && ob.dsyrk && ob.strsm && ob.dtrsm &&
         ob.strmm && ob.dtrmm;
}

/* What it says of itself: the core type asked for, one thread, and room
 * for a buffer per core (each call of a pinned core holds one of its
 * 2 x MAX_THREADS); *why when not. */
static int check_itself(const char *type, const char **why) {
  char *(*corename)(void), *(*config)(void);
  int (*threads)(void);
  *(void **)&corename = dlsym(ob.lib, "openblas_get_corename");
  *(void **)&config = dlsym(ob.lib, "openblas_get_config");
  *(void **)&threads = dlsym(ob.lib, "openblas_get_num_threads");
  if (!corename || !config || !threads || !find_calls()) {
    *why = "OpenBLAS lacks a CBLAS call or openblas_get_config";
    return -1;
  }
  if (strcasecmp(corename(), type) != 0) {
    *why = "OpenBLAS did not take the core type asked for";
    return -1;
  }
  if (threads() != 1) {
    *why = "OpenBLAS did not take one thread";
    return -1;
  }
  const char *conf = config(), *max = strstr(conf, "MAX_THREADS=");
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (max && cores > atol(max + 12)) {
    *why = "this machine has more cores than OpenBLAS's MAX_THREADS";
    return -1;
  }
  char version[32] = "?";
  sscanf(conf, "OpenBLAS %31s", version);
  snprintf(ob.label, sizeof ob.label, "OpenBLAS %s %s", version, corename());
  return 0;
}

int mlsba__openblas_load(unsigned features, const char **why) {
  if (ob.loaded)
    return 0;
  const char *type = mlsba__openblas_core_type(features);
  if (type == NULL) {
    *why = "no OpenBLAS core type for a CPU without AVX2 and FMA";
    return -1;
  }
  /* The private environment, all OpenBLAS reads: nothing of the
   * process's (OPENBLAS_VERBOSE, OPENBLAS_CORETYPE) reaches it. */
  static char coretype[64];
  static char *env[] = {coretype, "OPENBLAS_NUM_THREADS=1", NULL};
  snprintf(coretype, sizeof coretype, "OPENBLAS_CORETYPE=%s", type);
  if (access(MLSBA_OPENBLAS_PATH, R_OK) != 0) {
    *why = "OpenBLAS is not installed (Debian: libopenblas0-pthread)";
    return -1;
  }
  ob.libc = dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW | RTLD_LOCAL);
  Lmid_t lmid;
  char ***environ_of_libc = ob.libc ? dlsym(ob.libc, "environ") : NULL;
  if (!ob.libc || !environ_of_libc ||
      dlinfo(ob.libc, RTLD_DI_LMID, &lmid) != 0) {
    *why = "no link-map namespace of its own for OpenBLAS (dlmopen)";
    unload();
    return -1;
  }
  *environ_of_libc = env;
  ob.lib = dlmopen(lmid, MLSBA_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
  if (ob.lib == NULL) {
    *why = "OpenBLAS did not load in a namespace of its own (dlmopen)";
    unload();
    return -1;
  }
  if (check_itself(type, why) != 0) {
    unload();
    return -1;
  }
  ob.loaded = 1;
  return 0;
}

#else /* built without OpenBLAS found */

void mlsba__openblas_key(unsigned features, char *buf, size_t size) {
  (void)features;
  snprintf(buf, size, "none (not found when libmlsba was built)");
}

int mlsba__openblas_load(unsigned features, const char **why) {
  (void)features;
  *why = "OpenBLAS was not found when libmlsba was built (Debian: "
         "libopenblas-pthread-dev)";
  return -1;
}

#endif

const char *mlsba__openblas_label(void) { return ob.label; }

void *mlsba__openblas_symbol(const char *name) {
  return ob.loaded ? dlsym(ob.lib, name) : NULL;
}

static int fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

static int trans_of(char t) { return t == 'T' || t == 't' ? TRANS : NO_TRANS; }

static int uplo_of(char u) { return u == 'U' || u == 'u' ? UPPER : LOWER; }

int mlsba__openblas_gemm(mlsba_precision_t p, char transa, char transb,
                         int64_t m, int64_t n, int64_t k, double alpha,
                         const void *a, int64_t lda, const void *b, int64_t ldb,
                         double beta, void *c, int64_t ldc) {
  if (!ob.loaded || !fits(m) || !fits(n) || !fits(k) || !fits(lda) ||
      !fits(ldb) || !fits(ldc))
    return 1;
  if (p == MLSBA_PRECISION_DOUBLE)
    ob.dgemm(COL_MAJOR, trans_of(transa), trans_of(transb), (int)m, (int)n,
             (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
  else
    ob.sgemm(COL_MAJOR, trans_of(transa), trans_of(transb), (int)m, (int)n,
             (int)k, (float)alpha, a, (int)lda, b, (int)ldb, (float)beta, c,
             (int)ldc);
  return 0;
}

int mlsba__openblas_syrk(mlsba_precision_t p, char uplo, char trans, int64_t n,
                         int64_t k, double alpha, const void *a, int64_t lda,
                         double beta, void *c, int64_t ldc) {
  if (!ob.loaded || !fits(n) || !fits(k) || !fits(lda) || !fits(ldc))
    return 1;
  if (p == MLSBA_PRECISION_DOUBLE)
    ob.dsyrk(COL_MAJOR, uplo_of(uplo), trans_of(trans), (int)n, (int)k, alpha,
             a, (int)lda, beta, c, (int)ldc);
  else
    ob.ssyrk(COL_MAJOR, uplo_of(uplo), trans_of(trans), (int)n, (int)k,
             (float)alpha, a, (int)lda, (float)beta, c, (int)ldc);
  return 0;
}

static int triangular(int trmm, mlsba_precision_t p, char side, char uplo,
                      char trans, char diag, int64_t m, int64_t n, double alpha,
                      const void *a, int64_t lda, void *b, int64_t ldb) {
  if (!ob.loaded || !fits(m) || !fits(n) || !fits(lda) || !fits(ldb))
    return 1;
  int s = side == 'R' || side == 'r' ? RIGHT : LEFT;
  int d = diag == 'U' || diag == 'u' ? UNIT : NON_UNIT;
  if (p == MLSBA_PRECISION_DOUBLE)
    (trmm ? ob.dtrmm : ob.dtrsm)(COL_MAJOR, s, uplo_of(uplo), trans_of(trans),
                                 d, (int)m, (int)n, alpha, a, (int)lda, b,
                                 (int)ldb);
  else
    (trmm ? ob.strmm : ob.strsm)(COL_MAJOR, s, uplo_of(uplo), trans_of(trans),
                                 d, (int)m, (int)n, (float)alpha, a, (int)lda,
                                 b, (int)ldb);
  return 0;
}

int mlsba__openblas_trsm(mlsba_precision_t p, char side, char uplo, char trans,
                         char diag, int64_t m, int64_t n, double alpha,
                         const void *a, int64_t lda, void *b, int64_t ldb) {
  return triangular(0, p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}

int mlsba__openblas_trmm(mlsba_precision_t p, char side, char uplo, char trans,
                         char diag, int64_t m, int64_t n, double alpha,
                         const void *a, int64_t lda, void *b, int64_t ldb) {
  return triangular(1, p, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);
}
