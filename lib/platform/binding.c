/* The cores and accelerators this process may use. Discovery used to
 * take every core of the machine, so two ranks bound to one core each
 * both pinned threads to every core; now the binding the launcher gave
 * the process (taskset, a cgroup, mpirun --bind-to) bounds it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "binding.h"

int mlsba__binding_get(hwloc_topology_t topo, hwloc_bitmap_t set) {
  hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  /* The union of the process's threads' bindings: the library's own
   * pinned threads are joined after every run, so this is what the
   * launcher (or the application) set. */
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 ||
      hwloc_bitmap_iszero(set))
    return hwloc_bitmap_copy(set, allowed) == 0
               ? 0
               : mlsba__fail(MLSBA_ENOMEM, "binding: out of memory");
  hwloc_bitmap_and(set, set, allowed);
  return 0;
}

int mlsba__binding_has_core(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                            int core) {
  hwloc_obj_t obj =
      core >= 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)core)
                : NULL;
  return obj != NULL && hwloc_bitmap_intersects(obj->cpuset, set);
}

void mlsba__binding_cores_text(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                               char *buf, size_t size) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), count = 0;
  size_t at = 0;
  buf[0] = '\0';
  /* Runs of consecutive cores as "a-b". */
  for (int i = 0; i < n; i++) {
    if (!mlsba__binding_has_core(topo, set, i))
      continue;
    int j = i;
    while (j + 1 < n && mlsba__binding_has_core(topo, set, j + 1))
      j++;
    count += j - i + 1;
    int w = j > i
                ? snprintf(buf + at, size - at, "%s%d-%d", at ? "," : "", i, j)
                : snprintf(buf + at, size - at, "%s%d", at ? "," : "", i);
    if (w < 0 || (size_t)w >= size - at)
      break;
    at += (size_t)w;
    i = j;
  }
  if (count == 0) {
    snprintf(buf, size, "no core");
    return;
  }
  char list[256];
  snprintf(list, sizeof list, "%s", buf);
  snprintf(buf, size, "%s %s", count == 1 ? "core" : "cores", list);
}

/* A list of indices such as "0-3,6" into chosen[0..limit): every index
 * named is set. An index at or past limit is reported by the caller, who
 * knows what it means; here it is only refused. */
static int parse_index_list(const char *var, const char *text, size_t limit,
                            unsigned char *chosen, long *beyond) {
  const char *p = text;
  *beyond = -1;
  while (*p) {
    char *end;
    errno = 0;
    long a = strtol(p, &end, 10), b = a;
    if (end == p || a < 0 || errno)
      goto bad;
    p = end;
    if (*p == '-') {
      b = strtol(++p, &end, 10);
      if (end == p || b < a || errno)
        goto bad;
      p = end;
    }
    if (*p == ',' && p[1] != '\0')
      p++;
    else if (*p)
      goto bad;
    for (long i = a; i <= b; i++) {
      if ((size_t)i >= limit) {
        *beyond = i;
        return 0;
      }
      chosen[i] = 1;
    }
  }
  return 0;
bad:
  return mlsba__fail(MLSBA_EINVAL,
                     "%s: '%s' is not a list of indices (such as 0-3,6)", var,
                     text);
}

/* A count from the environment, or -1 when the variable is not set. */
static int env_count(const char *var, long *count) {
  const char *v = getenv(var);
  *count = -1;
  if (v == NULL || *v == '\0')
    return 0;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (end == v || *end || n < 0 || errno)
    return mlsba__fail(MLSBA_EINVAL, "%s: '%s' is not a number of devices", var,
                       v);
  *count = n;
  return 0;
}

/* Keep the first limit of the chosen (limit < 0: all). */
static void keep_first(unsigned char *chosen, size_t n, long limit) {
  long kept = 0;
  for (size_t i = 0; limit >= 0 && i < n; i++)
    if (chosen[i] && kept++ >= limit)
      chosen[i] = 0;
}

