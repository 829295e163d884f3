/* The choice of kernels (cpu_kernels.h says why it is made here).
 *
 * With the static BLIS archive linked in (MLSBA_BLIS_CONTEXTS), every
 * sub-configuration of Debian's x86_64 BLIS can be reached through its
 * context initializer, bli_cntx_init_<name>, and passed to the expert
 * calls; the shared libblis exports none of them. Without the archive only
 * BLIS's own choice is possible, and the reason says so. */
#define _GNU_SOURCE /* sched_getcpu, CPU_SET: the timing thread's core */
#include <blis.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MLSBA__X86 1
#endif

#include "../../core/clock.h"
#include "cpu_kernel_cache.h"
#include "cpu_kernels.h"
#include "cpu_openblas.h"

typedef void (*cntx_init_fn)(cntx_t *);

#ifdef MLSBA_BLIS_CONTEXTS
void bli_cntx_init_skx(cntx_t *);
void bli_cntx_init_zen3(cntx_t *);
void bli_cntx_init_haswell(cntx_t *);
void bli_cntx_init_sandybridge(cntx_t *);
void bli_cntx_init_penryn(cntx_t *);
void bli_cntx_init_generic(cntx_t *);
#define INIT(f) bli_cntx_init_##f
#else
#define INIT(f) NULL
#endif

/* Tier: the instruction family; below AVX2 only the best tier reached is
 * worth timing, above it every sub-configuration (their blocking differs).
 * The order is also the preference among kernels within 1% of each other. */
static const struct {
  mlsba__cpu_config_t config;
  int tier;
  cntx_init_fn init;
} configs[] = {
    {{"skx", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
     4,
     INIT(skx)},
    {{"zen3", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA}, 3, INIT(zen3)},
    {{"haswell", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA}, 3, INIT(haswell)},
    {{"sandybridge", MLSBA__CPU_AVX}, 2, INIT(sandybridge)},
    {{"penryn", MLSBA__CPU_SSSE3}, 1, INIT(penryn)},
    {{"generic", 0}, 0, INIT(generic)},
};
enum { NCONFIGS = sizeof configs / sizeof configs[0] };

size_t mlsba__cpu_kernel_candidates(unsigned features,
                                    const mlsba__cpu_config_t **out,
                                    size_t max) {
  size_t n = 0;
  int low_tier_taken = 0;
  for (size_t i = 0; i < NCONFIGS && n < max; i++) {
    if ((configs[i].config.needs & ~features) != 0)
      continue;
    if (configs[i].tier < 3) {
      if (low_tier_taken || n > 0)
        continue; /* a faster family is already there */
      low_tier_taken = 1;
    }
    out[n++] = &configs[i].config;
  }
  return n;
}

/* ---- shape classes ----------------------------------------------------- */

/* An inner dimension below DEEP is a rank-k update's (the factorizations'
 * blocks are 128 to 256 deep); a side below WIDE makes it a panel's. */
enum { DEEP = 384, WIDE = 256 };

mlsba__cpu_class_t mlsba__cpu_shape_class(mlsba__cpu_op_t op, int64_t m,
                                          int64_t n, int64_t k) {
  if (op == MLSBA__CPU_OP_TRSM || op == MLSBA__CPU_OP_TRMM)
    return MLSBA__CPU_TRIANGLE;
  if (k >= DEEP)
    return MLSBA__CPU_PRODUCT;
  return m >= WIDE && n >= WIDE ? MLSBA__CPU_UPDATE : MLSBA__CPU_PANEL;
}

const char *mlsba__cpu_class_name(mlsba__cpu_class_t c) {
  static const char *const names[MLSBA__CPU_CLASSES] = {"product", "update",
                                                        "triangle", "panel"};
  return c >= 0 && c < MLSBA__CPU_CLASSES ? names[c] : "?";
}

const char *mlsba__cpu_kernel_id_name(int id) {
  if (id == MLSBA__CPU_KERNEL_AUTO)
    return "auto";
  if (id == MLSBA__CPU_KERNEL_OPENBLAS)
    return "openblas";
  return id >= 0 && id < NCONFIGS ? configs[id].config.name : NULL;
}

/* ---- the decision ------------------------------------------------------ */

static struct {
  mlsba__cpu_picks_t picks;
  unsigned features;
  int openblas_possible;    /* a core type and a file: worth trying */
  const char *openblas_why; /* why it did not load, or NULL */
  char detected[32];
  char reason[512];
  double start, seconds; /* when the choice began, what it took */
  const char *source;    /* mlsba__cpu_kernel_source() */
  cntx_t cntx[NCONFIGS];
} choice;
static pthread_once_t choice_once = PTHREAD_ONCE_INIT;
/* Set once the choice is made, read without making it (from any thread:
 * choice's fields are then written). */
static atomic_int choice_made;

static void choose(void);
static void ensure_chosen(void) { pthread_once(&choice_once, choose); }

static int config_index(const char *name) {
  for (int i = 0; i < NCONFIGS; i++)
    if (strcmp(configs[i].config.name, name) == 0)
      return i;
  return -1;
}

/* The features BLIS's own sub-configuration (by its name) runs on: under
 * MLSBA_CPU_HIDE its choice, made from the real CPU, is not taken when it
 * needs a hidden feature, as on a CPU that lacks it. */
static unsigned detected_needs(const char *name) {
  static const struct {
    const char *name;
    unsigned needs;
  } known[] = {
      {"skx", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"knl", MLSBA__CPU_AVX512 | MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"haswell", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen2", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"zen3", MLSBA__CPU_AVX2 | MLSBA__CPU_FMA},
      {"excavator", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"steamroller", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"piledriver", MLSBA__CPU_AVX | MLSBA__CPU_FMA},
      {"bulldozer", MLSBA__CPU_AVX},
      {"sandybridge", MLSBA__CPU_AVX},
      {"penryn", MLSBA__CPU_SSSE3},
      {"generic", 0},
  };
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(known[i].name, name) == 0)
      return known[i].needs;
  return MLSBA__CPU_AVX512; /* unknown to us: only on a CPU with it all */
}

/* Whether kernel set id runs on this CPU (as masked) in this build. */
static int runnable(int id) {
  if (id == MLSBA__CPU_KERNEL_AUTO)
    return (detected_needs(choice.detected) & ~choice.features) == 0;
  if (id == MLSBA__CPU_KERNEL_OPENBLAS)
    return choice.openblas_possible;
  return id >= 0 && id < NCONFIGS && configs[id].init &&
         (configs[id].config.needs & ~choice.features) == 0;
}

void *mlsba__cpu_kernel_context_of(int id) {
  return id >= 0 && id < NCONFIGS ? &choice.cntx[id] : NULL;
}

/* Every class and precision on kernel set id, BLIS set blis, untimed. */
static void pick_all(int id, int blis) {
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
      choice.picks.pick[p][c] = (mlsba__cpu_pick_t){id, blis, 0, 0};
}

/* Whether the CPU is an Intel one (CPUID's vendor string). */
static int intel_cpu(void) {
#ifdef MLSBA__X86
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d))
    return b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu;
