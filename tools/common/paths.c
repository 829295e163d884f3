#include "paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "core/atomic_file.h"
#include "text.h"

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

/* An installed folder beside the running tool: its folder, then rel (from
 * the install's bin to that folder, set by the build from the install
 * layout), so that any --prefix works. */
static int beside_tool(const char *rel, char *out, size_t size) {
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
  while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(exe, '/')) &&
         slash != exe) {
    *slash = '\0';
    rel += 3;
  }
  int w = snprintf(out, size, "%s/%s", exe, rel);
  return w > 0 && (size_t)w < size;
}

/* The installed sample platforms. */
static int installed_dir(char *out, size_t size) {
  return beside_tool(MLSBA_BIN_TO_PLATFORMS, out, size);
}

/* Writes text with every "from" replaced by "to". */
static void put_replaced(FILE *f, const char *text, const char *from,
                         const char *to) {
  size_t n = strlen(from);
  for (const char *hit; (hit = strstr(text, from)) != NULL; text = hit + n) {
    fwrite(text, 1, (size_t)(hit - text), f);
    fputs(to, f);
  }
  fputs(text, f);
}

void paths_print_help(FILE *f, const char *text) {
  char docs[PATH_MAX], platforms[PATH_MAX];
  struct stat st;
  int docs_here =
      beside_tool(MLSBA_BIN_TO_DOCS, docs, sizeof docs) && stat(docs, &st) == 0;
  int platforms_here =
      installed_dir(platforms, sizeof platforms) && stat(platforms, &st) == 0;
  if (!docs_here && !platforms_here) { /* a build, not installed */
    fputs(text, f);
    return;
  }
  /* One replacement at a time: the platforms' line, then the docs'. */
  char *copy = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&copy, &len);
  if (mem == NULL) {
    fputs(text, f);
    return;
  }
  put_replaced(mem, text, "PREFIX/share/mlsba/platforms",
               platforms_here ? platforms : "PREFIX/share/mlsba/platforms");
  fclose(mem);
  put_replaced(f, copy ? copy : text, "PREFIX/share/doc/mlsba",
               docs_here ? docs : "PREFIX/share/doc/mlsba");
  free(copy);
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

int paths_platform(const char *prog, const char *arg, char *out, size_t size) {
  struct stat st;
  if (arg[0] == '\0') { /* the loader would say only ": cannot open" */
    text_error(prog, "--platform: an empty name (auto, a sample platform or a "
                     "file)");
    return CLI_EXIT_USAGE;
  }
  if (strlen(arg) >= size) { /* refused, never cut short to another file */
    text_error(prog, "--platform: path too long");
    return CLI_EXIT_USAGE;
  }
  if (paths_find_platform(arg, out, size) == 0)
    return 0;
  char dir[PATH_MAX];
  text_error(prog,
             "--platform %s: no such file, nor a sample platform of that "
             "name (see %s)",
             arg,
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
    text_error(prog, "%s", mlsba_last_error());
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
  /* The library's rule for its own caches (the kernels' choice, the
   * factorizations' models), so that one variable moves them all. */
  const char *env = getenv("MLSBA_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int w;
  out[0] = '\0';
  if (env && strcmp(env, "none") == 0)
    return 0;
  if (env && *env)
    w = snprintf(out, size, "%s/%s", env, leaf);
  else if (xdg && xdg[0] == '/') /* the XDG rule: relative ones ignored */
    w = snprintf(out, size, "%s/mlsba/%s", xdg, leaf);
  else if (home && home[0] == '/')
    w = snprintf(out, size, "%s/.cache/mlsba/%s", home, leaf);
  else {
    text_error(prog, "no folder for saved models (none of MLSBA_CACHE_DIR, "
                     "XDG_CACHE_HOME and HOME is set): name one with --models "
                     "DIR, or --models none");
    return CLI_EXIT_USAGE;
  }
  if (w < 0 || (size_t)w >= size) {
    text_error(prog, "the model folder's path is too long");
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* One folder: created unless it is there; 0, or 2 after a line. */
static int make_one(const char *prog, const char *option, const char *dir) {
  struct stat st;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    if (errno == ENOENT)
      text_error(prog,
                 "%s: cannot create '%s': its parent folder does not "
                 "exist (create it first)",
                 option, dir);
    else
      text_error(prog, "%s: cannot create '%s': %s", option, dir,
                 strerror(errno));
    return CLI_EXIT_USAGE;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    text_error(prog, "%s: '%s' is not a folder", option, dir);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

static int check_writable(const char *prog, const char *option,
                          const char *dir) {
  if (access(dir, W_OK | X_OK) != 0) {
    text_error(prog, "%s: cannot write into '%s': %s", option, dir,
               strerror(errno));
    return CLI_EXIT_USAGE;
  }
  return 0;
}

int paths_make_dirs(const char *prog, const char *option, const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    text_error(prog, "%s: path too long", option);
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
  /* The library's writer's own rules (tools/common/output.h), so that
   * what passes here is what it writes at the end. */
  if (strcmp(path, "-") != 0 && mlsba__write_check(path) != 0) {
    text_error(prog, "%s: %s", option, mlsba_last_error());
    return CLI_EXIT_USAGE;
  }
  return 0;
}
