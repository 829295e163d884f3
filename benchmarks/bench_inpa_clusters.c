/* INPA against the three constant-model baselines (seed 000 §4) on random
 * simulated clusters: the head of mlsba-inpa driven by nodes whose time
 * for a rectangle of m x n blocks is a pure function of it, as a run of
 * the 2-D product under SimGrid would measure it with sim devices.
 *
 * A cluster has 3-16 nodes on a grid of 16-128 blocks a side; node peak
 * speeds are spread over 2x, 10x or 100x (the slowest at 1, the fastest
 * at the spread, the rest log-uniform between). Each node's speed as a
 * function of its area has one of four shapes: constant; rising (small
 * problems underuse it); a cliff (an accelerator whose memory runs out);
 * cache-bound. With --comm S, every node also pays, per step of the
 * product, a transfer of its A and B panels, proportional to its
 * rectangle's half-perimeter m + n, with S setting that cost against the
 * compute of an even share on a node of speed 1 (0: compute only), and
 * --link-spread L gives each node its own link, the transfer times 1 to
 * L (log-uniform; default 1: one link for all). Time
 * of a run: nb steps of (compute + transfer). The node models of INPA see
 * only the area, so with --comm they are wrong by the half-perimeter.
 *
 * With --comm, INPA also runs with the transfer in its node models
 * ("inpa+comm": the head's comm_per_block, exactly the transfer here, as
 * mlsba-inpa --comm-model links gives it from the ranks' links), fed the
 * compute part of each run as the MPI layer's nodes measure it; both
 * INPAs are compared with the best baseline.
 *
 * Every algorithm runs to its own stop (eps 0.05, max-iter 20); the
 * makespan compared is its result's (the head's final request, its last
 * run) and its best run's (what mlsba-inpa's product runs: the fastest
 * distribution measured).
 *
 *   bench-inpa-clusters [--cases N] [--seed S] [--comm S] [--link-spread L]
 *                       [--verbose]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/inpa.h"
#include "support/node_shapes.h"
#include "support/random_models.h"

#define MAXQ 16

static const char *const shape_names[] = {"constant", "rising", "cliff",
                                          "cache"};

typedef struct {
  size_t q;
  int64_t nb;
  double spread, comm; /* comm: seconds per block of half-perimeter */
  double link[MAXQ];   /* each node's transfer, times comm */
  node_t node[MAXQ];
} cluster_t;

/* One run of the product on node i's rectangle: nb steps, each the
 * step's share of the compute (1 / nb of the area's time) and the panels'
 * transfer. */
static double compute_time(const cluster_t *c, size_t i,
                           const mlsba__cma_rect_t *r) {
  double a = (double)(r->m * r->n);
  return a / node_speed(&c->node[i], a);
}

/* Node i's transfer over the nb steps: seconds per block of
 * half-perimeter. */
static double transfer_per_block(const cluster_t *c, size_t i) {
  return (double)c->nb * c->comm * c->link[i];
}

static double run_time(const cluster_t *c, size_t i,
                       const mlsba__cma_rect_t *r) {
  return compute_time(c, i, r) +
         transfer_per_block(c, i) * (double)(r->m + r->n);
}

/* links: its own generator, so that --link-spread leaves the clusters
 * as they are. */
static void draw(rng_t *r, rng_t *links, double link_spread, cluster_t *c,
                 double spread, double comm_share) {
  c->q = (size_t)rng_range(r, 3, MAXQ);
  c->nb = rng_range(r, 16, 128);
  c->spread = spread;
  double W = (double)(c->nb * c->nb), even = W / (double)c->q;
  for (size_t i = 0; i < c->q; i++) {
    double peak = i == 0   ? 1
                  : i == 1 ? spread
                           : exp(log(spread) * rng_uniform(r));
    c->node[i] = (node_t){
        (shape_t)rng_range(r, 0, 3), peak, even * (0.05 + 0.5 * rng_uniform(r)),
        even * (0.3 + 2 * rng_uniform(r)), 1 + 2 * rng_uniform(r)};
  }
  /* Shuffle, so the fastest and the slowest are not always nodes 0, 1. */
  for (size_t i = c->q - 1; i > 0; i--) {
    size_t j = (size_t)rng_range(r, 0, (int64_t)i);
    node_t t = c->node[i];
    c->node[i] = c->node[j];
    c->node[j] = t;
  }
  /* A square share of the even area has half-perimeter 2 sqrt(even);
   * over nb steps its transfer is comm_share of its compute at speed 1. */
  c->comm = comm_share * even / ((double)c->nb * 2 * sqrt(even));
  /* Each node's link: the transfer times 1 to link_spread, log-uniform
   * (1 for all with the default spread). */
  for (size_t i = 0; i < c->q; i++)
    c->link[i] = exp(log(link_spread) * rng_uniform(links));
}

typedef struct {
  double last, best; /* makespans */
  mlsba_stop_reason_t stop;
  size_t runs;
} outcome_t;