#endif
  return 0;
}

/* The BLIS kernel sets the choice weighs, in the order of preference
 * (ids). zen3 and haswell run the same micro-kernels with other block
 * sizes (timing both measures noise, and the choice flipped between
 * them): only the one for the CPU's maker is timed, haswell on Intel,
 * zen3 elsewhere. BLIS's own only when it is none of them and not the
 * reference kernels beside faster ones (it would run as one of them
 * anyway). */
static size_t blis_candidates(int *ids, size_t max) {
  const mlsba__cpu_config_t *cand[NCONFIGS];
  size_t nc = mlsba__cpu_kernel_candidates(choice.features, cand, NCONFIGS),
         n = 0, own_is_one = 0;
  const char *twin = intel_cpu() ? "zen3" : "haswell";
  int have_both = 0;
  for (size_t j = 0; j < nc; j++)
    have_both += strcmp(cand[j]->name, "zen3") == 0 ||
                 strcmp(cand[j]->name, "haswell") == 0;
  for (size_t j = 0; j < nc && n < max; j++) {
    int i = config_index(cand[j]->name);
    own_is_one |= strcmp(cand[j]->name, choice.detected) == 0;
    if (have_both == 2 && strcmp(cand[j]->name, twin) == 0)
      continue;
    if (runnable(i))
      ids[n++] = i;
  }
  int own_is_reference = strcmp(choice.detected, "generic") == 0 && n > 0;
  if (runnable(MLSBA__CPU_KERNEL_AUTO) && !own_is_one && !own_is_reference &&
      n < max)
    ids[n++] = MLSBA__CPU_KERNEL_AUTO;
  return n;
}

/* The kernel sets to time: BLIS's, and OpenBLAS where it loads (else
 * choice.openblas_why says why not). Inside the choice. */
static size_t timed_ids(int *ids, size_t max) {
  size_t n = blis_candidates(ids, max);
  const char *why = NULL;
  if (n < max && choice.openblas_possible) {
    if (mlsba__openblas_load(choice.features, &why) == 0)
      ids[n++] = MLSBA__CPU_KERNEL_OPENBLAS;
    else
      choice.openblas_why = why;
  }
  return n;
}

