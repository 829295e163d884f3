/* Errors are collective: a rank that fails (a missing platform file, a
 * device error) must not leave the others waiting in a message that never
 * comes. Every rank reports its status at the same points; all learn the
 * first failure, with its rank and message, and stop together.
 *
 * So are the values every rank must pass alike (the size of a product,
 * the load of a division): each rank compares its own with rank 0's
 * before any message is sized by them, and a difference is an error
 * like any other, naming the rank and the value as the user wrote it.
 * The head's results reach every rank the same way, by name. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "internal.h"

int mlsba__mpi_agree(MPI_Comm comm, int err) {
  /* The message is copied before the first MPI call: under smpirun the
   * simulated ranks are threads of one process that switch in MPI calls,
   * and may share the thread-local buffer it lives in. */
  char msg[400] = "";
  if (err)
    snprintf(msg, sizeof msg, "%s", mlsba_last_error());
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = err ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size)
    return 0;
  /* The failing rank's code and message, as it wrote them. */
  int code = err;
  MPI_Bcast(&code, 1, MPI_INT, first, comm);
  MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
  return mlsba__fail(code, "rank %d: %s", first, msg);
}

/* ---- named values ------------------------------------------------------ */

/* The bytes of a string a message shows (its NUL included): enough to
 * tell two shapes or names apart where they differ early, short enough
 * that two of them fit one message. */
enum { TEXT_SHOWN = 72 };

/* FNV-1a over the whole string: what two ranks compare. NULL hashes as
 * the empty string does not (0, which FNV-1a's basis never gives). */
static uint64_t text_hash(const char *s) {
  if (s == NULL)
    return 0;
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
  return h;
}

static int64_t read_signed(const void *at, size_t size) {
  switch (size) {
  case 1: {
    int8_t x;
    memcpy(&x, at, 1);
    return x;
  }
  case 2: {
    int16_t x;
    memcpy(&x, at, 2);
    return x;
  }
  case 4: {
    int32_t x;
    memcpy(&x, at, 4);
    return x;
  }
  default: {
    int64_t x;
    memcpy(&x, at, 8);
    return x;
  }
  }
}

static uint64_t read_unsigned(const void *at, size_t size) {
  uint64_t x = 0;
  switch (size) {
  case 1: {
    uint8_t y;
    memcpy(&y, at, 1);
    return y;
  }
  case 2: {
    uint16_t y;
    memcpy(&y, at, 2);
    return y;
  }
  case 4: {
    uint32_t y;
    memcpy(&y, at, 4);
    return y;
  }
  default:
    memcpy(&x, at, 8);
    return x;
  }
}

/* A value as the 64 bits that travel (a double's own bits; a string's
 * hash). */
static uint64_t encode(const mlsba__mpi_value_t *v) {
  switch (v->kind) {
  case MLSBA__MPI_SIGNED:
  case MLSBA__MPI_ENUM:
    return (uint64_t)read_signed(v->at, v->size);
  case MLSBA__MPI_UNSIGNED:
    return read_unsigned(v->at, v->size);
  case MLSBA__MPI_DOUBLE: {
    uint64_t x;
    memcpy(&x, v->at, sizeof x);
    return x;
  }
  default:
    return text_hash(v->at);
  }
}

/* The 64 bits back into the variable (not for strings). The table is
 * the caller's promise that the variable is writable (see internal.h). */
static void decode(const mlsba__mpi_value_t *v, uint64_t bits) {
  void *at = (void *)(uintptr_t)v->at;
  if (v->kind == MLSBA__MPI_DOUBLE || v->size == 8) {
    memcpy(at, &bits, 8);
  } else if (v->size == 4) {
    uint32_t x = (uint32_t)bits;
    memcpy(at, &x, 4);
  } else if (v->size == 2) {
    uint16_t x = (uint16_t)bits;
    memcpy(at, &x, 2);
  } else {
    uint8_t x = (uint8_t)bits;
    memcpy(at, &x, 1);
  }
}

