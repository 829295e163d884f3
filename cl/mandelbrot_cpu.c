/* Mandelbrot escape-time counts for rows of an image on one core: the CPU
 * twin of cl/mandelbrot.cl, the same arithmetic in the same order, compiled
 * without contraction (see CMakeLists.txt), so both give the same counts. */
#include "mandelbrot_cpu.h"

int32_t mlsba__mandelbrot_pixel(double cx, double cy, int32_t max_iter) {
  double zr = 0.0, zi = 0.0;
  int32_t i = 0;
  while (i < max_iter) {
    double zr2 = zr * zr, zi2 = zi * zi;
    if (zr2 + zi2 > 4.0)
      break;
    zi = 2.0 * zr * zi + cy;
    zr = zr2 - zi2 + cx;
    i++;
  }
  return i;
}

void mlsba__mandelbrot_row(const mlsba_mandelbrot_t *mb, int64_t row,
                           int32_t *out) {
  double dx = (mb->x1 - mb->x0) / (double)mb->width;
  double dy = (mb->y1 - mb->y0) / (double)mb->height;
  double cy = mb->y0 + dy * ((double)row + 0.5);
  for (int64_t x = 0; x < mb->width; x++)
    out[x] = mlsba__mandelbrot_pixel(mb->x0 + dx * ((double)x + 0.5), cy,
                                     mb->max_iter);
}
