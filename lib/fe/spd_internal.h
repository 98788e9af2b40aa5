/* Internal interface of the SPD test problems (include/clmg/spd_problems.h):
 * the builders of spd_elasticity.c and spd_dg.c, which spd_problems.c calls
 * once it has checked the options. Not installed. */
#ifndef CLMG_SPD_INTERNAL_H
#define CLMG_SPD_INTERNAL_H

#include "clmg/spd_problems.h"
#include "fe/fe_internal.h"

/* Linear elasticity with P1 (degree 1) or P2 (degree 2) tetrahedra. The
 * options are checked; *out is zeroed and filled (on failure the caller
 * frees what it holds). */
clmg_status clmg_spd_elasticity(const clmg_spd_problem_options *options, int degree,
                                clmg_spd_problem *out, clmg_error *error);

/* SIPG for the Poisson problem with discontinuous P1 on triangles; as
 * above. */
clmg_status clmg_spd_dg_diffusion(const clmg_spd_problem_options *options, clmg_spd_problem *out,
                                  clmg_error *error);

#endif
