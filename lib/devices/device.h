/* Device backends behind one ops table (pocl's way): each backend folder
 * describes itself in a mlsba__backend_t (backend.h), whose open fills a
 * device with its ops and state.
 *
 * The executor calls, for every run of a load:
 *   max_load(load)      before the run, from the caller's thread; reports
 *                       the largest share (in units) the device can take
 *                       of the load (0 when the load has no code for this
 *                       backend);
 *   start(load, off, n, t0) begins the device's share, units [off, off+n):
 *                       an accelerator enqueues its transfers and kernel
 *                       and returns; a core computes and returns when done;
 *   finish(&seconds)    waits for the share and reports the time from t0
 *                       (the common start) to its completion.
 * No lock is held during the calls; one thread drives a device at a time. */
#ifndef MLSBA_DEVICES_DEVICE_H
#define MLSBA_DEVICES_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/clock.h"
#include "../core/load.h"
#include "mlsba.h"

typedef struct mlsba__device mlsba__device_t;

typedef struct mlsba__device_ops {
  const char *backend; /* "cpu", "opencl", "sim" */
  int (*max_load)(mlsba__device_t *d, const mlsba_load_t *load, int64_t *max);
  /* Optional: readies the device for w (builds programs) before the
   * common start, so that one-time costs stay out of the measured time. */
  int (*prepare)(mlsba__device_t *d, const mlsba_load_t *load);
  int (*start)(mlsba__device_t *d, const mlsba_load_t *load, int64_t off,
               int64_t n, double t0);
  int (*finish)(mlsba__device_t *d, double *seconds);
  void (*destroy)(mlsba__device_t *d);
  /* Writes what identifies the device in the key of its saved models
   * ("cpu core 3", "opencl 0.1 NAME (DRIVER)", "sim"), so that a model
   * saved for another device or driver is not taken. model_name and
   * driver: what the platform says of the device (NULL: unknown). */
  void (*ident)(const mlsba__device_t *d, const char *model_name,
                const char *driver, char *buf, size_t size);
  /* Optional: after a run in which this device (index self among the
   * run's devices) computed load[self] units in time[self], makes the
   * times of the devices it slows while it runs longer (a sim device with
   * contends_with). */
  void (*contend)(const mlsba__device_t *d, size_t self, const int64_t *load,
                  double *time);
  /* Optional: measures the device's host link (an accelerator's bus) by
   * timing transfers of growing sizes; from the caller's thread, with no
   * share in flight. */
  int (*measure_link)(mlsba__device_t *d, mlsba_link_t *link);
} mlsba__device_ops_t;

struct mlsba__device {
  const mlsba__device_ops_t *ops;
  const char *name; /* the platform's name for it (not owned) */
  void *state;      /* the backend's */
  /* It computes on the host's cores (an OpenCL CPU device such as pocl,
   * or a sim device with contends_with): its share slows the core
   * devices, so the balancer checks that it pays
   * (balance/sharing.c). */
  int shares_cores;
  /* Its host link from the platform file (bandwidth 0: none); set by the
   * executor after open. A simulated device adds its transfer to its
   * time; real devices measure theirs. */
  mlsba_link_t link;
};

/* The driver of a core device as discovery reports it ("BLIS 0.9.0 (1
 * thread per core)"). */
void mlsba__cpu_driver(char *buf, size_t size);
int mlsba__opencl_device_create(const char *name, int platform, int device,
                                int64_t mem_limit_mb, mlsba__device_t *d);

/* What an OpenCL device says about itself, for discovery. */
typedef struct mlsba__cl_device_desc {
  int platform, device;
  char name[256], driver[256];
  unsigned compute_units;
  uint64_t global_mem;
} mlsba__cl_device_desc_t;

/* Every OpenCL device of every platform, in platform then device order;
 * *count = 0 and no error when there is no OpenCL platform (or OpenCL is
 * not built). The caller frees *list. */
int mlsba__opencl_enumerate(mlsba__cl_device_desc_t **list, size_t *count);

/* Test-only fault injection: the nth share started on any OpenCL device
 * from now on (1 = the next) fails as if its first OpenCL call had
 * returned code. nth = 0 disarms. */
void mlsba__opencl_inject_fault(unsigned nth, int code);

#endif
