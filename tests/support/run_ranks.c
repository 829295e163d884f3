#include "run_ranks.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t mpi_job_start(char **argv, const char *timeout, const char *limit_s,
                     const char *mpirun) {
  return mpi_job_start_bound(argv, timeout, limit_s, mpirun, "none");
}

size_t mpi_job_start_bound(char **argv, const char *timeout,
                           const char *limit_s, const char *mpirun,
                           const char *bind_to) {
  const char *words[MPI_JOB_START_WORDS] = {timeout,
                                            "-k",
                                            "5",
                                            limit_s,
                                            mpirun,
                                            "--oversubscribe",
                                            "--bind-to",
                                            bind_to,
                                            "--mca",
                                            "btl",
                                            "self,vader",
                                            "--mca",
                                            "mpi_yield_when_idle",
                                            "1"};
  for (size_t i = 0; i < MPI_JOB_START_WORDS; i++)
    argv[i] = (char *)words[i];
  return MPI_JOB_START_WORDS;
}

size_t smpi_job_start(char **argv, const char *timeout, const char *limit_s,
                      const char *smpirun, const char *np, const char *platform,
                      const char *hostfile) {
  const char *words[SMPI_JOB_START_WORDS] = {
      timeout,
      "-k",
      "5",
      limit_s,
      smpirun,
      "-np",
      np,
      "-platform",
      platform,
      "-hostfile",
      hostfile,
      "--cfg=smpi/simulate-computation:no",
      "--cfg=smpi/privatization:no",
      "--cfg=smpi/coll-selector:ompi",
      "--log=root.thres:warning"};
  for (size_t i = 0; i < SMPI_JOB_START_WORDS; i++)
    argv[i] = (char *)words[i];
  return SMPI_JOB_START_WORDS;
}

void run_ranks(const char *timeout, const char *limit_s, const char *mpirun,
               int np, char *const *args, tool_run_t *r) {
  enum { max_words = 64 };
  char npbuf[16];
  snprintf(npbuf, sizeof npbuf, "%d", np);
  char *argv[max_words];
  size_t n = mpi_job_start(argv, timeout, limit_s, mpirun);
  argv[n++] = "-np";
  argv[n++] = npbuf;
  for (; *args && n + 1 < max_words; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  run_tool(argv, r);
}

void run_smpi_ranks(const char *timeout, const char *limit_s,
                    const char *smpirun, const char *np, const char *platform,
                    const char *hostfile, char *const *args, tool_run_t *r) {
  enum { max_words = 64 };
  char *argv[max_words];
  size_t n =
      smpi_job_start(argv, timeout, limit_s, smpirun, np, platform, hostfile);
  for (; *args && n + 1 < max_words; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  run_tool(argv, r);
}

json_t *run_smpi_verified(const char *timeout, const char *limit_s,
                          const char *smpirun, const char *np,
                          const char *platform, const char *hostfile,
                          char *const *args) {
  tool_run_t r;
  run_smpi_ranks(timeout, limit_s, smpirun, np, platform, hostfile, args, &r);
  ck_assert_msg(r.exited && r.status == 0, "status %d: %s", r.status, r.err);
  json_error_t e;
  json_t *j = json_loads(r.out, 0, &e);
  ck_assert_msg(j != NULL, "not JSON: %s", r.out);
  ck_assert(json_is_true(json_object_get(j, "verified")));
  tool_run_free(&r);
  return j;
}

void run_rank_alone(const char *timeout, const char *limit_s, char *const *args,
                    tool_run_t *r) {
  enum { max_words = 64 };
  char *argv[max_words];
  size_t n = 0;
  argv[n++] = (char *)timeout;
  argv[n++] = "-k";
  argv[n++] = "5";
  argv[n++] = (char *)limit_s;
  for (; *args && n + 1 < max_words; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  run_tool(argv, r);
}

/* The session folder this process made for its jobs, removed as it
 * exits (Open MPI empties it as each job ends). */
static char session_base[64];
static pid_t session_owner;

static void remove_session_base(void) {
  if (session_owner == getpid())
    (void)rmdir(session_base);
}

/* Open MPI 4 makes its session folder (/tmp/ompi.HOST.UID) racily: two
 * mpiruns starting at once, as ctest -j starts the suites, can see
 * mkdir fail with "File exists" and abort in orte_init (open-mpi/ompi
 * issue 8510). Each suite's process gives its jobs a base of their own. */
static void own_session_base(void) {
  if (getenv("OMPI_MCA_orte_tmpdir_base") != NULL)
    return; /* an earlier call, or the caller's choice */
  snprintf(session_base, sizeof session_base, "/tmp/mlsba-ompi-%ld",
           (long)getpid());
  if (mkdir(session_base, 0700) != 0)
    return; /* Open MPI's default then */
  session_owner = getpid();
  atexit(remove_session_base);
  setenv("OMPI_MCA_orte_tmpdir_base", session_base, 1);
}

void mpi_job_environment(void) {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  own_session_base();
  const char *asan = getenv("ASAN_OPTIONS");
  if (asan != NULL && strstr(asan, "detect_leaks=0") != NULL)
    return; /* set by an earlier call */
  char opts[512];
  snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "",
           asan && *asan ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
}

void check_all_ok(const tool_run_t *r, size_t lines) {
  ck_assert_msg(r->exited && r->status == 0, "status %d: %s%s", r->status,
                r->out, r->err);
  ck_assert_msg(strstr(r->out, "WRONG") == NULL, "%s", r->out);
  ck_assert_msg(count_lines(r->out) == lines, "%zu lines, not %zu: %s",
                count_lines(r->out), lines, r->out);
  for (const char *l = r->out; l && *l;) {
    ck_assert_msg(strncmp(l, "ok ", 3) == 0, "%s", r->out);
    const char *nl = strchr(l, '\n');
    if (nl == NULL)
      break;
    l = nl + 1;
  }
}
