/* The node kernel on an OpenCL device: CLBlast GEMM with beta = 1 on the
 * device's columns of C', through the public interop API.
 *
 * Resident: when A_(b) and the device's columns of B_(b) and C' fit its
 * memory (within mem_limit_mb), the device keeps its slice of C' across
 * the N/b steps. A PLACE run copies the slice in once, every step then
 * writes only A_(b) (bm x b) and its columns of B_(b) (b x count) and
 * runs the GEMM on the slice where it lies; nothing of C' comes back
 * until a FLUSH run reads the slice back into C'.
 *
 * Streamed: a share of more columns than fit is done in chunks of the
 * columns that fit, each: write its columns of B_(b) and C', GEMM, read
 * its columns of C' back. So an accelerator can take any number of
 * columns, and a step's time holds what such a share really moves.
 *
 * The buffers are made once per shape (setup, before the executor's
 * common start, so no step pays for them) and released by teardown. */
#include <stdlib.h>
#include <string.h>

#include "../loads/gemm/gemm_clblast.h"
#include "kernel.h"
#include "mlsba/opencl.h"

/* What one device keeps of the load (env->state). */
typedef struct {
  cl_mem a;    /* A_(b), bm x b */
  cl_mem b, c; /* room for cols columns of B_(b) and of C' */
  int64_t cols;
  /* Columns [first, first + count) of C' lie on the device, newer than
   * in C' on the host. */
  int held;
  int64_t first, count;
} device_slice_t;

static size_t elem(const mlsba__mpi_kernel_t *k) {
  return k->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

/* Columns of B_(b) and C' that fit beside A_(b): what a share can hold
 * resident, and the chunk of a streamed one. */
static int64_t fitting_columns(const mlsba__mpi_kernel_t *k,
                               const mlsba_opencl_env_t *env) {
  return mlsba__gemm_cl_columns(env, k->prec, k->bm, k->b, k->bn);
}

static void release(device_slice_t *s) {
  cl_mem *bufs[3] = {&s->a, &s->b, &s->c};
  for (int i = 0; i < 3; i++)
    if (*bufs[i])
      clReleaseMemObject(*bufs[i]);
  s->a = s->b = s->c = NULL;
}

static void kernel_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  device_slice_t *s = env->state;
  /* A slice still held here is lost: the node gives slices back before
   * its operands change (and C' may be gone by now). */
  if (s)
    release(s);
  free(s);
  env->state = NULL;
}

/* The largest GEMM the device has run (kernel.h), found by its name. */
static double *warmed(const mlsba__mpi_kernel_t *k,
                      const mlsba_opencl_env_t *env) {
  size_t p = mlsba_platform_num_devices(k->platform), i = 0;
  while (i + 1 < p &&
         strcmp(mlsba_platform_device_name(k->platform, i), env->name) != 0)
    i++;
  return &k->warmed[i];
}

/* The buffers for the shape, zeroed: a balancing run computes on C' as
 * it is, and garbage there could be NaNs or denormals that change the
 * speed of the GEMM. Waits, so that nothing of it runs into a step. */
static int kernel_setup(void *user, mlsba_opencl_env_t *env) {
  const mlsba__mpi_kernel_t *k = user;
  device_slice_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  env->state = s;
  size_t es = elem(k), bm = (size_t)k->bm, b = (size_t)k->b;
  s->cols = fitting_columns(k, env);
  size_t cols = s->cols > 0 ? (size_t)s->cols : 0;
  /* No room: max_units gave it no columns, and no share comes. */
  cl_int e = cols > 0 ? CL_SUCCESS : CL_INVALID_BUFFER_SIZE;
  const double zero = 0; /* all bits zero: 0 in either precision */
  cl_mem *bufs[3] = {&s->a, &s->b, &s->c};
  size_t sizes[3] = {bm * b * es, b * cols * es, bm * cols * es};
  for (int i = 0; i < 3 && e == CL_SUCCESS; i++) {
    *bufs[i] =
        clCreateBuffer(env->context, CL_MEM_READ_WRITE, sizes[i], NULL, &e);
    if (e == CL_SUCCESS)
      e = clEnqueueFillBuffer(env->queue, *bufs[i], &zero, es, 0, sizes[i], 0,
                              NULL, NULL);
  }
  /* Kernels built here, not in the first timed run: a narrow GEMM once,
   * and the widest the device will run when none as large ran before. */
  double *done = warmed(k, env), widest = (double)bm * (double)cols * (double)b;
  if (e == CL_SUCCESS && *done == 0)
    e = mlsba__gemm_cl_multiply(k->prec, bm, 1, b, s->a, s->b, 1.0, s->c,
                                &env->queue);
  if (e == CL_SUCCESS && widest > *done && cols > 1)
    e = mlsba__gemm_cl_multiply(k->prec, bm, cols, b, s->a, s->b, 1.0, s->c,
                                &env->queue);
  if (e == CL_SUCCESS)
    e = clFinish(env->queue);
  if (e == CL_SUCCESS && widest > *done)
    *done = widest;
  if (e != CL_SUCCESS)
    kernel_teardown(user, env); /* the library tears down no failed setup */
  return e;
}

