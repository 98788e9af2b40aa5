/* The per-step values of the Crouzeix-Raviart Oseen systems on the device
 * (lib/flow/stokes_device.c), as in Bauer, Klement, Oberhuber and Zabka,
 * "Implementation of the Vanka-type multigrid solver for the finite element
 * approximation of the Navier-Stokes equations on GPU" (section 5.3): what
 * does not change from step to step (viscosity, mass, pressure coupling,
 * Dirichlet rows) is copied from a stored matrix, then the upwinded
 * convection of the new wind is added triangle by triangle, colour by
 * colour, so that no two work-items of a launch write the same entry.
 * lib/flow/stokes.c (cell_convection) is the host reference: the same
 * fluxes and weights, in the same order. */

/* Adds the convection of the triangles of one colour (order[first ...
 * first + count)) to the velocity rows of both components. Per triangle:
 * its edges; normals, for each vertex c, |Gamma| n of the segment from the
 * barycentre to c (rotated x_c - S), out of the region of the edge after c,
 * then for each edge its outward |e| n where it is a do-nothing edge, else 0;
 * positions, for component, row edge i and column edge j, the entry's
 * index in values, -1 where the row is Dirichlet (nothing to add) or -2
 * where the column is (the term moves to b with the column's value, when
 * b is given: with_rhs). With newton, also the Newton term
 * (clmg_stokes_problem.newton; lib/flow/stokes.c, cell_convection): the
 * derivative J of the convection n(w) w by the wind, newton_positions
 * giving per triangle, for component c of row edge i and component d of
 * column edge j, the entry's position (36: 18 c + 6 i + 3 d + j), -1 or
 * -2 as above, and with_rhs J w added to b's free rows (and its moved
 * Dirichlet columns' terms). */
