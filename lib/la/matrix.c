/* Device sparse matrices (CSR, CSR-Adaptive, ELLPACK-R, SELL-C-sigma, hybrid) and the SpMV
 * family.
 *
 * A matrix is laid out on the host from host CSR and uploaded, or laid out
 * on the device from CSR arrays that live there (cl/matrix_device.cl), into
 * the same arrays. Either keeps on the device the diagonal and the row sums
 * of squares (what Jacobi and SPAI-0 need). The kernels are in cl/spmv.cl;
 * each operation is one launch (two or three for CSR with very long rows
 * and for the hybrid: ELLR or SELL for the short rows, CSR segments for the
 * long ones, laid out with a map as a matrix from device arrays is). */
#include "la/internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FUSED_OP_SLOTS = 4 }; /* fused_op below */

struct clmg_matrix {
  clmg_context *context;
  clmg_matrix_format format;
  clmg_dtype precision;
  size_t rows, cols, nnz, stored;
  unsigned lanes;           /* work-items per row: CSR vector width or ELLR-T */
  unsigned slice_height;    /* SELL C */
  unsigned sigma;           /* SELL sorting window */
  clmg_matrix_format inner; /* the hybrid's layout of its short rows: ELLR or SELL */
  size_t ellr_stride;       /* ELLR rows per column block (rows rounded up) */
  uint64_t long_row_threshold;
  size_t long_row_count;
  char description[128];

  /* device arrays and their sizes in bytes */
  cl_mem offsets;            /* CSR row_ptr (int64) or SELL slice_ptr (int64) */
  cl_mem row_lengths;        /* ELLR, SELL (int32) */
  cl_mem permutation;        /* SELL sorted row -> original row (uint32) */
  cl_mem long_rows;          /* CSR rows longer than long_row_threshold (uint32) */
  cl_mem long_first_segment; /* per long row, its first segment (uint32, count + 1) */
  cl_mem segment_bounds;     /* per segment, [begin, end) in the CSR arrays (int64 pairs) */
  cl_mem segment_sums;       /* per segment, its partial sum (matrix precision) */
  cl_mem row_blocks;         /* CSR-Adaptive: each block's first row, then rows (uint32) */
  cl_mem columns;            /* int32 */
  cl_mem values;             /* double or float */
  size_t segment_count;
  size_t block_count;     /* CSR-Adaptive's row blocks */
  unsigned block_entries; /* CSR-Adaptive: the most entries of a block of several rows */
  size_t row_blocks_bytes;
  size_t offsets_bytes, row_lengths_bytes, permutation_bytes, long_rows_bytes, columns_bytes,
      values_bytes, long_first_segment_bytes, segment_bounds_bytes, segment_sums_bytes;

  /* On the device, in the matrix's precision, rows entries each: the
   * diagonal (0 in rows beyond the columns) and sum_j a_ij^2 (smoother
   * weights and checks read them there; nothing per row comes back). */
  clmg_vector *diagonal, *row_squares;

  /* Matrices made from device arrays (clmg_matrix_create_from_device) keep
   * what a value update needs: the map of stored entry -> CSR entry + 1
   * (int64, 0 for padding) and the CSR pattern, all on the device. CSR
   * stores the entries in their own order: no map (NULL), and its offsets
   * and columns are the pattern (pattern_row_ptr and pattern_col NULL). */
  int from_device;
  cl_mem map, pattern_row_ptr, pattern_col;
  size_t map_bytes, pattern_row_ptr_bytes, pattern_col_bytes;

  /* Kernels, looked up on first use so that a call on a small coarse-level
   * matrix costs no string building or table search: [operation][long rows]. */
  cl_kernel kernels[FUSED_OP_SLOTS][3]; /* [fused_op][main, long segments, long finish] */
};

const char *clmg_matrix_format_name(clmg_matrix_format format) {
  switch (format) {
  case CLMG_FORMAT_AUTO:
    return "auto";
  case CLMG_FORMAT_CSR:
    return "csr";
  case CLMG_FORMAT_ELLR:
    return "ellr";
  case CLMG_FORMAT_SELL:
    return "sell";
  case CLMG_FORMAT_CSR_ADAPTIVE:
    return "csr-adaptive";
  case CLMG_FORMAT_HYBRID:
    return "hybrid";
  }
  return "unknown";
}

int clmg_matrix_format_parse(const char *name, clmg_matrix_format *format) {
  static const clmg_matrix_format all[] = {CLMG_FORMAT_AUTO,         CLMG_FORMAT_CSR,
                                           CLMG_FORMAT_ELLR,         CLMG_FORMAT_SELL,
                                           CLMG_FORMAT_CSR_ADAPTIVE, CLMG_FORMAT_HYBRID};
  for (size_t i = 0; name && i < sizeof all / sizeof all[0]; ++i)
    if (strcmp(name, clmg_matrix_format_name(all[i])) == 0) {
      *format = all[i];
      return 1;
    }
  return 0;
}

void clmg_matrix_options_defaults(clmg_matrix_options *options) {
  if (!options)
    return;
  memset(options, 0, sizeof *options);
  options->format = CLMG_FORMAT_AUTO;
  options->precision = CLMG_DOUBLE;
}

static unsigned power_of_two_at_most(double value, unsigned low, unsigned high) {
  unsigned p = low;
  while (p * 2 <= high && p * 2 <= value)
    p *= 2;
  return p;
}

unsigned clmg_csr_row_lanes(const clmg_context *context, double mean_length) {
  return power_of_two_at_most(mean_length, 1, context->params.csr_max_lanes);
}

static int is_power_of_two(unsigned v) {
  return v && !(v & (v - 1));
}

/* CSR and CSR-Adaptive share their arrays and long-row segments. */
static int is_csr(clmg_matrix_format format) {
  return format == CLMG_FORMAT_CSR || format == CLMG_FORMAT_CSR_ADAPTIVE;
}

/* Row-length statistics: what the format choice and the layouts depend on
 * besides the row lengths themselves. From host CSR (compute_row_stats) or
 * from the device's offsets summary (clmg_matrix_create_from_device). */
typedef struct row_stats {
  size_t max_length;
  double mean_length;
} row_stats;

static row_stats compute_row_stats(const clmg_csr *a) {
  row_stats stats = {0, 0};
  for (size_t i = 0; i < a->rows; ++i) {
    size_t length = (size_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
    if (length > stats.max_length)
      stats.max_length = length;
  }
  stats.mean_length = a->rows ? (double)clmg_csr_nnz(a) / (double)a->rows : 0;
  return stats;
}

static unsigned default_sigma(const clmg_context *context, const row_stats *stats,
                              unsigned slice_height) {
  /* Uniform rows gain nothing from sorting; otherwise sort within windows
   * of a few slices (the device table's sell_sigma_slices), which keeps y's
   * writes local. */
  return stats->max_length <= stats->mean_length + 1
             ? 1
             : context->params.sell_sigma_slices * slice_height;
}

/* SELL's slice height C and sorting window sigma for these options: by
 * default the device table's slice (the SIMD/warp width a slice should
 * match: 32 for NVIDIA warps, 64 for AMD wavefronts, 8 on CPUs, where pocl
 * vectorises across work-items and 8 lanes cover an AVX-512 register of
 * doubles). */
static void sell_shape(const clmg_context *context, const row_stats *stats,
                       const clmg_matrix_options *options, unsigned *height, unsigned *sigma) {
  *height = options->sell_slice ? options->sell_slice : context->params.sell_slice;
  *sigma = options->sell_sigma ? options->sell_sigma : default_sigma(context, stats, *height);
}

/* Where the automatic choice ends at CSR: CSR-Adaptive when the longest
 * row is at least auto_csr_adaptive_ratio mean rows (the device table says
 * why; 0: never), else CSR. */
static clmg_matrix_format automatic_csr(const clmg_context *context, const row_stats *stats) {
  unsigned ratio = context->params.auto_csr_adaptive_ratio;
  return ratio > 0 && stats->mean_length > 0 &&
                 (double)stats->max_length >= (double)ratio * stats->mean_length
             ? CLMG_FORMAT_CSR_ADAPTIVE
             : CLMG_FORMAT_CSR;
}

/* The automatic format rule (documented in docs/algorithms.md, "Sparse formats"), from
 * perf/spmv measurements, as the device table gives it (auto_ellr_max_length, auto_sell,
 * auto_csr_adaptive_ratio):
 *  - CPUs: CSR, except ELLPACK-R for short uniform rows (at most 8 entries,
 *    padding at most 25%). A core walks a CSR row contiguously, while an
 *    ELLPACK row is strided; pocl ran ELLR 2-3x slower than CSR at 25-27
 *    entries per row and slightly faster at 5.
 *  - GPUs: ELLPACK-R when its padding costs at most 25% (regular FE and
 *    stencil matrices: one work-item per row, fully coalesced, no row
 *    pointers); else SELL-C-sigma when its padding costs at most 50%; else
 *    CSR, whose very long rows get a work-group each; CSR-Adaptive instead
 *    of CSR where the longest row is many mean rows (automatic_csr).
 * CLMG_FORMAT_SELL here means "SELL if sell_padding_fits, else
 * automatic_csr": the SELL layout is made only when the choice needs it. */
/* The mean row from which a small matrix takes CSR's lanes (auto_csr_rows). */
enum { AUTO_CSR_MEAN_LENGTH = 16 };

static clmg_matrix_format automatic_format(const clmg_context *context, size_t rows, size_t nnz,
                                           const row_stats *stats) {
  if (nnz == 0)
    return CLMG_FORMAT_CSR;
  double ellr_padding = (double)stats->max_length * (double)rows / (double)nnz;
  if (stats->max_length <= context->params.auto_ellr_max_length && ellr_padding <= 1.25)
    return CLMG_FORMAT_ELLR;
  /* a small matrix of long rows: a work-item per row would leave the device
   * idle while each walks its row (AMG's coarse levels) */
  if (rows <= context->params.auto_csr_rows && stats->mean_length >= AUTO_CSR_MEAN_LENGTH)
    return automatic_csr(context, stats);
  return context->params.auto_sell ? CLMG_FORMAT_SELL : automatic_csr(context, stats);
}

static int sell_padding_fits(size_t stored, size_t nnz) {
  return (double)stored / (double)nnz <= 1.5;
}

/* Sorts order[begin, end) by decreasing row length, stable (insertion sort
 * for short windows, merge through a buffer otherwise). */
static void sort_window(uint32_t *order, size_t count, const int64_t *row_ptr, uint32_t *buffer) {
  if (count < 2)
    return;
  /* FE prolongations and stencils: a few distinct lengths, a counting sort
   * (linear) instead of the merge sort */
  enum { NARROW = 64 };
  int64_t shortest = INT64_MAX, longest = 0;
  for (size_t i = 0; i < count; ++i) {
    int64_t length = row_ptr[order[i] + 1] - row_ptr[order[i]];
    shortest = length < shortest ? length : shortest;
    longest = length > longest ? length : longest;
  }
  if (longest - shortest < NARROW) {
    size_t start[NARROW + 1] = {0};
    for (size_t i = 0; i < count; ++i) /* bucket 0 holds the longest rows */
      start[longest - (row_ptr[order[i] + 1] - row_ptr[order[i]]) + 1]++;
    for (int b = 0; b < NARROW; ++b)
      start[b + 1] += start[b];
    for (size_t i = 0; i < count; ++i)
      buffer[start[longest - (row_ptr[order[i] + 1] - row_ptr[order[i]])]++] = order[i];
    memcpy(order, buffer, count * sizeof *order);
    return;
  }
  if (count <= 32) {
    for (size_t i = 1; i < count; ++i) {
      uint32_t row = order[i];
      int64_t length = row_ptr[row + 1] - row_ptr[row];
      size_t j = i;
      while (j > 0 && row_ptr[order[j - 1] + 1] - row_ptr[order[j - 1]] < length) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = row;
    }
    return;
  }
  size_t half = count / 2;
  sort_window(order, half, row_ptr, buffer);
  sort_window(order + half, count - half, row_ptr, buffer);
  size_t i = 0, j = half, k = 0;
  while (i < half && j < count) {
    int64_t li = row_ptr[order[i] + 1] - row_ptr[order[i]];
    int64_t lj = row_ptr[order[j] + 1] - row_ptr[order[j]];
    buffer[k++] = lj > li ? order[j++] : order[i++];
  }
  while (i < half)
    buffer[k++] = order[i++];
  while (j < count)
    buffer[k++] = order[j++];
  memcpy(order, buffer, count * sizeof *order);
}

/* Entries SELL-C stores for a with its rows in `order`. */
static size_t sell_stored(const clmg_csr *a, unsigned slice_height, const uint32_t *order) {
  size_t stored = 0;
  for (size_t begin = 0; begin < a->rows; begin += slice_height) {
    size_t width = 0;
    for (size_t i = begin; i < begin + slice_height && i < a->rows; ++i) {
      size_t length = (size_t)(a->row_ptr[order[i] + 1] - a->row_ptr[order[i]]);
      if (length > width)
        width = length;
    }
    stored += width * slice_height;
  }
  return stored;
}

/* Entries SELL-C-sigma stores for a, and the sorted order it would use
 * (order may be NULL). */
static size_t sell_layout(const clmg_csr *a, unsigned slice_height, unsigned sigma,
                          uint32_t *order) {
  uint32_t *own = NULL, *buffer = NULL;
  if (!order) {
    own = malloc((a->rows ? a->rows : 1) * sizeof *own);
    if (!own)
      return SIZE_MAX;
    order = own;
  }
  for (size_t i = 0; i < a->rows; ++i)
    order[i] = (uint32_t)i;
  if (sigma > 1) {
    buffer = malloc((sigma < a->rows ? sigma : a->rows) * sizeof *buffer + 1);
    if (!buffer) {
      free(own);
      return SIZE_MAX;
    }
    for (size_t begin = 0; begin < a->rows; begin += sigma) {
      size_t count = a->rows - begin < sigma ? a->rows - begin : sigma;
      sort_window(order + begin, count, a->row_ptr, buffer);
    }
  }
  size_t stored = sell_stored(a, slice_height, order);
  free(buffer);
  free(own);
  return stored;
}

/* Long CSR rows are cut into segments of the device table's
 * csr_segment_length entries, one work-group each (cl/spmv.cl:
 * csr_long_segments). */
static size_t segment_length_of(const clmg_context *context) {
  return context->params.csr_segment_length;
}

/* ---- the hybrid format's plan (host) ----
 * A hybrid matrix stores its long rows (longer than hybrid_long_row_threshold)
 * as CSR, cut into segments of csr_segment_length entries (csr_long_segments
 * reduces each in a work-group's local memory, csr_long_finish adds them into
 * y), and its other rows as ELLPACK-R or SELL-C-sigma, the long rows' slots
 * empty and their row length -1 (the kernels store no row of length -1, so
 * each row of y is written once). */

/* Rows longer than this are a hybrid matrix's long rows: options->csr_vector_min
 * when set, else 8 mean rows and at least 256 entries. FE and stencil rows
 * stay within 2-3 mean rows, so none of theirs are long; a row 8 mean rows
 * long would pad ELLR 8-fold and its SELL slice as much, while one of at
 * least 256 entries gives every work-item of a 256-wide group an entry of a
 * segment. */
enum { HYBRID_LONG_ROW_FACTOR = 8, HYBRID_LONG_ROW_MIN = 256 };

static uint64_t hybrid_long_row_threshold(const clmg_matrix_options *options, double mean_length) {
  if (options->csr_vector_min)
    return options->csr_vector_min;
  double threshold = HYBRID_LONG_ROW_FACTOR * mean_length;
  return threshold > HYBRID_LONG_ROW_MIN ? (uint64_t)threshold : HYBRID_LONG_ROW_MIN;
}

/* Where the hybrid's layout goes, from the row offsets alone. */
typedef struct hybrid_plan {
  const int64_t *row_ptr; /* the pattern's offsets on the host */
  int64_t *own_row_ptr;   /* row_ptr when the plan read it from the device */
  int64_t *short_ptr;     /* offsets with the long rows emptied */
  uint32_t *order;        /* SELL's sorted rows (NULL for ELLR) */
  uint64_t threshold;
  size_t long_count, long_nnz, segment_count;
  row_stats stats; /* of the short rows, the long ones counted empty */
  clmg_matrix_format inner;
  size_t inner_stored; /* SELL's stored entries (ELLR's come from ellr_shape) */
  int fits;            /* the inner layout meets the automatic rule's padding limits */
} hybrid_plan;

static void hybrid_plan_free(hybrid_plan *plan) {
  free(plan->own_row_ptr);
  free(plan->short_ptr);
  free(plan->order);
  memset(plan, 0, sizeof *plan);
}

/* Whether the automatic choice, where it would end at CSR (SELL's padding
 * too large), tries the hybrid: on devices with auto_hybrid, for a matrix
 * with long rows. It takes it when the plan fits (the other rows meet
 * ELLR's or SELL's padding limits). */
static int hybrid_candidate(const clmg_context *context, const row_stats *stats,
                            const clmg_matrix_options *options) {
  return context->params.auto_hybrid &&
         stats->max_length > hybrid_long_row_threshold(options, stats->mean_length);
}

/* The plan for rows with offsets row_ptr (taken over when own): the long
 * rows and segments, and the inner layout: ELLPACK-R when the automatic rule
 * would take it for the short rows (padding at most 25%, rows at most
 * auto_ellr_max_length), else SELL-C-sigma (fits: padding at most 50%). */
static clmg_status hybrid_plan_make(clmg_context *context, size_t rows, const int64_t *row_ptr,
                                    int own, const clmg_matrix_options *options,
                                    hybrid_plan *plan) {
  memset(plan, 0, sizeof *plan);
  plan->row_ptr = row_ptr;
  plan->own_row_ptr = own ? (int64_t *)row_ptr : NULL;
  size_t nnz = rows ? (size_t)row_ptr[rows] : 0;
  plan->threshold = hybrid_long_row_threshold(options, rows ? (double)nnz / (double)rows : 0);
  plan->short_ptr = malloc((rows + 1) * sizeof *plan->short_ptr);
  if (!plan->short_ptr) {
    hybrid_plan_free(plan);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "hybrid matrix: row offsets");
  }
  plan->short_ptr[0] = 0;
  for (size_t i = 0; i < rows; ++i) {
    uint64_t length = (uint64_t)(row_ptr[i + 1] - row_ptr[i]);
    int is_long = length > plan->threshold;
    if (is_long) {
      plan->long_count++;
      plan->long_nnz += length;
      plan->segment_count += (length + segment_length_of(context) - 1) / segment_length_of(context);
    } else if (length > plan->stats.max_length)
      plan->stats.max_length = length;
    plan->short_ptr[i + 1] = plan->short_ptr[i] + (is_long ? 0 : (int64_t)length);
  }
  size_t short_nnz = (size_t)plan->short_ptr[rows];
  plan->stats.mean_length = rows ? (double)short_nnz / (double)rows : 0;
  if (short_nnz == 0 ||
      ((double)plan->stats.max_length * (double)rows <= 1.25 * (double)short_nnz &&
       plan->stats.max_length <= context->params.auto_ellr_max_length)) {
    plan->inner = CLMG_FORMAT_ELLR;
    plan->fits = 1;
    return CLMG_SUCCESS;
  }
  plan->inner = CLMG_FORMAT_SELL;
  unsigned height, sigma;
  sell_shape(context, &plan->stats, options, &height, &sigma);
  plan->order = malloc((rows ? rows : 1) * sizeof *plan->order);
  clmg_csr short_rows = {rows, 0, plan->short_ptr, NULL, NULL};
  plan->inner_stored =
      plan->order ? sell_layout(&short_rows, height, sigma, plan->order) : SIZE_MAX;
  if (plan->inner_stored == SIZE_MAX) {
    hybrid_plan_free(plan);
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "hybrid matrix: SELL row order");
  }
  plan->fits = sell_padding_fits(plan->inner_stored, short_nnz);
  return CLMG_SUCCESS;
}

