/* A finite-element Poisson hierarchy built in parts: each process refines
 * and assembles its own piece of the domain, so what a process holds
 * shrinks with the number of processes.
 *
 * Levels 0..p (p, the partition level, small) are built whole by every
 * process, as one process builds them. The cells of level p are split by
 * recursive coordinate bisection; each process cuts out its part with one
 * layer of cells around it (clmg_mesh_extract_part) and builds the levels
 * p..finest of that piece with the serial code. Rows of the DOFs in the
 * closure of its part are then complete: every cell around such a DOF, and
 * around the DOFs its rows of A, P and R reach, is in the piece on levels
 * above p (a fine cell near the part descends from a coarse cell sharing a
 * vertex with it), and so are their boundary faces, so the piece finds the
 * same Dirichlet DOFs there as the whole build. (A row of P on level p + 1
 * reaches the coarse DOFs of one cell of the part or of a cell sharing a
 * vertex with it.) On level p itself the piece's fringe may miss a
 * Dirichlet face of a DOF no owned row needs; level p comes from the whole
 * build.
 *
 * A DOF's owner is the part of the lowest-numbered cell around it (cells of
 * level p + l are numbered from their level-p ancestor: child c of cell k is
 * k 2^dim + c, as refinement numbers them), and every process computes the
 * same owner from its own cells. A process numbers the DOFs it owns after
 * those of the processes before it; the numbers of the DOFs it needs from
 * others are asked of their owners by that cell and the DOF's place in it. */
#include "core/internal.h" /* clmg_host_parallel_for */
#include "mpi/mpi_internal.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void clmg_mpi_poisson_options_defaults(clmg_mpi_poisson_options *options) {
  memset(options, 0, sizeof *options);
  options->degree = 1;
  options->numbering = CLMG_NUMBERING_CM;
  options->seed = 1;
  options->cells_per_process = 4096;
  options->overlap_layers = 1;
  options->device_setup = 1;
  options->device_rows = 0;
}

void clmg_mpi_poisson_levels_free(clmg_mpi_poisson_levels *levels) {
  if (!levels)
    return;
  clmg_mpi_level_rows_free(levels->levels, levels->num_levels);
  free(levels->levels);
  free(levels->b);
  free(levels->x0);
  free(levels->coords);
  free(levels->is_dirichlet);
  memset(levels, 0, sizeof *levels);
}

/* One level of this process's piece: its DOFs in the piece hierarchy's
 * numbering (index i), their owners and, once known, global numbers. */
typedef struct piece_level {
  size_t n;
  int32_t *owner;  /* per i */
  uint64_t *key;   /* per i: lowest cell around it * dofs per cell + place in it */
  int64_t *global; /* per i: the global number, -1 until known */
  int32_t *owned;  /* the i this process owns, in global order */
  size_t num_owned;
  uint64_t first_row;
} piece_level;

static void piece_level_free(piece_level *level) {
  free(level->owner);
  free(level->key);
  free(level->global);
  free(level->owned);
}

typedef struct builder {
  clmg_mpi *mpi;
  int finest, p, dim;
  size_t dofs_per_cell;
  clmg_fe_hierarchy whole; /* levels 0..p, on every process */
  int32_t *part_of_cell;   /* level p's cells */
  int parts;
  int32_t *owner_p;          /* level p: per DOF of the whole space */
  int64_t *global_p;         /* level p: per DOF of the whole space */
  int32_t *numbered_of_dist; /* level p: global number -> the whole build's row */
  uint64_t *first_p;         /* level p: every process's first row (size + 1) */
  clmg_mesh piece_mesh;      /* the part and its layer, on level p */
  int32_t *cell_map;         /* piece cell -> level p cell */
  clmg_fe_hierarchy piece;   /* levels p..finest of the piece */
  piece_level *levels;       /* finest - p + 1 */
  /* device_rows: the piece's finest A and every level's P and R, kept on
   * the device (piece.a's top level, piece.p and piece.r then have their
   * shapes only); device_p and device_r have finest - p + 1 entries */
  int device_rows;
  clmg_csr_device device_a, *device_p, *device_r;
} builder;

static clmg_status fail(builder *b, clmg_status status, const char *what) {
  return clmg_context_fail(b->mpi->context, status, "rank %d: %s", b->mpi->rank, what);
}

static clmg_status out_of_memory(builder *b) {
  return fail(b, CLMG_ERROR_OUT_OF_HOST_MEMORY, "no host memory for the partitioned hierarchy");
}

/* The finest level whose mesh has at most cells_per_process cells per
 * process, or the first with a cell per process; at most the finest. */
static int partition_level(const clmg_mesh *coarse, int finest, size_t cells_per_process,
                           int size) {
  int p = 0;
  double cells = (double)coarse->num_cells, grow = (double)((size_t)1 << coarse->dim);
  while (p < finest && cells * grow <= (double)cells_per_process * size) {
    cells *= grow;
    ++p;
  }
  while (p < finest && cells < size) {
    cells *= grow;
    ++p;
  }
  return p;
}

/* lowest_cells on the host's cores: ranges of cells lower each DOF's cell
 * to the lowest they see (an atomic minimum: the same result in any
 * order), then the lowest cell of each DOF writes its place there. */
typedef struct lowest_job {
  const clmg_fe_space *space;
  _Atomic int32_t *cell_of; /* -1: no cell yet */
  uint8_t *place_of;
  int places; /* the second pass */
} lowest_job;

static void lowest_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const lowest_job *job = data;
  const size_t per_cell = job->space->dofs_per_cell;
  const int32_t *cell_dofs = job->space->cell_dofs;
  for (size_t k = begin; k < end; ++k)
    for (size_t m = 0; m < per_cell; ++m) {
      const int32_t d = cell_dofs[k * per_cell + m];
      if (job->places) { /* a DOF is once in each cell's list: one writer */
        if (atomic_load_explicit(&job->cell_of[d], memory_order_relaxed) == (int32_t)k)
          job->place_of[d] = (uint8_t)m;
        continue;
      }
      int32_t seen = atomic_load_explicit(&job->cell_of[d], memory_order_relaxed);
      while ((seen < 0 || (int32_t)k < seen) &&
             !atomic_compare_exchange_weak_explicit(&job->cell_of[d], &seen, (int32_t)k,
                                                    memory_order_relaxed, memory_order_relaxed))
        ;
    }
}

/* For every DOF of a space, the lowest-numbered cell around it and the
 * DOF's place in that cell: the first cell, in increasing order, to meet it.
 * This decides a DOF's owner and names it to other processes. cell_of and
 * place_of (num_dofs entries) are the caller's. */
static void lowest_cells(const clmg_fe_space *space, int32_t *cell_of, uint8_t *place_of) {
  for (size_t d = 0; d < space->num_dofs; ++d)
    cell_of[d] = -1;
  /* (int32_t and its atomic share a representation on every target clmg builds for) */
  lowest_job job = {space, (_Atomic int32_t *)cell_of, place_of, 0};
  clmg_host_parallel_for(space->mesh->num_cells, 1024, lowest_range, &job);
  job.places = 1;
  clmg_host_parallel_for(space->mesh->num_cells, 1024, lowest_range, &job);
}

