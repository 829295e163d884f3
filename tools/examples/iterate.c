/* Balance once, then run many times: the shape of an iterative
 * application. Each time step smooths a 1-D field (a three-point stencil)
 * on every core and OpenCL device, with the distribution found at the
 * first step; the balancer measures every step and re-balances by itself
 * when the times drift (try loading the machine while it runs).
 *
 * Build: cc iterate.c $(pkg-config --cflags --libs mlsba) -lOpenCL */
#include <mlsba.h>
#include <mlsba/opencl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_output.h"

typedef struct {
  int64_t n;
  double *cur, *next; /* swapped after every step */
  cl_mem dcur, dnext; /* a share's buffers on the device */
} field_t;

static double at(const field_t *f, int64_t i) {
  return i < 0 || i >= f->n ? 0.0 : f->cur[i];
}

static int step_on_core(void *user, int64_t first, int64_t count) {
  field_t *f = user;
  for (int64_t i = first; i < first + count; i++)
    f->next[i] = 0.25 * at(f, i - 1) + 0.5 * f->cur[i] + 0.25 * at(f, i + 1);
  return 0;
}

/* The device gets its range plus one neighbour on each side (the halo). */
static int step_on_device(void *user, mlsba_opencl_env_t *env, int64_t first,
                          int64_t count) {
  field_t *f = user;
  int64_t lo = first > 0 ? first - 1 : 0;
  int64_t hi = first + count < f->n ? first + count + 1 : f->n;
  cl_int e;
  f->dcur =
      clCreateBuffer(env->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                     (size_t)(hi - lo) * sizeof(double), f->cur + lo, &e);
  if (e == CL_SUCCESS)
    f->dnext = clCreateBuffer(env->context, CL_MEM_WRITE_ONLY,
                              (size_t)count * sizeof(double), NULL, &e);
  cl_long args[3] = {first - lo, f->n - lo, first};
  for (cl_uint a = 0; e == CL_SUCCESS && a < 3; a++)
    e = clSetKernelArg(env->kernel, a, sizeof(cl_long), &args[a]);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 3, sizeof(cl_mem), &f->dcur);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(env->kernel, 4, sizeof(cl_mem), &f->dnext);
  size_t global = (size_t)count;
  if (e == CL_SUCCESS)
    e = clEnqueueNDRangeKernel(env->queue, env->kernel, 1, NULL, &global, NULL,
                               0, NULL, NULL);
  if (e == CL_SUCCESS)
    e = clEnqueueReadBuffer(env->queue, f->dnext, CL_FALSE, 0,
                            (size_t)count * sizeof(double), f->next + first, 0,
                            NULL, NULL);
  return e;
}

static void share_done(void *user, mlsba_opencl_env_t *env) {
  (void)env;
  field_t *f = user;
  if (f->dcur)
    clReleaseMemObject(f->dcur);
  if (f->dnext)
    clReleaseMemObject(f->dnext);
  f->dcur = f->dnext = NULL;
}

/* x holds cur[lo..hi); element i of the share is x[off + i]; end = n - lo. */
static const mlsba_opencl_ops_t device_code = {
    .source =
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "__kernel void stencil_step(long off, long end, long first,"
        "                   __global const double *x, __global double *y) {"
        "  long i = get_global_id(0), k = off + i;"
        "  double l = k > 0 ? x[k - 1] : 0.0, r = k + 1 < end ? x[k + 1] : 0.0;"
        "  if (first + i == 0) l = 0.0;"
        "  y[i] = 0.25 * l + 0.5 * x[k] + 0.25 * r;"
        "}",
    .kernel_name = "stencil_step",
    .enqueue = step_on_device,
    .complete = share_done,
};

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 50;
  field_t f = {.n = 8 << 20};
  f.cur = calloc((size_t)f.n, sizeof(double));
  f.next = calloc((size_t)f.n, sizeof(double));
  if (!f.cur || !f.next)
    return 1;
  f.cur[f.n / 2] = 1.0; /* a spike of heat in the middle */

  mlsba_load_t *load;
  mlsba_balancer_t *balancer;
  mlsba_balance_opts_t opts;
  mlsba_balance_opts_init(&opts);
  opts.eps = 0.05;
  opts.progress = on_run;
  opts.progress_ctx = &opts.eps;
  opts.log = on_log;
  printf("step 1: balancing %lld points over this machine's devices\n",
         (long long)f.n);
  if (mlsba_load_create("stencil3", f.n, &load) ||
      mlsba_load_set_cpu(load, step_on_core, &f) ||
      mlsba_load_set_opencl(load, &device_code, &f) ||
      mlsba_balance_ex(NULL, load, &opts, &balancer)) { /* step 1 */
    fprintf(stderr, "iterate: %s\n", mlsba_last_error());
    return 1;
  }
  char how[512];
  mlsba_balance_result_describe(mlsba_balancer_result(balancer), how,
                                sizeof how);
  print_wrapped("step 1: ", 4, how);
  opts.progress = NULL; /* the steps below print their own line */
  double total = 0;
  int rebalanced = 0;
  for (int s = 2; s <= steps; s++) {
    double *t = f.cur; /* the step just computed becomes the input */
    f.cur = f.next;
    f.next = t;
    mlsba_run_info_t info;
    if (mlsba_balancer_run(balancer, &info) != 0) {
      fprintf(stderr, "iterate: step %d: %s\n", s, mlsba_last_error());
      return 1;
    }
    total += info.makespan;
    rebalanced += info.rebalanced;
    if (info.rebalanced)
      printf("step %d: %.4f s, imbalance %.1f%% (re-balanced: %u runs, "
             "%.3f s)\n",
             s, info.makespan,
             mlsba_imbalance_percent(info.imbalance, info.drift), info.runs,
             info.wall_s);
    else if (s % 10 == 0)
      printf("step %d: %.4f s, imbalance %.1f%%\n", s, info.makespan,
             mlsba_imbalance_percent(info.imbalance, info.drift));
  }
  /* The heat is conserved (up to what leaked past the ends: nothing). */
  double sum = 0;
  for (int64_t i = 0; i < f.n; i++)
    sum += f.next[i];
  int ok = sum > 0.999999 && sum < 1.000001;
  printf("%d step%s, %.4f s per step after the first, re-balanced %d time%s;\n"
         "heat %.12f (%s)\n",
         steps, steps == 1 ? "" : "s", steps > 1 ? total / (steps - 1) : 0.0,
         rebalanced, rebalanced == 1 ? "" : "s", sum,
         ok ? "conserved" : "WRONG");
  mlsba_balancer_destroy(balancer);
  mlsba_load_destroy(load);
  free(f.cur);
  free(f.next);
  printf("iterate: %s\n", ok ? "success" : "FAILED");
  return ok ? 0 : 1;
}
