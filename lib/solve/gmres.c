/* Restarted GMRES(m), right-preconditioned in the flexible form (Saad,
 * "A flexible inner-outer preconditioned GMRES algorithm", 1993): the
 * preconditioned vectors z_j = M^-1 v_j are kept, so M may change from one
 * application to the next (a multigrid cycle with an inexact coarse solve
 * does). The residual minimised is that of the unpreconditioned system.
 *
 * Orthogonalisation is classical Gram-Schmidt with one reorthogonalisation
 * (CGS2): each pass is one fused multi-dot (all h_ij and w . w in one launch)
 * and one fused multi-axpy; modified Gram-Schmidt would read back j times.
 * In double on one process the passes' sums stay on the device, added in
 * the host's order (clmg_multi_dot_to_device: the same coefficients bit for
 * bit), where the multi-axpys read them, and one read-back an iteration
 * brings both passes' to the host for H; otherwise (float, whose sums the
 * host adds in double, or distributed, where they are reduced across
 * processes) each pass reads back and uploads its coefficients. The
 * second pass's w . w gives ||w|| by Pythagoras, exact to rounding because
 * that pass changes w very little. The Krylov basis lives in one device
 * vector, n (m + 1) entries, so the fused kernels read it as one block. */
#include "solve/krylov_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { GMRES_MAX_RESTART = 200 };

/* The coefficient uploads do not wait (no host wait inside an iteration but
 * the two read-backs): each goes from a staging slot of its own, which is
 * written again only after a later blocking read-back has drained the
 * queue: slot 0 and 1 the Arnoldi step's two passes, 2 the solution
 * update. */
enum { STAGING_SLOTS = 3 };

typedef struct gmres_work {
  clmg_vector *v, *z, *r, *coefficients; /* z: NULL without a preconditioner */
  /* the passes' sums on the device (slot 0 and m + 2), views of the two
   * slots, their host copy (2 (m + 2)); NULL where the host adds them */
  clmg_vector *sums, *sums_at[2];
  double *sums_host;
  /* views of the bases' vectors, made with them: an Arnoldi step allocates
   * nothing (distributed, a failure there on one process would skip a
   * reduction the others wait in) */
  clmg_vector **v_at, **z_at;         /* m + 1 and m (z_at NULL without z); NULL where not made */
  size_t m;                           /* the restart length they were made for */
  double *h, *cs, *sn, *g, *y, *dots; /* host: H is (m + 1) x m, column-major */
  void *staging;                      /* STAGING_SLOTS x (m + 1) of the precision */
  size_t slot_bytes;
} gmres_work;

static void gmres_work_free(gmres_work *w) {
  /* the uploads from the staging slots have finished before it goes */
  if (w->coefficients)
    clFinish(w->coefficients->context->queue);
  free(w->staging);
  for (size_t j = 0; j <= w->m; ++j) {
    if (w->v_at)
      clmg_vector_destroy(w->v_at[j]);
    if (w->z_at && j < w->m)
      clmg_vector_destroy(w->z_at[j]);
  }
  free(w->v_at);
  free(w->z_at);
  clmg_vector_destroy(w->sums_at[0]);
  clmg_vector_destroy(w->sums_at[1]);
  clmg_vector_destroy(w->sums);
  free(w->sums_host);
  clmg_vector_destroy(w->v);
  clmg_vector_destroy(w->z);
  clmg_vector_destroy(w->r);
  clmg_vector_destroy(w->coefficients);
  free(w->h);
  free(w->cs);
  free(w->sn);
  free(w->g);
  free(w->y);
  free(w->dots);
}

/* Whether the Gram-Schmidt sums stay on the device: in double (the host
 * adds float partials in double) on one process (distributed, they are
 * reduced across the processes). */
static int device_sums(const clmg_context *context, clmg_dtype precision) {
  return precision == CLMG_DOUBLE && !clmg_context_is_distributed(context);
}