static double makespan_of(const mlsba__inpa_record_t *rec, size_t q) {
  double worst = 0;
  for (size_t i = 0; i < q; i++)
    worst = rec->t[i] > worst ? rec->t[i] : worst;
  return worst;
}

static int trace;

static void print_history(const mlsba__inpa_t *h, size_t q) {
  for (size_t k = 0; k < mlsba__inpa_iterations(h); k++) {
    const mlsba__inpa_record_t *rec = mlsba__inpa_history(h, k);
    printf("    run %zu:", k + 1);
    for (size_t i = 0; i < q; i++)
      printf(" %lldx%lld@c%zu=%.4g", (long long)rec->rect[i].m,
             (long long)rec->rect[i].n, rec->rect[i].column, rec->t[i]);
    printf("\n");
  }
}

/* with_comm: the head is told each node's transfer and fed its compute
 * alone; otherwise it is fed the whole time of each run. */
static int drive(const cluster_t *c, mlsba__inpa_algo_t algo, int with_comm,
                 outcome_t *out) {
  mlsba__inpa_opts_t o;
  mlsba__inpa_opts_init(&o);
  o.algo = algo;
  double fixed[MAXQ], per[MAXQ];
  for (size_t i = 0; i < c->q; i++) {
    fixed[i] = 0;
    per[i] = transfer_per_block(c, i);
  }
  if (with_comm) {
    o.comm_fixed = fixed;
    o.comm_per_block = per;
  }
  mlsba__inpa_t *h = NULL;
  int err = mlsba__inpa_create(c->q, c->nb, &o, &h);
  double t[MAXQ];
  while (!err && mlsba__inpa_phase(h) != MLSBA__INPA_DONE) {
    const mlsba__cma_rect_t *r = mlsba__inpa_rects(h);
    for (size_t i = 0; i < c->q; i++)
      t[i] = with_comm ? compute_time(c, i, &r[i]) : run_time(c, i, &r[i]);
    err = mlsba__inpa_feed(h, t);
  }
  if (!err) {
    size_t n = mlsba__inpa_iterations(h);
    /* The head's result, its last run (a pure function of the rectangles
     * here). */
    const mlsba__cma_rect_t *r = mlsba__inpa_rects(h);
    out->last = 0;
    for (size_t i = 0; i < c->q; i++)
      out->last = fmax(out->last, run_time(c, i, &r[i]));
    out->best =
        makespan_of(mlsba__inpa_history(h, mlsba__inpa_best_run(h)), c->q);
    out->stop = mlsba__inpa_stop(h);
    out->runs = n;
    if (trace) {
      printf("  %s%s:\n", mlsba__inpa_algo_name(algo),
             with_comm ? "+comm" : "");
      print_history(h, c->q);
    }
  } else {
    fprintf(stderr, "bench-inpa-clusters: %s\n", mlsba_last_error());
  }
  mlsba__inpa_destroy(h);
  return err;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  int n, within2, within5, wins, stops[4];
  double ratio[4096], worst;
} tally_t;

static void tally(tally_t *T, double ratio, mlsba_stop_reason_t stop) {
  T->ratio[T->n++] = ratio;
  T->within2 += ratio <= 1.02;
  T->within5 += ratio <= 1.05;
  T->wins += ratio <= 1.0;
  T->stops[stop]++;
  T->worst = ratio > T->worst ? ratio : T->worst;
}

static void print_tally(const char *label, tally_t *T) {
  qsort(T->ratio, (size_t)T->n, sizeof T->ratio[0], by_value);
  printf("%-10s %5d %8.4f %8.4f %8.4f %6.1f%% %6.1f%% %6.1f%%  %3d %3d %3d "
         "%3d\n",
         label, T->n, T->ratio[T->n / 2], T->ratio[(T->n * 95) / 100], T->worst,
         100.0 * T->wins / T->n, 100.0 * T->within2 / T->n,
         100.0 * T->within5 / T->n, T->stops[MLSBA_STOP_BALANCED],
         T->stops[MLSBA_STOP_FIXED_POINT], T->stops[MLSBA_STOP_CYCLE],
         T->stops[MLSBA_STOP_MAX_ITER]);
}

static int usage(FILE *f, int status) {
  fprintf(f,
          "usage: bench-inpa-clusters [--cases N] [--seed S] [--comm S] "
          "[--link-spread L] [--verbose]\n"
          "INPA against multiple-CPM, single-CPM and homogeneous on N random\n"
          "simulated clusters per speed spread (2x, 10x, 100x; default 40).\n");
  return status;
}

