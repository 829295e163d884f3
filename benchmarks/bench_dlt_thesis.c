/* Seed 001's multiple-node experiment (Elhiny, §7.3, Tables 6, 7, 9, 11)
 * under its own cost model: a master (Kingpenguin) that does not compute
 * sends B's columns to two worker nodes, Dune-770 and Dune-970 (three
 * cores and a GPU each, their parameters from Tables 9 and 7), over 100
 * Mbit/s Ethernet, and gets C back; N = M = 10,000 floats, K = 10,000 to
 * 21,000.
 *
 * The thesis prints neither its network's l nor b: they are fitted here
 * (least squares) to Table 11's overall times, which exclude A's
 * broadcast (so T - t_A of eq. 27 is compared). Table 11's overall column
 * is shifted by a row from NMK = 1800 on (1800 repeats 1700's 60700.7;
 * the differences between rows are otherwise 3.4-3.9 s): the fit reads
 * 1900's value as 1800's, and so on, and leaves 2100 out.
 *
 * For every K it prints the thesis's overall time, the network-aware
 * DLT's (mlsba_partition_dlt_nodes), and the time, under the same model,
 * of the split that ignores the links (the compute-only `dlt`): how much
 * the links cost a partitioner that does not count them.
 *
 *   bench-dlt-thesis
 */
#include <math.h>
#include <stdio.h>

#include "mlsba.h"

#define ROWS 12

static const double ms = 1e-3;

/* Table 11: NMK in 10^9 (K in thousands), overall time in ms as printed,
 * and the rows the fit uses after undoing the shift (0: left out). */
static const double table11_k[ROWS] = {10, 11, 12, 13, 14, 15,
                                       16, 17, 18, 19, 20, 21};
static const double table11_overall[ROWS] = {
    35703.94, 39051.97, 42692.15, 46393.11, 49774.11, 53669.52,
    57333.05, 60700.7,  60700.7,  64210.48, 67627.1,  71034.28};
static double fit_overall(int r) {
  return r < 8 ? table11_overall[r] : r < 11 ? table11_overall[r + 1] : 0;
}

static void workers(double l, double b, mlsba_dlt_node_t node[2]) {
  /* Dune-770 (Table 9), Dune-970 (Table 7); p per multiply-add, e. */
  node[0] = (mlsba_dlt_node_t){.cores = 3,
                               .core_op_time = 7.8677e-8 * ms,
                               .core_setup = 297.5628 * ms,
                               .accelerator = 1,
                               .accelerator_op_time = 1.10844e-9 * ms,
                               .accelerator_setup = 100 * ms,
                               .pcie_byte_time = 6.8828e-8 * ms,
                               .link_byte_time = l,
                               .link_latency = b,
                               .order = MLSBA_DLT_ORDER_ACCELERATOR_FIRST};
  node[1] = node[0];
  node[1].core_op_time = 7.677e-8 * ms;
  node[1].core_setup = 132.16 * ms;
  node[1].accelerator_op_time = 6.4932e-10 * ms;
  node[1].accelerator_setup = 175.5 * ms;
  node[1].pcie_byte_time = 5.332e-8 * ms;
}

static mlsba_dlt_problem_t problem(int r) {
  return (mlsba_dlt_problem_t){.n = 10000,
                               .m = 10000,
                               .k = (int64_t)(table11_k[r] * 1000),
                               .element_size = 4};
}

/* T - t_A of the network-aware DLT for row r. */
static double dlt_overall(int r, double l, double b, double *part) {
  mlsba_dlt_node_t node[2];
  workers(l, b, node);
  mlsba_dlt_problem_t pr = problem(r);
  mlsba_dlt_info_t info;
  if (mlsba_partition_dlt_nodes(&pr, node, 2, part, NULL, NULL, &info) != 0)
    return NAN;
  return info.time - (l * 4 * 1e4 * 1e4 + b);
}