void clmg_matrix_destroy(clmg_matrix *m) {
  if (!m)
    return;
  clmg_device_free(m->context, m->offsets, m->offsets_bytes);
  clmg_device_free(m->context, m->row_lengths, m->row_lengths_bytes);
  clmg_device_free(m->context, m->permutation, m->permutation_bytes);
  clmg_device_free(m->context, m->long_rows, m->long_rows_bytes);
  clmg_device_free(m->context, m->long_first_segment, m->long_first_segment_bytes);
  clmg_device_free(m->context, m->segment_bounds, m->segment_bounds_bytes);
  clmg_device_free(m->context, m->segment_sums, m->segment_sums_bytes);
  clmg_device_free(m->context, m->row_blocks, m->row_blocks_bytes);
  clmg_device_free(m->context, m->columns, m->columns_bytes);
  clmg_device_free(m->context, m->values, m->values_bytes);
  clmg_device_free(m->context, m->map, m->map_bytes);
  clmg_device_free(m->context, m->pattern_row_ptr, m->pattern_row_ptr_bytes);
  clmg_device_free(m->context, m->pattern_col, m->pattern_col_bytes);
  clmg_vector_destroy(m->diagonal);
  clmg_vector_destroy(m->row_squares);
  free(m);
}

/* Uploads one host array into a device buffer of the matrix (host NULL: a
 * buffer that kernels fill). */
static clmg_status upload_array(clmg_matrix *m, const void *host, size_t bytes, const char *what,
                                cl_mem *buffer, size_t *stored_bytes) {
  clmg_status status = clmg_device_alloc(m->context, bytes, host, what, buffer);
  if (status == CLMG_SUCCESS)
    *stored_bytes = bytes ? bytes : 1;
  return status;
}

/* A device buffer of the matrix set to zero bytes (padding of a layout
 * whose entries a kernel fills in). */
static clmg_status zero_array(clmg_matrix *m, cl_mem buffer, size_t bytes, const char *what) {
  /* the widest pattern that divides the size: the fewest copies of it */
  static const cl_uchar zeros[128] = {0};
  size_t pattern = sizeof zeros;
  while (bytes % pattern != 0)
    pattern /= 2;
  return clmg_fill_buffer(m->context, buffer, zeros, pattern, 0, bytes, what);
}

/* Host value array in the matrix precision; values[k] from index map. */
typedef struct value_array {
  void *data;
  size_t element;
} value_array;

static int value_array_init(value_array *v, clmg_dtype precision, size_t count) {
  v->element = clmg_dtype_size(precision);
  v->data = calloc(count ? count : 1, v->element);
  return v->data != NULL;
}

static void value_array_set(value_array *v, size_t index, double value) {
  if (v->element == sizeof(cl_float))
    ((cl_float *)v->data)[index] = (cl_float)value;
  else
    ((cl_double *)v->data)[index] = value;
}

/* CSR rows longer than this are cut into segments (the device table's
 * csr_long_row_factor and _min): on GPUs 64 times the mean row, at least
 * 512; on CPUs none (a core walks a whole row fast; splitting rows only adds
 * barriers). */
static uint64_t csr_long_row_threshold(const clmg_context *context,
                                       const clmg_matrix_options *options, double mean_length) {
  if (options->csr_vector_min)
    return options->csr_vector_min;
  const clmg_device_params *p = &context->params;
  if (p->csr_long_row_factor <= 0)
    return UINT64_MAX;
  double threshold = p->csr_long_row_factor * mean_length;
  double least = (double)p->csr_long_row_min;
  return (uint64_t)(threshold > least ? threshold : least);
}

/* CSR's work-items per row and long-row threshold, whatever builds it. */
static clmg_status csr_shape(clmg_matrix *m, const row_stats *stats,
                             const clmg_matrix_options *options) {
  if (options->csr_lanes && (!is_power_of_two(options->csr_lanes) || options->csr_lanes > 32))
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "CSR lanes per row must be 1, 2, 4, 8, 16 or 32 (got %u)", options->csr_lanes);
  /* a row's lanes share a work-group (cl/spmv.cl's lanes_sum) */
  if (options->csr_lanes > m->context->params.work_group_size)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "CSR lanes per row: %u, more than the work-group of %zu on %s",
                     options->csr_lanes, m->context->params.work_group_size, m->context->info.name);
  m->lanes = clmg_csr_row_lanes(m->context, stats->mean_length);
  if (options->csr_lanes)
    m->lanes = options->csr_lanes;
  m->long_row_threshold = csr_long_row_threshold(m->context, options, stats->mean_length);
  m->stored = m->nnz;
  if (m->format == CLMG_FORMAT_CSR_ADAPTIVE) {
    /* one row per work-item is csr_spmv's, not the adaptive kernel's */
    m->lanes = 1;
    /* the block's products and the group's scratch in local memory */
    const clmg_device_params *p = &m->context->params;
    size_t element = clmg_dtype_size(m->precision);
    unsigned factor = p->csr_block_factor;
    while (factor > 2 &&
           (factor + 1) * p->work_group_size * element > m->context->info.local_mem_bytes)
      factor /= 2;
    m->block_entries = (unsigned)(factor * p->work_group_size);
  }
  return CLMG_SUCCESS;
}

static void describe_csr(clmg_matrix *m) {
  if (m->format == CLMG_FORMAT_CSR_ADAPTIVE)
    snprintf(m->description, sizeof m->description, "csr-adaptive blocks=%zu/%u long_rows=%zu",
             m->block_count, m->block_entries, m->long_row_count);
  else
    snprintf(m->description, sizeof m->description, "csr lanes=%u long_rows=%zu", m->lanes,
             m->long_row_count);
}

/* CSR-Adaptive's row blocks (cl/spmv.cl's csr_adaptive_spmv). With G the
 * work-group size and B = block_entries (a few G), a row is alone in its
 * block when it is longer than G (or than the long-row threshold: its
 * segments take it); the other rows run together while they lie in the
 * same window of B - G entries (by their first entry) and the same run of
 * G rows. So a block of several rows holds at most B - 1 entries (its last
 * row starts inside the window and ends at most G entries later) and at
 * most one row per work-item. Each row's test reads only its own and its
 * neighbour's offsets, so the device makes the same blocks in parallel
 * (cl/matrix_device.cl's csr_adaptive_block_starts); a greedy pass, as
 * Greathouse and Daga's, fills the blocks fuller but is sequential. */
typedef struct block_rule {
  uint64_t short_max; /* longer rows are alone */
  uint64_t bin;       /* B - G: the window of first entries */
  uint32_t rows;      /* G: the most rows of a block */
} block_rule;

static block_rule adaptive_block_rule(const clmg_matrix *m) {
  size_t group = m->context->params.work_group_size;
  block_rule rule;
  rule.short_max = group < m->long_row_threshold ? group : m->long_row_threshold;
  rule.bin = m->block_entries - group;
  rule.rows = (uint32_t)group;
  return rule;
}

/* Whether row i starts a block (i < rows). */
static int adaptive_block_starts(const block_rule *rule, const int64_t *row_ptr, size_t i) {
  if (i == 0 || i % rule->rows == 0)
    return 1;
  uint64_t previous = (uint64_t)row_ptr[i - 1], here = (uint64_t)row_ptr[i],
           next = (uint64_t)row_ptr[i + 1];
  return here - previous > rule->short_max || next - here > rule->short_max ||
         previous / rule->bin != here / rule->bin;
}

/* The blocks of host CSR a, to the device: each block's first row, then
 * the rows. */
static clmg_status upload_row_blocks(clmg_matrix *m, const clmg_csr *a) {
  block_rule rule = adaptive_block_rule(m);
  size_t count = 0;
  for (size_t i = 0; i < m->rows; ++i)
    count += (size_t)adaptive_block_starts(&rule, a->row_ptr, i);
  uint32_t *blocks = malloc((count + 1) * sizeof *blocks);
  if (!blocks)
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "CSR-Adaptive row blocks");
  count = 0;
  for (size_t i = 0; i < m->rows; ++i)
    if (adaptive_block_starts(&rule, a->row_ptr, i))
      blocks[count++] = (uint32_t)i;
  blocks[count] = (uint32_t)m->rows;
  m->block_count = count;
  clmg_status status =
      upload_array(m, blocks, (count + 1) * sizeof *blocks, "CSR-Adaptive row blocks",
                   &m->row_blocks, &m->row_blocks_bytes);
  free(blocks);
  return status;
}

