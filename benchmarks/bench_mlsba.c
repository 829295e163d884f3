/* MLSBA against the numbers of seed 002 (§V, Table I) on the simulated
 * desktop of that paper, and its scaling with the number of groups and N.
 *
 *   bench-mlsba [--platform FILE] [--quick]
 *
 * Part 1: N = 8400 on the seed-002 desktop: makespan of MLSBA, MLFBA2,
 *         flat SLBA and the brute-force optimum of the flat problem (an
 *         exact search over the makespan, tests/support/oracle.c), points
 *         per group, median time per call, MLFBA2 / MLSBA time ratio; for
 *         both ways of choosing line B (regula falsi, the papers' angle
 *         bisector).
 * Part 2: the paper's Table I sizes, N = 4800 ... 9060.
 * Part 3: groups 4 ... 4096 (each a core + accelerator pair or a lone core,
 *         random speed functions) and N = 10^3 ... 10^9: time per call and
 *         points per multi-device group, which must grow like log N.
 * Part 4: group-model points over 300 random platforms of 2 to 9 groups
 *         of 1 to 3 devices, for both ways of choosing line B. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "mlsba.h"
#include "support/oracle.h"
#include "support/random_models.h"

#ifndef MLSBA_SOURCE_DIR
#define MLSBA_SOURCE_DIR "."
#endif

typedef struct {
  const mlsba_model_t **models;
  size_t *size, q, p;
} grouped_t;

typedef struct {
  double makespan, median_s;
  size_t points_total, points_max;
  int64_t *alpha, *beta;
  size_t *points;
} outcome_t;

/* Median time of reps calls (at least 1), and the outcome of the last. */
static int measure(const grouped_t *G, mlsba_algorithm_t algo,
                   mlsba_line_search_t search, int64_t n, int reps,
                   outcome_t *o) {
  double *t = malloc((size_t)reps * sizeof *t);
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.line_search = search;
  mlsba_partition_info_t info;
  if (t == NULL)
    return MLSBA_ENOMEM;
  for (int k = 0; k < reps; k++) {
    double t0 = timing_now();
    int err = mlsba_partition_groups(algo, G->models, G->size, G->q, n, &opts,
                                     o->alpha, o->beta, o->points, &info);
    t[k] = timing_now() - t0;
    if (err) {
      free(t);
      return err;
    }
  }
  o->median_s = timing_median(t, (size_t)reps);
  o->makespan = info.makespan;
  o->points_total = o->points_max = 0;
  for (size_t g = 0; g < G->q; g++) {
    o->points_total += o->points[g];
    if (G->size[g] > 1 && o->points[g] > o->points_max)
      o->points_max = o->points[g];
  }
  free(t);
  return 0;
}

static int outcome_alloc(outcome_t *o, size_t q, size_t p) {
  o->alpha = calloc(q, sizeof *o->alpha);
  o->beta = calloc(p, sizeof *o->beta);
  o->points = calloc(q, sizeof *o->points);
  return o->alpha && o->beta && o->points ? 0 : MLSBA_ENOMEM;
}

static void outcome_free(outcome_t *o) {
  free(o->alpha);
  free(o->beta);
  free(o->points);
}

static void print_points(const grouped_t *G, const outcome_t *o) {
  printf("%zu (", o->points_total);
  for (size_t g = 0; g < G->q; g++)
    printf("%s%zu", g ? "/" : "", o->points[g]);
  printf(")");
}

