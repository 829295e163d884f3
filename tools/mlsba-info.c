/* mlsba-info: the devices libmlsba finds on this machine and how it groups
 * them, as clinfo and lstopo would show them; optionally written as a
 * platform file to edit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "mlsba.h"

#define EXIT_USAGE CLI_EXIT_USAGE

static const char *prog = "mlsba-info";

static void usage(FILE *f) {
  fprintf(f,
          "usage: %s [--platform auto|FILE] [--write FILE]\n"
          "\n"
          "Show the devices of a platform and its processing groups. The\n"
          "default, auto, discovers every CPU core (hwloc) and every OpenCL\n"
          "device, and pairs accelerator i with core i.\n"
          "\n"
          "  --platform auto|FILE  the platform to show (default: auto)\n"
          "  --write FILE          also write it as a platform file\n"
          "  --help, --version\n",
          prog);
}

static const char *type_name(mlsba_device_type_t t) {
  return t == MLSBA_DEVICE_CPU      ? "cpu"
         : t == MLSBA_DEVICE_OPENCL ? "opencl"
                                    : "sim";
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
  const size_t *x = a, *y = b; /* {first device, start in order} */
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Each kind of two devices or more once, in the order of its first
 * device, with its devices: they pool their runs. Sorted, so that 10^5
 * devices of one kind print in O(p log p) (comparing every pair took
 * hours). */
static void print_kinds(const mlsba_platform_t *pl, size_t p) {
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
    for (b = a + 1; b < p && strcmp(kind_of(order[a]), kind_of(order[b])) == 0;
         b++)
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
    printf("  %s:", kind);
    for (size_t k = runs[2 * r + 1]; k < p && !strcmp(kind_of(order[k]), kind);
         k++)
      printf(" %s", mlsba_platform_device_name(pl, order[k]));
    printf("\n");
  }
  free(order);
  free(runs);
}

static void print_platform(const mlsba_platform_t *pl) {
  size_t p = mlsba_platform_num_devices(pl), q = mlsba_platform_num_groups(pl);
  printf("platform %s: %zu devices in %zu groups\n\n", mlsba_platform_name(pl),
         p, q);
  printf("%-8s %-7s %-6s %-10s %-44s %s\n", "device", "type", "units", "memory",
         "model", "driver");
  for (size_t i = 0; i < p; i++) {
    mlsba_device_info_t info;
    mlsba_platform_device_info(pl, i, &info);
    char mem[32] = "-", units[16] = "-";
    if (info.memory_bytes)
      snprintf(mem, sizeof mem, "%.2f GiB",
               (double)info.memory_bytes / (1024.0 * 1024.0 * 1024.0));
    if (info.compute_units)
      snprintf(units, sizeof units, "%u", info.compute_units);
    const char *model = info.model[0] ? info.model : "-";
    if (mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_SIM)
      model = "speed profile";
    printf("%-8s %-7s %-6s %-10s %-44.44s %s\n",
           mlsba_platform_device_name(pl, i),
           type_name(mlsba_platform_device_type(pl, i)), units, mem, model,
           info.driver[0] ? info.driver : "-");
  }
  printf("\ngroups (the first device drives the others):\n");
  for (size_t g = 0; g < q; g++) {
    printf("  group %zu:", g);
    for (size_t k = 0; k < mlsba_platform_group_size(pl, g); k++)
      printf("%s %s", k ? " +" : "",
             mlsba_platform_device_name(pl,
                                        mlsba_platform_group_device(pl, g, k)));
    printf("\n");
  }
  print_kinds(pl, p);
}

int main(int argc, char **argv) {
  const char *platform = "auto", *write = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--version")) {
      printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
      return 0;
    }
    const char **slot = !strcmp(argv[i], "--platform") ? &platform
                        : !strcmp(argv[i], "--write")  ? &write
                                                       : NULL;
    if (slot == NULL || i + 1 >= argc)
      return cli_usage_error(
          prog, slot ? "a value is missing after " : "unknown option ",
          argv[i]);
    *slot = argv[++i];
  }
  mlsba_platform_t *pl = NULL;
  int err = strcmp(platform, "auto") == 0 ? mlsba_platform_discover(&pl)
                                          : mlsba_platform_load(platform, &pl);
  if (err) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    return err == MLSBA_EFORMAT || err == MLSBA_EIO ? EXIT_USAGE : 1;
  }
  print_platform(pl);
  int status = 0;
  if (write) {
    if (mlsba_platform_save(pl, write) != 0) {
      fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
      status = 1;
    } else {
      printf("\nwrote %s\n", write);
    }
  }
  mlsba_platform_destroy(pl);
  return cli_finish_stdout(prog) != 0 && status == 0 ? 1 : status;
}
