/* Random jobs of the MPI divider (<mlsba/mpi.h>: balance once, run every
 * time step) with drift injected: 1 to 4 simulated ranks under mpirun,
 * each of 1 to 3 devices of random profiles, some of whose devices turn
 * slower or faster from a random share (slow_at, slow_factor 1/4 to 8),
 * for good or until a later one (slow_until), with or without timing
 * noise; tests/divide_ranks balances N units and runs 10 to 40 steps.
 *
 *   fuzz_divider [--cases K | --seconds S] [--seed X] [--max-ranks Q]
 *
 * Every job must end, within its timeout, with every step reported:
 * counts of at least one unit summing to N; the drift threshold; a step
 * that did not re-balance ran once and took its run's (virtual) time; one
 * that did ran at least once, and took at least its last run's time. And
 * where nothing but the drift stands in the way (every rank one device of
 * constant speed, no noise, every share at least 100 units), every
 * change of speed that shows (a step past the drift threshold after a
 * balanced one) is followed, within three re-balances and before the next
 * change, by steps balanced within eps. Prints a tally, and every failing
 * job's command line and platforms; exits 1 if any failed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "support/random_models.h"
#include "support/run_ranks.h"

/* The seed's sequence (--seed): splitmix64 of tests/support, so that a
 * seed names the same jobs as before. */
static rng_t rng;

static int pick(int lo, int hi) { /* in [lo, hi] */
  return (int)rng_range(&rng, lo, hi);
}

static double uniform(double lo, double hi) {
  return lo + (hi - lo) * rng_uniform(&rng);
}

typedef struct {
  int np, steps;
  long long n;
  int clean; /* one constant device per rank, no noise: recovery checked */
  double slowest, fastest; /* of the constant speeds, drifts included */
} job_t;

typedef struct {
  int jobs, steps, rebalances, changes, recoveries, failed;
  int by_ranks[5];
} tally_t;

/* A device: a constant speed (clean jobs) or a rising one, perhaps noisy,
 * perhaps with a slowdown (or speed-up) from a random share, for good or
 * until a later one. */
static void write_device(FILE *f, int r, int d, int last, job_t *J) {
  double peak = uniform(50, 1000);
  fprintf(f, "    {\"name\": \"dev%d\", \"type\": \"sim\", \"speed\": ", d);
  if (J->clean)
    fprintf(f, "[[1, %.3f]]", peak);
  else
    fprintf(f, "[[1, %.3f], [%.3f, %.3f], [100000, %.3f]]",
            peak * uniform(0.1, 0.9), uniform(2, 64), peak,
            peak * uniform(0.7, 1));
  double factor = 1;
  if (pick(0, 2) == 0) {
    static const double factors[] = {0.25, 0.5, 2, 4, 8};
    factor = factors[pick(0, 4)];
    int at = pick(2, 30);
    fprintf(f, ", \"slow_at\": %d, \"slow_factor\": %g", at, factor);
    if (pick(0, 1))
      fprintf(f, ", \"slow_until\": %d", at + pick(1, 30));
  }
  if (!J->clean && pick(0, 1))
    fprintf(f, ", \"noise\": %.3f, \"seed\": %d", uniform(0.005, 0.05),
            10 * r + d + 1);
  fprintf(f, "}%s\n", last ? "" : ",");
  double lo = peak / (factor > 1 ? factor : 1),
         hi = peak / (factor < 1 ? factor : 1);
  J->slowest = lo < J->slowest ? lo : J->slowest;
  J->fastest = hi > J->fastest ? hi : J->fastest;
}

static void write_platforms(const char *dir, job_t *J) {
  J->slowest = INFINITY;
  J->fastest = 0;
  for (int r = 0; r < J->np; r++) {
    char path[512];
    snprintf(path, sizeof path, "%s/p%d.json", dir, r);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
      perror(path);
      exit(2);
    }
    int p = J->clean ? 1 : pick(1, 3);
    fprintf(f, "{\n  \"name\": \"fuzz-divider-%d\",\n  \"devices\": [\n", r);
    for (int d = 0; d < p; d++)
      write_device(f, r, d, d == p - 1, J);
    fprintf(f, "  ]\n}\n");
    fclose(f);
  }
}

