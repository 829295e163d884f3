/* The StarPU peer of mlsba-bench: the same product (C = A x B, single
 * precision, column-major, the same random matrices) as a tiled GEMM under
 * StarPU's dmda scheduler, with a codelet on libmlsba's CPU kernels for
 * CPU workers (one thread each) and a CLBlast codelet for OpenCL workers.
 * Which workers StarPU starts is its environment's business (STARPU_NCPU,
 * STARPU_NOPENCL, STARPU_OPENCL_ON_CPUS=1 for pocl);
 * benchmarks/peers/run-starpu runs the configurations worth comparing.
 *
 * Every run registers the matrices afresh and ends with C back in host
 * memory, as a run of libmlsba's executor does (A and B are sent to the
 * accelerator each time): no data stays cached on a device between runs.
 * The first runs calibrate StarPU's history-based performance models
 * (dmda needs them); the median of the runs after them is reported. */
#include <clblast_c.h>
#include <errno.h>
#include <math.h>
#include <starpu.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "gemm_fill.h"

static const char *prog = "starpu-gemm";

static void cpu_gemm(void *buffers[], void *arg) {
  (void)arg;
  /* libmlsba's CPU kernels (the fastest of this CPU, as its core devices
   * run them), so that the comparison is of balancing, not of kernels. */
  int rc = mlsba_cpu_gemm(MLSBA_PRECISION_SINGLE, 'N', 'N',
                          (int64_t)STARPU_MATRIX_GET_NX(buffers[2]),
                          (int64_t)STARPU_MATRIX_GET_NY(buffers[2]),
                          (int64_t)STARPU_MATRIX_GET_NY(buffers[0]), 1.0,
                          (const void *)STARPU_MATRIX_GET_PTR(buffers[0]),
                          (int64_t)STARPU_MATRIX_GET_LD(buffers[0]),
                          (const void *)STARPU_MATRIX_GET_PTR(buffers[1]),
                          (int64_t)STARPU_MATRIX_GET_LD(buffers[1]), 0.0,
                          (void *)STARPU_MATRIX_GET_PTR(buffers[2]),
                          (int64_t)STARPU_MATRIX_GET_LD(buffers[2]), 1);
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    exit(1); /* a benchmark, not the library: stop rather than time garbage */
  }
}

static void opencl_gemm(void *buffers[], void *arg) {
  (void)arg;
  cl_command_queue queue;
  starpu_opencl_get_current_queue(&queue);
  size_t s = sizeof(float);
  cl_mem a = (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffers[0]);
  cl_mem b = (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffers[1]);
  cl_mem c = (cl_mem)STARPU_MATRIX_GET_DEV_HANDLE(buffers[2]);
  size_t m = STARPU_MATRIX_GET_NX(buffers[2]),
         n = STARPU_MATRIX_GET_NY(buffers[2]);
  size_t k = STARPU_MATRIX_GET_NY(buffers[0]);
  cl_event done = NULL;
  CLBlastStatusCode st = CLBlastSgemm(
      CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastTransposeNo, m, n, k,
      1.0f, a, STARPU_MATRIX_GET_OFFSET(buffers[0]) / s,
      STARPU_MATRIX_GET_LD(buffers[0]), b,
      STARPU_MATRIX_GET_OFFSET(buffers[1]) / s,
      STARPU_MATRIX_GET_LD(buffers[1]), 0.0f, c,
      STARPU_MATRIX_GET_OFFSET(buffers[2]) / s,
      STARPU_MATRIX_GET_LD(buffers[2]), &queue, &done);
  if (st != CLBlastSuccess) {
    fprintf(stderr, "%s: CLBlastSgemm failed: status %d\n", prog, (int)st);
    exit(1); /* a benchmark, not the library: stop rather than time garbage */
  }
  clWaitForEvents(1, &done);
  clReleaseEvent(done);
}

static struct starpu_perfmodel gemm_model = {
    .type = STARPU_HISTORY_BASED,
    .symbol = "mlsba_peer_sgemm",
};