static int part1(const grouped_t *G, int quick) {
  outcome_t a, f, s;
  if (outcome_alloc(&a, G->q, G->p) || outcome_alloc(&f, G->q, G->p) ||
      outcome_alloc(&s, G->q, G->p))
    return MLSBA_ENOMEM;
  int reps = quick ? 201 : 4001, reps_f = quick ? 3 : 21;
  printf("Part 1: seed-002 desktop, N = 8400 (paper: 111 points 58/45/4/4, "
         "0.9 ms MLSBA, 0.8 s MLFBA2)\n");
  for (int rule = 0; rule < 2; rule++) {
    mlsba_line_search_t search =
        rule ? MLSBA_LINE_BISECT_ANGLE : MLSBA_LINE_INTERPOLATE;
    int err = measure(G, MLSBA_ALGO_MLSBA, search, 8400, reps, &a);
    if (!err)
      err = measure(G, MLSBA_ALGO_MLFBA2, search, 8400, reps_f, &f);
    if (!err)
      err = measure(G, MLSBA_ALGO_SLBA, search, 8400, reps, &s);
    if (err)
      return err;
    printf("  line B by %s:\n",
           rule ? "angle bisection (the papers')" : "regula falsi (default)");
    double best = oracle_search(G->models, (int)G->p, 8400);
    printf("    makespan [s]   mlsba %.6f  mlfba2 %.6f  slba %.6f  "
           "brute force %.6f -> %s\n",
           a.makespan, f.makespan, s.makespan, best,
           a.makespan == best && f.makespan == best && s.makespan == best
               ? "all equal"
               : "DIFFER");
    printf("    points         mlsba ");
    print_points(G, &a);
    printf("   mlfba2 ");
    print_points(G, &f);
    printf("\n    time per call  mlsba %.1f us   mlfba2 %.2f ms   ratio %.0f"
           "\n",
           1e6 * a.median_s, 1e3 * f.median_s, f.median_s / a.median_s);
  }
  outcome_free(&a);
  outcome_free(&f);
  outcome_free(&s);
  return 0;
}

static int part2(const grouped_t *G, int quick) {
  static const int64_t sizes[] = {4800, 6000, 6600, 7200, 7680, 8040,
                                  8400, 8580, 8760, 8880, 9000, 9060};
  outcome_t a, f;
  if (outcome_alloc(&a, G->q, G->p) || outcome_alloc(&f, G->q, G->p))
    return MLSBA_ENOMEM;
  printf("\nPart 2: Table I sizes on the same desktop (its memory limits are "
         "those of the 8400 problem)\n");
  printf("  %6s %12s %12s %8s  %s\n", "N", "MLSBA [us]", "MLFBA2 [ms]", "ratio",
         "MLSBA points");
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    int err = measure(G, MLSBA_ALGO_MLSBA, MLSBA_LINE_INTERPOLATE, sizes[i],
                      quick ? 101 : 1001, &a);
    if (!err)
      err = measure(G, MLSBA_ALGO_MLFBA2, MLSBA_LINE_INTERPOLATE, sizes[i],
                    quick ? 1 : 5, &f);
    if (err)
      return err;
    printf("  %6lld %12.1f %12.2f %8.0f  ", (long long)sizes[i],
           1e6 * a.median_s, 1e3 * f.median_s, f.median_s / a.median_s);
    print_points(G, &a);
    printf("%s\n", a.makespan == f.makespan ? "" : "  (makespans differ)");
  }
  outcome_free(&a);
  outcome_free(&f);
  return 0;
}

/* q groups: every fourth group a core + accelerator pair, the rest lone
 * cores, with random speed functions of the papers' shape. */
static int part3(int quick) {
  static const size_t qs[] = {4, 64, 1024, 4096};
  static const int64_t ns[] = {1000, 1000000, 1000000000};
  size_t nq = quick ? 3 : 4;
  printf("\nPart 3: scaling (median time per MLSBA call; points of the "
         "largest multi-device group)\n");
  printf("  %6s %12s %12s %10s\n", "groups", "N", "time [ms]", "max points");
  for (size_t a = 0; a < nq; a++) {
    size_t q = qs[a];
    grouped_t G = {.q = q};
    G.size = calloc(q, sizeof *G.size);
    G.models = calloc(2 * q, sizeof *G.models);
    mlsba_model_t **own = calloc(2 * q, sizeof *own);
    if (!G.size || !G.models || !own)
      return MLSBA_ENOMEM;
    rng_t r = {.state = 42};
    for (size_t g = 0; g < q; g++) {
      G.size[g] = g % 4 == 0 ? 2 : 1;
      for (size_t d = 0; d < G.size[g]; d++) {
        own[G.p] = random_paper_model(&r, 8, 1e9 / (double)q);
        G.models[G.p] = own[G.p];
        G.p++;
      }
    }
    outcome_t o;
    if (outcome_alloc(&o, q, G.p))
      return MLSBA_ENOMEM;
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
      int reps = q >= 1024 ? (quick ? 3 : 11) : (quick ? 21 : 201);
      int err = measure(&G, MLSBA_ALGO_MLSBA, MLSBA_LINE_INTERPOLATE, ns[b],
                        reps, &o);
      if (err)
        return err;
      printf("  %6zu %12lld %12.3f %10zu\n", q, (long long)ns[b],
             1e3 * o.median_s, o.points_max);
    }
    outcome_free(&o);
    for (size_t i = 0; i < G.p; i++)
      mlsba_model_destroy(own[i]);
    free(own);
    free((void *)G.models);
    free(G.size);
  }
  return 0;
}

