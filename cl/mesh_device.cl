/* Quadrilateral and hexahedral meshes on the device (lib/mesh/mesh_device.c):
 * the entry-to-owner adjacency (vertex -> cells, DOF -> cells), the
 * degree-2 nodes of a mesh, its uniform refinement with projection of new
 * boundary vertices onto curved boundary parts and the quality screen of
 * the children, and the Dirichlet marks of a level's DOFs.
 *
 * Every kernel reproduces a host function of lib/mesh/mesh.c, refine.c or
 * lib/fe/assembly.c exactly: the nodes are numbered as the host numbers them (an
 * edge or face belongs to the first cell, in cell order, that has it, and
 * each cell numbers the entities it owns in node order), coordinates are
 * summed in the same order with the same operations (contraction into fused
 * multiply-adds is off, so the results are bit-identical), and the screen
 * and projection are the host's formulas.
 *
 * Build options: MESH_DIM (2 or 3). The kernels with coordinates need
 * REAL_IS_DOUBLE; without it (a device without fp64) only the adjacency,
 * numbering and Dirichlet kernels that need none are built.
 * The node tables come from the host (clmg_tensor_node_table), in the
 * layout of the T_* macros below. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef MESH_DIM
#define MESH_DIM 2
#endif
#define CORNERS (1 << MESH_DIM)
#define NODES (MESH_DIM == 2 ? 9 : 27)
#define EDGES (MESH_DIM == 2 ? 4 : 12)
#define FACES (MESH_DIM == 2 ? 0 : 6)
#define FACE_CORNERS (1 << (MESH_DIM - 1))
#define FACE_NODES (MESH_DIM == 2 ? 3 : 9)

/* The table: per edge (node, 2 local corners), per face (node, 4 local
 * corners), the centre (node, CORNERS local corners), the corners' nodes,
 * then each child's corners as parent nodes. */
#define T_EDGE(i, m) table[(i) * 3 + (m)]
#define T_FACE(i, m) table[EDGES * 3 + (i) * 5 + (m)]
#define T_CENTRE(m) table[EDGES * 3 + FACES * 5 + (m)]
#define T_CORNER(i) table[EDGES * 3 + FACES * 5 + 1 + CORNERS + (i)]
#define T_CHILD(c, corner) table[EDGES * 3 + FACES * 5 + 1 + 2 * CORNERS + (c) * CORNERS + (corner)]

/* ---- adjacency: entries k = owner * per_owner + local of a flat array ---- */

kernel void adjacency_count(ulong entries, global const int *targets, global uint *count) {
  GRID_LOOP(k, entries) { atomic_inc(&count[targets[k]]); }
}

/* cursor: the counts, taken down to 0, so that they need no second zeroing
 * (an entry's place counts back from the end of its target's list: the
 * first served goes first). */
kernel void adjacency_fill(ulong entries, global const int *targets, global const long *start,
                           global uint *cursor, global long *list) {
  GRID_LOOP(k, entries) {
    const int target = targets[k];
    list[start[target + 1] - (long)atomic_dec(&cursor[target])] = (long)k;
  }
}

/* Increasing order: the order the atomics served the entries in is lost. */
kernel void adjacency_sort(ulong n, global const long *start, global long *list) {
  GRID_LOOP(i, n) {
    const long begin = start[i], end = start[i + 1];
    for (long k = begin + 1; k < end; ++k) {
      const long value = list[k];
      long p = k;
      while (p > begin && list[p - 1] > value) {
        list[p] = list[p - 1];
        --p;
      }
      list[p] = value;
    }
  }
}

/* ---- entities ---- */

/* Whether `cell` has the entity with these `count` distinct vertices: 2^j
 * corners that agree on all but j reference coordinates (as the host's
 * cell_has_entity); position gets their local corners. */
