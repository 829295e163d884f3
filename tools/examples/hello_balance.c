/* The smallest complete libmlsba program: describe a divisible load (what
 * a core and what an OpenCL device do with a range of units), balance it
 * across every core and OpenCL device of this machine, use the result.
 *
 *   y[i] = f(x[i]) for half a million elements, f a few dozen square roots
 *
 * It prints every run of the balancing routine and, at the end, how the
 * balancing went, in words; it succeeds when y is right, however well the
 * machine could be balanced (a busy machine, or an OpenCL device that
 * shares the cores, may not let the routine settle within its runs).
 *
 * Build: cc hello_balance.c $(pkg-config --cflags --libs mlsba) -lOpenCL -lm */
#include <math.h>
#include <mlsba.h>
#include <mlsba/opencl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_output.h"

typedef struct {
  float *x, *y;
  cl_mem dx, dy; /* the device's buffers for the share in flight */
} data_t;

static float f(float x) {
  float y = x;
  for (int k = 0; k < 48; k++)
    y = sqrtf(y + x);
  return y;
}

/* A core: units [first, first + count). */
static int on_core(void *user, int64_t first, int64_t count) {
  data_t *d = user;
  for (int64_t i = first; i < first + count; i++)
    d->y[i] = f(d->x[i]);
  return 0;
}

/* An OpenCL device: enqueue the same on its queue and return. (One
 * share per device at a time, so one pair of buffers in user data is
 * enough for a machine with one OpenCL device; keep them in env->state
 * from a setup callback when there are several.) */
static int on_device(void *user, mlsba_opencl_env_t *env, int64_t first,
                     int64_t count) {
  data_t *d = user;
  size_t bytes = (size_t)count * sizeof(float);
  cl_int e;
  d->dx = clCreateBuffer(env->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         bytes, d->x + first, &e);
  if (e == CL_SUCCESS)
    d->dy = clCreateBuffer(env->context, CL_MEM_WRITE_ONLY, bytes, NULL, &e);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 0, sizeof d->dx, &d->dx);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 1, sizeof d->dy, &d->dy);
  size_t global = (size_t)count;
  if (e == CL_SUCCESS)
    e = clEnqueueNDRangeKernel(env->queue, env->kernel, 1, NULL, &global, NULL,
                               0, NULL, NULL);
  if (e == CL_SUCCESS)
    e = clEnqueueReadBuffer(env->queue, d->dy, CL_FALSE, 0, bytes, d->y + first,
                            0, NULL, NULL);
  return e;
}

/* After the share: release its buffers. */
static void share_done(void *user, mlsba_opencl_env_t *env) {
  (void)env;
  data_t *d = user;
  if (d->dx)
    clReleaseMemObject(d->dx);
  if (d->dy)
    clReleaseMemObject(d->dy);
  d->dx = d->dy = NULL;
}

static const mlsba_opencl_ops_t device_code = {
    .source = "__kernel void f(__global const float *x, __global float *y) {"
              "  size_t i = get_global_id(0);"
              "  float v = x[i];"
              "  for (int k = 0; k < 48; k++) v = sqrt(v + x[i]);"
              "  y[i] = v;"
              "}",
    .kernel_name = "f",
    .enqueue = on_device,
    .complete = share_done,
};

int main(void) {
  const int64_t n = 1 << 19;
  data_t d = {malloc(n * sizeof(float)), malloc(n * sizeof(float)), 0, 0};
  if (!d.x || !d.y)
    return 1;
  for (int64_t i = 0; i < n; i++)
    d.x[i] = (float)i;

  /* The defaults (eps 5%), at most 10 runs: a few seconds on any machine. */
  mlsba_balance_opts_t opts;
  mlsba_balance_opts_init(&opts);
  opts.max_iter = 10;
  opts.progress = on_run;
  opts.progress_ctx = &opts.eps;
  opts.log = on_log;
  mlsba_load_t *load;
  mlsba_balancer_t *balancer;
  printf("hello_balance: %lld units over every core and OpenCL device\n",
         (long long)n);
  if (mlsba_load_create("hello-sqrt", n, &load) ||
      mlsba_load_set_cpu(load, on_core, &d) ||
      mlsba_load_set_opencl(load, &device_code, &d) ||
      mlsba_balance_ex(NULL, load, &opts, &balancer)) {
    fprintf(stderr, "hello_balance: %s\n", mlsba_last_error());
    return 1;
  }

  /* The load has been computed; here is how it was shared. */
  const mlsba_balance_result_t *r = mlsba_balancer_result(balancer);
  const mlsba_platform_t *pl = mlsba_balancer_platform(balancer);
  char how[512];
  mlsba_balance_result_describe(r, how, sizeof how);
  print_wrapped("", 2, how);
  for (size_t j = 0; j < r->p; j++)
    printf("  %-8s %9lld units  %.4f s%s\n", mlsba_platform_device_name(pl, j),
           (long long)r->load[j], r->time[j],
           r->dropped[j] == MLSBA_DROPPED_LEFT_OUT
               ? "  (left out: others run faster without it)"
           : r->dropped[j] == MLSBA_DROPPED_FAULT ? "  (dropped after a fault)"
                                                  : "");
  int ok = fabsf(d.y[n - 1] - f(d.x[n - 1])) <= 1e-5f * f(d.x[n - 1]);
  printf("y[n-1] = %g (%s)\n", d.y[n - 1], ok ? "correct" : "WRONG");
  printf("hello_balance: %s\n", ok ? "success" : "FAILED");

  mlsba_balancer_destroy(balancer);
  mlsba_load_destroy(load);
  free(d.x);
  free(d.y);
  return ok ? 0 : 1;
}
