/* The coarse tail: the levels of a hierarchy below the size where the
 * device is latency-bound (the device table's tail_rows, or the engine's
 * option) run each cycle's sub-cycle as ONE launch of one work-group
 * (cl/coarse_tail.cl). A V(4,4) cycle launches about ten kernels per level
 * (smoothing steps, defect, restriction, prolongation), each 5-7 us on a
 * GPU whatever its size; the tail's levels cost one launch in all.
 *
 * The kernel needs what the level objects hold, in a form it can read: the
 * matrices as CSR (downloaded from the device matrices, any format, and
 * packed), each smoother in polynomial form (clmg_smoother_polynomial: the
 * diagonal smoothers and Chebyshev; their W and step coefficients) and the
 * direct coarse solver's inverse. Where any of these is missing (a caller's
 * smoother or operator, a Krylov coarse solve), there is no tail and the
 * engine's cycle runs as before. The arithmetic is the engine's, in the
 * hierarchy's precision, so the results agree within rounding. The tail is
 * made again on every refresh: it copies values. */
#include "solve/internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* cl/coarse_tail.cl's per-level table */
enum {
  TAIL_N = 0,
  TAIL_A = 1,
  TAIL_P = 4,
  TAIL_R = 7,
  TAIL_W = 10,
  TAIL_COEF = 11,
  TAIL_X = 12,
  TAIL_B = 13,
  TAIL_D = 14,
  TAIL_META = 15
};

/* its operations (four ints each: code, level, step, unused) */
enum {
  OP_END = 0,
  OP_ZERO,
  OP_FIRST,
  OP_DIRECTION,
  OP_UPDATE,
  OP_DEFECT,
  OP_RESTRICT,
  OP_COARSE,
  OP_PROLONG,
  TAIL_OP = 4
};

/* The programs of every cycle the engine may start in the tail (3 types x
 * start levels x zero guess or not) together hold at most this many ints:
 * a W-cycle's doubles per level. */
#define TAIL_PROGRAM_LIMIT ((size_t)1 << 22)

struct clmg_coarse_tail {
  clmg_context *context;
  clmg_dtype precision;
  int top;
  const clmg_coarse_solver *coarse; /* the engine's; its inverse is asked for at each cycle */
  size_t coarse_rows;
  cl_mem meta, index, values, work, program;
  size_t meta_bytes, index_bytes, values_bytes, work_bytes, program_bytes;
  int *start;       /* [(type * (top + 1) + level) * 2 + zero_guess]: its program's first int */
  cl_kernel kernel; /* owned by the program manager */
  size_t group;
};

void clmg_coarse_tail_destroy(clmg_coarse_tail *t) {
  if (!t)
    return;
  clmg_device_free(t->context, t->meta, t->meta_bytes);
  clmg_device_free(t->context, t->index, t->index_bytes);
  clmg_device_free(t->context, t->values, t->values_bytes);
  clmg_device_free(t->context, t->work, t->work_bytes);
  clmg_device_free(t->context, t->program, t->program_bytes);
  free(t->start);
  free(t);
}

int clmg_coarse_tail_top(const clmg_coarse_tail *t) {
  return t ? t->top : -1;
}

/* The packing: host arrays that grow, and the levels' CSR. */
typedef struct packing {
  int32_t *meta;
  int32_t *index;
  size_t index_count, index_capacity;
  double *values;
  size_t values_count, values_capacity;
  size_t work_count;
  int32_t *program;
  size_t program_count, program_capacity;
  const clmg_tail_level *levels;
  int too_large;
} packing;

static int grow(void **array, size_t *capacity, size_t needed, size_t element) {
  if (needed <= *capacity)
    return 1;
  size_t capacity_next = *capacity ? *capacity : 1024;
  while (capacity_next < needed)
    capacity_next *= 2;
  void *grown = realloc(*array, capacity_next * element);
  if (!grown)
    return 0;
  *array = grown;
  *capacity = capacity_next;
  return 1;
}

/* Room for `count` more values; their first offset, or -1 (no memory, or
 * beyond the kernel's 32-bit offsets: too_large). */
static int64_t reserve_values(packing *p, size_t count) {
  if (p->values_count + count > INT_MAX) {
    p->too_large = 1;
    return -1;
  }
  if (!grow((void **)&p->values, &p->values_capacity, p->values_count + count, sizeof(double)))
    return -1;
  int64_t at = (int64_t)p->values_count;
  p->values_count += count;
  return at;
}

