#include "options.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "mlsba.h"
#include "paths.h"

static const opt_t *find(const opts_table_t *t, const char *name) {
  for (size_t i = 0; i < t->count; i++)
    if (!strcmp(t->opts[i].name, name))
      return &t->opts[i];
  return NULL;
}

/* An argument as a message shows it: "" for an empty one, which would
 * otherwise read as nothing. */
static const char *shown(const char *arg) { return *arg ? arg : "\"\""; }

/* A whole number into a member of 4 or 8 bytes; the range was checked,
 * so it fits (hi of a 4-byte member is at most INT32_MAX). */
static void store_units(const opt_t *o, void *to, int64_t v) {
  assert(o->size == sizeof(int64_t) ||
         (o->size == sizeof(int32_t) && o->hi <= INT32_MAX));
  if (o->size == sizeof(int64_t)) {
    memcpy(to, &v, sizeof v);
  } else {
    int32_t small = (int32_t)v;
    memcpy(to, &small, sizeof small);
  }
}

/* One value into its member; 0, or nonzero when it is bad (why then set
 * when the option has its own words for it). */
static int take(const opt_t *o, const char *v, char *to, char *why,
                size_t size) {
  int64_t units = 0;
  double real = 0;
  switch (o->kind) {
  case OPT_TEXT:
    assert(o->size == sizeof v);
    memcpy(to, &v, sizeof v);
    return o->nonempty && *v == '\0';
  case OPT_UNITS:
    if (cli_parse_units(v, o->hi, &units) != 0 || units < o->lo)
      return 1;
    store_units(o, to, units);
    return 0;
  case OPT_REAL:
    assert(o->size == sizeof real);
    if (cli_parse_double(v, o->min, o->max, &real) != 0 ||
        (o->below_max && !(real < o->max)))
      return 1;
    memcpy(to, &real, sizeof real);
    return 0;
  case OPT_CHOICE:
    assert(o->size == sizeof(int));
    for (int i = 0; o->choices[i]; i++)
      if (!strcmp(v, o->choices[i])) {
        memcpy(to, &i, sizeof i);
        return 0;
      }
    return 1;
  case OPT_CUSTOM:
    return o->parse(v, to, why, size);
  default: /* OPT_FLAG takes no value */
    return 1;
  }
}

static int usage(char *why, size_t size, const char *what, const char *arg) {
  snprintf(why, size, "%s%s", what, arg);
  return OPTS_USAGE;
}

int opts_parse(const opts_table_t *table, int argc, char **argv, void *into,
               char *why, size_t size) {
  char *base = into;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return OPTS_HELP;
    if (!strcmp(a, "--version"))
      return OPTS_VERSION;
    const opt_t *o = find(table, a);
    if (o == NULL)
      return usage(why, size,
                   a[0] == '-' ? "unknown option " : "unexpected argument ",
                   shown(a));
    if (o->kind == OPT_FLAG) {
      int one = 1;
      assert(o->size == sizeof one);
      memcpy(base + o->at, &one, sizeof one);
      continue;
    }
    if (i + 1 >= argc)
      return usage(why, size, "a value is missing after ", a);
    const char *v = argv[++i];
    why[0] = '\0';
    if (take(o, v, base + o->at, why, size) == 0)
      continue;
    if (why[0] == '\0' && o->must)
      snprintf(why, size, "%s must be %s, got %s", a, o->must, shown(v));
    else if (why[0] == '\0')
      snprintf(why, size, "bad value for %s: %s", a, shown(v));
    return OPTS_USAGE;
  }
  return OPTS_RUN;
}

void opts_print_version(const char *prog) {
  printf("%s (libmlsba) %s\n", prog, mlsba_version_string());
}

int opts_read(const char *prog, const char *help, const opts_table_t *table,
              int argc, char **argv, void *into, int *status) {
  char why[1024];
  int outcome = opts_parse(table, argc, argv, into, why, sizeof why);
  if (outcome == OPTS_RUN)
    return OPTS_RUN;
  if (outcome == OPTS_USAGE) {
    *status = cli_usage_error(prog, why, "");
    return outcome;
  }
  if (outcome == OPTS_HELP)
    paths_print_help(stdout, help);
  else
    opts_print_version(prog);
  *status = cli_finish_stdout(prog);
  return outcome;
}