static clmg_status build_csr(clmg_matrix *m, const clmg_csr *a, const row_stats *stats,
                             const clmg_matrix_options *options) {
  size_t nnz = m->nnz;
  clmg_status status = csr_shape(m, stats, options);
  if (status != CLMG_SUCCESS)
    return status;
  const size_t segment_length = segment_length_of(m->context);
  size_t long_count = 0, segment_count = 0;
  for (size_t i = 0; i < m->rows; ++i) {
    uint64_t length = (uint64_t)(a->row_ptr[i + 1] - a->row_ptr[i]);
    if (length > m->long_row_threshold) {
      ++long_count;
      segment_count += (length + segment_length - 1) / segment_length;
    }
  }
  uint32_t *long_rows = malloc((long_count ? long_count : 1) * sizeof *long_rows);
  uint32_t *first_segment = malloc((long_count + 1) * sizeof *first_segment);
  int64_t *bounds = malloc((segment_count ? 2 * segment_count : 1) * sizeof *bounds);
  /* double values go up from the caller's array; float ones are rounded
   * into a staging copy */
  const int staged = m->precision != CLMG_DOUBLE;
  value_array values = {NULL, clmg_dtype_size(m->precision)};
  if (!long_rows || !first_segment || !bounds ||
      (staged && !value_array_init(&values, m->precision, nnz))) {
    free(long_rows);
    free(first_segment);
    free(bounds);
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "CSR staging arrays");
  }
  long_count = segment_count = 0;
  for (size_t i = 0; i < m->rows; ++i) {
    int64_t begin = a->row_ptr[i], end = a->row_ptr[i + 1];
    if ((uint64_t)(end - begin) <= m->long_row_threshold)
      continue;
    first_segment[long_count] = (uint32_t)segment_count;
    long_rows[long_count++] = (uint32_t)i;
    for (int64_t k = begin; k < end; k += (int64_t)segment_length) {
      bounds[2 * segment_count] = k;
      bounds[2 * segment_count + 1] =
          end - k < (int64_t)segment_length ? end : k + (int64_t)segment_length;
      ++segment_count;
    }
  }
  first_segment[long_count] = (uint32_t)segment_count;
  for (size_t k = 0; staged && k < nnz; ++k)
    value_array_set(&values, k, a->val[k]);
  m->long_row_count = long_count;
  m->segment_count = segment_count;
  status = upload_array(m, a->row_ptr, (m->rows + 1) * sizeof(int64_t), "CSR row offsets",
                        &m->offsets, &m->offsets_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, a->col, nnz * sizeof(int32_t), "CSR column indices", &m->columns,
                          &m->columns_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, staged ? values.data : (const void *)a->val,
                          nnz * clmg_dtype_size(m->precision), "CSR values", &m->values,
                          &m->values_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, long_rows, long_count * sizeof(uint32_t), "CSR long-row list",
                          &m->long_rows, &m->long_rows_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, first_segment, (long_count + 1) * sizeof(uint32_t),
                          "CSR long-row segment index", &m->long_first_segment,
                          &m->long_first_segment_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, bounds, 2 * segment_count * sizeof(int64_t), "CSR segment bounds",
                          &m->segment_bounds, &m->segment_bounds_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, segment_count * clmg_dtype_size(m->precision),
                          "CSR segment sums", &m->segment_sums, &m->segment_sums_bytes);
  if (status == CLMG_SUCCESS && m->format == CLMG_FORMAT_CSR_ADAPTIVE)
    status = upload_row_blocks(m, a);
  free(first_segment);
  free(bounds);
  free(long_rows);
  free(values.data);
  describe_csr(m);
  return status;
}

/* Refuses padded layouts that cannot fit before any large host allocation. */
static clmg_status check_padded_size(clmg_matrix *m, size_t stored, const char *format) {
  size_t element = clmg_dtype_size(m->precision) + sizeof(int32_t);
  if (stored > m->context->info.max_alloc_bytes / element)
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                     "%s would store %zu entries for %zu nonzeros (padding to the longest "
                     "rows), more than %s can allocate; use the csr format",
                     format, stored, m->nnz, m->context->info.name);
  return CLMG_SUCCESS;
}

/* ELLPACK-R's threads per row, width (entries per row, padded), column
 * block stride and stored entries, whatever builds it. */
static clmg_status ellr_shape(clmg_matrix *m, const row_stats *stats,
                              const clmg_matrix_options *options, size_t *width) {
  unsigned lanes = options->ellr_threads;
  const clmg_device_params *p = &m->context->params;
  if (lanes == 0)
    lanes = power_of_two_at_most(stats->mean_length / p->ellr_entries_per_thread, 1,
                                 p->ellr_max_threads);
  if (!is_power_of_two(lanes) || lanes > 32)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "ELLR-T needs T in 1, 2, 4, 8, 16, 32 (got %u)", lanes);
  if (lanes > p->work_group_size)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "ELLR-T: T = %u, more than the work-group of %zu on %s", lanes,
                     p->work_group_size, m->context->info.name);
  m->lanes = lanes;
  *width = (stats->max_length + lanes - 1) / lanes * lanes;
  m->ellr_stride = (m->rows + 31) / 32 * 32; /* aligned column blocks */
  size_t stored = *width * m->ellr_stride;
  if (*width && stored / *width != m->ellr_stride)
    stored = SIZE_MAX;
  clmg_status status = check_padded_size(m, stored, "ELLPACK-R");
  if (status == CLMG_SUCCESS)
    m->stored = stored;
  snprintf(m->description, sizeof m->description, "ellr T=%u width=%zu", lanes, *width);
  return status;
}

static clmg_status build_ellr(clmg_matrix *m, const clmg_csr *a, const row_stats *stats,
                              const clmg_matrix_options *options) {
  size_t width = 0;
  clmg_status status = ellr_shape(m, stats, options, &width);
  if (status != CLMG_SUCCESS)
    return status;
  size_t stored = m->stored, lanes = m->lanes;
  int32_t *columns = calloc(stored ? stored : 1, sizeof *columns);
  int32_t *lengths = calloc(m->rows ? m->rows : 1, sizeof *lengths);
  value_array values;
  values.data = NULL;
  if (!columns || !lengths || !value_array_init(&values, m->precision, stored)) {
    free(columns);
    free(lengths);
    free(values.data);
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "ELLPACK-R staging arrays");
  }
  for (size_t r = 0; r < m->rows; ++r) {
    int64_t begin = a->row_ptr[r];
    size_t length = (size_t)(a->row_ptr[r + 1] - begin);
    lengths[r] = (int32_t)length;
    for (size_t k = 0; k < length; ++k) {
      size_t index = ((k / lanes) * m->ellr_stride + r) * lanes + k % lanes;
      columns[index] = a->col[begin + (int64_t)k];
      value_array_set(&values, index, a->val[begin + (int64_t)k]);
    }
  }
  status = upload_array(m, lengths, m->rows * sizeof(int32_t), "ELLPACK-R row lengths",
                        &m->row_lengths, &m->row_lengths_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, columns, stored * sizeof(int32_t), "ELLPACK-R column indices",
                          &m->columns, &m->columns_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, values.data, stored * clmg_dtype_size(m->precision),
                          "ELLPACK-R values", &m->values, &m->values_bytes);
  free(columns);
  free(lengths);
  free(values.data);
  return status;
}

/* SELL's slice height, window and threads per row, whatever builds it. */
static void sell_set_shape(clmg_matrix *m, const row_stats *stats,
                           const clmg_matrix_options *options) {
  sell_shape(m->context, stats, options, &m->slice_height, &m->sigma);
  m->lanes = 1; /* one work-item per row */
  snprintf(m->description, sizeof m->description, "sell C=%u sigma=%u", m->slice_height, m->sigma);
}

/* sorted: the row order sell_layout made for these options (the automatic
 * choice computes it), taken over; NULL: computed here. */
static clmg_status build_sell(clmg_matrix *m, const clmg_csr *a, const row_stats *stats,
                              const clmg_matrix_options *options, uint32_t *sorted) {
  sell_set_shape(m, stats, options);
  unsigned height = m->slice_height;
  uint32_t *order = sorted ? sorted : malloc((m->rows ? m->rows : 1) * sizeof *order);
  if (!order)
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "SELL row order");
  size_t stored = sorted ? sell_stored(a, height, order) : sell_layout(a, height, m->sigma, order);
  clmg_status status = check_padded_size(m, stored, "SELL-C-sigma");
  if (status != CLMG_SUCCESS) {
    free(order);
    return status;
  }
  m->stored = stored;
  size_t slices = (m->rows + height - 1) / height;
  int64_t *slice_ptr = malloc((slices + 1) * sizeof *slice_ptr);
  int32_t *columns = calloc(stored ? stored : 1, sizeof *columns);
  int32_t *lengths = calloc(m->rows ? m->rows : 1, sizeof *lengths);
  value_array values;
  values.data = NULL;
  if (!slice_ptr || !columns || !lengths || !value_array_init(&values, m->precision, stored)) {
    free(order);
    free(slice_ptr);
    free(columns);
    free(lengths);
    free(values.data);
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "SELL staging arrays");
  }
  slice_ptr[0] = 0;
  for (size_t s = 0; s < slices; ++s) {
    size_t width = 0;
    for (size_t i = s * height; i < (s + 1) * height && i < m->rows; ++i) {
      size_t row = order[i];
      size_t length = (size_t)(a->row_ptr[row + 1] - a->row_ptr[row]);
      lengths[i] = (int32_t)length;
      if (length > width)
        width = length;
      for (size_t k = 0; k < length; ++k) {
        size_t index = (size_t)slice_ptr[s] + k * height + (i - s * height);
        columns[index] = a->col[a->row_ptr[row] + (int64_t)k];
        value_array_set(&values, index, a->val[a->row_ptr[row] + (int64_t)k]);
      }
    }
    slice_ptr[s + 1] = slice_ptr[s] + (int64_t)(width * height);
  }
  status = upload_array(m, slice_ptr, (slices + 1) * sizeof(int64_t), "SELL slice offsets",
                        &m->offsets, &m->offsets_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, lengths, m->rows * sizeof(int32_t), "SELL row lengths",
                          &m->row_lengths, &m->row_lengths_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, order, m->rows * sizeof(uint32_t), "SELL row permutation",
                          &m->permutation, &m->permutation_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, columns, stored * sizeof(int32_t), "SELL column indices", &m->columns,
                          &m->columns_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, values.data, stored * clmg_dtype_size(m->precision), "SELL values",
                          &m->values, &m->values_bytes);
  free(order);
  free(slice_ptr);
  free(columns);
  free(lengths);
  free(values.data);
  return status;
}

static clmg_status check_host_csr(clmg_context *context, const clmg_csr *a) {
  if (!a)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_matrix_create: NULL matrix");
  if (a->rows > INT32_MAX || a->cols > INT32_MAX)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "a %zu x %zu matrix has more rows or columns than 32-bit indices allow",
                     a->rows, a->cols);
  if (!a->row_ptr || (clmg_csr_nnz(a) > 0 && (!a->col || !a->val)))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "clmg_matrix_create: the CSR arrays are missing");
  return CLMG_SUCCESS;
}

static clmg_status create_matrix(clmg_context *context, const clmg_csr *a,
                                 const clmg_matrix_options *options, clmg_matrix **out);

clmg_status clmg_matrix_create(clmg_context *context, const clmg_csr *a,
                               const clmg_matrix_options *options, clmg_matrix **out) {
  if (!out || !context || !context->queue)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "clmg_matrix_create: NULL argument");
  *out = NULL;
  clmg_clear_message(context);
  clmg_status status = check_host_csr(context, a);
  if (status != CLMG_SUCCESS)
    return status;
  return create_matrix(context, a, options, out);
}

/* The diagonal and row sums of squares of host CSR a, to the device. */
static clmg_status upload_row_statistics(clmg_matrix *m, const clmg_csr *a) {
  double *diagonal = calloc(a->rows ? a->rows : 1, sizeof *diagonal);
  double *squares = calloc(a->rows ? a->rows : 1, sizeof *squares);
  clmg_status status = CLMG_SUCCESS;
  if (!diagonal || !squares)
    status = clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "matrix diagonal");
  for (size_t i = 0; status == CLMG_SUCCESS && i < a->rows; ++i)
    for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k) {
      if ((size_t)a->col[k] == i)
        diagonal[i] += a->val[k];
      squares[i] += a->val[k] * a->val[k];
    }
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(m->context, m->precision, a->rows, diagonal, &m->diagonal);
  if (status == CLMG_SUCCESS)
    status =
        clmg_vector_create_from_host(m->context, m->precision, a->rows, squares, &m->row_squares);
  free(diagonal);
  free(squares);
  return status;
}

/* The precision checks of both constructors. */
static clmg_status check_precision_option(clmg_context *context,
                                          const clmg_matrix_options *options) {
  if (options->precision != CLMG_DOUBLE && options->precision != CLMG_FLOAT)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix precision must be double or float, not %s",
                     clmg_dtype_name(options->precision));
  if (options->precision == CLMG_DOUBLE && !context->info.has_fp64)
    return clmg_fail_no_fp64(context, "a double matrix");
  return CLMG_SUCCESS;
}

/* A matrix handle without arrays, after the checks of the remaining
 * options (both constructors). */
static clmg_status new_matrix(clmg_context *context, size_t rows, size_t cols, size_t nnz,
                              const clmg_matrix_options *options, clmg_matrix **out) {
  *out = NULL;
  if (options->sell_slice && (!is_power_of_two(options->sell_slice) || options->sell_slice > 256))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "SELL slice height C must be a power of two up to 256 (got %u)",
                     options->sell_slice);
  clmg_matrix *m = calloc(1, sizeof *m);
  if (!m)
    return clmg_fail(context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "matrix handle");
  m->context = context;
  m->precision = options->precision;
  m->rows = rows;
  m->cols = cols;
  m->nnz = nnz;
  m->format = options->format;
  *out = m;
  return CLMG_SUCCESS;
}

/* a's arrays uploaded in the matrix's precision, then laid out on the device. */
static clmg_status create_through_device(clmg_context *context, const clmg_csr *a,
                                         const clmg_matrix_options *options, clmg_matrix **out) {
  clmg_csr_device uploaded;
  clmg_status status = clmg_csr_device_upload(context, a, options->precision, &uploaded);
  if (status == CLMG_SUCCESS)
    status = clmg_matrix_create_from_device(context, a->rows, a->cols, uploaded.row_ptr,
                                            uploaded.col, uploaded.val, options, out);
  clmg_csr_device_free(&uploaded);
  return status;
}