inline int cell_has_entity(global const int *cell, const int *vertices, int count, int *position) {
  for (int m = 0; m < count; ++m) {
    int c = 0;
    while (c < CORNERS && cell[c] != vertices[m])
      ++c;
    if (c == CORNERS)
      return 0;
    position[m] = c;
  }
  int differing = 0;
  for (int m = 1; m < count; ++m)
    differing |= position[m] ^ position[0];
  return 1 << popcount(differing) == count;
}

/* The first cell (in cell order) that has the entity, and the entity's
 * local corners in it: the cells around its first vertex come sorted. */
inline int entity_owner(global const int *cells, global const long *start, global const long *list,
                        const int *vertices, int count, int *position) {
  for (long a = start[vertices[0]]; a < start[vertices[0] + 1]; ++a) {
    const int k = (int)(list[a] / CORNERS);
    if (cell_has_entity(cells + (long)k * CORNERS, vertices, count, position))
      return k;
  }
  return -1;
}

/* The degree-2 node of a cell on the entity at these local corners. */
inline int entity_node(const int *position, int count) {
  int differing = 0;
  for (int m = 1; m < count; ++m)
    differing |= position[m] ^ position[0];
  int node = 0;
  for (int axis = MESH_DIM - 1; axis >= 0; --axis)
    node = 3 * node + ((differing >> axis) & 1 ? 1 : 2 * ((position[0] >> axis) & 1));
  return node;
}

/* Sorts count (2, 4 or 8) values in place. */
inline void sort_small(int *values, int count) {
  for (int i = 1; i < count; ++i) {
    const int v = values[i];
    int p = i;
    while (p > 0 && values[p - 1] > v) {
      values[p] = values[p - 1];
      --p;
    }
    values[p] = v;
  }
}

#ifdef REAL_IS_DOUBLE /* coordinates */
/* The mean of the vertices, summed in increasing vertex order (the host's
 * entity_mean), into node_coords[node]. */
inline void entity_mean(global const double *coords, int *vertices, int count, long node,
                        global double *node_coords) {
  sort_small(vertices, count);
  for (int d = 0; d < MESH_DIM; ++d) {
    double sum = 0.0;
    for (int i = 0; i < count; ++i)
      sum += coords[(long)vertices[i] * MESH_DIM + d];
    node_coords[node * MESH_DIM + d] = sum / count;
  }
}

#endif

/* Bit i (edges) and EDGES + i (faces) of owned[k]: cell k is the first to
 * have that entity; the counts of owned edges and faces per cell. */
kernel void mesh_own_entities(ulong num_cells, global const int *cells, global const long *start,
                              global const long *list, global const int *table,
                              global uint *owned, global uint *edge_count,
                              global uint *face_count) {
  GRID_LOOP(k, num_cells) {
    global const int *cell = cells + k * CORNERS;
    uint bits = 0, edges = 0, faces = 0;
    for (int i = 0; i < EDGES; ++i) {
      int vertices[2] = {cell[T_EDGE(i, 1)], cell[T_EDGE(i, 2)]}, position[2];
      if (entity_owner(cells, start, list, vertices, 2, position) == (int)k) {
        bits |= 1u << i;
        ++edges;
      }
    }
    for (int i = 0; i < FACES; ++i) {
      int vertices[4], position[4];
      for (int m = 0; m < 4; ++m)
        vertices[m] = cell[T_FACE(i, m + 1)];
      if (entity_owner(cells, start, list, vertices, 4, position) == (int)k) {
        bits |= 1u << (EDGES + i);
        ++faces;
      }
    }
    owned[k] = bits;
    edge_count[k] = edges;
    face_count[k] = faces;
  }
}

#ifdef REAL_IS_DOUBLE /* coordinates */
/* The nodes a cell owns (its corners, owned edges and faces, its centre)
 * and their coordinates: vertices first, then the edges, the faces and the
 * cells, each in the order the cells first meet them. */
