/* The OpenCL backend on whatever OpenCL device this machine has (pocl's
 * CPU device where there is no GPU): products on cores + the device match
 * the reference, the memory limit is honoured, the driving core computes
 * while its accelerator runs, and OpenCL failures come back as errors.
 * Exits 77 (skipped) when no OpenCL device exists. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cl/laswp_cpu.h"
#include "devices/device.h"  /* the test-only fault injection hook */
#include "laswp_cl_source.h" /* cl/laswp.cl, as the library carries it */
#include "mlsba.h"
#include "mlsba/opencl.h"
#include "support/gemm_data.h"
#include "support/opencl_device.h"
#include "support/run_suite.h"

/* Core 0 drives the first OpenCL device; core 1 (if any) alone. */
static mlsba_platform_t *cores_and_opencl(const char *mem_limit) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"devices\": ["
           "{\"name\": \"core0\", \"type\": \"cpu\", \"core\": 0},"
           "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
           "\"device\": 0%s},"
           "{\"name\": \"core1\", \"type\": \"cpu\", \"core\": 1}],"
           "\"groups\": [[\"core0\", \"ocl0\"], [\"core1\"]]}",
           mem_limit);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(json, "test", &pl), 0);
  return pl;
}

static mlsba_executor_t *open_executor(const mlsba_platform_t *pl) {
  mlsba_executor_t *ex = NULL;
  ck_assert_msg(mlsba_executor_create(pl, &ex) == 0, "%s", mlsba_last_error());
  return ex;
}

static void run_and_verify(mlsba_executor_t *ex, mlsba_gemm_t *g,
                           const int64_t load[3], double time[3]) {
  ck_assert_msg(
      mlsba_executor_run_gemm(ex, g, load, MLSBA_DRIVE_SHARED, time) == 0, "%s",
      mlsba_last_error());
  double e;
  int ok;
  ck_assert_int_eq(mlsba_gemm_verify(g, 7, &e, &ok), 0);
  ck_assert_msg(
      ok, "%lldx%lldx%lld precision %d loads %lld/%lld/%lld: error %g",
      (long long)g->m, (long long)g->n, (long long)g->k, (int)g->precision,
      (long long)load[0], (long long)load[1], (long long)load[2], e);
}

START_TEST(products_on_cores_and_opencl_match_the_reference) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  static const int64_t shapes[][3] = {{1, 3, 1},       {64, 64, 64},
                                      {200, 90, 33},   {17, 301, 129},
                                      {512, 512, 512}, {1024, 1024, 1024}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    for (int prec = 0; prec < 2; prec++) {
      mlsba_gemm_t g;
      gemm_data_make(&g, shapes[s][0], shapes[s][1], shapes[s][2],
                     (mlsba_precision_t)prec, 20 + s);
      int64_t max[3], n = g.n;
      ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
      if (max[1] == 0)
        continue; /* no double precision on this device */
      int64_t thirds[3] = {n / 3, n / 3, n - 2 * (n / 3)};
      double time[3];
      run_and_verify(ex, &g, thirds, time);
      /* Loads that give a device no column at all. */
      int64_t only_ocl[3] = {0, n, 0}, no_ocl[3] = {n / 2, 0, n - n / 2};
      run_and_verify(ex, &g, only_ocl, time);
      ck_assert_double_eq(time[0], 0);
      ck_assert_double_gt(time[1], 0);
      run_and_verify(ex, &g, no_ocl, time);
      ck_assert_double_eq(time[1], 0);
      gemm_data_free(&g);
    }
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* With mem_limit_mb below the size of the problem, the device reports
 * what fits, takes at most that, and the product is still right. */
START_TEST(memory_limit_caps_the_device) {
  mlsba_platform_t *pl = cores_and_opencl(", \"mem_limit_mb\": 2");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_gemm_t g; /* A: 256 x 512 floats = 0.5 MiB; a column 3 KiB */
  gemm_data_make(&g, 256, 1200, 512, MLSBA_PRECISION_SINGLE, 3);
  int64_t max[3];
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
  /* (2 MiB - 0.5 MiB) / (768 floats x 4 bytes) = 512 columns. */
  ck_assert_int_eq(max[1], 512);
  ck_assert_int_eq(max[0], 1200);
  int64_t at_cap[3] = {300, 512, 388}, over[3] = {300, 513, 387};
  double time[3];
  run_and_verify(ex, &g, at_cap, time);
  ck_assert_int_eq(mlsba_executor_run_gemm(ex, &g, over, 0, time),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ocl0: load 513"));
  /* A problem whose A alone does not fit: the device can take nothing. */
  mlsba_gemm_t big;
  gemm_data_make(&big, 1024, 8, 1024, MLSBA_PRECISION_SINGLE, 3);
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &big, max), 0);
  ck_assert_int_eq(max[1], 0);
  gemm_data_free(&big);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The accelerator's host link, timed as seed 001 timed its PCIe bus:
 * a positive bandwidth below a terabyte a second; the cores have none.
 * The measured link goes into the platform and out through a save. */
START_TEST(the_accelerators_link_is_measured) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_link_t links[3];
  ck_assert_msg(mlsba_executor_measure_links(ex, links) == 0, "%s",
                mlsba_last_error());
  ck_assert_double_gt(links[1].bandwidth, 1e6);
  ck_assert_double_lt(links[1].bandwidth, 1e12);
  ck_assert_double_ge(links[1].latency, 0);
  ck_assert_double_lt(links[1].latency, 0.1);
  ck_assert_double_eq(links[0].bandwidth, 0);
  ck_assert_double_eq(links[2].bandwidth, 0);
  ck_assert_int_eq(mlsba_platform_set_device_link(pl, 1, &links[1]), 0);
  mlsba_link_t back;
  ck_assert_int_eq(mlsba_platform_device_link(pl, 1, &back), 0);
  ck_assert_double_eq(back.bandwidth, links[1].bandwidth);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Runs `loads` up to `tries` times and returns 1 as soon as device
 * `first` finishes before device `second`. pocl's threads share this
 * machine's cores with the BLIS core and with the other tests, so one run
 * can invert the order by noise; a wrong schedule inverts it every time. */
static int finishes_first(mlsba_executor_t *ex, mlsba_gemm_t *g,
                          const int64_t *loads, int first, int second,
                          double *t) {
  for (int tries = 0; tries < 5; ++tries) {
    run_and_verify(ex, g, loads, t);
    if (t[first] < t[second])
      return 1;
  }
  return 0;
}

/* The core that drives the accelerator computes while it runs. With most
 * of the work on the accelerator, the core finishes its own share before
 * the accelerator does; with most of it on the core, the accelerator's
 * completion (taken from its event callback, not from the thread that
 * waits for it) comes before the core's. Either order means the two ran
 * at the same time: a core that waited first, or computed first, would
 * always finish after the accelerator, or the accelerator after the core. */
START_TEST(driving_core_computes_while_its_accelerator_runs) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_gemm_t g;
  /* Enough columns that the core's share outlasts an enqueue's overhead
   * on pocl (780 of 800 took the core 2.4 ms with the per-shape kernels,
   * less than pocl's 20 columns under ASan). */
  gemm_data_make(&g, 384, 3200, 384, MLSBA_PRECISION_SINGLE, 5);
  double t[3];
  int64_t warm[3] = {0, 3200, 0}; /* the first call builds CLBlast's kernels */
  run_and_verify(ex, &g, warm, t);
  int64_t accel_heavy[3] = {20, 3180, 0}, core_heavy[3] = {3180, 20, 0};
  ck_assert_msg(finishes_first(ex, &g, accel_heavy, 0, 1, t),
                "core %g s, accelerator %g s", t[0], t[1]);
  ck_assert_msg(finishes_first(ex, &g, core_heavy, 1, 0, t),
                "accelerator %g s, core %g s", t[1], t[0]);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(a_missing_device_is_a_clear_error) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"ghost\", \"type\": "
                           "\"opencl\", \"platform\": 0, \"device\": 99}]}",
                           "test", &pl),
      0);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), MLSBA_EDEVICE);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ghost"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no device 99"));
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(discovery_finds_the_opencl_device) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_discover(&pl), 0);
  size_t ncl = 0;
  for (size_t i = 0; i < mlsba_platform_num_devices(pl); i++)
    ncl += mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_OPENCL;
  ck_assert_uint_ge(ncl, 1);
  /* OpenCL device 0 is driven by core 0. */
  ck_assert_uint_eq(mlsba_platform_group_size(pl, 0), 2);
  ck_assert_str_eq(
      mlsba_platform_device_name(pl, mlsba_platform_group_device(pl, 0, 1)),
      "ocl0");
  mlsba_platform_destroy(pl);
}
END_TEST