/* Appends a matrix: meta[slot..slot+2] get its offsets. */
static int pack_matrix(packing *p, const clmg_csr *a, int32_t *meta) {
  size_t nnz = clmg_csr_nnz(a), needed = p->index_count + a->rows + 1 + nnz;
  if (needed > INT_MAX) {
    p->too_large = 1;
    return 0;
  }
  if (!grow((void **)&p->index, &p->index_capacity, needed, sizeof(int32_t)))
    return 0;
  int64_t values_at = reserve_values(p, nnz);
  if (values_at < 0)
    return 0;
  meta[0] = (int32_t)p->index_count;
  for (size_t i = 0; i <= a->rows; ++i)
    p->index[p->index_count++] = (int32_t)a->row_ptr[i];
  meta[1] = (int32_t)p->index_count;
  memcpy(p->index + p->index_count, a->col, nnz * sizeof(int32_t));
  p->index_count += nnz;
  meta[2] = (int32_t)values_at;
  memcpy(p->values + values_at, a->val, nnz * sizeof(double));
  return 1;
}

/* The operator's device matrix as host CSR; 0 (nothing set) when the
 * operator is no device matrix of the tail's precision. */
static clmg_status operator_csr(const clmg_operator *op, clmg_dtype precision, clmg_csr *csr,
                                int *usable) {
  const clmg_matrix *matrix = clmg_operator_matrix(op);
  *usable = matrix && clmg_matrix_precision(matrix) == precision;
  memset(csr, 0, sizeof *csr);
  return *usable ? clmg_matrix_download_csr(matrix, csr) : CLMG_SUCCESS;
}

/* Level l's entries; *usable 0 where the level cannot be in the tail. */
static clmg_status pack_level(clmg_context *context, clmg_dtype precision, packing *p, int l,
                              const clmg_tail_level *level, int *usable) {
  int32_t *meta = p->meta + (size_t)l * TAIL_META;
  const size_t n = level->a->rows;
  meta[TAIL_N] = (int32_t)n;
  meta[TAIL_X] = (int32_t)p->work_count;
  meta[TAIL_B] = (int32_t)(p->work_count + n);
  meta[TAIL_D] = (int32_t)(p->work_count + 2 * n);
  p->work_count += 3 * n;
  if (p->work_count > INT_MAX || n > INT_MAX) {
    p->too_large = 1;
    *usable = 0;
    return CLMG_SUCCESS;
  }
  const clmg_operator *ops[3] = {level->a, level->p, level->r};
  const int slots[3] = {TAIL_A, TAIL_P, TAIL_R};
  clmg_status status = CLMG_SUCCESS;
  *usable = 1;
  for (int k = 0; k < (l > 0 ? 3 : 1) && status == CLMG_SUCCESS && *usable; ++k) {
    clmg_csr csr;
    status = operator_csr(ops[k], precision, &csr, usable);
    if (status == CLMG_SUCCESS && *usable && !pack_matrix(p, &csr, meta + slots[k]))
      *usable = 0;
    clmg_csr_free(&csr);
  }
  if (status != CLMG_SUCCESS || !*usable || l == 0)
    return status;
  /* the smoother: its diagonal and the coefficients of its steps */
  const int steps = level->pre > level->post ? level->pre : level->post;
  const int wanted = steps > 0 ? steps : 1;
  double *alpha = malloc((size_t)wanted * sizeof *alpha);
  double *beta = malloc((size_t)wanted * sizeof *beta);
  const clmg_vector *w = NULL;
  if (!alpha || !beta) {
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "coarse tail: smoother steps");
  } else if (!clmg_smoother_polynomial(level->smoother, wanted, &w, alpha, beta) ||
             clmg_vector_length(w) != n) {
    *usable = 0;
  } else {
    int64_t at_w = reserve_values(p, n), at_coef = at_w < 0 ? -1 : reserve_values(p, 2 * wanted);
    if (at_w < 0 || at_coef < 0) {
      *usable = 0;
    } else {
      meta[TAIL_W] = (int32_t)at_w;
      meta[TAIL_COEF] = (int32_t)at_coef;
      for (int k = 0; k < wanted; ++k) {
        p->values[at_coef + 2 * k] = alpha[k];
        p->values[at_coef + 2 * k + 1] = beta[k];
      }
      status = clmg_vector_download_doubles(w, p->values + at_w);
    }
  }
  free(alpha);
  free(beta);
  return status;
}

/* ---- the programs: the engine's cycle() unrolled ---- */

