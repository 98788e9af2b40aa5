/* Vanka smoothing (S. P. Vanka, "Block-implicit multigrid solution of
 * Navier-Stokes equations in primitive variables", 1986) in the red-black
 * form of Bauer, Klement, Oberhuber and Zabka, "Implementation of the
 * Vanka-type multigrid solver for the finite element approximation of the
 * Navier-Stokes equations on GPU" (sections 4 and 5.4): block Gauss-Seidel
 * over cells, each cell a small local system A_KK on its unknowns (for
 * Crouzeix-Raviart P1nc/P0: the two velocities of its three edges and its
 * pressure), the cells visited colour by colour. Within a colour every cell
 * corrects from the x of before the colour (the paper's rule), so the
 * result does not depend on the order of the cells or on the device.
 *
 * Colours: cells that share an unknown get different colours. Two colours
 * (red-black) when the cells' sharing graph is bipartite, which is what the
 * paper assumes; otherwise (a mesh with a vertex of odd degree, say) the
 * greedy colouring in cell order, so no mesh is refused.
 *
 * Local solves: Gaussian elimination with partial pivoting on A_KK, once
 * per setup into stored inverses on the device (the paper's SI and its
 * Algorithm 1, the default) or in every visit from the matrix rows (NSI:
 * less memory, more arithmetic). A column
 * whose best pivot is at most VANKA_TINY times the block's largest entry
 * leaves its unknown unmoved (a cell whose pressure couples to no free
 * velocity, say) rather than failing or dividing by zero.
 *
 * The device kernels are in cl/vanka.cl; the host functions here are the
 * reference they are tested against, and they share the local solve. */
#include "solve/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VANKA_TINY 1e-12
#define VANKA_MAX_BLOCK 16

const char *clmg_vanka_name(int store_inverses) {
  return store_inverses ? "vanka-si" : "vanka-nsi";
}

int clmg_vanka_name_parse(const char *name, int *store_inverses) {
  for (int si = 0; name && si <= 1; si++)
    if (strcmp(name, clmg_vanka_name(si)) == 0) {
      if (store_inverses)
        *store_inverses = si;
      return 1;
    }
  return 0;
}

void clmg_vanka_options_defaults(clmg_vanka_options *options) {
  options->omega = 1.0;
  options->store_inverses = 1;
  options->defer_first_setup = 0;
}

static clmg_status check_cells(size_t n, size_t num_cells, int block, const int32_t *cell_unknowns,
                               clmg_error *error) {
  if (block < 1 || block > VANKA_MAX_BLOCK)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Vanka: %d unknowns a cell; 1 to %d are supported", block,
                          VANKA_MAX_BLOCK);
  if (num_cells > 0 && !cell_unknowns)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "Vanka: cell_unknowns is NULL");
  for (size_t c = 0; c < num_cells; c++)
    for (int j = 0; j < block; j++) {
      int32_t u = cell_unknowns[c * (size_t)block + (size_t)j];
      if (u < 0 || (size_t)u >= n)
        return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                              "Vanka: cell %zu names unknown %d, outside [0, %zu)", c, (int)u, n);
      for (int k = 0; k < j; k++)
        if (cell_unknowns[c * (size_t)block + (size_t)k] == u)
          return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                                "Vanka: cell %zu names unknown %d twice", c, (int)u);
    }
  return CLMG_SUCCESS;
}

/* ---- colours ---- */

/* The cells of each unknown: cells[start[u] .. start[u + 1]). */
static clmg_status cells_of_unknowns(size_t n, size_t num_cells, int block,
                                     const int32_t *cell_unknowns, int64_t **start,
                                     int32_t **cells) {
  size_t entries = num_cells * (size_t)block;
  *start = clmg_alloc_zeroed_array(n + 1, sizeof **start);
  *cells = clmg_alloc_array(entries ? entries : 1, sizeof **cells);
  int64_t *cursor = clmg_alloc_array(n + 1, sizeof *cursor);
  if (!*start || !*cells || !cursor) {
    free(*start);
    free(*cells);
    free(cursor);
    *start = NULL;
    *cells = NULL;
    return CLMG_ERROR_OUT_OF_HOST_MEMORY;
  }
  for (size_t k = 0; k < entries; k++)
    (*start)[cell_unknowns[k] + 1]++;
  for (size_t i = 0; i < n; i++)
    (*start)[i + 1] += (*start)[i];
  memcpy(cursor, *start, (n + 1) * sizeof *cursor);
  for (size_t k = 0; k < entries; k++)
    (*cells)[cursor[cell_unknowns[k]]++] = (int32_t)(k / (size_t)block);
  free(cursor);
  return CLMG_SUCCESS;
}