/* ---- loads of the application's own ------------------------------------ */

/* y[i] = 3 x[i] + i on every device: the OpenCL half from source. */
typedef struct {
  int64_t n;
  float *x, *y;
} saxpy_t;

static const char *saxpy_source =
    "__kernel void saxpy(long first, __global const float *x,"
    "                    __global float *y) {"
    "  long i = get_global_id(0);"
    "  y[i] = 3.0f * x[i] + (float)(first + i);"
    "}";

typedef struct {
  cl_mem x, y;
} saxpy_bufs_t;

static int saxpy_cpu(void *user, int64_t first, int64_t count) {
  saxpy_t *s = user;
  for (int64_t i = first; i < first + count; i++)
    s->y[i] = 3.0f * s->x[i] + (float)i;
  return 0;
}

static int saxpy_setup(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  env->state = calloc(1, sizeof(saxpy_bufs_t));
  return env->state ? 0 : CL_OUT_OF_HOST_MEMORY;
}

static int saxpy_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                         int64_t count) {
  saxpy_t *s = user;
  saxpy_bufs_t *b = env->state;
  size_t bytes = (size_t)count * sizeof(float);
  cl_int e;
  b->x = clCreateBuffer(env->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        bytes, s->x + first, &e);
  if (e == CL_SUCCESS)
    b->y = clCreateBuffer(env->context, CL_MEM_WRITE_ONLY, bytes, NULL, &e);
  cl_long f = first;
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 0, sizeof f, &f);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 1, sizeof b->x, &b->x);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 2, sizeof b->y, &b->y);
  size_t global = (size_t)count;
  if (e == CL_SUCCESS)
    e = clEnqueueNDRangeKernel(env->queue, env->kernel, 1, NULL, &global, NULL,
                               0, NULL, NULL);
  if (e == CL_SUCCESS)
    e = clEnqueueReadBuffer(env->queue, b->y, CL_FALSE, 0, bytes, s->y + first,
                            0, NULL, NULL);
  return e;
}

static void saxpy_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  saxpy_bufs_t *b = env->state;
  if (b->x)
    clReleaseMemObject(b->x);
  if (b->y)
    clReleaseMemObject(b->y);
  b->x = b->y = NULL;
}

static unsigned teardowns;
static void saxpy_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  free(env->state);
  teardowns++;
}

static mlsba_opencl_ops_t saxpy_ops = {
    .source = NULL, /* set per test */
    .kernel_name = "saxpy",
    .setup = saxpy_setup,
    .enqueue = saxpy_enqueue,
    .complete = saxpy_complete,
    .teardown = saxpy_teardown,
};

static saxpy_t saxpy_make(int64_t n) {
  saxpy_t s = {n, malloc((size_t)n * sizeof(float)),
               malloc((size_t)n * sizeof(float))};
  for (int64_t i = 0; i < n; i++) {
    s.x[i] = (float)(i % 1000) * 0.5f;
    s.y[i] = NAN;
  }
  return s;
}

static void saxpy_check(const saxpy_t *s) {
  for (int64_t i = 0; i < s->n; i++)
    ck_assert_msg(s->y[i] == 3.0f * s->x[i] + (float)i, "y[%lld] = %g",
                  (long long)i, (double)s->y[i]);
}

START_TEST(a_user_kernel_runs_on_opencl_and_cores) {
  mlsba_platform_t *pl = cores_and_opencl("");
  saxpy_t s = saxpy_make(200000);
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("saxpy", s.n, &w), 0);
  mlsba_load_set_cpu(w, saxpy_cpu, &s);
  saxpy_ops.source = saxpy_source;
  ck_assert_int_eq(mlsba_load_set_opencl(w, &saxpy_ops, &s), 0);
  teardowns = 0;
  mlsba_executor_t *ex = open_executor(pl);
  /* Every device a third: the OpenCL device's share really ran there. */
  int64_t units[3] = {s.n / 3, s.n / 3, s.n - 2 * (s.n / 3)};
  double t[3];
  long failed;
  ck_assert_msg(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, t, &failed) == 0,
      "%s", mlsba_last_error());
  saxpy_check(&s);
  ck_assert(t[1] > 0);
  mlsba_executor_destroy(ex);
  ck_assert_uint_eq(teardowns, 1); /* setup once, torn down with the device */
  /* And balanced through the basic-form machinery. */
  for (int64_t i = 0; i < s.n; i++)
    s.y[i] = NAN;
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance_ex(pl, w, NULL, &b) == 0, "%s",
                mlsba_last_error());
  saxpy_check(&s);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  free(s.x);
  free(s.y);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(opencl_faults_drop_the_device_or_stop) {
  mlsba_platform_t *pl = cores_and_opencl("");
  saxpy_t s = saxpy_make(50000);
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("saxpy", s.n, &w), 0);
  mlsba_load_set_cpu(w, saxpy_cpu, &s);
  saxpy_ops.source = saxpy_source;
  mlsba_load_set_opencl(w, &saxpy_ops, &s);
  static const int codes[] = {CL_OUT_OF_RESOURCES, CL_DEVICE_NOT_AVAILABLE,
                              CL_MEM_OBJECT_ALLOCATION_FAILURE};
  for (size_t c = 0; c < 3; c++) {
    for (int stop = 0; stop < 2; stop++) {
      for (int64_t i = 0; i < s.n; i++)
        s.y[i] = NAN;
      mlsba_balance_opts_t o;
      mlsba_balance_opts_init(&o);
      o.on_fault = stop ? MLSBA_ON_FAULT_STOP : MLSBA_ON_FAULT_CONTINUE;
      /* pocl shares the cores: keep it, so that it runs the faulty share
       * (the sharing check would leave it out after its first). */
      o.sharing = MLSBA_SHARING_KEEP;
      mlsba__opencl_inject_fault(1 + (unsigned)c, codes[c]);
      mlsba_balancer_t *b = NULL;
      int err = mlsba_balance_ex(pl, w, &o, &b);
      mlsba__opencl_inject_fault(0, 0);
      if (stop) {
        ck_assert_int_eq(err, codes[c] == CL_DEVICE_NOT_AVAILABLE
                                  ? MLSBA_EDEVICE
                                  : MLSBA_EDEVMEM);
        ck_assert_msg(strstr(mlsba_last_error(), "ocl0") != NULL, "%s",
                      mlsba_last_error());
        ck_assert_ptr_null(b);
        continue;
      }
      ck_assert_msg(err == 0, "%s", mlsba_last_error());
      const mlsba_balance_result_t *r = mlsba_balancer_result(b);
      ck_assert_uint_eq(r->lost, 1);
      ck_assert_int_eq(r->dropped[1], MLSBA_DROPPED_FAULT);
      ck_assert_int_eq(r->load[1], 0);
      saxpy_check(&s);
      /* Later runs go on without it. */
      ck_assert_int_eq(mlsba_balancer_run(b, NULL), 0);
      saxpy_check(&s);
      mlsba_balancer_destroy(b);
    }
  }
  /* A program that does not build: the build log names the problem; the
   * run goes on without the device by default. */
  saxpy_ops.source = "__kernel void saxpy(long first) { this is not C }";
  mlsba_balancer_t *b = NULL;
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.on_fault = MLSBA_ON_FAULT_STOP;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EDEVICE);
  ck_assert_msg(strstr(mlsba_last_error(), "does not build") != NULL, "%s",
                mlsba_last_error());
  ck_assert_int_eq(mlsba_balance_ex(pl, w, NULL, &b), 0);
  ck_assert_uint_eq(mlsba_balancer_result(b)->lost, 1);
  saxpy_check(&s);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  free(s.x);
  free(s.y);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Claiming more memory than the device has is no limit: the device's own
 * size stands and products still run and verify. */
