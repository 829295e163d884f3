/* The factorizations the driver runs, one table each: everything that
 * differs between them, so that the driver (driver.h) never asks which
 * one it runs. The kernels are in lu.c, chol.c and qr.c, the OpenCL
 * halves in cl_lu.c, cl_chol.c and cl_qr.c. */
#include "factor.h"

const mlsba__factor_ops_t mlsba__factor_getrf_ops = {
    .name = "getrf",
    .update_load = "getrf-update",
    .lookahead = 1,
    .units = mlsba__lu_units,
    .unit_flops = mlsba__lu_unit_flops,
    .panel_flops = mlsba__lu_panel_flops,
    .panel_serial_flops = mlsba__lu_panel_serial_flops,
    .flops = mlsba__lu_flops,
    .unit_columns = mlsba__lu_unit_columns,
    .panel = mlsba__lu_panel,
    .update = mlsba__lu_update,
    .replay = mlsba__lu_replay,
    .finish = mlsba__lu_swap_left,
    .finish_rows = mlsba__lu_swap_left_rows,
    .finish_load = "getrf-swaps",
    .open = mlsba__lu_open,
    .close = mlsba__lu_close,
    .cl = &mlsba__factor_cl_lu,
};

/* The lower panel's solve may be split: its rows are independent, and
 * with lookahead the next panel's core need only factorize the diagonal
 * block. */
const mlsba__factor_ops_t mlsba__factor_potrf_lower_ops = {
    .name = "potrf",
    .update_load = "potrf-update",
    .lookahead = 1,
    .units = mlsba__chol_units,
    .unit_flops = mlsba__chol_unit_flops,
    .panel_flops = mlsba__chol_panel_flops,
    .panel_serial_flops = mlsba__chol_panel_serial_flops,
    .flops = mlsba__chol_flops,
    .unit_columns = mlsba__chol_unit_columns,
    .panel = mlsba__chol_panel,
    .update = mlsba__chol_update,
    .replay = mlsba__chol_replay,
    .panel_diag = mlsba__chol_diag,
    .solve = mlsba__chol_solve,
    .solve_rows = mlsba__chol_solve_rows,
    .solve_load = "potrf-solve",
    .cl = &mlsba__factor_cl_chol,
};

/* The upper panel solves a block row of every trailing column: it waits
 * for the whole update. */
const mlsba__factor_ops_t mlsba__factor_potrf_upper_ops = {
    .name = "potrf",
    .update_load = "potrf-update",
    .lookahead = 0,
    .returns_block_row = 1,
    .units = mlsba__chol_units,
    .unit_flops = mlsba__chol_unit_flops,
    .panel_flops = mlsba__chol_panel_flops,
    .flops = mlsba__chol_flops,
    .unit_columns = mlsba__chol_unit_columns,
    .panel = mlsba__chol_panel,
    .update = mlsba__chol_update,
    .replay = mlsba__chol_replay,
    .cl = &mlsba__factor_cl_chol,
};

const mlsba__factor_ops_t mlsba__factor_geqrf_ops = {
    .name = "geqrf",
    .update_load = "geqrf-update",
    .lookahead = 1,
    .units = mlsba__qr_units,
    .unit_flops = mlsba__qr_unit_flops,
    .panel_flops = mlsba__qr_panel_flops,
    .flops = mlsba__qr_flops,
    .unit_columns = mlsba__lu_unit_columns,
    .panel = mlsba__qr_panel,
    .update = mlsba__qr_update,
    .replay = mlsba__qr_replay,
    .cl = &mlsba__factor_cl_qr,
};