/* FPM plus communication, the project's own model, as the issue puts it:
 * each device's size-dependent compute time plus the affine cost of moving
 * its share, the host link for an accelerator (the GPU's PCIe both ways)
 * and the network link for a rank (a node: B's columns in and C's out, a
 * message each way, A's broadcast as a fixed cost). A device's compute
 * time p N M x + e is sampled as a speed function over 1..K columns. */
static mlsba_model_t *device_model(const mlsba_dlt_node_t *nd, int gpu,
                                   const mlsba_dlt_problem_t *pr) {
  double N = (double)pr->n, M = (double)pr->m, K = (double)pr->k, s = 4;
  double p = gpu ? nd->accelerator_op_time : nd->core_op_time;
  double e = gpu ? nd->accelerator_setup : nd->core_setup;
  mlsba_model_t *m = NULL;
  if (mlsba_model_create(&m) != 0)
    return NULL;
  for (int i = 0; i <= 64; i++) {
    double x = pow(K, i / 64.0), t = p * N * M * x + (e > 0 ? e : 0);
    if (mlsba_model_set_point(m, x, x / t) != 0 ||
        (gpu && i == 64 &&
         mlsba_model_set_transfer(m, 0, nd->pcie_byte_time * s * (M + N)))) {
      mlsba_model_destroy(m);
      return NULL;
    }
  }
  return m;
}

/* The split of mlsba_partition_nodes_comm() (node models: each node's
 * compute, its devices balanced by SLBA, plus the node's link; SLBA over
 * the nodes, then inside each), as parts of K into part[8]. serial: the
 * thesis's delivery in the node models, the GPU's columns first, then
 * each core's, each device starting on its own. */
static int fpm_comm_split(const mlsba_dlt_node_t node[2],
                          const mlsba_dlt_problem_t *pr, int serial,
                          double *part) {
  mlsba_model_t *dev[2][4] = {{0}};
  mlsba_comm_node_t cn[2];
  int64_t cols[8], share[2];
  int err = 0;
  for (int j = 0; j < 2; j++) {
    for (int d = 0; d < 4 && !err; d++)
      err = (dev[j][d] = device_model(&node[j], d == 0, pr)) == NULL;
    double l = node[j].link_byte_time;
    cn[j] = (mlsba_comm_node_t){.models = (const mlsba_model_t *const *)dev[j],
                                .devices = 4,
                                .link = {.latency = node[j].link_latency,
                                         .bandwidth = l > 0 ? 1 / l : 0},
                                .serial = serial};
  }
  if (!err)
    err = mlsba_partition_nodes_comm(pr, cn, 2, share, cols, NULL);
  for (int j = 0; j < 2; j++)
    for (int d = 0; d < 4; d++) {
      part[4 * j + d] = err ? 0 : (double)cols[4 * j + d] / (double)pr->k;
      mlsba_model_destroy(dev[j][d]);
    }
  return err;
}

static double squared_error(double l, double b) {
  double sum = 0, part[8];
  for (int r = 0; r < ROWS; r++) {
    double want = fit_overall(r);
    if (want > 0) {
      double d = dlt_overall(r, l, b, part) - want * ms;
      sum += d * d;
    }
  }
  return sum;
}

