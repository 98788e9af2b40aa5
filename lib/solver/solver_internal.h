/* What lib/solver's files share (not installed): the options table and its
 * typed reads, the context's registrations, the view's JSON. */
#ifndef CLMG_SOLVER_INTERNAL_H
#define CLMG_SOLVER_INTERNAL_H

#include "clmg/solver.h"
#include "solve/internal.h"

struct cJSON;

typedef enum clmg_option_kind {
  CLMG_OPTION_NAME = 0,  /* one of `values` */
  CLMG_OPTION_OPEN_NAME, /* one of `values` or a name registered on the context */
  CLMG_OPTION_NUMBER,
  CLMG_OPTION_INTEGER,
  CLMG_OPTION_STRING
} clmg_option_kind;

typedef struct clmg_option_spec {
  const char *key;
  clmg_option_kind kind;
  int accepts_auto;
  const char *default_value;
  const char *values; /* NAME: "a,b,c" */
  double low, high;   /* NUMBER, INTEGER */
  const char *description;
} clmg_option_spec;

const clmg_option_spec *clmg_option_spec_at(size_t index);
/* "a,b,c" holds word? */
int clmg_option_list_has(const char *list, const char *word);

clmg_status clmg_options_copy(const clmg_options *from, clmg_options **to, clmg_error *error);
/* Typed reads of checked values: if_auto where the value is "auto" (or ""). */
int clmg_options_is_auto(const clmg_options *options, const char *key);
double clmg_options_number(const clmg_options *options, const char *key, double if_auto);
long clmg_options_integer(const clmg_options *options, const char *key, long if_auto);
int clmg_options_is(const clmg_options *options, const char *key, const char *value);
/* Records what an AUTO became (no check: the library's own values). */
clmg_status clmg_options_resolve(clmg_options *options, const char *key, const char *value,
                                 clmg_error *error);
struct cJSON *clmg_options_to_cjson(const clmg_options *options, int all_keys);

/* The context's registrations (lib/solver/registry.c); NULL factory when the
 * name is not registered. The list of names, comma-separated, for messages. */
clmg_preconditioner_factory clmg_registered_preconditioner(const clmg_context *context,
                                                           const char *name, void **data);
clmg_smoother_factory clmg_registered_smoother(const clmg_context *context, const char *name,
                                               void **data);
void clmg_registered_names(const clmg_context *context, int smoothers, char *list, size_t size);

/* Where the solver's setup goes (its view's "solver_setup"), each phase
 * with device work ended by a clmg_finish (nullspace_s, the file of
 * amg.coordinates or amg.near_nullspace read and the candidates made, is
 * the host's alone) and without the kernels' compile time (compile_s):
 * they add up to at most setup_s, the rest being the solver's bookkeeping.
 * X(field, label) for each, in the order create runs them. */
#define CLMG_SOLVER_SETUP_PHASES(X)                                                                \
  X(checks_s, "checks of the matrix and the options (symmetry, empty rows)")                       \
  X(matrix_s, "the device matrix: its upload, layout and format")                                  \
  X(nullspace_s, "the near-nullspace: its file read, the rigid-body modes")                        \
  X(preconditioner_s, "the preconditioner (AMG: its setup, the phases below)")                     \
  X(kernels_s, "one iteration that readies the solve's kernels")

typedef struct clmg_solver_setup_times {
#define PHASE_FIELD(field, label) double field;
  CLMG_SOLVER_SETUP_PHASES(PHASE_FIELD)
#undef PHASE_FIELD
} clmg_solver_setup_times;

struct clmg_solver {
  clmg_context *context;
  clmg_options *options; /* resolved: every AUTO replaced */
  clmg_krylov_method method;
  int cycles_only; /* krylov=none: multigrid cycles as the solver */
  clmg_dtype precision;
  int mixed;
  size_t rows;
  clmg_matrix *matrix, *float_matrix; /* NULL around a caller's operator */
  int borrows_matrix, owns_float_matrix;
  clmg_operator op; /* borrows matrix, or a copy of the caller's */
  clmg_multigrid *multigrid;
  int owns_multigrid;
  clmg_preconditioner preconditioner; /* apply NULL: none */
  char preconditioner_name[32];
  clmg_krylov_options krylov;
  /* CG's work vectors, made by the first CG solve (the setup's warm-up
   * iteration) and kept: a solve allocates and zero-fills nothing */
  clmg_cg_workspace cg_work;
  int have_cg_work;
  clmg_gmres_workspace *gmres_work; /* GMRES's, likewise (NULL until the first) */
  clmg_amg_setup_times amg_times;
  int have_amg_times;
  double setup_s, compile_s;
  clmg_solver_setup_times times; /* zeros where the solver did not build it */
  int have_times;
  char unused[512]; /* keys set but not read: "mg.smoother, mg.steps" */
};

/* The hierarchy's view into an object (lib/solver/view.c). */
int clmg_multigrid_view_add(struct cJSON *object, const clmg_multigrid *multigrid,
                            const clmg_amg_setup_times *times);

#endif