/* clmg_matrix_create after its checks. */
static clmg_status create_matrix(clmg_context *context, const clmg_csr *a,
                                 const clmg_matrix_options *options, clmg_matrix **out) {
  clmg_matrix_options defaults;
  if (!options) {
    clmg_matrix_options_defaults(&defaults);
    options = &defaults;
  }
  clmg_status status = check_precision_option(context, options);
  if (status != CLMG_SUCCESS)
    return status;
  if (options->precision == CLMG_FLOAT)
    for (size_t i = 0; i < a->rows; ++i)
      for (int64_t k = a->row_ptr[i]; k < a->row_ptr[i + 1]; ++k)
        if (isfinite(a->val[k]) && fabs(a->val[k]) > FLT_MAX)
          return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                           "float matrix: entry (%zu, %lld) is %g, beyond float's range (+-%g); "
                           "use double precision or scale the matrix",
                           i, (long long)a->col[k], a->val[k], (double)FLT_MAX);
  /* on a GPU (matrix_layout_on_device) the CSR arrays cross the bus once
   * and the layout is made there: the same arrays as below; the hybrid is
   * always made so (its map keeps the values updatable) */
  if ((context->params.matrix_layout_on_device && options->precision == CLMG_DOUBLE) ||
      options->format == CLMG_FORMAT_HYBRID)
    return create_through_device(context, a, options, out);
  clmg_matrix *m = NULL;
  status = new_matrix(context, a->rows, a->cols, clmg_csr_nnz(a), options, &m);
  if (status == CLMG_SUCCESS)
    status = upload_row_statistics(m, a);
  if (status != CLMG_SUCCESS) {
    clmg_matrix_destroy(m);
    return status;
  }

  row_stats stats = compute_row_stats(a);
  uint32_t *sell_order = NULL; /* what the automatic choice sorted, for build_sell */
  if (m->format == CLMG_FORMAT_AUTO) {
    m->format = automatic_format(context, m->rows, m->nnz, &stats);
    if (m->format == CLMG_FORMAT_SELL) {
      unsigned height, sigma;
      sell_shape(context, &stats, options, &height, &sigma);
      sell_order = malloc((a->rows ? a->rows : 1) * sizeof *sell_order);
      if (!sell_padding_fits(sell_layout(a, height, sigma, sell_order), m->nnz)) {
        m->format = automatic_csr(context, &stats);
        free(sell_order);
        sell_order = NULL;
        if (hybrid_candidate(context, &stats, options)) {
          hybrid_plan plan;
          status = hybrid_plan_make(context, a->rows, a->row_ptr, 0, options, &plan);
          int fits = status == CLMG_SUCCESS && plan.fits;
          hybrid_plan_free(&plan);
          if (status != CLMG_SUCCESS || fits) {
            clmg_matrix_destroy(m);
            clmg_matrix_options hybrid = *options;
            hybrid.format = CLMG_FORMAT_HYBRID;
            return status == CLMG_SUCCESS ? create_through_device(context, a, &hybrid, out)
                                          : status;
          }
        }
      }
    }
  }
  switch (m->format) {
  case CLMG_FORMAT_ELLR:
    status = build_ellr(m, a, &stats, options);
    break;
  case CLMG_FORMAT_SELL:
    status = build_sell(m, a, &stats, options, sell_order);
    break;
  case CLMG_FORMAT_CSR:
  case CLMG_FORMAT_CSR_ADAPTIVE:
    status = build_csr(m, a, &stats, options);
    break;
  default:
    free(sell_order);
    status = clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "unknown matrix format %d",
                       (int)options->format);
  }
  if (status != CLMG_SUCCESS) {
    clmg_matrix_destroy(m);
    return status;
  }
  *out = m;
  return CLMG_SUCCESS;
}

clmg_context *clmg_matrix_context(const clmg_matrix *m) {
  return m ? m->context : NULL;
}
size_t clmg_matrix_rows(const clmg_matrix *m) {
  return m ? m->rows : 0;
}
size_t clmg_matrix_cols(const clmg_matrix *m) {
  return m ? m->cols : 0;
}
size_t clmg_matrix_nnz(const clmg_matrix *m) {
  return m ? m->nnz : 0;
}
size_t clmg_matrix_stored_entries(const clmg_matrix *m) {
  return m ? m->stored : 0;
}
clmg_matrix_format clmg_matrix_format_of(const clmg_matrix *m) {
  return m ? m->format : CLMG_FORMAT_AUTO;
}
clmg_dtype clmg_matrix_precision(const clmg_matrix *m) {
  return m ? m->precision : CLMG_DOUBLE;
}
size_t clmg_matrix_device_bytes(const clmg_matrix *m) {
  if (!m)
    return 0;
  return m->offsets_bytes + m->row_lengths_bytes + m->permutation_bytes + m->long_rows_bytes +
         m->columns_bytes + m->values_bytes + m->long_first_segment_bytes +
         m->segment_bounds_bytes + m->segment_sums_bytes + m->row_blocks_bytes;
}
const char *clmg_matrix_describe(const clmg_matrix *m) {
  return m ? m->description : "";
}

/* ---- the SpMV family ---- */

static int vectors_overlap(const clmg_vector *a, const clmg_vector *b) {
  return a->buffer == b->buffer && a->length && b->length && a->offset < b->offset + b->length &&
         b->offset < a->offset + a->length;
}

static clmg_status check_vector(const clmg_matrix *m, const clmg_vector *v, size_t length,
                                const char *role, const char *op) {
  if (!v)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: NULL %s", op, role);
  if (v->context != m->context)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: %s belongs to another context",
                     op, role);
  if (v->type != m->precision)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: %s is %s but the matrix is %s",
                     op, role, clmg_dtype_name(v->type), clmg_dtype_name(m->precision));
  if (v->length != length)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "%s: %s has %zu elements, the %zu x %zu matrix needs %zu", op, role, v->length,
                     m->rows, m->cols, length);
  return CLMG_SUCCESS;
}

/* The layout the main kernel walks: the hybrid's short rows are ELLR or SELL. */
static clmg_matrix_format layout_of(const clmg_matrix *m) {
  return m->format == CLMG_FORMAT_HYBRID ? m->inner : m->format;
}

/* Whether the product adds long rows' segments (csr_long_segments, csr_long_finish). */
static int has_long_segments(const clmg_matrix *m) {
  return (is_csr(m->format) || m->format == CLMG_FORMAT_HYBRID) && m->long_row_count > 0;
}

static const char *main_kernel_name(const clmg_matrix *m) {
  clmg_matrix_format layout = layout_of(m);
  return layout == CLMG_FORMAT_CSR            ? "csr_spmv"
         : layout == CLMG_FORMAT_CSR_ADAPTIVE ? "csr_adaptive_spmv"
         : layout == CLMG_FORMAT_ELLR         ? "ellr_spmv"
                                              : "sell_spmv";
}

/* What a kernel does with a row's product ax (cl/spmv.cl's STORE_ROW). */
typedef enum fused_op {
  OP_AXPBY = 0,        /* out = alpha ax + beta in */
  OP_JACOBI,           /* out = x + alpha dinv (in - ax) */
  OP_SCALED_DEFECT,    /* out = beta out + alpha dinv (in - ax) */
  OP_JACOBI_FROM_ZERO, /* OP_JACOBI with x = alpha dinv in */
  FUSED_OP_COUNT
} fused_op;

static const char *const fused_op_options[] = {"", " -DOP_JACOBI=1", " -DOP_SCALED_DEFECT=1",
                                               " -DOP_JACOBI_FROM_ZERO=1"};
_Static_assert(sizeof fused_op_options / sizeof fused_op_options[0] == FUSED_OP_COUNT,
               "one build option per fused operation");
_Static_assert((int)FUSED_OP_COUNT <= (int)FUSED_OP_SLOTS, "a kernel slot per fused operation");

/* Looks up the kernels of one operation for this matrix. */
static clmg_status matrix_kernels(const clmg_matrix *m, fused_op op, cl_kernel kernels[3]) {
  char options[256];
  snprintf(options, sizeof options, "%s -DROW_LANES=%u%s%s",
           clmg_real_options(m->context, m->precision), m->lanes, fused_op_options[op],
           layout_of(m) == CLMG_FORMAT_SELL && m->sigma > 1 ? " -DSELL_PERMUTED=1" : "");
  const char *name = main_kernel_name(m);
  clmg_status status = clmg_get_kernel(m->context, "spmv", options, name, &kernels[0]);
  /* CSR-Adaptive's main kernel does the segments too */
  if (status == CLMG_SUCCESS && m->format != CLMG_FORMAT_CSR_ADAPTIVE && has_long_segments(m))
    status = clmg_get_kernel(m->context, "spmv", options, "csr_long_segments", &kernels[1]);
  if (status == CLMG_SUCCESS && has_long_segments(m))
    status = clmg_get_kernel(m->context, "spmv", options, "csr_long_finish", &kernels[2]);
  if (status != CLMG_SUCCESS)
    kernels[0] = kernels[1] = kernels[2] = NULL;
  return status;
}

/* One fused product (see fused_op). */
static clmg_status apply(const clmg_matrix *m, fused_op op, double alpha, const clmg_vector *x,
                         double beta, const clmg_vector *in, clmg_vector *out,
                         const clmg_vector *dinv) {
  clmg_context *context = m->context;
  if (m->rows == 0)
    return CLMG_SUCCESS;
  cl_kernel *kernels = ((clmg_matrix *)m)->kernels[op];
  if (!kernels[0]) {
    clmg_status status = matrix_kernels(m, op, kernels);
    if (status != CLMG_SUCCESS)
      return status;
  }
  const char *name = main_kernel_name(m);
  cl_kernel kernel = kernels[0];
  /* Unused inputs still need valid buffers: x stands in for them. */
  const clmg_vector *in_or_x = in ? in : x;
  const clmg_vector *dinv_or_x = dinv ? dinv : x;
  cl_uint rows = (cl_uint)m->rows;
  size_t local = context->params.work_group_size;
  size_t lanes = m->lanes;
  size_t items = m->rows * lanes;
  size_t global = (items + local - 1) / local * local;
  if (m->format == CLMG_FORMAT_CSR_ADAPTIVE) /* a group per segment and per block */
    global = (m->block_count + m->segment_count) * local;

  clmg_kernel_args args;
  clmg_args_begin(&args, context, kernel, name);
  if (m->format == CLMG_FORMAT_CSR_ADAPTIVE) {
    cl_uint segments = (cl_uint)m->segment_count;
    clmg_arg_raw(&args, sizeof segments, &segments);
    clmg_arg_buffer(&args, m->row_blocks);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_buffer(&args, m->columns);
    clmg_arg_buffer(&args, m->values);
    clmg_arg_ulong(&args, m->long_row_threshold);
    clmg_arg_buffer(&args, m->segment_bounds);
    clmg_arg_buffer(&args, m->segment_sums);
  } else {
    clmg_arg_raw(&args, sizeof rows, &rows);
  }
  if (m->format == CLMG_FORMAT_CSR) {
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_buffer(&args, m->columns);
    clmg_arg_buffer(&args, m->values);
    clmg_arg_ulong(&args, m->long_row_threshold);
  } else if (layout_of(m) == CLMG_FORMAT_ELLR) {
    clmg_arg_ulong(&args, m->ellr_stride);
    clmg_arg_buffer(&args, m->row_lengths);
    clmg_arg_buffer(&args, m->columns);
    clmg_arg_buffer(&args, m->values);
  } else if (layout_of(m) == CLMG_FORMAT_SELL) {
    cl_uint height = m->slice_height;
    clmg_arg_raw(&args, sizeof height, &height);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_buffer(&args, m->row_lengths);
    clmg_arg_buffer(&args, m->permutation);
    clmg_arg_buffer(&args, m->columns);
    clmg_arg_buffer(&args, m->values);
  }
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, in_or_x);
  clmg_arg_vector(&args, out);
  clmg_arg_vector(&args, dinv_or_x);
  clmg_arg_real(&args, m->precision, alpha);
  clmg_arg_real(&args, m->precision, in ? beta : 0.0);
  if (m->format == CLMG_FORMAT_CSR_ADAPTIVE)
    clmg_arg_local(&args, m->block_entries * clmg_dtype_size(m->precision));
  if (layout_of(m) != CLMG_FORMAT_SELL)
    clmg_arg_local(&args, local * clmg_dtype_size(m->precision));
  clmg_status status = clmg_args_end(&args);
  if (status == CLMG_SUCCESS)
    status = clmg_enqueue_1d(context, kernel, name, global, local, NULL);
  if (status != CLMG_SUCCESS || !has_long_segments(m))
    return status;

  /* long rows: segment sums (CSR-Adaptive's main kernel made them), then
   * one work-item per row adds them */
  if (m->format != CLMG_FORMAT_CSR_ADAPTIVE) {
    clmg_args_begin(&args, context, kernels[1], "csr_long_segments");
    clmg_arg_buffer(&args, m->segment_bounds);
    clmg_arg_buffer(&args, m->columns);
    clmg_arg_buffer(&args, m->values);
    clmg_arg_vector(&args, x);
    clmg_arg_vector(&args, in_or_x);
    clmg_arg_vector(&args, out);
    clmg_arg_vector(&args, dinv_or_x);
    clmg_arg_real(&args, m->precision, alpha);
    clmg_arg_real(&args, m->precision, in ? beta : 0.0);
    clmg_arg_buffer(&args, m->segment_sums);
    clmg_arg_local(&args, local * clmg_dtype_size(m->precision));
    status = clmg_args_end(&args);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(context, kernels[1], "csr_long_segments", m->segment_count * local,
                               local, NULL);
    if (status != CLMG_SUCCESS)
      return status;
  }
  cl_uint long_count = (cl_uint)m->long_row_count;
  clmg_args_begin(&args, context, kernels[2], "csr_long_finish");
  clmg_arg_raw(&args, sizeof long_count, &long_count);
  clmg_arg_buffer(&args, m->long_rows);
  clmg_arg_buffer(&args, m->long_first_segment);
  clmg_arg_buffer(&args, m->segment_sums);
  clmg_arg_vector(&args, x);
  clmg_arg_vector(&args, in_or_x);
  clmg_arg_vector(&args, out);
  clmg_arg_vector(&args, dinv_or_x);
  clmg_arg_real(&args, m->precision, alpha);
  clmg_arg_real(&args, m->precision, in ? beta : 0.0);
  status = clmg_args_end(&args);
  if (status == CLMG_SUCCESS)
    status = clmg_enqueue_1d(context, kernels[2], "csr_long_finish",
                             (m->long_row_count + local - 1) / local * local, local, NULL);
  return status;
}