/* Any number of columns: a share beyond what fits is streamed. None at
 * all when A_(b) and one column do not fit, or for a double product on a
 * device without doubles. */
static int kernel_max_units(void *user, const mlsba_opencl_env_t *env,
                            int64_t *max) {
  const mlsba__mpi_kernel_t *k = user;
  *max = fitting_columns(k, env) > 0 ? k->bn : 0;
  return 0;
}

/* Writes count columns of C' from column first into the device's C'. */
static cl_int write_c(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                      cl_mem c, int64_t first, int64_t count) {
  size_t es = elem(k), bm = (size_t)k->bm;
  return clEnqueueWriteBuffer(
      env->queue, c, CL_FALSE, 0, bm * (size_t)count * es,
      (const char *)k->c + bm * (size_t)first * es, 0, NULL, NULL);
}

static cl_int read_c(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                     cl_mem c, int64_t first, int64_t count) {
  size_t es = elem(k), bm = (size_t)k->bm;
  return clEnqueueReadBuffer(
      env->queue, c, CL_FALSE, 0, bm * (size_t)count * es,
      (char *)k->c + bm * (size_t)first * es, 0, NULL, NULL);
}

/* A resident share's first move: its columns of C' to the device, which
 * holds them from now on. */
static cl_int take_slice(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                         device_slice_t *s, int64_t first, int64_t count) {
  cl_int e = write_c(k, env, s->c, first, count);
  if (e == CL_SUCCESS) {
    s->held = 1;
    s->first = first;
    s->count = count;
  }
  return e;
}

/* Writes count columns of B_(b) from column first, and the GEMM of them
 * into the device's C' (beta = 1), kb wide (packed: A_(b) leading
 * dimension bm, B_(b) kb in the buffers made for b). */
static cl_int update(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                     const device_slice_t *s, int64_t first, int64_t count) {
  size_t es = elem(k), b = (size_t)k->kb; /* this step's panel width */
  cl_int e = clEnqueueWriteBuffer(
      env->queue, s->b, CL_FALSE, 0, b * (size_t)count * es,
      (const char *)k->bp + b * (size_t)first * es, 0, NULL, NULL);
  if (e == CL_SUCCESS)
    e = mlsba__gemm_cl_multiply(k->prec, (size_t)k->bm, (size_t)count, b, s->a,
                                s->b, 1.0, s->c, &env->queue);
  return e;
}

static cl_int write_a(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                      const device_slice_t *s) {
  return clEnqueueWriteBuffer(env->queue, s->a, CL_FALSE, 0,
                              (size_t)k->bm * (size_t)k->kb * elem(k), k->a, 0,
                              NULL, NULL);
}

/* A share of more columns than fit: chunk by chunk through the device's
 * buffers (the in-order queue keeps one chunk's read before the next
 * one's writes). */
static cl_int streamed(const mlsba__mpi_kernel_t *k, mlsba_opencl_env_t *env,
                       const device_slice_t *s, int64_t first, int64_t count) {
  cl_int e = write_a(k, env, s);
  for (int64_t at = first; e == CL_SUCCESS && at < first + count;) {
    int64_t n = first + count - at < s->cols ? first + count - at : s->cols;
    e = write_c(k, env, s->c, at, n);
    if (e == CL_SUCCESS)
      e = update(k, env, s, at, n);
    if (e == CL_SUCCESS)
      e = read_c(k, env, s->c, at, n);
    at += n;
  }
  return e;
}

static int kernel_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                          int64_t count) {
  const mlsba__mpi_kernel_t *k = user;
  device_slice_t *s = env->state;
  int resident = count <= s->cols;
  int same = s->held && s->first == first && s->count == count;
  /* The node gives every slice back before the columns move (a new
   * distribution, a new shape): another range here is its mistake, and
   * updating it would lose the columns held. */
  if (s->held && !same)
    return CL_INVALID_OPERATION;
  cl_int e = CL_SUCCESS;
  switch (k->run) {
  case MLSBA__MPI_RUN_PLACE:
    return resident && !s->held ? take_slice(k, env, s, first, count)
                                : CL_SUCCESS;
  case MLSBA__MPI_RUN_FLUSH:
    if (s->held && (e = read_c(k, env, s->c, first, count)) == CL_SUCCESS)
      s->held = 0;
    return e;
  default: /* a step, or a balancing run (its C' the device's scratch) */
    if (!resident)
      return streamed(k, env, s, first, count);
    /* Not placed (a PLACE run that failed): the slice comes in now. */
    if (k->run == MLSBA__MPI_RUN_STEP && !s->held &&
        (e = take_slice(k, env, s, first, count)) != CL_SUCCESS)
      return e;
    e = write_a(k, env, s);
    return e == CL_SUCCESS ? update(k, env, s, first, count) : e;
  }
}

static const mlsba_opencl_ops_t kernel_ops = {
    .setup = kernel_setup,
    .max_units = kernel_max_units,
    .enqueue = kernel_enqueue,
    .teardown = kernel_teardown,
};

const struct mlsba_opencl_ops *mlsba__mpi_kernel_opencl_ops(void) {
  return &kernel_ops;
}