static void run_job(const job_t *J, const char *dir, tool_run_t *r, char *line,
                    size_t cap) {
  char np[16], n[32], steps[16], plat[600];
  snprintf(np, sizeof np, "%d", J->np);
  snprintf(n, sizeof n, "%lld", J->n);
  snprintf(steps, sizeof steps, "%d", J->steps);
  snprintf(plat, sizeof plat, "%s/p%%r.json", dir);
  char *argv[MPI_JOB_START_WORDS + 8];
  size_t k = mpi_job_start(argv, MLSBA_TIMEOUT, "120", MLSBA_MPIRUN);
  char *const job[] = {"-np", np,  MLSBA_DIVIDE_RANKS_BIN, plat, n, "steps",
                       steps, NULL};
  for (size_t i = 0; i < sizeof job / sizeof *job; i++)
    argv[k++] = job[i];
  size_t len = 0;
  for (int i = 0; argv[i] && len < cap; i++)
    len += (size_t)snprintf(line + len, cap - len, "%s'%s'", i ? " " : "",
                            argv[i]);
  run_tool(argv, r);
}

/* ---- the checker ------------------------------------------------------ */

static char why[512];

#define FAIL(...)                                                              \
  do {                                                                         \
    snprintf(why, sizeof why, __VA_ARGS__);                                    \
    return 0;                                                                  \
  } while (0)

typedef struct {
  double imbalance, makespan, wall, drift;
  unsigned runs;
  int rebalanced;
  long long share[4];
} step_t;

/* One line "step S split C0/C1/.. imbalance I makespan M wall W runs R
 * rebalanced B drift D", checked for what every step must say. */
static int parse_step(const char *p, const job_t *J, int k, step_t *t) {
  long s;
  int at = 0;
  if (sscanf(p, "step %ld split %n", &s, &at) != 1 || !at || s != k + 1)
    FAIL("step %d: no line", k + 1);
  const char *c = p + at;
  long long sum = 0;
  for (int i = 0; i < J->np; i++) {
    char *end;
    t->share[i] = strtoll(c, &end, 10);
    if (end == c || t->share[i] < 1)
      FAIL("step %d: rank %d's count", k + 1, i);
    sum += t->share[i];
    c = *end == '/' ? end + 1 : end;
  }
  if (sum != J->n)
    FAIL("step %d: counts sum to %lld, not %lld", k + 1, sum, J->n);
  if (sscanf(c,
             " imbalance %lf makespan %lf wall %lf runs %u rebalanced %d "
             "drift %lf",
             &t->imbalance, &t->makespan, &t->wall, &t->runs, &t->rebalanced,
             &t->drift) != 6)
    FAIL("step %d: unreadable", k + 1);
  if (t->drift != 0.1)
    FAIL("step %d: drift %g, not the default 0.1", k + 1, t->drift);
  if (!(t->makespan > 0) || !(t->imbalance >= 0 && t->imbalance < 1))
    FAIL("step %d: makespan %g, imbalance %g", k + 1, t->makespan,
         t->imbalance);
  if (!t->rebalanced &&
      (t->runs != 1 || fabs(t->wall - t->makespan) > 1e-6 * t->makespan))
    FAIL("step %d: %u runs, wall %g for a run of %g", k + 1, t->runs, t->wall,
         t->makespan);
  if (t->rebalanced && (t->runs < 1 || t->wall < t->makespan * (1 - 1e-9)))
    FAIL("step %d: re-balanced in %u runs, wall %g, last run %g", k + 1,
         t->runs, t->wall, t->makespan);
  return 1;
}

/* Every change that shows is followed, within three re-balances and
 * before the next one, by steps balanced within eps (clean jobs). */
static int check_recovery(const step_t *s, int n, tally_t *T) {
  int at[64], c = 0;
  for (int k = 1; k < n && c < 64; k++)
    if (!s[k].rebalanced && s[k].imbalance > 0.1 && s[k - 1].imbalance <= 0.05)
      at[c++] = k;
  T->changes += c;
  for (int i = 0; i < c; i++) {
    int until = i + 1 < c ? at[i + 1] : n, k = at[i];
    unsigned rebalances = 0;
    for (; k < until && (s[k].rebalanced || s[k].imbalance > 0.05); k++)
      rebalances += (unsigned)s[k].rebalanced;
    if (k == until && until - at[i] < 8)
      continue; /* the next change, or the end, came too soon to tell */
    if (k == until || rebalances > 3)
      FAIL("the change at step %d: not balanced again (%u re-balances by "
           "step %d)",
           at[i] + 1, rebalances, k + 1);
    T->recoveries++;
  }
  return 1;
}

