/* The smallest complete libmlsba program: describe a divisible load (what
 * a core and what an OpenCL device do with a range of units), balance it
 * across every core and OpenCL device of this machine, use the result.
 *
 *   y[i] = f(x[i]) for 4 million elements, f a few dozen square roots
 *
 * Build: cc hello_balance.c $(pkg-config --cflags --libs mlsba) -lOpenCL */
#include <math.h>
#include <mlsba.h>
#include <mlsba/opencl.h>
#include <stdio.h>
#include <stdlib.h>

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
  const int64_t n = 4 << 20;
  data_t d = {malloc(n * sizeof(float)), malloc(n * sizeof(float)), 0, 0};
  if (!d.x || !d.y)
    return 1;
  for (int64_t i = 0; i < n; i++)
    d.x[i] = (float)i;

  mlsba_load_t *load;
  mlsba_balancer_t *balancer;
  if (mlsba_load_create("hello-sqrt", n, &load) ||
      mlsba_load_set_cpu(load, on_core, &d) ||
      mlsba_load_set_opencl(load, &device_code, &d) ||
      mlsba_balance(load, &balancer)) {
    fprintf(stderr, "hello_balance: %s\n", mlsba_last_error());
    return 1;
  }

  /* The load has been computed; here is how it was shared. */
  const mlsba_balance_result_t *r = mlsba_balancer_result(balancer);
  const mlsba_platform_t *pl = mlsba_balancer_platform(balancer);
  static const char *const how[] = {
      "balanced", "at a fixed point (the models see nothing better)",
      "not converged within max-iter", "not converged (a cycle)"};
  printf("%u iterations, %s; makespan %.4f s, imbalance %.1f%%\n",
         r->iterations, how[r->stop], r->makespan, 100 * r->imbalance);
  for (size_t j = 0; j < r->p; j++)
    printf("  %-8s %9lld units  %.4f s\n", mlsba_platform_device_name(pl, j),
           (long long)r->load[j], r->time[j]);
  int ok = fabsf(d.y[n - 1] - f(d.x[n - 1])) <= 1e-5f * f(d.x[n - 1]);
  printf("y[n-1] = %g (%s)\n", d.y[n - 1], ok ? "correct" : "WRONG");

  mlsba_balancer_destroy(balancer);
  mlsba_load_destroy(load);
  free(d.x);
  free(d.y);
  return ok ? 0 : 1;
}
