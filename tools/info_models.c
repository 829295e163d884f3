#include "info_models.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cli.h"
#include "common/escape.h"
#include "common/gnuplot.h"
#include "common/text.h"
#include "mlsba.h"

enum { ROOM = 1024 }; /* points shown with their runs and spread */

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), t = strlen(tail);
  return n > t && strcmp(s + n - t, tail) == 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The key a saved file names (its second line, docs/model-file.md), "?"
 * when it has none. Only a regular file is read: opened without blocking,
 * as a FIFO named *.model would otherwise wait for a writer for ever. */
static void read_key(const char *path, char *key, size_t size) {
  snprintf(key, size, "?");
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (f == NULL && fd >= 0)
    close(fd);
  char line[4096];
  if (f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f) &&
      strncmp(line, "key ", 4) == 0) {
    line[strcspn(line, "\n")] = '\0';
    snprintf(key, size, "%s", line + 4);
  }
  if (f)
    fclose(f);
}

/* Text from a file or a folder (names, keys, messages naming them) made
 * safe to print: a control character, which could move the cursor or
 * forge a line on a terminal, as \xNN (tools/common/escape.h). */
static const char *shown(const char *in, char *out, size_t size) {
  escape_bytes(out, size, in, 0);
  return out;
}

/* One line per file: what it holds, then its key, wrapped. */
static void list_one(const char *dir, const char *name) {
  char path[4096], key[4096], text[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  read_key(path, key, sizeof key);
  mlsba_model_t *m = NULL;
  if (ends_with(name, ".left-out")) {
    snprintf(text, sizeof text,
             "the device is left out: the others ran faster without it "
             "(docs/left-out-file.md)");
  } else if (mlsba_model_load(path, NULL, &m) != 0) {
    char why[4096];
    snprintf(text, sizeof text, "not read: %s",
             shown(mlsba_last_error(), why, sizeof why));
  } else {
    size_t n = mlsba_model_num_points(m);
    double x0, s0, x1, s1;
    mlsba_model_get_point(m, 0, &x0, &s0);
    mlsba_model_get_point(m, n - 1, &x1, &s1);
    char cap[64] = "no max_load";
    if (mlsba_model_max_load(m) > 0)
      snprintf(cap, sizeof cap, "max_load %lld",
               (long long)mlsba_model_max_load(m));
    snprintf(text, sizeof text,
             "%zu point%s, loads %.6g to %.6g units, speeds %.4g to %.4g "
             "units/s, %s",
             n, n == 1 ? "" : "s", x0, x1, s0, s1, cap);
    mlsba_model_destroy(m);
  }
  char safe[4096];
  printf("%s\n", shown(name, safe, sizeof safe));
  text_wrap(stdout, "    ", 4, text);
  text_wrap(stdout, "    key ", 8, shown(key, safe, sizeof safe));
}

int info_list_models(const char *prog, const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "%s: --models: cannot read '%s': %s\n", prog, dir,
            strerror(errno));
    return CLI_EXIT_USAGE;
  }
  char **names = NULL;
  size_t n = 0, room = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!ends_with(e->d_name, ".model") && !ends_with(e->d_name, ".left-out"))
      continue;
    if (n == room) {
      room = room ? 2 * room : 16;
      char **more = realloc(names, room * sizeof *names);
      if (more == NULL)
        break;
      names = more;
    }
    if ((names[n] = strdup(e->d_name)) != NULL)
      n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  char safe[4096];
  printf("saved models in '%s': %zu file%s\n", shown(dir, safe, sizeof safe), n,
         n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++) {
    list_one(dir, names[i]);
    free(names[i]);
  }
  free(names);
  return 0;
}

/* The file: a path as given, else a name in dir. */
static void model_path(const char *dir, const char *file, char *path,
                       size_t size) {
  struct stat st;
  if (strchr(file, '/') || stat(file, &st) == 0 || dir == NULL)
    snprintf(path, size, "%s", file);
  else
    snprintf(path, size, "%s/%s", dir, file);
}