int main(void) {
  /* A grid (l from 10 to 1000 ns/byte, b from 0 to 1 s), then a
   * pattern search from its best point with steps halved until they are
   * a millionth of the values. */
  double best_l = 0, best_b = 0, best = INFINITY;
  for (int i = 0; i <= 80; i++) {
    double l = 1e-8 * pow(100, i / 80.0);
    for (int k = 0; k <= 100; k++) {
      double b = k / 100.0, e = squared_error(l, b);
      if (e < best) {
        best = e;
        best_l = l;
        best_b = b;
      }
    }
  }
  double step_l = 0.05, step_b = 0.01;
  while (step_l > 1e-6 || step_b > 1e-7) {
    int moved = 0;
    for (int d = 0; d < 4; d++) {
      double l = best_l * (d == 0 ? 1 + step_l : d == 1 ? 1 - step_l : 1);
      double b = best_b + (d == 2 ? step_b : d == 3 ? -step_b : 0);
      double e = b >= 0 ? squared_error(l, b) : INFINITY;
      if (e < best) {
        best = e;
        best_l = l;
        best_b = b;
        moved = 1;
      }
    }
    if (!moved) {
      step_l /= 2;
      step_b /= 2;
    }
  }
  printf("seed 001 §7.3: Dune-770 + Dune-970 (3 cores and a GPU each) over "
         "100 Mbit/s, N = M = 10000 floats\n");
  printf("fitted to Table 11 (rows 1800-2000 unshifted, 2100 left out): l = "
         "%.4g s/byte (%.1f Mbit/s), b = %.4g ms, rms %.3f s\n\n",
         best_l, 8 / best_l / 1e6, best_b / ms, sqrt(best / 11));
  printf("%6s %12s %10s %8s %13s %6s %13s %6s %10s %7s\n", "K", "Table 11 [s]",
         "DLT [s]", "vs T.11", "no links [s]", "loss", "FPM+comm [s]", "loss",
         "serial [s]", "loss");
  for (int r = 0; r < ROWS; r++) {
    double part[8], bare_part[8];
    double t = dlt_overall(r, best_l, best_b, part);
    /* The split that ignores the links, timed with them. */
    mlsba_dlt_node_t node[2], bare[2];
    workers(best_l, best_b, node);
    workers(0, 0, bare);
    bare[0].pcie_byte_time = bare[1].pcie_byte_time = 0;
    mlsba_dlt_problem_t pr = problem(r);
    double t_bare;
    if (mlsba_partition_dlt_nodes(&pr, bare, 2, bare_part, NULL, NULL, NULL) ||
        mlsba_dlt_nodes_time(&pr, node, 2, bare_part, NULL, NULL, &t_bare)) {
      fprintf(stderr, "bench-dlt-thesis: %s\n", mlsba_last_error());
      return 1;
    }
    t_bare -= best_l * 4 * 1e4 * 1e4 + best_b;
    double fpm_part[8], t_fpm, t_serial;
    if (fpm_comm_split(node, &pr, 0, fpm_part) ||
        mlsba_dlt_nodes_time(&pr, node, 2, fpm_part, NULL, NULL, &t_fpm) ||
        fpm_comm_split(node, &pr, 1, fpm_part) ||
        mlsba_dlt_nodes_time(&pr, node, 2, fpm_part, NULL, NULL, &t_serial)) {
      fprintf(stderr, "bench-dlt-thesis: %s\n", mlsba_last_error());
      return 1;
    }
    t_fpm -= best_l * 4 * 1e4 * 1e4 + best_b;
    t_serial -= best_l * 4 * 1e4 * 1e4 + best_b;
    double want = fit_overall(r);
    printf("%6.0f %12.2f %10.2f %7.2f%% %13.2f %5.1f%% %13.2f %5.2f%% %10.2f "
           "%6.3f%%\n",
           table11_k[r] * 1000, table11_overall[r] * ms, t,
           want > 0 ? 100 * (t / (want * ms) - 1) : NAN, t_bare,
           100 * (t_bare / t - 1), t_fpm, 100 * (t_fpm / t - 1), t_serial,
           100 * (t_serial / t - 1));
  }
  printf("\nTable 11's column as printed; vs T.11 against the unshifted row "
         "(nan: left out).\nno links: the compute-only split (l = b = l_P = "
         "0), timed with the links; loss: its time over DLT's.\nFPM+comm: "
         "node models (compute, devices balanced, plus the node's link) and "
         "device\nmodels (compute, plus PCIe for the GPU), SLBA at both "
         "levels; timed with the thesis's model.\nserial: the same with "
         "the thesis's delivery in the node models (GPU first, then core "
         "after core).\n");
  return 0;
}