size_t mlsba__cpu_kernel_timed(int *ids, size_t max) {
  ensure_chosen();
  return timed_ids(ids, max);
}

const char *mlsba__cpu_kernel_openblas_why(void) {
  ensure_chosen();
  return choice.openblas_why ? choice.openblas_why : "";
}

/* MLSBA_CPU_KERNELS: 1 when it decided; else a refusal in the reason. */
static int forced(void) {
  const char *env = getenv("MLSBA_CPU_KERNELS");
  if (!env || !*env)
    return 0;
  int id = strcmp(env, "auto") == 0       ? MLSBA__CPU_KERNEL_AUTO
           : strcmp(env, "openblas") == 0 ? MLSBA__CPU_KERNEL_OPENBLAS
                                          : config_index(env);
  const char *why = NULL;
  if (id == MLSBA__CPU_KERNEL_OPENBLAS) {
    if (mlsba__openblas_load(choice.features, &why) != 0)
      id = -2;
  } else if (id == -1 && strcmp(env, "auto") != 0) {
    why = "no such kernel set";
  } else if (!runnable(id)) {
    why = id >= 0 && !configs[id].init ? "not in this build"
                                       : "this CPU lacks its instructions";
  }
  if (why) {
    snprintf(choice.reason, sizeof choice.reason,
             "MLSBA_CPU_KERNELS=%.40s refused (%s); ", env, why);
    return 0;
  }
  int blis[NCONFIGS + 1];
  int blis_id = id != MLSBA__CPU_KERNEL_OPENBLAS ? id
                : blis_candidates(blis, NCONFIGS + 1) > 0
                    ? blis[0]
                    : MLSBA__CPU_KERNEL_AUTO;
  pick_all(id, blis_id);
  snprintf(choice.reason, sizeof choice.reason, "forced by MLSBA_CPU_KERNELS");
  choice.source = "forced";
  return 1;
}

/* Rounds of every class, each round running a class's kernel sets one
 * after the other, then the next class's, as the library's calls follow
 * each other (timed back to back on one class, BLIS's skx kernels ran a
 * narrow update 1.4 times faster than after the other classes' calls,
 * OpenBLAS's 0.8 times: the choice went against what a factorization
 * gains). Every round runs every class, a class decided too (its rounds
 * no longer counted): when the decided classes stopped, the classes still
 * timed ran back to back, and the choice leaned the same way (a fresh
 * process saw OpenBLAS's panel speed at 1.01 of skx's, against 1.3 in
 * whole rounds in the same process: the choice flipped between kernels
 * 8-10% apart). The first round is a cold one, left out.
 *
 * The rounds count in pairs, one in each order, and a class is judged
 * only after a whole pair: where a class's sets run in a round changes
 * their speeds, and not alike (fresh processes, single precision: after
 * another set's panel, OpenBLAS ran the panel at 1.33-1.57 times skx's,
 * first in the class at 1.02-1.14). A class stopped after an odd count
 * of warm rounds had its median in the order most of its rounds ran in:
 * with three, two in the order that slowed OpenBLAS, and skx took the
 * panel in 7 of 10 fresh choices, against OpenBLAS 19% faster over whole
 * rounds. In a class, a set below FAR of the fastest after the first
 * pair, or below CLOSE after two, is left behind (one at half the speed
 * of another needs no more rounds to lose); the others run until each
 * has WARM rounds, and up to MAX_ROUNDS while the decision is a close
 * call (more rounds steady the medians it compares); a decision clear
 * after MIN_WARM rounds (mlsba__cpu_pick_is_clear) is made then, and a
 * class decided runs its chosen set alone in the later rounds. Past BUDGET
 * seconds for the whole choice, a class stops at MIN_WARM rounds, a close call
 * too (the budget is read after whole pairs, so a round more may run
 * past it: 0.65 s kept the choice at 0.71-0.93 s on the busy VM). */
enum { WARM = 8, MIN_WARM = 4, MAX_ROUNDS = MLSBA__CPU_TRACE_ROUNDS };
_Static_assert(WARM % 2 == 0 && MIN_WARM % 2 == 0,
               "a class is judged after whole pairs of rounds");
enum { MAX_TIMED = NCONFIGS + 2 };
#define FAR 0.7
#define CLOSE 0.85
#define BUDGET 0.65

/* One class's measurements: GFLOPS per kernel set and round (0: not run
 * in that round). */
typedef struct {
  double g[MAX_TIMED][MAX_ROUNDS];
  double wall[MAX_TIMED][MAX_ROUNDS]; /* by the wall clock, for the trace */
  int rounds;
} runs_t;

