/* mlsba-info's view of saved device models, what starpu_perfmodel_display
 * and starpu_perfmodel_plot are to StarPU: the files of a model folder,
 * one file's points with the runs behind them, and its picture. Each
 * returns 0, or the exit status after one line on stderr. */
#ifndef MLSBA_TOOLS_INFO_MODELS_H
#define MLSBA_TOOLS_INFO_MODELS_H

/* Every saved model and left-out decision in dir, sorted by name. */
int info_list_models(const char *prog, const char *dir);

/* One model file (a path, or a file name in dir): its key, max_load and
 * points (load, speed, time, runs, spread); with plot_dir (else NULL),
 * also model.png and model.svg there (gnuplot), its speed function. */
int info_show_model(const char *prog, const char *dir, const char *file,
                    const char *plot_dir);

#endif