START_TEST(a_memory_limit_beyond_the_device_is_harmless) {
  mlsba_platform_t *pl = cores_and_opencl(", \"mem_limit_mb\": 100000000");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba_gemm_t g;
  gemm_data_make(&g, 256, 300, 256, MLSBA_PRECISION_SINGLE, 9);
  int64_t max[3];
  ck_assert_int_eq(mlsba_executor_max_loads(ex, &g, max), 0);
  ck_assert_int_eq(max[1], 300);
  double t[3];
  int64_t load[3] = {100, 100, 100};
  run_and_verify(ex, &g, load, t);
  gemm_data_free(&g);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The Mandelbrot kernel of cl/ gives the counts of the CPU code, pixel for
 * pixel, on the OpenCL device. */
START_TEST(mandelbrot_on_opencl_matches_the_cpu) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_mandelbrot_t mb = {.width = 300,
                           .height = 211,
                           .x0 = -2.2,
                           .y0 = -1.3,
                           .x1 = 0.8,
                           .y1 = 1.3,
                           .max_iter = 500};
  mb.out = malloc((size_t)(mb.width * mb.height) * sizeof *mb.out);
  for (int64_t i = 0; i < mb.width * mb.height; i++)
    mb.out[i] = -1;
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &w), 0);
  mlsba_executor_t *ex = open_executor(pl);
  int64_t max[3];
  ck_assert_int_eq(mlsba_executor_max_units(ex, w, max), 0);
  if (max[1] > 0) { /* the device has doubles */
    int64_t units[3] = {0, mb.height, 0};
    double t[3];
    ck_assert_msg(
        mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, t, NULL) == 0,
        "%s", mlsba_last_error());
    int64_t wrong = -1;
    ck_assert_int_eq(mlsba_mandelbrot_verify(&mb, &wrong), 0);
    ck_assert_int_eq(wrong, 0);
    units[0] = 50;
    units[1] = 100;
    units[2] = mb.height - 150;
    memset(mb.out, 0xff, (size_t)(mb.width * mb.height) * sizeof *mb.out);
    ck_assert_int_eq(
        mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, t, NULL), 0);
    ck_assert_int_eq(mlsba_mandelbrot_verify(&mb, &wrong), 0);
    ck_assert_int_eq(wrong, 0);
  }
  mlsba_executor_destroy(ex);
  mlsba_load_destroy(w);
  free(mb.out);
  mlsba_platform_destroy(pl);
}
END_TEST

/* LU of a random m x n matrix (block nb) with the OpenCL device taking
 * update columns (CLBlast): right factors. fraction (NULL: the models'
 * split) names every device's share of each step, so that the device
 * takes columns at every step whatever the machine's load; stream 1
 * streams its columns instead of keeping them. */
typedef struct {
  int64_t m, n, nb;
  const double *fraction;
  int stream;
} lu_case_t;

static void lu_case(mlsba_executor_t *ex, mlsba_precision_t prec,
                    const lu_case_t *c, mlsba_factor_report_t *rep,
                    double *residual) {
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  int64_t m = c->m, n = c->n, k = m < n ? m : n, mn = m * n;
  void *a = malloc((size_t)mn * es), *a0 = malloc((size_t)mn * es);
  unsigned seed = 99;
  for (int64_t i = 0; i < mn; i++) {
    seed = seed * 1103515245u + 12345u;
    double v = ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
    if (es == 8)
      ((double *)a)[i] = v;
    else
      ((float *)a)[i] = (float)v;
  }
  memcpy(a0, a, (size_t)mn * es);
  int64_t *ipiv = calloc((size_t)(k > 0 ? k : 1), sizeof *ipiv), info = -1;
  unsigned char use[5] = {1, 1, 1, 1, 1}; /* pocl too, beside the cores */
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = c->nb;
  o.use = use;
  o.stream = c->stream;
  if (c->fraction) {
    o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
    o.fraction = c->fraction;
  }
  ck_assert_msg(mlsba_getrf_ex(ex, prec, m, n, a, m, ipiv, &info, &o, rep) == 0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  ck_assert_int_eq(
      mlsba_getrf_residual(prec, m, n, a0, m, a, m, ipiv, residual), 0);
  free(a);
  free(a0);
  free(ipiv);
}

/* Cores and pocl each a third of every step's units. */
static const double thirds[3] = {1, 1, 1};

static void lu_with_opencl(mlsba_executor_t *ex, mlsba_precision_t prec,
                           int64_t n, mlsba_factor_report_t *rep,
                           double *residual) {
  lu_case_t c = {.m = n, .n = n, .nb = 32, .fraction = thirds};
  lu_case(ex, prec, &c, rep, residual);
}

static int64_t units_of(const mlsba_factor_report_t *r, size_t dev) {
  int64_t u = 0;
  for (size_t k = 0; k < r->steps; k++)
    u += r->share[k * r->p + dev];
  return u;
}

START_TEST(lu_on_cores_and_opencl_is_right) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (int prec = 0; prec < 2; prec++) {
    mlsba_factor_report_t r;
    double res;
    lu_case_t c = {.m = 200, .n = 200, .nb = 32}; /* the models' split */
    lu_case(ex, (mlsba_precision_t)prec, &c, &r, &res);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "precision %d: residual %g",
                  prec, res);
    ck_assert_int_gt(units_of(&r, 1), 0); /* ocl0 took columns (step 1) */
    ck_assert_uint_eq(r.lost, 0);
    mlsba_factor_report_free(&r);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* One factorization of shape {m, n, nb} with the device taking a third of
 * every step's columns, kept resident (stream 0) or streamed (1): its
 * report, and the worst of its scaled residuals. */
typedef double (*whole_case_fn)(mlsba_executor_t *ex, mlsba_precision_t prec,
                                const int64_t shape[3], int stream,
                                mlsba_factor_report_t *rep);

/* Every shape in both precisions, resident and streamed, by run (LU's or
 * QR's, whose columns the device keeps whole): right factors, nothing
 * lost; every step whose third holds the next panel gave pocl columns
 * (else the panel's core takes units from the device with the most);
 * bytes and transfers counted both ways where the device took any; and,
 * from two updates on, keeping the columns moved fewer bytes than
 * streaming the same shares. */
static void check_whole_columns(const char *what, const int64_t (*shapes)[3],
                                size_t count, whole_case_fn run) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (size_t k = 0; k < count; k++)
    for (int prec = 0; prec < 2; prec++) {
      mlsba_factor_report_t r[2];
      for (int stream = 0; stream < 2; stream++) {
        double res =
            run(ex, (mlsba_precision_t)prec, shapes[k], stream, &r[stream]);
        ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                      "%s %lldx%lld nb %lld precision %d stream %d: "
                      "residual %g",
                      what, (long long)shapes[k][0], (long long)shapes[k][1],
                      (long long)shapes[k][2], prec, stream, res);
        ck_assert_uint_eq(r[stream].lost, 0);
      }
      for (size_t s = 1; s < r[0].steps; s++)
        if (r[0].units[s] >= 3 * shapes[k][2])
          ck_assert_msg(r[0].share[s * 3 + 1] > 0,
                        "%s shape %zu precision %d step %zu: %lld %lld %lld",
                        what, k, prec, s, (long long)r[0].share[s * 3],
                        (long long)r[0].share[s * 3 + 1],
                        (long long)r[0].share[s * 3 + 2]);
      int any = units_of(&r[0], 1) > 0;
      ck_assert_int_eq(r[0].bytes_to_devices > 0, any);
      ck_assert_int_eq(r[0].bytes_from_devices > 0, any);
      ck_assert_int_eq(r[0].transfers > 0, any);
      if (r[0].steps > 3) { /* more than one update: residency pays */
        ck_assert_int_lt(r[0].bytes_to_devices, r[1].bytes_to_devices);
        ck_assert_int_lt(r[0].bytes_from_devices, r[1].bytes_from_devices);
      }
      mlsba_factor_report_free(&r[0]);
      mlsba_factor_report_free(&r[1]);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}