/* The rounds of the last timing in this process, kept for bench-kernels
 * (mlsba__cpu_choice_rounds): what the choice saw, round by round. */
static struct {
  int ids[MAX_TIMED];
  size_t n;
  runs_t R[2][MLSBA__CPU_CLASSES];
} trace;

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double mlsba__cpu_rounds_speed(const double *g, int rounds) {
  double ran[MAX_ROUNDS];
  int n = 0;
  for (int r = 0; r < rounds && n < MAX_ROUNDS; r++)
    if (g[r] > 0)
      ran[n++] = g[r];
  if (n == 0)
    return 0;
  qsort(ran, (size_t)n, sizeof *ran, by_value);
  return n % 2 ? ran[n / 2] : (ran[n / 2 - 1] + ran[n / 2]) / 2;
}

static double speed_of(const runs_t *R, size_t j) {
  return mlsba__cpu_rounds_speed(R->g[j], R->rounds);
}

/* The BLIS set kept among ids[0..n): the first within the tie of the
 * fastest; n when none was timed. */
static size_t kept_blis(const int *ids, const double *g, size_t n) {
  size_t fastest = n;
  for (size_t j = 0; j < n; j++)
    if (ids[j] != MLSBA__CPU_KERNEL_OPENBLAS && g[j] > 0 &&
        (fastest == n || g[j] > g[fastest]))
      fastest = j;
  if (fastest == n)
    return n;
  for (size_t j = 0; j < fastest; j++)
    if (ids[j] != MLSBA__CPU_KERNEL_OPENBLAS && g[j] > 0 &&
        g[j] >= MLSBA__CPU_TIE * g[fastest])
      return j;
  return fastest;
}

mlsba__cpu_pick_t mlsba__cpu_pick_of_speeds(const int *ids,
                                            const double *gflops, size_t n) {
  size_t keep = kept_blis(ids, gflops, n);
  if (keep == n) /* nothing of BLIS's timed */
    return (mlsba__cpu_pick_t){MLSBA__CPU_KERNEL_AUTO, MLSBA__CPU_KERNEL_AUTO,
                               0, 0};
  double g = gflops[keep];
  mlsba__cpu_pick_t pick = {ids[keep], ids[keep], g, g};
  for (size_t j = 0; j < n; j++)
    if (ids[j] == MLSBA__CPU_KERNEL_OPENBLAS &&
        gflops[j] > MLSBA__CPU_OPENBLAS_LEAD * g && gflops[j] > pick.gflops) {
      pick.kernel = MLSBA__CPU_KERNEL_OPENBLAS;
      pick.gflops = gflops[j];
    }
  return pick;
}

/* Whether a set other than the one kept is within `band` (a ratio) of
 * the ratio to it that would change the choice. */
static int within_band(const int *ids, const double *gflops, size_t n,
                       double band) {
  size_t keep = kept_blis(ids, gflops, n);
  for (size_t j = 0; j < n && keep < n; j++) {
    if (j == keep || !(gflops[j] > 0))
      continue;
    double q = gflops[j] / gflops[keep],
           threshold = ids[j] == MLSBA__CPU_KERNEL_OPENBLAS
                           ? MLSBA__CPU_OPENBLAS_LEAD
                           : (j < keep ? MLSBA__CPU_TIE : 1 / MLSBA__CPU_TIE);
    if (q > threshold / band && q < threshold * band)
      return 1;
  }
  return 0;
}

int mlsba__cpu_pick_is_close(const int *ids, const double *gflops, size_t n) {
  return within_band(ids, gflops, n, 1.03);
}

int mlsba__cpu_pick_is_clear(const int *ids, const double *gflops, size_t n) {
  return kept_blis(ids, gflops, n) < n &&
         !within_band(ids, gflops, n, MLSBA__CPU_CLEAR);
}

/* The speeds of a class's sets, for the pure decision. */
static void speeds_of(const runs_t *R, size_t n, double *g) {
  for (size_t j = 0; j < n; j++)
    g[j] = speed_of(R, j);
}

static mlsba__cpu_pick_t pick_class(const int *ids, const runs_t *R, size_t n) {
  double g[MAX_TIMED];
  speeds_of(R, n, g);
  return mlsba__cpu_pick_of_speeds(ids, g, n);
}

static int close_call(const int *ids, const runs_t *R, size_t n) {
  double g[MAX_TIMED];
  speeds_of(R, n, g);
  return mlsba__cpu_pick_is_close(ids, g, n);
}