/* Level p's owners (the part of the lowest cell around a DOF) and global
 * numbers (by owner, then the whole build's order). */
static clmg_status number_partition_level(builder *b) {
  const clmg_fe_space *space = &b->whole.spaces[b->p];
  const size_t n = space->num_dofs, size = (size_t)b->mpi->size;
  const int32_t *perm = b->whole.perm[b->p];
  b->owner_p = malloc((n + 1) * sizeof *b->owner_p);
  b->global_p = malloc((n + 1) * sizeof *b->global_p);
  b->numbered_of_dist = malloc((n + 1) * sizeof *b->numbered_of_dist);
  b->first_p = calloc(size + 1, sizeof *b->first_p);
  uint8_t *place = malloc(n + 1);
  if (!b->owner_p || !b->global_p || !b->numbered_of_dist || !b->first_p || !place) {
    free(place);
    return out_of_memory(b);
  }
  lowest_cells(space, b->owner_p, place); /* the cells first, then their parts */
  free(place);
  for (size_t d = 0; d < n; ++d)
    b->owner_p[d] = b->part_of_cell[b->owner_p[d]];
  for (size_t d = 0; d < n; ++d)
    b->first_p[b->owner_p[d] + 1]++;
  for (size_t r = 0; r < size; ++r)
    b->first_p[r + 1] += b->first_p[r];
  uint64_t *next = malloc((size + 1) * sizeof *next);
  if (!next)
    return out_of_memory(b);
  memcpy(next, b->first_p, (size + 1) * sizeof *next);
  for (size_t i = 0; i < n; ++i) { /* the whole build's rows in order */
    int32_t d = perm[i];
    uint64_t g = next[b->owner_p[d]]++;
    b->global_p[d] = (int64_t)g;
    b->numbered_of_dist[g] = (int32_t)i;
  }
  free(next);
  return CLMG_SUCCESS;
}

/* Rows [first, first + count) of the whole build's level l after its
 * numbering became the distributed one on level p. */
static clmg_status whole_rows(builder *b, int l, const uint64_t *first, const uint64_t *count,
                              clmg_mpi_level_rows *out) {
  const clmg_fe_hierarchy *h = &b->whole;
  /* level p's rows (A, P) and columns (A, the R above) take the distributed
   * numbering; the levels below keep the whole build's */
  clmg_csr a = h->a[l], p = l > 0 ? h->p[l] : (clmg_csr){0}, r = l > 0 ? h->r[l] : (clmg_csr){0};
  clmg_status status = CLMG_SUCCESS;
  if (l == b->p) {
    const int32_t *dist = b->numbered_of_dist;
    memset(&a, 0, sizeof a);
    memset(&p, 0, sizeof p);
    memset(&r, 0, sizeof r);
    status = clmg_csr_permute(&h->a[l], dist, dist, &a, NULL);
    if (status == CLMG_SUCCESS && l > 0)
      status = clmg_csr_permute(&h->p[l], dist, NULL, &p, NULL);
    if (status == CLMG_SUCCESS && l > 0)
      status = clmg_csr_permute(&h->r[l], NULL, dist, &r, NULL);
  }
  out->first_row = first[l];
  if (status == CLMG_SUCCESS)
    status = clmg_csr_row_block(&a, first[l], count[l], &out->a, NULL);
  if (status == CLMG_SUCCESS && l > 0)
    status = clmg_csr_row_block(&p, first[l], count[l], &out->p, NULL);
  if (status == CLMG_SUCCESS && l > 0)
    status = clmg_csr_row_block(&r, first[l - 1], count[l - 1], &out->r, NULL);
  if (l == b->p) { /* the permuted copies */
    clmg_csr_free(&a);
    clmg_csr_free(&p);
    clmg_csr_free(&r);
  }
  return status == CLMG_SUCCESS ? status : out_of_memory(b);
}

/* Each DOF's key, owner and (on level p) global number, for the DOFs
 * [begin, end) of a piece level: independent per DOF, on the host's cores. */
typedef struct describe_job {
  const builder *b;
  piece_level *level;
  const int32_t *perm, *cell_of;
  const uint8_t *place_of;
  int l;
} describe_job;

static void describe_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const describe_job *job = data;
  const builder *b = job->b;
  piece_level *level = job->level;
  const size_t per_cell = b->dofs_per_cell;
  const int shift = b->dim * job->l;
  const clmg_fe_space *whole = &b->whole.spaces[b->p];
  for (size_t i = begin; i < end; ++i) {
    int32_t dof = job->perm[i];
    size_t k = (size_t)job->cell_of[dof], m = job->place_of[dof];
    size_t ancestor = (size_t)b->cell_map[k >> shift];
    uint64_t cell = ((uint64_t)ancestor << shift) | (k & (((size_t)1 << shift) - 1));
    level->key[i] = cell * per_cell + m;
    level->global[i] = -1;
    if (job->l == 0) { /* level p: numbered by the whole build */
      int32_t d = whole->cell_dofs[ancestor * per_cell + m];
      level->owner[i] = b->owner_p[d];
      level->global[i] = b->global_p[d];
    } else {
      level->owner[i] = b->part_of_cell[ancestor];
    }
  }
}

/* The piece's level l (0: level p): which DOF is which, and who owns it. */
static clmg_status describe_piece_level(builder *b, int l) {
  piece_level *level = &b->levels[l];
  const clmg_fe_space *space = &b->piece.spaces[l];
  const int32_t *perm = b->piece.perm[l];
  const size_t n = space->num_dofs;
  level->n = n;
  level->owner = malloc((n + 1) * sizeof *level->owner);
  level->key = malloc((n + 1) * sizeof *level->key);
  level->global = malloc((n + 1) * sizeof *level->global);
  level->owned = malloc((n + 1) * sizeof *level->owned);
  int32_t *cell_of = malloc((n + 1) * sizeof *cell_of);
  uint8_t *place_of = malloc(n + 1);
  if (!level->owner || !level->key || !level->global || !level->owned || !cell_of || !place_of) {
    free(cell_of);
    free(place_of);
    return out_of_memory(b);
  }
  /* the piece keeps level p's cell order and children follow their
   * parents, so its lowest cell around a DOF is the lowest of all */
  lowest_cells(space, cell_of, place_of);
  describe_job job = {b, level, perm, cell_of, place_of, l};
  clmg_host_parallel_for(n, 1024, describe_range, &job);
  free(cell_of);
  free(place_of);
  const int rank = b->mpi->rank;
  level->num_owned = 0;
  if (l == 0) {
    level->first_row = b->first_p[rank];
    level->num_owned = (size_t)(b->first_p[rank + 1] - b->first_p[rank]);
    for (size_t i = 0; i < n; ++i)
      if (level->owner[i] == rank)
        level->owned[level->global[i] - (int64_t)level->first_row] = (int32_t)i;
    return CLMG_SUCCESS;
  }
  for (size_t i = 0; i < n; ++i)
    if (level->owner[i] == rank)
      level->owned[level->num_owned++] = (int32_t)i;
  return CLMG_SUCCESS;
}

