#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A name, not a path: letters, digits, '.', '-', '_'. */
static int is_name(const char *s) {
  if (*s == '\0' || *s == '.')
    return 0;
  return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789._-") == strlen(s);
}

/* NAME or NAME.json in dir, into out. */
static int find_in(const char *dir, const char *name, char *out, size_t size) {
  size_t n = strlen(name);
  int has_ext = n > 5 && strcmp(name + n - 5, ".json") == 0;
  int w = snprintf(out, size, "%s/%s%s", dir, name, has_ext ? "" : ".json");
  return w > 0 && (size_t)w < size && is_file(out);
}

/* The installed platforms beside the running tool: its folder, then
 * MLSBA_BIN_TO_PLATFORMS (relative, set by the build from the install
 * layout), so that any --prefix works. */
static int installed_dir(char *out, size_t size) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL)
    return 0;
  *slash = '\0';
  /* Each leading "../" takes a folder off exe (a resolved path), so that
   * messages say PREFIX/share/..., not PREFIX/bin/../share/... */
  const char *rel = MLSBA_BIN_TO_PLATFORMS;
  while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(exe, '/')) &&
         slash != exe) {
    *slash = '\0';
    rel += 3;
  }
  int w = snprintf(out, size, "%s/%s", exe, rel);
  return w > 0 && (size_t)w < size;
}

int paths_find_platform(const char *arg, char *out, size_t size) {
  struct stat st;
  if (strlen(arg) >= size)
    return -1;
  if (strcmp(arg, "auto") == 0 || stat(arg, &st) == 0 || !is_name(arg)) {
    snprintf(out, size, "%s", arg); /* the loader names any problem */
    return 0;
  }
  char dir[PATH_MAX];
  if (installed_dir(dir, sizeof dir) && find_in(dir, arg, out, size))
    return 0;
  return find_in(MLSBA_SOURCE_PLATFORMS, arg, out, size) ? 0 : -1;
}

int paths_platform(const char *prog, const char *arg, char *out,
                   size_t size) {
  struct stat st;
  if (arg[0] == '\0') { /* the loader would say only ": cannot open" */
    fprintf(stderr,
            "%s: --platform: an empty name (auto, a sample platform or a "
            "file)\n",
            prog);
    return CLI_EXIT_USAGE;
  }
  if (strlen(arg) >= size) { /* refused, never cut short to another file */
    fprintf(stderr, "%s: --platform: path too long\n", prog);
    return CLI_EXIT_USAGE;
  }
  if (paths_find_platform(arg, out, size) == 0)
    return 0;
  char dir[PATH_MAX];
  fprintf(stderr,
          "%s: --platform %s: no such file, nor a sample platform of that "
          "name (see %s)\n",
          prog, arg,
          installed_dir(dir, sizeof dir) && !stat(dir, &st)
              ? dir
              : MLSBA_SOURCE_PLATFORMS);
  return CLI_EXIT_USAGE;
}

int paths_load_platform(const char *prog, const char *arg,
                        mlsba_platform_t **pl) {
  char path[PATH_MAX];
  *pl = NULL;
  int status = paths_platform(prog, arg, path, sizeof path);
  if (status)
    return status;
  int err = strcmp(path, "auto") == 0 ? mlsba_platform_discover(pl)
                                      : mlsba_platform_load(path, pl);
  if (err) {
    fprintf(stderr, "%s: %s\n", prog, mlsba_last_error());
    return err == MLSBA_EFORMAT || err == MLSBA_EIO ? CLI_EXIT_USAGE : 1;
  }
  return 0;
}

int paths_models(const char *prog, const char *platform_name, int sim,
                 char *out, size_t size) {
  char leaf[160] = "sim-";
  if (sim) {
    snprintf(leaf + 4, sizeof leaf - 4, "%s", platform_name);
  } else if (gethostname(leaf, sizeof leaf - 1) != 0) {
    snprintf(leaf, sizeof leaf, "localhost");
  }
  leaf[sizeof leaf - 1] = '\0';
  /* A file name, whatever the platform file or the host calls itself. */
  for (char *c = leaf; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                "0123456789._-",
                *c) ||
        (c == leaf && *c == '.'))
      *c = '_';
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int w;
  if (xdg && xdg[0] == '/') /* the XDG rule: relative values are ignored */
    w = snprintf(out, size, "%s/mlsba/%s", xdg, leaf);
  else if (home && home[0] == '/')
    w = snprintf(out, size, "%s/.cache/mlsba/%s", home, leaf);
  else {
    fprintf(stderr,
            "%s: no folder for saved models (neither XDG_CACHE_HOME nor HOME "
            "is set): name one with --models DIR, or --models none\n",
            prog);
    return CLI_EXIT_USAGE;
  }
  if (w < 0 || (size_t)w >= size) {
    fprintf(stderr, "%s: the model folder's path is too long\n", prog);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* One folder: created unless it is there; 0, or 2 after a line. */
static int make_one(const char *prog, const char *option, const char *dir) {
  struct stat st;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    if (errno == ENOENT)
      fprintf(stderr,
              "%s: %s: cannot create '%s': its parent folder does not "
              "exist (create it first)\n",
              prog, option, dir);
    else
      fprintf(stderr, "%s: %s: cannot create '%s': %s\n", prog, option, dir,
              strerror(errno));
    return CLI_EXIT_USAGE;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "%s: %s: '%s' is not a folder\n", prog, option, dir);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

static int check_writable(const char *prog, const char *option,
                          const char *dir) {
  if (access(dir, W_OK | X_OK) != 0) {
    fprintf(stderr, "%s: %s: cannot write into '%s': %s\n", prog, option, dir,
            strerror(errno));
    return CLI_EXIT_USAGE;
  }
  return 0;
}

int paths_make_dirs(const char *prog, const char *option, const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    fprintf(stderr, "%s: %s: path too long\n", prog, option);
    return CLI_EXIT_USAGE;
  }
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char c = *p;
    *p = '\0';
    int status = make_one(prog, option, buf);
    if (status)
      return status;
    if (c == '\0')
      break;
    *p = c;
  }
  return check_writable(prog, option, path);
}

int paths_make_dir(const char *prog, const char *option, const char *path) {
  int status = make_one(prog, option, path);
  return status ? status : check_writable(prog, option, path);
}

int paths_check_output_file(const char *prog, const char *option,
                            const char *path) {
  if (strcmp(path, "-") == 0)
    return 0;
  struct stat st;
  const char *why = NULL;
  if (path[0] == '\0') {
    why = "an empty path";
  } else if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      why = "it is a folder";
    else if (access(path, W_OK) != 0)
      why = strerror(errno);
  } else if (errno != ENOENT) {
    why = strerror(errno);
  } else {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
      snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
      dir[1] = '\0';
    else
      *slash = '\0';
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
      why = "its folder does not exist";
    else if (access(dir, W_OK | X_OK) != 0)
      why = strerror(errno);
  }
  if (why) {
    fprintf(stderr, "%s: %s: cannot write '%s': %s\n", prog, option, path,
            why);
    return CLI_EXIT_USAGE;
  }
  return 0;
}