static int clear_call(const int *ids, const runs_t *R, size_t n) {
  double g[MAX_TIMED];
  speeds_of(R, n, g);
  return mlsba__cpu_pick_is_clear(ids, g, n);
}

/* One round of the sets of ids marked in `which` on class c, in order or
 * (odd rounds) in reverse, so that none always runs first. */
static void time_round(mlsba__cpu_timing_t *ws, mlsba_precision_t p,
                       mlsba__cpu_class_t c, const int *ids, const int *which,
                       size_t n, runs_t *R) {
  int r = R->rounds++;
  for (size_t i = 0; i < n; i++) {
    size_t j = r % 2 ? n - 1 - i : i;
    R->g[j][r] = 0;
    if (!which[j])
      continue;
    double flops = 0, cpu = 0,
           t = mlsba__cpu_class_time(ws, ids[j], p, c, &flops, &cpu);
    /* The thread's own seconds: a round in which another process took
     * the core is not charged for its time (its caches it may still
     * have cost, which the medians absorb). */
    double s = cpu > 0 && cpu <= t ? cpu : t;
    R->g[j][r] = s > 0 ? flops / s * 1e-9 : 0;
    R->wall[j][r] = t > 0 ? flops / t * 1e-9 : 0;
  }
}

size_t mlsba__cpu_choice_rounds(mlsba_precision_t p, mlsba__cpu_class_t c,
                                int *ids, double *cpu, double *wall, size_t max,
                                int *rounds) {
  ensure_chosen();
  size_t n = trace.n < max ? trace.n : max;
  int cls = c >= 0 && c < MLSBA__CPU_CLASSES ? (int)c : 0;
  const runs_t *R = &trace.R[p == MLSBA_PRECISION_DOUBLE][cls];
  *rounds = R->rounds;
  for (size_t j = 0; j < n; j++) {
    ids[j] = trace.ids[j];
    memcpy(cpu + j * MLSBA__CPU_TRACE_ROUNDS, R->g[j], sizeof R->g[j]);
    memcpy(wall + j * MLSBA__CPU_TRACE_ROUNDS, R->wall[j], sizeof R->wall[j]);
  }
  return n;
}

/* ---- how a choice was timed (pure) -------------------------------------- */

int mlsba__cpu_measured_quiet(const mlsba__cpu_measured_t *m) {
  return m->share >= 0.95 && m->cpus > 0 && m->load < (double)m->cpus;
}

static int same_kernels(const mlsba__cpu_picks_t *a,
                        const mlsba__cpu_picks_t *b) {
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
      if (a->pick[p][c].kernel != b->pick[p][c].kernel ||
          a->pick[p][c].blis != b->pick[p][c].blis)
        return 0;
  return 1;
}

void mlsba__cpu_choice_retimed(const mlsba__cpu_picks_t *old,
                               mlsba__cpu_picks_t *now) {
  int tries = old->how.tries + 1;
  int agree = same_kernels(old, now),
      quiet = mlsba__cpu_measured_quiet(&now->how);
  /* A busy timing never replaces the choice: every model saved since is
   * keyed by its kernels (cpu_ident), and a flip would turn them all away
   * for a timing no better than the first. */
  if (!agree && !quiet)
    *now = *old;
  now->how.tries =
      tries < MLSBA__CPU_CACHE_TRIES ? tries : MLSBA__CPU_CACHE_TRIES;
  now->how.settled = agree || quiet || tries >= MLSBA__CPU_CACHE_TRIES;
}

/* The cores run pinned, one thread each; a thread that moves from core to
 * core finds its caches cold (BLIS's skx kernels ran a rank-256 update at
 * 160 GFLOPS on a wandering thread, 185 on a pinned one). So the calling
 * thread is held on the core it is on while it times, and given back its
 * own set of cores after; 0 when it could not be (it times where it
 * runs). */
