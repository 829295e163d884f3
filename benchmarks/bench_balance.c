/* The self-adaptive routine on the simulated seed-002 desktop, where the
 * optimum is known: iterations and final makespan against the optimum,
 * without noise and over many seeds of 3% timing noise, for every
 * algorithm.
 *
 *   bench-balance [--platform FILE] [--seeds S] [--noise X] [--separate-kinds]
 */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlsba.h"

#ifndef MLSBA_SOURCE_DIR
#define MLSBA_SOURCE_DIR "."
#endif

static mlsba_platform_t *with_noise(const char *path, double noise, int seed) {
  json_error_t e;
  json_t *root = json_load_file(path, 0, &e);
  if (root == NULL)
    return NULL;
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(root, "devices"), i, d) {
    json_object_set_new(d, "noise", json_real(noise));
    json_object_set_new(d, "seed", json_integer(seed * 16 + (int)i));
  }
  char *text = json_dumps(root, 0);
  mlsba_platform_t *pl = NULL;
  if (mlsba_platform_parse(text, path, &pl) != 0)
    pl = NULL;
  free(text);
  json_decref(root);
  return pl;
}

/* Optimum of the noiseless profiles (flat SLBA: exact), and the true
 * makespan of a distribution on them. */
static double optimum(const mlsba_platform_t *pl, int64_t n) {
  size_t p = mlsba_platform_num_devices(pl), q = mlsba_platform_num_groups(pl);
  const mlsba_model_t **m = calloc(p, sizeof *m);
  size_t *size = calloc(q, sizeof *size);
  int64_t *alpha = calloc(q, sizeof *alpha), *beta = calloc(p, sizeof *beta);
  mlsba_partition_info_t info = {0};
  if (m && size && alpha && beta &&
      mlsba_platform_grouped_models(pl, m, size) == 0)
    mlsba_partition_groups(MLSBA_ALGO_SLBA, m, size, q, n, NULL, alpha, beta,
                           NULL, &info);
  free((void *)m);
  free(size);
  free(alpha);
  free(beta);
  return info.makespan;
}

static double true_makespan(const mlsba_platform_t *pl, const int64_t *load) {
  double worst = 0, t;
  for (size_t j = 0; j < mlsba_platform_num_devices(pl); j++)
    if (mlsba_model_time(mlsba_platform_device_model(pl, j), (double)load[j],
                         &t) == 0 &&
        t > worst)
      worst = t;
  return worst;
}

