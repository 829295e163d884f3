/*
 * libmlsba built-in loads: matrix multiplication (BLIS on cores, CLBlast
 * on OpenCL devices) and the Mandelbrot set (its own kernels), written
 * against the divisible-load interface of <mlsba/load.h> as an
 * application's load is. <mlsba.h> includes this file, so #include
 * <mlsba.h> is enough.
 */
#ifndef MLSBA_LOADS_H
#define MLSBA_LOADS_H

#include <mlsba/load.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/** \name Matrix multiplication, the built-in divisible load
 *
 *  C = A x B, column-major, split by columns of B and C: a load of x units
 *  on a device is x columns, and every device gets all of A. */
/**@{*/
typedef enum mlsba_precision {
  MLSBA_PRECISION_SINGLE = 0,
  MLSBA_PRECISION_DOUBLE
} mlsba_precision_t;

/** A product C = A x B. The caller owns the matrices. */
typedef struct mlsba_gemm {
  int64_t m, n, k;             /**< C is m x n, A m x k, B k x n */
  mlsba_precision_t precision; /**< element type of a, b and c */
  const void *a;               /**< column-major, leading dimension m */
  const void *b;               /**< column-major, leading dimension k */
  void *c;                     /**< column-major, leading dimension m */
} mlsba_gemm_t;

/** \brief Check C against a reference product computed in long double,
 *  element by element: |c_ij - sum_p a_ip b_pj| relative to
 *  sum_p |a_ip| |b_pj|, which must stay within 4 k u (u the unit roundoff
 *  of the precision). Every column is checked up to 2^27 multiply-adds;
 *  above, 64 columns (the first, the last and random ones), plus a check
 *  of all columns at once (C x against A (B x) for a random x), which
 *  catches any column left uncomputed or misplaced.
 *  \param[out] max_rel_error  the largest relative residual.
 *  \param[out] ok             1 when within the bound. */
MLSBA_EXTERN int mlsba_gemm_verify(const mlsba_gemm_t *g, uint64_t seed,
                                   double *max_rel_error, int *ok);

/** \brief GEMM as a load: the units are the n columns of B and C; cores
 *  compute with BLIS (one thread each), OpenCL devices with CLBlast (A and
 *  the slice of B in, the slice of C out, all in the device's time). The
 *  load keeps a copy of *g; the matrices stay the caller's. */
MLSBA_EXTERN int mlsba_load_gemm(const mlsba_gemm_t *g, mlsba_load_t **load);
/** \brief The whole product with BLIS alone on `threads` threads (BLIS's
 *  own threading, not pinned): what an application runs without
 *  balancing, the baseline mlsba-bench --compare measures against.
 *  \return 0 or MLSBA_EINVAL naming the problem. */
MLSBA_EXTERN int mlsba_gemm_blis(const mlsba_gemm_t *g, unsigned threads);

/** The kernels the CPU cores run (every CPU GEMM of the library: core
 *  devices, mlsba_gemm_blis(), the MPI node kernel, mlsba_cpu_gemm(),
 *  the factorizations). BLIS picks kernels for the CPUs it knows and falls
 *  back to slow reference ones on newer CPUs; libmlsba times the
 *  sub-configurations the CPU can execute (by its ISA flags), and
 *  OpenBLAS's kernels where it is installed, on each shape class the
 *  library runs (mlsba_cpu_class_t), and keeps the fastest per class and
 *  precision, cached per host ($MLSBA_CACHE_DIR, else
 *  $XDG_CACHE_HOME/mlsba or ~/.cache/mlsba; "none": no cache) and made
 *  again when the CPU, BLIS or OpenBLAS changes. MLSBA_CPU_KERNELS=NAME
 *  forces one set (auto: BLIS's own; openblas); MLSBA_CPU_HIDE=avx512,...
 *  hides CPU features from the choice. Strings are static: valid for the
 *  process's lifetime. */
typedef struct mlsba_cpu_kernels {
  const char *library;        /**< "BLIS 0.9.0" (and "OpenBLAS 0.3.21
                                   SkylakeX" when a class runs it) */
  const char *single_kernels; /**< the product class's kernels for single
                                   ("skx", "openblas") */
  const char *double_kernels; /**< and for double (when BLIS's own choice is
                                   kept, its name, equal to `detected`) */
  const char *detected;       /**< what BLIS picks by itself ("generic") */
  const char *reason;         /**< how the choice was made */
  double single_gflops;       /**< one core, product class; 0 when not timed */
  double double_gflops;
  char description[192]; /**< "BLIS 0.9.0, skx kernels (BLIS detected: ...)" */
} mlsba_cpu_kernels_t;

/** The shape classes of the cores' calls, each with its own choice of
 *  kernels (docs/cpu-kernels.md): the inner dimension k of a GEMM decides
 *  between a product (k >= 384) and the rank-k classes. */
typedef enum mlsba_cpu_class {
  MLSBA_CPU_CLASS_PRODUCT = 0, /**< k >= 384: a load's block of columns */
  MLSBA_CPU_CLASS_UPDATE,      /**< k < 384, m and n >= 256: a rank-k update */
  MLSBA_CPU_CLASS_TRIANGLE,    /**< TRSM and TRMM: the triangle solves */
  MLSBA_CPU_CLASS_PANEL,       /**< k < 384 and m or n < 256: tall-skinny */
  MLSBA_CPU_CLASS_COUNT
} mlsba_cpu_class_t;