/* Two colours by a breadth-first walk of each component of the sharing
 * graph; 0 when some cell meets a cell of its own colour. */
static int two_colours(size_t num_cells, int block, const int32_t *cell_unknowns,
                       const int64_t *start, const int32_t *cells, int32_t *colour,
                       int32_t *queue) {
  for (size_t c = 0; c < num_cells; c++)
    colour[c] = -1;
  for (size_t seed = 0; seed < num_cells; seed++) {
    if (colour[seed] >= 0)
      continue;
    size_t head = 0, tail = 0;
    colour[seed] = 0;
    queue[tail++] = (int32_t)seed;
    while (head < tail) {
      size_t c = (size_t)queue[head++];
      for (int j = 0; j < block; j++) {
        int32_t u = cell_unknowns[c * (size_t)block + (size_t)j];
        for (int64_t k = start[u]; k < start[u + 1]; k++) {
          int32_t other = cells[k];
          if ((size_t)other == c)
            continue;
          if (colour[other] < 0) {
            colour[other] = 1 - colour[c];
            queue[tail++] = other;
          } else if (colour[other] == colour[c]) {
            return 0;
          }
        }
      }
    }
  }
  return 1;
}

/* Greedy colours in cell order: the smallest colour no sharing cell has. */
static int32_t greedy_colours(size_t num_cells, int block, const int32_t *cell_unknowns,
                              const int64_t *start, const int32_t *cells, int32_t *colour,
                              int32_t *taken) {
  int32_t colours = 0;
  for (size_t c = 0; c < num_cells; c++)
    colour[c] = -1;
  for (size_t c = 0; c < num_cells; c++)
    taken[c] = -1;
  for (size_t c = 0; c < num_cells; c++) {
    /* taken[k] == c: colour k is used by a neighbour of c */
    for (int j = 0; j < block; j++) {
      int32_t u = cell_unknowns[c * (size_t)block + (size_t)j];
      for (int64_t k = start[u]; k < start[u + 1]; k++)
        if (colour[cells[k]] >= 0)
          taken[colour[cells[k]]] = (int32_t)c;
    }
    int32_t pick = 0;
    while (taken[pick] == (int32_t)c)
      pick++;
    colour[c] = pick;
    if (pick + 1 > colours)
      colours = pick + 1;
  }
  return colours;
}

clmg_status clmg_vanka_colour_cells(size_t n, size_t num_cells, int block,
                                    const int32_t *cell_unknowns, int32_t *colour, int *num_colours,
                                    clmg_error *error) {
  clmg_error_clear(error);
  if (!colour || !num_colours)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT, "Vanka: colour is NULL");
  *num_colours = 0;
  clmg_status status = check_cells(n, num_cells, block, cell_unknowns, error);
  if (status != CLMG_SUCCESS || num_cells == 0)
    return status;
  int64_t *start = NULL;
  int32_t *cells = NULL;
  int32_t *work = clmg_alloc_array(num_cells, sizeof *work);
  if (!work ||
      cells_of_unknowns(n, num_cells, block, cell_unknowns, &start, &cells) != CLMG_SUCCESS) {
    free(work);
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "Vanka: no host memory to colour %zu cells", num_cells);
  }
  if (two_colours(num_cells, block, cell_unknowns, start, cells, colour, work)) {
    int any_black = 0;
    for (size_t c = 0; c < num_cells; c++)
      any_black |= colour[c] == 1;
    *num_colours = any_black ? 2 : 1;
  } else {
    *num_colours = (int)greedy_colours(num_cells, block, cell_unknowns, start, cells, colour, work);
  }
  free(start);
  free(cells);
  free(work);
  return CLMG_SUCCESS;
}