int main(int argc, char **argv) {
  int cases = 40, verbose = 0;
  unsigned long long seed = 24;
  double comm = 0, link_spread = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
      return usage(stdout, 0);
    if (!strcmp(argv[i], "--verbose"))
      verbose = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--trace"))
      trace = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--cases"))
      cases = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
      seed = strtoull(argv[++i], NULL, 10);
    else if (i + 1 < argc && !strcmp(argv[i], "--comm"))
      comm = atof(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--link-spread"))
      link_spread = atof(argv[++i]);
    else
      return usage(stderr, 2);
  }
  if (cases < 1 || cases > 1000 || !(comm >= 0) || !(link_spread >= 1) ||
      !isfinite(link_spread)) {
    fprintf(stderr, "bench-inpa-clusters: --cases is 1 to 1000, --comm >= 0, "
                    "--link-spread >= 1\n");
    return 2;
  }
  const double spreads[3] = {2, 10, 100};
  /* per INPA (area-only, with comm), per spread, then all */
  static tally_t last[2][4], best[2][4];
  int nvariants = comm > 0 ? 2 : 1;
  rng_t r = {.state = seed}, links = {.state = seed ^ 0x6c696e6bu};
  static double versus[3000]; /* inpa+comm's best run / INPA's */
  int nversus = 0;
  for (int s = 0; s < 3; s++) {
    for (int k = 0; k < cases; k++) {
      cluster_t c;
      draw(&r, &links, link_spread, &c, spreads[s], comm);
      /* the four algorithms, then INPA with the transfer in its models */
      outcome_t o[MLSBA__INPA_ALGO_COUNT + 1];
      int traced = trace;
      trace = trace && s * cases + k + 1 == traced;
      if (trace)
        printf("case %d:\n", s * cases + k + 1);
      for (int a = 0; a < MLSBA__INPA_ALGO_COUNT; a++)
        if (drive(&c, (mlsba__inpa_algo_t)a, 0, &o[a]))
          return 1;
      if (nvariants == 2 &&
          drive(&c, MLSBA__INPA_FPM, 1, &o[MLSBA__INPA_ALGO_COUNT]))
        return 1;
      trace = traced;
      double base_last = INFINITY, base_best = INFINITY;
      for (int a = 1; a < MLSBA__INPA_ALGO_COUNT; a++) {
        base_last = fmin(base_last, o[a].last);
        base_best = fmin(base_best, o[a].best);
      }
      double rl = o[0].last / base_last, rb = o[0].best / base_best;
      if (nvariants == 2)
        versus[nversus++] = o[MLSBA__INPA_ALGO_COUNT].best / o[0].best;
      for (int v = 0; v < nvariants; v++) {
        const outcome_t *in = &o[v ? MLSBA__INPA_ALGO_COUNT : 0];
        double vl = in->last / base_last, vb = in->best / base_best;
        tally(&last[v][s], vl, in->stop);
        tally(&last[v][3], vl, in->stop);
        tally(&best[v][s], vb, in->stop);
        tally(&best[v][3], vb, in->stop);
      }
      if (verbose) {
        printf("spread %3.0fx q %2zu nb %3lld: inpa %.4g (%s, %zu runs), "
               "multiple %.4g, single %.4g, homogeneous %.4g: last %.4f best "
               "%.4f",
               spreads[s], c.q, (long long)c.nb, o[0].last,
               mlsba_stop_reason_name(o[0].stop), o[0].runs, o[1].last,
               o[2].last, o[3].last, rl, rb);
        if (nvariants == 2)
          printf(" inpa+comm %.4g (%s, %zu runs): last %.4f best %.4f",
                 o[4].last, mlsba_stop_reason_name(o[4].stop), o[4].runs,
                 o[4].last / base_last, o[4].best / base_best);
        printf(" shapes");
        for (size_t i = 0; i < c.q; i++)
          printf(" %s:%.3g", shape_names[c.node[i].shape], c.node[i].peak);
        printf("\n");
      }
    }
  }
  printf("INPA's makespan / the best CPM baseline's, %d clusters per spread, "
         "comm %g, link spread %g, seed %llu\n",
         cases, comm, link_spread, seed);
  const char *labels[4] = {"2x", "10x", "100x", "all"};
  for (int v = 0; v < nvariants; v++) {
    for (int pass = 0; pass < 2; pass++) {
      printf("\n%s, %s of each algorithm:\n",
             v ? "INPA with the transfer in its node models (inpa+comm)"
               : "INPA",
             pass ? "the best run" : "the result (the head's final request)");
      printf("%-10s %5s %8s %8s %8s %7s %7s %7s  %3s %3s %3s %3s\n", "spread",
             "cases", "median", "p95", "max", "<=1", "<=1.02", "<=1.05", "bal",
             "fix", "cyc", "max");
      for (int s = 0; s < 4; s++)
        print_tally(labels[s], pass ? &best[v][s] : &last[v][s]);
    }
  }
  if (nversus > 0) {
    qsort(versus, (size_t)nversus, sizeof versus[0], by_value);
    int better = 0, worse = 0;
    for (int k = 0; k < nversus; k++) {
      better += versus[k] < 0.99;
      worse += versus[k] > 1.01;
    }
    printf("\ninpa+comm's best run / INPA's: min %.4f median %.4f max %.4f; "
           "more than 1%% faster in %d, slower in %d of %d\n",
           versus[0], versus[nversus / 2], versus[nversus - 1], better, worse,
           nversus);
  }
  printf("\nbal/fix/cyc/max: how INPA stopped (balanced, fixed point, cycle, "
         "max-iter)\n");
  return 0;
}