clmg_status clmg_spmv(double alpha, const clmg_matrix *a, const clmg_vector *x, double beta,
                      clmg_vector *y) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  clmg_status status = check_vector(a, x, a->cols, "x", "spmv");
  if (status == CLMG_SUCCESS)
    status = check_vector(a, y, a->rows, "y", "spmv");
  if (status == CLMG_SUCCESS && vectors_overlap(x, y))
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT, "spmv: x and y overlap");
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_AXPBY, alpha, x, beta, beta == 0 ? NULL : y, y, NULL);
}

clmg_status clmg_spmv_into(double alpha, const clmg_matrix *a, const clmg_vector *x, double beta,
                           const clmg_vector *in, clmg_vector *out) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  clmg_status status = check_vector(a, x, a->cols, "x", "spmv");
  if (status == CLMG_SUCCESS && in)
    status = check_vector(a, in, a->rows, "in", "spmv");
  if (status == CLMG_SUCCESS)
    status = check_vector(a, out, a->rows, "out", "spmv");
  if (status == CLMG_SUCCESS && (vectors_overlap(x, out) || (in && vectors_overlap(x, in))))
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT, "spmv: x overlaps in or out");
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_AXPBY, alpha, x, beta, beta == 0 ? NULL : in, out, NULL);
}

clmg_status clmg_defect(const clmg_matrix *a, const clmg_vector *b, const clmg_vector *x,
                        clmg_vector *r) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  clmg_status status = check_vector(a, b, a->rows, "b", "defect");
  if (status == CLMG_SUCCESS)
    status = check_vector(a, x, a->cols, "x", "defect");
  if (status == CLMG_SUCCESS)
    status = check_vector(a, r, a->rows, "r", "defect");
  if (status == CLMG_SUCCESS && vectors_overlap(x, r))
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT, "defect: x and r overlap");
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_AXPBY, -1.0, x, 1.0, b, r, NULL);
}

/* The checks of the smoother steps (jacobi step, scaled defect): a square
 * matrix, four vectors of its size and precision, and an output that does
 * not overlap x (every row reads the old x). */
static clmg_status check_smoother_step(const clmg_matrix *a, const char *op,
                                       const char *weights_name, const clmg_vector *weights,
                                       const clmg_vector *b, const clmg_vector *x,
                                       const char *out_name, const clmg_vector *out) {
  clmg_clear_message(a->context);
  clmg_status status = CLMG_SUCCESS;
  if (a->rows != a->cols)
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: the matrix is %zu x %zu, not square", op, a->rows, a->cols);
  if (status == CLMG_SUCCESS)
    status = check_vector(a, weights, a->rows, weights_name, op);
  if (status == CLMG_SUCCESS)
    status = check_vector(a, b, a->rows, "b", op);
  if (status == CLMG_SUCCESS)
    status = check_vector(a, x, a->rows, "x", op);
  if (status == CLMG_SUCCESS)
    status = check_vector(a, out, a->rows, out_name, op);
  if (status == CLMG_SUCCESS && vectors_overlap(x, out))
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "%s: x and %s overlap (every row reads the old x)", op, out_name);
  return status;
}

clmg_status clmg_jacobi_step(const clmg_matrix *a, double omega, const clmg_vector *inv_diagonal,
                             const clmg_vector *b, const clmg_vector *x, clmg_vector *x_new) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_status status =
      check_smoother_step(a, "jacobi step", "inverse diagonal", inv_diagonal, b, x, "x_new", x_new);
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_JACOBI, omega, x, 0.0, b, x_new, inv_diagonal);
}

clmg_status clmg_jacobi_step_from_zero(const clmg_matrix *a, double omega,
                                       const clmg_vector *inv_diagonal, const clmg_vector *b,
                                       clmg_vector *x_new) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_status status = check_smoother_step(a, "jacobi step from zero", "inverse diagonal",
                                           inv_diagonal, b, b, "x_new", x_new);
  if (status == CLMG_SUCCESS && (vectors_overlap(b, x_new) || vectors_overlap(inv_diagonal, x_new)))
    status = clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                       "jacobi step from zero: x_new overlaps b or the inverse diagonal (every "
                       "row reads them at its neighbours)");
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_JACOBI_FROM_ZERO, omega, b, 0.0, b, x_new, inv_diagonal);
}

clmg_status clmg_scaled_defect(const clmg_matrix *a, double alpha, const clmg_vector *weights,
                               const clmg_vector *b, const clmg_vector *x, double beta,
                               clmg_vector *d) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_status status = check_smoother_step(a, "scaled defect", "weights", weights, b, x, "d", d);
  if (status != CLMG_SUCCESS)
    return status;
  return apply(a, OP_SCALED_DEFECT, alpha, x, beta, b, d, weights);
}

clmg_status clmg_matrix_inverse_diagonal(const clmg_matrix *a, clmg_vector *inv_diagonal) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  if (a->rows != a->cols)
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "inverse diagonal: the matrix is %zu x %zu, not square", a->rows, a->cols);
  clmg_status status =
      check_vector(a, inv_diagonal, a->rows, "inverse diagonal", "inverse diagonal");
  if (status != CLMG_SUCCESS || a->rows == 0)
    return status;
  size_t zero_row = SIZE_MAX;
  status = clmg_quotient(1.0, NULL, a->diagonal, inv_diagonal, &zero_row);
  if (status == CLMG_SUCCESS && zero_row != SIZE_MAX)
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "inverse diagonal: row %zu has a zero diagonal entry", zero_row + 1);
  return status;
}

/* A copy of one of the matrix's per-row device vectors. */
static clmg_status copy_row_statistic(const clmg_matrix *a, const clmg_vector *statistic,
                                      clmg_vector *out, const char *what) {
  if (!a)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(a->context);
  if (a->rows != a->cols)
    return clmg_fail(a->context, CLMG_ERROR_INVALID_ARGUMENT, "%s: the matrix is not square", what);
  clmg_status status = check_vector(a, out, a->rows, what, what);
  return status == CLMG_SUCCESS && a->rows > 0 ? clmg_copy(statistic, out) : status;
}

clmg_status clmg_matrix_diagonal(const clmg_matrix *a, clmg_vector *diagonal) {
  return copy_row_statistic(a, a ? a->diagonal : NULL, diagonal, "diagonal");
}

clmg_status clmg_matrix_row_sum_squares(const clmg_matrix *a, clmg_vector *out) {
  return copy_row_statistic(a, a ? a->row_squares : NULL, out, "row sum of squares");
}

/* ---- matrices from device arrays ---- */

static clmg_status device_kernel(clmg_context *context, clmg_dtype precision, const char *name,
                                 clmg_kernel_args *args) {
  return clmg_args_for_kernel(context, "matrix_device", clmg_real_options(context, precision), name,
                              args);
}

/* values in the matrix's precision: the given vector, or a converted copy in
 * *converted (to be destroyed by the caller). */
static clmg_status values_in_precision(const clmg_matrix *m, const clmg_vector *values,
                                       clmg_vector **converted, const clmg_vector **use) {
  *converted = NULL;
  *use = values;
  if (values->type == m->precision)
    return CLMG_SUCCESS;
  clmg_status status =
      clmg_vector_create_unset(m->context, m->precision, values->length, converted);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_convert(values, *converted);
  *use = *converted;
  return status;
}

/* Stored columns (when write_columns) and values from CSR arrays, then the
 * host copies of the diagonal and the row norms from the same arrays. */
static clmg_status gather_from_csr(clmg_matrix *m, cl_mem row_ptr, size_t row_ptr_offset,
                                   cl_mem col, size_t col_offset, const clmg_vector *values,
                                   int write_columns) {
  clmg_vector *converted = NULL;
  const clmg_vector *use = NULL;
  clmg_status status = values_in_precision(m, values, &converted, &use);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS && m->stored > 0) {
    status = device_kernel(m->context, m->precision,
                           m->map ? "csr_gather_stored" : "csr_copy_stored", &args);
    if (status == CLMG_SUCCESS) {
      cl_uint write = (cl_uint)write_columns;
      clmg_arg_ulong(&args, m->stored);
      if (m->map)
        clmg_arg_buffer(&args, m->map);
      clmg_arg_buffer(&args, col);
      clmg_arg_ulong(&args, col_offset);
      clmg_arg_vector(&args, use);
      clmg_arg_buffer(&args, m->columns);
      clmg_arg_buffer(&args, m->values);
      clmg_arg_raw(&args, sizeof write, &write);
      status = clmg_launch_args(&args, m->stored);
    }
  }
  /* the next kernel writes every row of both */
  if (status == CLMG_SUCCESS && !m->diagonal)
    status = clmg_vector_create_unset(m->context, m->precision, m->rows, &m->diagonal);
  if (status == CLMG_SUCCESS && !m->row_squares)
    status = clmg_vector_create_unset(m->context, m->precision, m->rows, &m->row_squares);
  if (status == CLMG_SUCCESS && m->rows > 0) {
    status = device_kernel(m->context, m->precision, "csr_diagonal_and_row_squares", &args);
    if (status == CLMG_SUCCESS) {
      clmg_arg_ulong(&args, m->rows);
      clmg_arg_buffer(&args, row_ptr);
      clmg_arg_ulong(&args, row_ptr_offset);
      clmg_arg_buffer(&args, col);
      clmg_arg_ulong(&args, col_offset);
      clmg_arg_vector(&args, use);
      clmg_arg_vector(&args, m->diagonal);
      clmg_arg_vector(&args, m->row_squares);
      status = clmg_launch_args(&args, m->rows);
    }
  }
  clmg_vector_destroy(converted);
  return status;
}

static clmg_status check_device_arrays(clmg_context *context, size_t rows, size_t cols,
                                       const clmg_vector *row_ptr, const clmg_vector *col,
                                       const clmg_vector *values) {
  if (!row_ptr || !col || !values)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT, "matrix from device arrays: NULL %s",
                     !row_ptr ? "row offsets"
                     : !col   ? "columns"
                              : "values");
  if (clmg_vector_context(row_ptr) != context || clmg_vector_context(col) != context ||
      clmg_vector_context(values) != context)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: the arrays belong to another context");
  if (clmg_vector_type(row_ptr) != CLMG_INT64 || clmg_vector_type(col) != CLMG_INT32 ||
      (clmg_vector_type(values) != CLMG_DOUBLE && clmg_vector_type(values) != CLMG_FLOAT))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: row offsets must be int64 (are %s), columns "
                     "int32 (are %s), values double or float (are %s)",
                     clmg_dtype_name(clmg_vector_type(row_ptr)),
                     clmg_dtype_name(clmg_vector_type(col)),
                     clmg_dtype_name(clmg_vector_type(values)));
  if (clmg_vector_length(row_ptr) != rows + 1 || rows > INT32_MAX || cols > INT32_MAX)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: %zu row offsets for %zu rows (need rows + 1; "
                     "rows and columns at most 2^31 - 1)",
                     clmg_vector_length(row_ptr), rows);
  if (clmg_vector_length(col) != clmg_vector_length(values))
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: %zu columns but %zu values",
                     clmg_vector_length(col), clmg_vector_length(values));
  return CLMG_SUCCESS;
}

/* What csr_offsets_summary and csr_check_columns find out about the arrays
 * (cl/matrix_device.cl's SUMMARY_*), read back in one piece: the checks,
 * and the row statistics the format choice and the layouts need. */
typedef struct offsets_summary {
  cl_uint first_bad_row; /* UINT32_MAX: none */
  cl_uint longest_row;
  cl_uint long_rows; /* longer than CSR's long-row threshold */
  cl_uint long_segments;
  cl_uint bad_column;
  cl_uint unused[3];
  cl_long first_offset, last_offset;
} offsets_summary;

_Static_assert(offsetof(offsets_summary, first_offset) == 8 * sizeof(cl_uint),
               "cl/matrix_device.cl's SUMMARY_ENDS");

/* The summary of the arrays: two kernels and a read of 48 bytes. */
static clmg_status summarize_arrays(clmg_context *context, size_t rows, size_t cols,
                                    const clmg_vector *row_ptr, const clmg_vector *col,
                                    uint64_t long_row_threshold, offsets_summary *summary) {
  memset(summary, 0, sizeof *summary);
  summary->first_bad_row = UINT32_MAX;
  cl_mem buffer = NULL;
  clmg_status status =
      clmg_device_alloc(context, sizeof *summary, summary, "matrix offsets summary", &buffer);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = device_kernel(context, CLMG_FLOAT, "csr_offsets_summary", &args);
  if (status == CLMG_SUCCESS) {
    size_t offset, global, local;
    clmg_arg_ulong(&args, rows);
    clmg_arg_buffer(&args, clmg_vector_cl_buffer(row_ptr, &offset));
    clmg_arg_ulong(&args, offset);
    clmg_arg_ulong(&args, cols);
    clmg_arg_ulong(&args, long_row_threshold);
    clmg_arg_ulong(&args, segment_length_of(context));
    clmg_arg_buffer(&args, buffer);
    status = clmg_args_end(&args);
    /* at least one work-group, without rows too: it reads the end offsets */
    clmg_launch_1d(context, rows, 1, &global, &local);
    if (status == CLMG_SUCCESS)
      status = clmg_enqueue_1d(context, args.kernel, args.name, global, local, NULL);
  }
  size_t nnz = clmg_vector_length(col);
  if (status == CLMG_SUCCESS && nnz > 0)
    status = device_kernel(context, CLMG_FLOAT, "csr_check_columns", &args);
  if (status == CLMG_SUCCESS && nnz > 0) {
    cl_int limit = (cl_int)cols;
    size_t offset;
    clmg_arg_ulong(&args, nnz);
    clmg_arg_buffer(&args, clmg_vector_cl_buffer(col, &offset));
    clmg_arg_ulong(&args, offset);
    clmg_arg_raw(&args, sizeof limit, &limit);
    clmg_arg_buffer(&args, buffer);
    status = clmg_launch_args(&args, nnz);
  }
  if (status == CLMG_SUCCESS) {
    clmg_count_command(context, 1);
    cl_int error = clEnqueueReadBuffer(context->queue, buffer, CL_TRUE, 0, sizeof *summary, summary,
                                       0, NULL, NULL);
    if (error != CL_SUCCESS)
      status = clmg_fail_cl(context, error, "reading the matrix offsets summary");
  }
  clmg_device_free(context, buffer, sizeof *summary);
  return status;
}