clmg_status clmg_cells_by_colour(size_t n, size_t num_cells, int block,
                                 const int32_t *cell_unknowns, int *num_colours,
                                 size_t **colour_start, int32_t *order, clmg_error *error) {
  *colour_start = NULL;
  int32_t *colour = clmg_alloc_array(num_cells ? num_cells : 1, sizeof *colour);
  if (!colour)
    return clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                          "no host memory to colour %zu cells", num_cells);
  clmg_status status =
      clmg_vanka_colour_cells(n, num_cells, block, cell_unknowns, colour, num_colours, error);
  size_t *start = NULL, *next = NULL;
  if (status == CLMG_SUCCESS) {
    start = calloc((size_t)*num_colours + 1, sizeof *start);
    next = calloc((size_t)*num_colours + 1, sizeof *next);
    if (!start || !next)
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory");
  }
  if (status == CLMG_SUCCESS) {
    for (size_t c = 0; c < num_cells; c++)
      start[colour[c] + 1]++;
    for (int k = 0; k < *num_colours; k++)
      start[k + 1] += start[k];
    memcpy(next, start, (size_t)*num_colours * sizeof *next);
    for (size_t c = 0; c < num_cells; c++)
      order[next[colour[c]]++] = (int32_t)c;
    *colour_start = start;
  } else {
    free(start);
  }
  free(next);
  free(colour);
  return status;
}

/* ---- the local solve (cl/vanka.cl's vanka_solve, the same steps) ---- */

/* a_ij of the host CSR (sorted columns), 0 when not stored. */
static double entry(const clmg_csr *a, int32_t i, int32_t j) {
  int64_t k = clmg_csr_find_entry(a, (size_t)i, j);
  return k >= 0 ? a->val[k] : 0.0;
}

/* A_KK: the block of a on the cell's unknowns. */
static void local_block(const clmg_csr *a, const int32_t *unknowns, int block,
                        double m[VANKA_MAX_BLOCK][VANKA_MAX_BLOCK]) {
  for (int i = 0; i < block; i++)
    for (int j = 0; j < block; j++)
      m[i][j] = entry(a, unknowns[i], unknowns[j]);
}

/* d = A_KK^-1 r for the block m (m and r are overwritten). */
static void solve_block(double m[VANKA_MAX_BLOCK][VANKA_MAX_BLOCK], int block, double *r,
                        double *d) {
  double largest = 0;
  for (int i = 0; i < block; i++)
    for (int j = 0; j < block; j++)
      largest = fmax(largest, fabs(m[i][j]));
  const double tiny = VANKA_TINY * largest;
  int skipped[VANKA_MAX_BLOCK];
  for (int c = 0; c < block; c++) {
    int pivot = c;
    for (int i = c + 1; i < block; i++)
      if (fabs(m[i][c]) > fabs(m[pivot][c]))
        pivot = i;
    skipped[c] = !(fabs(m[pivot][c]) > tiny);
    if (skipped[c])
      continue;
    if (pivot != c) {
      for (int j = 0; j < block; j++) {
        double t = m[c][j];
        m[c][j] = m[pivot][j];
        m[pivot][j] = t;
      }
      double t = r[c];
      r[c] = r[pivot];
      r[pivot] = t;
    }
    for (int i = c + 1; i < block; i++) {
      double factor = m[i][c] / m[c][c];
      for (int j = c; j < block; j++)
        m[i][j] -= factor * m[c][j];
      r[i] -= factor * r[c];
    }
  }
  for (int c = block - 1; c >= 0; c--) {
    if (skipped[c]) {
      d[c] = 0;
      continue;
    }
    double sum = r[c];
    for (int j = c + 1; j < block; j++)
      sum -= m[c][j] * d[j];
    d[c] = sum / m[c][c];
  }
}

/* d = A_KK^-1 r (r is overwritten). */
static void local_solve(const clmg_csr *a, const int32_t *unknowns, int block, double *r,
                        double *d) {
  double m[VANKA_MAX_BLOCK][VANKA_MAX_BLOCK];
  local_block(a, unknowns, block, m);
  solve_block(m, block, r, d);
}

/* The cells in colour order (colour_start[k] is colour k's first) and
 * each cell's unknowns laid out by colour, entry-major within a colour, as
 * cl/vanka.cl reads them. */
typedef struct vanka_layout {
  int block, num_colours;
  size_t num_cells, largest_colour;
  size_t *colour_start;
  int32_t *order; /* cell of each position */
  int32_t *unknowns;
} vanka_layout;

static void layout_free(vanka_layout *l) {
  free(l->colour_start);
  free(l->order);
  free(l->unknowns);
  memset(l, 0, sizeof *l);
}