kernel void mesh_number_nodes(ulong num_cells, global const int *cells,
                              global const double *coords, ulong num_vertices, ulong num_edges,
                              ulong num_faces, global const uint *owned,
                              global const long *edge_start, global const long *face_start,
                              global const int *table, global int *nodes,
                              global double *node_coords) {
  GRID_LOOP(k, num_cells) {
    global const int *cell = cells + k * CORNERS;
    global int *own = nodes + k * NODES;
    const uint bits = owned[k];
    for (int i = 0; i < CORNERS; ++i)
      own[T_CORNER(i)] = cell[i];
    long next = (long)num_vertices + edge_start[k];
    for (int i = 0; i < EDGES; ++i) {
      if (!((bits >> i) & 1))
        continue;
      int vertices[2] = {cell[T_EDGE(i, 1)], cell[T_EDGE(i, 2)]};
      own[T_EDGE(i, 0)] = (int)next;
      entity_mean(coords, vertices, 2, next, node_coords);
      ++next;
    }
    next = (long)(num_vertices + num_edges) + face_start[k];
    for (int i = 0; i < FACES; ++i) {
      if (!((bits >> (EDGES + i)) & 1))
        continue;
      int vertices[4];
      for (int m = 0; m < 4; ++m)
        vertices[m] = cell[T_FACE(i, m + 1)];
      own[T_FACE(i, 0)] = (int)next;
      entity_mean(coords, vertices, 4, next, node_coords);
      ++next;
    }
    const long centre = (long)(num_vertices + num_edges + num_faces) + (long)k;
    int vertices[CORNERS];
    for (int m = 0; m < CORNERS; ++m)
      vertices[m] = cell[T_CENTRE(m + 1)];
    own[T_CENTRE(0)] = (int)centre;
    entity_mean(coords, vertices, CORNERS, centre, node_coords);
  }
}

#endif

/* The nodes on the entities a cell does not own, from their owners (which
 * mesh_number_nodes has numbered). */
kernel void mesh_resolve_nodes(ulong num_cells, global const int *cells, global const long *start,
                               global const long *list, global const uint *owned,
                               global const int *table, global int *nodes) {
  GRID_LOOP(k, num_cells) {
    global const int *cell = cells + k * CORNERS;
    global int *own = nodes + k * NODES;
    const uint bits = owned[k];
    for (int i = 0; i < EDGES; ++i) {
      if ((bits >> i) & 1)
        continue;
      int vertices[2] = {cell[T_EDGE(i, 1)], cell[T_EDGE(i, 2)]}, position[2];
      const int owner = entity_owner(cells, start, list, vertices, 2, position);
      own[T_EDGE(i, 0)] = nodes[(long)owner * NODES + entity_node(position, 2)];
    }
    for (int i = 0; i < FACES; ++i) {
      if ((bits >> (EDGES + i)) & 1)
        continue;
      int vertices[4], position[4];
      for (int m = 0; m < 4; ++m)
        vertices[m] = cell[T_FACE(i, m + 1)];
      const int owner = entity_owner(cells, start, list, vertices, 4, position);
      own[T_FACE(i, 0)] = nodes[(long)owner * NODES + entity_node(position, 4)];
    }
  }
}

/* The children of every cell: child c's corner q is parent node
 * T_CHILD(c, q), and the children of cell k are cells CORNERS k + c. */
kernel void mesh_children(ulong num_cells, global const int *nodes, global const int *table,
                          global int *fine_cells) {
  GRID_LOOP(k, num_cells) {
    global const int *own = nodes + k * NODES;
    for (int c = 0; c < CORNERS; ++c)
      for (int q = 0; q < CORNERS; ++q)
        fine_cells[(k * CORNERS + c) * CORNERS + q] = own[T_CHILD(c, q)];
  }
}

/* ---- boundary faces ---- */

/* The cell that has boundary face `face` (exactly one, on a valid mesh;
 * -1 otherwise) and the face's local corners in it. */