static double lu_whole(mlsba_executor_t *ex, mlsba_precision_t prec,
                       const int64_t shape[3], int stream,
                       mlsba_factor_report_t *rep) {
  lu_case_t c = {.m = shape[0],
                 .n = shape[1],
                 .nb = shape[2],
                 .fraction = thirds,
                 .stream = stream};
  double res = -1;
  lu_case(ex, prec, &c, rep, &res);
  return res;
}

/* Resident columns: odd sizes, n below the block, tall and wide matrices,
 * both precisions, the device's share (a third of each step's) moving
 * left to right as the trailing matrix shrinks. */
START_TEST(lu_with_resident_columns_is_right) {
  static const int64_t shapes[][3] = {{203, 203, 32},
                                      {20, 20, 32},
                                      {301, 150, 16},
                                      {120, 257, 24},
                                      {97, 97, 1}};
  check_whole_columns("LU", shapes, sizeof shapes / sizeof *shapes, lu_whole);
}
END_TEST

/* Two groups, each a core and the first OpenCL device (pocl twice): two
 * devices whose threads call CLBlast at once. */
static mlsba_platform_t *two_opencl_devices(void) {
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(
      mlsba_platform_parse(
          "{\"devices\": ["
          "{\"name\": \"core0\", \"type\": \"cpu\", \"core\": 0},"
          "{\"name\": \"ocl0\", \"type\": \"opencl\", \"platform\": 0, "
          "\"device\": 0},"
          "{\"name\": \"core1\", \"type\": \"cpu\", \"core\": 1},"
          "{\"name\": \"ocl1\", \"type\": \"opencl\", \"platform\": 0, "
          "\"device\": 0}],"
          "\"groups\": [[\"core0\", \"ocl0\"], [\"core1\", \"ocl1\"]]}",
          "test", &pl),
      0);
  return pl;
}

/* Two OpenCL devices (pocl twice), each a quarter of every step: the
 * second sits left of the first, so as the first's share shrinks the
 * second's right boundary moves right and columns pass from one device
 * to the other (read back from one, sent to the other). */
START_TEST(resident_columns_move_between_two_devices) {
  mlsba_platform_t *pl = two_opencl_devices();
  mlsba_executor_t *ex = open_executor(pl);
  static const double quarters[4] = {1, 1, 1, 1};
  for (int prec = 0; prec < 2; prec++) {
    lu_case_t c = {.m = 211, .n = 211, .nb = 16, .fraction = quarters};
    mlsba_factor_report_t r;
    double res;
    lu_case(ex, (mlsba_precision_t)prec, &c, &r, &res);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "precision %d: residual %g",
                  prec, res);
    ck_assert_int_gt(units_of(&r, 1), 0);
    ck_assert_int_gt(units_of(&r, 3), 0);
    ck_assert_uint_eq(r.lost, 0);
    mlsba_factor_report_free(&r);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The OpenCL device fails as its share of the first update starts (as
 * its first OpenCL call would), after the first panel: its columns are
 * taken back by the cores, the device is dropped for the rest of the
 * factorization, and the factors are right. The split is named (a third
 * each), so that the device's first share exists on a loaded machine. */
START_TEST(an_opencl_failure_mid_lu_is_taken_back) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  mlsba__opencl_inject_fault(1, CL_OUT_OF_RESOURCES);
  mlsba_factor_report_t r;
  double res;
  lu_with_opencl(ex, MLSBA_PRECISION_DOUBLE, 200, &r, &res);
  mlsba__opencl_inject_fault(0, 0);
  ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  ck_assert_uint_eq(r.lost, 1);
  ck_assert_int_eq(r.dropped[1], 1);
  ck_assert_int_eq(units_of(&r, 1), 0); /* the redo went to the cores */
  ck_assert_int_eq(r.share[1 * 3 + 0] + r.share[1 * 3 + 2] > 0, 1);
  mlsba_factor_report_free(&r);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The device fails at its fourth share, holding the columns of three
 * steps that exist only in its memory: the host replays the updates they
 * missed from their checkpoints, the cores redo the step, and the factors
 * are right. Streamed too (its columns then come back every step). */
START_TEST(an_opencl_failure_with_resident_columns_is_taken_back) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (int prec = 0; prec < 2; prec++)
    for (int stream = 0; stream < 2; stream++) {
      lu_case_t c = {
          .m = 230, .n = 201, .nb = 16, .fraction = thirds, .stream = stream};
      mlsba_factor_report_t r;
      double res;
      mlsba__opencl_inject_fault(4, CL_OUT_OF_RESOURCES);
      lu_case(ex, (mlsba_precision_t)prec, &c, &r, &res);
      mlsba__opencl_inject_fault(0, 0);
      ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                    "precision %d stream %d: residual %g", prec, stream, res);
      ck_assert_uint_eq(r.lost, 1);
      ck_assert_int_eq(r.dropped[1], 1);
      for (size_t s = 1; s < r.steps; s++) /* steps 1-3 on the device */
        ck_assert_int_eq(r.share[s * 3 + 1] > 0, s <= 3);
      mlsba_factor_report_free(&r);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* LAPACK's row interchanges, the reference of cl/laswp.cl. */
void dlaswp_(const int *n, double *a, const int *lda, const int *k1,
             const int *k2, const int *ipiv, const int *incx);
void slaswp_(const int *n, float *a, const int *lda, const int *k1,
             const int *k2, const int *ipiv, const int *incx);

/* The row-interchange kernel over cols columns of a buffer (leading
 * dimension ld, from element off), k pivots: the buffer's new contents. */
static void swap_on_device(int dbl, void *a, size_t bytes, cl_ulong off,
                           cl_ulong ld, size_t cols, int k, const int *piv) {
  cl_platform_id plat;
  cl_device_id dev;
  cl_int e = clGetPlatformIDs(1, &plat, NULL);
  ck_assert_int_eq(e, CL_SUCCESS);
  ck_assert_int_eq(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL),
                   CL_SUCCESS);
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  const char *src = mlsba__laswp_cl_source;
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  ck_assert_int_eq(clBuildProgram(prog, 1, &dev, "-cl-std=CL1.2", NULL, NULL),
                   CL_SUCCESS);
  cl_kernel kern =
      clCreateKernel(prog, dbl ? "laswp_cols_64" : "laswp_cols_32", &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              bytes, a, &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  cl_mem pb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (size_t)k * sizeof(int), (void *)piv, &e);
  ck_assert_int_eq(e, CL_SUCCESS);
  clSetKernelArg(kern, 0, sizeof buf, &buf);
  clSetKernelArg(kern, 1, sizeof off, &off);
  clSetKernelArg(kern, 2, sizeof ld, &ld);
  clSetKernelArg(kern, 3, sizeof k, &k);
  clSetKernelArg(kern, 4, sizeof pb, &pb);
  cl_ulong ncols = cols;
  clSetKernelArg(kern, 5, sizeof ncols, &ncols);
  size_t group = 4, global = (cols + group - 1) / group * group; /* past it */
  ck_assert_int_eq(
      clEnqueueNDRangeKernel(q, kern, 1, NULL, &global, &group, 0, NULL, NULL),
      CL_SUCCESS);
  ck_assert_int_eq(
      clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, a, 0, NULL, NULL),
      CL_SUCCESS);
  clReleaseMemObject(pb);
  clReleaseMemObject(buf);
  clReleaseKernel(kern);
  clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}