static void emit(packing *p, int op, int level, int step) {
  if (p->too_large)
    return;
  if (p->program_count + TAIL_OP > TAIL_PROGRAM_LIMIT ||
      !grow((void **)&p->program, &p->program_capacity, p->program_count + TAIL_OP,
            sizeof(int32_t))) {
    p->too_large = 1; /* no tail, as for levels too large */
    return;
  }
  int32_t *at = p->program + p->program_count;
  at[0] = op;
  at[1] = level;
  at[2] = step;
  at[3] = 0;
  p->program_count += TAIL_OP;
}

/* smooth() of the engine: `steps` steps, from x = 0 when zero */
static void emit_smoothing(packing *p, int l, int steps, int zero) {
  if (steps == 0 && zero)
    emit(p, OP_ZERO, l, 0);
  for (int k = 0; k < steps; ++k) {
    if (k == 0 && zero) {
      emit(p, OP_FIRST, l, 0);
    } else {
      emit(p, OP_DIRECTION, l, k);
      emit(p, OP_UPDATE, l, 0);
    }
  }
}

/* cycle() of the engine on level l */
static void emit_cycle(packing *p, int l, clmg_cycle_type type, int zero) {
  if (l == 0) {
    emit(p, OP_COARSE, 0, 0);
    return;
  }
  emit_smoothing(p, l, p->levels[l].pre, zero);
  emit(p, OP_DEFECT, l, 0);
  emit(p, OP_RESTRICT, l, 0);
  switch (type) {
  case CLMG_CYCLE_V:
    emit_cycle(p, l - 1, CLMG_CYCLE_V, 1);
    break;
  case CLMG_CYCLE_W:
    emit_cycle(p, l - 1, CLMG_CYCLE_W, 1);
    if (l - 1 > 0)
      emit_cycle(p, l - 1, CLMG_CYCLE_W, 0);
    break;
  case CLMG_CYCLE_F:
    emit_cycle(p, l - 1, CLMG_CYCLE_F, 1);
    if (l - 1 > 0)
      emit_cycle(p, l - 1, CLMG_CYCLE_V, 0);
    break;
  }
  emit(p, OP_PROLONG, l, 0);
  emit_smoothing(p, l, p->levels[l].post, 0);
}

/* Every program; start[] gets their first ints. */
static void emit_programs(packing *p, int levels, int *start) {
  for (int type = CLMG_CYCLE_V; type <= CLMG_CYCLE_F; ++type)
    for (int l = 0; l < levels; ++l)
      for (int zero = 0; zero < 2; ++zero) {
        start[(type * levels + l) * 2 + zero] = (int)p->program_count;
        emit_cycle(p, l, (clmg_cycle_type)type, zero);
        emit(p, OP_END, 0, 0);
      }
}

/* values in the tail's precision, then on the device */
static clmg_status upload_values(clmg_coarse_tail *t, const double *values, size_t count) {
  size_t element = clmg_dtype_size(t->precision);
  t->values_bytes = (count ? count : 1) * element;
  if (t->precision == CLMG_DOUBLE)
    return clmg_device_alloc(t->context, t->values_bytes, values, "coarse tail values", &t->values);
  float *converted = malloc(t->values_bytes);
  if (!converted)
    return clmg_fail(t->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "coarse tail values");
  for (size_t k = 0; k < count; ++k)
    converted[k] = (float)values[k];
  clmg_status status =
      clmg_device_alloc(t->context, t->values_bytes, converted, "coarse tail values", &t->values);
  free(converted);
  return status;
}

static clmg_status make_buffers(clmg_coarse_tail *t, const packing *p, int levels) {
  t->meta_bytes = (size_t)levels * TAIL_META * sizeof(int32_t);
  clmg_status status =
      clmg_device_alloc(t->context, t->meta_bytes, p->meta, "coarse tail levels", &t->meta);
  if (status == CLMG_SUCCESS) {
    t->index_bytes = (p->index_count ? p->index_count : 1) * sizeof(int32_t);
    status =
        clmg_device_alloc(t->context, t->index_bytes, p->index, "coarse tail indices", &t->index);
  }
  if (status == CLMG_SUCCESS) {
    t->program_bytes = p->program_count * sizeof(int32_t);
    status = clmg_device_alloc(t->context, t->program_bytes, p->program, "coarse tail programs",
                               &t->program);
  }
  if (status == CLMG_SUCCESS)
    status = upload_values(t, p->values, p->values_count);
  if (status == CLMG_SUCCESS) {
    /* zeroed: the kernel writes every entry before it reads it, but the
     * bytes of a new buffer are undefined */
    t->work_bytes = (p->work_count ? p->work_count : 1) * clmg_dtype_size(t->precision);
    void *zeros = calloc(1, t->work_bytes);
    status =
        zeros ? clmg_device_alloc(t->context, t->work_bytes, zeros, "coarse tail vectors", &t->work)
              : clmg_fail(t->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "coarse tail vectors");
    free(zeros);
  }
  return status;
}

