/* mlsba-info: the devices libmlsba finds on this machine and how it groups
 * them, as clinfo and lstopo would show them; optionally written as a
 * platform file to edit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/paths.h"
#include "common/text.h"
#include "info_models.h"
#include "mlsba-info_help.h" /* tools/help/mlsba-info.txt */
#include "mlsba.h"

#define EXIT_USAGE CLI_EXIT_USAGE

static const char *prog = "mlsba-info";

static const char *type_name(mlsba_device_type_t t) {
  return t == MLSBA_DEVICE_CPU      ? "cpu"
         : t == MLSBA_DEVICE_OPENCL ? "opencl"
                                    : "sim";
}

/* Appends "sep name " to text at len (within size); the new length. */
static size_t append(char *text, size_t size, size_t len, const char *sep,
                     const char *name) {
  int n = snprintf(text + len, size - len, "%s%s ", sep, name);
  return n < 0 || (size_t)n >= size - len ? size - 1 : len + (size_t)n;
}

/* Devices sorted by kind, then index; qsort has no context argument. */
static const mlsba_platform_t *sorting;

static const char *kind_of(size_t i) {
  mlsba_device_info_t info;
  mlsba_platform_device_info(sorting, i, &info);
  return info.kind ? info.kind : "";
}

static int by_kind(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  int c = strcmp(kind_of(i), kind_of(j));
  return c ? c : (i > j) - (i < j);
}