static void print_points(const mlsba_model_t *m, const unsigned *runs,
                         const double *sd) {
  printf("\n%14s %16s %12s %6s %14s\n", "load [units]", "speed [units/s]",
         "time [s]", "runs", "sd [units/s]");
  for (size_t i = 0; i < mlsba_model_num_points(m); i++) {
    double x, s, t;
    mlsba_model_get_point(m, i, &x, &s);
    mlsba_model_time(m, x, &t);
    if (i < ROOM)
      printf("%14.6g %16.6g %12.6g %6u %14.4g\n", x, s, t, runs[i], sd[i]);
    else
      printf("%14.6g %16.6g %12.6g %6s %14s\n", x, s, t, "-", "-");
  }
}

/* model.dat (load, speed, spread) and model.gp, then gnuplot. */
static int plot_model(const char *tool, const char *dir, const char *title,
                      const mlsba_model_t *m, const double *sd) {
  char prog[64]; /* the head of every line about the pictures */
  snprintf(prog, sizeof prog, "%s: --plot", tool);
  FILE *dat = gnuplot_open_in(prog, dir, "model.dat");
  FILE *gp = gnuplot_open_in(prog, dir, "model.gp");
  int bad = dat == NULL || gp == NULL;
  for (size_t i = 0; !bad && i < mlsba_model_num_points(m); i++) {
    double x, s;
    mlsba_model_get_point(m, i, &x, &s);
    fprintf(dat, "%.17g %.17g %.17g\n", x, s, i < ROOM ? sd[i] : 0.0);
  }
  if (!bad) {
    fputs("set xlabel 'load [units]'\nset ylabel 'speed [units/s]'\n"
          "set key off\nset grid\nset title ",
          gp);
    gnuplot_string(gp, title);
    fputs("\nset terminal pngcairo size 800,500\nset output 'model.png'\n"
          "plot 'model.dat' using 1:2 with lines, "
          "'model.dat' using 1:2:3 with yerrorbars pt 7\n"
          "set terminal svg size 800,500\nset output 'model.svg'\nreplot\n",
          gp);
    bad = ferror(dat) || ferror(gp);
  }
  /* A file that cannot be written says why as it is closed. */
  int unwritten = (dat && fclose(dat) != 0) | (gp && fclose(gp) != 0);
  if (bad || unwritten) {
    if (!unwritten)
      fprintf(stderr, "%s: error writing into '%s'\n", prog, dir);
    return 1;
  }
  return gnuplot_run(prog, dir, "model.gp") == 0 ? 0 : 1;
}

int info_show_model(const char *prog, const char *dir, const char *file,
                    const char *plot_dir) {
  char path[4096], key[4096];
  model_path(dir, file, path, sizeof path);
  static unsigned runs[ROOM];
  static double sd[ROOM];
  mlsba_model_t *m = NULL;
  char safe[4096];
  if (mlsba_model_load_ex(path, NULL, &m, runs, sd, ROOM) != 0) {
    fprintf(stderr, "%s: --show-model: %s\n", prog,
            shown(mlsba_last_error(), safe, sizeof safe));
    return CLI_EXIT_USAGE;
  }
  read_key(path, key, sizeof key);
  printf("model %s\n", shown(path, safe, sizeof safe));
  text_wrap(stdout, "key ", 4, shown(key, safe, sizeof safe));
  if (mlsba_model_max_load(m) > 0)
    printf("max_load %lld units (what the device can hold)\n",
           (long long)mlsba_model_max_load(m));
  else
    printf("max_load: none known\n");
  print_points(m, runs, sd);
  int status = plot_dir ? plot_model(prog, plot_dir, path, m, sd) : 0;
  if (plot_dir && status == 0)
    printf("\nwrote %s/model.png and model.svg\n", plot_dir);
  mlsba_model_destroy(m);
  return status;
}