static clmg_status make_layout(const clmg_csr *a, size_t num_cells, int block,
                               const int32_t *cell_unknowns, vanka_layout *l, clmg_error *error) {
  memset(l, 0, sizeof *l);
  l->block = block;
  l->num_cells = num_cells;
  size_t b = (size_t)block, cells = num_cells ? num_cells : 1;
  l->order = clmg_alloc_array(cells, sizeof *l->order);
  l->unknowns = clmg_alloc_array(cells * b, sizeof *l->unknowns);
  clmg_status status = CLMG_SUCCESS;
  if (!l->order || !l->unknowns)
    status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                            "Vanka: no host memory for the layout of %zu cells", num_cells);
  if (status == CLMG_SUCCESS)
    status = clmg_cells_by_colour(a->rows, num_cells, block, cell_unknowns, &l->num_colours,
                                  &l->colour_start, l->order, error);
  for (int k = 0; status == CLMG_SUCCESS && k < l->num_colours; k++) {
    size_t first = l->colour_start[k], count = l->colour_start[k + 1] - first;
    if (count > l->largest_colour)
      l->largest_colour = count;
    for (size_t p = 0; p < count; p++) {
      const int32_t *u = cell_unknowns + (size_t)l->order[first + p] * b;
      for (size_t j = 0; j < b; j++)
        l->unknowns[first * b + j * count + p] = u[j];
    }
  }
  if (status != CLMG_SUCCESS)
    layout_free(l);
  return status;
}

/* ---- the host reference ---- */