/* The checks of the summary: offsets from 0 to nnz, no row longer than the
 * columns (the first bad row's offsets are read back for the message),
 * columns in range. */
static clmg_status check_summary(clmg_context *context, size_t cols, size_t nnz,
                                 const clmg_vector *row_ptr, const offsets_summary *summary) {
  if (summary->first_offset != 0 || (size_t)summary->last_offset != nnz)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: row offsets run from %lld to %lld; they must run "
                     "from 0 to the %zu entries",
                     (long long)summary->first_offset, (long long)summary->last_offset, nnz);
  if (summary->first_bad_row != UINT32_MAX) {
    size_t row = summary->first_bad_row, offset;
    cl_long ends[2] = {0, 0};
    cl_mem buffer = clmg_vector_cl_buffer(row_ptr, &offset);
    cl_int error =
        clEnqueueReadBuffer(context->queue, buffer, CL_TRUE, (offset + row) * sizeof(cl_long),
                            sizeof ends, ends, 0, NULL, NULL);
    if (error != CL_SUCCESS)
      return clmg_fail_cl(context, error, "reading the offsets of a bad row");
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: row %zu has %lld entries; a row holds 0 to "
                     "%zu (one per column)",
                     row + 1, (long long)(ends[1] - ends[0]), cols);
  }
  if (summary->bad_column)
    return clmg_fail(context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix from device arrays: a column index lies outside [0, %zu)", cols);
  return CLMG_SUCCESS;
}

/* The map of a padded layout (ELLPACK-R, SELL), written by the format's
 * kernel from the row offsets: map[stored entry] = CSR entry + 1, 0 on
 * padding. */
static clmg_status build_map(clmg_matrix *m) {
  clmg_status status =
      clmg_device_alloc(m->context, m->stored * sizeof(cl_long), NULL, "matrix map", &m->map);
  if (status != CLMG_SUCCESS)
    return status;
  m->map_bytes = m->stored * sizeof(cl_long);
  status = zero_array(m, m->map, m->map_bytes, "zeroing the matrix map");
  const char *name = m->format == CLMG_FORMAT_ELLR ? "ellr_map" : "sell_map";
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = device_kernel(m->context, CLMG_FLOAT, name, &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint rows = (cl_uint)m->rows, lanes = m->lanes, height = m->slice_height;
  clmg_arg_raw(&args, sizeof rows, &rows);
  clmg_arg_buffer(&args, m->pattern_row_ptr);
  if (m->format == CLMG_FORMAT_ELLR) {
    clmg_arg_ulong(&args, m->ellr_stride);
    clmg_arg_raw(&args, sizeof lanes, &lanes);
  } else if (m->format == CLMG_FORMAT_SELL) {
    clmg_arg_raw(&args, sizeof height, &height);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_buffer(&args, m->permutation);
  }
  clmg_arg_buffer(&args, m->map);
  return clmg_launch_args(&args, m->rows);
}

/* A device copy of part of a vector's buffer, kept by the matrix. */
static clmg_status keep_copy(clmg_context *context, const clmg_vector *v, const char *what,
                             cl_mem *copy, size_t *bytes) {
  size_t offset, size = clmg_dtype_size(clmg_vector_type(v));
  cl_mem source = clmg_vector_cl_buffer(v, &offset);
  *bytes = clmg_vector_length(v) * size;
  clmg_status status = clmg_device_alloc(context, *bytes, NULL, what, copy);
  if (status != CLMG_SUCCESS || *bytes == 0) {
    if (status != CLMG_SUCCESS)
      *bytes = 0;
    return status;
  }
  return clmg_copy_buffer(context, source, offset * size, *copy, 0, *bytes, what);
}

/* ---- layouts made on the device, from the pattern's row offsets ----
 * The arrays equal those the host builders above make from the same
 * offsets, so that results do not depend on where a matrix was made: the
 * shapes come from the same functions, and the kernels place every row as
 * the host loops do (tests/test_matrix_device.c compares the two matrices
 * through all that the API shows of them). */

/* The pattern's row offsets: CSR's own once it has taken them over. */
static cl_mem pattern_offsets(const clmg_matrix *m) {
  return m->pattern_row_ptr ? m->pattern_row_ptr : m->offsets;
}

/* length[i] = the length of row i of the pattern (uint32). */
static clmg_status pattern_row_lengths(clmg_matrix *m, cl_mem length) {
  clmg_kernel_args args;
  clmg_status status = device_kernel(m->context, CLMG_FLOAT, "csr_row_lengths", &args);
  if (status != CLMG_SUCCESS)
    return status;
  cl_uint rows = (cl_uint)m->rows;
  clmg_arg_raw(&args, sizeof rows, &rows);
  clmg_arg_buffer(&args, pattern_offsets(m));
  clmg_arg_buffer(&args, length);
  return clmg_launch_args(&args, m->rows);
}

/* The columns and values of a padded layout, zero where the map leaves
 * padding. */
static clmg_status zeroed_entries(clmg_matrix *m, const char *format) {
  size_t column_bytes = m->stored * sizeof(int32_t);
  size_t value_bytes = m->stored * clmg_dtype_size(m->precision);
  char what[64];
  snprintf(what, sizeof what, "%s column indices", format);
  clmg_status status = upload_array(m, NULL, column_bytes, what, &m->columns, &m->columns_bytes);
  if (status == CLMG_SUCCESS) {
    snprintf(what, sizeof what, "%s values", format);
    status = upload_array(m, NULL, value_bytes, what, &m->values, &m->values_bytes);
  }
  if (status == CLMG_SUCCESS) {
    snprintf(what, sizeof what, "zeroing %s columns", format);
    status = zero_array(m, m->columns, column_bytes, what);
  }
  if (status == CLMG_SUCCESS) {
    snprintf(what, sizeof what, "zeroing %s values", format);
    status = zero_array(m, m->values, value_bytes, what);
  }
  return status;
}

static clmg_status device_ellr(clmg_matrix *m, const row_stats *stats,
                               const clmg_matrix_options *options) {
  size_t width = 0;
  clmg_status status = ellr_shape(m, stats, options, &width);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, m->rows * sizeof(int32_t), "ELLPACK-R row lengths",
                          &m->row_lengths, &m->row_lengths_bytes);
  if (status == CLMG_SUCCESS)
    status = pattern_row_lengths(m, m->row_lengths);
  if (status == CLMG_SUCCESS)
    status = zeroed_entries(m, "ELLPACK-R");
  return status;
}

/* SELL-C-sigma's arrays as the device sorts them (sell_layout's order):
 * the sorted row lengths, the order (sorted row -> row), the slice offsets,
 * and the entries they store. */
typedef struct sell_arrays {
  cl_mem lengths, order, slice_ptr;
  size_t lengths_bytes, order_bytes, slice_ptr_bytes, stored;
} sell_arrays;

static void sell_arrays_free(clmg_context *context, sell_arrays *s) {
  clmg_device_free(context, s->lengths, s->lengths_bytes);
  clmg_device_free(context, s->order, s->order_bytes);
  clmg_device_free(context, s->slice_ptr, s->slice_ptr_bytes);
  memset(s, 0, sizeof *s);
}

/* cl/matrix_device.cl's rows per run that one work-item sorts. */
enum { SELL_RUN = 16 };

/* Runs of SELL_RUN rows sorted, pairs of runs merged until a run is a
 * window (ping-pong between two pairs of buffers), the slice widths, and
 * their scan times the slice height: the slice offsets and, read back, the
 * stored entries. */
static clmg_status sell_arrays_make(clmg_matrix *m, unsigned height, unsigned sigma,
                                    sell_arrays *out) {
  clmg_context *context = m->context;
  memset(out, 0, sizeof *out);
  size_t rows = m->rows, row_bytes = rows * sizeof(cl_uint);
  /* a window of all the rows sorts as a longer one does */
  cl_uint rows_arg = (cl_uint)rows, height_arg = height;
  cl_uint window = sigma < rows ? sigma : (cl_uint)(rows > 0 ? rows : 1);
  cl_mem lengths[2] = {NULL, NULL}, order[2] = {NULL, NULL};
  clmg_status status = CLMG_SUCCESS;
  for (int k = 0; k < 2 && status == CLMG_SUCCESS; ++k) {
    status = clmg_device_alloc(context, row_bytes, NULL, "SELL row lengths", &lengths[k]);
    if (status == CLMG_SUCCESS)
      status = clmg_device_alloc(context, row_bytes, NULL, "SELL row permutation", &order[k]);
  }
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS)
    status = device_kernel(context, CLMG_FLOAT, "sell_sort_runs", &args);
  if (status == CLMG_SUCCESS) {
    size_t runs = (rows + window - 1) / window * ((window + SELL_RUN - 1) / SELL_RUN);
    clmg_arg_raw(&args, sizeof rows_arg, &rows_arg);
    clmg_arg_raw(&args, sizeof window, &window);
    clmg_arg_buffer(&args, m->pattern_row_ptr);
    clmg_arg_buffer(&args, lengths[0]);
    clmg_arg_buffer(&args, order[0]);
    status = clmg_launch_args(&args, runs);
  }
  int current = 0;
  for (cl_uint run = SELL_RUN; status == CLMG_SUCCESS && run < window; run *= 2) {
    status = device_kernel(context, CLMG_FLOAT, "sell_merge_runs", &args);
    if (status != CLMG_SUCCESS)
      break;
    clmg_arg_raw(&args, sizeof rows_arg, &rows_arg);
    clmg_arg_raw(&args, sizeof window, &window);
    clmg_arg_raw(&args, sizeof run, &run);
    clmg_arg_buffer(&args, lengths[current]);
    clmg_arg_buffer(&args, order[current]);
    clmg_arg_buffer(&args, lengths[1 - current]);
    clmg_arg_buffer(&args, order[1 - current]);
    status = clmg_launch_args(&args, rows);
    current = 1 - current;
  }
  /* the widths in a plain buffer: a vector's zeroing would wait for the
   * queue, and the kernel writes every width */
  size_t slices = (rows + height - 1) / height;
  cl_mem widths = NULL;
  if (status == CLMG_SUCCESS)
    status =
        clmg_device_alloc(context, slices * sizeof(cl_uint), NULL, "SELL slice widths", &widths);
  if (status == CLMG_SUCCESS)
    status = device_kernel(context, CLMG_FLOAT, "sell_slice_widths", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_raw(&args, sizeof rows_arg, &rows_arg);
    clmg_arg_raw(&args, sizeof height_arg, &height_arg);
    clmg_arg_buffer(&args, lengths[current]);
    clmg_arg_buffer(&args, widths);
    status = clmg_launch_args(&args, slices);
  }
  if (status == CLMG_SUCCESS) {
    out->slice_ptr_bytes = (slices + 1) * sizeof(cl_long);
    status = clmg_device_alloc(context, out->slice_ptr_bytes, NULL, "SELL slice offsets",
                               &out->slice_ptr);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_scan_counts(context, widths, 0, slices, height, out->slice_ptr, &out->stored);
  clmg_device_free(context, widths, slices * sizeof(cl_uint));
  out->lengths = lengths[current];
  out->order = order[current];
  out->lengths_bytes = out->order_bytes = row_bytes ? row_bytes : 1;
  clmg_device_free(context, lengths[1 - current], row_bytes);
  clmg_device_free(context, order[1 - current], row_bytes);
  if (status != CLMG_SUCCESS)
    sell_arrays_free(context, out);
  return status;
}

/* made: the arrays the automatic choice sorted for these options, taken
 * over; NULL: made here. */
static clmg_status device_sell(clmg_matrix *m, const row_stats *stats,
                               const clmg_matrix_options *options, sell_arrays *made) {
  sell_set_shape(m, stats, options);
  sell_arrays arrays;
  clmg_status status = CLMG_SUCCESS;
  if (made) {
    arrays = *made;
    memset(made, 0, sizeof *made);
  } else {
    status = sell_arrays_make(m, m->slice_height, m->sigma, &arrays);
  }
  if (status != CLMG_SUCCESS)
    return status;
  m->offsets = arrays.slice_ptr;
  m->offsets_bytes = arrays.slice_ptr_bytes;
  m->row_lengths = arrays.lengths;
  m->row_lengths_bytes = arrays.lengths_bytes;
  m->permutation = arrays.order;
  m->permutation_bytes = arrays.order_bytes;
  status = check_padded_size(m, arrays.stored, "SELL-C-sigma");
  if (status != CLMG_SUCCESS)
    return status;
  m->stored = arrays.stored;
  return zeroed_entries(m, "SELL");
}

/* CSR's long-row list, first segments and segment bounds (build_csr's),
 * on the device: the list from the row lengths, the segments' offsets from
 * their counts. */