clmg_status clmg_coarse_tail_create(clmg_context *context, clmg_dtype precision, int levels,
                                    const clmg_tail_level *level, const clmg_coarse_solver *coarse,
                                    clmg_coarse_tail **tail) {
  *tail = NULL;
  cl_mem inverse = NULL;
  size_t coarse_rows = 0;
  if (levels < 1 || clmg_context_is_distributed(context) ||
      !clmg_coarse_solver_direct_inverse(coarse, &inverse, &coarse_rows) ||
      coarse_rows != level[0].a->rows)
    return CLMG_SUCCESS;
  packing p = {0};
  p.levels = level;
  p.meta = calloc((size_t)levels * TAIL_META, sizeof *p.meta);
  clmg_coarse_tail *t = calloc(1, sizeof *t);
  int *start = calloc((size_t)levels * 6, sizeof *start);
  clmg_status status = p.meta && t && start ? CLMG_SUCCESS
                                            : clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                                        "coarse tail: no host memory");
  int usable = status == CLMG_SUCCESS;
  for (int l = 0; l < levels && status == CLMG_SUCCESS && usable; ++l)
    status = pack_level(context, precision, &p, l, &level[l], &usable);
  if (status == CLMG_SUCCESS && usable)
    emit_programs(&p, levels, start);
  if (status == CLMG_SUCCESS && usable && !p.too_large && (!p.index || !p.values))
    status = clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "coarse tail: no host memory");
  if (status == CLMG_SUCCESS && usable && !p.too_large) {
    t->context = context;
    t->precision = precision;
    t->top = levels - 1;
    t->coarse = coarse;
    t->coarse_rows = coarse_rows;
    t->start = start;
    start = NULL;
    status = make_buffers(t, &p, levels);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(context, "coarse_tail", clmg_real_options(context, precision),
                               "coarse_tail_cycle", &t->kernel);
    if (status == CLMG_SUCCESS) {
      size_t group = context->params.tail_group_size, kernel_limit = 0;
      if (clGetKernelWorkGroupInfo(t->kernel, context->device, CL_KERNEL_WORK_GROUP_SIZE,
                                   sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
          kernel_limit > 0 && kernel_limit < group)
        group = kernel_limit;
      t->group = group > 0 ? group : 1;
      *tail = t;
      t = NULL;
    }
  }
  if (t && t->context)
    clmg_coarse_tail_destroy(t);
  else
    free(t);
  free(start);
  free(p.meta);
  free(p.index);
  free(p.values);
  free(p.program);
  return status;
}

clmg_status clmg_coarse_tail_cycle(clmg_coarse_tail *t, int l, clmg_cycle_type type,
                                   const clmg_vector *b, clmg_vector *x, int zero_guess) {
  cl_mem inverse = NULL;
  size_t n = 0;
  if (!clmg_coarse_solver_direct_inverse(t->coarse, &inverse, &n) || n != t->coarse_rows)
    return clmg_fail(t->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "coarse tail: the coarse solver changed since the tail was made");
  cl_int top = l, start = t->start[((int)type * (t->top + 1) + l) * 2 + (zero_guess != 0)];
  clmg_kernel_args args;
  clmg_args_begin(&args, t->context, t->kernel, "coarse_tail_cycle");
  clmg_arg_raw(&args, sizeof top, &top);
  clmg_arg_raw(&args, sizeof start, &start);
  clmg_arg_buffer(&args, t->program);
  clmg_arg_buffer(&args, t->meta);
  clmg_arg_buffer(&args, t->index);
  clmg_arg_buffer(&args, t->values);
  clmg_arg_buffer(&args, t->work);
  clmg_arg_buffer(&args, inverse);
  clmg_arg_vector(&args, b);
  clmg_arg_vector(&args, x);
  clmg_status status = clmg_args_end(&args);
  return status == CLMG_SUCCESS
             ? clmg_enqueue_1d(t->context, t->kernel, "coarse_tail_cycle", t->group, t->group, NULL)
             : status;
}
