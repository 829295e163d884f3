/* Jobs of MPI ranks as the multi-rank tests start them: under coreutils'
 * timeout, so that a hang fails its test instead of blocking the suite,
 * with what the ranks printed captured (run_tool). */
#ifndef MLSBA_TESTS_RUN_RANKS_H
#define MLSBA_TESTS_RUN_RANKS_H

#include <jansson.h>
#include <stddef.h>

#include "run_tool.h"

/* The words mpi_job_start() writes. */
#define MPI_JOB_START_WORDS 14

/* The start of a job's command line, up to its first -np, in argv:
 * timeout (SIGTERM after limit_s seconds, SIGKILL 5 s later: a hung
 * mpirun ignores SIGTERM), mpirun and the options of every job here
 * (oversubscribed ranks, unbound, over shared memory, yielding when
 * idle). Returns MPI_JOB_START_WORDS; the caller appends "-np N" and a
 * program with its arguments (or several, between ":"), then NULL. */
size_t mpi_job_start(char **argv, const char *timeout, const char *limit_s,
                     const char *mpirun);
/* The same, each rank bound as bind_to says (mpirun --bind-to: "core"),
 * for the tests whose subject is the binding. */
size_t mpi_job_start_bound(char **argv, const char *timeout,
                           const char *limit_s, const char *mpirun,
                           const char *bind_to);

/* The words smpi_job_start() writes. */
#define SMPI_JOB_START_WORDS 15

/* The start of an SMPI job's command line, up to its program, in argv:
 * timeout (as mpi_job_start()), smpirun on np simulated ranks of the
 * platform file and host file given, with the options every SMPI job
 * here takes (the ranks' own computation not timed, no privatization,
 * Open MPI's collectives, SimGrid's warnings only). Returns
 * SMPI_JOB_START_WORDS; the caller appends more --cfg options if it
 * needs them, the program with its arguments, then NULL. */
size_t smpi_job_start(char **argv, const char *timeout, const char *limit_s,
                      const char *smpirun, const char *np, const char *platform,
                      const char *hostfile);

/* args (SMPI options of its own, if any, then a program and its
 * arguments, NULL-terminated) on np simulated ranks, the job as
 * smpi_job_start() starts it. */
void run_smpi_ranks(const char *timeout, const char *limit_s,
                    const char *smpirun, const char *np, const char *platform,
                    const char *hostfile, char *const *args, tool_run_t *r);

/* run_smpi_ranks() of a tool that prints its JSON report (--json -),
 * checked (Check's assertions): exit status 0 and a report that says
 * verified; the report (the caller frees it). */
json_t *run_smpi_verified(const char *timeout, const char *limit_s,
                          const char *smpirun, const char *np,
                          const char *platform, const char *hostfile,
                          char *const *args);

/* args (a program and its arguments, NULL-terminated) on np ranks, the
 * job as mpi_job_start() starts it. */
void run_ranks(const char *timeout, const char *limit_s, const char *mpirun,
               int np, char *const *args, tool_run_t *r);

/* args (a program and its arguments, NULL-terminated) as one rank
 * without mpirun (MPI's singleton start), under timeout as
 * mpi_job_start()'s jobs: for the cases whose subject is one rank's
 * refusal of its own command line, a launch of mpirun fewer each. */
void run_rank_alone(const char *timeout, const char *limit_s, char *const *args,
                    tool_run_t *r);

/* A rank program's job checked (Check's assertions): exit status 0, no
 * WRONG anywhere in what rank 0 printed, `lines` lines, each starting
 * "ok ". */
void check_all_ok(const tool_run_t *r, size_t lines);

/* What every job's ranks need in this process's environment: Open MPI
 * allowed to run as root (CI runs as root), a session folder of this
 * process's own (concurrent suites' mpiruns race for the shared one),
 * and under the sanitizers no
 * leak check in the ranks (added to ASAN_OPTIONS): Open MPI leaves
 * allocations of the plugins it unloads at MPI_Finalize, whose frames
 * LeakSanitizer cannot name, so none can be suppressed; the ranks keep
 * ASan's other checks. */
void mpi_job_environment(void);

#endif