/* The bound cores, narrowed by MLSBA_CPUS, into chosen[0..n). */
static int choose_cores(hwloc_topology_t topo, hwloc_const_bitmap_t bound,
                        size_t n, unsigned char *chosen) {
  for (size_t i = 0; i < n; i++)
    chosen[i] = (unsigned char)mlsba__binding_has_core(topo, bound, (int)i);
  const char *list = getenv("MLSBA_CPUS");
  if (list == NULL || *list == '\0')
    return 0;
  unsigned char *named = calloc(n ? n : 1, 1);
  if (named == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "binding: out of memory");
  long beyond;
  int err = parse_index_list("MLSBA_CPUS", list, n, named, &beyond);
  char have[128];
  mlsba__binding_cores_text(topo, bound, have, sizeof have);
  if (!err && beyond >= 0)
    err = mlsba__fail(MLSBA_EINVAL,
                      "MLSBA_CPUS: core %ld does not exist (this machine has "
                      "%zu)",
                      beyond, n);
  for (size_t i = 0; !err && i < n; i++) {
    if (named[i] && !chosen[i])
      err = mlsba__fail(MLSBA_EINVAL,
                        "MLSBA_CPUS: core %zu is outside this process's "
                        "binding (%s: taskset, a cgroup or mpirun --bind-to)",
                        i, have);
  }
  if (!err)
    memcpy(chosen, named, n);
  free(named);
  return err;
}

int mlsba__binding_select_cores(hwloc_topology_t topo, int **cores,
                                size_t *count) {
  size_t n = (size_t)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  hwloc_bitmap_t bound = hwloc_bitmap_alloc();
  unsigned char *chosen = calloc(n ? n : 1, 1);
  int *list = calloc(n ? n : 1, sizeof *list);
  int err = bound && chosen && list
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "binding: out of memory");
  long limit = -1;
  if (!err)
    err = mlsba__binding_get(topo, bound);
  if (!err)
    err = choose_cores(topo, bound, n, chosen);
  if (!err)
    err = env_count("MLSBA_NCPU", &limit);
  size_t k = 0;
  if (!err) {
    keep_first(chosen, n, limit);
    for (size_t i = 0; i < n; i++)
      if (chosen[i])
        list[k++] = (int)i;
  }
  hwloc_bitmap_free(bound);
  free(chosen);
  if (err) {
    free(list);
    return err;
  }
  *cores = list;
  *count = k;
  return 0;
}

int mlsba__binding_no_opencl(void) {
  const char *list = getenv("MLSBA_OPENCL"), *count = getenv("MLSBA_NOPENCL");
  return (list && strcmp(list, "none") == 0) ||
         (count && strcmp(count, "0") == 0);
}

int mlsba__binding_select_opencl(size_t n, int local_rank, int local_size,
                                 unsigned char *chosen) {
  const char *list = getenv("MLSBA_OPENCL");
  memset(chosen, 0, n);
  if (list && *list && strcmp(list, "none") != 0) {
    /* Asked for by index: used even when another rank drives it too. */
    long beyond;
    int err = parse_index_list("MLSBA_OPENCL", list, n, chosen, &beyond);
    if (!err && beyond >= 0)
      err = mlsba__fail(MLSBA_EINVAL,
                        "MLSBA_OPENCL: OpenCL device %ld does not exist "
                        "(this machine has %zu)",
                        beyond, n);
    if (err)
      return err;
  } else if (list == NULL || *list == '\0') {
    if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
      local_rank = 0, local_size = 1;
    for (size_t j = (size_t)local_rank; j < n; j += (size_t)local_size)
      chosen[j] = 1;
  }
  long limit;
  int err = env_count("MLSBA_NOPENCL", &limit);
  if (!err)
    keep_first(chosen, n, limit);
  return err;
}

/* An environment variable as a non-negative int, or -1. */
static int env_int(const char *var) {
  const char *v = getenv(var);
  if (v == NULL || *v == '\0')
    return -1;
  char *end;
  long n = strtol(v, &end, 10);
  return *end || n < 0 || n > 1 << 20 ? -1 : (int)n;
}

void mlsba__binding_local_rank(int *local_rank, int *local_size) {
  static const char *const vars[][2] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    int r = env_int(vars[i][0]), s = env_int(vars[i][1]);
    if (r >= 0 && s > r) {
      *local_rank = r;
      *local_size = s;
      return;
    }
  }
  *local_rank = 0;
  *local_size = 1;
}
