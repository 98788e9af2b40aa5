/** @file
 * clmg: a vendor-neutral OpenCL multigrid and sparse solver library.
 * This umbrella header includes the whole public C API. */
#ifndef CLMG_H
#define CLMG_H

#include "clmg/core.h"
#include "clmg/vector.h"
#include "clmg/sparse.h"
#include "clmg/krylov.h"
#include "clmg/multigrid.h"
#include "clmg/amg.h"
#include "clmg/solver.h"
#include "clmg/mesh.h"
#include "clmg/fem.h"
#include "clmg/fe_solve.h"
#include "clmg/spd_problems.h"
#include "clmg/homg.h"
#include "clmg/assembly.h"
#include "clmg/stokes.h"
#include "clmg/flow.h"
#include "clmg/navier_stokes.h"
#include "clmg/output_file.h"

#endif