static clmg_status gmres_work_make(krylov_run *run, const clmg_operator *a, int m, int precondition,
                                   gmres_work *w) {
  memset(w, 0, sizeof *w);
  size_t n = a->rows, mm = (size_t)m;
  clmg_status status = clmg_vector_create(run->context, a->precision, n * (mm + 1), &w->v);
  if (status == CLMG_SUCCESS && precondition)
    status = clmg_vector_create(run->context, a->precision, n * mm, &w->z);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(run->context, a->precision, n, &w->r);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(run->context, a->precision, mm + 1, &w->coefficients);
  if (status != CLMG_SUCCESS)
    return status;
  w->h = calloc((mm + 1) * mm, sizeof *w->h);
  w->cs = calloc(mm, sizeof *w->cs);
  w->sn = calloc(mm, sizeof *w->sn);
  w->g = calloc(mm + 1, sizeof *w->g);
  w->y = calloc(mm, sizeof *w->y);
  w->dots = calloc(mm + 2, sizeof *w->dots);
  w->slot_bytes = (mm + 1) * clmg_dtype_size(a->precision);
  w->staging = calloc(STAGING_SLOTS, w->slot_bytes);
  w->m = mm;
  w->v_at = calloc(mm + 1, sizeof *w->v_at);
  w->z_at = w->z ? calloc(mm, sizeof *w->z_at) : NULL;
  if (!w->h || !w->cs || !w->sn || !w->g || !w->y || !w->dots || !w->staging || !w->v_at ||
      (w->z && !w->z_at))
    return clmg_fail(run->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "gmres: host work arrays");
  /* vector j of a basis: a view, no device memory */
  for (size_t j = 0; j <= mm && status == CLMG_SUCCESS; ++j) {
    status = clmg_vector_view(w->v, j * n, n, &w->v_at[j]);
    if (status == CLMG_SUCCESS && w->z && j < mm)
      status = clmg_vector_view(w->z, j * n, n, &w->z_at[j]);
  }
  if (status == CLMG_SUCCESS && device_sums(run->context, a->precision)) {
    w->sums_host = calloc(2 * (mm + 2), sizeof *w->sums_host);
    if (!w->sums_host)
      return clmg_fail(run->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "gmres: host work arrays");
    status = clmg_vector_create(run->context, a->precision, 2 * (mm + 2), &w->sums);
    for (size_t pass = 0; pass < 2 && status == CLMG_SUCCESS; ++pass)
      status = clmg_vector_view(w->sums, pass * (mm + 2), mm + 2, &w->sums_at[pass]);
  }
  return status;
}

/* Uploads k host coefficients (negated when `negate`) for multi_axpy. */
static clmg_status upload_coefficients(gmres_work *w, const double *c, int k, int negate,
                                       int slot) {
  clmg_vector *to = w->coefficients;
  void *staging = (char *)w->staging + (size_t)slot * w->slot_bytes;
  for (int i = 0; i < k; ++i) {
    double value = negate ? -c[i] : c[i];
    if (to->type == CLMG_FLOAT)
      ((float *)staging)[i] = (float)value;
    else
      ((double *)staging)[i] = value;
  }
  return clmg_write_buffer(to->context, to->buffer, 0, to->offset * clmg_dtype_size(to->type),
                           (size_t)k * clmg_dtype_size(to->type), staging,
                           "gmres: uploading coefficients");
}

/* One Arnoldi step: w_{j+1} = A M^-1 v_j orthogonalised against v_0..v_j
 * (CGS2), H's column j filled, w_{j+1} normalised unless it vanished. */