clmg_status clmg_vanka_smooth_host(const clmg_csr *a, size_t num_cells, int block,
                                   const int32_t *cell_unknowns, double omega, int steps,
                                   const double *b, double *x, clmg_error *error) {
  clmg_error_clear(error);
  if (!a || !a->row_ptr || a->rows != a->cols || !b || !x)
    return clmg_error_set(error, CLMG_ERROR_INVALID_ARGUMENT,
                          "Vanka: a square host matrix, b and x are needed");
  vanka_layout l;
  clmg_status status = make_layout(a, num_cells, block, cell_unknowns, &l, error);
  size_t bs = (size_t)block;
  double *correction = NULL;
  if (status == CLMG_SUCCESS) {
    correction = clmg_alloc_array(l.largest_colour * bs + 1, sizeof *correction);
    if (!correction)
      status = clmg_error_set(error, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Vanka: no host memory");
  }
  for (int step = 0; status == CLMG_SUCCESS && step < steps; step++)
    for (int k = 0; k < l.num_colours; k++) {
      size_t first = l.colour_start[k], count = l.colour_start[k + 1] - first;
      for (size_t p = 0; p < count; p++) {
        const int32_t *u = cell_unknowns + (size_t)l.order[first + p] * bs;
        double r[VANKA_MAX_BLOCK], d[VANKA_MAX_BLOCK];
        for (size_t j = 0; j < bs; j++) {
          double sum = b[u[j]];
          for (int64_t e = a->row_ptr[u[j]]; e < a->row_ptr[u[j] + 1]; e++)
            sum -= a->val[e] * x[a->col[e]];
          r[j] = sum;
        }
        local_solve(a, u, block, r, d);
        for (size_t j = 0; j < bs; j++)
          correction[p * bs + j] = d[j];
      }
      for (size_t p = 0; p < count; p++) {
        const int32_t *u = cell_unknowns + (size_t)l.order[first + p] * bs;
        for (size_t j = 0; j < bs; j++)
          x[u[j]] += omega * correction[p * bs + j];
      }
    }
  free(correction);
  layout_free(&l);
  return status;
}

/* ---- the smoother ---- */

typedef struct vanka_smoother {
  clmg_context *context;
  size_t n, nnz;
  double omega;
  int stored;
  int skip_setup; /* defer_first_setup, until the first setup has been skipped */
  vanka_layout layout;
  const clmg_csr *a; /* borrowed: its pattern, and its values at every setup */
  /* borrowed, or NULL: the values in a's CSR order on the device, copied at
   * every setup instead of a's host values */
  const clmg_vector *device_values;
  int row_slots; /* the longest row of a cell's unknown: the packed rows' width */
  clmg_vector *d_val, *d_unknowns, *d_inverse, *correction;
  /* the cells' rows packed (cl/vanka.cl): columns, CSR positions of the
   * values (-1: padding), values */
  clmg_vector *d_packed_col, *d_packed_source, *d_packed_val;
  cl_kernel correction_kernel, update_kernel, inverse_kernel, pack_kernel;
  /* a smoother of at most the device's tail_rows cells: every application
   * one launch of one work-group of `group` items (vanka_sweeps), the
   * colours' offsets on the device; sweeps_kernel NULL otherwise */
  cl_kernel sweeps_kernel;
  clmg_vector *d_colour_start;
  size_t group;
} vanka_smoother;

static void free_device(vanka_smoother *s) {
  /* the kernels are the program manager's */
  s->correction_kernel = s->update_kernel = s->inverse_kernel = s->pack_kernel = NULL;
  s->sweeps_kernel = NULL;
  clmg_vector_destroy(s->d_colour_start);
  s->d_colour_start = NULL;
  clmg_vector_destroy(s->d_val);
  clmg_vector_destroy(s->d_unknowns);
  clmg_vector_destroy(s->d_inverse);
  clmg_vector_destroy(s->correction);
  clmg_vector_destroy(s->d_packed_col);
  clmg_vector_destroy(s->d_packed_source);
  clmg_vector_destroy(s->d_packed_val);
  s->d_val = s->d_unknowns = s->d_inverse = s->correction = NULL;
  s->d_packed_col = s->d_packed_source = s->d_packed_val = NULL;
}

/* The packed rows' slots: block * row_slots per cell. */
static size_t packed_slots(const vanka_smoother *s) {
  return s->layout.num_cells * (size_t)s->layout.block * (size_t)s->row_slots;
}

/* The cells' rows packed as cl/vanka.cl reads them (VANKA_SLOT): slot
 * (j, r) of the cell at position p of the colour starting at `first` with
 * `count` cells at first * block * slots + (j * slots + r) * count + p on
 * a GPU, + (p * block + j) * slots + r with the CPU kernels (the device
 * table's cpu_kernels, which build cl/vanka.cl with -DCLMG_CPU); columns and CSR positions,
 * padding the own unknown with position -1. Uploaded, then the host arrays
 * freed (they are the size of the packed matrix). */
static clmg_status upload_packed_rows(vanka_smoother *s) {
  const vanka_layout *l = &s->layout;
  const size_t bs = (size_t)l->block, slots = (size_t)s->row_slots, total = packed_slots(s);
  const int cpu = s->context->params.cpu_kernels;
  int32_t *col = clmg_alloc_array(total ? total : 1, sizeof *col);
  int64_t *source = clmg_alloc_array(total ? total : 1, sizeof *source);
  if (!col || !source) {
    free(col);
    free(source);
    return clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "Vanka smoother: no host memory to pack %zu row slots", total);
  }
  for (int k = 0; k < l->num_colours; k++) {
    const size_t first = l->colour_start[k], count = l->colour_start[k + 1] - first;
    for (size_t p = 0; p < count; p++)
      for (size_t j = 0; j < bs; j++) {
        const int32_t u = l->unknowns[first * bs + j * count + p];
        const int64_t begin = s->a->row_ptr[u], length = s->a->row_ptr[u + 1] - begin;
        for (size_t r = 0; r < slots; r++) {
          const size_t at =
              first * bs * slots + (cpu ? (p * bs + j) * slots + r : (j * slots + r) * count + p);
          col[at] = (int64_t)r < length ? s->a->col[begin + (int64_t)r] : u;
          source[at] = (int64_t)r < length ? begin + (int64_t)r : -1;
        }
      }
  }
  clmg_status status = clmg_vector_create_from_host(s->context, CLMG_INT32, total ? total : 1, col,
                                                    &s->d_packed_col);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_from_host(s->context, CLMG_INT64, total ? total : 1, source,
                                          &s->d_packed_source);
  free(col);
  free(source);
  return status;
}

static void vanka_destroy(void *data) {
  vanka_smoother *s = data;
  if (!s)
    return;
  free_device(s);
  layout_free(&s->layout);
  free(s);
}

/* Starts the arguments every cell kernel of cl/vanka.cl takes first: the
 * colour's first cell and count, the cells' unknowns. */
static void cell_kernel_args(const vanka_smoother *s, cl_kernel kernel, const char *name,
                             uint64_t first, uint64_t count, clmg_kernel_args *args) {
  clmg_args_begin(args, s->context, kernel, name);
  clmg_arg_ulong(args, first);
  clmg_arg_ulong(args, count);
  clmg_arg_buffer(args, s->d_unknowns->buffer);
}

/* The arguments vanka_correction and vanka_sweeps share, after the cells'
 * unknowns: the packed rows, the stored inverses (a stand-in for NSI), b,
 * x and the corrections. */