static int part4(void) {
  printf("\nPart 4: points over 300 random platforms (multi-device groups)\n");
  printf("  %-28s %12s %12s %12s\n", "line B", "N", "total", "worst group");
  for (int rule = 0; rule < 2; rule++) {
    for (int big = 0; big < 2; big++) {
      rng_t r = {.state = 11};
      size_t total = 0, worst = 0;
      int64_t n = big ? 1000000000 : 8400;
      for (int trial = 0; trial < 300; trial++) {
        size_t q = 2 + (size_t)trial % 8, size[16], p = 0, points[16];
        mlsba_model_t *m[64];
        int64_t alpha[16], beta[64];
        for (size_t g = 0; g < q; g++) {
          size[g] = 1 + (size_t)(trial + (int)g) % 3;
          for (size_t d = 0; d < size[g]; d++)
            m[p++] = random_paper_model(&r, 8, trial % 2 ? 1e4 : (double)n);
        }
        mlsba_partition_opts_t opts;
        mlsba_partition_opts_init(&opts);
        opts.line_search =
            rule ? MLSBA_LINE_BISECT_ANGLE : MLSBA_LINE_INTERPOLATE;
        int err = mlsba_partition_groups(
            MLSBA_ALGO_MLSBA, (const mlsba_model_t *const *)m, size, q, n,
            &opts, alpha, beta, points, NULL);
        for (size_t i = 0; i < p; i++)
          mlsba_model_destroy(m[i]);
        if (err)
          return err;
        for (size_t g = 0; g < q; g++) {
          if (size[g] < 2)
            continue;
          total += points[g];
          worst = points[g] > worst ? points[g] : worst;
        }
      }
      printf("  %-28s %12lld %12zu %12zu\n",
             rule ? "angle bisection (papers')" : "regula falsi (default)",
             (long long)n, total, worst);
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *path = MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json";
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: bench-mlsba [--platform FILE] [--quick]\n"
             "MLSBA against seed 002 on its simulated desktop, and its "
             "scaling.\n");
      return 0;
    } else if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
      path = argv[++i];
    } else {
      fprintf(stderr, "bench-mlsba: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  mlsba_platform_t *pl;
  if (mlsba_platform_load(path, &pl) != 0) {
    fprintf(stderr, "bench-mlsba: %s\n", mlsba_last_error());
    return 2;
  }
  grouped_t G = {.q = mlsba_platform_num_groups(pl),
                 .p = mlsba_platform_num_devices(pl)};
  G.models = calloc(G.p, sizeof *G.models);
  G.size = calloc(G.q, sizeof *G.size);
  int err = G.models && G.size ? 0 : MLSBA_ENOMEM;
  if (!err)
    err = mlsba_platform_grouped_models(pl, G.models, G.size);
  if (!err)
    err = part1(&G, quick);
  if (!err)
    err = part2(&G, quick);
  if (!err)
    err = part3(quick);
  if (!err)
    err = part4();
  if (err)
    fprintf(stderr, "bench-mlsba: %s\n", mlsba_last_error());
  free((void *)G.models);
  free(G.size);
  mlsba_platform_destroy(pl);
  return err ? 1 : 0;
}
