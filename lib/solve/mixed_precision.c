/* A preconditioner in another precision than the Krylov method it serves
 * (Fu et al., "Architecting the finite element method pipeline for the GPU":
 * a float multigrid inside a double Krylov method halves the cycle's
 * traffic; the Krylov method's residuals stay double, so the attainable
 * accuracy is double's). Two conversions per application, one launch each. */
#include "solve/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct mixed_preconditioner {
  clmg_preconditioner inner;
  clmg_vector *r, *z; /* in the inner precision */
} mixed_preconditioner;

static clmg_status mixed_apply(void *data, const clmg_vector *r, clmg_vector *z) {
  mixed_preconditioner *m = data;
  clmg_status status = clmg_vector_convert(r, m->r);
  if (status == CLMG_SUCCESS)
    status = m->inner.apply(m->inner.data, m->r, m->z);
  return status == CLMG_SUCCESS ? clmg_vector_convert(m->z, z) : status;
}

static void mixed_destroy(void *data) {
  mixed_preconditioner *m = data;
  if (!m)
    return;
  clmg_preconditioner_destroy(&m->inner);
  clmg_vector_destroy(m->r);
  clmg_vector_destroy(m->z);
  free(m);
}

static void mixed_explain(void *data, char *text, size_t size) {
  mixed_preconditioner *m = data;
  m->inner.explain(m->inner.data, text, size);
}

clmg_status clmg_preconditioner_in_precision(clmg_context *context, size_t n, clmg_dtype outer_type,
                                             clmg_dtype inner_type, clmg_preconditioner *inner,
                                             clmg_preconditioner *preconditioner) {
  if (!context || !inner || !preconditioner)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(preconditioner, 0, sizeof *preconditioner);
  clmg_clear_message(context);
  clmg_status status = CLMG_SUCCESS;
  if (!inner->apply)
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "mixed-precision preconditioner: the inner preconditioner has no apply");
  else if ((outer_type != CLMG_DOUBLE && outer_type != CLMG_FLOAT) ||
           (inner_type != CLMG_DOUBLE && inner_type != CLMG_FLOAT))
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                       "mixed-precision preconditioner: precisions %s and %s; double or float",
                       clmg_dtype_name(outer_type), clmg_dtype_name(inner_type));
  mixed_preconditioner *m = NULL;
  if (status == CLMG_SUCCESS) {
    m = calloc(1, sizeof *m);
    if (!m)
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "mixed-precision preconditioner");
  }
  if (status == CLMG_SUCCESS) {
    m->inner = *inner;
    memset(inner, 0, sizeof *inner);
    status = clmg_vector_create(context, inner_type, n, &m->r);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(context, inner_type, n, &m->z);
  }
  if (status != CLMG_SUCCESS) {
    if (m)
      mixed_destroy(m);
    else
      clmg_preconditioner_destroy(inner);
    return status;
  }
  preconditioner->apply = mixed_apply;
  preconditioner->data = m;
  preconditioner->destroy = mixed_destroy;
  preconditioner->name = m->inner.name ? m->inner.name : "mixed precision";
  preconditioner->explain = m->inner.explain ? mixed_explain : NULL;
  return CLMG_SUCCESS;
}
