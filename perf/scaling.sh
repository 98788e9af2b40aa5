#!/usr/bin/env bash
# Weak and strong scaling of clmg_mpi: runs build/perf/clmg_perf_scaling
# under mpiexec with 1, 2 and 4 ranks (RANKS) and prints the tables of
# perf/scaling_table.py (and keeps every run's JSON line).
#
#   strong: the same problems on every rank count (STRONG, default CIRCLE
#           level 8 and a 3D box of 4^3 cells refined 4 times);
#   weak:   the unknowns per rank held (about) fixed: a 2D box whose coarse
#           cells per direction grow with sqrt(ranks) (WEAK_2D = "N LEVELS"),
#           a 3D box growing with cbrt(ranks) (WEAK_3D), and CIRCLE level L
#           on 1 rank against level L + 1 (4 times the unknowns) on 4
#           (WEAK_CIRCLE = L).
#
# Ranks share the device named by DEVICE (default pocl: the CPU; in the
# strong runs each rank's pocl gets nproc / ranks threads, in the weak runs
# nproc / the most ranks, so that four ranks have four times one rank's
# cores; ranks are not bound to cores); DEVICE=gpu gives every rank of
# the host a GPU of its own in turn (several ranks share one when there are
# fewer GPUs than ranks).
#
# Environment knobs: BUILD (default build), MPIEXEC (default mpiexec),
# RANKS ("1 2 4"), DEVICE (pocl), STRONG, WEAK_2D ("24 6"), WEAK_3D ("3 4"),
# WEAK_CIRCLE (7), MIN_TIME (0.2 s per timed loop), CG_MAX (PCG's iteration cap,
# default 20000: to 1e-8), GATHER_ROWS (the levels with at most this many rows
# run whole on every rank; default 0: none), OUT (the JSON lines,
# default scaling.jsonl in the current directory; appended to).
# Usage: perf/scaling.sh
set -uo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-${repo_root}/build}"
mpiexec="${MPIEXEC:-mpiexec}"
ranks_list="${RANKS:-1 2 4}"
device="${DEVICE:-pocl}"
strong="${STRONG:-circle:8 box3:4:4}"
read -r weak2_cells weak2_levels <<<"${WEAK_2D:-24 6}"
read -r weak3_cells weak3_levels <<<"${WEAK_3D:-3 4}"
weak_circle="${WEAK_CIRCLE:-7}"
min_time="${MIN_TIME:-0.2}"
out="${OUT:-scaling.jsonl}"
program="${build}/perf/clmg_perf_scaling"
[[ -x "${program}" ]] || {
  echo "scaling.sh: ${program} is missing (configure with MPI: libopenmpi-dev)" >&2
  exit 2
}
cores="$(nproc)"
flags=()
if "${mpiexec}" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  # Open MPI binds each of one or two ranks to a single core by default:
  # a rank's pocl threads and its host assembly would then share that core
  flags=(--oversubscribe --bind-to none -x POCL_MAX_PTHREAD_COUNT -x CLMG_DEVICE)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
device_args=()
[[ "${device}" != "gpu" ]] && device_args=(--device "${device}")
failed=0

# pocl threads per rank: strong runs split the cores (cores / ranks), weak
# runs give every rank the same share (cores / the most ranks), so that N
# ranks have N times the hardware for N times the work
most_ranks=1
for ranks in ${ranks_list}; do
  ((ranks > most_ranks)) && most_ranks=${ranks}
done
run() { # run RANKS PROBLEM [THREADS]
  local ranks="$1" problem="$2" threads="${3:-$((cores / ranks))}"
  export POCL_MAX_PTHREAD_COUNT=$((threads > 0 ? threads : 1))
  echo "--- ${problem} on ${ranks} rank(s)"
  "${mpiexec}" -n "${ranks}" "${flags[@]}" "${program}" --problem "${problem}" \
    "${device_args[@]}" --min-time "${min_time}" --cg-max "${CG_MAX:-20000}" \
    --gather-rows "${GATHER_ROWS:-0}" --output "${out}" ||
    failed=1
}

round() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]))))" "$1"; }

for problem in ${strong}; do
  for ranks in ${ranks_list}; do
    run "${ranks}" "${problem}"
  done
done
weak_threads=$((cores / most_ranks))
for ranks in ${ranks_list}; do
  run "${ranks}" "box2:$(round "$(python3 -c "print(${weak2_cells} * ${ranks} ** 0.5)")"):${weak2_levels}" \
    "${weak_threads}"
  run "${ranks}" "box3:$(round "$(python3 -c "print(${weak3_cells} * ${ranks} ** (1 / 3))")"):${weak3_levels}" \
    "${weak_threads}"
done
run 1 "circle:${weak_circle}" "${weak_threads}"
for ranks in ${ranks_list}; do
  [[ "${ranks}" == 4 ]] && run 4 "circle:$((weak_circle + 1))" "${weak_threads}"
done
python3 "${repo_root}/perf/scaling_table.py" "${out}" || failed=1
exit "${failed}"