static int hold_core(cpu_set_t *before) {
  int cpu = sched_getcpu();
  if (cpu < 0 || sched_getaffinity(0, sizeof *before, before) != 0)
    return 0;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

/* The calling thread's CPU time in seconds (0 where there is none). */
static double thread_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The conditions of a timing: the load when it began, the CPUs, and
 * (after it) the share of its core the thread had, from t0 and c0. */
static void conditions(mlsba__cpu_measured_t *m, double t0, double c0) {
  double load[1];
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (t0 == 0) { /* the start */
    m->load = getloadavg(load, 1) == 1 && load[0] >= 0 ? load[0] : 0;
    m->cpus = cpus > 0 && cpus < (1 << 20) ? (int)cpus : 1;
    return;
  }
  double wall = mlsba__now() - t0, cpu = thread_seconds() - c0;
  m->share = wall > 0 && cpu > 0 ? (cpu < wall ? cpu / wall : 1) : 0;
}

/* Times every kernel set on every class, and how (choice.picks.how, the
 * tries left to the caller); 0, or -1 without the memory to. */
static int measure(const int *ids, size_t n) {
  mlsba__cpu_timing_t *ws = mlsba__cpu_timing_create();
  if (ws == NULL)
    return -1;
  mlsba__cpu_measured_t *how = &choice.picks.how;
  *how = (mlsba__cpu_measured_t){0, 1, 0, 0, 1, 0};
  memcpy(trace.ids, ids, n * sizeof *ids);
  trace.n = n;
  conditions(how, 0, 0);
  double t0 = mlsba__now(), c0 = thread_seconds();
  cpu_set_t before;
  int held = hold_core(&before);
  for (int p = 0; p < 2; p++) {
    mlsba_precision_t prec = (mlsba_precision_t)p;
    runs_t R[MLSBA__CPU_CLASSES];
    int active[MLSBA__CPU_CLASSES][MAX_TIMED], done[MLSBA__CPU_CLASSES] = {0};
    memset(R, 0, sizeof R);
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
      for (size_t j = 0; j < n; j++)
        active[c][j] = 1;
    for (int warm = 0, left = MLSBA__CPU_CLASSES; left > 0; warm++) {
      /* A class decided still runs in the later rounds (not counted):
       * the calls around each timed one stay those of a whole round. */
      for (int c = 0; c < MLSBA__CPU_CLASSES; c++)
        time_round(ws, prec, (mlsba__cpu_class_t)c, ids, active[c], n, &R[c]);
      for (int c = 0; c < MLSBA__CPU_CLASSES && warm == 0; c++)
        for (size_t j = 0; j < n; j++) /* the cold round: buffers to map */
          R[c].g[j][0] = 0;
      /* Judged after whole pairs only: as many rounds in each order. */
      for (int c = 0; c < MLSBA__CPU_CLASSES && warm > 0 && warm % 2 == 0;
           c++) {
        if (done[c])
          continue;
        runs_t *Rc = &R[c];
        double fastest = 0;
        int running = 0;
        for (size_t j = 0; j < n; j++)
          fastest = speed_of(Rc, j) > fastest ? speed_of(Rc, j) : fastest;
        /* One pair tells only who is far behind. */
        double keep = warm < 4 ? FAR : CLOSE;
        for (size_t j = 0; j < n; j++)
          running += active[c][j] =
              active[c][j] && speed_of(Rc, j) >= keep * fastest;
        int over = mlsba__now() - choice.start > BUDGET;
        int enough = warm >= WARM
                         ? !close_call(ids, Rc, n) || over
                         : warm >= MIN_WARM && (over || clear_call(ids, Rc, n));
        if (running < 2 || enough || Rc->rounds + 2 > MAX_ROUNDS) {
          done[c] = 1;
          trace.R[p][c] = *Rc;
          left--;
          choice.picks.pick[p][c] = pick_class(ids, Rc, n);
          how->close += close_call(ids, Rc, n);
          /* Its later rounds run the set chosen alone: the call before
           * the next class's stays one of this class's, at half the cost
           * (or less) of running them all. */
          for (size_t j = 0; j < n; j++)
            active[c][j] = ids[j] == choice.picks.pick[p][c].kernel;
        }
      }
    }
  }
  if (held)
    (void)sched_setaffinity(0, sizeof before, &before);
  mlsba__cpu_timing_destroy(ws);
  conditions(how, t0, c0);
  how->settled = mlsba__cpu_measured_quiet(how);
  return 0;
}

/* Whether the picks need OpenBLAS, loaded then (a cached choice); 0 when
 * they need it and it does not load. */
static int load_what_picks_need(void) {
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      const char *why;
      if (choice.picks.pick[p][c].kernel == MLSBA__CPU_KERNEL_OPENBLAS &&
          mlsba__openblas_load(choice.features, &why) != 0) {
        choice.openblas_why = why;
        return 0;
      }
    }
  return 1;
}

/* A settled choice that needs OpenBLAS, in a process where it does not
 * load (SimGrid's ranks past the sixteenth link-map namespace): its
 * classes run the BLIS kernels the file keeps behind OpenBLAS, timed with
 * it, rather than each such process timing the others again (a second
 * each: a 90-rank simulation paid more than a minute) for a choice it
 * may not cache. */
static void without_openblas(void) {
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < MLSBA__CPU_CLASSES; c++) {
      mlsba__cpu_pick_t *k = &choice.picks.pick[p][c];
      if (k->kernel == MLSBA__CPU_KERNEL_OPENBLAS) {
        k->kernel = k->blis;
        k->gflops = k->blis_gflops;
      }
    }
}

