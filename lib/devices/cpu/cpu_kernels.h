/* Which BLIS kernels the CPU's cores run. BLIS picks a sub-configuration
 * from the CPU it knows; a CPU newer than the installed BLIS gets its
 * `generic` reference kernels (a fifth of the silicon). So the choice is
 * made here: the sub-configurations the CPU can execute (its ISA flags
 * decide, never a guess: a wrong one is SIGILL), BLIS's own among them,
 * each timed on a GEMM, the fastest kept per precision. The decision is
 * cached per host and re-made when the CPU, its features or BLIS change.
 *
 * Environment (read once, at the first use):
 *   MLSBA_CPU_KERNELS=NAME  force a sub-configuration (auto: BLIS's own);
 *                           refused when the CPU lacks its instructions
 *   MLSBA_CPU_HIDE=LIST     hide CPU features from the choice
 *                           (avx512,avx2,fma,avx,ssse3): test the fallback
 *                           order of a machine without them
 *   MLSBA_CACHE_DIR=DIR     where the decision is kept (default
 *                           $XDG_CACHE_HOME/mlsba, else ~/.cache/mlsba;
 *                           "none": neither read nor written) */
#ifndef MLSBA_DEVICES_CPU_CPU_KERNELS_H
#define MLSBA_DEVICES_CPU_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* The CPU features the sub-configurations need. */
enum {
  MLSBA__CPU_SSSE3 = 1u << 0,
  MLSBA__CPU_AVX = 1u << 1,
  MLSBA__CPU_FMA = 1u << 2,
  MLSBA__CPU_AVX2 = 1u << 3,
  MLSBA__CPU_AVX512 = 1u << 4, /* F, DQ, BW and VL, as skx needs */
};

/* A sub-configuration: its BLIS name and the features its kernels use. */
typedef struct {
  const char *name;
  unsigned needs;
} mlsba__cpu_config_t;

/* The sub-configurations worth timing on a CPU with `features`, fastest
 * family first (AVX-512, then AVX2+FMA, then AVX, SSSE3, reference): only
 * those whose instructions the CPU has, and below AVX2 only the best family
 * the CPU reaches. Pure: the fallback order, testable by masking. Returns
 * the count written to out (at most max). */
size_t mlsba__cpu_kernel_candidates(unsigned features,
                                    const mlsba__cpu_config_t **out,
                                    size_t max);

/* The features of this CPU as the OS lets programs use them, less those
 * named in MLSBA_CPU_HIDE. */
unsigned mlsba__cpu_features(void);

/* The BLIS context chosen for a precision (NULL: BLIS's own). Makes the
 * choice at the first call (timing a few GEMMs, or reading the cache);
 * thread-safe. */
void *mlsba__cpu_kernel_context(mlsba_precision_t p);

/* The name of the sub-configuration chosen for p ("skx"), and the one BLIS
 * detected by itself ("generic"). */
const char *mlsba__cpu_kernel_name(mlsba_precision_t p);
const char *mlsba__cpu_kernel_detected(void);

/* Why: "measured", "cached", "forced by MLSBA_CPU_KERNELS", or why a
 * forced name was refused. */
const char *mlsba__cpu_kernel_reason(void);

/* GFLOPS of the chosen kernels on one core in the choice's measurement
 * (0 when the choice was forced or cached without it). */
double mlsba__cpu_kernel_gflops(mlsba_precision_t p);

#endif