/* cl/laswp.cl and its CPU twin interchange rows as LAPACK's ?laswp does,
 * on a block of columns inside a larger buffer (rows above and columns
 * beside it untouched), with pivots as ?getf2 gives them (row i with a
 * row at or below it, itself included). */
START_TEST(the_row_swap_kernel_matches_laswp) {
  enum { LD = 41, COLS = 9, OFF_ROW = 3, OFF_COL = 2, ROWS = 35, K = 13 };
  int piv[K], piv1[K]; /* 0-based for ours, 1-based for LAPACK */
  unsigned seed = 5;
  for (int i = 0; i < K; i++) {
    seed = seed * 1103515245u + 12345u;
    piv[i] = i % 4 == 3 ? i : i + (int)((seed >> 8) % (unsigned)(ROWS - i));
    piv1[i] = piv[i] + 1;
  }
  for (int dbl = 0; dbl < 2; dbl++) {
    size_t es = dbl ? 8 : 4, n = (size_t)LD * COLS;
    char *dev = malloc(n * es), *cpu = malloc(n * es), *ref = malloc(n * es);
    for (size_t i = 0; i < n; i++) {
      if (dbl)
        ((double *)dev)[i] = (double)i + 0.25;
      else
        ((float *)dev)[i] = (float)i + 0.25f;
    }
    memcpy(cpu, dev, n * es);
    memcpy(ref, dev, n * es);
    char *orig = malloc(n * es);
    memcpy(orig, dev, n * es);
    size_t off = (size_t)OFF_COL * LD + OFF_ROW;
    int cols = COLS - OFF_COL, lda = LD, k1 = 1, k2 = K, inc = 1;
    if (dbl)
      dlaswp_(&cols, (double *)ref + off, &lda, &k1, &k2, piv1, &inc);
    else
      slaswp_(&cols, (float *)ref + off, &lda, &k1, &k2, piv1, &inc);
    swap_on_device(dbl, dev, n * es, off, LD, (size_t)cols, K, piv);
    mlsba__laswp_cols(cpu + off * es, es, LD, cols, K, piv);
    ck_assert(memcmp(orig, ref, n * es) != 0); /* rows did move */
    free(orig);
    ck_assert_msg(memcmp(dev, ref, n * es) == 0, "device, %s",
                  dbl ? "64" : "32");
    ck_assert_msg(memcmp(cpu, ref, n * es) == 0, "CPU twin, %s",
                  dbl ? "64" : "32");
    free(dev);
    free(cpu);
    free(ref);
  }
}
END_TEST

/* Cholesky with pocl taking pairs of columns, lower and upper: right
 * factors, the other triangle untouched, the device used. Block nb (0:
 * 32); stream 1 streams the device's columns instead of keeping them. */
static void chol_case_on(mlsba_executor_t *ex, const unsigned char *use,
                         mlsba_precision_t prec, char uplo, int64_t n,
                         int64_t nb, int stream, const double *fraction,
                         mlsba_factor_report_t *rep, double *residual) {
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  void *a = malloc((size_t)(n * n) * es), *a0 = malloc((size_t)(n * n) * es);
  unsigned seed = 7;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      double v = i == j ? (double)n : ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
      if (i < j) /* symmetric */
        v = es == 8 ? ((double *)a)[j + i * n] : ((float *)a)[j + i * n];
      if (es == 8)
        ((double *)a)[i + j * n] = v;
      else
        ((float *)a)[i + j * n] = (float)v;
    }
  memcpy(a0, a, (size_t)(n * n) * es);
  int64_t info = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb > 0 ? nb : 32;
  o.use = use;
  o.stream = stream;
  if (fraction) {
    o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
    o.fraction = fraction;
  }
  ck_assert_msg(mlsba_potrf_ex(ex, prec, uplo, n, a, n, &info, &o, rep) == 0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  ck_assert_int_eq(mlsba_potrf_residual(prec, uplo, n, a0, n, a, n, residual),
                   0);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if ((uplo == 'L' && i < j) || (uplo == 'U' && i > j))
        ck_assert_msg(memcmp((char *)a + (size_t)(i + j * n) * es,
                             (char *)a0 + (size_t)(i + j * n) * es, es) == 0,
                      "(%lld, %lld) written", (long long)i, (long long)j);
  free(a);
  free(a0);
}

static void chol_case(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                      int64_t n, int64_t nb, int stream, const double *fraction,
                      mlsba_factor_report_t *rep, double *residual) {
  static const unsigned char use[3] = {1, 1, 1};
  chol_case_on(ex, use, prec, uplo, n, nb, stream, fraction, rep, residual);
}

static void chol_with_opencl(mlsba_executor_t *ex, mlsba_precision_t prec,
                             char uplo, int64_t n, const double *fraction,
                             mlsba_factor_report_t *rep, double *residual) {
  chol_case(ex, prec, uplo, n, 0, 0, fraction, rep, residual);
}