static struct starpu_codelet gemm_cl = {
    .cpu_funcs = {cpu_gemm},
    .cpu_funcs_name = {"cpu_gemm"},
    .opencl_funcs = {opencl_gemm},
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_R, STARPU_W},
    .model = &gemm_model,
};

/* One product: register, partition into tiles, a task per tile of C,
 * wait, gather C, unregister. Returns the seconds it took, or -1. */
static double run_once(float *A, float *B, float *C, unsigned m, unsigned n,
                       unsigned k, unsigned tile) {
  unsigned rows = (m + tile - 1) / tile, cols = (n + tile - 1) / tile;
  starpu_data_handle_t ha, hb, hc;
  double t0 = timing_now();
  starpu_matrix_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)A, m, m, k,
                              sizeof(float));
  starpu_matrix_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)B, k, k, n,
                              sizeof(float));
  starpu_matrix_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)C, m, m, n,
                              sizeof(float));
  /* A by rows of tiles, B by columns, C both (StarPU's xgemm layout). */
  struct starpu_data_filter by_cols = {
      .filter_func = starpu_matrix_filter_vertical_block, .nchildren = cols};
  struct starpu_data_filter by_rows = {
      .filter_func = starpu_matrix_filter_block, .nchildren = rows};
  starpu_data_partition(ha, &by_rows);
  starpu_data_partition(hb, &by_cols);
  starpu_data_map_filters(hc, 2, &by_cols, &by_rows);
  int failed = 0;
  for (unsigned x = 0; x < cols && !failed; x++) {
    for (unsigned y = 0; y < rows && !failed; y++) {
      struct starpu_task *t = starpu_task_create();
      t->cl = &gemm_cl;
      t->handles[0] = starpu_data_get_sub_data(ha, 1, y);
      t->handles[1] = starpu_data_get_sub_data(hb, 1, x);
      t->handles[2] = starpu_data_get_sub_data(hc, 2, x, y);
      int e = starpu_task_submit(t);
      if (e) {
        fprintf(stderr, "%s: starpu_task_submit: %s\n", prog, strerror(-e));
        failed = 1;
      }
    }
  }
  starpu_task_wait_for_all();
  starpu_data_unpartition(ha, STARPU_MAIN_RAM);
  starpu_data_unpartition(hb, STARPU_MAIN_RAM);
  starpu_data_unpartition(hc, STARPU_MAIN_RAM);
  starpu_data_unregister(ha);
  starpu_data_unregister(hb);
  starpu_data_unregister(hc);
  return failed ? -1 : timing_now() - t0;
}

/* 256 entries of C against a double-precision dot product. */
static double max_rel_error(const float *A, const float *B, const float *C,
                            unsigned m, unsigned n, unsigned k) {
  double worst = 0;
  uint64_t s = 7;
  for (int t = 0; t < 256; t++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t i = (size_t)(s >> 33) % m, j = (size_t)(s >> 17) % n;
    double ref = 0, mag = 0;
    for (size_t l = 0; l < k; l++) {
      double p = (double)A[i + l * m] * (double)B[l + j * k];
      ref += p;
      mag += fabs(p);
    }
    double e = fabs((double)C[i + j * m] - ref) / (mag > 0 ? mag : 1);
    worst = e > worst ? e : worst;
  }
  return worst;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [--size N | -m M -n N -k K] [--tile T] [--calibrate C]\n"
          "                   [--runs R]\n"
          "\n"
          "C = A x B in single precision as a tiled GEMM under StarPU (dmda\n"
          "unless STARPU_SCHED says otherwise): BLIS on CPU workers, CLBlast\n"
          "on OpenCL workers. The first C runs calibrate StarPU's models;\n"
          "the median of the next R is reported.\n"
          "\n"
          "  --size N      m = n = k = N (default 2048)\n"
          "  --tile T      tile edge (default 512)\n"
          "  --calibrate C runs before the timed ones (default 5)\n"
          "  --runs R      timed runs (default 5)\n",
          prog);
}

