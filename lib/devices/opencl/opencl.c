/* One OpenCL device through the ICD loader, running any load's OpenCL
 * code (<mlsba/opencl.h>): GEMM through CLBlast, kernels from cl/, the
 * application's own.
 *
 * A share is whatever the load enqueues for its range on the device's
 * in-order queue (transfers in, kernels, transfers out), then a marker.
 * All of it is the device's time (the paper's psi_t). The completion time
 * comes from a callback on the marker, not from the host thread that waits
 * for it, which may be busy computing its own share at that moment.
 *
 * The device keeps one load's state at a time (its built program and what
 * the load's setup made); a different load tears it down and sets up its
 * own. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../device.h"
#include "cl_error.h"
#include "mlsba/opencl.h"

typedef struct {
  int platform, device; /* indices, as the platform names the device */
  cl_context ctx;
  cl_command_queue queue;
  cl_device_id dev;
  cl_ulong global_mem, max_alloc; /* within mem_limit_mb */
  /* The load whose state is set up: its serial and what tears it down. */
  unsigned long bound;
  const mlsba_opencl_ops_t *ops;
  void *user;
  mlsba_opencl_env_t env;
  /* The share in flight. */
  int in_flight;
  cl_event done_ev;
  double t0;
  _Atomic double done; /* set by the completion callback; 0 until then */
  atomic_int status;   /* the event's final status */
} ocl_t;

/* Test-only fault injection (device.h): a countdown over shares started. */
static atomic_uint fault_countdown;
static atomic_int fault_code;

void mlsba__opencl_inject_fault(unsigned nth, int code) {
  atomic_store(&fault_code, code);
  atomic_store(&fault_countdown, nth);
}

static int injected_fault(void) {
  unsigned n = atomic_load(&fault_countdown);
  while (n > 0 && !atomic_compare_exchange_weak(&fault_countdown, &n, n - 1))
    ;
  return n == 1 ? atomic_load(&fault_code) : 0;
}

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
    CASE(CL_INVALID_KERNEL_NAME)
    CASE(CL_INVALID_KERNEL_ARGS)
    CASE(CL_INVALID_WORK_GROUP_SIZE)
    CASE(CL_PLATFORM_NOT_FOUND_KHR)
#undef CASE
  default:
    return e <= -1024 ? "CLBlast error" : "OpenCL error";
  }
}

static pthread_mutex_t clblast_mutex = PTHREAD_MUTEX_INITIALIZER;

void mlsba__clblast_lock(void) { pthread_mutex_lock(&clblast_mutex); }

void mlsba__clblast_unlock(void) { pthread_mutex_unlock(&clblast_mutex); }

int mlsba__cl_fail(const char *dev, const char *call, cl_int e) {
  int code =
      (e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_RESOURCES ||
       e == CL_OUT_OF_HOST_MEMORY || e == CL_INVALID_BUFFER_SIZE)
          ? MLSBA_EDEVMEM
          : MLSBA_EDEVICE;
  return mlsba__fail(code, "%s: %s failed: %s (%d)", dev, call,
                     cl_error_name(e), (int)e);
}

int mlsba__cl_has_fp64(cl_device_id device) {
  cl_device_fp_config fp = 0;
  return clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp,
                         NULL) == CL_SUCCESS &&
         fp != 0;
}

int mlsba_load_set_opencl(mlsba_load_t *w, const mlsba_opencl_ops_t *ops,
                          void *user) {
  if (w == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_load_set_opencl: load is NULL");
  if (ops && ops->enqueue == NULL)
    return mlsba__fail(MLSBA_EINVAL, "load %s: the OpenCL ops have no enqueue",
                       w->name);
  if (ops && ops->source && ops->kernel_name == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "load %s: OpenCL source without a kernel_name", w->name);
  w->cl = ops;
  w->cl_user = user;
  return 0;
}

/* Releases the bound load's state: its own first, then the program. */
static void unbind(ocl_t *o) {
  if (o->bound == 0)
    return;
  if (o->ops->teardown)
    o->ops->teardown(o->user, &o->env);
  if (o->env.kernel)
    clReleaseKernel(o->env.kernel);
  if (o->env.program)
    clReleaseProgram(o->env.program);
  o->env.kernel = NULL;
  o->env.program = NULL;
  o->env.state = NULL;
  o->bound = 0;
}

/* Builds the load's program, with the build log in the message when it
 * does not compile. */
static int build(mlsba__device_t *d, ocl_t *o, const mlsba_load_t *w) {
  const mlsba_opencl_ops_t *ops = w->cl;
  cl_int e;
  const char *src = ops->source;
  o->env.program =
      clCreateProgramWithSource(o->ctx, 1, (const char **)&src, NULL, &e);
  if (e != CL_SUCCESS)
    return mlsba__cl_fail(d->name, "clCreateProgramWithSource", e);
  e = clBuildProgram(o->env.program, 1, &o->dev, ops->build_options, NULL,
                     NULL);
  if (e != CL_SUCCESS) {
    char log[2048] = "";
    clGetProgramBuildInfo(o->env.program, o->dev, CL_PROGRAM_BUILD_LOG,
                          sizeof log - 1, log, NULL);
    for (char *c = log; *c; c++)
      *c = *c == '\n' ? ' ' : *c;
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: load %s: the OpenCL program does not build (%d): "
                       "%s",
                       d->name, w->name, (int)e, log);
  }
  o->env.kernel = clCreateKernel(o->env.program, ops->kernel_name, &e);
  if (e != CL_SUCCESS)
    return mlsba__cl_fail(d->name, "clCreateKernel", e);
  return 0;
}