static clmg_status device_long_rows(clmg_matrix *m) {
  clmg_context *context = m->context;
  clmg_vector *lengths = NULL, *list = NULL, *segments = NULL, *segment_offsets = NULL;
  size_t listed = 0, segment_total = 0;
  uint32_t threshold =
      m->long_row_threshold < UINT32_MAX ? (uint32_t)m->long_row_threshold : UINT32_MAX;
  cl_uint count = (cl_uint)m->long_row_count;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, m->rows, &lengths);
  if (status == CLMG_SUCCESS)
    status = pattern_row_lengths(m, lengths->buffer);
  if (status == CLMG_SUCCESS)
    status = clmg_row_list(context, lengths, threshold, UINT32_MAX, NULL, 0, &list, &listed);
  if (status == CLMG_SUCCESS && listed != m->long_row_count)
    status = clmg_fail(context, CLMG_ERROR_OPENCL,
                       "CSR long rows: the device listed %zu but counted %zu", listed,
                       m->long_row_count);
  if (status == CLMG_SUCCESS)
    status = keep_copy(context, list, "CSR long-row list", &m->long_rows, &m->long_rows_bytes);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(context, CLMG_UINT32, count, &segments);
  if (status == CLMG_SUCCESS)
    status = device_kernel(context, CLMG_FLOAT, "csr_long_row_segment_counts", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_raw(&args, sizeof count, &count);
    clmg_arg_buffer(&args, list->buffer);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_ulong(&args, segment_length_of(context));
    clmg_arg_buffer(&args, segments->buffer);
    status = clmg_launch_args(&args, count);
  }
  if (status == CLMG_SUCCESS)
    status = clmg_offsets_from_counts(context, segments, &segment_offsets, &segment_total);
  if (status == CLMG_SUCCESS && segment_total != m->segment_count)
    status = clmg_fail(context, CLMG_ERROR_OPENCL,
                       "CSR long rows: the device made %zu segments but counted %zu", segment_total,
                       m->segment_count);
  if (status == CLMG_SUCCESS)
    status = device_kernel(context, CLMG_FLOAT, "csr_long_row_segments", &args);
  if (status == CLMG_SUCCESS) {
    clmg_arg_raw(&args, sizeof count, &count);
    clmg_arg_buffer(&args, list->buffer);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_buffer(&args, segment_offsets->buffer);
    clmg_arg_ulong(&args, segment_length_of(context));
    clmg_arg_buffer(&args, m->long_first_segment);
    clmg_arg_buffer(&args, m->segment_bounds);
    status = clmg_launch_args(&args, (size_t)count + 1);
  }
  clmg_vector_destroy(lengths);
  clmg_vector_destroy(list);
  clmg_vector_destroy(segments);
  clmg_vector_destroy(segment_offsets);
  return status;
}

/* CSR-Adaptive's row blocks (upload_row_blocks's) on the device: each
 * row's test, the list of the rows that start a block, and the rows after
 * it. */
static clmg_status device_row_blocks(clmg_matrix *m) {
  clmg_context *context = m->context;
  block_rule rule = adaptive_block_rule(m);
  clmg_vector *starts = NULL, *list = NULL;
  size_t count = 0;
  cl_uint rows = (cl_uint)m->rows;
  clmg_kernel_args args;
  clmg_status status = clmg_vector_create_unset(context, CLMG_UINT32, m->rows, &starts);
  if (status == CLMG_SUCCESS && m->rows > 0)
    status = device_kernel(context, CLMG_FLOAT, "csr_adaptive_block_starts", &args);
  if (status == CLMG_SUCCESS && m->rows > 0) {
    clmg_arg_raw(&args, sizeof rows, &rows);
    clmg_arg_buffer(&args, m->offsets);
    clmg_arg_ulong(&args, rule.short_max);
    clmg_arg_ulong(&args, rule.bin);
    clmg_arg_raw(&args, sizeof rule.rows, &rule.rows);
    clmg_arg_buffer(&args, starts->buffer);
    status = clmg_launch_args(&args, m->rows);
  }
  if (status == CLMG_SUCCESS && m->rows > 0)
    status = clmg_row_list(context, starts, 0, 1, NULL, 0, &list, &count);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, (count + 1) * sizeof(cl_uint), "CSR-Adaptive row blocks",
                          &m->row_blocks, &m->row_blocks_bytes);
  if (status == CLMG_SUCCESS && count > 0)
    status = clmg_copy_buffer(context, list->buffer, 0, m->row_blocks, 0, count * sizeof(cl_uint),
                              "CSR-Adaptive row blocks");
  if (status == CLMG_SUCCESS)
    status = clmg_fill_buffer(context, m->row_blocks, &rows, sizeof rows, count * sizeof(cl_uint),
                              sizeof rows, "CSR-Adaptive row blocks");
  if (status == CLMG_SUCCESS)
    m->block_count = count;
  clmg_vector_destroy(starts);
  clmg_vector_destroy(list);
  return status;
}

static clmg_status device_csr(clmg_matrix *m, const row_stats *stats,
                              const clmg_matrix_options *options, const offsets_summary *summary) {
  clmg_status status = csr_shape(m, stats, options);
  if (status != CLMG_SUCCESS)
    return status;
  /* the summary counted the rows longer than this threshold */
  m->long_row_count = summary->long_rows;
  m->segment_count = summary->long_segments;
  size_t long_count = m->long_row_count, segment_count = m->segment_count;
  size_t element = clmg_dtype_size(m->precision);
  const cl_uint no_segments = 0;
  /* the pattern's copy of the offsets becomes CSR's own */
  m->offsets = m->pattern_row_ptr;
  m->offsets_bytes = m->pattern_row_ptr_bytes;
  m->pattern_row_ptr = NULL;
  m->pattern_row_ptr_bytes = 0;
  status = upload_array(m, NULL, m->nnz * sizeof(int32_t), "CSR column indices", &m->columns,
                        &m->columns_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, m->nnz * element, "CSR values", &m->values, &m->values_bytes);
  if (status == CLMG_SUCCESS && long_count == 0)
    status = upload_array(m, NULL, 0, "CSR long-row list", &m->long_rows, &m->long_rows_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, long_count ? NULL : &no_segments, (long_count + 1) * sizeof(cl_uint),
                          "CSR long-row segment index", &m->long_first_segment,
                          &m->long_first_segment_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, 2 * segment_count * sizeof(int64_t), "CSR segment bounds",
                          &m->segment_bounds, &m->segment_bounds_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, segment_count * element, "CSR segment sums", &m->segment_sums,
                          &m->segment_sums_bytes);
  if (status == CLMG_SUCCESS && long_count > 0)
    status = device_long_rows(m);
  if (status == CLMG_SUCCESS && m->format == CLMG_FORMAT_CSR_ADAPTIVE)
    status = device_row_blocks(m);
  describe_csr(m);
  return status;
}

/* The plan from the pattern's offsets, read back from the device (8 bytes a
 * row; columns and values stay there). */
static clmg_status read_pattern_offsets(clmg_matrix *m, int64_t **row_ptr) {
  *row_ptr = malloc((m->rows + 1) * sizeof **row_ptr);
  if (!*row_ptr)
    return clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "hybrid matrix: row offsets");
  clmg_status status =
      clmg_read_buffer(m->context, m->pattern_row_ptr, 1, 0, (m->rows + 1) * sizeof **row_ptr,
                       *row_ptr, "reading the row offsets for the hybrid layout");
  if (status != CLMG_SUCCESS) {
    free(*row_ptr);
    *row_ptr = NULL;
  }
  return status;
}

static clmg_status hybrid_plan_from_device(clmg_matrix *m, const clmg_matrix_options *options,
                                           hybrid_plan *plan) {
  memset(plan, 0, sizeof *plan);
  int64_t *row_ptr = NULL;
  clmg_status status = read_pattern_offsets(m, &row_ptr);
  return status == CLMG_SUCCESS ? hybrid_plan_make(m->context, m->rows, row_ptr, 1, options, plan)
                                : status;
}

/* The hybrid's arrays from its plan (which it frees): the inner layout's
 * row lengths (-1 for long rows), SELL's slice offsets and order, the map of
 * every stored entry (the inner layout's, then the long rows' entries in
 * CSR order) to its CSR entry, and the long rows' segments; columns and
 * values are zero until gather_from_csr fills them through the map. */
static clmg_status device_hybrid(clmg_matrix *m, const clmg_matrix_options *options,
                                 hybrid_plan *plan) {
  const int64_t *row_ptr = plan->row_ptr;
  const size_t rows = m->rows;
  m->inner = plan->inner;
  m->long_row_threshold = plan->threshold;
  m->long_row_count = plan->long_count;
  m->segment_count = plan->segment_count;
  clmg_status status = CLMG_SUCCESS;
  size_t width = 0, inner_stored = plan->inner_stored;
  if (plan->inner == CLMG_FORMAT_ELLR) {
    status = ellr_shape(m, &plan->stats, options, &width);
    inner_stored = m->stored;
  } else
    sell_set_shape(m, &plan->stats, options);
  size_t stored = inner_stored + plan->long_nnz;
  if (status == CLMG_SUCCESS)
    status = check_padded_size(m, stored < inner_stored ? SIZE_MAX : stored, "hybrid");
  if (status != CLMG_SUCCESS) {
    hybrid_plan_free(plan);
    return status;
  }
  m->stored = stored;
  char inner[48]; /* "ellr T=.. width=.." or "sell C=.. sigma=.." */
  memcpy(inner, m->description, sizeof inner - 1);
  inner[sizeof inner - 1] = '\0';
  snprintf(m->description, sizeof m->description, "hybrid %s long_rows=%zu segments=%zu", inner,
           m->long_row_count, m->segment_count);
  size_t height = m->slice_height, slices = height ? (rows + height - 1) / height : 0;
  int32_t *lengths = malloc((rows ? rows : 1) * sizeof *lengths);
  int64_t *map = calloc(stored ? stored : 1, sizeof *map);
  int64_t *slice_ptr = plan->order ? malloc((slices + 1) * sizeof *slice_ptr) : NULL;
  uint32_t *long_rows = malloc((plan->long_count ? plan->long_count : 1) * sizeof *long_rows);
  uint32_t *first_segment = malloc((plan->long_count + 1) * sizeof *first_segment);
  int64_t *bounds = malloc((plan->segment_count ? 2 * plan->segment_count : 1) * sizeof *bounds);
  if (!lengths || !map || (plan->order && !slice_ptr) || !long_rows || !first_segment || !bounds)
    status = clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                       "hybrid matrix: staging arrays for %zu entries", stored);
#define HYBRID_IS_LONG(r) ((uint64_t)(row_ptr[(r) + 1] - row_ptr[(r)]) > plan->threshold)
  if (status == CLMG_SUCCESS && plan->inner == CLMG_FORMAT_ELLR) {
    size_t lanes = m->lanes;
    for (size_t r = 0; r < rows; ++r) {
      size_t length = (size_t)(plan->short_ptr[r + 1] - plan->short_ptr[r]);
      lengths[r] = HYBRID_IS_LONG(r) ? -1 : (int32_t)length;
      for (size_t k = 0; k < length; ++k)
        map[((k / lanes) * m->ellr_stride + r) * lanes + k % lanes] = row_ptr[r] + (int64_t)k + 1;
    }
  } else if (status == CLMG_SUCCESS) { /* SELL, as build_sell places the rows */
    slice_ptr[0] = 0;
    for (size_t sl = 0; sl < slices; ++sl) {
      size_t slice_width = 0;
      for (size_t i = sl * height; i < (sl + 1) * height && i < rows; ++i) {
        size_t row = plan->order[i];
        size_t length = (size_t)(plan->short_ptr[row + 1] - plan->short_ptr[row]);
        lengths[i] = HYBRID_IS_LONG(row) ? -1 : (int32_t)length;
        slice_width = length > slice_width ? length : slice_width;
        for (size_t k = 0; k < length; ++k)
          map[(size_t)slice_ptr[sl] + k * height + (i - sl * height)] =
              row_ptr[row] + (int64_t)k + 1;
      }
      slice_ptr[sl + 1] = slice_ptr[sl] + (int64_t)(slice_width * height);
    }
  }
  if (status == CLMG_SUCCESS) { /* the long rows after the inner layout */
    size_t place = inner_stored, count = 0, segments = 0;
    const size_t segment_length = segment_length_of(m->context);
    for (size_t r = 0; r < rows; ++r) {
      if (!HYBRID_IS_LONG(r))
        continue;
      size_t length = (size_t)(row_ptr[r + 1] - row_ptr[r]);
      first_segment[count] = (uint32_t)segments;
      long_rows[count++] = (uint32_t)r;
      for (size_t k = 0; k < length; k += segment_length) {
        bounds[2 * segments] = (int64_t)(place + k);
        bounds[2 * segments + 1] =
            (int64_t)(place + (length - k < segment_length ? length : k + segment_length));
        ++segments;
      }
      for (size_t k = 0; k < length; ++k)
        map[place + k] = row_ptr[r] + (int64_t)k + 1;
      place += length;
    }
    first_segment[count] = (uint32_t)segments;
  }
#undef HYBRID_IS_LONG
  const size_t element = clmg_dtype_size(m->precision);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, lengths, rows * sizeof *lengths, "hybrid row lengths", &m->row_lengths,
                          &m->row_lengths_bytes);
  if (status == CLMG_SUCCESS && plan->order)
    status = upload_array(m, slice_ptr, (slices + 1) * sizeof *slice_ptr,
                          "hybrid SELL slice offsets", &m->offsets, &m->offsets_bytes);
  if (status == CLMG_SUCCESS && plan->order)
    status = upload_array(m, plan->order, rows * sizeof *plan->order, "hybrid SELL row permutation",
                          &m->permutation, &m->permutation_bytes);
  if (status == CLMG_SUCCESS)
    status =
        upload_array(m, map, stored * sizeof *map, "hybrid matrix map", &m->map, &m->map_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, long_rows, m->long_row_count * sizeof *long_rows,
                          "hybrid long-row list", &m->long_rows, &m->long_rows_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, first_segment, (m->long_row_count + 1) * sizeof *first_segment,
                          "hybrid long-row segment index", &m->long_first_segment,
                          &m->long_first_segment_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, bounds, 2 * m->segment_count * sizeof *bounds, "hybrid segment bounds",
                          &m->segment_bounds, &m->segment_bounds_bytes);
  if (status == CLMG_SUCCESS)
    status = upload_array(m, NULL, m->segment_count * element, "hybrid segment sums",
                          &m->segment_sums, &m->segment_sums_bytes);
  if (status == CLMG_SUCCESS)
    status = zeroed_entries(m, "hybrid");
  free(lengths);
  free(map);
  free(slice_ptr);
  free(long_rows);
  free(first_segment);
  free(bounds);
  hybrid_plan_free(plan);
  return status;
}

/* The format (the automatic choice as create_matrix makes it, the SELL
 * candidate sorted on the device) and its arrays, from the summary and the
 * pattern's row offsets. */
