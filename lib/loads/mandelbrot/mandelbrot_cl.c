/* The Mandelbrot load's OpenCL code: the kernel of cl/mandelbrot.cl over
 * the share's rows into a device buffer, then one read per row into its
 * place in the image (the rows of a share are interleaved, not adjacent).
 * The buffer is per device and grows to the largest share. */
#include <stdlib.h>

#include "../../../cl/mandelbrot_cpu.h"
#include "../../devices/cl.h"
#include "mandelbrot.h"
#include "mandelbrot_cl_source.h" /* generated from cl/mandelbrot.cl */
#include "mlsba/opencl.h"

typedef struct {
  cl_mem out;
  int64_t rows; /* rows the buffer holds */
} mb_state_t;

static int mb_setup(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  env->state = calloc(1, sizeof(mb_state_t));
  return env->state ? 0 : CL_OUT_OF_HOST_MEMORY;
}

static void mb_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  mb_state_t *st = env->state;
  if (st && st->out)
    clReleaseMemObject(st->out);
  free(st);
}

/* The share's rows of counts must fit in one allocation; doubles needed. */
static int mb_max_units(void *user, const mlsba_opencl_env_t *env,
                        int64_t *max) {
  const mlsba_mandelbrot_t *mb = user;
  double row = (double)mb->width * sizeof(cl_int);
  double rows = (double)env->max_alloc / row;
  *max = !mlsba__cl_has_fp64(env->device) ? 0
         : rows >= (double)mb->height     ? mb->height
                                          : (int64_t)rows;
  return 0;
}

static int mb_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                      int64_t count) {
  const mlsba_mandelbrot_t *mb = user;
  mb_state_t *st = env->state;
  size_t row_bytes = (size_t)mb->width * sizeof(cl_int);
  cl_int e = CL_SUCCESS;
  if (st->rows < count) {
    if (st->out)
      clReleaseMemObject(st->out);
    st->rows = 0;
    st->out = clCreateBuffer(env->context, CL_MEM_WRITE_ONLY,
                             (size_t)count * row_bytes, NULL, &e);
    if (e != CL_SUCCESS) {
      st->out = NULL;
      return e;
    }
    st->rows = count;
  }
  cl_long width = mb->width, height = mb->height;
  cl_long stride = mlsba__mandelbrot_stride(mb->height);
  cl_long row0 = first * stride % mb->height;
  cl_double dx = (mb->x1 - mb->x0) / (double)mb->width;
  cl_double dy = (mb->y1 - mb->y0) / (double)mb->height;
  cl_int iters = mb->max_iter;
  cl_kernel k = env->kernel;
  const struct {
    size_t size;
    const void *value;
  } args[] = {{sizeof width, &width},   {sizeof height, &height},
              {sizeof row0, &row0},     {sizeof stride, &stride},
              {sizeof mb->x0, &mb->x0}, {sizeof mb->y0, &mb->y0},
              {sizeof dx, &dx},         {sizeof dy, &dy},
              {sizeof iters, &iters},   {sizeof st->out, &st->out}};
  for (cl_uint i = 0; e == CL_SUCCESS && i < sizeof args / sizeof *args; i++)
    e = clSetKernelArg(k, i, args[i].size, args[i].value);
  size_t global[2] = {(size_t)mb->width, (size_t)count};
  if (e == CL_SUCCESS)
    e = clEnqueueNDRangeKernel(env->queue, k, 2, NULL, global, NULL, 0, NULL,
                               NULL);
  int64_t row = row0;
  for (int64_t j = 0; e == CL_SUCCESS && j < count; j++) {
    e = clEnqueueReadBuffer(env->queue, st->out, CL_FALSE,
                            (size_t)j * row_bytes, row_bytes,
                            mb->out + row * mb->width, 0, NULL, NULL);
    row = (row + stride) % mb->height;
  }
  return e;
}

static const mlsba_opencl_ops_t mb_ops = {
    .source = mlsba__mandelbrot_cl_source,
    .kernel_name = "mandelbrot_rows",
    .build_options = "-cl-std=CL1.2",
    .setup = mb_setup,
    .max_units = mb_max_units,
    .enqueue = mb_enqueue,
    .teardown = mb_teardown,
};

const struct mlsba_opencl_ops *mlsba__mandelbrot_cl_ops(void) {
  return &mb_ops;
}