/* Makes w the device's bound load: program and the load's setup. */
static int ocl_prepare(mlsba__device_t *d, const mlsba_load_t *w) {
  ocl_t *o = d->state;
  if (o->bound == w->serial)
    return 0;
  unbind(o);
  o->ops = w->cl;
  o->user = w->cl_user;
  o->bound = w->serial;
  int err = w->cl->source ? build(d, o, w) : 0;
  if (!err && w->cl->setup) {
    int rc = w->cl->setup(w->cl_user, &o->env);
    if (rc != 0)
      err = mlsba__cl_fail(d->name, "the load's OpenCL setup", rc);
  }
  if (err) {
    o->ops = &(const mlsba_opencl_ops_t){0}; /* no teardown of a failed setup */
    unbind(o);
  }
  return err;
}

static int ocl_max_load(mlsba__device_t *d, const mlsba_load_t *w,
                        int64_t *max) {
  ocl_t *o = d->state;
  *max = 0;
  if (w->cl == NULL)
    return 0;
  if (w->cl->max_units == NULL) {
    *max = w->units;
    return 0;
  }
  int rc = w->cl->max_units(w->cl_user, &o->env, max);
  if (rc != 0)
    return mlsba__cl_fail(d->name, "the load's max_units", rc);
  *max = *max < 0 ? 0 : *max > w->units ? w->units : *max;
  return 0;
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg) {
  (void)ev;
  ocl_t *o = arg;
  atomic_store(&o->status, status);
  atomic_store(&o->done, mlsba__now());
}

/* After a share (done or failed): nothing may still run on the queue when
 * the load releases its buffers. */
static void end_share(ocl_t *o) {
  clFinish(o->queue);
  if (o->in_flight && o->ops->complete)
    o->ops->complete(o->user, &o->env);
  if (o->done_ev)
    clReleaseEvent(o->done_ev);
  o->done_ev = NULL;
  o->in_flight = 0;
}

static int ocl_start(mlsba__device_t *d, const mlsba_load_t *w, int64_t off,
                     int64_t n, double t0) {
  ocl_t *o = d->state;
  o->t0 = t0;
  atomic_store(&o->status, CL_COMPLETE);
  atomic_store(&o->done, 0.0);
  if (n == 0) {
    atomic_store(&o->done, t0);
    return 0;
  }
  int fault = injected_fault();
  if (fault)
    return mlsba__cl_fail(d->name, "injected fault", fault);
  int err = ocl_prepare(d, w); /* done before t0 by the executor */
  if (err)
    return err;
  o->in_flight = 1;
  int rc = w->cl->enqueue(w->cl_user, &o->env, off, n);
  if (rc != 0) {
    end_share(o);
    return mlsba__cl_fail(d->name, "the load's OpenCL enqueue", rc);
  }
  cl_int e = clEnqueueMarkerWithWaitList(o->queue, 0, NULL, &o->done_ev);
  if (e == CL_SUCCESS)
    e = clSetEventCallback(o->done_ev, CL_COMPLETE, on_complete, o);
  if (e == CL_SUCCESS)
    e = clFlush(o->queue);
  if (e != CL_SUCCESS) {
    end_share(o);
    return mlsba__cl_fail(d->name, "clEnqueueMarker", e);
  }
  return 0;
}

static int ocl_finish(mlsba__device_t *d, double *seconds) {
  ocl_t *o = d->state;
  int err = 0;
  if (o->done_ev) {
    cl_int e = clWaitForEvents(1, &o->done_ev);
    /* The callback may run just after the wait returns. */
    while (e == CL_SUCCESS && atomic_load(&o->done) == 0.0)
      sched_yield();
    cl_int status = atomic_load(&o->status);
    if (e != CL_SUCCESS || status < 0)
      err = mlsba__cl_fail(d->name, "the share (clWaitForEvents)",
                           e != CL_SUCCESS ? e : status);
  }
  if (o->in_flight)
    end_share(o);
  double done = atomic_load(&o->done);
  *seconds = done > 0 ? done - o->t0 : 0;
  return err;
}

static void ocl_destroy(mlsba__device_t *d) {
  ocl_t *o = d->state;
  if (o == NULL)
    return;
  if (o->queue) {
    if (o->in_flight)
      end_share(o);
    unbind(o);
    clReleaseCommandQueue(o->queue);
  }
  if (o->ctx)
    clReleaseContext(o->ctx);
  free(o);
}

