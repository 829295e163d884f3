/* What this process may use: the cores its binding reaches (taskset, a
 * cgroup or Slurm's cpuset, mpirun --bind-to), the environment's choice
 * of devices (MLSBA_CPUS, MLSBA_NCPU, MLSBA_OPENCL, MLSBA_NOPENCL), and
 * the local rank that decides which accelerators of a shared host are
 * this process's. Discovery reads them; the executor pins within them. */
#ifndef MLSBA_PLATFORM_BINDING_H
#define MLSBA_PLATFORM_BINDING_H

#include <hwloc.h>
#include <stddef.h>

/* The processing units this process is bound to, within what the
 * topology allows; the whole allowed set where the system cannot say.
 * set is the caller's. */
int mlsba__binding_get(hwloc_topology_t topo, hwloc_bitmap_t set);

/* Whether core (a logical core index) has a processing unit in set. */
int mlsba__binding_has_core(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                            int core);

/* The cores set reaches, for messages: "cores 0-1", "core 2", "no core". */
void mlsba__binding_cores_text(hwloc_topology_t topo, hwloc_const_bitmap_t set,
                               char *buf, size_t size);

/* The cores discovery uses, as logical core indices in increasing order:
 * those the binding reaches, then MLSBA_CPUS (which must name only
 * those) and MLSBA_NCPU (at most that many). *count may be 0. The caller
 * frees *cores. */
int mlsba__binding_select_cores(hwloc_topology_t topo, int **cores,
                                size_t *count);

/* Which of n OpenCL devices (enumeration order) this process drives:
 * MLSBA_OPENCL's list when set, else every local_size-th device from
 * local_rank (ranks that share a host share out its accelerators), then
 * at most MLSBA_NOPENCL of them. chosen[j] is set to 0 or 1. */
int mlsba__binding_select_opencl(size_t n, int local_rank, int local_size,
                                 unsigned char *chosen);

/* Whether MLSBA_NOPENCL=0 or MLSBA_OPENCL=none asks for no OpenCL
 * device, so that discovery need not ask OpenCL at all. */
int mlsba__binding_no_opencl(void);

/* This process's rank among the processes of its host and how many there
 * are, from the launcher's environment (Open MPI's
 * OMPI_COMM_WORLD_LOCAL_RANK and _LOCAL_SIZE, MPICH's MPI_LOCALRANKID
 * and MPI_LOCALNRANKS); 0 of 1 without a launcher. */
void mlsba__binding_local_rank(int *local_rank, int *local_size);

#endif
