/* Names a caller registers on a context for the options layer: its own
 * preconditioners and smoothers (clmg_register_preconditioner,
 * clmg_register_smoother). */
#include "solver/solver_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

enum { REGISTRY_SLOTS = 16, REGISTRY_NAME = 32 };

typedef struct registered_preconditioner {
  char name[REGISTRY_NAME];
  clmg_preconditioner_factory factory;
  void *data;
} registered_preconditioner;

typedef struct registered_smoother {
  char name[REGISTRY_NAME];
  clmg_smoother_factory factory;
  void *data;
} registered_smoother;

struct clmg_registry {
  registered_preconditioner preconditioners[REGISTRY_SLOTS];
  int num_preconditioners;
  registered_smoother smoothers[REGISTRY_SLOTS];
  int num_smoothers;
};

void clmg_registry_free(struct clmg_registry *registry) {
  free(registry);
}

/* The built-in names of a key, from the options table. */
static const char *builtin_names(const char *key) {
  for (size_t i = 0; clmg_option_spec_at(i); i++)
    if (strcmp(clmg_option_spec_at(i)->key, key) == 0)
      return clmg_option_spec_at(i)->values;
  return "";
}

/* Checks name and room; the registry made on first use. */
static clmg_status check_new_name(clmg_context *context, const char *name, int smoother,
                                  int have_factory) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  const char *kind = smoother ? "smoother" : "preconditioner";
  size_t length = name ? strlen(name) : 0;
  int valid = length > 0 && length < REGISTRY_NAME;
  for (size_t i = 0; valid && i < length; i++)
    valid = isalnum((unsigned char)name[i]) || name[i] == '-' || name[i] == '_';
  if (!valid)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "a registered %s needs a name of 1 to %d letters, digits, '-' or '_'", kind,
                     REGISTRY_NAME - 1);
  if (!have_factory)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "%s '%s': NULL factory", kind, name);
  const char *builtin = builtin_names(smoother ? "mg.smoother" : "precond");
  void *data = NULL;
  if (clmg_option_list_has(builtin, name) || strcmp(name, "auto") == 0 ||
      (smoother ? clmg_registered_smoother(context, name, &data) != NULL
                : clmg_registered_preconditioner(context, name, &data) != NULL))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "a %s named '%s' exists already (built-in: %s)", kind, name, builtin);
  if (!context->registry && !(context->registry = calloc(1, sizeof *context->registry)))
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for a registry");
  int used = smoother ? context->registry->num_smoothers : context->registry->num_preconditioners;
  if (used >= REGISTRY_SLOTS)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s '%s': a context holds at most %d registered %ss", kind, name,
                     REGISTRY_SLOTS, kind);
  return CLMG_SUCCESS;
}

clmg_status clmg_register_preconditioner(clmg_context *context, const char *name,
                                         clmg_preconditioner_factory factory, void *data) {
  clmg_status status = check_new_name(context, name, 0, factory != NULL);
  if (status != CLMG_SUCCESS)
    return status;
  registered_preconditioner *slot =
      &context->registry->preconditioners[context->registry->num_preconditioners++];
  snprintf(slot->name, sizeof slot->name, "%s", name);
  slot->factory = factory;
  slot->data = data;
  return CLMG_SUCCESS;
}

clmg_status clmg_register_smoother(clmg_context *context, const char *name,
                                   clmg_smoother_factory factory, void *data) {
  clmg_status status = check_new_name(context, name, 1, factory != NULL);
  if (status != CLMG_SUCCESS)
    return status;
  registered_smoother *slot = &context->registry->smoothers[context->registry->num_smoothers++];
  snprintf(slot->name, sizeof slot->name, "%s", name);
  slot->factory = factory;
  slot->data = data;
  return CLMG_SUCCESS;
}

clmg_preconditioner_factory clmg_registered_preconditioner(const clmg_context *context,
                                                           const char *name, void **data) {
  const struct clmg_registry *r = context ? context->registry : NULL;
  for (int i = 0; r && name && i < r->num_preconditioners; i++)
    if (strcmp(r->preconditioners[i].name, name) == 0) {
      *data = r->preconditioners[i].data;
      return r->preconditioners[i].factory;
    }
  return NULL;
}

clmg_smoother_factory clmg_registered_smoother(const clmg_context *context, const char *name,
                                               void **data) {
  const struct clmg_registry *r = context ? context->registry : NULL;
  for (int i = 0; r && name && i < r->num_smoothers; i++)
    if (strcmp(r->smoothers[i].name, name) == 0) {
      *data = r->smoothers[i].data;
      return r->smoothers[i].factory;
    }
  return NULL;
}

void clmg_registered_names(const clmg_context *context, int smoothers, char *list, size_t size) {
  const struct clmg_registry *r = context ? context->registry : NULL;
  int count = !r ? 0 : smoothers ? r->num_smoothers : r->num_preconditioners;
  size_t used = 0;
  list[0] = '\0';
  for (int i = 0; i < count && used < size; i++) {
    const char *name = smoothers ? r->smoothers[i].name : r->preconditioners[i].name;
    int n = snprintf(list + used, size - used, "%s%s", i ? ", " : "", name);
    used += n > 0 ? (size_t)n : 0;
  }
}
