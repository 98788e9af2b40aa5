/** @file
 * clmg P1 assembly on triangle and tetrahedron meshes: the generalized
 * Helmholtz problem of Fu et al. 2014 (section 3),
 *
 *   -div(sigma grad u) + lambda u = f in the domain, natural boundary
 *   conditions (sigma grad u . n = 0),
 *
 * discretized with piecewise linear (P1) elements on a simplex mesh:
 * A = S + lambda M, S_ij = (sigma grad phi_i, grad phi_j), M_ij = (phi_i,
 * phi_j), b_i = (phi_i, f), sigma constant per material. Two assemblies
 * give the same A and b: a serial host one (Algorithm 3.1 of the paper: the
 * reference) and a device one that builds A and b directly in device
 * memory with the patch scheme of the paper's section 4.
 *
 * Rows and columns are the mesh's vertices, in the mesh's numbering; the
 * pattern couples each vertex with itself and with every vertex that shares
 * a cell with it (rows sorted). Cells must have a positive orientation
 * (include/clmg/mesh.h) and every vertex must belong to a cell. */
#ifndef CLMG_ASSEMBLY_H
#define CLMG_ASSEMBLY_H

#include "clmg/mesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The right-hand side. */
typedef enum clmg_rhs_kind {
  CLMG_RHS_SOURCE_ONE = 0, /**< b_i = (phi_i, 1): the load of f = 1 (sums to the volume) */
  CLMG_RHS_ONES = 1        /**< b_i = 1 for every i (what the paper's solver experiments use) */
} clmg_rhs_kind;

/** sigma per material: the cells of material id material_ids[k] (the mesh's
 * cell_material, 1 where that is NULL) have sigma[k]. With num_materials 0
 * (both arrays may then be NULL) sigma is 1 everywhere. A cell whose id is
 * not listed is an error naming the cell and the id. sigma >= 0 and
 * lambda >= 0, finite (A is symmetric positive definite when lambda > 0 and
 * sigma >= 0; sigma = 0, lambda = 1 gives the mass matrix M, sigma = 1,
 * lambda = 0 the stiffness matrix S). The arrays are read during the call
 * only. */
typedef struct clmg_helmholtz_problem {
  const int32_t *material_ids; /**< num_materials material ids */
  const double *sigma;         /**< sigma[k] for the cells of material_ids[k] */
  size_t num_materials;        /**< entries of material_ids and sigma (0: sigma 1 everywhere) */
  double lambda;               /**< the coefficient of u (>= 0) */
  clmg_rhs_kind rhs;           /**< the right-hand side b */
  /** u = 0 on the vertices of the boundary faces with these tags (NULL or 0
   * tags: none, natural conditions everywhere). They are eliminated
   * symmetrically: their rows and columns become those of the identity and
   * b is 0 there (A stays SPD and of the mesh's size). The pattern keeps
   * the eliminated couplings, as explicit zeros, so that it does not depend
   * on the problem. */
  const int32_t *dirichlet_tags;
  size_t num_dirichlet_tags; /**< entries of dirichlet_tags */
} clmg_helmholtz_problem;

/** sigma = 1 for every material, lambda = 1, rhs CLMG_RHS_SOURCE_ONE, no
 * Dirichlet boundary. */
CLMG_API void clmg_helmholtz_problem_defaults(clmg_helmholtz_problem *problem);

/** The P1 pattern of a simplex mesh (num_vertices x num_vertices, columns
 * sorted, values zero; malloc'ed, free with clmg_csr_free). Checks the mesh
 * (simplex cells, dimension 2 or 3, vertex indices in range, every vertex
 * in a cell); the message names the first offending cell or vertex. */
CLMG_API clmg_status clmg_p1_pattern(const clmg_mesh *mesh, clmg_csr *pattern, clmg_error *error);

/** Serial host assembly (Algorithm 3.1 of Fu et al. 2014): element matrices
 * in closed form (S^e = sigma |K| G G^T with G the gradients of the
 * barycentric coordinates, M^e_kl = |K| (1 + delta_kl) / ((d+1)(d+2)),
 * b^e_k = |K| / (d+1) for f = 1) summed into the pattern of clmg_p1_pattern.
 * b (num_vertices doubles) is caller-allocated. An inverted or degenerate
 * cell (signed volume <= 0) is an error naming the cell. problem NULL: the
 * defaults. */
CLMG_API clmg_status clmg_p1_assemble_host(const clmg_mesh *mesh,
                                           const clmg_helmholtz_problem *problem, clmg_csr *a,
                                           double *b, clmg_error *error);

/** The paths of the device assembly.
 *
 * The assembler is made once per mesh and assembles as often as the problem
 * changes. Patches (Fu et al. 2014, section 4) are contiguous ranges of
 * rows, cut so that a patch's CSR columns and values, row offsets and
 * right-hand side fit a share of the device's local memory; each cell
 * belongs to the patch of its first vertex. One work-group per patch loads
 * the patch's columns into local memory, every work-item computes the
 * element matrices of some of the patch's cells and adds the entries of the
 * patch's rows there (binary search for the column, local atomic add), the
 * patch's values are then written back contiguously. Entries of rows
 * outside the patch go to per-entry slots in global memory, each written by
 * one work-item, and a second kernel adds each CSR entry's slots (lists
 * made on the host at creation), so no global atomics are needed.
 *
 * Patches follow the numbering: with a numbering that keeps neighbours
 * close (Cuthill-McKee, or the patch order of the paper) most cells lie
 * inside their patch; with a scattered numbering most entries take the
 * slot path, which stays correct but moves more data.
 *
 * Devices without 64-bit local atomics (cl_khr_int64_base_atomics) assemble
 * doubles on the gather path: every element entry goes to its slot and
 * each CSR entry gathers its slots, atomic-free (also selectable). */