/* Collective: the global numbers of the DOFs this process owns on the
 * piece's level l >= 1, after those of the processes before it. */
static clmg_status number_piece_level(builder *b, int l) {
  piece_level *level = &b->levels[l];
  const int rank = b->mpi->rank;
  uint64_t mine = level->num_owned, first = 0;
  int code = MPI_Exscan(&mine, &first, 1, MPI_UINT64_T, MPI_SUM, b->mpi->comm);
  if (code != MPI_SUCCESS)
    return clmg_mpi_failed(b->mpi, code, "MPI_Exscan (first rows)");
  level->first_row = rank == 0 ? 0 : first;
  for (size_t k = 0; k < level->num_owned; ++k)
    level->global[level->owned[k]] = (int64_t)(level->first_row + k);
  return CLMG_SUCCESS;
}

/* The marks of needed[l][i]: a DOF that rows on the host reach must get a
 * global number; one that the cells say rows on the device may reach (a
 * superset) asks for one, and keeps -1 where its owner does not know it
 * (the device's gather then fails if a row uses it). Marks are plain atomic
 * stores (a read-modify-write cost the numbering twice as much): a level's
 * MAYBE_NEEDED marks come first, its NEEDED ones after, overwriting them. */
enum { NEEDED = 1, MAYBE_NEEDED = 2 };

typedef struct mark_job {
  const clmg_csr *m;
  const piece_level *rows;
  _Atomic uint8_t *needed;
} mark_job;

static void mark_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const mark_job *job = data;
  const clmg_csr *m = job->m;
  for (size_t k = begin; k < end; ++k) {
    int32_t i = job->rows->owned[k];
    for (int64_t e = m->row_ptr[i]; e < m->row_ptr[i + 1]; ++e)
      atomic_store_explicit(&job->needed[m->col[e]], NEEDED, memory_order_relaxed);
  }
}

/* needed[l][i] = 1 for the DOFs of level l that this process's rows reach
 * (ranges of rows on the host's cores, the marks atomic stores of 1). */
static void mark_columns(const clmg_csr *m, const piece_level *rows, uint8_t *needed) {
  mark_job job = {m, rows, (_Atomic uint8_t *)needed};
  clmg_host_parallel_for(rows->num_owned, 1024, mark_range, &job);
}

typedef struct mark_cells_job {
  const clmg_fe_space *space;  /* the level whose owned DOFs select cells */
  const piece_level *level;    /* ... its owners */
  const clmg_fe_space *marked; /* the level whose DOFs are marked */
  int shift;                   /* marked cell = selecting cell >> shift, or << -shift */
  int rank;
  uint8_t mark;
  _Atomic uint8_t *needed;
} mark_cells_job;

static void mark_cells_range(void *data, size_t range, size_t begin, size_t end) {
  (void)range;
  const mark_cells_job *job = data;
  const size_t per_cell = job->space->dofs_per_cell;
  const size_t children = job->shift < 0 ? (size_t)1 << -job->shift : 1;
  for (size_t k = begin; k < end; ++k) {
    const int32_t *dofs = job->space->cell_dofs + k * per_cell;
    int mine = 0;
    for (size_t m = 0; m < per_cell && !mine; ++m)
      mine = job->level->owner[dofs[m]] == job->rank;
    if (!mine)
      continue;
    const size_t first = job->shift < 0 ? k << -job->shift : k >> job->shift;
    for (size_t c = first; c < first + children; ++c) {
      const int32_t *marked = job->marked->cell_dofs + c * per_cell;
      for (size_t m = 0; m < per_cell; ++m)
        atomic_store_explicit(&job->needed[marked[m]], job->mark, memory_order_relaxed);
    }
  }
}

/* The marks of mark_columns for rows kept on the device, from the cells
 * instead (the device-built piece numbers its DOFs as its mesh, no
 * permutation, so a DOF is its index; a level's cell k has the children
 * k 2^dim + c on the next). For the rows of A (shift 0, marked the same
 * space): every DOF of a cell that has a DOF this process owns (A couples
 * the DOFs of a cell, so these hold every column of its rows; the few more,
 * numbered too, change no row), NEEDED. For P's (space one level finer than
 * marked, shift dim): the DOFs of the parent of each such cell, which hold
 * every coarse DOF whose function is nonzero at an owned fine DOF. For R's
 * (space one level coarser, shift -dim): the DOFs of the children of each
 * such cell, which hold every fine DOF inside the support of an owned
 * coarse function. These two are MAYBE_NEEDED: the children of a cell of
 * the partition level's layer reach DOFs whose cells the piece may lack. */
static void mark_cells(const clmg_fe_space *space, const piece_level *level,
                       const clmg_fe_space *marked, int shift, int rank, uint8_t mark,
                       uint8_t *needed) {
  mark_cells_job job = {space, level, marked, shift, rank, mark, (_Atomic uint8_t *)needed};
  clmg_host_parallel_for(space->mesh->num_cells, 1024, mark_cells_range, &job);
}

/* Where an owner finds the DOFs it is asked about: the piece's cell of each
 * level-p cell (-1 outside the piece) and, per level, each DOF's index i. */
typedef struct dof_finder {
  int32_t *piece_cell; /* level p cell -> piece cell */
  size_t num_cells_p;
  int32_t **index_of; /* per level: piece DOF -> i (the inverse of perm) */
} dof_finder;

/* The global number of the DOF this process owns on the piece's level l
 * with this key (lowest cell * dofs per cell + place), -1 when it owns none:
 * the key names a cell, its level-p ancestor a cell of the piece, the piece
 * numbers its children as refinement does, and the cell's DOFs say which. */
static int64_t owned_number(const builder *b, const dof_finder *finder, int l, uint64_t key) {
  const size_t per_cell = b->dofs_per_cell;
  const int shift = b->dim * l;
  const uint64_t cell = key / per_cell, ancestor = cell >> shift;
  if (ancestor >= finder->num_cells_p || finder->piece_cell[ancestor] < 0)
    return -1;
  const uint64_t k =
      ((uint64_t)finder->piece_cell[ancestor] << shift) | (cell & (((uint64_t)1 << shift) - 1));
  const clmg_fe_space *space = &b->piece.spaces[l];
  if (k >= space->mesh->num_cells)
    return -1;
  const int32_t i = finder->index_of[l][space->cell_dofs[k * per_cell + key % per_cell]];
  const piece_level *level = &b->levels[l];
  return level->owner[i] == b->mpi->rank && level->key[i] == key ? level->global[i] : -1;
}

static void dof_finder_free(dof_finder *finder, int levels) {
  for (int l = 0; finder->index_of && l < levels; ++l)
    free(finder->index_of[l]);
  free(finder->index_of);
  free(finder->piece_cell);
}