/* By the count, the cache, or by timing. */
static void decide(void) {
  int ids[MAX_TIMED];
  size_t n_blis = blis_candidates(ids, MAX_TIMED);
  choice.source = "fixed";
  if (n_blis <= 1 && !choice.openblas_possible) {
    int id = n_blis ? ids[0] : MLSBA__CPU_KERNEL_AUTO;
    pick_all(id, id);
    snprintf(choice.reason, sizeof choice.reason, "%s",
             id == MLSBA__CPU_KERNEL_AUTO
                 ? "BLIS's own (this build reaches no other sub-configuration)"
                 : "the only one this CPU's features allow");
    return;
  }
  char key[512], path[PATH_MAX];
  mlsba__cpu_key(choice.features, key, sizeof key);
  const char *refused = NULL;
  int cached = mlsba__cpu_cache_path(path, sizeof path, &refused);
  mlsba__cpu_picks_t old;
  int have_old = 0;
  if (cached &&
      mlsba__cpu_cache_read(path, key, runnable, &choice.picks) == 0) {
    int settled = choice.picks.how.settled ||
                  choice.picks.how.tries >= MLSBA__CPU_CACHE_TRIES;
    int whole = load_what_picks_need();
    if (settled) {
      if (!whole)
        without_openblas();
      snprintf(choice.reason, sizeof choice.reason,
               "measured on this CPU earlier, kept in %.300s%s%.100s%s", path,
               whole ? "" : "; no OpenBLAS: ", whole ? "" : choice.openblas_why,
               whole ? "" : " (its classes run the BLIS kernels behind it)");
      choice.source = "cache";
      return;
    }
    if (whole) {
      old = choice.picks; /* timed on a busy machine: once more */
      have_old = 1;
    }
  }
  size_t n = timed_ids(ids, MAX_TIMED);
  if (measure(ids, n) != 0) {
    if (have_old) {
      choice.picks = old;
      snprintf(choice.reason, sizeof choice.reason,
               "measured on this CPU earlier, kept in %.300s (no memory to "
               "time it again)",
               path);
      choice.source = "cache";
      return;
    }
    pick_all(ids[0], ids[0] == MLSBA__CPU_KERNEL_OPENBLAS
                         ? MLSBA__CPU_KERNEL_AUTO
                         : ids[0]);
    snprintf(choice.reason, sizeof choice.reason,
             "the first candidate (no memory to time the others)");
    return;
  }
  choice.source = have_old ? "retimed" : "timed";
  const mlsba__cpu_measured_t *how = &choice.picks.how;
  double load = how->load, share = how->share;
  int close = how->close;
  if (have_old)
    mlsba__cpu_choice_retimed(&old, &choice.picks);
  char busy[200] = "";
  if (!how->settled)
    snprintf(busy, sizeof busy,
             "; timed at load %.2f on %d CPUs, %.0f%% of its core, %d close "
             "call%s: timed again by the next process (%d of %d)",
             load, how->cpus, 100 * share, close, close == 1 ? "" : "s",
             how->tries + 1, MLSBA__CPU_CACHE_TRIES);
  /* OpenBLAS is on this machine (the key names it) but did not load in
   * this process: a choice among the others is this process's, not the
   * machine's. Cached, it was every later process's: a simulation of 16
   * ranks under SimGrid (its ranks take the link-map namespaces that
   * dlmopen has) cached BLIS's zen3 for LU's update at 15 GFLOPS a core
   * where OpenBLAS runs 36-41, and every LU since ran on it. */
  int partial = choice.openblas_possible && choice.openblas_why != NULL;
  snprintf(choice.reason, sizeof choice.reason,
           "measured in %.2f s: the fastest of %zu per shape class on one "
           "core%s%s%.150s%s%.100s%s%.180s",
           mlsba__now() - choice.start, n,
           have_old ? " (again: the cached choice was not settled)" : "",
           refused ? "; " : "", refused ? refused : "",
           choice.openblas_why ? "; no OpenBLAS: " : "",
           choice.openblas_why ? choice.openblas_why : "",
           partial ? " (so not cached)" : "", busy);
  if (cached && !partial)
    mlsba__cpu_cache_write(path, key, &choice.picks);
}

