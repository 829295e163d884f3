/* Which kernels the CPU's cores run. BLIS picks a sub-configuration from
 * the CPU it knows; a CPU newer than the installed BLIS gets its `generic`
 * reference kernels (a fifth of the silicon). So the choice is made here:
 * the sub-configurations the CPU can execute (its ISA flags decide, never
 * a guess: a wrong one is SIGILL), BLIS's own among them, and a private
 * single-thread OpenBLAS where one is installed (cpu_openblas.h), each
 * timed on the shapes the library runs, one choice per shape class and
 * precision. The decision is cached per host and re-made when the CPU, its
 * features, BLIS or OpenBLAS change.
 *
 * Environment (read once, at the first use):
 *   MLSBA_CPU_KERNELS=NAME  force one kernel set for every class (auto:
 *                           BLIS's own; openblas: the private OpenBLAS);
 *                           refused when the CPU lacks its instructions
 *   MLSBA_CPU_HIDE=LIST     hide CPU features from the choice
 *                           (avx512,avx2,fma,avx,ssse3): test the fallback
 *                           order of a machine without them; a list with
 *                           an unknown name is ignored, and the reason says
 *   MLSBA_CACHE_DIR=DIR     where the decision is kept (default
 *                           $XDG_CACHE_HOME/mlsba, else ~/.cache/mlsba;
 *                           "none": neither read nor written; a path too
 *                           long is refused, and the reason says) */
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
 * named in MLSBA_CPU_HIDE (a list with an unknown name hides nothing). */
unsigned mlsba__cpu_features(void);

/* The features MLSBA_CPU_HIDE names (0 and *bad, *bad_len the unknown
 * name where it names one that is none of them). */
unsigned mlsba__cpu_hidden_features(const char **bad, size_t *bad_len);

/* What the kernels' decision depends on (CPU, features, BLIS, OpenBLAS),
 * one line: another key makes it again. */
void mlsba__cpu_key(unsigned features, char *buf, size_t size);

/* ---- shape classes ------------------------------------------------------
 * The kernel that wins depends on the shape: on an AMD Zen 4, BLIS's zen3
 * and skx kernels tie on a 768^3 GEMM while skx wins by 1.3x on a rank-192
 * update. So each call is put in a class by its shape, and each class has
 * its own choice. */
typedef enum {
  MLSBA__CPU_PRODUCT = 0, /* deep GEMM (k large): a load's column block */
  MLSBA__CPU_UPDATE,      /* rank-k, k small, m and n large: the
                             factorizations' and the MPI node's updates */
  MLSBA__CPU_TRIANGLE,    /* TRSM and TRMM: the triangle solves */
  MLSBA__CPU_PANEL,       /* k small and m or n small: tall-skinny panels */
  MLSBA__CPU_CLASSES
} mlsba__cpu_class_t;

/* What a call computes. */
typedef enum {
  MLSBA__CPU_OP_GEMM = 0,
  MLSBA__CPU_OP_GEMMT,
  MLSBA__CPU_OP_TRSM,
  MLSBA__CPU_OP_TRMM
} mlsba__cpu_op_t;

/* The class of a call from its operation and its shape (C is m x n, the
 * inner dimension k; for TRSM and TRMM k is unused). Pure, and cheap
 * enough for every call. */
mlsba__cpu_class_t mlsba__cpu_shape_class(mlsba__cpu_op_t op, int64_t m,
                                          int64_t n, int64_t k);

/* "product", "update", "triangle", "panel". */
const char *mlsba__cpu_class_name(mlsba__cpu_class_t c);

/* ---- kernel sets --------------------------------------------------------
 * A kernel set is named by an id: MLSBA__CPU_KERNEL_AUTO (BLIS's own), a
 * sub-configuration (0 .. its count - 1) or MLSBA__CPU_KERNEL_OPENBLAS. */
enum { MLSBA__CPU_KERNEL_AUTO = -1, MLSBA__CPU_KERNEL_OPENBLAS = 100 };

/* "skx", "auto", "openblas"; NULL for an id that names nothing. */
const char *mlsba__cpu_kernel_id_name(int id);

/* The kernel sets the choice times on this machine (ids, at most max),
 * after loading what they need; makes the choice first. */
size_t mlsba__cpu_kernel_timed(int *ids, size_t max);

/* Each class's timing shape (cpu_kernel_timing.c): the matrices, made and
 * filled once, and one run of a class with a kernel set on one thread, its
 * seconds (and its flops in *flops). Used by the choice and by
 * bench-kernels. */