static clmg_status arnoldi_step(krylov_run *run, const clmg_operator *a,
                                const clmg_preconditioner *m, gmres_work *w, int j, int mcap,
                                double *h_next) {
  size_t n = a->rows;
  double *column = w->h + (size_t)j * (size_t)(mcap + 1);
  clmg_vector *vj = w->v_at[j], *zj = w->z ? w->z_at[j] : NULL, *next = w->v_at[j + 1];
  clmg_status status = CLMG_SUCCESS;
  /* distributed, a step that fails here is held back (clmg_hold) until
   * the multi-dot's reduction, which ends the solve on every process */
  clmg_context *context = run->context;
  if (status == CLMG_SUCCESS && w->z) {
    status = m->apply(m->data, vj, zj);
    if (status != CLMG_SUCCESS)
      status = clmg_hold(context,
                         krylov_failed_at(run, status, m->name ? m->name : "preconditioner", j));
  }
  if (status == CLMG_SUCCESS)
    status = clmg_hold(context, clmg_operator_apply(a, 1.0, w->z ? zj : vj, 0.0, next));
  double ww = 0;
  if (w->sums) {
    /* both passes on the device, one read-back of their sums */
    for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; ++pass) {
      status = clmg_multi_dot_to_device(w->v, n, j + 1, next, w->sums_at[pass], 0);
      if (status == CLMG_SUCCESS)
        status = clmg_multi_axpy(w->v, n, j + 1, w->sums_at[pass], next);
    }
    if (status == CLMG_SUCCESS)
      status = clmg_vector_download_doubles(w->sums, w->sums_host);
    for (int pass = 0; pass < 2 && status == CLMG_SUCCESS; ++pass) {
      const double *dots = w->sums_host + (size_t)pass * (w->m + 2);
      double projected = 0;
      for (int i = 0; i <= j; ++i) {
        column[i] = pass == 0 ? dots[i] : column[i] + dots[i];
        projected += dots[i] * dots[i];
      }
      ww = dots[j + 1] - projected;
    }
  }
  for (int pass = 0; pass < 2 && status == CLMG_SUCCESS && !w->sums; ++pass) {
    status = clmg_multi_dot(w->v, n, j + 1, next, w->dots);
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, upload_coefficients(w, w->dots, j + 1, 0, pass));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_multi_axpy(w->v, n, j + 1, w->coefficients, next));
    double projected = 0;
    for (int i = 0; i <= j; ++i) {
      column[i] = pass == 0 ? w->dots[i] : column[i] + w->dots[i];
      projected += w->dots[i] * w->dots[i];
    }
    ww = w->dots[j + 1] - projected; /* ||w||^2 after this pass's projection */
  }
  *h_next = sqrt(fmax(ww, 0.0));
  column[j + 1] = *h_next;
  if (status == CLMG_SUCCESS && *h_next > 0)
    status = clmg_hold(context, clmg_scal(1.0 / *h_next, next));
  return status;
}

/* Applies the earlier rotations to H's column j, makes rotation j and
 * applies it to g; returns |g[j + 1]|, the residual norm of the iterate. */
static double rotate(gmres_work *w, int j, int mcap) {
  double *column = w->h + (size_t)j * (size_t)(mcap + 1);
  for (int i = 0; i < j; ++i) {
    double t = w->cs[i] * column[i] + w->sn[i] * column[i + 1];
    column[i + 1] = -w->sn[i] * column[i] + w->cs[i] * column[i + 1];
    column[i] = t;
  }
  double r = hypot(column[j], column[j + 1]);
  w->cs[j] = r > 0 ? column[j] / r : 1.0;
  w->sn[j] = r > 0 ? column[j + 1] / r : 0.0;
  column[j] = r;
  column[j + 1] = 0;
  w->g[j + 1] = -w->sn[j] * w->g[j];
  w->g[j] = w->cs[j] * w->g[j];
  return fabs(w->g[j + 1]);
}

/* x += Z y (V y without a preconditioner), y from H y = g (k x k). */
static clmg_status update_solution(gmres_work *w, size_t n, int k, int mcap, clmg_vector *x) {
  for (int i = k - 1; i >= 0; --i) {
    double sum = w->g[i];
    for (int c = i + 1; c < k; ++c)
      sum -= w->h[(size_t)c * (size_t)(mcap + 1) + (size_t)i] * w->y[c];
    double diagonal = w->h[(size_t)i * (size_t)(mcap + 1) + (size_t)i];
    w->y[i] = diagonal != 0 ? sum / diagonal : 0.0;
  }
  clmg_status status = upload_coefficients(w, w->y, k, 1, 2);
  return status == CLMG_SUCCESS ? clmg_multi_axpy(w->z ? w->z : w->v, n, k, w->coefficients, x)
                                : status;
}

/* A workspace kept across solves (clmg_gmres_workspace_create): its work
 * is made by the first solve and made again only for a solve of another
 * shape (rows, precision, restart length, with or without a
 * preconditioner, context). */
struct clmg_gmres_workspace {
  int made; /* work holds a made work space of the shape below */
  gmres_work work;
  clmg_context *context;
  size_t rows;
  clmg_dtype precision;
};