/** \brief The kernels the cores run for class c in precision p.
 *  \param name set to the class's name ("product", "update", "triangle",
 *         "panel"); may be NULL
 *  \param kernels set to the kernel set ("skx", "zen3", ..., "openblas";
 *         BLIS's own by the name BLIS detected); may be NULL
 *  \param gflops set to their GFLOPS on one core on the class's timing
 *         shape when the choice was timed (0 when it was forced); may be
 *         NULL
 *  \return 0, or MLSBA_EINVAL for a class or precision out of range.
 *  Makes the choice when nothing has yet. */
MLSBA_EXTERN int mlsba_cpu_class_kernels(mlsba_precision_t p,
                                         mlsba_cpu_class_t c, const char **name,
                                         const char **kernels, double *gflops);

/** \brief Which kernels the cores run, and why. Makes the choice when
 *  nothing has yet (a second or so the first time on a machine). */
MLSBA_EXTERN void mlsba_cpu_kernels(mlsba_cpu_kernels_t *info);

/** \brief How the kernel choice was made in this process, and what it
 *  cost: what a first call pays once per machine, apart from the call's
 *  own work. Makes the choice when nothing has yet.
 *  \param source set to "timed" (timed in this process: no cache, or
 *         one for another CPU, BLIS or OpenBLAS), "retimed" (a cached
 *         choice timed on a busy machine, timed again), "cache" (read
 *         back from the cache), "forced" (MLSBA_CPU_KERNELS) or "fixed"
 *         (nothing to time: one candidate on this CPU); a static
 *         string; may be NULL
 *  \param choice_s set to the wall seconds the choice took in this
 *         process when it was timed ("timed", "retimed": BLIS's
 *         contexts, OpenBLAS loaded, every candidate timed, the cache
 *         written), 0 otherwise; may be NULL
 *  \param setup_s set to the wall seconds the kernels' setup took in
 *         this process whatever the source (equal to choice_s when
 *         timed; reading the cache and loading OpenBLAS otherwise, a
 *         few milliseconds); may be NULL
 *  Thread-safe. */
MLSBA_EXTERN void mlsba_cpu_kernels_choice(const char **source,
                                           double *choice_s, double *setup_s);

/** \brief C = alpha op(A) op(B) + beta C with the kernels the cores run,
 *  for an application's own CPU functions: column-major, transa and
 *  transb 'N' or 'T', leading dimensions at least the rows stored, on
 *  `threads` threads (1 inside a load's CPU function: the core is
 *  pinned). Thread-safe.
 *  \return 0, or MLSBA_EINVAL naming the bad argument. */
MLSBA_EXTERN int mlsba_cpu_gemm(mlsba_precision_t p, char transa, char transb,
                                int64_t m, int64_t n, int64_t k, double alpha,
                                const void *a, int64_t lda, const void *b,
                                int64_t ldb, double beta, void *c, int64_t ldc,
                                unsigned threads);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Mandelbrot set by rows, the second shipped load
 *
 *  Escape-time iteration counts of a width x height image of the region
 *  [x0, x1] x [y0, y1], in double precision, by the CPU code of
 *  cl/mandelbrot.c and the OpenCL kernel of cl/mandelbrot.cl (the same
 *  arithmetic, without contraction, so both give the same counts). Its
 *  speed functions differ from GEMM's: it is compute bound with no data
 *  to move, so accelerators gain far more over cores here.
 *
 *  A row costs more the more of it lies in the set, so units are rows in
 *  an interleaved order: unit u is row (u * stride) mod height, stride
 *  coprime with height near 0.618 height. Every range of units then
 *  samples the whole image, and units cost the same on average. */
/**@{*/
typedef struct mlsba_mandelbrot {
  int64_t width, height; /**< pixels, each >= 1 */
  double x0, y0, x1, y1; /**< the region of the complex plane */
  int32_t max_iter;      /**< >= 1 */
  int32_t *out;          /**< width x height counts, row-major; caller's */
} mlsba_mandelbrot_t;

/** \brief The Mandelbrot image as a load of height units. The load keeps
 *  a copy of *mb; out stays the caller's. */
MLSBA_EXTERN int mlsba_load_mandelbrot(const mlsba_mandelbrot_t *mb,
                                       mlsba_load_t **load);
/** \brief The image row that unit u stands for; -1 for NULL, a unit
 *  outside 0..height-1, or a height the load refuses (>= 2^31). */
MLSBA_EXTERN int64_t mlsba_mandelbrot_row(const mlsba_mandelbrot_t *mb,
                                          int64_t unit);
/** \brief Recompute every row on the calling thread and count the pixels
 *  of out that differ. */
MLSBA_EXTERN int mlsba_mandelbrot_verify(const mlsba_mandelbrot_t *mb,
                                         int64_t *wrong);
/** \brief The same for the rows of units [first, first + count) only:
 *  what a rank of mlsba_mpi_divide() computed, checked without the rest
 *  of the image (only those rows of out are read). MLSBA_EINVAL for a
 *  range outside 0..height. */
MLSBA_EXTERN int mlsba_mandelbrot_verify_units(const mlsba_mandelbrot_t *mb,
                                               int64_t first, int64_t count,
                                               int64_t *wrong);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif
