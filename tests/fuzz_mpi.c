/* Random simulated-rank jobs of mlsba-inpa through a checker of their
 * outcome: the MPI layer's head (INPA over random node profiles, sizes,
 * eps, max-iter, algorithms) and the tool's agreement on its command line
 * (one rank given a bad value, --help, or another value of an option the
 * head uses).
 *
 *   fuzz_mpi [--cases K | --seconds S] [--seed X] [--max-ranks Q]
 *
 * A job of 1 to Q ranks (8 by default) runs under mpirun, or under
 * SimGrid's smpirun when mlsba-inpa-smpi was built (every other job, up
 * to 2 Q ranks), each bounded by a timeout. A report must hold: areas sum
 * to (N/b)^2, the rectangles tile the grid, every rank's devices fill its
 * columns, stop "balanced" only with the last run within eps, the
 * product's distribution the fastest measured and its imbalance the
 * report's. A job given a disagreement must end with one line naming the
 * first rank that differs and a non-zero status on every rank; no job may
 * crash or hang. Prints a tally, and every failing job's command line;
 * exits 1 if any failed. */
#include <jansson.h>
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

#define DATA MLSBA_SOURCE_DIR "/tests/data/mpi/"

/* The seed's sequence (--seed): splitmix64 of tests/support, so that a
 * seed names the same jobs as before. */
static rng_t rng;

static int pick(int lo, int hi) { /* in [lo, hi] */
  return (int)rng_range(&rng, lo, hi);
}

static double uniform(double lo, double hi) {
  return lo + (hi - lo) * rng_uniform(&rng);
}

/* What a job was given, and what must come of it. */
typedef struct {
  int smpi, np, nb, block, max_iter;
  double eps;
  const char *algo, *node_algo;
  /* -1: every rank alike; else the rank given `odd` (and the outcome
   * expected: status and the words after "rank R: "). */
  int odd_rank;
  const char *odd_opt, *odd_value, *want;
  int want_status;
} job_t;

typedef struct {
  int jobs, reports, refusals, agreements, failed;
  int earlier_run; /* reports whose product ran an earlier distribution */
  /* reports whose last run was > 5% and >= 1.65x slower than the run the
   * product ran: what running the last distribution would have cost */
  int last_slower_5, last_slower_165;
  int by_ranks[17];
} tally_t;

/* A simulated device with a random profile: rising then flat, at most a
 * 20x spread between devices. */
static void write_device(FILE *f, int d, int last) {
  double peak = uniform(50, 1000), knee = uniform(1, 64);
  fprintf(f,
          "    {\"name\": \"dev%d\", \"type\": \"sim\", \"speed\": "
          "[[1, %.3f], [%.3f, %.3f], [100000, %.3f]]}%s\n",
          d, peak * uniform(0.1, 0.9), knee + 1, peak, peak * uniform(0.7, 1),
          last ? "" : ",");
}

static void write_platforms(const char *dir, int np) {
  for (int r = 0; r < np; r++) {
    char path[512];
    snprintf(path, sizeof path, "%s/p%d.json", dir, r);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
      perror(path);
      exit(2);
    }
    int p = pick(1, 3);
    fprintf(f, "{\n  \"name\": \"fuzz-node-%d\",\n  \"devices\": [\n", r);
    for (int d = 0; d < p; d++)
      write_device(f, d, d == p - 1);
    fprintf(f, "  ]\n}\n");
    fclose(f);
  }
}

static void random_job(job_t *J, int max_ranks, int have_smpi) {
  memset(J, 0, sizeof *J);
  J->smpi = have_smpi && pick(0, 1);
  J->np = pick(1, J->smpi ? 2 * max_ranks : max_ranks);
  int lo = (int)ceil(sqrt((double)J->np));
  J->nb = pick(lo, lo + 40);
  static const int blocks[] = {16, 32, 64, 128};
  J->block = blocks[pick(0, 3)];
  J->max_iter = pick(1, 8);
  J->eps = pick(0, 5) == 0 ? 0 : uniform(0.01, 0.3);
  static const char *const algos[] = {"inpa", "inpa", "multiple-cpm",
                                      "single-cpm", "homogeneous"};
  J->algo = algos[pick(0, 4)];
  J->node_algo = pick(0, 1) ? "mlsba" : "idpa";
  J->odd_rank = -1;
  /* One job in three: one rank disagrees (mpirun's MPMD form only). */
  if (J->smpi || pick(0, 2) != 0)
    return;
  static const struct {
    const char *opt, *value, *want;
    int status;
  } odd[] = {
      {"--size", "12x", "bad value for --size: 12x", 2},
      {"--eps", "", "bad value for --eps: \"\"", 2},
      {"--help", NULL, "was given --help, rank 0 was given a run", 2},
      {"--block", "8", "option block is 8 here", 1},
      {"--precision", "single", "option precision is single here", 1},
      {"--max-iter", "9", "option max_iter is 9 here", 1},
      {"--algo", "homogeneous", "option algorithm is", 1},
  };
  /* Alone, a rank has nobody to disagree with: only its own errors. */
  int k = pick(0, J->np == 1 ? 1 : (int)(sizeof odd / sizeof *odd) - 1);
  /* A differing value that happens to equal the job's own is no case. */
  if ((k == 5 && J->max_iter == 9) ||
      (k == 6 && !strcmp(J->algo, "homogeneous")))
    k = 0;
  /* A block that does not divide N is refused on that rank alone. */
  if (k == 3 && (J->nb * J->block) % 8 != 0)
    k = 0;
  J->odd_rank = pick(0, J->np - 1);
  J->odd_opt = odd[k].opt;
  J->odd_value = odd[k].value;
  J->want = odd[k].want;
  J->want_status = odd[k].status;
  /* A disagreement is named by the rank that differs from rank 0: make
   * it another rank than 0 (alone, rank 0 has only its own errors). */
  if (J->odd_rank == 0 && J->np > 1 && k >= 2)
    J->odd_rank = pick(1, J->np - 1);
}

/* argv of a rank: the tool and its options (odd: the odd rank's). */
static int rank_args(const job_t *J, const char *dir, int odd, char **argv,
                     char bufs[][64]) {
  int n = 0;
  snprintf(bufs[0], 64, "%lld", (long long)J->nb * J->block);
  snprintf(bufs[1], 64, "%d", J->block);
  snprintf(bufs[2], 64, "%.6f", J->eps);
  snprintf(bufs[3], 64, "%d", J->max_iter);
  static char plat[600];
  snprintf(plat, sizeof plat, "%s/p%%r.json", dir);
  const char *a[] = {"--platform",  plat,         "--size", bufs[0],
                     "--block",     bufs[1],      "--eps",  bufs[2],
                     "--max-iter",  bufs[3],      "--algo", J->algo,
                     "--node-algo", J->node_algo, "--json", "-"};
  for (size_t i = 0; i < sizeof a / sizeof *a; i++)
    argv[n++] = (char *)a[i];
  if (odd) {
    argv[n++] = (char *)J->odd_opt;
    if (J->odd_value)
      argv[n++] = (char *)J->odd_value;
  }
  return n;
}

static void run_job(const job_t *J, const char *dir, tool_run_t *r, char *line,
                    size_t cap) {
  char *argv[128], bufs[4][64], npbuf[3][16];
  int n = 0;
  if (J->smpi) {
#ifdef MLSBA_INPA_SMPI_BIN
    argv[n++] = MLSBA_TIMEOUT;
    argv[n++] = "-k";
    argv[n++] = "5";
    argv[n++] = "60";
    snprintf(npbuf[0], 16, "%d", J->np);
    const char *pre[] = {MLSBA_SMPIRUN,
                         "-np",
                         npbuf[0],
                         "-platform",
                         DATA "smpi.xml",
                         "-hostfile",
                         DATA "smpi.hosts",
                         "--cfg=smpi/simulate-computation:no",
                         "--cfg=smpi/privatization:no",
                         "--log=root.thres:critical",
                         MLSBA_INPA_SMPI_BIN};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
      argv[n++] = (char *)pre[i];
    n += rank_args(J, dir, 0, argv + n, bufs);
#endif
  } else {
    n = (int)mpi_job_start(argv, MLSBA_TIMEOUT, "60", MLSBA_MPIRUN);
    /* Ranks before the odd one, the odd one, those after. */
    int groups[3][2] = {
        {0, J->odd_rank < 0 ? J->np : J->odd_rank},
        {J->odd_rank, J->odd_rank < 0 ? 0 : 1},
        {J->odd_rank + 1, J->odd_rank < 0 ? 0 : J->np - J->odd_rank - 1}};
    int groups_run = 0;
    for (int g = 0; g < 3; g++) {
      if (groups[g][1] <= 0)
        continue;
      if (groups_run++ > 0)
        argv[n++] = ":";
      snprintf(npbuf[g], 16, "%d", groups[g][1]);
      argv[n++] = "-np";
      argv[n++] = npbuf[g];
      argv[n++] = MLSBA_INPA_BIN;
      n += rank_args(J, dir, g == 1, argv + n, bufs);
    }
  }
  argv[n] = NULL;
  size_t len = 0;
  for (int i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(line + len, cap - len, "%s'%s'", i ? " " : "",
                            argv[i]);
  run_tool(argv, r);
}

/* ---- the checker ------------------------------------------------------ */

static char why[512];

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      snprintf(why, sizeof why, __VA_ARGS__);                                  \
      return 0;                                                                \
    }                                                                          \
  } while (0)

static double num(json_t *o, const char *k) {
  return json_number_value(json_object_get(o, k));
}

static json_int_t integer(json_t *o, const char *k) {
  return json_integer_value(json_object_get(o, k));
}

static double slowest(json_t *entry) {
  double worst = 0;
  json_t *t;
  size_t i;
  json_array_foreach(json_object_get(entry, "time"), i, t) {
    worst = fmax(worst, json_number_value(t));
  }
  return worst;
}

/* The rectangles tile the nb x nb grid; each rank's devices fill its
 * columns. */
static int check_tiling(json_t *ranks, const job_t *J) {
  int64_t nb = J->nb, area = 0;
  unsigned char *owned = calloc((size_t)(nb * nb), 1);
  CHECK(owned != NULL, "out of memory");
  json_t *k;
  size_t r;
  int ok = 1;
  json_array_foreach(ranks, r, k) {
    json_int_t m = integer(k, "m"), n = integer(k, "n"),
               row = integer(k, "row"), col = integer(k, "col"), cols = 0;
    if (!(m >= 1 && n >= 1 && row >= 0 && col >= 0 && row + m <= nb &&
          col + n <= nb && integer(k, "w") == m * n)) {
      snprintf(why, sizeof why, "rank %zu: rectangle %lldx%lld at %lld,%lld", r,
               (long long)m, (long long)n, (long long)row, (long long)col);
      ok = 0;
      break;
    }
    for (json_int_t x = row; x < row + m && ok; x++)
      for (json_int_t y = col; y < col + n && ok; y++)
        if (owned[x * nb + y]++) {
          snprintf(why, sizeof why, "block %lld,%lld owned twice", (long long)x,
                   (long long)y);
          ok = 0;
        }
    area += m * n;
    json_t *d;
    size_t i;
    json_array_foreach(json_object_get(k, "devices"), i, d) {
      cols += integer(d, "load");
    }
    if (ok && cols != n * J->block) {
      snprintf(why, sizeof why, "rank %zu: devices hold %lld of %lld columns",
               r, (long long)cols, (long long)(n * J->block));
      ok = 0;
    }
    if (!ok)
      break;
  }
  free(owned);
  if (ok && area != nb * nb) {
    snprintf(why, sizeof why, "areas sum to %lld, not %lld", (long long)area,
             (long long)(nb * nb));
    ok = 0;
  }
  return ok;
}

static int check_report(json_t *j, const job_t *J, tally_t *T) {
  CHECK(integer(j, "nodes") == J->np, "nodes %lld",
        (long long)integer(j, "nodes"));
  json_t *ranks = json_object_get(j, "ranks"),
         *hist = json_object_get(j, "history");
  CHECK(json_array_size(ranks) == (size_t)J->np, "%zu ranks",
        json_array_size(ranks));
  CHECK(json_array_size(hist) == (size_t)integer(j, "iterations") &&
            json_array_size(hist) >= 1,
        "history of %zu", json_array_size(hist));
  if (!check_tiling(ranks, J))
    return 0;
  const char *stop = json_string_value(json_object_get(j, "stop"));
  json_t *last = json_array_get(hist, json_array_size(hist) - 1);
  CHECK(stop != NULL, "no stop");
  CHECK(strcmp(stop, "balanced") || num(last, "imbalance") <= J->eps + 1e-12,
        "balanced at imbalance %g, eps %g", num(last, "imbalance"), J->eps);
  json_int_t ran = integer(j, "run_iteration");
  CHECK(ran >= 1 && ran <= integer(j, "iterations"), "run_iteration %lld",
        (long long)ran);
  json_t *chosen = json_array_get(hist, (size_t)(ran - 1)), *h;
  size_t k;
  json_array_foreach(hist, k, h) {
    CHECK(slowest(chosen) <= slowest(h), "ran %lld (%g s); run %zu took %g s",
          (long long)ran, slowest(chosen), k + 1, slowest(h));
  }
  CHECK(fabs(num(chosen, "imbalance") - num(j, "imbalance")) <= 1e-9,
        "imbalance %g, the run's %g", num(j, "imbalance"),
        num(chosen, "imbalance"));
  CHECK(num(j, "makespan_s") > 0 && isfinite(num(j, "gflops")), "makespan %g",
        num(j, "makespan_s"));
  T->earlier_run += ran != integer(j, "iterations");
  double ratio = slowest(last) / slowest(chosen);
  T->last_slower_5 += ratio > 1.05;
  T->last_slower_165 += ratio >= 1.65;
  return 1;
}

/* One line on stderr "mlsba-inpa: rank R: ...". */
static int check_one_line(const tool_run_t *r, const char *want) {
  const char *hit = strstr(r->err, "mlsba-inpa: ");
  CHECK(hit != NULL, "no message (status %d)", r->status);
  CHECK(strstr(hit + 1, "mlsba-inpa: ") == NULL, "two messages");
  const char *eol = strchr(hit, '\n'), *w = strstr(hit, want);
  CHECK(w != NULL && (eol == NULL || w < eol), "'%s' not in: %.200s", want,
        hit);
  return 1;
}

static int check_job(const job_t *J, const tool_run_t *r, tally_t *T) {
  CHECK(r->exited, "killed by a signal");
  CHECK(r->status != 124 && r->status != 137, "hung: killed after 60 s");
  if (J->odd_rank >= 0) {
    char want[256];
    snprintf(want, sizeof want, "rank %d: %s", J->odd_rank, J->want);
    CHECK(r->status == J->want_status, "status %d, not %d", r->status,
          J->want_status);
    T->agreements++;
    return check_one_line(r, want);
  }
  if (r->status != 0) {
    /* A refusal is fine when it names a rank and a reason. */
    T->refusals++;
    return check_one_line(r, "rank ");
  }
  json_error_t e;
  json_t *j = json_loads(r->out, 0, &e);
  CHECK(j != NULL, "not JSON: %s", e.text);
  int ok = check_report(j, J, T);
  json_decref(j);
  T->reports += ok;
  return ok;
}

int main(int argc, char **argv) {
  long cases = -1, seconds = 60, max_ranks = 8;
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
      fprintf(stderr, "fuzz_mpi: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    fprintf(stderr, "fuzz_mpi: a value is missing after %s\n", argv[argc - 1]);
    return 2;
  }
  if (max_ranks < 1 || max_ranks > 8) {
    fprintf(stderr, "fuzz_mpi: --max-ranks takes 1 to 8\n");
    return 2;
  }
  /* Open MPI as root; under the sanitizers the ranks run without the
   * leak check (support/run_ranks.h says why); ASan's other checks stay. */
  mpi_job_environment();
  char dir[] = "/tmp/mlsba-fuzz-mpi-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
#ifdef MLSBA_INPA_SMPI_BIN
  int have_smpi = 1;
#else
  int have_smpi = 0;
#endif
  printf("fuzz_mpi: seed %llu, %s\n", (unsigned long long)seed,
         have_smpi ? "mpirun and smpirun" : "mpirun (no mlsba-inpa-smpi)");
  rng.state = seed;
  tally_t T;
  memset(&T, 0, sizeof T);
  time_t start = time(NULL);
  while (cases >= 0 ? T.jobs < cases : time(NULL) - start < seconds) {
    job_t J;
    random_job(&J, (int)max_ranks, have_smpi);
    write_platforms(dir, J.np);
    tool_run_t r;
    char line[4096];
    run_job(&J, dir, &r, line, sizeof line);
    T.jobs++;
    T.by_ranks[J.np]++;
    if (!check_job(&J, &r, &T)) {
      T.failed++;
      printf("FAILED (%s): %s\n  platforms: seed %llu, job %d\n  %.400s\n", why,
             line, (unsigned long long)seed, T.jobs, r.err);
    }
    tool_run_free(&r);
  }
  for (int r = 0; r < 64; r++) {
    char path[600];
    snprintf(path, sizeof path, "%s/p%d.json", dir, r);
    unlink(path);
  }
  rmdir(dir);
  printf("fuzz_mpi: %d jobs in %lld s: %d reports checked (%d ran an earlier "
         "distribution than the last), %d refused with a reason, %d "
         "disagreements stopped, %d failed\n",
         T.jobs, (long long)(time(NULL) - start), T.reports, T.earlier_run,
         T.refusals, T.agreements, T.failed);
  printf("fuzz_mpi: the last distribution measured was > 5%% slower than "
         "the one run in %d reports, >= 1.65x in %d\n",
         T.last_slower_5, T.last_slower_165);
  printf("fuzz_mpi: jobs by ranks:");
  for (int r = 1; r <= 16; r++)
    if (T.by_ranks[r])
      printf(" %d:%d", r, T.by_ranks[r]);
  printf("\n");
  return T.failed ? 1 : 0;
}