inline int boundary_face_cell(global const int *cells, global const long *start,
                              global const long *list, global const int *face, int *position) {
  int vertices[FACE_CORNERS], corners_in_cell[FACE_CORNERS];
  for (int m = 0; m < FACE_CORNERS; ++m)
    vertices[m] = face[m];
  int found = -1, count = 0;
  for (long a = start[vertices[0]]; a < start[vertices[0] + 1]; ++a) {
    const int k = (int)(list[a] / CORNERS);
    if (!cell_has_entity(cells + (long)k * CORNERS, vertices, FACE_CORNERS, corners_in_cell))
      continue;
    if (count++ == 0) {
      found = k;
      for (int m = 0; m < FACE_CORNERS; ++m)
        position[m] = corners_in_cell[m];
    }
  }
  return count == 1 ? found : -1;
}

#ifdef REAL_IS_DOUBLE /* coordinates */
/* Shapes: SHAPE_VALUES doubles each (tag, kind, centre[3], axis[3],
 * radius); kind 0 is flat. The first shape of a tag with a kind is its
 * shape (the host's shape_of_tag); -1 when none. */
#define SHAPE_VALUES 9
inline int shape_of_tag(global const double *shapes, uint num_shapes, int tag) {
  for (uint s = 0; s < num_shapes; ++s)
    if ((int)shapes[s * SHAPE_VALUES] == tag && shapes[s * SHAPE_VALUES + 1] != 0.0)
      return (int)s;
  return -1;
}

/* Each boundary face's children and tags; the new vertices on a face of a
 * curved part are marked for projection with 1 + the face's index (the
 * last such face wins, as on the host). flags[0] gets the first face that
 * is not a face of exactly one cell. */
kernel void mesh_refine_faces(ulong num_faces, global const int *faces, global const int *tags,
                              global const int *cells, global const long *start,
                              global const long *list, global const int *nodes,
                              ulong num_vertices, global const double *shapes, uint num_shapes,
                              global int *fine_faces, global int *fine_tags, global int *marks,
                              global int *flags) {
  GRID_LOOP(f, num_faces) {
    global const int *face = faces + f * FACE_CORNERS;
    int position[FACE_CORNERS];
    const int k = boundary_face_cell(cells, start, list, face, position);
    if (k < 0) {
      atomic_min(&flags[0], (int)f);
      continue;
    }
    int face_nodes[FACE_NODES];
    for (int node = 0; node < FACE_NODES; ++node) {
      const int digit[2] = {node % 3, node / 3};
      int cell_node = 0, stride = 1;
      for (int axis = 0; axis < MESH_DIM; ++axis, stride *= 3) {
        int twice = 0, total = 0;
        for (int m = 0; m < FACE_CORNERS; ++m) {
          int weight = 1;
          for (int face_axis = 0; face_axis < MESH_DIM - 1; ++face_axis)
            weight *= ((m >> face_axis) & 1) ? digit[face_axis] : 2 - digit[face_axis];
          twice += weight * 2 * ((position[m] >> axis) & 1);
          total += weight;
        }
        cell_node += (twice / total) * stride;
      }
      face_nodes[node] = nodes[(long)k * NODES + cell_node];
    }
    const int tag = tags[f];
    if (shape_of_tag(shapes, num_shapes, tag) >= 0)
      for (int node = 0; node < FACE_NODES; ++node)
        if (node % 3 == 1 || node / 3 == 1)
          atomic_max(&marks[(long)face_nodes[node] - (long)num_vertices], (int)f + 1);
    for (int c = 0; c < FACE_CORNERS; ++c) {
      const long fine_face = (long)f * FACE_CORNERS + c;
      for (int corner = 0; corner < FACE_CORNERS; ++corner) {
        const int node =
            ((c & 1) + (corner & 1)) + 3 * (((c >> 1) & 1) + ((corner >> 1) & 1));
        fine_faces[fine_face * FACE_CORNERS + corner] = face_nodes[node];
      }
      fine_tags[fine_face] = tag;
    }
  }
}