/* The finder of the piece's levels 1..levels - 1; false without memory. */
static int dof_finder_create(const builder *b, int levels, dof_finder *finder) {
  memset(finder, 0, sizeof *finder);
  finder->num_cells_p = b->whole.meshes[b->p].num_cells;
  finder->piece_cell = malloc((finder->num_cells_p + 1) * sizeof *finder->piece_cell);
  finder->index_of = calloc((size_t)levels, sizeof *finder->index_of);
  if (!finder->piece_cell || !finder->index_of)
    return 0;
  for (size_t c = 0; c < finder->num_cells_p; ++c)
    finder->piece_cell[c] = -1;
  for (size_t k = 0; k < b->piece_mesh.num_cells; ++k)
    finder->piece_cell[b->cell_map[k]] = (int32_t)k;
  for (int l = 1; l < levels; ++l) {
    const size_t n = b->levels[l].n;
    finder->index_of[l] = malloc((n + 1) * sizeof *finder->index_of[l]);
    if (!finder->index_of[l])
      return 0;
    for (size_t i = 0; i < n; ++i)
      finder->index_of[l][b->piece.perm[l][i]] = (int32_t)i;
  }
  return 1;
}

/* The global numbers of the DOFs this process's rows reach but others own,
 * asked of their owners by key: one all-to-all of questions, one of
 * answers. */
static clmg_status exchange_numbers(builder *b) {
  const int levels = b->finest - b->p + 1, size = b->mpi->size, rank = b->mpi->rank;
  uint8_t **needed = calloc((size_t)levels, sizeof *needed);
  dof_finder finder = {0};
  int *send_counts = calloc((size_t)size, sizeof *send_counts);
  int *receive_counts = calloc((size_t)size, sizeof *receive_counts);
  int *send_starts = calloc((size_t)size + 1, sizeof *send_starts);
  int *receive_starts = calloc((size_t)size + 1, sizeof *receive_starts);
  uint64_t *questions = NULL, *asked = NULL;
  int64_t *answers = NULL, *replies = NULL;
  int32_t *question_index = NULL;
  int *fill = NULL; /* where the next question to each rank goes */
  clmg_status status = CLMG_SUCCESS;
  if (!needed || !send_counts || !receive_counts || !send_starts || !receive_starts)
    status = out_of_memory(b);
  for (int l = 1; status == CLMG_SUCCESS && l < levels; ++l) {
    needed[l] = calloc(b->levels[l].n + 1, 1);
    if (!needed[l]) {
      status = out_of_memory(b);
      break;
    }
    const clmg_fe_space *spaces = b->piece.spaces;
    if (b->device_rows) { /* P's and R's columns, MAYBE_NEEDED: first */
      if (l + 1 < levels)
        mark_cells(&spaces[l + 1], &b->levels[l + 1], &spaces[l], b->dim, rank, MAYBE_NEEDED,
                   needed[l]);
      mark_cells(&spaces[l - 1], &b->levels[l - 1], &spaces[l], -b->dim, rank, MAYBE_NEEDED,
                 needed[l]);
    } else {
      if (l + 1 < levels)
        mark_columns(&b->piece.p[l + 1], &b->levels[l + 1], needed[l]);
      mark_columns(&b->piece.r[l], &b->levels[l - 1], needed[l]);
    }
    if (l == levels - 1 && b->device_rows)
      mark_cells(&spaces[l], &b->levels[l], &spaces[l], 0, rank, NEEDED, needed[l]);
    else
      mark_columns(&b->piece.a[l], &b->levels[l], needed[l]);
  }
  size_t total = 0;
  for (int l = 1; status == CLMG_SUCCESS && l < levels; ++l)
    for (size_t i = 0; i < b->levels[l].n; ++i)
      if (needed[l][i] && b->levels[l].owner[i] != rank) {
        send_counts[b->levels[l].owner[i]] += 2;
        ++total;
      }
  if (status == CLMG_SUCCESS && total > (size_t)INT_MAX / 2)
    status = fail(b, CLMG_ERROR_UNSUPPORTED, "more than 2^30 DOFs to number from other processes");
  status = clmg_mpi_agree(b->mpi, status);
  if (status != CLMG_SUCCESS)
    goto done;
  int code = MPI_Alltoall(send_counts, 1, MPI_INT, receive_counts, 1, MPI_INT, b->mpi->comm);
  if (code != MPI_SUCCESS) {
    status = clmg_mpi_failed(b->mpi, code, "MPI_Alltoall (DOF questions)");
    goto done;
  }
  size_t received = 0;
  for (int r = 0; r < size; ++r) {
    send_starts[r + 1] = send_starts[r] + send_counts[r];
    receive_starts[r + 1] = receive_starts[r] + receive_counts[r];
    received += (size_t)receive_counts[r];
  }
  questions = malloc((2 * total + 1) * sizeof *questions);
  question_index = malloc((2 * total + 1) * sizeof *question_index);
  asked = malloc((received + 1) * sizeof *asked);
  replies = malloc((received / 2 + 1) * sizeof *replies);
  answers = malloc((total + 1) * sizeof *answers);
  fill = malloc(((size_t)size + 1) * sizeof *fill);
  if (!questions || !question_index || !asked || !replies || !answers || !fill)
    status = out_of_memory(b);
  /* the owned DOFs of each level found by key, to answer with */
  if (status == CLMG_SUCCESS && !dof_finder_create(b, levels, &finder))
    status = out_of_memory(b);
  status = clmg_mpi_agree(b->mpi, status);
  if (status != CLMG_SUCCESS)
    goto done;
  memcpy(fill, send_starts, (size_t)size * sizeof *fill);
  for (int l = 1; l < levels; ++l)
    for (size_t i = 0; i < b->levels[l].n; ++i)
      if (needed[l][i] && b->levels[l].owner[i] != rank) {
        int at = fill[b->levels[l].owner[i]];
        fill[b->levels[l].owner[i]] += 2;
        questions[at] = (uint64_t)l;
        questions[at + 1] = b->levels[l].key[i];
        question_index[at] = (int32_t)i;
      }
  code = MPI_Alltoallv(questions, send_counts, send_starts, MPI_UINT64_T, asked, receive_counts,
                       receive_starts, MPI_UINT64_T, b->mpi->comm);
  if (code != MPI_SUCCESS) {
    status = clmg_mpi_failed(b->mpi, code, "MPI_Alltoallv (DOF questions)");
    goto done;
  }
  for (size_t q = 0; q < received / 2; ++q) {
    uint64_t l = asked[2 * q];
    replies[q] =
        l >= 1 && l < (uint64_t)levels ? owned_number(b, &finder, (int)l, asked[2 * q + 1]) : -1;
  }
  /* the answers travel as one int64 per question: counts halved */
  for (int r = 0; r < size; ++r) {
    send_counts[r] /= 2;
    receive_counts[r] /= 2;
    send_starts[r] /= 2;
    receive_starts[r] /= 2;
  }
  code = MPI_Alltoallv(replies, receive_counts, receive_starts, MPI_INT64_T, answers, send_counts,
                       send_starts, MPI_INT64_T, b->mpi->comm);
  if (code != MPI_SUCCESS) {
    status = clmg_mpi_failed(b->mpi, code, "MPI_Alltoallv (DOF answers)");
    goto done;
  }
  for (size_t q = 0; q < total && status == CLMG_SUCCESS; ++q) {
    int l = (int)questions[2 * q];
    int32_t i = question_index[2 * q];
    if (answers[q] < 0 && !(needed[l][i] & NEEDED))
      continue; /* stays -1: no row on the device may use it */
    if (answers[q] < 0)
      status = clmg_context_fail(b->mpi->context, CLMG_ERROR_UNSUPPORTED,
                                 "rank %d: level %d: DOF %d (key %llu) is unknown to its owner, "
                                 "rank %d",
                                 rank, b->p + l, (int)i, (unsigned long long)questions[2 * q + 1],
                                 (int)b->levels[l].owner[i]);
    b->levels[l].global[i] = answers[q];
  }
  status = clmg_mpi_agree(b->mpi, status);

done:
  for (int l = 0; needed && l < levels; ++l)
    free(needed[l]);
  dof_finder_free(&finder, levels);
  free(needed);
  free(send_counts);
  free(receive_counts);
  free(send_starts);
  free(receive_starts);
  free(questions);
  free(question_index);
  free(asked);
  free(replies);
  free(answers);
  free(fill);
  return status;
}