typedef struct mlsba__cpu_timing mlsba__cpu_timing_t;
mlsba__cpu_timing_t *mlsba__cpu_timing_create(void); /* NULL: no memory */
void mlsba__cpu_timing_destroy(mlsba__cpu_timing_t *ws);
double mlsba__cpu_class_time(mlsba__cpu_timing_t *ws, int id,
                             mlsba_precision_t p, mlsba__cpu_class_t c,
                             double *flops, double *cpu_s);
/* (its wall seconds returned; in *cpu_s, when not NULL, the seconds the
 * calling thread ran: what another process took of the core left out) */

/* The rounds the choice timed in this process (bench-kernels shows them):
 * the kernel sets' ids (their count returned, at most max; 0 when the
 * choice was read from the cache or forced) and, per set j, its rounds'
 * GFLOPS by the thread's CPU time (cpu[j * MLSBA__CPU_TRACE_ROUNDS + r])
 * and by the wall clock (wall[...]); 0 for a round it did not run, the
 * first round (cold) among them. *rounds: the rounds class c ran. */
#define MLSBA__CPU_TRACE_ROUNDS 16
size_t mlsba__cpu_choice_rounds(mlsba_precision_t p, mlsba__cpu_class_t c,
                                int *ids, double *cpu, double *wall, size_t max,
                                int *rounds);

/* Why OpenBLAS is not among the kernel sets timed ("" when it is, or
 * when this CPU has no core type for it). */
const char *mlsba__cpu_kernel_openblas_why(void);

/* One class's choice in one precision: the kernel set (an id,
 * above) and its GFLOPS when timed, and the BLIS one that serves
 * the calls OpenBLAS does not take (equal to the first when it is BLIS). */
typedef struct {
  int kernel, blis;
  double gflops, blis_gflops;
} mlsba__cpu_pick_t;

/* How a choice was timed. Other processes on the machine take the core
 * from the timing thread, or its caches and memory: a choice cached at a
 * load average of 17 here ran 0.86 of OpenBLAS's SGEMM, and every later
 * process read it back. So the conditions are kept beside the choice; one
 * timed on a busy machine is timed again by later processes, up to
 * MLSBA__CPU_CACHE_TRIES timings in all, until one is quiet or two agree
 * (each timing about a second). A close call alone is not timed again:
 * either kernel set is within the band, and a flip would only turn away
 * the models saved under the first (their key names the kernels). */
typedef struct {
  double load;  /* the 1-minute load average when the timing began */
  int cpus;     /* the CPUs online then */
  double share; /* the timing thread's CPU time over its wall time */
  int close;    /* classes whose decision was a close call */
  int tries;    /* timings made for this choice (1 ..) */
  int settled;  /* 1: quiet, two timings agreed, or no tries left */
} mlsba__cpu_measured_t;

#define MLSBA__CPU_CACHE_TRIES 4

typedef struct {
  mlsba__cpu_pick_t pick[2][MLSBA__CPU_CLASSES]; /* [double?][class] */
  mlsba__cpu_measured_t how;
} mlsba__cpu_picks_t;

/* Whether a timing ran quiet: its thread had its core (share >= 0.95) and
 * the load average was below the CPUs. Pure. */
int mlsba__cpu_measured_quiet(const mlsba__cpu_measured_t *m);

/* The choice to keep after timing again a cached one that was not settled
 * (old): `now` holds the new timing and becomes the kept choice, its tries
 * old's plus one. Settled when the new timing is quiet (its choice kept)
 * or picks the same kernels as old in every class (two moments agree);
 * otherwise old's kernels are kept (a busy timing replaces nothing: the
 * models saved under old's kernels stay valid), settled once no tries are
 * left. Pure. */
void mlsba__cpu_choice_retimed(const mlsba__cpu_picks_t *old,
                               mlsba__cpu_picks_t *now);

/* ---- the decision, from measured speeds (pure) --------------------------
 * The choice must not flip with the noise of a shared machine: ten fresh
 * choices on one machine must agree, or differ only between kernel sets
 * within 2% of each other. */

/* Kernel sets within this ratio of the fastest BLIS set are ties, and the
 * first of them in the order of preference is kept; OpenBLAS takes a
 * class only where it beats that one by more than OPENBLAS_LEAD. Where
 * the speeds sit near a threshold, noise flips the choice across it, so
 * the choices a flip gives are about as far apart as the threshold: both
 * are 1%, so that a flip with a percent of noise on top stays within the
 * 2% the stability target allows (a lead of 5% flipped the
 * double-precision panel between OpenBLAS and skx 3.7% apart). */
#define MLSBA__CPU_TIE 0.99
#define MLSBA__CPU_OPENBLAS_LEAD 1.01