typedef enum clmg_p1_path {
  CLMG_P1_PATH_AUTO = 0, /**< rows on GPUs; elsewhere patches where the device has the local
                            atomics, else gather */
  CLMG_P1_PATH_PATCH,    /**< patches (CLMG_ERROR_UNSUPPORTED without the atomics) */
  CLMG_P1_PATH_GATHER,   /**< every entry through slots and a gather per CSR entry */
  /** one work-item per row sums its cells' rows of the element matrices
   * (vertex-to-cell lists; no slots, no atomics, a fixed order of terms) */
  CLMG_P1_PATH_ROWS
} clmg_p1_path;

/** "auto", "patch", "gather", "rows" ("unknown" for another value). */
CLMG_API const char *clmg_p1_path_name(clmg_p1_path path);

/** How a P1 assembler lays out its matrix and which path it takes; fill it with
 * clmg_p1_assembler_options_defaults. */
typedef struct clmg_p1_assembler_options {
  /** Layout and precision of the device matrix (and of b): precision
   * CLMG_DOUBLE or CLMG_FLOAT (values are accumulated in it); format CSR by
   * default, ELLR or SELL through the same call. */
  clmg_matrix_options matrix;
  clmg_p1_path path; /**< default CLMG_P1_PATH_AUTO */
  /** Local memory bytes a patch may use; 0: half the device's local memory,
   * at most 24 KiB (two work-groups per compute unit on GPUs). Small values
   * make many small patches (tests). */
  size_t patch_local_bytes;
  /** Work-items per patch; 0: 128 (at most the device's limit). */
  size_t work_group_size;
} clmg_p1_assembler_options;

/** The defaults: a CSR matrix in double precision, the automatic path, patch memory and
 * work-group size chosen per device. A NULL options does nothing. */
CLMG_API void clmg_p1_assembler_options_defaults(clmg_p1_assembler_options *options);

/** The device assembler of one mesh's P1 Helmholtz systems (opaque). */
typedef struct clmg_p1_assembler clmg_p1_assembler;

/** Facts about an assembler (for tests and performance reports). */
typedef struct clmg_p1_assembler_info {
  clmg_p1_path path;            /**< PATCH, GATHER or ROWS: the path it takes */
  size_t num_patches;           /**< patches (row ranges) */
  size_t max_patch_rows;        /**< rows of the largest patch */
  size_t max_patch_local_bytes; /**< local memory of the largest patch */
  size_t boundary_cells;        /**< cells with a vertex outside their patch */
  size_t slots;                 /**< per-entry slots in global memory (matrix and b) */
  size_t gathered_entries;      /**< CSR entries and b rows the second kernel updates */
  size_t device_bytes;          /**< device memory the assembler holds */
} clmg_p1_assembler_info;

/** Builds the pattern and the patches on the host (linear time), checks the
 * cells (as clmg_p1_pattern and clmg_p1_assemble_host do) and uploads
 * coordinates (one array per axis), cells (one array per local vertex,
 * ordered by patch), material indices, the pattern and the slot lists; it
 * keeps a host copy of the boundary faces and their tags (for Dirichlet
 * conditions). The assembler copies what it needs: the mesh may be freed
 * afterwards. It
 * borrows the context (destroy the assembler first). options NULL: the
 * defaults. Errors are recorded in the context's message. */
CLMG_API clmg_status clmg_p1_assembler_create(clmg_context *context, const clmg_mesh *mesh,
                                              const clmg_p1_assembler_options *options,
                                              clmg_p1_assembler **assembler);
/** Frees the assembler's device arrays and host copies (not the matrices it made, which
 * are the caller's). NULL does nothing. */
CLMG_API void clmg_p1_assembler_destroy(clmg_p1_assembler *assembler);
/** Fills *info with the assembler's path, patches, slots and device bytes;
 * CLMG_ERROR_INVALID_ARGUMENT for a NULL argument. */
CLMG_API clmg_status clmg_p1_assembler_get_info(const clmg_p1_assembler *assembler,
                                                clmg_p1_assembler_info *info);

/** Assembles A and b on the device. *a_out NULL: a new matrix is made
 * (clmg_matrix_create_from_device, in the options' format and precision)
 * and belongs to the caller (clmg_matrix_destroy, before the context);
 * otherwise *a_out must be a matrix this assembler made, and its values are
 * updated in place (then call clmg_multigrid_refresh on a hierarchy that
 * uses it). b (num_vertices elements of the assembler's precision) may be
 * NULL: no right-hand side. Values never pass through the host. problem
 * NULL: the defaults. */
CLMG_API clmg_status clmg_p1_assemble_device(clmg_p1_assembler *assembler,
                                             const clmg_helmholtz_problem *problem,
                                             clmg_matrix **a_out, clmg_vector *b);

/** The assembled CSR values (nnz, the assembler's precision, in the order of
 * clmg_p1_pattern's pattern) of the last clmg_p1_assemble_device; owned by
 * the assembler, valid until it is destroyed. For comparisons and for
 * callers that lay out their own format. */
CLMG_API const clmg_vector *clmg_p1_assembler_values(const clmg_p1_assembler *assembler);

#ifdef __cplusplus
}
#endif

#endif