static void choose(void) {
  choice.start = mlsba__now();
  bli_init();
  snprintf(choice.detected, sizeof choice.detected, "%s",
           bli_arch_string(bli_arch_query_id()));
  const char *bad;
  size_t bad_len;
  (void)mlsba__cpu_hidden_features(&bad, &bad_len);
  char notes[256] = ""; /* what was refused, in front of the reason */
  if (bad)
    snprintf(notes, sizeof notes,
             "MLSBA_CPU_HIDE ignored (\"%.*s\" is none of avx512, avx2, fma, "
             "avx, ssse3); ",
             (int)(bad_len < 40 ? bad_len : 40), bad);
  choice.features = mlsba__cpu_features();
  char key[160];
  mlsba__openblas_key(choice.features, key, sizeof key);
  choice.openblas_possible = strncmp(key, "none", 4) != 0;
  for (int i = 0; i < NCONFIGS; i++)
    if (runnable(i))
      configs[i].init(&choice.cntx[i]);
  if (!forced()) {
    size_t len = strlen(notes);
    snprintf(notes + len, sizeof notes - len, "%.200s", choice.reason);
    decide();
  }
  if (notes[0]) {
    char tail[sizeof choice.reason];
    memcpy(tail, choice.reason, sizeof tail);
    snprintf(choice.reason, sizeof choice.reason, "%s%.*s", notes,
             (int)(sizeof choice.reason - strlen(notes) - 1), tail);
  }
  choice.seconds = mlsba__now() - choice.start;
  atomic_store(&choice_made, 1);
}

static const mlsba__cpu_pick_t *pick_of(mlsba_precision_t p,
                                        mlsba__cpu_class_t c) {
  ensure_chosen();
  int cls = c >= 0 && c < MLSBA__CPU_CLASSES ? (int)c : 0;
  return &choice.picks.pick[p == MLSBA_PRECISION_DOUBLE][cls];
}

int mlsba__cpu_kernel_of(mlsba_precision_t p, mlsba__cpu_class_t c) {
  return pick_of(p, c)->kernel;
}

int mlsba__cpu_kernel_blis_of(mlsba_precision_t p, mlsba__cpu_class_t c) {
  return pick_of(p, c)->blis;
}

void *mlsba__cpu_kernel_context(mlsba_precision_t p) {
  return mlsba__cpu_kernel_context_of(
      mlsba__cpu_kernel_blis_of(p, MLSBA__CPU_PRODUCT));
}

const char *mlsba__cpu_kernel_class_name(mlsba_precision_t p,
                                         mlsba__cpu_class_t c) {
  return mlsba__cpu_kernel_id_name(mlsba__cpu_kernel_of(p, c));
}

const char *mlsba__cpu_kernel_name(mlsba_precision_t p) {
  return mlsba__cpu_kernel_class_name(p, MLSBA__CPU_PRODUCT);
}

void mlsba__cpu_kernel_signature(mlsba_precision_t p, char *buf, size_t size) {
  size_t len = 0;
  int same = 1;
  for (int c = 1; c < MLSBA__CPU_CLASSES; c++)
    same = same && mlsba__cpu_kernel_of(p, (mlsba__cpu_class_t)c) ==
                       mlsba__cpu_kernel_of(p, MLSBA__CPU_PRODUCT);
  buf[0] = '\0';
  for (int c = 0; c < (same ? 1 : MLSBA__CPU_CLASSES) && len < size; c++) {
    int w = snprintf(buf + len, size - len, "%s%s", c ? "." : "",
                     mlsba__cpu_kernel_class_name(p, (mlsba__cpu_class_t)c));
    len = w > 0 ? len + (size_t)w : len;
  }
}

const char *mlsba__cpu_kernel_detected(void) {
  ensure_chosen();
  return choice.detected;
}

const char *mlsba__cpu_kernel_reason(void) {
  ensure_chosen();
  return choice.reason;
}

double mlsba__cpu_kernel_class_gflops(mlsba_precision_t p,
                                      mlsba__cpu_class_t c) {
  return pick_of(p, c)->gflops;
}

double mlsba__cpu_kernel_gflops(mlsba_precision_t p) {
  return mlsba__cpu_kernel_class_gflops(p, MLSBA__CPU_PRODUCT);
}

double mlsba__cpu_kernel_choice_seconds(void) {
  ensure_chosen();
  return choice.seconds;
}

const char *mlsba__cpu_kernel_source(void) {
  ensure_chosen();
  return choice.source ? choice.source : "fixed";
}

double mlsba__cpu_kernel_choice_timed_seconds(void) {
  const char *s = mlsba__cpu_kernel_source();
  return strcmp(s, "timed") == 0 || strcmp(s, "retimed") == 0 ? choice.seconds
                                                              : 0;
}

int mlsba__cpu_kernel_choice_made(void) { return atomic_load(&choice_made); }