START_TEST(cholesky_on_cores_and_opencl_is_right) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (int prec = 0; prec < 2; prec++)
    for (int lower = 0; lower < 2; lower++) {
      mlsba_factor_report_t r;
      double res;
      chol_with_opencl(ex, (mlsba_precision_t)prec, lower ? 'L' : 'U', 201,
                       NULL, &r, &res);
      ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                    "precision %d lower %d: residual %g", prec, lower, res);
      ck_assert_int_gt(units_of(&r, 1), 0); /* pocl took pairs */
      mlsba_factor_report_free(&r);
    }
  /* It fails at its first share, then (a third of every step named, so
   * that it has shares) at its third, mid-factorization; lower and upper. */
  static const struct {
    char uplo;
    unsigned nth;
  } faults[] = {{'L', 1}, {'L', 3}, {'U', 1}, {'U', 3}};
  for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
    unsigned nth = faults[f].nth;
    mlsba__opencl_inject_fault(nth, CL_OUT_OF_RESOURCES);
    mlsba_factor_report_t r;
    double res;
    chol_with_opencl(ex, MLSBA_PRECISION_DOUBLE, faults[f].uplo, 201, thirds,
                     &r, &res);
    mlsba__opencl_inject_fault(0, 0);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "%c, failure at share %u: %g",
                  faults[f].uplo, nth, res);
    ck_assert_uint_eq(r.lost, 1);
    for (size_t s = 1; s < r.steps; s++)
      ck_assert_int_eq(r.share[s * 3 + 1] > 0, s < nth);
    mlsba_factor_report_free(&r);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Two OpenCL devices multiply at once, each half of the columns, from
 * the process's first CLBlast call on (each test runs in a fresh fork):
 * both precisions, sizes that pick CLBlast's direct and its indirect
 * GEMM kernels. Under ASan this is the race in CLBlast's caches that the
 * lock around CLBlast (cl_error.h) prevents. */