static void correction_args(const vanka_smoother *s, const clmg_vector *b, const clmg_vector *x,
                            clmg_kernel_args *args) {
  cl_uint stored = (cl_uint)s->stored;
  clmg_arg_buffer(args, s->d_packed_col->buffer);
  clmg_arg_buffer(args, s->d_packed_val->buffer);
  clmg_arg_buffer(args, s->d_inverse->buffer);
  clmg_arg_raw(args, sizeof stored, &stored);
  clmg_arg_vector(args, b);
  clmg_arg_vector(args, x);
  clmg_arg_buffer(args, s->correction->buffer);
}

/* The one-group path of a small smoother (vanka_sweeps): its kernel, its
 * group (the device's tail_group_size, at most what the kernel allows)
 * and the colours' offsets on the device. */
static clmg_status make_sweeps(vanka_smoother *s, const char *options) {
  const vanka_layout *l = &s->layout;
  clmg_status status =
      clmg_get_kernel(s->context, "vanka", options, "vanka_sweeps", &s->sweeps_kernel);
  if (status != CLMG_SUCCESS)
    return status;
  size_t group = s->context->params.tail_group_size, kernel_limit = 0;
  if (clGetKernelWorkGroupInfo(s->sweeps_kernel, s->context->device, CL_KERNEL_WORK_GROUP_SIZE,
                               sizeof kernel_limit, &kernel_limit, NULL) == CL_SUCCESS &&
      kernel_limit > 0 && kernel_limit < group)
    group = kernel_limit;
  s->group = group > 0 ? group : 1;
  int64_t *start = malloc(((size_t)l->num_colours + 1) * sizeof *start);
  if (!start)
    return clmg_fail(s->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                     "Vanka smoother: no host memory for the colours' offsets");
  for (int k = 0; k <= l->num_colours; ++k)
    start[k] = (int64_t)l->colour_start[k];
  status = clmg_vector_create_from_host(s->context, CLMG_INT64, (size_t)l->num_colours + 1, start,
                                        &s->d_colour_start);
  free(start);
  return status;
}

/* The first setup uploads the pattern, the cells and makes the kernels;
 * every setup uploads a's current values and (SI) the inverses made from
 * them, so clmg_multigrid_refresh takes new values of the same pattern. */
static clmg_status vanka_setup(void *data, const clmg_operator *a) {
  vanka_smoother *s = data;
  if (a->rows != s->n || a->cols != s->n)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: made for %zu unknowns, the operator is %zu x %zu", s->n,
                     a->rows, a->cols);
  if (clmg_csr_nnz(s->a) != s->nnz)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: its matrix has %zu entries, it was made with %zu (new values "
                     "must keep the pattern)",
                     clmg_csr_nnz(s->a), s->nnz);
  if (s->skip_setup) {
    s->skip_setup = 0;
    return CLMG_SUCCESS;
  }
  clmg_dtype real = a->precision;
  if (s->d_val && clmg_vector_type(s->d_val) != real)
    free_device(s);
  vanka_layout *l = &s->layout;
  size_t bs = (size_t)l->block, cells = l->num_cells;
  clmg_status status = CLMG_SUCCESS;
  if (!s->d_val) {
    status = upload_packed_rows(s);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(s->context, real, packed_slots(s) + 1, &s->d_packed_val);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(s->context, real, s->nnz ? s->nnz : 1, &s->d_val);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create_from_host(s->context, CLMG_INT32, cells * bs, l->unknowns,
                                            &s->d_unknowns);
    /* NSI keeps a one-word stand-in, never read */
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(s->context, real, s->stored ? cells * bs * bs : 1, &s->d_inverse);
    if (status == CLMG_SUCCESS)
      status = clmg_vector_create(s->context, real, l->largest_colour * bs + 1, &s->correction);
    char options[256];
    snprintf(options, sizeof options, "%s -DVANKA_BLOCK=%d -DVANKA_ROW_SLOTS=%d -DVANKA_TINY=%.17g",
             clmg_real_options(s->context, real), l->block, s->row_slots, VANKA_TINY);
    if (status == CLMG_SUCCESS)
      status =
          clmg_get_kernel(s->context, "vanka", options, "vanka_correction", &s->correction_kernel);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(s->context, "vanka", options, "vanka_update", &s->update_kernel);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(s->context, "vanka", options, "vanka_inverses", &s->inverse_kernel);
    if (status == CLMG_SUCCESS)
      status = clmg_get_kernel(s->context, "vanka", options, "vanka_pack", &s->pack_kernel);
    if (status == CLMG_SUCCESS && cells > 0 && cells <= s->context->params.tail_rows)
      status = make_sweeps(s, options);
    if (status != CLMG_SUCCESS) {
      free_device(s);
      return status;
    }
  }
  status = s->device_values ? clmg_vector_convert(s->device_values, s->d_val)
                            : clmg_vector_upload_doubles(s->d_val, s->a->val);
  if (status == CLMG_SUCCESS) {
    clmg_kernel_args args;
    clmg_args_begin(&args, s->context, s->pack_kernel, "vanka_pack");
    clmg_arg_ulong(&args, packed_slots(s));
    clmg_arg_buffer(&args, s->d_packed_source->buffer);
    clmg_arg_buffer(&args, s->d_val->buffer);
    clmg_arg_buffer(&args, s->d_packed_val->buffer);
    status = clmg_launch_args(&args, packed_slots(s));
  }
  /* the stored inverses on the device, colour by colour (Algorithm 1) */
  for (int k = 0; s->stored && k < l->num_colours && status == CLMG_SUCCESS; k++) {
    uint64_t first = l->colour_start[k], count = l->colour_start[k + 1] - first;
    if (count == 0)
      continue;
    clmg_kernel_args args;
    cell_kernel_args(s, s->inverse_kernel, "vanka_inverses", first, count, &args);
    clmg_arg_buffer(&args, s->d_packed_col->buffer);
    clmg_arg_buffer(&args, s->d_packed_val->buffer);
    clmg_arg_buffer(&args, s->d_inverse->buffer);
    status = clmg_launch_args(&args, count);
  }
  return status;
}

