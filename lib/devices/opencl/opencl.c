/* One OpenCL device through the ICD loader; GEMM through CLBlast.
 *
 * A share of the product is: write A, write the slice of B, GEMM, read the
 * slice of C back, in one in-order queue. All of it is the device's time
 * (the paper's psi_t). The completion time comes from a callback on the
 * read-back event, not from the host thread that waits for it, which may
 * be busy computing its own share at that moment. Buffers are sized to the
 * slice of each run and released after it. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast_c.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../runtime/gemm.h"
#include "../device.h"

typedef struct {
  cl_context ctx;
  cl_command_queue queue;
  cl_device_id dev;
  cl_ulong global_mem, max_alloc;
  int64_t mem_limit_mb; /* -1: none */
  int fp64;
  /* The share in flight. */
  cl_mem a, b, c;
  cl_event done_ev;
  double t0;
  _Atomic double done; /* set by the completion callback; 0 until then */
  atomic_int status;   /* the event's final status */
} ocl_t;

static const char *cl_error_name(cl_int e) {
  switch (e) {
#define CASE(x)                                                                \
  case x:                                                                      \
    return #x;
    CASE(CL_DEVICE_NOT_FOUND)
    CASE(CL_DEVICE_NOT_AVAILABLE)
    CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CASE(CL_OUT_OF_RESOURCES)
    CASE(CL_OUT_OF_HOST_MEMORY)
    CASE(CL_BUILD_PROGRAM_FAILURE)
    CASE(CL_INVALID_VALUE)
    CASE(CL_INVALID_PLATFORM)
    CASE(CL_INVALID_DEVICE)
    CASE(CL_INVALID_CONTEXT)
    CASE(CL_INVALID_COMMAND_QUEUE)
    CASE(CL_INVALID_MEM_OBJECT)
    CASE(CL_INVALID_BUFFER_SIZE)
    CASE(CL_INVALID_EVENT)
    CASE(CL_INVALID_OPERATION)
    CASE(CL_INVALID_KERNEL)
    CASE(CL_INVALID_WORK_GROUP_SIZE)
    CASE(CL_PLATFORM_NOT_FOUND_KHR)
#undef CASE
  default:
    return e <= -1024 ? "CLBlast error" : "OpenCL error";
  }
}

/* Out-of-memory conditions become MLSBA_EDEVMEM, the rest MLSBA_EDEVICE;
 * the message names the device, the call and the error. */
static int cl_fail(const char *dev, const char *call, cl_int e) {
  int code =
      (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
       e == CL_OUT_OF_HOST_MEMORY || e == CL_INVALID_BUFFER_SIZE)
          ? MLSBA_EDEVMEM
          : MLSBA_EDEVICE;
  return mlsba__fail(code, "%s: %s failed: %s (%d)", dev, call,
                     cl_error_name(e), (int)e);
}

static void release_share(ocl_t *o) {
  if (o->done_ev)
    clReleaseEvent(o->done_ev);
  cl_mem *bufs[3] = {&o->a, &o->b, &o->c};
  for (int i = 0; i < 3; i++)
    if (*bufs[i])
      clReleaseMemObject(*bufs[i]);
  o->done_ev = NULL;
  o->a = o->b = o->c = NULL;
}

static int ocl_max_load(mlsba__device_t *d, const mlsba_gemm_t *g,
                        int64_t *max) {
  ocl_t *o = d->state;
  double s = (double)mlsba__gemm_elem(g);
  double mem = (double)o->global_mem, alloc = (double)o->max_alloc;
  if (o->mem_limit_mb > 0 && (double)o->mem_limit_mb * 1048576.0 < mem)
    mem = (double)o->mem_limit_mb * 1048576.0;
  double a = (double)g->m * (double)g->k * s;
  double per_column = ((double)g->m + (double)g->k) * s;
  if ((g->precision == MLSBA_PRECISION_DOUBLE && !o->fp64) || a > alloc ||
      a + per_column > mem) {
    *max = 0; /* A alone does not fit: the others take the whole load */
    return 0;
  }
  double by_mem = (mem - a) / per_column;
  double by_b = alloc / ((double)g->k * s), by_c = alloc / ((double)g->m * s);
  double x = by_mem < by_b ? by_mem : by_b;
  x = x < by_c ? x : by_c;
  *max = x >= (double)g->n ? g->n : (int64_t)x;
  return 0;
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg) {
  (void)ev;
  ocl_t *o = arg;
  atomic_store(&o->status, status);
  atomic_store(&o->done, mlsba__now());
}