START_TEST(two_opencl_devices_multiply_at_once) {
  mlsba_platform_t *pl = two_opencl_devices();
  mlsba_executor_t *ex = open_executor(pl);
  static const int64_t shapes[][3] = {{64, 64, 64}, {300, 256, 200}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int prec = 0; prec < 2; prec++) {
      mlsba_gemm_t g;
      gemm_data_make(&g, shapes[s][0], shapes[s][1], shapes[s][2],
                     (mlsba_precision_t)prec, 40 + s);
      int64_t n = g.n, load[4] = {0, n / 2, 0, n - n / 2};
      double time[4];
      ck_assert_msg(
          mlsba_executor_run_gemm(ex, &g, load, MLSBA_DRIVE_SHARED, time) == 0,
          "%s", mlsba_last_error());
      double e;
      int ok;
      ck_assert_int_eq(mlsba_gemm_verify(&g, 7, &e, &ok), 0);
      ck_assert_msg(ok, "shape %zu precision %d: error %g", s, prec, e);
      ck_assert_double_gt(time[1], 0);
      ck_assert_double_gt(time[3], 0);
      gemm_data_free(&g);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Cholesky on two OpenCL devices, each a quarter of every step's pairs:
 * the first's share holds the middle pairs (resident), the second's is
 * two runs (streamed); lower and upper, both precisions. */
START_TEST(cholesky_on_two_opencl_devices_is_right) {
  mlsba_platform_t *pl = two_opencl_devices();
  mlsba_executor_t *ex = open_executor(pl);
  static const double quarters[4] = {1, 1, 1, 1};
  static const unsigned char use[4] = {1, 1, 1, 1};
  for (int prec = 0; prec < 2; prec++)
    for (int lower = 0; lower < 2; lower++) {
      mlsba_factor_report_t r;
      double res;
      chol_case_on(ex, use, (mlsba_precision_t)prec, lower ? 'L' : 'U', 171, 16,
                   0, quarters, &r, &res);
      ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                    "precision %d lower %d: residual %g", prec, lower, res);
      ck_assert_int_gt(units_of(&r, 1), 0);
      ck_assert_int_gt(units_of(&r, 3), 0);
      ck_assert_uint_eq(r.lost, 0);
      mlsba_factor_report_free(&r);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Resident Cholesky columns, lower and upper, both precisions: n not a
 * multiple of the block, n below it, block 1; the device a third of each
 * step's pairs (the middle ones: one run of columns that moves right as
 * the trailing matrix shrinks). Right factors, the other triangle never
 * written, the device used at every step that gives it pairs, and fewer
 * bytes both ways than streaming the same shares. */
START_TEST(cholesky_with_resident_columns_is_right) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  static const int64_t shapes[][2] = {{203, 32}, {20, 32}, {97, 16}, {41, 1}};
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
    for (int prec = 0; prec < 2; prec++)
      for (int lower = 0; lower < 2; lower++) {
        mlsba_factor_report_t r[2];
        for (int stream = 0; stream < 2; stream++) {
          double res;
          chol_case(ex, (mlsba_precision_t)prec, lower ? 'L' : 'U',
                    shapes[k][0], shapes[k][1], stream, thirds, &r[stream],
                    &res);
          ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                        "n %lld nb %lld precision %d lower %d stream %d: "
                        "residual %g",
                        (long long)shapes[k][0], (long long)shapes[k][1], prec,
                        lower, stream, res);
          ck_assert_uint_eq(r[stream].lost, 0);
        }
        int any = units_of(&r[0], 1) > 0;
        ck_assert_int_eq(r[0].bytes_to_devices > 0, any);
        ck_assert_int_eq(r[0].bytes_from_devices > 0, any);
        if (r[0].steps > 3) { /* more than one update: residency pays */
          ck_assert_int_gt(units_of(&r[0], 1), 0);
          ck_assert_int_lt(r[0].bytes_to_devices, r[1].bytes_to_devices);
          ck_assert_int_lt(r[0].bytes_from_devices, r[1].bytes_from_devices);
          ck_assert_int_lt(r[0].transfers, r[1].transfers);
        }
        mlsba_factor_report_free(&r[0]);
        mlsba_factor_report_free(&r[1]);
      }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A device that holds fewer pairs than its third (mem_limit_mb): its
 * share is what it holds (streamed, a little more: a streamed pair needs
 * less room), kept in a ring of columns through which the run moves
 * right, wrapping around; right factors, fewer bytes than streaming. */
START_TEST(cholesky_resident_in_a_small_device) {
  mlsba_platform_t *pl = cores_and_opencl(", \"mem_limit_mb\": 1");
  mlsba_executor_t *ex = open_executor(pl);
  for (int lower = 0; lower < 2; lower++) {
    mlsba_factor_report_t r[2];
    for (int stream = 0; stream < 2; stream++) {
      double res;
      chol_case(ex, MLSBA_PRECISION_DOUBLE, lower ? 'L' : 'U', 700, 32, stream,
                thirds, &r[stream], &res);
      ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                    "lower %d stream %d: residual %g", lower, stream, res);
      ck_assert_uint_eq(r[stream].lost, 0);
    }
    ck_assert_int_gt(units_of(&r[0], 1), 0);
    ck_assert_msg(
        r[0].bytes_to_devices < r[1].bytes_to_devices &&
            r[0].bytes_from_devices < r[1].bytes_from_devices,
        "lower %d: %lld %lld against %lld %lld", lower,
        (long long)r[0].bytes_to_devices, (long long)r[0].bytes_from_devices,
        (long long)r[1].bytes_to_devices, (long long)r[1].bytes_from_devices);
    mlsba_factor_report_free(&r[0]);
    mlsba_factor_report_free(&r[1]);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A matrix that is not positive definite (a negative diagonal element
 * at 150 of 203): info names its minor, the resident columns come back,
 * the other triangle is never written, nothing crashes. */
START_TEST(a_non_spd_matrix_with_resident_columns_sets_info) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  enum { N = 203 };
  double *a = malloc(sizeof(double) * N * N), *a0 = malloc(sizeof *a0 * N * N);
  for (int lower = 0; lower < 2; lower++) {
    unsigned seed = 3;
    for (int j = 0; j < N; j++)
      for (int i = 0; i <= j; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = i == j ? N : ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
        a[i + j * N] = a[j + i * N] = i == 150 && j == 150 ? -1.0 : v;
      }
    memcpy(a0, a, sizeof(double) * N * N);
    unsigned char use[3] = {1, 1, 1};
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 32;
    o.use = use;
    o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
    o.fraction = thirds;
    mlsba_factor_report_t r;
    int64_t info = 0;
    ck_assert_msg(mlsba_potrf_ex(ex, MLSBA_PRECISION_DOUBLE, lower ? 'L' : 'U',
                                 N, a, N, &info, &o, &r) == 0,
                  "%s", mlsba_last_error());
    ck_assert_int_eq(info, 151);
    ck_assert_int_gt(units_of(&r, 1), 0);
    ck_assert_uint_eq(r.lost, 0);
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        if (lower ? i < j : i > j)
          ck_assert(a[i + j * N] == a0[i + j * N]);
    mlsba_factor_report_free(&r);
  }
  free(a);
  free(a0);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* What a Cholesky factorization on cores and one OpenCL device (device
 * 1) moves, from its shares in the report, as cl_chol.c describes it.
 * Its units are the rightmost pairs (the middle ones): streamed, each of
 * its two runs goes with its part of the panel, and its rectangle and
 * diagonal block come back; resident, its one run of columns [a, b)
 * keeps what it held of it, columns that leave come back (lower: from
 * their first row down; upper: from the first row not back yet), those
 * that join are sent with the panel's part, upper's next block row comes
 * back after each step, and the rest at the end. */
typedef struct {
  int64_t to, from, moves;
} traffic_t;

static void move(traffic_t *t, int to, int64_t elems, int64_t es) {
  if (elems <= 0)
    return;
  *(to ? &t->to : &t->from) += elems * es;
  t->moves++;
}

static void streamed_run(traffic_t *t, int lower, int64_t s0, int64_t n,
                         int64_t jb, int64_t c, int64_t w, int64_t es) {
  int64_t rows = lower ? n - c : c + w - s0;
  move(t, 1, rows * w, es);
  move(t, 1, rows * jb, es);
  move(t, 0, (rows - w) * w, es);
  move(t, 0, w * w, es);
}

/* Resident columns [c0, c1) back (rows from r0: upper's first row not
 * back yet, ignored for lower). */
static void fetch(traffic_t *t, int lower, int64_t n, int64_t r0, int64_t c0,
                  int64_t c1, int64_t es) {
  if (c1 > c0)
    move(t, 0, (lower ? n - c0 : c1 - r0) * (c1 - c0), es);
}

static traffic_t chol_traffic(const mlsba_factor_report_t *r, int lower,
                              int stream, int64_t n, int64_t nb, int64_t es) {
  traffic_t t = {0, 0, 0};
  int64_t ra = 0, rb = 0, top = 0; /* resident [ra, rb) */
  for (size_t s = 1; s < r->steps; s++) {
    int64_t j = (int64_t)(s - 1) * nb, jb = n - j < nb ? n - j : nb;
    int64_t s0 = j + jb, N = n - s0, U = (N + 1) / 2;
    int64_t k = r->share[s * r->p + 1], lo = U - k;
    if (stream) {
      int64_t lo2 = N - U > U ? N - U : U;
      if (k > 0)
        streamed_run(&t, lower, s0, n, jb, s0 + lo, k, es);
      if (k > 0 && N - lo - lo2 > 0)
        streamed_run(&t, lower, s0, n, jb, s0 + lo2, N - lo - lo2, es);
      continue;
    }
    int64_t a = k > 0 ? s0 + lo : 0, b = k > 0 ? s0 + N - lo : 0;
    if (ra < rb) { /* what leaves the share comes back */
      fetch(&t, lower, n, top, ra, rb < a ? rb : a, es);
      fetch(&t, lower, n, top, ra > b ? ra : b, rb, es);
      ra = ra > a ? ra : a;
      rb = rb < b ? rb : b;
      if (ra >= rb)
        ra = rb = 0;
    }
    if (k > 0) { /* the joining columns, then the panel's part */
      int64_t runs[2][2] = {{a, ra < rb ? ra : b}, {ra < rb ? rb : b, b}};
      for (int q = 0; q < 2; q++) {
        int64_t x = runs[q][0], y = runs[q][1];
        move(&t, 1, (lower ? n - x : y - s0) * (y - x), es);
      }
      move(&t, 1, (lower ? n - a : b - s0) * jb, es);
      ra = a;
      rb = b;
    }
    int64_t jbn = n - s0 < nb ? n - s0 : nb;
    if (!lower && ra < rb && jbn > 0) { /* the next block row back */
      int64_t c0 = ra > s0 ? ra : s0;
      move(&t, 0, jbn * (rb - c0), es);
      ra = ra > s0 + jbn ? ra : s0 + jbn;
      if (ra >= rb)
        ra = rb = 0;
    }
    top = s0 + jbn;
  }
  if (ra < rb)
    fetch(&t, lower, n, top, ra, rb, es);
  return t;
}

/* The bytes and transfers of the report are exactly what the scheme
 * moves for the shares the device had, resident and streamed, lower and
 * upper, on a small case (n not a multiple of the block). */
START_TEST(cholesky_transfers_are_exact) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  enum { N = 101, NB = 16 };
  for (int lower = 0; lower < 2; lower++)
    for (int stream = 0; stream < 2; stream++) {
      mlsba_factor_report_t r;
      double res;
      chol_case(ex, MLSBA_PRECISION_DOUBLE, lower ? 'L' : 'U', N, NB, stream,
                thirds, &r, &res);
      ck_assert(res < MLSBA_FACTOR_RESIDUAL_OK);
      ck_assert_int_gt(units_of(&r, 1), 0);
      traffic_t t = chol_traffic(&r, lower, stream, N, NB, 8);
      ck_assert_msg(r.bytes_to_devices == t.to &&
                        r.bytes_from_devices == t.from &&
                        r.transfers == t.moves,
                    "lower %d stream %d: %lld %lld %lld, expected %lld %lld "
                    "%lld",
                    lower, stream, (long long)r.bytes_to_devices,
                    (long long)r.bytes_from_devices, (long long)r.transfers,
                    (long long)t.to, (long long)t.from, (long long)t.moves);
      mlsba_factor_report_free(&r);
    }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The device fails at its fourth share holding pairs of three steps that
 * exist only in its memory (upper: all but the block rows that came back
 * for the panels): the host replays the updates they missed, the cores
 * redo the step, and the factors are right. Streamed too. */
START_TEST(a_cholesky_failure_with_resident_columns_is_taken_back) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (int prec = 0; prec < 2; prec++)
    for (int lower = 0; lower < 2; lower++)
      for (int stream = 0; stream < 2; stream++) {
        mlsba_factor_report_t r;
        double res;
        mlsba__opencl_inject_fault(4, CL_OUT_OF_RESOURCES);
        chol_case(ex, (mlsba_precision_t)prec, lower ? 'L' : 'U', 181, 16,
                  stream, thirds, &r, &res);
        mlsba__opencl_inject_fault(0, 0);
        ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK,
                      "precision %d lower %d stream %d: residual %g", prec,
                      lower, stream, res);
        ck_assert_uint_eq(r.lost, 1);
        ck_assert_int_eq(r.dropped[1], 1);
        for (size_t s = 1; s < r.steps; s++) /* steps 1-3 on the device */
          ck_assert_int_eq(r.share[s * 3 + 1] > 0, s <= 3);
        mlsba_factor_report_free(&r);
      }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* QR of a random m x n matrix (block nb) on the cores and pocl, each a
 * third of every step's columns (fraction named, so that the device has
 * shares on a loaded machine), kept resident or streamed: the factors
 * are right by LAPACK's bounds (||A - QR|| and ||I - Q^T Q||, Q formed by
 * ?orgqr from them). */