/* The rows [begin, end) of global_rows' output, filled on one of the
 * host's threads: each row's entries go to its own place. */
typedef struct global_rows_job {
  const clmg_csr *m;
  const piece_level *rows, *columns;
  uint64_t global_cols;
  clmg_csr *out;
  int unnumbered[CLMG_MAX_HOST_THREADS]; /* per range: a column without a global number */
} global_rows_job;

static void global_rows_range(void *data, size_t range, size_t begin, size_t end) {
  global_rows_job *job = data;
  const clmg_csr *m = job->m;
  clmg_csr *out = job->out;
  for (size_t k = begin; k < end; ++k) {
    int32_t i = job->rows->owned[k];
    const int64_t start = out->row_ptr[k];
    int64_t at = start;
    for (int64_t e = m->row_ptr[i]; e < m->row_ptr[i + 1]; ++e) {
      int64_t g = job->columns->global[m->col[e]];
      if (g < 0 || (uint64_t)g >= job->global_cols) {
        job->unnumbered[range] = 1;
        return;
      }
      /* insertion into the row, sorted by global column */
      int64_t place = at++;
      while (place > start && out->col[place - 1] > (int32_t)g) {
        out->col[place] = out->col[place - 1];
        out->val[place] = out->val[place - 1];
        --place;
      }
      out->col[place] = (int32_t)g;
      out->val[place] = m->val[e];
    }
  }
}

/* This process's rows of m (rows->owned, in global order) with global
 * column numbers (columns->global), each row's columns sorted. */
static clmg_status global_rows(builder *b, const clmg_csr *m, const piece_level *rows,
                               const piece_level *columns, uint64_t global_cols, clmg_csr *out) {
  memset(out, 0, sizeof *out);
  out->rows = rows->num_owned;
  out->cols = (size_t)global_cols;
  out->row_ptr = malloc((out->rows + 1) * sizeof *out->row_ptr);
  if (!out->row_ptr)
    return out_of_memory(b);
  out->row_ptr[0] = 0;
  for (size_t k = 0; k < rows->num_owned; ++k)
    out->row_ptr[k + 1] =
        out->row_ptr[k] + (m->row_ptr[rows->owned[k] + 1] - m->row_ptr[rows->owned[k]]);
  const size_t entries = (size_t)out->row_ptr[out->rows];
  out->col = malloc((entries + 1) * sizeof *out->col);
  out->val = malloc((entries + 1) * sizeof *out->val);
  if (!out->col || !out->val) {
    clmg_csr_free(out);
    return out_of_memory(b);
  }
  global_rows_job job = {m, rows, columns, global_cols, out, {0}};
  clmg_host_parallel_for(out->rows, 256, global_rows_range, &job);
  for (size_t t = 0; t < CLMG_MAX_HOST_THREADS; ++t)
    if (job.unnumbered[t]) {
      clmg_csr_free(out);
      return fail(b, CLMG_ERROR_UNSUPPORTED, "a row reaches a DOF without a global number");
    }
  return CLMG_SUCCESS;
}

/* The finest level's vectors and DOF positions for this process's rows:
 * rows[k] is its k-th row in the numbering of h, whose finest level it is
 * (the piece's, or the whole build's when that reaches the finest). */
static clmg_status finest_vectors(builder *b, const clmg_fe_hierarchy *h, const int32_t *rows,
                                  size_t n, clmg_mpi_poisson_levels *out) {
  const int top = h->num_levels - 1;
  const size_t dim = (size_t)b->dim;
  const clmg_fe_space *space = &h->spaces[top];
  out->b = malloc((n + 1) * sizeof *out->b);
  out->x0 = malloc((n + 1) * sizeof *out->x0);
  out->coords = malloc((n + 1) * dim * sizeof *out->coords);
  out->is_dirichlet = malloc(n + 1);
  if (!out->b || !out->x0 || !out->coords || !out->is_dirichlet)
    return out_of_memory(b);
  for (size_t k = 0; k < n; ++k) {
    int32_t i = rows[k];
    out->b[k] = h->b[i];
    out->x0[k] = h->x0[i];
    out->is_dirichlet[k] = h->is_dirichlet[i];
    memcpy(out->coords + k * dim, space->dof_coords + (size_t)h->perm[top][i] * dim,
           dim * sizeof *out->coords);
  }
  return CLMG_SUCCESS;
}

/* The device's names of a piece level's DOFs for clmg_csr_device_gather_rows:
 * its owned rows' list (int32, in global order) and every DOF's global number
 * (int32; -1, not numbered here, fails the gather if a row uses it), made
 * on first use (4 bytes a DOF each way up). */
typedef struct device_names {
  clmg_vector **owned, **global; /* per piece level */
} device_names;

static clmg_status device_names_of(builder *b, device_names *names, int l) {
  if (names->owned[l])
    return CLMG_SUCCESS;
  clmg_context *context = b->mpi->context;
  const piece_level *level = &b->levels[l];
  int32_t *map = malloc((level->n + 1) * sizeof *map);
  if (!map)
    return out_of_memory(b);
  for (size_t i = 0; i < level->n; ++i)
    map[i] = level->global[i] < 0 ? -1 : (int32_t)level->global[i];
  clmg_vector *owned = NULL, *global = NULL;
  clmg_status status = clmg_vector_create(context, CLMG_INT32, level->num_owned, &owned);
  if (status == CLMG_SUCCESS)
    status = clmg_vector_create(context, CLMG_INT32, level->n, &global);
  if (status == CLMG_SUCCESS && level->num_owned > 0)
    status = clmg_vector_upload(owned, level->owned);
  if (status == CLMG_SUCCESS && level->n > 0)
    status = clmg_vector_upload(global, map);
  free(map);
  if (status != CLMG_SUCCESS) {
    clmg_vector_destroy(owned);
    clmg_vector_destroy(global);
    return status;
  }
  names->owned[l] = owned;
  names->global[l] = global;
  return CLMG_SUCCESS;
}

