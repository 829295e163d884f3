/* The CPU half of the Mandelbrot load (cl/mandelbrot_cpu.c). */
#ifndef MLSBA_CL_MANDELBROT_CPU_H
#define MLSBA_CL_MANDELBROT_CPU_H

#include "mlsba.h"

/* Escape-time count of the point cx + i cy. */
int32_t mlsba__mandelbrot_pixel(double cx, double cy, int32_t max_iter);
/* Counts of image row `row` into out[0..width-1]. */
void mlsba__mandelbrot_row(const mlsba_mandelbrot_t *mb, int64_t row,
                           int32_t *out);

/* The step between the image rows of consecutive units. */
int64_t mlsba__mandelbrot_stride(int64_t height);

#endif