/* The whole application as one launch of one work-group (vanka_sweeps):
 * x = 0 when x_is_zero, then the steps, colour by colour. */
static clmg_status apply_in_one_group(vanka_smoother *s, const clmg_operator *a,
                                      const clmg_vector *b, clmg_vector *x, int steps,
                                      int x_is_zero) {
  const vanka_layout *l = &s->layout;
  cl_uint step_count = (cl_uint)steps, colours = (cl_uint)l->num_colours, zero = x_is_zero != 0;
  clmg_kernel_args args;
  clmg_args_begin(&args, s->context, s->sweeps_kernel, "vanka_sweeps");
  clmg_arg_raw(&args, sizeof step_count, &step_count);
  clmg_arg_raw(&args, sizeof colours, &colours);
  clmg_arg_buffer(&args, s->d_colour_start->buffer);
  clmg_arg_buffer(&args, s->d_unknowns->buffer);
  correction_args(s, b, x, &args);
  clmg_arg_real(&args, a->precision, s->omega);
  clmg_arg_raw(&args, sizeof zero, &zero);
  clmg_arg_ulong(&args, s->n);
  clmg_status status = clmg_args_end(&args);
  return status == CLMG_SUCCESS ? clmg_enqueue_1d(s->context, s->sweeps_kernel, "vanka_sweeps",
                                                  s->group, s->group, NULL)
                                : status;
}