static int ocl_start(mlsba__device_t *d, const mlsba_gemm_t *g, int64_t off,
                     int64_t n, double t0) {
  ocl_t *o = d->state;
  o->t0 = t0;
  atomic_store(&o->status, CL_COMPLETE);
  atomic_store(&o->done, 0.0);
  if (n == 0) {
    atomic_store(&o->done, t0);
    return 0;
  }
  size_t s = mlsba__gemm_elem(g), m = (size_t)g->m, k = (size_t)g->k;
  size_t cols = (size_t)n;
  cl_int e;
  o->a = clCreateBuffer(o->ctx, CL_MEM_READ_ONLY, m * k * s, NULL, &e);
  if (e != CL_SUCCESS)
    return release_share(o), cl_fail(d->name, "clCreateBuffer(A)", e);
  o->b = clCreateBuffer(o->ctx, CL_MEM_READ_ONLY, k * cols * s, NULL, &e);
  if (e != CL_SUCCESS)
    return release_share(o), cl_fail(d->name, "clCreateBuffer(B)", e);
  o->c = clCreateBuffer(o->ctx, CL_MEM_WRITE_ONLY, m * cols * s, NULL, &e);
  if (e != CL_SUCCESS)
    return release_share(o), cl_fail(d->name, "clCreateBuffer(C)", e);
  e = clEnqueueWriteBuffer(o->queue, o->a, CL_FALSE, 0, m * k * s, g->a, 0,
                           NULL, NULL);
  if (e == CL_SUCCESS)
    e = clEnqueueWriteBuffer(o->queue, o->b, CL_FALSE, 0, k * cols * s,
                             mlsba__gemm_b_slice(g, off), 0, NULL, NULL);
  if (e != CL_SUCCESS)
    return release_share(o), cl_fail(d->name, "clEnqueueWriteBuffer", e);
  CLBlastStatusCode st;
  if (g->precision == MLSBA_PRECISION_DOUBLE)
    st = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                      CLBlastTransposeNo, m, cols, k, 1.0, o->a, 0, m, o->b, 0,
                      k, 0.0, o->c, 0, m, &o->queue, NULL);
  else
    st = CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                      CLBlastTransposeNo, m, cols, k, 1.0f, o->a, 0, m, o->b, 0,
                      k, 0.0f, o->c, 0, m, &o->queue, NULL);
  if (st != CLBlastSuccess)
    return release_share(o), cl_fail(d->name, "CLBlastXgemm", (cl_int)st);
  e = clEnqueueReadBuffer(o->queue, o->c, CL_FALSE, 0, m * cols * s,
                          mlsba__gemm_c_slice(g, off), 0, NULL, &o->done_ev);
  if (e == CL_SUCCESS)
    e = clSetEventCallback(o->done_ev, CL_COMPLETE, on_complete, o);
  if (e == CL_SUCCESS)
    e = clFlush(o->queue);
  if (e != CL_SUCCESS) {
    clFinish(o->queue); /* nothing may still write into the buffers */
    release_share(o);
    return cl_fail(d->name, "clEnqueueReadBuffer", e);
  }
  return 0;
}

static int ocl_finish(mlsba__device_t *d, double *seconds) {
  ocl_t *o = d->state;
  int err = 0;
  if (o->done_ev) {
    cl_int e = clWaitForEvents(1, &o->done_ev);
    /* The callback may run just after the wait returns. */
    while (atomic_load(&o->done) == 0.0)
      sched_yield();
    cl_int status = atomic_load(&o->status);
    if (e != CL_SUCCESS || status < 0)
      err = cl_fail(d->name, "GEMM share (clWaitForEvents)",
                    e != CL_SUCCESS ? e : status);
    clFinish(o->queue);
    release_share(o);
  }
  *seconds = atomic_load(&o->done) - o->t0;
  return err;
}

static void ocl_destroy(mlsba__device_t *d) {
  ocl_t *o = d->state;
  if (o == NULL)
    return;
  if (o->queue) {
    clFinish(o->queue);
    release_share(o);
    clReleaseCommandQueue(o->queue);
  }
  if (o->ctx)
    clReleaseContext(o->ctx);
  free(o);
}