static void ocl_ident(const mlsba__device_t *d, const char *model_name,
                      const char *driver, char *buf, size_t size) {
  const ocl_t *o = d->state;
  snprintf(buf, size, "opencl %lld.%lld %s (%s)", (long long)o->platform,
           (long long)o->device, model_name ? model_name : "",
           driver ? driver : "");
}

/* The host link as seed 001 measured its PCIe bus (§5.2.3): blocking
 * writes of 64 KiB to 32 MiB (within the device's largest allocation),
 * the fastest of three at each size, fitted by least squares. */
static int ocl_measure_link(mlsba__device_t *d, mlsba_link_t *link) {
  enum { SIZES = 10, REPS = 3 };
  ocl_t *o = d->state;
  size_t most = (size_t)64 << 19; /* 32 MiB */
  if (o->max_alloc > 0 && o->max_alloc < most)
    most = (size_t)o->max_alloc;
  cl_int e = CL_SUCCESS;
  cl_mem buf = clCreateBuffer(o->ctx, CL_MEM_READ_WRITE, most, NULL, &e);
  void *host = e == CL_SUCCESS ? calloc(1, most) : NULL;
  double bytes[SIZES], seconds[SIZES];
  size_t n = 0;
  for (size_t size = (size_t)64 << 10;
       size <= most && n < SIZES && host && e == CL_SUCCESS; size *= 2) {
    double best = INFINITY;
    for (int r = 0; r < REPS && e == CL_SUCCESS; r++) {
      double t0 = mlsba__now();
      e = clEnqueueWriteBuffer(o->queue, buf, CL_TRUE, 0, size, host, 0, NULL,
                               NULL);
      double t = mlsba__now() - t0;
      best = t < best ? t : best;
    }
    bytes[n] = (double)size;
    seconds[n++] = best > 0 ? best : 1e-9;
  }
  if (buf)
    clReleaseMemObject(buf);
  int err = 0;
  if (e != CL_SUCCESS)
    err =
        mlsba__cl_fail(d->name, "measuring its link (clEnqueueWriteBuffer)", e);
  else if (host == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", d->name);
  else
    err = mlsba_link_fit(bytes, seconds, n, link);
  free(host);
  return err;
}

static const mlsba__device_ops_t ocl_ops = {
    .backend = "opencl",
    .max_load = ocl_max_load,
    .prepare = ocl_prepare,
    .start = ocl_start,
    .finish = ocl_finish,
    .destroy = ocl_destroy,
    .ident = ocl_ident,
    .measure_link = ocl_measure_link,
};

int mlsba__opencl_device_create(const char *name, int platform, int device,
                                int64_t mem_limit_mb, mlsba__device_t *d) {
  cl_uint np = 0, nd = 0;
  cl_platform_id plats[64];
  cl_device_id devs[64];
  cl_int e = clGetPlatformIDs(64, plats, &np);
  if (e != CL_SUCCESS && e != CL_PLATFORM_NOT_FOUND_KHR)
    return mlsba__cl_fail(name, "clGetPlatformIDs", e);
  if (platform < 0 || (cl_uint)platform >= np || np > 64)
    return mlsba__fail(MLSBA_EDEVICE,
                       "%s: OpenCL platform %d does not exist (%u found)", name,
                       platform, np);
  e = clGetDeviceIDs(plats[platform], CL_DEVICE_TYPE_ALL, 64, devs, &nd);
  if (e != CL_SUCCESS)
    return mlsba__cl_fail(name, "clGetDeviceIDs", e);
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
  o->platform = platform;
  o->device = device;
  o->dev = devs[device];
  cl_device_type type = 0;
  clGetDeviceInfo(o->dev, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  d->shares_cores = (type & CL_DEVICE_TYPE_CPU) != 0;
  clGetDeviceInfo(o->dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof o->global_mem,
                  &o->global_mem, NULL);
  clGetDeviceInfo(o->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof o->max_alloc,
                  &o->max_alloc, NULL);
  /* A mem_limit_mb larger than the device is no limit: the device's own
   * size stands (and allocations beyond it fail as EDEVMEM at run time). */
  if (mem_limit_mb > 0 && (cl_ulong)mem_limit_mb * 1048576u < o->global_mem)
    o->global_mem = (cl_ulong)mem_limit_mb * 1048576u;
  o->max_alloc = o->max_alloc < o->global_mem ? o->max_alloc : o->global_mem;
  o->ctx = clCreateContext(NULL, 1, &o->dev, NULL, NULL, &e);
  if (e == CL_SUCCESS)
    o->queue = clCreateCommandQueue(o->ctx, o->dev, 0, &e);
  o->env = (mlsba_opencl_env_t){.context = o->ctx,
                                .device = o->dev,
                                .queue = o->queue,
                                .name = name,
                                .global_mem = o->global_mem,
                                .max_alloc = o->max_alloc};
  if (e != CL_SUCCESS) {
    int err = mlsba__cl_fail(
        name, o->ctx ? "clCreateCommandQueue" : "clCreateContext", e);
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
    return mlsba__cl_fail("discovery", "clGetPlatformIDs", e);
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