static clmg_status lay_out_on_device(clmg_matrix *m, const offsets_summary *summary,
                                     const clmg_matrix_options *options) {
  row_stats stats = {summary->longest_row, m->rows ? (double)m->nnz / (double)m->rows : 0};
  sell_arrays sell;
  memset(&sell, 0, sizeof sell);
  int sorted = 0;
  hybrid_plan plan;
  clmg_status status;
  if (m->format == CLMG_FORMAT_AUTO) {
    m->format = automatic_format(m->context, m->rows, m->nnz, &stats);
    if (m->format == CLMG_FORMAT_SELL) {
      unsigned height, sigma;
      sell_shape(m->context, &stats, options, &height, &sigma);
      status = sell_arrays_make(m, height, sigma, &sell);
      if (status != CLMG_SUCCESS)
        return status;
      sorted = sell_padding_fits(sell.stored, m->nnz);
      if (!sorted) {
        sell_arrays_free(m->context, &sell);
        m->format = automatic_csr(m->context, &stats);
      }
      if (!sorted && hybrid_candidate(m->context, &stats, options)) {
        status = hybrid_plan_from_device(m, options, &plan);
        if (status != CLMG_SUCCESS)
          return status;
        if (plan.fits) {
          m->format = CLMG_FORMAT_HYBRID;
          return device_hybrid(m, options, &plan);
        }
        hybrid_plan_free(&plan);
      }
    }
  }
  switch (m->format) {
  case CLMG_FORMAT_ELLR:
    return device_ellr(m, &stats, options);
  case CLMG_FORMAT_SELL:
    return device_sell(m, &stats, options, sorted ? &sell : NULL);
  case CLMG_FORMAT_CSR:
  case CLMG_FORMAT_CSR_ADAPTIVE:
    return device_csr(m, &stats, options, summary);
  case CLMG_FORMAT_HYBRID:
    status = hybrid_plan_from_device(m, options, &plan);
    return status == CLMG_SUCCESS ? device_hybrid(m, options, &plan) : status;
  default:
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT, "unknown matrix format %d",
                     (int)options->format);
  }
}

clmg_status clmg_matrix_create_from_device(clmg_context *context, size_t rows, size_t cols,
                                           const clmg_vector *row_ptr, const clmg_vector *col,
                                           const clmg_vector *values,
                                           const clmg_matrix_options *options,
                                           clmg_matrix **matrix) {
  if (!context || !matrix)
    return CLMG_ERROR_INVALID_ARGUMENT;
  *matrix = NULL;
  clmg_clear_message(context);
  clmg_matrix_options defaults;
  clmg_matrix_options_defaults(&defaults);
  const clmg_matrix_options *o = options ? options : &defaults;
  clmg_status status = check_device_arrays(context, rows, cols, row_ptr, col, values);
  if (status != CLMG_SUCCESS)
    return status;
  /* a summary of a few numbers comes to the host: the checks and what the
   * format choice needs; the offsets, columns and values stay */
  size_t nnz = clmg_vector_length(col);
  double mean_length = rows ? (double)nnz / (double)rows : 0;
  offsets_summary summary;
  status = summarize_arrays(context, rows, cols, row_ptr, col,
                            csr_long_row_threshold(context, o, mean_length), &summary);
  if (status == CLMG_SUCCESS)
    status = check_summary(context, cols, nnz, row_ptr, &summary);
  if (status == CLMG_SUCCESS)
    status = check_precision_option(context, o);
  clmg_matrix *m = NULL;
  if (status == CLMG_SUCCESS)
    status = new_matrix(context, rows, cols, nnz, o, &m);
  if (status == CLMG_SUCCESS)
    status = keep_copy(context, row_ptr, "matrix pattern (row offsets)", &m->pattern_row_ptr,
                       &m->pattern_row_ptr_bytes);
  if (status == CLMG_SUCCESS)
    status = lay_out_on_device(m, &summary, o);
  /* CSR copies the arrays as they are; the other layouts gather them
   * through a map from a copy of the pattern */
  const int csr = status == CLMG_SUCCESS && is_csr(m->format);
  if (status == CLMG_SUCCESS && !csr && !m->map) /* the hybrid's map is made with its layout */
    status = build_map(m);
  if (status == CLMG_SUCCESS && !csr)
    status =
        keep_copy(context, col, "matrix pattern (columns)", &m->pattern_col, &m->pattern_col_bytes);
  if (status == CLMG_SUCCESS) {
    size_t col_offset;
    cl_mem col_buffer = clmg_vector_cl_buffer(col, &col_offset);
    status = csr ? gather_from_csr(m, m->offsets, 0, col_buffer, col_offset, values, 1)
                 : gather_from_csr(m, m->pattern_row_ptr, 0, m->pattern_col, 0, values, 1);
  }
  if (status == CLMG_SUCCESS)
    m->from_device = 1;
  if (status != CLMG_SUCCESS) {
    clmg_matrix_destroy(m);
    return status;
  }
  *matrix = m;
  return CLMG_SUCCESS;
}

clmg_status clmg_matrix_update_values_device(clmg_matrix *m, const clmg_vector *values) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(m->context);
  if (!m->from_device)
    return clmg_fail(m->context, CLMG_ERROR_UNSUPPORTED,
                     "matrix value update: this matrix was built from host CSR; build it with "
                     "clmg_matrix_create_from_device to update its values in place");
  if (!values || clmg_vector_context(values) != m->context ||
      clmg_vector_length(values) != m->nnz ||
      (clmg_vector_type(values) != CLMG_DOUBLE && clmg_vector_type(values) != CLMG_FLOAT))
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT,
                     "matrix value update: the values must be %zu doubles or floats in the "
                     "matrix's context (got %zu %s)",
                     m->nnz, values ? clmg_vector_length(values) : 0,
                     values ? clmg_dtype_name(clmg_vector_type(values)) : "none");
  return m->map ? gather_from_csr(m, m->pattern_row_ptr, 0, m->pattern_col, 0, values, 0)
                : gather_from_csr(m, m->offsets, 0, m->columns, 0, values, 0);
}

clmg_status clmg_matrix_update_values(clmg_matrix *m, const double *values) {
  if (!m)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_clear_message(m->context);
  if (!values && m->nnz > 0)
    return clmg_fail(m->context, CLMG_ERROR_INVALID_ARGUMENT, "matrix value update: NULL values");
  clmg_vector *uploaded = NULL;
  clmg_status status = clmg_vector_create(m->context, m->precision, m->nnz, &uploaded);
  if (status == CLMG_SUCCESS && m->nnz > 0)
    status = clmg_vector_upload_doubles(uploaded, values);
  if (status == CLMG_SUCCESS)
    status = clmg_matrix_update_values_device(m, uploaded);
  clmg_vector_destroy(uploaded);
  return status;
}

/* ---- back to CSR ---- */

/* A handle on `length` elements of a matrix buffer that does not own it. */
static clmg_vector *borrowed_vector(const clmg_matrix *m, cl_mem buffer, clmg_dtype type,
                                    size_t length) {
  clmg_vector *v = calloc(1, sizeof *v);
  if (v)
    *v = (clmg_vector){m->context, buffer, 0, length, 0, type};
  return v;
}

int clmg_matrix_csr_views(const clmg_matrix *m, clmg_dtype precision, clmg_csr_device *out) {
  memset(out, 0, sizeof *out);
  if (!m || !is_csr(m->format) || m->precision != precision || !m->offsets || !m->columns ||
      !m->values)
    return 0;
  clmg_csr_device views = {m->rows, m->cols,
                           borrowed_vector(m, m->offsets, CLMG_INT64, m->rows + 1),
                           borrowed_vector(m, m->columns, CLMG_INT32, m->nnz),
                           borrowed_vector(m, m->values, precision, m->nnz)};
  if (!views.row_ptr || !views.col || !views.val) {
    clmg_csr_device_free(&views);
    return 0;
  }
  *out = views;
  return 1;
}

int clmg_matrix_csr_arrays(const clmg_matrix *m, clmg_dtype precision, clmg_csr_device *out) {
  if (clmg_matrix_csr_views(m, precision, out))
    return 1;
  if (!m || !m->from_device || !m->map || !m->pattern_row_ptr || !m->pattern_col ||
      m->precision != precision || !m->values)
    return 0;
  clmg_csr_device arrays = {m->rows, m->cols,
                            borrowed_vector(m, m->pattern_row_ptr, CLMG_INT64, m->rows + 1),
                            borrowed_vector(m, m->pattern_col, CLMG_INT32, m->nnz), NULL};
  clmg_status status = arrays.row_ptr && arrays.col ? CLMG_SUCCESS : CLMG_ERROR_OUT_OF_HOST_MEMORY;
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create_unset(m->context, precision, m->nnz, &arrays.val);
  clmg_kernel_args args;
  if (status == CLMG_SUCCESS && m->stored > 0)
    status = device_kernel(m->context, precision, "stored_scatter_csr", &args);
  if (status == CLMG_SUCCESS && m->stored > 0) {
    clmg_arg_ulong(&args, m->stored);
    clmg_arg_buffer(&args, m->map);
    clmg_arg_buffer(&args, m->values);
    clmg_arg_vector(&args, arrays.val);
    status = clmg_launch_args(&args, m->stored);
  }
  if (status != CLMG_SUCCESS) {
    clmg_csr_device_free(&arrays);
    clmg_clear_message(m->context);
    return 0;
  }
  *out = arrays;
  return 1;
}

/* Reads `bytes` of a matrix array into host (blocking); nothing for 0. */
static clmg_status read_array(const clmg_matrix *m, cl_mem buffer, size_t bytes, void *host,
                              const char *what) {
  return clmg_read_buffer(m->context, buffer, 1, 0, bytes, host, what);
}

clmg_status clmg_matrix_download_csr(const clmg_matrix *m, clmg_csr *out) {
  memset(out, 0, sizeof *out);
  if (m->format == CLMG_FORMAT_HYBRID) { /* the pattern and the values through the map */
    clmg_csr_device arrays;
    if (!clmg_matrix_csr_arrays(m, m->precision, &arrays))
      return clmg_fail(m->context, CLMG_ERROR_OUT_OF_DEVICE_MEMORY,
                       "matrix to CSR: no room for the hybrid matrix's CSR values");
    clmg_error error;
    clmg_status status = clmg_csr_device_download(&arrays, out, &error);
    clmg_csr_device_free(&arrays);
    return status == CLMG_SUCCESS ? status : clmg_fail(m->context, status, "%s", error.message);
  }
  const size_t rows = m->rows, element = clmg_dtype_size(m->precision);
  const size_t stored = is_csr(m->format) ? m->nnz : m->stored;
  int64_t *slice_ptr = NULL;
  int32_t *lengths = NULL, *columns = malloc((stored ? stored : 1) * sizeof *columns);
  uint32_t *permutation = NULL;
  unsigned char *values = malloc((stored ? stored : 1) * element);
  out->rows = rows;
  out->cols = m->cols;
  out->row_ptr = malloc((rows + 1) * sizeof *out->row_ptr);
  out->col = malloc((m->nnz ? m->nnz : 1) * sizeof *out->col);
  out->val = malloc((m->nnz ? m->nnz : 1) * sizeof *out->val);
  int ok = columns && values && out->row_ptr && out->col && out->val;
  if (ok && !is_csr(m->format)) {
    lengths = malloc((rows ? rows : 1) * sizeof *lengths);
    ok = lengths != NULL;
  }
  if (ok && m->format == CLMG_FORMAT_SELL) {
    size_t slices = (rows + m->slice_height - 1) / m->slice_height;
    slice_ptr = malloc((slices + 1) * sizeof *slice_ptr);
    permutation = malloc((rows ? rows : 1) * sizeof *permutation);
    ok = slice_ptr && permutation;
  }
  clmg_status status = ok ? CLMG_SUCCESS
                          : clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY,
                                      "matrix to CSR: no host memory for %zu entries", stored);
  if (status == CLMG_SUCCESS)
    status = read_array(m, m->columns, stored * sizeof *columns, columns, "reading the columns");
  if (status == CLMG_SUCCESS)
    status = read_array(m, m->values, stored * element, values, "reading the values");
  if (status == CLMG_SUCCESS && is_csr(m->format))
    status = read_array(m, m->offsets, (rows + 1) * sizeof *out->row_ptr, out->row_ptr,
                        "reading the row offsets");
  if (status == CLMG_SUCCESS && lengths)
    status =
        read_array(m, m->row_lengths, rows * sizeof *lengths, lengths, "reading the row lengths");
  if (status == CLMG_SUCCESS && slice_ptr)
    status = read_array(m, m->offsets,
                        ((rows + m->slice_height - 1) / m->slice_height + 1) * sizeof *slice_ptr,
                        slice_ptr, "reading the slice offsets");
  if (status == CLMG_SUCCESS && permutation)
    status = read_array(m, m->permutation, rows * sizeof *permutation, permutation,
                        "reading the row permutation");
  if (status == CLMG_SUCCESS && is_csr(m->format)) { /* CSR-Adaptive keeps CSR's arrays */
    for (size_t k = 0; k < m->nnz; ++k) {
      out->col[k] = columns[k];
      out->val[k] =
          element == sizeof(double) ? ((const double *)values)[k] : ((const float *)values)[k];
    }
  } else if (status == CLMG_SUCCESS) {
    /* the entries' places as build_ellr and build_sell lay them out; a
     * SELL row's length is at its sorted place */
    size_t *source_of = malloc((rows ? rows : 1) * sizeof *source_of); /* row -> sorted place */
    if (!source_of)
      status = clmg_fail(m->context, CLMG_ERROR_OUT_OF_HOST_MEMORY, "matrix to CSR");
    for (size_t i = 0; source_of && i < rows; ++i)
      source_of[i] = i;
    if (source_of && permutation && m->sigma > 1)
      for (size_t i = 0; i < rows; ++i)
        source_of[permutation[i]] = i;
    out->row_ptr[0] = 0;
    for (size_t r = 0; source_of && r < rows; ++r) {
      size_t place = source_of[r], length = (size_t)lengths[place];
      int64_t begin = out->row_ptr[r];
      for (size_t k = 0; k < length; ++k) {
        size_t index;
        if (m->format == CLMG_FORMAT_ELLR)
          index = ((k / m->lanes) * m->ellr_stride + r) * m->lanes + k % m->lanes;
        else {
          size_t h = m->slice_height, slice = place / h;
          index = (size_t)slice_ptr[slice] + k * h + (place - slice * h);
        }
        out->col[begin + (int64_t)k] = columns[index];
        out->val[begin + (int64_t)k] = element == sizeof(double) ? ((const double *)values)[index]
                                                                 : ((const float *)values)[index];
      }
      out->row_ptr[r + 1] = begin + (int64_t)length;
    }
    free(source_of);
  }
  free(columns);
  free(values);
  free(lengths);
  free(slice_ptr);
  free(permutation);
  if (status != CLMG_SUCCESS)
    clmg_csr_free(out);
  return status;
}
