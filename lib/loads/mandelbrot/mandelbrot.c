/* The Mandelbrot image by rows, the second built-in load: CPU code in
 * cl/mandelbrot_cpu.c, OpenCL code in cl/mandelbrot.cl (through
 * mandelbrot_cl.c). Units are rows in an interleaved
 * order, so every range of units samples the whole image (mlsba.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../../cl/mandelbrot_cpu.h"
#include "../../core/error.h"
#include "../../core/load.h"
#include "mandelbrot.h"
#ifdef MLSBA_HAVE_OPENCL
#include "mlsba/opencl.h"
#endif

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The step between the rows of consecutive units: coprime with the height
 * (so the units cover every row once), near the golden section of it (so
 * that consecutive units land far apart). */
int64_t mlsba__mandelbrot_stride(int64_t height) {
  int64_t s = (int64_t)(0.6180339887 * (double)height);
  s = s < 1 ? 1 : s;
  while (gcd(s, height) != 1)
    s++;
  return s;
}

int64_t mlsba_mandelbrot_row(const mlsba_mandelbrot_t *mb, int64_t unit) {
  /* Heights from 2^31 on are refused by check(), and unit * stride would
   * overflow there: -1 as for any unit outside the image. */
  if (mb == NULL || mb->height < 1 || mb->height >= (INT64_C(1) << 31) ||
      unit < 0 || unit >= mb->height)
    return -1;
  /* height < 2^31, so the product fits. */
  return unit * mlsba__mandelbrot_stride(mb->height) % mb->height;
}

static int check(const mlsba_mandelbrot_t *mb) {
  if (mb == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mandelbrot: the problem is NULL");
  if (mb->width < 1 || mb->height < 1 || mb->max_iter < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "mandelbrot: width, height and max_iter must be >= 1, "
                       "got %lld, %lld, %d",
                       (long long)mb->width, (long long)mb->height,
                       (int)mb->max_iter);
  if (mb->width >= (INT64_C(1) << 31) || mb->height >= (INT64_C(1) << 31) ||
      (double)mb->width * (double)mb->height >= 0x1p60)
    return mlsba__fail(MLSBA_ERANGE, "mandelbrot: %lld x %lld is too large",
                       (long long)mb->width, (long long)mb->height);
  if (!isfinite(mb->x0) || !isfinite(mb->x1) || !isfinite(mb->y0) ||
      !isfinite(mb->y1) || !(mb->x1 > mb->x0) || !(mb->y1 > mb->y0))
    return mlsba__fail(MLSBA_EINVAL,
                       "mandelbrot: the region must be finite with x1 > x0 "
                       "and y1 > y0");
  if (mb->out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mandelbrot: out is NULL");
  return 0;
}

static int cpu_rows(void *user, int64_t first, int64_t count) {
  const mlsba_mandelbrot_t *mb = user;
  int64_t stride = mlsba__mandelbrot_stride(mb->height);
  int64_t row = first * stride % mb->height;
  for (int64_t j = 0; j < count; j++) {
    mlsba__mandelbrot_row(mb, row, mb->out + row * mb->width);
    row = (row + stride) % mb->height;
  }
  return 0;
}

int mlsba_load_mandelbrot(const mlsba_mandelbrot_t *mb, mlsba_load_t **out) {
  int err =
      out ? check(mb)
          : mlsba__fail(MLSBA_EINVAL, "mlsba_load_mandelbrot: load is NULL");
  if (err)
    return err;
  void *copy;
  if ((err = mlsba__load_create_kept("mlsba_load_mandelbrot", "mandelbrot",
                                     mb->height, mb, sizeof *mb, out, &copy)) !=
      0)
    return err;
  mlsba_load_t *w = *out;
  char shape[256];
  snprintf(
      shape, sizeof shape, "width=%lld iter=%d region=%.17g,%.17g,%.17g,%.17g",
      (long long)mb->width, (int)mb->max_iter, mb->x0, mb->y0, mb->x1, mb->y1);
  mlsba_load_set_shape(w, shape);
  char tag[128];
  snprintf(tag, sizeof tag, "mandelbrot-w%lld-h%lld-i%d", (long long)mb->width,
           (long long)mb->height, (int)mb->max_iter);
  mlsba__load_set_tag(w, tag);
  mlsba_load_set_cpu(w, cpu_rows, copy);
#ifdef MLSBA_HAVE_OPENCL
  mlsba_load_set_opencl(w, mlsba__mandelbrot_cl_ops(), copy);
#endif
  return 0;
}

int mlsba_mandelbrot_verify_units(const mlsba_mandelbrot_t *mb, int64_t first,
                                  int64_t count, int64_t *wrong) {
  int err = wrong ? check(mb)
                  : mlsba__fail(MLSBA_EINVAL,
                                "mlsba_mandelbrot_verify: wrong is NULL");
  if (err)
    return err;
  if (first < 0 || count < 0 || first > mb->height - count)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mandelbrot_verify: units %lld + %lld are outside "
                       "0..%lld",
                       (long long)first, (long long)count,
                       (long long)mb->height);
  int32_t *row = malloc((size_t)mb->width * sizeof *row);
  if (row == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "mandelbrot: out of memory");
  *wrong = 0;
  int64_t stride = mlsba__mandelbrot_stride(mb->height);
  int64_t y = first * stride % mb->height; /* height < 2^31: no overflow */
  for (int64_t u = 0; u < count; u++) {
    const int32_t *got = mb->out + y * mb->width;
    mlsba__mandelbrot_row(mb, y, row);
    for (int64_t x = 0; x < mb->width; x++)
      *wrong += row[x] != got[x];
    y = (y + stride) % mb->height;
  }
  free(row);
  return 0;
}

int mlsba_mandelbrot_verify(const mlsba_mandelbrot_t *mb, int64_t *wrong) {
  return mlsba_mandelbrot_verify_units(mb, 0, mb ? mb->height : 0, wrong);
}