static const mlsba__device_ops_t ocl_ops = {
    .kind = "opencl",
    .max_load = ocl_max_load,
    .start = ocl_start,
    .finish = ocl_finish,
    .destroy = ocl_destroy,
};

int mlsba__opencl_device_create(const char *name, int platform, int device,
                                int64_t mem_limit_mb, mlsba__device_t *d) {
  cl_uint np = 0, nd = 0;
  cl_platform_id plats[64];
  cl_device_id devs[64];
  cl_int e = clGetPlatformIDs(64, plats, &np);
  if (e != CL_SUCCESS && e != CL_PLATFORM_NOT_FOUND_KHR)
    return cl_fail(name, "clGetPlatformIDs", e);
  if (platform < 0 || (cl_uint)platform >= np || np > 64)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: OpenCL platform %d does not exist (%u found)", name,
                       platform, np);
  e = clGetDeviceIDs(plats[platform], CL_DEVICE_TYPE_ALL, 64, devs, &nd);
  if (e != CL_SUCCESS)
    return cl_fail(name, "clGetDeviceIDs", e);
  if (device < 0 || (cl_uint)device >= nd || nd > 64)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: OpenCL platform %d has no device %d (%u found)",
                       name, platform, device, nd);
  ocl_t *o = calloc(1, sizeof *o);
  if (o == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", name);
  d->ops = &ocl_ops;
  d->name = name;
  d->state = o;
  o->dev = devs[device];
  o->mem_limit_mb = mem_limit_mb;
  cl_device_fp_config fp = 0;
  clGetDeviceInfo(o->dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof o->global_mem,
                  &o->global_mem, NULL);
  clGetDeviceInfo(o->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof o->max_alloc,
                  &o->max_alloc, NULL);
  clGetDeviceInfo(o->dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
  o->fp64 = fp != 0;
  o->ctx = clCreateContext(NULL, 1, &o->dev, NULL, NULL, &e);
  if (e == CL_SUCCESS)
    o->queue = clCreateCommandQueue(o->ctx, o->dev, 0, &e);
  if (e != CL_SUCCESS) {
    int err =
        cl_fail(name, o->ctx ? "clCreateCommandQueue" : "clCreateContext", e);
    ocl_destroy(d);
    d->state = NULL;
    return err;
  }
  return 0;
}

int mlsba__opencl_enumerate(mlsba__cl_device_desc_t **list, size_t *count) {
  cl_uint np = 0;
  cl_platform_id plats[64];
  *list = NULL;
  *count = 0;
  cl_int e = clGetPlatformIDs(64, plats, &np);
  if (e == CL_PLATFORM_NOT_FOUND_KHR || np == 0)
    return 0; /* no OpenCL platform: a machine without accelerators */
  if (e != CL_SUCCESS)
    return cl_fail("discovery", "clGetPlatformIDs", e);
  size_t room = 0;
  for (cl_uint p = 0; p < np && p < 64; p++) {
    cl_device_id devs[64];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) !=
        CL_SUCCESS)
      continue; /* a platform without devices */
    for (cl_uint k = 0; k < nd && k < 64; k++) {
      if (*count == room) {
        room = room ? 2 * room : 8;
        mlsba__cl_device_desc_t *grown = realloc(*list, room * sizeof **list);
        if (grown == NULL) {
          free(*list);
          *list = NULL;
          *count = 0;
          return mlsba__fail(MLSBA_ENOMEM, "discovery: out of memory");
        }
        *list = grown;
      }
      mlsba__cl_device_desc_t *d = &(*list)[(*count)++];
      memset(d, 0, sizeof *d);
      d->platform = (int)p;
      d->device = (int)k;
      cl_uint cu = 0;
      cl_ulong mem = 0;
      char pname[128] = "", dver[112] = "";
      clGetDeviceInfo(devs[k], CL_DEVICE_NAME, sizeof d->name - 1, d->name,
                      NULL);
      clGetDeviceInfo(devs[k], CL_DRIVER_VERSION, sizeof dver - 1, dver, NULL);
      clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname,
                        NULL);
      snprintf(d->driver, sizeof d->driver, "%s %s", pname, dver);
      clGetDeviceInfo(devs[k], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu,
                      NULL);
      clGetDeviceInfo(devs[k], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem,
                      NULL);
      d->compute_units = cu;
      d->global_mem = mem;
    }
  }
  return 0;
}