kernel void stokes_convection(ulong first, ulong count, global const int *order,
                              global const int *cell_edges, ulong num_edges,
                              global const real *normals, global const int *positions,
                              global const real *wind, ulong wind_offset, real viscosity,
                              int full_upwind, real delta, global const real *dirichlet_value,
                              int with_rhs, int newton, global const int *newton_positions,
                              global real *values, ulong values_offset, global real *b,
                              ulong b_offset) {
  wind += wind_offset;
  values += values_offset;
  b += b_offset;
  order += first;
  GRID_LOOP(p, count) {
    const size_t k = (size_t)order[p];
    int e[3];
    real w[3][2], n[3][3], jac[2][3][2][3];
    for (int i = 0; i < 3; ++i) {
      e[i] = cell_edges[3 * k + i];
      w[i][0] = wind[e[i]];
      w[i][1] = wind[num_edges + e[i]];
      for (int j = 0; j < 3; ++j) {
        n[i][j] = 0;
        for (int c = 0; c < 2; ++c)
          for (int m = 0; m < 2; ++m)
            jac[c][i][m][j] = 0;
      }
    }
    for (int c = 0; c < 3; ++c) {
      const int a = (c + 1) % 3, d = (c + 2) % 3;
      real mid[2];
      for (int m = 0; m < 2; ++m)
        mid[m] = (2 * (w[a][m] + w[d][m]) - w[c][m]) / 3;
      const real flux = mid[0] * normals[12 * k + 2 * c] + mid[1] * normals[12 * k + 2 * c + 1];
      for (int s = 0; s < 2; ++s) {
        const real f = s ? -flux : flux;
        const int from = s ? d : a, to = s ? a : d;
        real coefficient, slope; /* F (1 - lambda) and its derivative by F */
        if (full_upwind) {
          coefficient = f < 0 ? f : 0;
          slope = f < 0 ? 1 : 0;
        } else if (delta == 0) {
          coefficient = (real)0.5 * f;
          slope = (real)0.5;
        } else if (f >= 0) {
          const real q = viscosity + delta * f;
          coefficient = (real)0.5 * f * viscosity / q;
          slope = (real)0.5 * viscosity * viscosity / (q * q);
        } else {
          const real q = viscosity - delta * f;
          coefficient = f * ((real)0.5 * viscosity - delta * f) / q;
          slope = ((real)0.5 * viscosity * viscosity - 2 * delta * viscosity * f +
                   delta * delta * f * f) /
                  (q * q);
        }
        n[from][to] += coefficient;
        n[from][from] -= coefficient;
        if (!newton)
          continue;
        for (int comp = 0; comp < 2; ++comp) {
          const real difference = w[to][comp] - w[from][comp];
          for (int m = 0; m < 2; ++m) {
            const real normal = normals[12 * k + 2 * c + m];
            const real g = slope * (s ? -normal : normal) * difference;
            for (int j = 0; j < 3; ++j)
              jac[comp][from][m][j] += g * (j == c ? (real)-1 : (real)2) / 3;
          }
        }
      }
    }
    /* the directional do-nothing term (lib/flow/stokes_internal.h) */
    for (int i = 0; i < 3; ++i) {
      const real flux =
          w[i][0] * normals[12 * k + 6 + 2 * i] + w[i][1] * normals[12 * k + 7 + 2 * i];
      if (flux < 0) {
        n[i][i] -= (real)0.5 * flux;
        for (int comp = 0; comp < 2 && newton; ++comp)
          for (int m = 0; m < 2; ++m)
            jac[comp][i][m][i] -= (real)0.5 * normals[12 * k + 6 + 2 * i + m] * w[i][comp];
      }
    }
    for (int component = 0; component < 2; ++component)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const int position = positions[18 * k + 9 * component + 3 * i + j];
          if (position >= 0)
            values[position] += n[i][j];
          else if (position == -2 && with_rhs)
            b[component * num_edges + e[i]] -=
                n[i][j] * dirichlet_value[component * num_edges + e[j]];
        }
    for (int comp = 0; comp < 2 && newton; ++comp)
      for (int i = 0; i < 3; ++i) {
        real load = 0;
        for (int m = 0; m < 2; ++m)
          for (int j = 0; j < 3; ++j) {
            const real value = jac[comp][i][m][j];
            const int position = newton_positions[36 * k + 18 * comp + 6 * i + 3 * m + j];
            if (position >= 0)
              values[position] += value;
            else if (position == -2 && with_rhs)
              b[comp * num_edges + e[i]] -= value * dirichlet_value[m * num_edges + e[j]];
            load += value * w[j][m];
          }
        /* J w on a free row: its diagonal's position is not -1 */
        if (with_rhs && newton_positions[36 * k + 18 * comp + 6 * i + 3 * comp + i] != -1)
          b[comp * num_edges + e[i]] += load;
      }
  }
}

/* The wind of a coarser level: each coarse edge the mean of its two halves
 * (halves: 2 fine edges per coarse edge), both components. */
kernel void stokes_restrict_velocity(ulong coarse_edges, global const int *halves, ulong fine_edges,
                                     global const real *fine, ulong fine_offset,
                                     global real *coarse, ulong coarse_offset) {
  fine += fine_offset;
  coarse += coarse_offset;
  GRID_LOOP(e, coarse_edges) {
    const size_t h0 = (size_t)halves[2 * e], h1 = (size_t)halves[2 * e + 1];
    coarse[e] = (real)0.5 * fine[h0] + (real)0.5 * fine[h1];
    coarse[coarse_edges + e] =
        (real)0.5 * fine[fine_edges + h0] + (real)0.5 * fine[fine_edges + h1];
  }
}

/* The time term of the right-hand side: b_i += weight_i previous_i on the
 * velocity rows (weight: the reaction times the lumped mass, 0 on
 * Dirichlet rows). */
kernel void stokes_add_previous(ulong n, global const real *weight, global const real *previous,
                                ulong previous_offset, global real *b, ulong b_offset) {
  previous += previous_offset;
  b += b_offset;
  GRID_LOOP(i, n) {
    b[i] += weight[i] * previous[i];
  }
}