/* Moves the marked new vertices onto their shapes (the host's project):
 * radially from the centre (circle) or from the axis line (cylinder).
 * flags[1] gets the first vertex on the centre or the axis. */
kernel void mesh_project(ulong num_new, ulong num_vertices, global const int *marks,
                         global const int *tags, global const double *shapes, uint num_shapes,
                         global double *coords, global int *flags) {
  GRID_LOOP(i, num_new) {
    const int mark = marks[i];
    if (!mark)
      continue;
    global const double *shape =
        shapes + shape_of_tag(shapes, num_shapes, tags[mark - 1]) * SHAPE_VALUES;
    global double *x = coords + (num_vertices + i) * MESH_DIM;
    double offset[3] = {0.0, 0.0, 0.0};
    for (int d = 0; d < MESH_DIM; ++d)
      offset[d] = x[d] - shape[2 + d];
    if (shape[1] == 2.0) { /* cylinder */
      double axis_squared = 0.0, along = 0.0;
      for (int d = 0; d < 3; ++d) {
        axis_squared += shape[5 + d] * shape[5 + d];
        along += offset[d] * shape[5 + d];
      }
      for (int d = 0; d < 3; ++d)
        offset[d] -= along / axis_squared * shape[5 + d];
    }
    double distance = 0.0;
    for (int d = 0; d < MESH_DIM; ++d)
      distance += offset[d] * offset[d];
    distance = sqrt(distance);
    const double radius = shape[8];
    if (!(distance > 1e-14 * radius)) {
      atomic_min(&flags[1], (int)(num_vertices + i));
      continue;
    }
    for (int d = 0; d < MESH_DIM; ++d)
      x[d] += (radius / distance - 1.0) * offset[d];
  }
}

/* ---- the quality screen of the children (the host's
 * clmg_tensor_children_certainly_valid) ---- */

#define SCREEN_QUALITY (2.0 * 1e-12)
#define SCREEN_SMALLEST_SQUARE 0x1p-300
#define SCREEN_LARGEST_SQUARE 0x1p300

/* Parents a work-item screens at once: on CPUs (-DCLMG_CPU) a vector of
 * SCREEN_LANES, so that each operation is one SIMD instruction (pocl does
 * not vectorise the work-items' loops over their runs); on GPUs one, the
 * work-items being the lanes. Each lane computes what the scalar code
 * does, operation for operation (no contraction): the same screen. A
 * comparison gives a mask: -1 or 0 per lane of a vector, 1 or 0 for a
 * scalar. */
#ifdef CLMG_CPU
#define SCREEN_LANES 8
typedef double8 screen_real;
typedef long8 screen_mask;
typedef long screen_mask_lane;
#define SCREEN_ALL ((screen_mask)-1)
#define SCREEN_VLOAD(p) vload8(0, p)
#define SCREEN_VSTORE_MASK(m, p) vstore8(m, 0, p)
#else
#define SCREEN_LANES 1
typedef double screen_real;
typedef int screen_mask;
typedef int screen_mask_lane;
#define SCREEN_ALL 1
#define SCREEN_VLOAD(p) (*(p))
#define SCREEN_VSTORE_MASK(m, p) (*(p) = (m))
#endif

#define SQUARE_IN_SCREEN_RANGE(squared)                                                            \
  (((squared) >= SCREEN_SMALLEST_SQUARE) & ((squared) <= SCREEN_LARGEST_SQUARE))

inline screen_real determinant(screen_real columns[3][3]) {
#if MESH_DIM == 2
  return columns[0][0] * columns[1][1] - columns[0][1] * columns[1][0];
#else
  return columns[0][0] * (columns[1][1] * columns[2][2] - columns[1][2] * columns[2][1]) -
         columns[1][0] * (columns[0][1] * columns[2][2] - columns[0][2] * columns[2][1]) +
         columns[2][0] * (columns[0][1] * columns[1][2] - columns[0][2] * columns[1][1]);
#endif
}