int main(int argc, char **argv) {
  const char *path = MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json";
  int seeds = 100;
  double noise = 0.03;
  mlsba_kinds_t kinds = MLSBA_KINDS_POOL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: bench-balance [--platform FILE] [--seeds S] "
             "[--noise X] [--separate-kinds]\n");
      return 0;
    } else if (!strcmp(argv[i], "--platform") && i + 1 < argc) {
      path = argv[++i];
    } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
      seeds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--noise") && i + 1 < argc) {
      noise = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--separate-kinds")) {
      kinds = MLSBA_KINDS_SEPARATE;
    } else {
      fprintf(stderr, "bench-balance: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  static float dummy; /* simulated devices compute nothing */
  mlsba_gemm_t g = {
      .m = 1, .n = 8400, .k = 1, .a = &dummy, .b = &dummy, .c = &dummy};
  printf("self-adaptive balancing on %s, N = %lld%s\n\n", path, (long long)g.n,
         kinds == MLSBA_KINDS_SEPARATE ? ", every device modelled alone" : "");
  printf("%-13s %-22s %-16s %s\n", "algorithm", "no noise: iterations",
         "vs optimum", "stop");
  for (int a = 0; a < MLSBA_ALGO_COUNT; a++) {
    mlsba_platform_t *pl = with_noise(path, 0, 1);
    mlsba_executor_t *ex = NULL;
    if (pl == NULL || mlsba_executor_create(pl, &ex) != 0) {
      fprintf(stderr, "bench-balance: %s\n", mlsba_last_error());
      return 1;
    }
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.algorithm = (mlsba_algorithm_t)a;
    o.kinds = kinds;
    mlsba_balance_result_t r;
    if (mlsba_balance_gemm(ex, &g, &o, &r) != 0) {
      fprintf(stderr, "bench-balance: %s\n", mlsba_last_error());
      return 1;
    }
    printf("%-13s %-22u %-16.4f %s\n", mlsba_algorithm_name(o.algorithm),
           r.iterations, true_makespan(pl, r.load) / optimum(pl, g.n),
           mlsba_stop_reason_name(r.stop));
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  printf("\nmlsba with %.0f%% timing noise over %d seeds:\n", 100 * noise,
         seeds);
  int within5 = 0, within8 = 0, converged = 0;
  unsigned maxit = 0;
  double sumit = 0, worst = 0, sum_ratio = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    mlsba_platform_t *pl = with_noise(path, noise, seed);
    mlsba_executor_t *ex = NULL;
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.kinds = kinds;
    mlsba_balance_result_t r;
    if (pl == NULL || mlsba_executor_create(pl, &ex) != 0 ||
        mlsba_balance_gemm(ex, &g, &o, &r) != 0) {
      fprintf(stderr, "bench-balance: %s\n", mlsba_last_error());
      return 1;
    }
    double ratio = true_makespan(pl, r.load) / optimum(pl, g.n);
    within5 += ratio <= 1.05;
    if (ratio > 1.05) /* what the misses have in common */
      printf("  seed %3d: %.4f of the optimum after %u iterations (%s)\n", seed,
             ratio, r.iterations, mlsba_stop_reason_name(r.stop));
    within8 += r.iterations <= 8;
    converged += r.converged;
    maxit = r.iterations > maxit ? r.iterations : maxit;
    sumit += r.iterations;
    sum_ratio += ratio;
    worst = ratio > worst ? ratio : worst;
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  printf("  converged %d/%d; iterations mean %.2f, max %u, within 8: %d\n",
         converged, seeds, sumit / seeds, maxit, within8);
  printf("  final makespan / optimum (noiseless): mean %.4f, worst %.4f, "
         "within 5%%: %d/%d\n",
         sum_ratio / seeds, worst, within5, seeds);

  /* Warm start: the same run twice over one model directory. */
  printf("\nwarm start (models saved by a first run, then the same run):\n");
  char dir[] = "/tmp/mlsba-bench-models-XXXXXX";
  if (mkdtemp(dir) == NULL) {
    perror("bench-balance: mkdtemp");
    return 1;
  }
  int max_warm = 0, warm_converged = 0, warm_within5 = 0;
  for (int seed = 1; seed <= seeds; seed++) {
    mlsba_platform_t *pl = with_noise(path, noise, seed);
    mlsba_executor_t *ex = NULL;
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.model_dir = dir;
    o.kinds = kinds;
    mlsba_balance_result_t cold, warm;
    if (pl == NULL || mlsba_executor_create(pl, &ex) != 0 ||
        mlsba_balance_gemm(ex, &g, &o, &cold) != 0 ||
        mlsba_balance_gemm(ex, &g, &o, &warm) != 0) {
      fprintf(stderr, "bench-balance: %s\n", mlsba_last_error());
      return 1;
    }
    max_warm =
        (int)warm.iterations > max_warm ? (int)warm.iterations : max_warm;
    warm_converged += warm.converged;
    warm_within5 += true_makespan(pl, warm.load) <= 1.05 * optimum(pl, g.n);
    mlsba_balance_result_free(&cold);
    mlsba_balance_result_free(&warm);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  printf("  %.0f%% noise, %d seeds: second run converged %d/%d, at most %d "
         "%s, within 5%% of the optimum %d/%d\n",
         100 * noise, seeds, warm_converged, seeds, max_warm,
         max_warm == 1 ? "iteration" : "iterations", warm_within5, seeds);
  /* The model files, then the folder: no shell. */
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      unlinkat(dirfd(d), e->d_name, 0);
  if (d)
    closedir(d);
  if (rmdir(dir) != 0)
    fprintf(stderr, "bench-balance: could not remove %s\n", dir);
  return 0;
}