static int number(const char *opt, const char *v, unsigned long max,
                  unsigned *out) {
  char *end;
  errno = 0;
  unsigned long x = v ? strtoul(v, &end, 10) : 0;
  if (!v || *v == '-' || *end || errno || x < 1 || x > max) {
    fprintf(stderr, "%s: %s needs a whole number from 1 to %lu, got '%s'\n",
            prog, opt, max, v ? v : "");
    return -1;
  }
  *out = (unsigned)x;
  return 0;
}

int main(int argc, char **argv) {
  unsigned m = 2048, n = 2048, k = 2048, tile = 512, calib = 5, runs = 5;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--size")) {
      bad = number(o, v, 1u << 15, &m);
      n = k = m;
    } else if (!strcmp(o, "-m")) {
      bad = number(o, v, 1u << 15, &m);
    } else if (!strcmp(o, "-n")) {
      bad = number(o, v, 1u << 15, &n);
    } else if (!strcmp(o, "-k")) {
      bad = number(o, v, 1u << 15, &k);
    } else if (!strcmp(o, "--tile")) {
      bad = number(o, v, 1u << 15, &tile);
    } else if (!strcmp(o, "--calibrate")) {
      bad = number(o, v, 1000, &calib);
    } else if (!strcmp(o, "--runs")) {
      bad = number(o, v, 1000, &runs);
    } else {
      fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog, o);
      return 2;
    }
    if (bad)
      return 2;
    i++;
  }
  float *A = malloc((size_t)m * k * sizeof *A);
  float *B = malloc((size_t)k * n * sizeof *B);
  float *C = malloc((size_t)m * n * sizeof *C);
  double *t = calloc(calib + runs, sizeof *t);
  if (!A || !B || !C || !t) {
    fprintf(stderr, "%s: out of memory\n", prog);
    return 1;
  }
  mlsba_gemm_t g = {.m = m,
                    .n = n,
                    .k = k,
                    .precision = MLSBA_PRECISION_SINGLE,
                    .a = A,
                    .b = B,
                    .c = C};
  bench_fill_random(&g, 42); /* mlsba-bench's matrices */
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  conf.sched_policy_name = "dmda"; /* STARPU_SCHED, when set, wins */
  int e = starpu_init(&conf);
  if (e) {
    fprintf(stderr, "%s: starpu_init: %s\n", prog,
            e == -ENODEV ? "no worker" : strerror(-e));
    return 1;
  }
  unsigned ncpu = starpu_cpu_worker_get_count();
  unsigned ncl = starpu_opencl_worker_get_count();
  const char *sched = getenv("STARPU_SCHED");
  printf("%s: StarPU %d.%d, scheduler %s, %u CPU worker%s + %u OpenCL worker%s"
         ", %ux%ux%u, tile %u\n",
         prog, STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION,
         sched ? sched : "dmda", ncpu, ncpu == 1 ? "" : "s", ncl,
         ncl == 1 ? "" : "s", m, n, k, tile);
  for (unsigned r = 0; r < calib + runs; r++) {
    if ((t[r] = run_once(A, B, C, m, n, k, tile)) < 0) {
      starpu_shutdown();
      return 1;
    }
    printf("  %s %2u: %.4f s\n", r < calib ? "calibrate" : "run      ",
           r < calib ? r + 1 : r - calib + 1, t[r]);
    fflush(stdout);
  }
  double err = max_rel_error(A, B, C, m, n, k);
  starpu_shutdown();
  qsort(t + calib, runs, sizeof *t, cmp);
  double med = runs % 2 ? t[calib + runs / 2]
                        : 0.5 * (t[calib + runs / 2 - 1] + t[calib + runs / 2]);
  double gflops = 2.0 * m * n * k / med * 1e-9;
  int ok = err < 1e-5;
  printf("starpu: median %.4f s, %.1f GFLOPS, verified %s (max relative "
         "error %.2g)\n",
         med, gflops, ok ? "yes" : "NO", err);
  free(A);
  free(B);
  free(C);
  free(t);
  return ok ? 0 : 1;
}
