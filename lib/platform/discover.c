/* The "auto" platform: every physical core this process is bound to
 * (hwloc) and its OpenCL devices, grouped as the MLSBA paper runs them.
 * The environment narrows both (binding.h), and ranks that share a host
 * share out its accelerators by their local rank.
 *
 * One device per physical core: an SMT sibling shares the core's floating
 * point units, and BLIS on two siblings of one core runs no faster than on
 * one, so siblings are left to the core's pinned thread (it is bound to
 * the whole core). Accelerator i is paired with core i, which drives it;
 * the other cores are groups of their own; accelerators beyond the last
 * core form groups of their own. */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/backend.h"
#include "binding.h"
#include "platform.h"

/* The kind of a core: "cpu", or on a CPU with cores of several kinds
 * (performance and efficiency cores) "cpu kind K", K hwloc's index. */
static char *core_kind(hwloc_topology_t topo, hwloc_obj_t core) {
  char kind[32] = "cpu";
  int k = hwloc_cpukinds_get_nr(topo, 0) > 1
              ? hwloc_cpukinds_get_by_cpuset(topo, core->cpuset, 0)
              : -1;
  if (k >= 0)
    snprintf(kind, sizeof kind, "cpu kind %d", k);
  return strdup(kind);
}

/* The CPU model, from the package hwloc found (empty if it says none). */
static const char *cpu_model(hwloc_topology_t topo) {
  hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
  return model ? model : "";
}

/* The OpenCL devices this process drives, by the sharing rule and the
 * environment, each with its index among all (index[k]); none, without
 * asking OpenCL, when the environment says none. */
static int select_opencl(int local_rank, int local_size,
                         mlsba__cl_device_desc_t **cl, size_t *index,
                         size_t *ncl) {
  *cl = NULL;
  *ncl = 0;
  if (mlsba__binding_no_opencl())
    return 0;
  size_t n = 0;
  int err = mlsba__opencl_enumerate(cl, &n);
  unsigned char *chosen = err || n == 0 ? NULL : malloc(n);
  if (!err && n > 0 && chosen == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "discovery: out of memory");
  if (!err && n > 0)
    err = mlsba__binding_select_opencl(n, local_rank, local_size, chosen);
  size_t k = 0;
  for (size_t j = 0; !err && j < n && k < 256; j++)
    if (chosen[j]) {
      index[k] = j;
      (*cl)[k++] = (*cl)[j];
    }
  free(chosen);
  if (err) {
    free(*cl);
    *cl = NULL;
    return err;
  }
  *ncl = k;
  return 0;
}

int mlsba_platform_discover(mlsba_platform_t **platform) {
  int local_rank, local_size;
  mlsba__binding_local_rank(&local_rank, &local_size);
  return mlsba__platform_discover_local(local_rank, local_size, platform);
}

/* Discovery, with this process's share of the OpenCL devices or with
 * none (without asking OpenCL). */
static int discover(int local_rank, int local_size, int opencl,
                    mlsba_platform_t **platform) {
  if (platform == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_platform_discover: NULL argument");
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0)
    return mlsba__fail(MLSBA_EDEVICE, "hwloc_topology_init failed");
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return mlsba__fail(MLSBA_EDEVICE, "hwloc_topology_load failed");
  }
  int *cores = NULL;
  size_t nc = 0;
  mlsba__cl_device_desc_t *cl = NULL;
  size_t ncl = 0;
  int err = mlsba__binding_select_cores(topo, &cores, &nc);
  /* Indices of the OpenCL devices this process takes; more than a
   * machine holds is out of reach. */
  size_t cl_index[256];
  if (!err && opencl)
    err = select_opencl(local_rank, local_size, &cl, cl_index, &ncl);
  if (!err && nc + ncl == 0)
    err = mlsba__fail(MLSBA_EDEVICE,
                      "discovery: no device left (no core in this "
                      "process's binding, or MLSBA_CPUS, MLSBA_NCPU, "
                      "MLSBA_OPENCL and MLSBA_NOPENCL leave none)");
  if (err) {
    hwloc_topology_destroy(topo);
    free(cores);
    free(cl);
    return err;
  }
  size_t p = nc + ncl;
  size_t paired = ncl < nc ? ncl : nc, q = p - paired;
  mlsba_platform_t *pl = NULL;
  if ((err = mlsba__platform_alloc("auto", p, q, &pl)) != 0) {
    hwloc_topology_destroy(topo);
    free(cores);
    free(cl);
    return err;
  }
  pl->ndev = p;
  pl->ngroups = q;
  char driver[192];
  mlsba__cpu_driver(driver, sizeof driver);
  char name[32];
  for (size_t i = 0; i < nc; i++) {
    mlsba__platform_device_t *d = &pl->dev[i];
    hwloc_obj_t core =
        hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)cores[i]);
    /* Named by the machine's core index, so that a rank bound to core 1
     * shows core1, the core taskset and --report-bindings name. */
    snprintf(name, sizeof name, "core%d", cores[i]);
    d->name = strdup(name);
    d->backend = &mlsba__cpu_backend;
    d->config = mlsba__cpu_config((int64_t)cores[i]);
    d->model_name = strdup(cpu_model(topo));
    d->driver = strdup(driver);
    d->compute_units = (unsigned)hwloc_bitmap_weight(core->cpuset);
    d->kind = core_kind(topo, core);
    if (!d->name || !d->config || !d->model_name || !d->driver || !d->kind)
      err = MLSBA_ENOMEM;
  }
  for (size_t j = 0; j < ncl; j++) {
    mlsba__platform_device_t *d = &pl->dev[nc + j];
    /* Named by its index among the host's OpenCL devices, as every rank
     * of the host sees it. */
    snprintf(name, sizeof name, "ocl%zu", cl_index[j]);
    d->name = strdup(name);
    d->backend = &mlsba__opencl_backend;
    d->config = mlsba__opencl_config(cl[j].platform, cl[j].device);
    d->model_name = strdup(cl[j].name);
    d->driver = strdup(cl[j].driver);
    d->compute_units = cl[j].compute_units;
    d->memory_bytes = cl[j].global_mem;
    /* Two boards of one model under one driver are one kind. */
    char kind[600];
    snprintf(kind, sizeof kind, "opencl %s (%s)", cl[j].name, cl[j].driver);
    d->kind = strdup(kind);
    if (!d->name || !d->config || !d->model_name || !d->driver || !d->kind)
      err = MLSBA_ENOMEM;
  }
  /* Groups in core order: core i with accelerator i, then lone cores, then
   * lone accelerators. */
  size_t g = 0, at = 0;
  for (size_t i = 0; i < nc; i++, g++) {
    pl->group_start[g] = at;
    pl->group_dev[at++] = i;
    if (i < paired)
      pl->group_dev[at++] = nc + i;
  }
  for (size_t j = paired; j < ncl; j++, g++) {
    pl->group_start[g] = at;
    pl->group_dev[at++] = nc + j;
  }
  pl->group_start[q] = at;
  hwloc_topology_destroy(topo);
  free(cores);
  free(cl);
  if (err) {
    mlsba_platform_destroy(pl);
    return mlsba__fail(MLSBA_ENOMEM, "discovery: out of memory");
  }
  *platform = pl;
  return 0;
}

int mlsba__platform_discover_local(int local_rank, int local_size,
                                   mlsba_platform_t **platform) {
  return discover(local_rank, local_size, 1, platform);
}

int mlsba__platform_discover_cores(mlsba_platform_t **platform) {
  return discover(0, 1, 0, platform);
}
