/* BiCGStab (van der Vorst 1992), right-preconditioned: the residual it
 * tracks is that of the unpreconditioned system. Three read-backs per
 * iteration: (r . r_hat, r . r) together, r_hat . v, and (t . s, t . t)
 * together. A breakdown (r_hat . r = 0, r_hat . v = 0 or omega = 0) restarts
 * once from the current x with r_hat = r; a second one gives up. */
#include "solve/krylov_common.h"

#include <math.h>
#include <string.h>

enum { BICGSTAB_VECTORS = 8 };

static clmg_status precondition(krylov_run *run, const clmg_preconditioner *m,
                                const clmg_vector *in, clmg_vector *out, int iteration) {
  if (!m)
    return clmg_copy(in, out);
  clmg_status status = m->apply(m->data, in, out);
  return status == CLMG_SUCCESS
             ? status
             : krylov_failed_at(run, status, m->name ? m->name : "preconditioner", iteration);
}

/* Distributed, a step that fails on one process is held back (clmg_hold):
 * it carries on to the next reduction, which ends the solve everywhere. */
static clmg_status bicgstab_run(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result) {
  krylov_run run;
  clmg_status status =
      krylov_begin("bicgstab", a, b, x, preconditioner, options, result, NAN, &run);
  if (status != CLMG_SUCCESS)
    return status;
  int stop = 0;
  clmg_context *context = run.context;
  if (run.b_norm == 0) { /* A x = 0: x = 0 exactly */
    result->converged = 1;
    status = clmg_hold(context, clmg_vector_fill(x, 0.0));
    return status == CLMG_SUCCESS ? krylov_record(&run, 0, 0.0, &stop) : status;
  }
  clmg_vector *v[BICGSTAB_VECTORS] = {0};
  for (int i = 0; i < BICGSTAB_VECTORS && status == CLMG_SUCCESS; ++i)
    status = clmg_vector_create(context, a->precision, a->rows, &v[i]);
  /* a process without its vectors goes no further: agreed first */
  status = clmg_context_settle(context, clmg_hold(context, status));
  clmg_vector *r = v[0], *r_hat = v[1], *p = v[2], *p_hat = v[3], *w = v[4], *s = v[5],
              *s_hat = v[6], *t = v[7]; /* w holds A p_hat */
  double r_norm = 0, rho = 1, alpha = 1, omega = 1;
  int restarts = 0, iteration = 0, fresh = 1; /* fresh: r_hat = r, p = w = 0 due */
  if (status == CLMG_SUCCESS)
    status = krylov_true_residual(&run, a, b, x, r, &r_norm);
  while (status == CLMG_SUCCESS) {
    if (fresh) {
      status = clmg_hold(context, clmg_copy(r, r_hat));
      if (status == CLMG_SUCCESS)
        status = clmg_hold(context, clmg_vector_fill(p, 0.0));
      if (status == CLMG_SUCCESS)
        status = clmg_hold(context, clmg_vector_fill(w, 0.0));
      rho = alpha = omega = 1;
      fresh = 0;
    }
    double rho_next = 0, rr = 0;
    if (status == CLMG_SUCCESS)
      status = clmg_dot2(r, r_hat, &rho_next, &rr);
    if (status != CLMG_SUCCESS)
      break;
    r_norm = sqrt(rr);
    status = krylov_record(&run, iteration, r_norm, &stop);
    if (status != CLMG_SUCCESS)
      break;
    if (!isfinite(r_norm)) {
      status = krylov_not_converged(&run, "the residual became Inf or NaN");
      break;
    }
    if (r_norm <= run.target) { /* believe only the residual of x */
      status = krylov_true_residual(&run, a, b, x, r, &r_norm);
      if (status != CLMG_SUCCESS)
        break;
      result->final_residual = r_norm;
      result->relative_residual = r_norm / run.b_norm;
      if (result->history_length > 0) /* the last entry is x's residual */
        result->history[result->history_length - 1] = result->relative_residual;
      if (r_norm <= run.target) {
        result->converged = 1;
        break;
      }
      if (++restarts > 2) {
        status = krylov_not_converged(&run, "stalled at the rounding floor");
        break;
      }
      fresh = 1;
      continue;
    }
    if (stop || iteration >= run.options.max_iterations) {
      status = krylov_not_converged(&run, stop ? "stopped by the monitor" : "not converged");
      break;
    }
    if (rho_next == 0) {
      if (++restarts > 2) {
        status = krylov_not_converged(&run, "breakdown (r_hat . r = 0)");
        break;
      }
      fresh = 1;
      continue;
    }
    double beta = (rho_next / rho) * (alpha / omega);
    status = clmg_hold(context, clmg_axpy(-omega, w, p)); /* p = r + beta (p - omega v) */
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_axpby(1.0, r, beta, p));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, precondition(&run, preconditioner, p, p_hat, iteration + 1));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_operator_apply(a, 1.0, p_hat, 0.0, w));
    double rv = 0;
    if (status == CLMG_SUCCESS)
      status = clmg_dot(r_hat, w, &rv);
    if (status != CLMG_SUCCESS)
      break;
    if (rv == 0 || !isfinite(rv)) {
      if (++restarts > 2) {
        status = krylov_not_converged(&run, "breakdown (r_hat . A p = 0)");
        break;
      }
      fresh = 1;
      continue;
    }
    alpha = rho_next / rv;
    status = clmg_hold(context, clmg_waxpby(1.0, r, -alpha, w, s));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, precondition(&run, preconditioner, s, s_hat, iteration + 1));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_operator_apply(a, 1.0, s_hat, 0.0, t));
    double ts = 0, tt = 0;
    if (status == CLMG_SUCCESS)
      status = clmg_dot2(t, s, &ts, &tt);
    if (status != CLMG_SUCCESS)
      break;
    omega = tt > 0 ? ts / tt : 0.0;
    status = clmg_hold(context, clmg_axpy(alpha, p_hat, x));
    if (status == CLMG_SUCCESS && omega != 0)
      status = clmg_hold(context, clmg_axpy(omega, s_hat, x));
    if (status == CLMG_SUCCESS)
      status = clmg_hold(context, clmg_waxpby(1.0, s, -omega, t, r));
    rho = rho_next;
    ++iteration;
    if (status == CLMG_SUCCESS && omega == 0) { /* s was 0, or the step stagnates */
      if (tt > 0 && ++restarts > 2) {
        status = krylov_not_converged(&run, "breakdown (omega = 0)");
        break;
      }
      fresh = 1;
    }
  }
  for (int i = 0; i < BICGSTAB_VECTORS; ++i)
    clmg_vector_destroy(v[i]);
  return status;
}

clmg_status clmg_bicgstab_solve(const clmg_operator *a, const clmg_vector *b, clmg_vector *x,
                                const clmg_preconditioner *preconditioner,
                                const clmg_krylov_options *options, clmg_krylov_result *result) {
  clmg_context *context = a ? a->context : clmg_vector_context(b);
  if (!context)
    return bicgstab_run(a, b, x, preconditioner, options, result);
  clmg_context_enter(context);
  return clmg_context_leave(context, bicgstab_run(a, b, x, preconditioner, options, result));
}