clmg_status clmg_gmres_workspace_create(clmg_gmres_workspace **workspace) {
  if (!workspace)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *workspace = calloc(1, sizeof **workspace);
  return *workspace ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
}

void clmg_gmres_workspace_destroy(clmg_gmres_workspace *workspace) {
  if (!workspace)
    return;
  if (workspace->made)
    gmres_work_free(&workspace->work);
  free(workspace);
}

/* The work space of a solve: the workspace's, made (again) where its shape
 * differs, or, without a workspace, *local, made for this solve. */
static clmg_status work_for(krylov_run *run, const clmg_operator *a, int m, int precondition,
                            clmg_gmres_workspace *workspace, gmres_work *local, gmres_work **work) {
  if (!workspace) {
    *work = local;
    return gmres_work_make(run, a, m, precondition, local);
  }
  *work = &workspace->work;
  gmres_work *w = &workspace->work;
  if (workspace->made && workspace->context == run->context && workspace->rows == a->rows &&
      workspace->precision == a->precision && w->m == (size_t)m &&
      (w->z != NULL) == !!precondition &&
      (w->sums != NULL) == device_sums(run->context, a->precision))
    return CLMG_SUCCESS;
  if (workspace->made)
    gmres_work_free(w);
  workspace->made = 0;
  clmg_status status = gmres_work_make(run, a, m, precondition, w);
  if (status != CLMG_SUCCESS) {
    gmres_work_free(w);
    memset(w, 0, sizeof *w);
    return status;
  }
  workspace->made = 1;
  workspace->context = run->context;
  workspace->rows = a->rows;
  workspace->precision = a->precision;
  return CLMG_SUCCESS;
}

static clmg_status gmres_run(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result,
                             clmg_gmres_workspace *workspace, double b_norm) {
  krylov_run run;
  clmg_status status =
      krylov_begin("gmres", a, b, x, preconditioner, options, result, b_norm, &run);
  if (status != CLMG_SUCCESS)
    return status;
  int mcap = run.options.gmres_restart > 0 ? run.options.gmres_restart : 30;
  if (mcap > GMRES_MAX_RESTART)
    return clmg_fail(run.context, CLMG_ERROR_INVALID_ARGUMENT,
                     "gmres: restart length %d; at most %d", mcap, GMRES_MAX_RESTART);
  /* never more basis vectors than unknowns: all of them, when the operator
   * is distributed (each process holds a->rows; every one must restart
   * alike) */
  double unknowns = (double)a->rows;
  status = clmg_context_reduce(run.context, CLMG_REDUCE_SUM, &unknowns, 1);
  if (status != CLMG_SUCCESS)
    return status;
  if ((double)mcap > unknowns)
    mcap = unknowns >= 1 ? (int)unknowns : 1;
  if (run.b_norm == 0) { /* A x = 0: x = 0 exactly */
    int stop;
    result->converged = 1;
    status = clmg_hold(run.context, clmg_vector_fill(x, 0.0));
    return status == CLMG_SUCCESS ? krylov_record(&run, 0, 0.0, &stop) : status;
  }
  gmres_work local, *w = NULL;
  status = work_for(&run, a, mcap, preconditioner != NULL, workspace, &local, &w);
  /* a process without its work space goes no further: agreed first */
  status = clmg_context_settle(run.context, clmg_hold(run.context, status));
  double beta = 0;
  if (status == CLMG_SUCCESS)
    status = krylov_true_residual(&run, a, b, x, w->r, &beta);
  /* false_convergence: cycles whose estimate met the target while x's
   * residual did not; stagnant: cycles that cut x's residual by less than
   * 1% (float arithmetic at its rounding floor, or GMRES(m) stagnating) */
  int iteration = 0, stop = 0, false_convergence = 0, stagnant = 0;
  if (status == CLMG_SUCCESS)
    status = krylov_record(&run, 0, beta, &stop);
  while (status == CLMG_SUCCESS) {
    if (beta <= run.target) {
      result->converged = 1;
      break;
    }
    if (stop || iteration >= run.options.max_iterations || false_convergence > 2 || stagnant > 2) {
      const char *why = stop                    ? "stopped by the monitor"
                        : false_convergence > 2 ? "stalled at the rounding floor"
                        : stagnant > 2 && a->precision == CLMG_FLOAT
                            ? "stalled at the rounding floor of float arithmetic (three restarts "
                              "cut the residual by less than 1%)"
                        : stagnant > 2 ? "stagnated: three restarts cut the residual by less "
                                         "than 1%; a longer restart (gmres_restart) may help"
                                       : "not converged";
      status = krylov_not_converged(&run, why);
      break;
    }
    const double beta_before_cycle = beta;
    /* a new cycle from the true residual: v_0 = r / beta, g = beta e_1 */
    status = clmg_hold(run.context, clmg_waxpby(1.0 / beta, w->r, 0.0, w->r, w->v_at[0]));
    memset(w->g, 0, (size_t)(mcap + 1) * sizeof *w->g);
    w->g[0] = beta;
    int k = 0;
    double estimate = beta;
    for (int j = 0; j < mcap && status == CLMG_SUCCESS; ++j) {
      double h_next = 0;
      status = arnoldi_step(&run, a, preconditioner, w, j, mcap, &h_next);
      if (status != CLMG_SUCCESS)
        break;
      estimate = rotate(w, j, mcap);
      k = j + 1;
      ++iteration;
      status = krylov_record(&run, iteration, estimate, &stop);
      if (!isfinite(estimate) && status == CLMG_SUCCESS)
        status = krylov_not_converged(&run, "the residual estimate became Inf or NaN");
      if (status != CLMG_SUCCESS || estimate <= run.target || stop ||
          iteration >= run.options.max_iterations || h_next == 0)
        break;
    }
    if (status == CLMG_SUCCESS && k > 0)
      status = clmg_hold(run.context, update_solution(w, a->rows, k, mcap, x));
    if (status == CLMG_SUCCESS)
      status = krylov_true_residual(&run, a, b, x, w->r, &beta);
    if (status == CLMG_SUCCESS) { /* report the residual of x, not the estimate */
      result->final_residual = beta;
      result->relative_residual = beta / run.b_norm;
      if (result->history_length > 0) /* the last entry is x's residual */
        result->history[result->history_length - 1] = result->relative_residual;
      false_convergence = estimate <= run.target && beta > run.target ? false_convergence + 1 : 0;
      stagnant = beta > 0.99 * beta_before_cycle ? stagnant + 1 : 0;
    }
  }
  if (!workspace)
    gmres_work_free(w);
  return status;
}

