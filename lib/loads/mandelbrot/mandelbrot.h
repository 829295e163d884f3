/* The built-in Mandelbrot load, internal view: the OpenCL half of its
 * device code (mandelbrot_cl.c; the CPU half is cl/mandelbrot_cpu.c). */
#ifndef MLSBA_LOADS_MANDELBROT_MANDELBROT_H
#define MLSBA_LOADS_MANDELBROT_MANDELBROT_H

#ifdef MLSBA_HAVE_OPENCL
struct mlsba_opencl_ops;
const struct mlsba_opencl_ops *mlsba__mandelbrot_cl_ops(void);
#endif

#endif