typedef struct {
  int64_t m, n, nb;
  int stream;
} qr_case_t;

static void qr_case(mlsba_executor_t *ex, mlsba_precision_t prec,
                    const qr_case_t *c, mlsba_factor_report_t *rep,
                    double *residual, double *orth) {
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  int64_t m = c->m, n = c->n, k = m < n ? m : n, mn = m * n;
  void *a = malloc((size_t)mn * es), *a0 = malloc((size_t)mn * es);
  void *tau = malloc((size_t)(k > 0 ? k : 1) * es);
  unsigned seed = 7;
  for (int64_t i = 0; i < mn; i++) {
    seed = seed * 1103515245u + 12345u;
    double v = ((seed >> 8) & 0xFFFF) / 32768.0 - 1.0;
    if (es == 8)
      ((double *)a)[i] = v;
    else
      ((float *)a)[i] = (float)v;
  }
  memcpy(a0, a, (size_t)mn * es);
  unsigned char use[3] = {1, 1, 1}; /* pocl too, beside the cores */
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = c->nb;
  o.use = use;
  o.stream = c->stream;
  o.split = MLSBA_FACTOR_SPLIT_FIXED_SLICE;
  o.fraction = thirds;
  int64_t info = -1;
  ck_assert_msg(mlsba_geqrf_ex(ex, prec, m, n, a, m, tau, &info, &o, rep) == 0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  ck_assert_int_eq(
      mlsba_geqrf_residual(prec, m, n, a0, m, a, m, tau, residual, orth), 0);
  free(a);
  free(a0);
  free(tau);
}

static double qr_whole(mlsba_executor_t *ex, mlsba_precision_t prec,
                       const int64_t shape[3], int stream,
                       mlsba_factor_report_t *rep) {
  qr_case_t c = {
      .m = shape[0], .n = shape[1], .nb = shape[2], .stream = stream};
  double res = -1, orth = -1;
  qr_case(ex, prec, &c, rep, &res, &orth);
  return isnan(res) || isnan(orth) ? NAN : fmax(res, orth); /* the worse */
}

/* Odd sizes, tall and wide, n below the block, both precisions, resident
 * and streamed (check_whole_columns), ||A - QR|| and ||I - Q^T Q|| both
 * within the bound. */
START_TEST(qr_on_cores_and_opencl_is_right) {
  static const int64_t shapes[][3] = {
      {203, 203, 32}, {20, 20, 32}, {301, 150, 16}, {120, 257, 24}};
  check_whole_columns("QR", shapes, sizeof shapes / sizeof *shapes, qr_whole);
}
END_TEST

/* The device fails at its fourth share, holding the columns of three
 * steps: the host replays the updates they missed (forming the old
 * panels' T again), the cores redo the step, the factors are right. */
START_TEST(an_opencl_failure_mid_qr_is_taken_back) {
  mlsba_platform_t *pl = cores_and_opencl("");
  mlsba_executor_t *ex = open_executor(pl);
  for (int stream = 0; stream < 2; stream++) {
    qr_case_t c = {.m = 230, .n = 201, .nb = 16, .stream = stream};
    mlsba_factor_report_t r;
    double res = -1, orth = -1;
    mlsba__opencl_inject_fault(4, CL_OUT_OF_RESOURCES);
    qr_case(ex, MLSBA_PRECISION_DOUBLE, &c, &r, &res, &orth);
    mlsba__opencl_inject_fault(0, 0);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK &&
                      orth < MLSBA_FACTOR_RESIDUAL_OK,
                  "stream %d: %g %g", stream, res, orth);
    ck_assert_uint_eq(r.lost, 1);
    ck_assert_int_eq(r.dropped[1], 1);
    for (size_t s = 1; s < r.steps; s++) /* steps 1-3 on the device */
      ck_assert_int_eq(r.share[s * 3 + 1] > 0, s <= 3);
    mlsba_factor_report_free(&r);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

static Suite *opencl_suite(void) {
  Suite *s = suite_create("opencl");
  TCase *tc = tcase_create("device");
  /* pocl compiles CLBlast's kernels on first use: seconds per kernel. */
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, products_on_cores_and_opencl_match_the_reference);
  tcase_add_test(tc, memory_limit_caps_the_device);
  tcase_add_test(tc, the_accelerators_link_is_measured);
  tcase_add_test(tc, driving_core_computes_while_its_accelerator_runs);
  tcase_add_test(tc, a_missing_device_is_a_clear_error);
  tcase_add_test(tc, discovery_finds_the_opencl_device);
  tcase_add_test(tc, a_user_kernel_runs_on_opencl_and_cores);
  tcase_add_test(tc, opencl_faults_drop_the_device_or_stop);
  tcase_add_test(tc, a_memory_limit_beyond_the_device_is_harmless);
  tcase_add_test(tc, mandelbrot_on_opencl_matches_the_cpu);
  tcase_add_test(tc, lu_on_cores_and_opencl_is_right);
  tcase_add_test(tc, the_row_swap_kernel_matches_laswp);
  tcase_add_test(tc, lu_with_resident_columns_is_right);
  tcase_add_test(tc, an_opencl_failure_mid_lu_is_taken_back);
  tcase_add_test(tc, an_opencl_failure_with_resident_columns_is_taken_back);
  tcase_add_test(tc, cholesky_on_cores_and_opencl_is_right);
  suite_add_tcase(s, tc);
  TCase *qr = tcase_create("qr");
  tcase_set_timeout(qr, 600);
  tcase_add_test(qr, qr_on_cores_and_opencl_is_right);
  tcase_add_test(qr, an_opencl_failure_mid_qr_is_taken_back);
  suite_add_tcase(s, qr);
  TCase *chol = tcase_create("resident_cholesky");
  tcase_set_timeout(chol, 600);
  tcase_add_test(chol, cholesky_with_resident_columns_is_right);
  tcase_add_test(chol, cholesky_transfers_are_exact);
  tcase_add_test(chol, cholesky_resident_in_a_small_device);
  tcase_add_test(chol, a_non_spd_matrix_with_resident_columns_sets_info);
  tcase_add_test(chol, a_cholesky_failure_with_resident_columns_is_taken_back);
  suite_add_tcase(s, chol);
  /* Two OpenCL devices in one process (under ASan: CLBlast's caches). */
  TCase *two = tcase_create("two_devices");
  tcase_set_timeout(two, 600);
  tcase_add_test(two, two_opencl_devices_multiply_at_once);
  tcase_add_test(two, resident_columns_move_between_two_devices);
  tcase_add_test(two, cholesky_on_two_opencl_devices_is_right);
  suite_add_tcase(s, two);
  return s;
}

int main(void) {
  if (!have_opencl_device()) {
    printf("no OpenCL device: skipped\n");
    return 77;
  }
  setenv("MLSBA_MODEL_CACHE", "0", 1); /* not the user's cache */
  return run_suite(opencl_suite());
}