static double as_double(uint64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static int same(const mlsba__mpi_value_t *v, uint64_t a, uint64_t b) {
  if (v->kind != MLSBA__MPI_DOUBLE)
    return a == b;
  double x = as_double(a), y = as_double(b);
  return x == y || (x != x && y != y); /* 0 and -0 alike, NaN alike */
}

/* The first TEXT_SHOWN - 1 bytes of a string, cut visibly. */
static void text_shown(const char *s, char out[TEXT_SHOWN]) {
  if (s == NULL) {
    snprintf(out, TEXT_SHOWN, "(none)");
    return;
  }
  size_t n = strlen(s);
  if (n < TEXT_SHOWN)
    memcpy(out, s, n + 1);
  else
    snprintf(out, TEXT_SHOWN, "%.*s...", TEXT_SHOWN - 4, s);
}

/* A value as the user wrote it. digits: of a double (%g first; more when
 * two different doubles would read alike). */
static void spell(const mlsba__mpi_value_t *v, uint64_t bits, const char *text,
                  int digits, char *out, size_t cap) {
  const char *name = NULL;
  switch (v->kind) {
  case MLSBA__MPI_SIGNED:
    snprintf(out, cap, "%lld", (long long)(int64_t)bits);
    break;
  case MLSBA__MPI_UNSIGNED:
    snprintf(out, cap, "%llu", (unsigned long long)bits);
    break;
  case MLSBA__MPI_DOUBLE:
    snprintf(out, cap, "%.*g", digits, as_double(bits));
    break;
  case MLSBA__MPI_ENUM:
    name = v->spell ? v->spell((int64_t)bits) : NULL;
    if (name)
      snprintf(out, cap, "%s", name);
    else
      snprintf(out, cap, "%lld (unknown)", (long long)(int64_t)bits);
    break;
  default:
    snprintf(out, cap, "'%s'", text);
  }
}

/* What travels: a table's values as 64 bits each, and the strings'
 * first bytes. The tables are fixed in the code: a handful of values, a
 * few strings. */
enum { MOST_VALUES = 24, MOST_TEXTS = 4 };
typedef struct {
  uint64_t bits[MOST_VALUES];
  char text[MOST_TEXTS][TEXT_SHOWN];
} wire_t;

static void pack(const mlsba__mpi_value_t v[], size_t n, wire_t *w) {
  assert(n <= MOST_VALUES);
  memset(w, 0, sizeof *w);
  for (size_t i = 0, t = 0; i < n; i++) {
    w->bits[i] = encode(&v[i]);
    if (v[i].kind == MLSBA__MPI_TEXT) {
      assert(t < MOST_TEXTS);
      text_shown(v[i].at, w->text[t++]);
    }
  }
}

/* This rank's message for its first value that differs from the head's;
 * 0 when none does. */
static int differs(const mlsba__mpi_value_t v[], size_t n, const wire_t *mine,
                   const wire_t *head, const char *why) {
  for (size_t i = 0, t = 0; i < n; i++) {
    int is_text = v[i].kind == MLSBA__MPI_TEXT;
    const char *a = is_text ? mine->text[t] : "";
    const char *b = is_text ? head->text[t] : "";
    t += (size_t)is_text;
    if (same(&v[i], mine->bits[i], head->bits[i]))
      continue;
    char here[TEXT_SHOWN + 32], there[TEXT_SHOWN + 32];
    spell(&v[i], mine->bits[i], a, 6, here, sizeof here);
    spell(&v[i], head->bits[i], b, 6, there, sizeof there);
    if (!strcmp(here, there)) { /* doubles apart beyond %g's digits */
      spell(&v[i], mine->bits[i], a, 17, here, sizeof here);
      spell(&v[i], head->bits[i], b, 17, there, sizeof there);
    }
    return mlsba__fail(MLSBA_EINVAL, "%s is %s here, %s on rank 0: %s",
                       v[i].name, here, there, why);
  }
  return 0;
}

int mlsba__mpi_agree_values(MPI_Comm comm, const mlsba__mpi_value_t v[],
                            size_t n, const char *why) {
  wire_t mine, head;
  pack(v, n, &mine);
  head = mine;
  MPI_Bcast(&head, (int)sizeof head, MPI_BYTE, 0, comm);
  return mlsba__mpi_agree(comm, differs(v, n, &mine, &head, why));
}

void mlsba__mpi_share_values(MPI_Comm comm, int root,
                             const mlsba__mpi_value_t v[], size_t n) {
  uint64_t bits[MOST_VALUES];
  assert(n <= MOST_VALUES);
  for (size_t i = 0; i < n; i++) {
    assert(v[i].kind != MLSBA__MPI_TEXT);
    bits[i] = encode(&v[i]);
  }
  MPI_Bcast(bits, (int)n, MPI_UINT64_T, root, comm);
  for (size_t i = 0; i < n; i++)
    decode(&v[i], bits[i]);
}