static clmg_status vanka_apply(void *data, const clmg_operator *a, const clmg_vector *b,
                               clmg_vector *x, int steps, int x_is_zero) {
  vanka_smoother *s = data;
  const vanka_layout *l = &s->layout;
  clmg_status status = CLMG_SUCCESS;
  if (!s->d_val)
    return clmg_fail(s->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: applied before its setup (with defer_first_setup, "
                     "the first setup after the engine's: clmg_multigrid_refresh)");
  if (s->sweeps_kernel && steps > 0)
    return apply_in_one_group(s, a, b, x, steps, x_is_zero);
  if (x_is_zero)
    status = clmg_vector_fill(x, 0.0);
  for (int step = 0; step < steps && status == CLMG_SUCCESS; ++step)
    for (int k = 0; k < l->num_colours && status == CLMG_SUCCESS; ++k) {
      uint64_t first = l->colour_start[k], count = l->colour_start[k + 1] - first;
      if (count == 0)
        continue;
      clmg_kernel_args args;
      cell_kernel_args(s, s->correction_kernel, "vanka_correction", first, count, &args);
      correction_args(s, b, x, &args);
      status = clmg_launch_args(&args, count);
      if (status != CLMG_SUCCESS)
        break;
      cell_kernel_args(s, s->update_kernel, "vanka_update", first, count, &args);
      clmg_arg_buffer(&args, s->correction->buffer);
      clmg_arg_real(&args, a->precision, s->omega);
      clmg_arg_vector(&args, x);
      status = clmg_launch_args(&args, count);
    }
  return status;
}

/* A step, colour by colour: each cell reads its unknowns' matrix entries
 * (column and value each, padding not counted), b and x on them, and x at
 * their columns (counted once a colour: x stays in cache within a pass at
 * best), its stored inverse (SI), and writes, then reads, its correction,
 * and reads and writes x on its unknowns; from a zero guess, the fill of x. */
static double vanka_bytes(void *data, const clmg_operator *a, int steps, int x_is_zero) {
  vanka_smoother *s = data;
  const vanka_layout *l = &s->layout;
  double real = (double)clmg_dtype_size(a->precision), bs = (double)l->block;
  double rows = 0;
  for (size_t c = 0; c < l->num_cells; c++)
    for (int j = 0; j < l->block; j++) {
      int32_t u = l->unknowns[c * (size_t)l->block + (size_t)j];
      rows += (double)(s->a->row_ptr[u + 1] - s->a->row_ptr[u]) * (4.0 + real) + real;
    }
  double cells = (double)l->num_cells;
  double per_cell =
      bs * 4.0 * 2.0 + bs * real * 2.0 + bs * real * 2.0 + (s->stored ? bs * bs * real : 0.0);
  double step = rows + cells * per_cell + (double)l->num_colours * (double)s->n * real;
  return steps * step + (x_is_zero ? (double)s->n * real : 0.0);
}

static double vanka_damping(void *data) {
  return ((vanka_smoother *)data)->omega;
}

clmg_status clmg_smoother_vanka(clmg_context *context, const clmg_csr *a, size_t num_cells,
                                int block, const int32_t *cell_unknowns,
                                const clmg_vanka_options *options, clmg_smoother *smoother) {
  return clmg_smoother_vanka_device(context, a, NULL, num_cells, block, cell_unknowns, options,
                                    smoother);
}

clmg_status clmg_smoother_vanka_device(clmg_context *context, const clmg_csr *a,
                                       const clmg_vector *values, size_t num_cells, int block,
                                       const int32_t *cell_unknowns,
                                       const clmg_vanka_options *options, clmg_smoother *smoother) {
  if (!context || !smoother)
    return CLMG_ERROR_INVALID_ARGUMENT;
  memset(smoother, 0, sizeof *smoother);
  clmg_clear_message(context);
  if (!a || !a->row_ptr || a->rows != a->cols)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: a square host matrix is needed");
  if (values &&
      (clmg_vector_context(values) != context || clmg_vector_length(values) != clmg_csr_nnz(a) ||
       (clmg_vector_type(values) != CLMG_DOUBLE && clmg_vector_type(values) != CLMG_FLOAT)))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: the device values must be %zu doubles or floats in the "
                     "smoother's context (they are %zu %s)",
                     clmg_csr_nnz(a), clmg_vector_length(values),
                     clmg_dtype_name(clmg_vector_type(values)));
  clmg_vanka_options defaults;
  clmg_vanka_options_defaults(&defaults);
  const clmg_vanka_options *o = options ? options : &defaults;
  if (!(o->omega > 0 && o->omega < 2))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "Vanka smoother: omega %g; it must lie in (0, 2)", o->omega);
  vanka_smoother *s = calloc(1, sizeof *s);
  if (!s)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "Vanka smoother: no host memory");
  s->context = context;
  s->n = a->rows;
  s->nnz = clmg_csr_nnz(a);
  s->omega = o->omega;
  s->stored = o->store_inverses != 0;
  s->skip_setup = o->defer_first_setup != 0;
  s->a = a;
  s->device_values = values;
  clmg_error error = {{0}};
  clmg_status status = make_layout(a, num_cells, block, cell_unknowns, &s->layout, &error);
  if (status != CLMG_SUCCESS) {
    vanka_destroy(s);
    return clmg_fail(context, status, "Vanka smoother: %s", error.message);
  }
  for (size_t k = 0; k < s->layout.num_cells * (size_t)block; k++) {
    int32_t u = s->layout.unknowns[k];
    int64_t length = a->row_ptr[u + 1] - a->row_ptr[u];
    if (length > s->row_slots)
      s->row_slots = (int)length;
  }
  if (s->row_slots < 1)
    s->row_slots = 1;
  smoother->data = s;
  smoother->name = s->stored ? "vanka-si" : "vanka-nsi";
  smoother->setup = vanka_setup;
  smoother->apply = vanka_apply;
  smoother->bytes = vanka_bytes;
  smoother->damping = vanka_damping;
  smoother->destroy = vanka_destroy;
  return CLMG_SUCCESS;
}