static int by_first(const void *a, const void *b) {
  const size_t *x = a, *y = b; /* {first device, start in the order} */
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Each kind of two devices or more once, in the order of its first
 * device, with its devices: they pool their runs. From the devices sorted
 * by kind, so that 10^5 cores of one kind print in O(p log p) (comparing
 * every pair took hours). text: room for one line's names. */
static void print_kinds(const mlsba_platform_t *pl, size_t p, char *text,
                        size_t size) {
  size_t *order = malloc(p * sizeof *order);
  size_t *runs = malloc(2 * p * sizeof *runs), nruns = 0;
  if (order == NULL || runs == NULL) {
    free(order);
    free(runs);
    return;
  }
  for (size_t i = 0; i < p; i++)
    order[i] = i;
  sorting = pl;
  qsort(order, p, sizeof *order, by_kind);
  for (size_t a = 0, b; a < p; a = b) {
    for (b = a + 1; b < p && !strcmp(kind_of(order[a]), kind_of(order[b])); b++)
      ;
    if (b - a >= 2 && kind_of(order[a])[0] != '\0') {
      runs[2 * nruns] = order[a];
      runs[2 * nruns + 1] = a;
      nruns++;
    }
  }
  qsort(runs, nruns, 2 * sizeof *runs, by_first);
  for (size_t r = 0; r < nruns; r++) {
    if (r == 0)
      printf("\nkinds (the same hardware: the balancer pools their runs):\n");
    const char *kind = kind_of(runs[2 * r]);
    size_t len = 0;
    for (size_t k = runs[2 * r + 1]; k < p && !strcmp(kind_of(order[k]), kind);
         k++)
      len =
          append(text, size, len, "", mlsba_platform_device_name(pl, order[k]));
    char head[64];
    snprintf(head, sizeof head, "  %.40s: ", kind);
    text_wrap(stdout, head, 4, text);
  }
  free(order);
  free(runs);
}

/* The cores' kernels: which, and how they were chosen, when the platform
 * has a core. */
static void print_cpu_kernels(const mlsba_platform_t *pl, size_t p) {
  size_t cores = 0;
  for (size_t i = 0; i < p; i++)
    cores += mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU;
  if (cores == 0)
    return;
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  char text[768];
  /* And what the choice cost this process: timed (a second or so, once
   * per machine), or read back from the cache in milliseconds. */
  const char *source;
  double choice_s, setup_s;
  mlsba_cpu_kernels_choice(&source, &choice_s, &setup_s);
  snprintf(text, sizeof text,
           "%s (BLIS detected: %s); %s; in this process: %s, choice %.3f s, "
           "setup %.3f s",
           k.library, k.detected, k.reason, source, choice_s, setup_s);
  printf("\n");
  text_wrap(stdout, "cpu kernels: ", 4, text);
  /* Per shape class: the kernels, and their speed on one core when they
   * were timed. */
  for (int prec = 0; prec < 2; prec++) {
    size_t len = 0;
    for (int c = 0; c < MLSBA_CPU_CLASS_COUNT && len < sizeof text; c++) {
      const char *name, *kernels;
      double g;
      mlsba_cpu_class_kernels((mlsba_precision_t)prec, (mlsba_cpu_class_t)c,
                              &name, &kernels, &g);
      char speed[32] = "";
      if (g > 0)
        snprintf(speed, sizeof speed, " %.1f", g);
      int w = snprintf(text + len, sizeof text - len, "%s%s %s%s",
                       c ? ", " : "", name, kernels, speed);
      len = w > 0 ? len + (size_t)w : len;
    }
    text_wrap(stdout, prec ? "  double: " : "  single: ", 4, text);
  }
}

/* The links the platform carries (the file's, or measured). */
static void print_links(const mlsba_platform_t *pl, size_t p) {
  mlsba_link_t l;
  int any = (mlsba_platform_network(pl, &l) == 0 && l.bandwidth > 0) ||
            (mlsba_platform_memory(pl, &l) == 0 && l.bandwidth > 0);
  for (size_t i = 0; i < p && !any; i++)
    any = mlsba_platform_device_link(pl, i, &l) == 0 && l.bandwidth > 0;
  if (!any)
    return;
  printf("\nlinks (latency, bandwidth):\n");
  if (mlsba_platform_network(pl, &l) == 0 && l.bandwidth > 0)
    printf("  %-10s %10.3g us %10.4g GB/s\n", "network", 1e6 * l.latency,
           l.bandwidth / 1e9);
  if (mlsba_platform_memory(pl, &l) == 0 && l.bandwidth > 0)
    printf("  %-10s %10.3g us %10.4g GB/s\n", "memory", 1e6 * l.latency,
           l.bandwidth / 1e9);
  for (size_t i = 0; i < p; i++)
    if (mlsba_platform_device_link(pl, i, &l) == 0 && l.bandwidth > 0)
      printf("  %-10s %10.3g us %10.4g GB/s\n",
             mlsba_platform_device_name(pl, i), 1e6 * l.latency,
             l.bandwidth / 1e9);
}

/* --measure-links: every device's host link timed (an accelerator's bus)
 * and kept in the platform, so that --write saves it. */
static int measure_links(mlsba_platform_t *pl) {
  size_t p = mlsba_platform_num_devices(pl);
  mlsba_executor_t *ex = NULL;
  mlsba_link_t *links = calloc(p ? p : 1, sizeof *links);
  int err = links ? mlsba_executor_create(pl, &ex) : MLSBA_ENOMEM;
  if (!err)
    err = mlsba_executor_measure_links(ex, links);
  for (size_t i = 0; !err && i < p; i++)
    if (links[i].bandwidth > 0)
      err = mlsba_platform_set_device_link(pl, i, &links[i]);
  mlsba_executor_destroy(ex);
  free(links);
  if (err)
    fprintf(stderr, "%s: --measure-links: %s\n", prog,
            err == MLSBA_ENOMEM ? "out of memory" : mlsba_last_error());
  return err ? 1 : 0;
}

static void print_platform(const mlsba_platform_t *pl) {
  size_t p = mlsba_platform_num_devices(pl), q = mlsba_platform_num_groups(pl);
  printf("platform %s: %zu device%s in %zu group%s\n\n",
         mlsba_platform_name(pl), p, p == 1 ? "" : "s", q, q == 1 ? "" : "s");
  /* The model and the driver in full, wrapped under their column: 80
   * columns, nothing cut. */
  printf("%-8s %-7s %-6s %-10s %s\n", "device", "type", "CUs", "memory",
         "model / driver");
  for (size_t i = 0; i < p; i++) {
    mlsba_device_info_t info;
    mlsba_platform_device_info(pl, i, &info);
    char mem[32] = "-", units[16] = "-";
    const mlsba_model_t *profile = mlsba_platform_device_model(pl, i);
    if (info.memory_bytes)
      snprintf(mem, sizeof mem, "%.2f GiB",
               (double)info.memory_bytes / (1024.0 * 1024.0 * 1024.0));
    else if (profile && mlsba_model_max_load(profile) > 0)
      snprintf(mem, sizeof mem, "max %lld",
               (long long)mlsba_model_max_load(profile));
    if (info.compute_units)
      snprintf(units, sizeof units, "%u", info.compute_units);
    const char *model = info.model[0] ? info.model : "-";
    if (mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_SIM)
      model = "speed profile";
    char head[64];
    snprintf(head, sizeof head, "%-8s %-7s %-6s %-10s ",
             mlsba_platform_device_name(pl, i),
             type_name(mlsba_platform_device_type(pl, i)), units, mem);
    text_wrap(stdout, head, 35, model);
    if (info.driver[0])
      text_wrap(stdout, "                                   ", 37, info.driver);
  }
  printf("\nCUs: compute units; memory: a simulated device's "
         "max_load, in units\n");
  int64_t cm, ck;
  if (mlsba_platform_columns_of(pl, &cm, &ck))
    printf("simulated speeds: columns of an m=%lld k=%lld product "
           "(columns_of)\n",
           (long long)cm, (long long)ck);
  printf("\ngroups (the first device drives the others):\n");
  char text[2048], head[64];
  for (size_t g = 0; g < q; g++) {
    size_t len = 0;
    for (size_t k = 0; k < mlsba_platform_group_size(pl, g); k++)
      len = append(text, sizeof text, len, k ? "+ " : "",
                   mlsba_platform_device_name(
                       pl, mlsba_platform_group_device(pl, g, k)));
    snprintf(head, sizeof head, "  group %zu: ", g);
    text_wrap(stdout, head, 4, text);
  }
  print_kinds(pl, p, text, sizeof text);
  print_cpu_kernels(pl, p);
  print_links(pl, p);
}

/* A platform file may name devices this machine lacks ("core": 7 on two
 * cores): the devices are opened, as mlsba-bench would, and a device that
 * cannot be is named. 0, or 1 after the line. */
static int check_here(const mlsba_platform_t *pl) {
  mlsba_executor_t *ex = NULL;
  if (mlsba_executor_create(pl, &ex) == 0) {
    mlsba_executor_destroy(ex);
    return 0;
  }
  char head[64];
  snprintf(head, sizeof head, "%s: ", prog);
  fflush(stdout);
  text_wrap(stderr, head, 4, mlsba_last_error());
  fprintf(stderr,
          "%s: this machine cannot run the platform (mlsba-bench refuses "
          "it here)\n",
          prog);
  return 1;
}

/* --list-models and --show-model: the saved models of this machine (or
 * of --models DIR). */
static int saved_models(const char *models, int list, const char *show,
                        const char *plot) {
  char dir[4096];
  int status = 0;
  if (models)
    snprintf(dir, sizeof dir, "%s", models);
  else if ((status = paths_models(prog, "", 0, dir, sizeof dir)) == 0 &&
           dir[0] == '\0') {
    text_error(prog, "MLSBA_CACHE_DIR=none keeps no saved models: name "
                     "their folder with --models DIR");
    status = CLI_EXIT_USAGE;
  }
  if (!status && plot)
    status = paths_make_dir(prog, "--plot", plot);
  if (!status && list)
    status = info_list_models(prog, dir);
  if (!status && show)
    status = info_show_model(prog, dir, show, plot);
  return cli_finish_stdout(prog) != 0 && status == 0 ? 1 : status;
}

/* The command line: what tools/help/mlsba-info.txt lists. */
typedef struct {
  const char *platform, *write, *models, *show, *plot;
  int list, measure;
} args_t;

static const opt_t options[] = {
    {"--platform", OPT_TEXT, OPT_AT(args_t, platform)},
    {"--write", OPT_TEXT, OPT_AT(args_t, write)},
    {"--measure-links", OPT_FLAG, OPT_AT(args_t, measure)},
    {"--list-models", OPT_FLAG, OPT_AT(args_t, list)},
    {"--show-model", OPT_TEXT, OPT_AT(args_t, show)},
    {"--models", OPT_TEXT, OPT_AT(args_t, models), .nonempty = 1,
     .must = "a folder path"},
    {"--plot", OPT_TEXT, OPT_AT(args_t, plot)},
};

/* The options that go together or exclude each other: 0, or the exit
 * status after a line naming the problem. */
static int check_args(args_t *a) {
  if ((a->list || a->show) && (a->platform || a->write || a->measure))
    return cli_usage_error(prog,
                           "--list-models and --show-model look at saved "
                           "models, not at a platform: ",
                           a->platform ? "--platform"
                           : a->write  ? "--write"
                                       : "--measure-links");
  if (a->plot && !a->show)
    return cli_usage_error(prog, "--plot DIR draws the model of --show-model",
                           "");
  if (a->models && !a->list && !a->show)
    return cli_usage_error(prog,
                           "--models DIR goes with --list-models or "
                           "--show-model",
                           "");
  return 0;
}

/* The command line read and checked: OPTS_RUN to go on; otherwise the
 * tool ends with *status (after --help, --version or a line naming the
 * problem). */
static int parse_args(int argc, char **argv, args_t *a, int *status) {
  *a = (args_t){0};
  const opts_table_t table = OPTS_TABLE(options);
  int outcome = opts_read(prog, mlsba_info_help, &table, argc, argv, a, status);
  if (outcome == OPTS_RUN && (*status = check_args(a)) != 0)
    return OPTS_USAGE;
  return outcome;
}

int main(int argc, char **argv) {
  args_t a;
  int status = 0;
  if (parse_args(argc, argv, &a, &status) != OPTS_RUN)
    return status;
  if (a.list || a.show)
    return saved_models(a.models, a.list, a.show, a.plot);
  const char *platform = a.platform ? a.platform : "auto";
  status = a.write ? paths_check_output_file(prog, "--write", a.write) : 0;
  mlsba_platform_t *pl = NULL;
  if (!status)
    status = paths_load_platform(prog, platform, &pl);
  if (!status && a.measure)
    status = measure_links(pl);
  if (status) {
    mlsba_platform_destroy(pl);
    return status;
  }
  print_platform(pl);
  status = check_here(pl);
  if (a.write) {
    if (mlsba_platform_save(pl, a.write) != 0) {
      text_error(prog, "--write: %s", mlsba_last_error());
      status = 1;
    } else {
      printf("\nwrote %s\n", a.write);
    }
  }
  mlsba_platform_destroy(pl);
  return cli_finish_stdout(prog) != 0 && status == 0 ? 1 : status;
}