/* Rows of a piece matrix kept on the device (m: rows of piece level
 * `rows`, columns of piece level `cols`, of global_cols over all ranks):
 * this process's rows gathered there with each column renamed by its
 * global number and each row sorted (clmg_csr_device_gather_rows), as
 * global_rows does on the host. *shape gets the shape only. */
static clmg_status device_rows(builder *b, device_names *names, const clmg_csr_device *m, int rows,
                               int cols, uint64_t global_cols, const char *what,
                               clmg_csr_device *out, clmg_csr *shape) {
  clmg_context *context = b->mpi->context;
  char message[sizeof(clmg_error){{0}}.message];
  if (global_cols > (uint64_t)INT32_MAX) {
    snprintf(message, sizeof message, "%s on the device: more than 2^31 - 1 columns", what);
    return fail(b, CLMG_ERROR_UNSUPPORTED, message);
  }
  clmg_status status = device_names_of(b, names, rows);
  if (status == CLMG_SUCCESS)
    status = device_names_of(b, names, cols);
  if (status == CLMG_SUCCESS)
    status = clmg_csr_device_gather_rows(context, m, names->owned[rows], names->global[cols],
                                         (size_t)global_cols, out);
  if (status != CLMG_SUCCESS) {
    snprintf(message, sizeof message, "%s on the device: %s", what, clmg_context_message(context));
    return fail(b, status, message);
  }
  memset(shape, 0, sizeof *shape);
  shape->rows = b->levels[rows].num_owned;
  shape->cols = (size_t)global_cols;
  return CLMG_SUCCESS;
}

/* The levels above p from the piece, and the finest level's vectors. */
static clmg_status piece_rows(builder *b, clmg_mpi_poisson_levels *out) {
  const int levels = b->finest - b->p + 1;
  uint64_t *global_rows_of = calloc((size_t)levels, sizeof *global_rows_of);
  device_names names = {calloc((size_t)levels, sizeof(clmg_vector *)),
                        calloc((size_t)levels, sizeof(clmg_vector *))};
  clmg_status status = clmg_mpi_agree(
      b->mpi, global_rows_of && names.owned && names.global ? CLMG_SUCCESS : out_of_memory(b));
  for (int l = 0; status == CLMG_SUCCESS && l < levels; ++l) {
    uint64_t mine = b->levels[l].num_owned;
    int code = MPI_Allreduce(&mine, &global_rows_of[l], 1, MPI_UINT64_T, MPI_SUM, b->mpi->comm);
    if (code != MPI_SUCCESS)
      status = clmg_mpi_failed(b->mpi, code, "MPI_Allreduce (rows per level)");
  }
  for (int l = 1; status == CLMG_SUCCESS && l < levels; ++l) {
    clmg_mpi_level_rows *rows = &out->levels[b->p + l];
    rows->first_row = b->levels[l].first_row;
    if (b->device_rows) /* P and R: rows of one level, columns of the other */
      status = device_rows(b, &names, &b->device_p[l], l, l - 1, global_rows_of[l - 1],
                           "the rows of P", &rows->p_device, &rows->p);
    else
      status = global_rows(b, &b->piece.p[l], &b->levels[l], &b->levels[l - 1],
                           global_rows_of[l - 1], &rows->p);
    if (status == CLMG_SUCCESS && b->device_rows)
      status = device_rows(b, &names, &b->device_r[l], l - 1, l, global_rows_of[l], "the rows of R",
                           &rows->r_device, &rows->r);
    else if (status == CLMG_SUCCESS)
      status = global_rows(b, &b->piece.r[l], &b->levels[l - 1], &b->levels[l], global_rows_of[l],
                           &rows->r);
    if (status == CLMG_SUCCESS && l == levels - 1 && b->device_rows)
      status = device_rows(b, &names, &b->device_a, l, l, global_rows_of[l], "the finest rows",
                           &rows->a_device, &rows->a);
    else if (status == CLMG_SUCCESS)
      status =
          global_rows(b, &b->piece.a[l], &b->levels[l], &b->levels[l], global_rows_of[l], &rows->a);
  }
  const piece_level *finest = &b->levels[levels - 1];
  if (status == CLMG_SUCCESS)
    status = finest_vectors(b, &b->piece, finest->owned, finest->num_owned, out);
  for (int l = 0; l < levels && names.owned && names.global; ++l) {
    clmg_vector_destroy(names.owned[l]);
    clmg_vector_destroy(names.global[l]);
  }
  free(names.owned);
  free(names.global);
  free(global_rows_of);
  return status;
}

/* The piece's levels (num_levels of them) assembled on the device
 * (clmg_fe_poisson_hierarchy_device, the mesh's own numbering) and brought
 * to the host as b->piece: every level's A, P and R and the finest level's
 * vectors downloaded, the finest mesh and space fetched. The ownership keys
 * need every level's cell -> DOF map: the host refines the levels below the
 * finest (a fraction of the finest level's cells) and numbers their
 * spaces, as the device numbers them (the mesh's own order). */