inline screen_mask determinant_passes(screen_real det, const screen_real *squared) {
  screen_real product = SCREEN_QUALITY * SCREEN_QUALITY;
  for (int axis = 0; axis < MESH_DIM; ++axis)
    product *= squared[axis];
  return (det > 0.0) & (det * det > product);
}

/* The first of parents first .. first + count - 1 (count <= SCREEN_LANES;
 * the lanes past count repeat the last parent) whose children the screen
 * does not clear, or INT_MAX. */
inline int screen_block(ulong first, uint count, global const int *nodes,
                        global const double *coords) {
  const int stride[3] = {1, 3, 9}, layers = MESH_DIM == 2 ? 1 : 3;
  screen_real edges[MESH_DIM][NODES][MESH_DIM], squared[MESH_DIM][NODES];
  screen_mask passes = SCREEN_ALL;
  for (int axis = 0; axis < MESH_DIM; ++axis)
    for (int l = 0; l < layers; ++l)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
          const int digit[3] = {i, j, l}, node = i + 3 * j + 9 * l;
          if (digit[axis] == 2)
            continue;
          screen_real sum = 0.0;
          for (int d = 0; d < MESH_DIM; ++d) {
            double from[SCREEN_LANES], to[SCREEN_LANES];
            for (uint lane = 0; lane < SCREEN_LANES; ++lane) {
              global const int *parent = nodes + (first + min(lane, count - 1)) * NODES;
              from[lane] = coords[(long)parent[node] * MESH_DIM + d];
              to[lane] = coords[(long)parent[node + stride[axis]] * MESH_DIM + d];
            }
            edges[axis][node][d] = SCREEN_VLOAD(to) - SCREEN_VLOAD(from);
            sum += edges[axis][node][d] * edges[axis][node][d];
          }
          squared[axis][node] = sum;
          passes &= SQUARE_IN_SCREEN_RANGE(sum);
        }
  for (int child = 0; child < CORNERS; ++child)
    for (int corner = 0; corner < CORNERS; ++corner) {
      int node = 0;
      for (int axis = 0; axis < MESH_DIM; ++axis)
        node += (((child >> axis) & 1) + ((corner >> axis) & 1)) * stride[axis];
      screen_real columns[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, corner_squared[3];
      for (int axis = 0; axis < MESH_DIM; ++axis) {
        const int from = node - ((corner >> axis) & 1) * stride[axis];
        for (int d = 0; d < MESH_DIM; ++d)
          columns[axis][d] = edges[axis][from][d];
        corner_squared[axis] = squared[axis][from];
      }
      passes &= determinant_passes(determinant(columns), corner_squared);
    }
  screen_mask_lane lanes[SCREEN_LANES];
  SCREEN_VSTORE_MASK(passes, lanes);
  for (uint lane = 0; lane < count; ++lane)
    if (!lanes[lane])
      return (int)(first + lane);
  return INT_MAX;
}

/* flags[2] gets the first parent whose children the screen does not clear
 * (they may still be valid: the host then checks them in full). */
kernel void mesh_screen_children(ulong num_cells, global const int *nodes,
                                 global const double *coords, global int *flags) {
  int first_unclear = INT_MAX;
#ifdef CLMG_CPU
  WORK_ITEM_RANGE(num_cells);
  for (ulong first = begin_; first < end_ && first_unclear == INT_MAX; first += SCREEN_LANES)
    first_unclear =
        screen_block(first, (uint)min((ulong)SCREEN_LANES, end_ - first), nodes, coords);
#else
  GRID_LOOP(k, num_cells) {
    if (first_unclear == INT_MAX)
      first_unclear = screen_block(k, 1, nodes, coords);
  }
#endif
  if (first_unclear != INT_MAX)
    atomic_min(&flags[2], first_unclear);
}

