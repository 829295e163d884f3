/* The CPU's features as the OS lets programs use them (less what
 * MLSBA_CPU_HIDE hides) and the key of the kernels' decision: what the
 * choice in cpu_kernels.c depends on. */
#include <blis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MLSBA__X86 1
#endif

#include "cpu_kernels.h"
#include "cpu_openblas.h"

/* The features MLSBA_CPU_HIDE names; a list with a name that is none of
 * them hides nothing (a misspelt "avx-512" must not pass for a test of the
 * fallback), and *bad says which. */
unsigned mlsba__cpu_hidden_features(const char **bad, size_t *bad_len) {
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
  *bad = NULL;
  for (const char *p = env; p && *p;) {
    size_t len = strcspn(p, ", ");
    int known = len == 0; /* ",," and spaces: nothing named */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) {
        hide |= names[i].bit;
        known = 1;
      }
    if (!known) {
      *bad = p;
      *bad_len = len;
      return 0;
    }
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
  const char *bad;
  size_t bad_len;
  return f & ~mlsba__cpu_hidden_features(&bad, &bad_len);
}

/* "AMD EPYC 9B14|25.17.1|features 1f|BLIS 0.9.0|OpenBLAS ...": what the
 * decision depends on; another CPU, feature set, BLIS or OpenBLAS makes
 * it again. */
void mlsba__cpu_key(unsigned features, char *buf, size_t size) {
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
    for (size_t n = strlen(brand); n > 0 && brand[n - 1] == ' '; n--)
      brand[n - 1] = '\0'; /* CPUID pads it */
  }
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
    model = ((a >> 4) & 0xf) | ((a >> 12) & 0xf0);
    stepping = a & 0xf;
  }
#endif
  char openblas[160];
  mlsba__openblas_key(features, openblas, sizeof openblas);
  snprintf(buf, size, "%s|%u.%u.%u|features %x|BLIS %s|OpenBLAS %s", brand,
           family, model, stepping, features, bli_info_get_version_str(),
           openblas);
  for (char *p = buf; *p; p++) /* one line */
    if ((unsigned char)*p < 0x20)
      *p = ' ';
}