static clmg_status device_piece(builder *b, int num_levels, int degree,
                                const clmg_poisson_problem *problem, clmg_mpi_poisson_levels *out) {
  clmg_context *context = b->mpi->context;
  clmg_fe_hierarchy *h = &b->piece;
  clmg_fe_device_hierarchy d;
  clmg_error error = {{0}};
  const int top = num_levels - 1;
  const double assembly_start = MPI_Wtime();
  clmg_status status =
      clmg_fe_poisson_hierarchy_device(context, &b->piece_mesh, num_levels, degree, problem, &d);
  const double fetch_start = MPI_Wtime();
  out->piece_assembly_s = fetch_start - assembly_start;
  if (status == CLMG_SUCCESS)
    status = clmg_fe_device_hierarchy_fetch_finest(context, &d);
  out->piece_fetch_s = MPI_Wtime() - fetch_start;
  if (status != CLMG_SUCCESS) {
    char message[sizeof error.message];
    snprintf(message, sizeof message, "%s", clmg_context_message(context));
    clmg_fe_device_hierarchy_free(&d);
    return fail(b, status, message);
  }
  const size_t levels = (size_t)num_levels, n = d.spaces[top].num_dofs;
  h->num_levels = num_levels;
  h->degree = degree;
  h->numbering = CLMG_NUMBERING_2LV;
  h->meshes = calloc(levels, sizeof *h->meshes);
  h->spaces = calloc(levels, sizeof *h->spaces);
  h->a = calloc(levels, sizeof *h->a);
  h->p = calloc(levels, sizeof *h->p);
  h->r = calloc(levels, sizeof *h->r);
  h->perm = calloc(levels, sizeof *h->perm);
  h->b = malloc((n + 1) * sizeof *h->b);
  h->x0 = malloc((n + 1) * sizeof *h->x0);
  if (b->device_rows) {
    b->device_p = calloc(levels, sizeof *b->device_p);
    b->device_r = calloc(levels, sizeof *b->device_r);
  }
  if (!h->meshes || !h->spaces || !h->a || !h->p || !h->r || !h->perm || !h->b || !h->x0 ||
      (b->device_rows && (!b->device_p || !b->device_r))) {
    clmg_fe_device_hierarchy_free(&d);
    return out_of_memory(b);
  }
  double clock = MPI_Wtime();
  for (int l = 0; status == CLMG_SUCCESS && l < num_levels; ++l) {
    if (l == top && top > 0) { /* the finest, fetched: moved, the space onto its new place */
      h->meshes[l] = d.meshes[l];
      h->spaces[l] = d.spaces[l];
      h->spaces[l].mesh = &h->meshes[l];
      memset(&d.meshes[l], 0, sizeof d.meshes[l]);
      memset(&d.spaces[l], 0, sizeof d.spaces[l]);
    } else {
      status = l == 0 ? clmg_mesh_copy(&b->piece_mesh, &h->meshes[0], &error)
                      : clmg_mesh_refine(&h->meshes[l - 1], &h->meshes[l], &error);
      if (status == CLMG_SUCCESS)
        status = clmg_fe_space_create(&h->meshes[l], degree, &h->spaces[l], &error);
      if (status == CLMG_SUCCESS && h->spaces[l].num_dofs != d.a[l].rows)
        status = fail(b, CLMG_ERROR_INVALID_ARGUMENT,
                      "the host and the device number a piece level's DOFs differently");
    }
    if (status == CLMG_SUCCESS) {
      const size_t dofs = h->spaces[l].num_dofs;
      h->perm[l] = malloc((dofs + 1) * sizeof *h->perm[l]);
      if (!h->perm[l])
        status = out_of_memory(b);
      for (size_t i = 0; status == CLMG_SUCCESS && i < dofs; ++i)
        h->perm[l][i] = (int32_t)i;
    }
    double now = MPI_Wtime();
    out->piece_meshes_s += now - clock;
    clock = now;
    if (status == CLMG_SUCCESS && l == top && b->device_rows) { /* kept there: its shape */
      b->device_a = d.a[l];
      memset(&d.a[l], 0, sizeof d.a[l]);
      h->a[l].rows = b->device_a.rows;
      h->a[l].cols = b->device_a.cols;
    } else if (status == CLMG_SUCCESS) {
      status = clmg_csr_device_download(&d.a[l], &h->a[l], &error);
    }
    if (status == CLMG_SUCCESS && l > 0 && b->device_rows) { /* kept there: their shapes */
      b->device_p[l] = d.p[l];
      b->device_r[l] = d.r[l];
      memset(&d.p[l], 0, sizeof d.p[l]);
      memset(&d.r[l], 0, sizeof d.r[l]);
      h->p[l].rows = b->device_p[l].rows;
      h->p[l].cols = b->device_p[l].cols;
      h->r[l].rows = b->device_r[l].rows;
      h->r[l].cols = b->device_r[l].cols;
    } else if (status == CLMG_SUCCESS && l > 0) {
      status = clmg_csr_device_download(&d.p[l], &h->p[l], &error);
      if (status == CLMG_SUCCESS)
        status = clmg_csr_device_download(&d.r[l], &h->r[l], &error);
    }
    if (status != CLMG_SUCCESS && error.message[0])
      status = fail(b, status, error.message);
    now = MPI_Wtime();
    out->piece_download_s += now - clock;
    clock = now;
  }
  if (status == CLMG_SUCCESS && n > 0)
    status = clmg_vector_download_doubles(d.b, h->b);
  if (status == CLMG_SUCCESS && n > 0)
    status = clmg_vector_download_doubles(d.x0, h->x0);
  out->piece_download_s += MPI_Wtime() - clock;
  if (status == CLMG_SUCCESS) {
    h->is_dirichlet = d.is_dirichlet;
    d.is_dirichlet = NULL;
  }
  clmg_fe_device_hierarchy_free(&d);
  return status;
}

/* The tags a problem on the piece must name: the problem's own, or every
 * tag of the mesh where the problem names none (the whole boundary), never
 * the cut faces'. At least one entry (0, which no face has, for none). */
static int32_t *dirichlet_tags_of(const clmg_poisson_problem *problem, const clmg_mesh *mesh,
                                  size_t *count) {
  if (problem->dirichlet_tags && problem->num_dirichlet_tags > 0) {
    int32_t *tags = malloc(problem->num_dirichlet_tags * sizeof *tags);
    if (tags)
      memcpy(tags, problem->dirichlet_tags, problem->num_dirichlet_tags * sizeof *tags);
    *count = problem->num_dirichlet_tags;
    return tags;
  }
  int32_t *tags = malloc((mesh->num_boundary_faces + 1) * sizeof *tags);
  if (!tags)
    return NULL;
  size_t n = 0;
  for (size_t f = 0; f < mesh->num_boundary_faces; ++f) {
    size_t t = 0;
    while (t < n && tags[t] != mesh->boundary_face_tag[f])
      ++t;
    if (t == n)
      tags[n++] = mesh->boundary_face_tag[f];
  }
  if (n == 0)
    tags[n++] = 0;
  *count = n;
  return tags;
}

static void builder_free(builder *b) {
  clmg_fe_hierarchy_free(&b->whole);
  clmg_fe_hierarchy_free(&b->piece);
  clmg_csr_device_free(&b->device_a);
  for (int l = 0; b->device_p && b->device_r && l <= b->finest - b->p; ++l) {
    clmg_csr_device_free(&b->device_p[l]);
    clmg_csr_device_free(&b->device_r[l]);
  }
  free(b->device_p);
  free(b->device_r);
  clmg_mesh_free(&b->piece_mesh);
  free(b->part_of_cell);
  free(b->owner_p);
  free(b->global_p);
  free(b->numbered_of_dist);
  free(b->first_p);
  free(b->cell_map);
  for (int l = 0; b->levels && l <= b->finest - b->p; ++l)
    piece_level_free(&b->levels[l]);
  free(b->levels);
}