#endif

/* ---- Dirichlet DOFs ---- */

/* Whether the tag is one of the Dirichlet tags (none listed: every tag). */
inline int is_dirichlet_tag(global const int *dirichlet_tags, uint num_dirichlet_tags, int tag) {
  if (num_dirichlet_tags == 0)
    return 1;
  for (uint t = 0; t < num_dirichlet_tags; ++t)
    if (dirichlet_tags[t] == tag)
      return 1;
  return 0;
}

/* The DOFs on the Dirichlet boundary faces, found through the face's cell
 * (cell_dofs: per_axis^dim DOFs per cell in tensor order), in three passes
 * that give each DOF the tag the host gives it: the first cell, in cell
 * order, and then the first of its faces (2 axis + side) that has it.
 * Pass 0 marks the DOFs (mask) and takes the smallest cell (first_cell,
 * INT_MAX before); pass 1 the smallest face of that cell (first_side,
 * INT_MAX before); pass 2 writes the tags. */
kernel void mesh_dirichlet_dofs(uint pass, ulong num_faces, global const int *faces,
                                global const int *tags, global const int *dirichlet_tags,
                                uint num_dirichlet_tags, global const int *cells,
                                global const long *start, global const long *list,
                                global const int *cell_dofs, uint per_axis, global uint *mask,
                                global int *first_cell, global int *first_side,
                                global int *tag_of) {
  GRID_LOOP(f, num_faces) {
    const int tag = tags[f];
    if (!is_dirichlet_tag(dirichlet_tags, num_dirichlet_tags, tag))
      continue;
    int position[FACE_CORNERS];
    const int k = boundary_face_cell(cells, start, list, faces + f * FACE_CORNERS, position);
    if (k < 0)
      continue; /* not on a valid mesh */
    int differing = 0;
    for (int m = 1; m < FACE_CORNERS; ++m)
      differing |= position[m] ^ position[0];
    int axis = 0;
    while ((differing >> axis) & 1)
      ++axis;
    const int side = (position[0] >> axis) & 1;
    const int face_key = 2 * axis + side;
    const int dofs = MESH_DIM == 2 ? (int)(per_axis * per_axis)
                                   : (int)(per_axis * per_axis * per_axis);
    const int axis_stride = axis == 0 ? 1 : axis == 1 ? (int)per_axis : (int)(per_axis * per_axis);
    for (int node = 0; node < dofs; ++node) {
      if ((node / axis_stride) % (int)per_axis != side * (int)(per_axis - 1))
        continue;
      const int dof = cell_dofs[(long)k * dofs + node];
      if (pass == 0) {
        mask[dof] = 1;
        atomic_min(&first_cell[dof], k);
      } else if (first_cell[dof] == k) {
        if (pass == 1)
          atomic_min(&first_side[dof], face_key);
        else if (first_side[dof] == face_key)
          tag_of[dof] = tag;
      }
    }
  }
}

#ifdef REAL_IS_DOUBLE /* coordinates */
/* The listed DOFs' points (their coordinates, from the vertices or the
 * degree-2 nodes) and tags, MESH_DIM + 1 doubles each: what the host needs
 * to evaluate g there. */
kernel void mesh_dof_points(ulong count, global const uint *list, global const double *coords,
                            global const int *tag_of, global double *points) {
  GRID_LOOP(k, count) {
    const long dof = list[k];
    for (int d = 0; d < MESH_DIM; ++d)
      points[k * (MESH_DIM + 1) + d] = coords[dof * MESH_DIM + d];
    points[k * (MESH_DIM + 1) + MESH_DIM] = tag_of[dof];
  }
}

/* values[k] into dense[list[k]]. */
kernel void mesh_scatter(ulong count, global const uint *list, global const double *values,
                         global double *dense) {
  GRID_LOOP(k, count) { dense[list[k]] = values[k]; }
}
#endif