static clmg_status gmres_entered(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                 const clmg_preconditioner *preconditioner,
                                 const clmg_krylov_options *options, clmg_krylov_result *result,
                                 clmg_gmres_workspace *workspace, double b_norm) {
  clmg_context *context = a ? a->context : clmg_vector_context(b);
  if (!context)
    return gmres_run(a, b, x, preconditioner, options, result, workspace, b_norm);
  clmg_context_enter(context);
  return clmg_context_leave(context,
                            gmres_run(a, b, x, preconditioner, options, result, workspace, b_norm));
}

clmg_status clmg_gmres_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                             const clmg_preconditioner *preconditioner,
                             const clmg_krylov_options *options, clmg_krylov_result *result) {
  return gmres_entered(a, b, x, preconditioner, options, result, NULL, NAN);
}

clmg_status clmg_gmres_method(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                              const clmg_preconditioner *preconditioner,
                              const clmg_krylov_options *options, clmg_krylov_result *result,
                              void *workspace, double b_norm) {
  return gmres_entered(a, b, x, preconditioner, options, result, workspace, b_norm);
}

clmg_status clmg_gmres_in_workspace(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                    const clmg_preconditioner *preconditioner,
                                    const clmg_krylov_options *options, clmg_krylov_result *result,
                                    clmg_gmres_workspace *workspace) {
  clmg_krylov_result unused;
  if (!result)
    result = &unused;
  if (!workspace) {
    memset(result, 0, sizeof *result);
    clmg_context *context = a ? a->context : clmg_vector_context(b);
    return context ? clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "gmres: NULL workspace")
                   : CLMG_ERROR_INVALID_ARGUMENT;
  }
  clmg_status status =
      krylov_solve_scaled(clmg_gmres_method, workspace, a, b, x, preconditioner, options, result);
  if (result == &unused)
    clmg_krylov_result_free(&unused);
  return status;
}