clmg_status clmg_mpi_poisson_levels_create(clmg_mpi *mpi, const clmg_mesh *coarse, int finest_level,
                                           const clmg_poisson_problem *problem,
                                           const clmg_mpi_poisson_options *options,
                                           clmg_mpi_poisson_levels *out) {
  if (!mpi)
    return CLMG_ERROR_INVALID_ARGUMENT;
  clmg_mpi_poisson_options defaults;
  if (!options) {
    clmg_mpi_poisson_options_defaults(&defaults);
    options = &defaults;
  }
  clmg_status status = CLMG_SUCCESS;
  if (!out || !coarse || !problem)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_poisson_levels_create: a NULL mesh, problem or output");
  else if (finest_level < 0 || finest_level > 30 ||
           (options->degree != 1 && options->degree != 2) || options->overlap_layers < 1 ||
           options->cells_per_process < 1)
    status = clmg_context_fail(mpi->context, CLMG_ERROR_INVALID_ARGUMENT,
                               "clmg_mpi_poisson_levels_create: level %d, degree %d, %d overlap "
                               "layers, %zu cells per process (levels 0 to 30, degree 1 or 2, "
                               "at least one layer and one cell)",
                               finest_level, options->degree, options->overlap_layers,
                               options->cells_per_process);
  if (out)
    memset(out, 0, sizeof *out);
  status = clmg_mpi_agree(mpi, status);
  if (status != CLMG_SUCCESS)
    return status;
  const double start = MPI_Wtime();
  builder b = {0};
  b.mpi = mpi;
  b.finest = finest_level;
  b.dim = coarse->dim;
  b.dofs_per_cell = (size_t)1;
  for (int a = 0; a < coarse->dim; ++a)
    b.dofs_per_cell *= (size_t)options->degree + 1;
  b.p = partition_level(coarse, finest_level, options->cells_per_process, mpi->size);
  out->num_levels = finest_level + 1;
  out->partition_level = b.p;
  out->dim = coarse->dim;

  /* levels 0..p, whole, on every process (the same input gives the same
   * result everywhere) */
  clmg_error error = {{0}};
  status = clmg_fe_poisson_hierarchy(coarse, b.p + 1, options->degree, problem, options->numbering,
                                     options->seed, &b.whole, &error);
  if (status != CLMG_SUCCESS)
    clmg_context_fail(mpi->context, status, "rank %d: levels 0 to %d: %s", mpi->rank, b.p,
                      error.message);
  const clmg_mesh *level_p = status == CLMG_SUCCESS ? &b.whole.meshes[b.p] : NULL;
  if (status == CLMG_SUCCESS) {
    b.parts = level_p->num_cells < (size_t)mpi->size ? (int)level_p->num_cells : mpi->size;
    b.part_of_cell = malloc((level_p->num_cells + 1) * sizeof *b.part_of_cell);
    out->levels = calloc((size_t)finest_level + 1, sizeof *out->levels);
    status = b.part_of_cell && out->levels
                 ? clmg_mesh_partition(level_p, b.parts, b.part_of_cell, &error)
                 : (error.message[0] = '\0', out_of_memory(&b));
    if (status != CLMG_SUCCESS && error.message[0])
      clmg_context_fail(mpi->context, status, "rank %d: partition: %s", mpi->rank, error.message);
  }
  if (status == CLMG_SUCCESS)
    status = number_partition_level(&b);
  status = clmg_mpi_agree(mpi, status);
  /* the levels below p split evenly, level p by owner */
  uint64_t first_of[32] = {0}, count_of[32] = {0};
  for (int l = 0; status == CLMG_SUCCESS && l <= b.p; ++l) {
    if (l == b.p) {
      first_of[l] = b.first_p[mpi->rank];
      count_of[l] = b.first_p[mpi->rank + 1] - first_of[l];
    } else {
      clmg_mpi_even_rows(mpi, b.whole.a[l].rows, &first_of[l], &count_of[l]);
    }
  }
  for (int l = 0; status == CLMG_SUCCESS && l <= b.p; ++l)
    status = whole_rows(&b, l, first_of, count_of, &out->levels[l]);
  status = clmg_mpi_agree(mpi, status);
  out->global_cells = level_p ? level_p->num_cells : 0;
  for (size_t k = 0; status == CLMG_SUCCESS && k < out->global_cells; ++k)
    out->owned_cells += b.part_of_cell[k] == mpi->rank;
  if (status == CLMG_SUCCESS && b.p == finest_level) {
    const uint64_t first = b.first_p[mpi->rank];
    status = clmg_mpi_agree(mpi, finest_vectors(&b, &b.whole, b.numbered_of_dist + first,
                                                (size_t)(b.first_p[mpi->rank + 1] - first), out));
    out->whole_s = MPI_Wtime() - start;
  } else if (status == CLMG_SUCCESS) {
    /* the piece: this process's part and the layer around it */
    int32_t cut_tag = 0;
    size_t num_tags = 0;
    int32_t *tags = dirichlet_tags_of(problem, level_p, &num_tags);
    clmg_poisson_problem on_piece = *problem;
    on_piece.dirichlet_tags = tags;
    on_piece.num_dirichlet_tags = num_tags;
    status =
        tags ? clmg_mesh_extract_part(level_p, b.part_of_cell, mpi->rank, options->overlap_layers,
                                      &b.piece_mesh, &b.cell_map, &cut_tag, &error)
             : (error.message[0] = '\0', out_of_memory(&b));
    if (status == CLMG_SUCCESS && b.piece_mesh.num_cells == 0)
      status = fail(&b, CLMG_ERROR_UNSUPPORTED, "its part of the partition level has no cells");
    const double piece_start = MPI_Wtime();
    out->whole_s = piece_start - start;
    const clmg_device_info *device = clmg_context_device(mpi->context);
    out->piece_on_device = options->device_setup && device && device->has_fp64;
    b.device_rows = out->piece_on_device && options->device_rows;
    if (status == CLMG_SUCCESS && out->piece_on_device)
      status = device_piece(&b, finest_level - b.p + 1, options->degree, &on_piece, out);
    else if (status == CLMG_SUCCESS)
      status =
          clmg_fe_poisson_hierarchy(&b.piece_mesh, finest_level - b.p + 1, options->degree,
                                    &on_piece, options->numbering, options->seed, &b.piece, &error);
    out->piece_s = MPI_Wtime() - piece_start;
    if (status != CLMG_SUCCESS && error.message[0])
      clmg_context_fail(mpi->context, status, "rank %d: its piece of levels %d to %d: %s",
                        mpi->rank, b.p, finest_level, error.message);
    free(tags);
    out->piece_cells = b.piece_mesh.num_cells;
    if (status == CLMG_SUCCESS) {
      b.levels = calloc((size_t)(finest_level - b.p + 1), sizeof *b.levels);
      if (!b.levels)
        status = out_of_memory(&b);
    }
    status = clmg_mpi_agree(mpi, status);
    const double numbering_start = MPI_Wtime();
    for (int l = 0; status == CLMG_SUCCESS && l <= finest_level - b.p; ++l) {
      status = clmg_mpi_agree(mpi, describe_piece_level(&b, l));
      if (status == CLMG_SUCCESS && l > 0)
        status = clmg_mpi_agree(mpi, number_piece_level(&b, l));
    }
    if (status == CLMG_SUCCESS)
      status = exchange_numbers(&b);
    const double rows_start = MPI_Wtime();
    out->numbering_s = rows_start - numbering_start;
    if (status == CLMG_SUCCESS)
      status = clmg_mpi_agree(mpi, piece_rows(&b, out));
    out->rows_s = MPI_Wtime() - rows_start;
    if (status == CLMG_SUCCESS)
      out->piece_dofs = b.levels[finest_level - b.p].n;
  }
  builder_free(&b);
  if (status != CLMG_SUCCESS) {
    clmg_mpi_poisson_levels_free(out);
    return status;
  }
  out->setup_s = MPI_Wtime() - start;
  return CLMG_SUCCESS;
}