/* A kernel set's speed on a class from its rounds' GFLOPS (g[0..rounds),
 * 0 where it did not run; the first 16 rounds at most, as many as the
 * choice runs): the median of those it ran, 0 when none. A
 * round slowed by another process, or sped up by a passing boost of the
 * clock, moves a median of several rounds by at most one rank, where it
 * decided a best or second-best round. */
double mlsba__cpu_rounds_speed(const double *g, int rounds);

/* A class's choice from the speeds of the kernel sets ids[0..n), given in
 * the order of preference (GFLOPS; 0: not timed or left behind): among
 * BLIS's sets, the first within MLSBA__CPU_TIE of the fastest; OpenBLAS
 * where it beats that by more than MLSBA__CPU_OPENBLAS_LEAD. Nothing of
 * BLIS's timed: BLIS's own. Only the ids given can be chosen, so a set
 * the CPU's (masked) features rule out, never among them, never is. */
mlsba__cpu_pick_t mlsba__cpu_pick_of_speeds(const int *ids,
                                            const double *gflops, size_t n);

/* Whether that choice is a close call: another set within 3% of the
 * ratio that would change it (then more rounds are worth their time). */
int mlsba__cpu_pick_is_close(const int *ids, const double *gflops, size_t n);

/* Whether it is a clear one: no other set within MLSBA__CPU_CLEAR (5%) of
 * that ratio (then two pairs of rounds decide it: more would not change
 * it, and a class's rounds on a shape as large as the product's cost a
 * tenth of the choice). 0 when nothing of BLIS's was timed. */
#define MLSBA__CPU_CLEAR 1.05
int mlsba__cpu_pick_is_clear(const int *ids, const double *gflops, size_t n);

/* ---- the choice ---------------------------------------------------------
 * Made at the first call of any of these (timing the candidates, or
 * reading the cache); thread-safe. */

/* The kernel set chosen for class c and precision p (an id), and the BLIS
 * one that serves the calls OpenBLAS does not take (many threads, GEMMT
 * that is no SYRK); equal when the choice is BLIS. */
int mlsba__cpu_kernel_of(mlsba_precision_t p, mlsba__cpu_class_t c);
int mlsba__cpu_kernel_blis_of(mlsba_precision_t p, mlsba__cpu_class_t c);

/* The BLIS context of a BLIS id (NULL: BLIS's own). */
void *mlsba__cpu_kernel_context_of(int id);

/* The BLIS context of the product class for p (NULL: BLIS's own): makes
 * the choice. */
void *mlsba__cpu_kernel_context(mlsba_precision_t p);

/* The name of the product class's kernels for p ("skx"), and the
 * sub-configuration BLIS detected by itself ("generic"). */
const char *mlsba__cpu_kernel_name(mlsba_precision_t p);
const char *mlsba__cpu_kernel_detected(void);

/* The name of class c's kernels for p. */
const char *mlsba__cpu_kernel_class_name(mlsba_precision_t p,
                                         mlsba__cpu_class_t c);

/* "skx" when every class of p runs the same kernels, else the classes'
 * names joined by '.' in class order: the core's identity in model keys. */
void mlsba__cpu_kernel_signature(mlsba_precision_t p, char *buf, size_t size);

/* Why: "measured ...", "measured on this CPU earlier ...", "forced by
 * MLSBA_CPU_KERNELS", with what was refused in front. */
const char *mlsba__cpu_kernel_reason(void);

/* GFLOPS of class c's kernels for p on one core when they were timed (0
 * when the choice was forced); of the product class for the first. */
double mlsba__cpu_kernel_gflops(mlsba_precision_t p);
double mlsba__cpu_kernel_class_gflops(mlsba_precision_t p,
                                      mlsba__cpu_class_t c);

/* Seconds the choice took in this process (timing, or reading the cache). */
double mlsba__cpu_kernel_choice_seconds(void);

/* How the choice was made in this process: "timed" (no cache that could
 * be used), "retimed" (a cached choice not settled, timed again),
 * "cache" (read back), "forced" (MLSBA_CPU_KERNELS) or "fixed" (nothing
 * to time: one candidate, or no memory to time them). */
const char *mlsba__cpu_kernel_source(void);

/* The seconds of mlsba__cpu_kernel_choice_seconds() when the choice was
 * timed in this process ("timed", "retimed"); 0 otherwise. */
double mlsba__cpu_kernel_choice_timed_seconds(void);

/* Whether the choice has been made in this process (1) or not yet (0),
 * without making it: a caller that reads it before and after a call
 * tells whether the choice ran inside that call. */
int mlsba__cpu_kernel_choice_made(void);

#endif