static int check_job(const job_t *J, const tool_run_t *r, tally_t *T) {
  if (!r->exited || r->status == 124 || r->status == 137)
    FAIL("hung or killed (status %d)", r->status);
  if (r->status != 0)
    FAIL("exit status %d: %.200s", r->status, r->out);
  step_t s[64];
  const char *p = r->out;
  for (int k = 0; k < J->steps; k++) {
    p = strstr(p, "step ");
    if (p == NULL)
      FAIL("%d steps reported of %d", k, J->steps);
    if (!parse_step(p, J, k, &s[k]))
      return 0;
    T->rebalances += s[k].rebalanced;
    p++;
  }
  T->steps += J->steps;
  /* Clean jobs only, and only where each share is large enough that a
   * unit is well within eps of a rank's time. */
  if (J->clean && (double)J->n >= 100.0 * J->np * J->fastest / J->slowest)
    return check_recovery(s, J->steps, T);
  return 1;
}

int main(int argc, char **argv) {
  long cases = -1, seconds = 60, max_ranks = 4;
  uint64_t seed = (uint64_t)time(NULL);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--cases"))
      cases = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--seconds"))
      seconds = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed"))
      seed = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--max-ranks"))
      max_ranks = atol(argv[i + 1]);
    else {
      fprintf(stderr, "fuzz_divider: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    fprintf(stderr, "fuzz_divider: a value is missing after %s\n",
            argv[argc - 1]);
    return 2;
  }
  if (max_ranks < 1 || max_ranks > 4) {
    fprintf(stderr, "fuzz_divider: --max-ranks takes 1 to 4\n");
    return 2;
  }
  /* Open MPI as root; the ranks without the leak check under the
   * sanitizers (as in fuzz_mpi). */
  mpi_job_environment();
  char dir[] = "/tmp/mlsba-fuzz-divider-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  printf("fuzz_divider: seed %llu\n", (unsigned long long)seed);
  rng.state = seed;
  tally_t T;
  memset(&T, 0, sizeof T);
  time_t start = time(NULL);
  while (cases >= 0 ? T.jobs < cases : time(NULL) - start < seconds) {
    job_t J = {.np = pick(1, (int)max_ranks), .steps = pick(10, 40)};
    J.clean = pick(0, 1);
    J.n = J.clean      ? pick(100000, 2000000)
          : pick(0, 3) ? pick(J.np, 200000)
                       : pick(J.np, 4 * J.np);
    write_platforms(dir, &J);
    tool_run_t r;
    char line[2048];
    run_job(&J, dir, &r, line, sizeof line);
    T.jobs++;
    T.by_ranks[J.np]++;
    if (!check_job(&J, &r, &T)) {
      T.failed++;
      printf("FAILED (%s): %s\n  job %d of seed %llu\n  %.400s\n", why, line,
             T.jobs, (unsigned long long)seed, r.err);
      for (int k = 0; k < J.np; k++) {
        char path[600], text[2048];
        snprintf(path, sizeof path, "%s/p%d.json", dir, k);
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
        text[got] = '\0';
        if (f)
          fclose(f);
        printf("  %s:\n%s", path, text);
      }
    }
    tool_run_free(&r);
  }
  for (int k = 0; k < 4; k++) {
    char path[600];
    snprintf(path, sizeof path, "%s/p%d.json", dir, k);
    unlink(path);
  }
  rmdir(dir);
  printf("fuzz_divider: %d jobs in %lld s, %d steps (%d re-balanced); in "
         "the clean jobs %d changes of speed showed, %d checked balanced "
         "again within 3 re-balances; %d failed\n",
         T.jobs, (long long)(time(NULL) - start), T.steps, T.rebalances,
         T.changes, T.recoveries, T.failed);
  printf("fuzz_divider: jobs by ranks:");
  for (int k = 1; k <= 4; k++)
    if (T.by_ranks[k])
      printf(" %d:%d", k, T.by_ranks[k]);
  printf("\n");
  return T.failed ? 1 : 0;
}
