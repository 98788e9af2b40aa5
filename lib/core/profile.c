/* Kernel profile: while it runs, every kernel clmg launches gets an OpenCL
 * event, and the device's start and end times are summed per kernel name.
 * The queue is created with profiling enabled (context.c), so this costs
 * one event per launch and nothing when off. Events are resolved in batches,
 * which waits for the oldest launches only when many are pending. */
#include "core/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PROFILE_BATCH = 4096 };

typedef struct pending_launch {
  size_t total; /* index into totals */
  cl_event event;
} pending_launch;

struct clmg_profile {
  pending_launch *pending;
  size_t pending_count;
  clmg_kernel_time *totals;
  size_t total_count, total_capacity;
  int out_of_memory;
};

/* The index of name's total, made (with a copy of the name: callers may
 * pass a buffer) on first use; SIZE_MAX without memory. */
static size_t total_for(clmg_profile *p, const char *name, uint64_t work_items) {
  for (size_t k = 0; k < p->total_count; ++k)
    if (p->totals[k].work_items == work_items && strcmp(p->totals[k].name, name) == 0)
      return k;
  if (p->total_count == p->total_capacity) {
    size_t capacity = p->total_capacity ? 2 * p->total_capacity : 64;
    clmg_kernel_time *grown = realloc(p->totals, capacity * sizeof *grown);
    if (!grown)
      return SIZE_MAX;
    p->totals = grown;
    p->total_capacity = capacity;
  }
  char *copy = malloc(strlen(name) + 1);
  if (!copy)
    return SIZE_MAX;
  strcpy(copy, name);
  clmg_kernel_time *t = &p->totals[p->total_count];
  memset(t, 0, sizeof *t);
  t->name = copy;
  t->work_items = work_items;
  return p->total_count++;
}

/* Waits for the pending launches and adds their times. */
static clmg_status resolve_pending(clmg_context *context, clmg_profile *p) {
  clmg_status status = CLMG_SUCCESS;
  for (size_t k = 0; k < p->pending_count; ++k) {
    pending_launch *launch = &p->pending[k];
    cl_ulong start = 0, end = 0;
    cl_int error = clWaitForEvents(1, &launch->event);
    if (error == CL_SUCCESS)
      error = clGetEventProfilingInfo(launch->event, CL_PROFILING_COMMAND_START, sizeof start,
                                      &start, NULL);
    if (error == CL_SUCCESS)
      error =
          clGetEventProfilingInfo(launch->event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    clReleaseEvent(launch->event);
    if (error != CL_SUCCESS) {
      if (status == CLMG_SUCCESS)
        status = clmg_fail_cl(context, error, "reading a kernel's profiling times");
      continue;
    }
    clmg_kernel_time *total = &p->totals[launch->total];
    total->launches++;
    total->seconds += end > start ? (double)(end - start) * 1e-9 : 0.0;
  }
  p->pending_count = 0;
  return status;
}

static void profile_free(clmg_profile *p) {
  if (!p)
    return;
  for (size_t k = 0; k < p->pending_count; ++k)
    clReleaseEvent(p->pending[k].event);
  for (size_t k = 0; k < p->total_count; ++k)
    free((char *)p->totals[k].name);
  free(p->pending);
  free(p->totals);
  free(p);
}

void clmg_profile_destroy(clmg_context *context) {
  profile_free(context->profile);
  context->profile = NULL;
}

cl_event *clmg_profile_event_slot(clmg_context *context, const char *name, uint64_t work_items) {
  clmg_profile *p = context->profile;
  if (!p)
    return NULL;
  if (p->pending_count == PROFILE_BATCH && resolve_pending(context, p) != CLMG_SUCCESS)
    return NULL;
  size_t total = total_for(p, name ? name : "unnamed kernel", work_items);
  if (total == SIZE_MAX) {
    p->out_of_memory = 1;
    return NULL;
  }
  p->pending[p->pending_count].total = total;
  p->pending[p->pending_count].event = NULL;
  return &p->pending[p->pending_count].event;
}

void clmg_launch_commit(clmg_context *context, cl_event *slot, int launched) {
  if (launched)
    clmg_count_command(context, 0);
  clmg_profile *p = context->profile;
  if (!p || !slot)
    return;
  if (launched && *slot)
    p->pending_count++;
}

clmg_status clmg_profile_start(clmg_context *context) {
  if (!context)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  clmg_profile_destroy(context);
  clmg_profile *p = calloc(1, sizeof *p);
  if (p)
    p->pending = malloc(PROFILE_BATCH * sizeof *p->pending);
  if (!p || !p->pending) {
    profile_free(p);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "kernel profile");
  }
  context->profile = p;
  return CLMG_SUCCESS;
}

static int by_time_descending(const void *left, const void *right) {
  const clmg_kernel_time *a = left, *b = right;
  return (a->seconds < b->seconds) - (a->seconds > b->seconds);
}

clmg_status clmg_profile_stop(clmg_context *context, clmg_kernel_time **times, size_t *count) {
  if (!context || !times || !count)
    return context ? clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                               "profile stop: NULL times or count")
                   : CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(context);
  *times = NULL;
  *count = 0;
  clmg_profile *p = context->profile;
  if (!p)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "profile stop: no profile is running (clmg_profile_start)");
  clmg_status status = resolve_pending(context, p);
  if (status == CLMG_SUCCESS && p->out_of_memory)
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "kernel profile: the totals");
  if (status == CLMG_SUCCESS && p->total_count > 0) {
    /* one block: the totals, then their names, so that free(*times) frees all */
    size_t names = 0;
    for (size_t k = 0; k < p->total_count; ++k)
      names += strlen(p->totals[k].name) + 1;
    clmg_kernel_time *result = malloc(p->total_count * sizeof *result + names);
    if (!result) {
      status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "kernel profile: the totals");
    } else {
      qsort(p->totals, p->total_count, sizeof *p->totals, by_time_descending);
      char *text = (char *)(result + p->total_count);
      for (size_t k = 0; k < p->total_count; ++k) {
        result[k] = p->totals[k];
        size_t length = strlen(p->totals[k].name) + 1;
        memcpy(text, p->totals[k].name, length);
        result[k].name = text;
        text += length;
      }
      *times = result;
      *count = p->total_count;
    }
  }
  clmg_profile_destroy(context);
  return status;
}
