#!/usr/bin/env bash
# Tests and benchmarks clmg on a machine with an NVIDIA GPU and NVIDIA's
# OpenCL driver. It registers the driver with the OpenCL ICD loader (if it is
# not registered yet), installs CLBlast, cmocka and pkg-config from .deps/
# where they are missing (for a machine without network access; see
# perf/fetch-deps.sh), builds clmg in Release, runs the test suites on the
# NVIDIA device, prints `clmg info`, runs the BLAS-1 benchmark on the GPU (n
# up to 1e8) and on pocl (n up to 1e7), the SpMV benchmark on the GPU (large
# matrices, written as Matrix Market for the cuSPARSE baseline), the cuSPARSE
# baseline on the same matrices (perf/cusparse_spmv.py, CuPy) with a
# clmg-vs-cuSPARSE table, the SpMV benchmark on pocl (small matrices), the
# geometric multigrid, HOMG and P1 assembly benchmarks on both, and prints
# short summary tables last.
#
# Usage, from anywhere, as root (it writes /etc/OpenCL/vendors and installs
# packages; as another user, register the driver and install the packages
# first):
#   perf/gpu.sh [--nvidia-opencl PATH]
#
#   --nvidia-opencl PATH  NVIDIA's OpenCL library (libnvidia-opencl.so.1) to
#                         register, the same as NVIDIA_OPENCL_LIBRARY=PATH.
#                         Default: none when /etc/OpenCL/vendors already names
#                         it, else the one ldconfig knows, else
#                         /usr/local/nvidia/lib64/libnvidia-opencl.so.1 (where
#                         NVIDIA's container runtime mounts the driver). A path
#                         that does not exist stops the script with a message.
#
# A machine without network access: run perf/fetch-deps.sh on a Debian 12 (or
# compatible) machine that has it and copy the repository with .deps/ over;
# Python wheels in .whl/ (e.g. pyamg for the AMG baselines) are installed too.
# .hypre/clmg_hypre_pcg (perf/build-hypre-baseline.sh: a static build against
# a sequential hypre, no MPI needed) is the hypre AMG baseline where this
# build has no clmg_hypre_pcg of its own (no hypre or MPI here). The GPU one,
# hypre built with CUDA, is built here by the AMG stage from the source
# tarball in .hypre-src/ (perf/build-hypre-baseline.sh --fetch --gpu where
# there is network, then carry .hypre-src/).
#
# Logs and JSON land in an output directory (OUT, default ./perf-results in
# the repository root):
# setup.log (machine, build, clmg info, ctest), bench.log (every benchmark's
# output) and one JSON file per benchmark and device (blas1-, spmv-, gmg-,
# homg-, assembly-, amg-, flow- gpu/pocl.json, cusparse.json, amg-baselines.json,
# dfg1-levelL.json, cavity-reR.csv/.json/-ghia.json/.png). Skip
# what is not needed (SKIP_*).
#
# Environment knobs (all optional):
#   OUT                the output directory (default ./perf-results)
#   NVIDIA_OPENCL_LIBRARY  as --nvidia-opencl
#   JOBS               parallel build and test jobs (default: nproc)
#   SKIP_TESTS=1       skip ctest (e.g. when only timing)
#   SKIP_BLAS1=1       skip the BLAS-1 benchmarks
#   SKIP_SPMV=1        skip the SpMV benchmarks and the cuSPARSE baseline
#   BLAS1_GPU_ARGS     extra arguments for the GPU benchmark
#   BLAS1_POCL_ARGS    extra arguments for the pocl benchmark
#   SPMV_GPU_ARGS      extra arguments for clmg_perf_spmv on the GPU
#                      (default "--size large --min-time 0.1")
#   SPMV_POCL_ARGS     extra arguments for clmg_perf_spmv on pocl
#                      (default "--size small --min-time 0.1")
#   CUSPARSE_ARGS      extra arguments for perf/cusparse_spmv.py
#   SPMV_MTX_DIR       where the GPU run writes its Matrix Market files (about
#                      7 GB for --size large; default /tmp/clmg-spmv-mtx)
#   SKIP_GMG=1         skip `clmg poisson` and the geometric multigrid benchmark
#   GMG_GPU_ARGS       arguments for clmg_perf_gmg on the GPU (default "--size large
#                      --coarse-rows 2048")
#   GMG_POCL_ARGS      ... on pocl (default "--size small")
#   SKIP_BENCH=1       skip `clmg bench` (GPU, pocl, --compare and bench.html)
#   BENCH_GPU_ARGS     extra arguments for clmg bench on the GPU (default: none,
#                      sizes from the device's memory)
#   BENCH_POCL_ARGS    ... on pocl (default "--size small")
#   SKIP_HOMG=1        skip the HOMG benchmark
#   HOMG_GPU_ARGS      arguments for clmg_perf_homg on the GPU (default "--size large")
#   HOMG_POCL_ARGS     ... on pocl (default "--size small")
#   SKIP_ASSEMBLY=1    skip the P1 assembly benchmark (clmg_perf_assembly)
#   ASSEMBLY_GPU_ARGS  arguments for clmg_perf_assembly on the GPU (default
#                      "--regular-levels 1:3": Regular up to 1.57M tetrahedra)
#   ASSEMBLY_POCL_ARGS ... on pocl (default "--regular-levels 1:2")
#   SKIP_AMG=1         skip the AMG benchmark (clmg_perf_amg) and its baselines
#   AMG_GPU_ARGS       arguments for clmg_perf_amg on the GPU (default
#                      "--regular-levels 3:4 --blobs-level 4")
#   AMG_POCL_ARGS      ... on pocl (default "--regular-levels 1:2 --blobs-level 2")
#   SKIP_AMG_POCL=1    skip clmg_perf_amg on pocl
#   AMG_SPD_PROBLEMS   the SPD test problems written beside the GPU run's
#                      matrices for the baselines, PROBLEM:LEVEL for
#                      clmg_perf_spd_problems (default "elasticity-p1:48
#                      dg-diffusion:256"; empty: none); clmg's numbers on them
#                      come from clmg solve --precond amg
#   AMG_MTX_DIR        where the GPU run writes its matrices for the baselines
#                      (pyamg when importable, hypre when clmg_hypre_pcg was
#                      built or .hypre/ carries it, hypre on the GPU); default
#                      /tmp/clmg-amg-mtx
#   AMG_CPU_MAX_ROWS   run pyamg and CPU hypre only on matrices up to this many
#                      rows (default 0: all)
#   SKIP_HYPRE_GPU=1   no hypre on the GPU: skip building hypre with CUDA
#                      (perf/build-hypre-baseline.sh --gpu, a few minutes on
#                      16 cores; needs .hypre-src/ or network) and its column
#   SKIP_SCALING=1     skip perf/scaling.sh (clmg_mpi: needs an MPI, the
#                      machine's or MPICH carried as a wheel in .whl/)
#   SCALING_WHERE      where its ranks run: "gpu pocl" (default), "gpu" or "pocl"
#   SCALING_GPU_RANKS, SCALING_GPU_STRONG, SCALING_GPU_WEAK_2D, _WEAK_3D,
#   _WEAK_CIRCLE and SCALING_POCL_...: perf/scaling.sh's RANKS, STRONG, ...
#                      (defaults: GPU 1 2 ranks, circle:10 box3:8:4, "32 5",
#                      "6 4", 9; pocl 1 2 4 ranks, circle:8 box3:4:4, "24 6",
#                      "3 4", 7)
#   SKIP_FLOW=1        skip the Navier-Stokes benchmark (clmg_perf_flow), the DFG
#                      2D-1 runs of clmg flow and the cavity profiles against Ghia
#   FLOW_GPU_ARGS      arguments for clmg_perf_flow on the GPU (default "--levels 3:7")
#   FLOW_POCL_ARGS     ... on pocl (default "--levels 3:5")
#   DFG_LEVELS         the DFG 2D-1 levels of clmg flow (default "1 2 3 4 5")
#   CAVITY_LEVEL       the cavity's level for the Ghia comparison (default 6)
#   GPU_DEVICE         device string of the GPU (default nvidia)
#
# Each step's outcome is recorded and the script carries on, so one failing
# step still leaves the others' results; it exits nonzero if any step failed.
set -uo pipefail

nvidia_opencl_library="${NVIDIA_OPENCL_LIBRARY:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
  --nvidia-opencl)
    [[ $# -ge 2 ]] || { echo "gpu.sh: --nvidia-opencl needs a path" >&2; exit 2; }
    nvidia_opencl_library="$2"
    shift 2
    ;;
  --nvidia-opencl=*)
    nvidia_opencl_library="${1#*=}"
    shift
    ;;
  -h | --help)
    sed -n '2,/^set -uo pipefail/{/^set/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
    exit 0
    ;;
  *)
    echo "gpu.sh: unknown argument '$1' (see perf/gpu.sh --help)" >&2
    exit 2
    ;;
  esac
done
if [[ -n "${nvidia_opencl_library}" && ! -e "${nvidia_opencl_library}" ]]; then
  echo "gpu.sh: NVIDIA's OpenCL library ${nvidia_opencl_library} does not exist;" \
    "give its path with --nvidia-opencl PATH or NVIDIA_OPENCL_LIBRARY=PATH" \
    "(it is libnvidia-opencl.so.1, installed with the NVIDIA driver)" >&2
  exit 2
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}" || exit 1
results_dir="${OUT:-${repo_root}/perf-results}"
mkdir -p "${results_dir}"
jobs="${JOBS:-$(nproc)}"
gpu_device="${GPU_DEVICE:-nvidia}"
build_dir="${repo_root}/build-gpu"
setup_log="${results_dir}/setup.log"
bench_log="${results_dir}/bench.log"
mtx_dir="${SPMV_MTX_DIR:-/tmp/clmg-spmv-mtx}"

declare -a step_names=()
declare -a step_results=()
step_started=${SECONDS}
start_step() { step_started=${SECONDS}; }
record() { # record NAME EXIT_CODE: the outcome and the seconds since start_step
  local took="$((SECONDS - step_started))s"
  step_names+=("$1")
  if [[ "$2" -eq 0 ]]; then
    step_results+=("ok (${took})")
  else
    step_results+=("FAILED (exit $2, ${took})")
  fi
}
section() { printf '\n===== %s =====\n' "$*"; }

: >"${setup_log}"
: >"${bench_log}"
{
  section "machine"
  uname -a
  grep PRETTY_NAME /etc/os-release || true
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>/dev/null || true

  section "register NVIDIA OpenCL driver"
  registered="$(grep -ls 'libnvidia-opencl' /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n 1)"
  if [[ -z "${nvidia_opencl_library}" && -n "${registered}" ]]; then
    echo "already registered: ${registered} names $(cat "${registered}")"
  else
    if [[ -z "${nvidia_opencl_library}" ]]; then
      nvidia_opencl_library="$(ldconfig -p | awk '/libnvidia-opencl\.so\.1 / {print $NF; exit}')"
    fi
    if [[ -z "${nvidia_opencl_library}" && -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]]; then
      nvidia_opencl_library=/usr/local/nvidia/lib64/libnvidia-opencl.so.1
    fi
    if [[ -n "${nvidia_opencl_library}" ]]; then
      if mkdir -p /etc/OpenCL/vendors &&
        echo "${nvidia_opencl_library}" >/etc/OpenCL/vendors/nvidia.icd; then
        echo "registered ${nvidia_opencl_library}"
      else
        echo "WARNING: cannot write /etc/OpenCL/vendors/nvidia.icd (run as root, or register" \
          "${nvidia_opencl_library} there yourself)"
      fi
    else
      echo "WARNING: NVIDIA's OpenCL library (libnvidia-opencl.so.1) was not found: no NVIDIA"
      echo "OpenCL device. Give its path with --nvidia-opencl PATH or NVIDIA_OPENCL_LIBRARY=PATH."
    fi
  fi

  section "install missing packages from .deps (perf/fetch-deps.sh)"
  install_from_deps() { # install_from_deps PACKAGE...: dpkg -i the .deps/ debs of the missing ones
    local debs=()
    for package in "$@"; do
      if dpkg-query -W -f='${Status}' "${package}" 2>/dev/null | grep -q "install ok installed"; then
        echo "${package}: already installed"
        continue
      fi
      local found=(.deps/"${package}"_*.deb)
      if [[ -e "${found[0]}" ]]; then
        debs+=("${found[0]}")
      else
        echo "${package}: not installed and no .deps/${package}_*.deb (see perf/fetch-deps.sh)"
      fi
    done
    [[ ${#debs[@]} -eq 0 ]] && return 0
    # Debian's libclblast-dev asks for ocl-icd-opencl-dev, which the machine
    # may lack although it has the loader and headers: force past that.
    dpkg -i "${debs[@]}" || dpkg -i --force-depends "${debs[@]}"
  }
  install_from_deps libclblast1 libclblast-dev
  install_from_deps libcmocka0 libcmocka-dev
  install_from_deps libcjson1 libcjson-dev
  # Python wheels carried in .whl/ (pyamg for the AMG baselines), where the
  # module is missing; the machine has no network, so nothing else is fetched.
  for wheel in .whl/*.whl; do
    [[ -e "${wheel}" ]] || continue
    module="$(basename "${wheel}" | cut -d- -f1)"
    [[ "${module}" == mpich ]] && continue # unpacked below, for clmg_mpi
    if python3 -c "import ${module}" 2>/dev/null; then
      echo "${module}: already importable"
    else
      python3 -m pip install --no-index --no-deps --break-system-packages "${wheel}" ||
        python3 -m pip install --no-index --no-deps "${wheel}" ||
        echo "WARNING: could not install ${wheel}"
    fi
  done
  if ! command -v pkg-config >/dev/null; then
    install_from_deps libpkgconf3 pkgconf-bin pkgconf pkg-config
  fi
  ldconfig
  clblast_library="$(ldconfig -p | awk '/libclblast\.so\.1 / {print $NF; exit}')"
  if [[ -n "${clblast_library}" ]]; then
    echo "ldd ${clblast_library}:"
    ldd "${clblast_library}"
    if ldd "${clblast_library}" | grep -q "not found"; then
      echo "WARNING: CLBlast has unresolved libraries"
    fi
  else
    echo "WARNING: libclblast.so.1 not found after install"
  fi

  section "clinfo -l"
  clinfo -l || echo "WARNING: clinfo failed"
} 2>&1 | tee -a "${setup_log}"

# Tests need cmocka (found through pkg-config); without them, build the tests
# off rather than fail to configure.
cmake_args=(-DCMAKE_BUILD_TYPE=Release "-DCLMG_TEST_DEVICE=${gpu_device}")
if [[ -f /usr/include/cmocka.h ]] && command -v pkg-config >/dev/null &&
  pkg-config --exists cmocka; then
  tests_enabled=1
else
  tests_enabled=0
  cmake_args+=(-DCLMG_BUILD_TESTS=OFF)
  echo "WARNING: cmocka or pkg-config missing; building with tests off" | tee -a "${setup_log}"
fi
# The ICD loader's development symlink (libOpenCL.so) may be missing where
# only the runtime (libOpenCL.so.1) is installed; point CMake at the latter.
if ! ldconfig -p | grep -q 'libOpenCL\.so '; then
  opencl_runtime="$(ldconfig -p | awk '/libOpenCL\.so\.1 / {print $NF; exit}')"
  if [[ -n "${opencl_runtime}" ]]; then
    cmake_args+=("-DOpenCL_LIBRARY=${opencl_runtime}")
  fi
fi

# MPI for clmg_mpi and the scaling benchmark: the machine's, else MPICH
# carried as PyPI's wheel in .whl/ (relocatable, with mpicc and mpiexec),
# unpacked to /tmp/clmg-mpich.
mpiexec_path="$(command -v mpiexec || true)"
if [[ -z "${mpiexec_path}" ]]; then
  for wheel in .whl/mpich-*.whl; do
    [[ -e "${wheel}" ]] || continue
    rm -rf /tmp/clmg-mpich && mkdir -p /tmp/clmg-mpich &&
      python3 -m zipfile -e "${wheel}" /tmp/clmg-mpich || continue
    mpi_prefix="$(echo /tmp/clmg-mpich/mpich-*.data/data)"
    chmod +x "${mpi_prefix}"/bin/*
    cmake_args+=("-DMPI_C_COMPILER=${mpi_prefix}/bin/mpicc"
      "-DMPIEXEC_EXECUTABLE=${mpi_prefix}/bin/mpiexec")
    mpiexec_path="${mpi_prefix}/bin/mpiexec"
    echo "MPI: ${wheel} unpacked to ${mpi_prefix}" | tee -a "${setup_log}"
  done
fi

section "configure and build (Release, ${build_dir})" | tee -a "${setup_log}"
start_step
cmake -S . -B "${build_dir}" "${cmake_args[@]}" 2>&1 | tee -a "${setup_log}" &&
  cmake --build "${build_dir}" -j "${jobs}" 2>&1 | tee -a "${setup_log}"
build_status=$?
record "build" "${build_status}"
if [[ ${build_status} -ne 0 ]]; then
  echo "build failed; see ${setup_log}"
fi

if [[ ${build_status} -eq 0 ]]; then
  section "clmg --device ${gpu_device} info" | tee -a "${setup_log}"
  start_step
  "${build_dir}/apps/clmg" --device "${gpu_device}" info 2>&1 | tee -a "${setup_log}"
  record "clmg info" $?

  if [[ ${tests_enabled} -eq 1 && "${SKIP_TESTS:-0}" != 1 ]]; then
    section "ctest on ${gpu_device}" | tee -a "${setup_log}"
    start_step
    CLMG_DEVICE="${gpu_device}" ctest --test-dir "${build_dir}" --output-on-failure \
      -j "${jobs}" --timeout 300 2>&1 | tee -a "${setup_log}"
    record "ctest (${gpu_device})" $?
  fi

  run_blas1() { # run_blas1 LABEL DEVICE MAX_N EXTRA_ARGS
    local label="$1" device="$2" max_n="$3" extra="$4"
    section "BLAS-1 benchmark on ${device} (n up to ${max_n})" | tee -a "${bench_log}"
    start_step
    # shellcheck disable=SC2086 # extra holds several arguments
    "${build_dir}/perf/clmg_perf_blas1" --device "${device}" --max-n "${max_n}" \
      --output "${results_dir}/blas1-${label}.json" ${extra} 2>&1 |
      tee -a "${bench_log}"
    record "blas1 (${label})" $?
  }
  if [[ "${SKIP_BLAS1:-0}" != 1 ]]; then
    run_blas1 gpu "${gpu_device}" 1e8 "${BLAS1_GPU_ARGS:-}"
    run_blas1 pocl pocl 1e7 "${BLAS1_POCL_ARGS:-}"
  fi

  run_spmv() { # run_spmv LABEL DEVICE EXTRA_ARGS
    local label="$1" device="$2" extra="$3"
    section "SpMV benchmark on ${device} (${extra})" | tee -a "${bench_log}"
    start_step
    # shellcheck disable=SC2086 # extra holds several arguments
    "${build_dir}/perf/clmg_perf_spmv" --device "${device}" \
      --output "${results_dir}/spmv-${label}.json" ${extra} 2>&1 | tee -a "${bench_log}"
    record "spmv (${label})" $?
  }
  if [[ "${SKIP_SPMV:-0}" != 1 ]]; then
    rm -rf "${mtx_dir}"
    run_spmv gpu "${gpu_device}" \
      "${SPMV_GPU_ARGS:---size large --min-time 0.1} --write-mtx ${mtx_dir}"

    section "cuSPARSE baseline (CuPy) on the same matrices" | tee -a "${bench_log}"
    start_step
    # shellcheck disable=SC2086 # CUSPARSE_ARGS holds several arguments
    PYTHONUNBUFFERED=1 python3 perf/cusparse_spmv.py --mtx-dir "${mtx_dir}" \
      --output "${results_dir}/cusparse.json" --clmg-json "${results_dir}/spmv-gpu.json" \
      ${CUSPARSE_ARGS:-} 2>&1 | tee -a "${bench_log}"
    record "cusparse baseline" $?
    rm -rf "${mtx_dir}" # several GB of text

    run_spmv pocl pocl "${SPMV_POCL_ARGS:---size small --min-time 0.1}"
  fi

  run_json_benchmark() { # run_json_benchmark NAME LABEL DEVICE EXTRA_ARGS
    local name="$1" label="$2" device="$3" extra="$4"
    section "${name} benchmark on ${device} (${extra})" | tee -a "${bench_log}"
    start_step
    # shellcheck disable=SC2086 # extra holds several arguments
    "${build_dir}/perf/clmg_perf_${name}" --device "${device}" \
      --output "${results_dir}/${name}-${label}.json" ${extra} 2>&1 | tee -a "${bench_log}"
    record "${name} (${label})" $?
  }
  if [[ "${SKIP_GMG:-0}" != 1 ]]; then
    section "clmg poisson: CIRCLE Q1 level 10 on ${gpu_device}" | tee -a "${bench_log}"
    start_step
    "${build_dir}/apps/clmg" --device "${gpu_device}" poisson --mesh circle --level 10 \
      --smoother chebyshev --pre 2 --post 2 2>&1 | tee -a "${bench_log}"
    record "poisson circle q1 level 10" $?
    section "clmg poisson: CIRCLE Q1 level 10, float cycle in double CG" | tee -a "${bench_log}"
    start_step
    "${build_dir}/apps/clmg" --device "${gpu_device}" poisson --mesh circle --level 10 \
      --precision mixed --pre 2 --post 2 --format sell --coarse-rows 2048 2>&1 | tee -a "${bench_log}"
    record "poisson circle q1 level 10 mixed" $?
    run_json_benchmark gmg gpu "${gpu_device}" "${GMG_GPU_ARGS:---size large --coarse-rows 2048}"
    run_json_benchmark gmg pocl pocl "${GMG_POCL_ARGS:---size small}"
  fi
  if [[ "${SKIP_HOMG:-0}" != 1 && -x "${build_dir}/perf/clmg_perf_homg" ]]; then
    run_json_benchmark homg gpu "${gpu_device}" "${HOMG_GPU_ARGS:---size large}"
    run_json_benchmark homg pocl pocl "${HOMG_POCL_ARGS:---size small}"
  fi
  if [[ "${SKIP_ASSEMBLY:-0}" != 1 && -x "${build_dir}/perf/clmg_perf_assembly" ]]; then
    run_json_benchmark assembly gpu "${gpu_device}" "${ASSEMBLY_GPU_ARGS:---regular-levels 1:3}"
    run_json_benchmark assembly pocl pocl "${ASSEMBLY_POCL_ARGS:---regular-levels 1:2}"
  fi
  if [[ "${SKIP_AMG:-0}" != 1 && -x "${build_dir}/perf/clmg_perf_amg" ]]; then
    amg_mtx_dir="${AMG_MTX_DIR:-/tmp/clmg-amg-mtx}"
    rm -rf "${amg_mtx_dir}" && mkdir -p "${amg_mtx_dir}"
    hypre_gpu_dir="${repo_root}/build-hypre-gpu"
    if [[ "${SKIP_HYPRE_GPU:-0}" != 1 ]]; then
      section "hypre with CUDA for the GPU baseline (perf/build-hypre-baseline.sh --gpu)" |
        tee -a "${bench_log}"
      start_step
      BUILD_DIR="${hypre_gpu_dir}" JOBS="${jobs}" perf/build-hypre-baseline.sh --gpu 2>&1 |
        tee -a "${bench_log}"
      record "hypre gpu build" $?
    fi
    run_json_benchmark amg gpu "${gpu_device}" \
      "${AMG_GPU_ARGS:---regular-levels 3:4 --blobs-level 4} --write-mtx ${amg_mtx_dir}"
    if [[ "${SKIP_AMG_POCL:-0}" != 1 ]]; then
      run_json_benchmark amg pocl pocl "${AMG_POCL_ARGS:---regular-levels 1:2 --blobs-level 2}"
    fi
    # The SPD test problems beside them, named as clmg_perf_amg names its
    # files (coords-NAME.mtx: elasticity's nodes, for its rigid-body modes).
    start_step
    spd_status=0
    for spec in ${AMG_SPD_PROBLEMS-elasticity-p1:48 dg-diffusion:256}; do
      problem="${spec%%:*}" level="${spec##*:}"
      prefix="${amg_mtx_dir}/spd-${problem}-${level}"
      if "${build_dir}/perf/clmg_perf_spd_problems" "${problem}" --level "${level}" \
        -o "${prefix}" 2>&1 | tee -a "${bench_log}"; then
        mv "${prefix}.mtx" "${amg_mtx_dir}/A-${problem}-${level}.mtx"
        mv "${prefix}_b.mtx" "${amg_mtx_dir}/b-${problem}-${level}.mtx"
        if [[ "${problem}" == elasticity-* ]]; then
          mv "${prefix}_coords.mtx" "${amg_mtx_dir}/coords-${problem}-${level}.mtx"
        fi
        rm -f "${prefix}"*
      else
        spd_status=1
      fi
    done
    record "spd problems for the baselines" "${spd_status}"
    section "AMG baselines on the same matrices (pyamg and hypre on this machine's CPU," \
      "hypre on the GPU, against clmg)" | tee -a "${bench_log}"
    start_step
    hypre_args=()
    if [[ -x "${build_dir}/perf/clmg_hypre_pcg" ]]; then
      hypre_args=(--hypre "${build_dir}/perf/clmg_hypre_pcg")
    elif [[ -f .hypre/clmg_hypre_pcg ]]; then # carried (perf/build-hypre-baseline.sh)
      [[ -x .hypre/clmg_hypre_pcg ]] || chmod +x .hypre/clmg_hypre_pcg # a copy may drop the mode
      hypre_args=(--hypre "${repo_root}/.hypre/clmg_hypre_pcg")
      [[ -f .hypre/VERSION ]] && tee -a "${bench_log}" <.hypre/VERSION
    fi
    if [[ "${SKIP_HYPRE_GPU:-0}" != 1 && -x "${hypre_gpu_dir}/perf/clmg_hypre_pcg" ]]; then
      hypre_args+=(--hypre-gpu "${hypre_gpu_dir}/perf/clmg_hypre_pcg")
      [[ -f "${hypre_gpu_dir}/HYPRE-VERSION" ]] &&
        tee -a "${bench_log}" <"${hypre_gpu_dir}/HYPRE-VERSION"
    fi
    PYTHONUNBUFFERED=1 python3 perf/amg_baselines.py "${amg_mtx_dir}" "${hypre_args[@]}" \
      --clmg-json "${results_dir}/amg-gpu.json" --clmg "${build_dir}/apps/clmg" \
      --device "${gpu_device}" --cpu-max-rows "${AMG_CPU_MAX_ROWS:-0}" \
      --output "${results_dir}/amg-baselines.json" 2>&1 | tee -a "${bench_log}"
    record "amg baselines" $?
    rm -rf "${amg_mtx_dir}"
  fi
  if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
    run_clmg_bench() { # run_clmg_bench LABEL DEVICE EXTRA_ARGS
      local label="$1" device="$2" extra="$3"
      section "clmg bench on ${device} (${extra})" | tee -a "${bench_log}"
      start_step
      # shellcheck disable=SC2086 # extra holds several arguments
      "${build_dir}/apps/clmg" bench --device "${device}" \
        --output "${results_dir}/bench-${label}.json" ${extra} 2>&1 | tee -a "${bench_log}"
      record "clmg bench (${label})" $?
    }
    run_clmg_bench gpu "${gpu_device}" "${BENCH_GPU_ARGS:-}"
    run_clmg_bench pocl pocl "${BENCH_POCL_ARGS:---size small}"
    section "clmg bench --compare" | tee -a "${bench_log}"
    start_step
    "${build_dir}/apps/clmg" bench --compare "${results_dir}/bench-gpu.json" \
      "${results_dir}/bench-pocl.json" --html "${results_dir}/bench.html" 2>&1 |
      tee -a "${bench_log}"
    record "clmg bench --compare" $?
  fi
  if [[ "${SKIP_SCALING:-0}" != 1 && -x "${build_dir}/perf/clmg_perf_scaling" ]]; then
    for where in ${SCALING_WHERE:-gpu pocl}; do
      section "scaling (perf/scaling.sh): ranks on ${where}" | tee -a "${bench_log}"
      start_step
      rm -f "${results_dir}/scaling-${where}.jsonl"
      if [[ "${where}" == gpu ]]; then
        # the ranks share the one GPU unless the machine has more
        BUILD="${build_dir}" MPIEXEC="${mpiexec_path}" DEVICE=gpu \
          RANKS="${SCALING_GPU_RANKS:-1 2}" STRONG="${SCALING_GPU_STRONG:-circle:10 box3:8:4}" \
          WEAK_2D="${SCALING_GPU_WEAK_2D:-32 5}" WEAK_3D="${SCALING_GPU_WEAK_3D:-6 4}" \
          WEAK_CIRCLE="${SCALING_GPU_WEAK_CIRCLE:-9}" OUT="${results_dir}/scaling-gpu.jsonl" \
          perf/scaling.sh 2>&1 | tee -a "${bench_log}"
      else
        BUILD="${build_dir}" MPIEXEC="${mpiexec_path}" DEVICE=pocl RANKS="1 2 4" \
          STRONG="${SCALING_POCL_STRONG:-circle:8 box3:4:4}" \
          WEAK_2D="${SCALING_POCL_WEAK_2D:-24 6}" WEAK_3D="${SCALING_POCL_WEAK_3D:-3 4}" \
          WEAK_CIRCLE="${SCALING_POCL_WEAK_CIRCLE:-7}" OUT="${results_dir}/scaling-pocl.jsonl" \
          perf/scaling.sh 2>&1 | tee -a "${bench_log}"
      fi
      record "scaling ${where}" "${PIPESTATUS[0]}"
    done
  fi
  if [[ "${SKIP_FLOW:-0}" != 1 && -x "${build_dir}/perf/clmg_perf_flow" ]]; then
    run_json_benchmark flow gpu "${gpu_device}" "${FLOW_GPU_ARGS:---levels 3:7}"
    run_json_benchmark flow pocl pocl "${FLOW_POCL_ARGS:---levels 3:5}"
    for level in ${DFG_LEVELS:-1 2 3 4 5}; do
      section "clmg flow: DFG 2D-1 level ${level} on ${gpu_device}" | tee -a "${bench_log}"
      start_step
      "${build_dir}/apps/clmg" --device "${gpu_device}" flow --case dfg1 --level "${level}" \
        --quiet --json >"${results_dir}/dfg1-level${level}.json" 2>>"${bench_log}"
      record "flow dfg1 level ${level}" $?
      cat "${results_dir}/dfg1-level${level}.json" >>"${bench_log}"
    done
    for re in 100 1000; do
      section "clmg flow: cavity Re ${re} level ${CAVITY_LEVEL:-6} on ${gpu_device}" |
        tee -a "${bench_log}"
      start_step
      "${build_dir}/apps/clmg" --device "${gpu_device}" flow --case cavity --re "${re}" \
        --level "${CAVITY_LEVEL:-6}" --quiet --profile "${results_dir}/cavity-re${re}.csv" \
        --json >"${results_dir}/cavity-re${re}.json" 2>>"${bench_log}" &&
        python3 perf/cavity_ghia.py "${results_dir}/cavity-re${re}.csv" --re "${re}" \
          --output "${results_dir}/cavity-re${re}-ghia.json" \
          --png "${results_dir}/cavity-re${re}.png" 2>&1 | tee -a "${bench_log}"
      record "flow cavity re ${re}" $?
    done
  fi
fi

# ---- the summary, last ----
section "summary"
grep -E "tests passed|tests failed" "${setup_log}" | sed 's/^/ctest: /' || true
shopt -s nullglob # a skipped benchmark leaves no JSON to summarise
blas1_jsons=("${results_dir}"/blas1-*.json)
spmv_jsons=("${results_dir}"/spmv-*.json)
assembly_jsons=("${results_dir}"/assembly-*.json)
shopt -u nullglob
if command -v python3 >/dev/null; then
  [[ ${#blas1_jsons[@]} -gt 0 ]] && python3 - "${blas1_jsons[@]}" <<'PYTHON'
import json
import sys

ops = ["copy", "dot", "nrm2", "axpy", "waxpby", "axpy_nrm2", "cg_update", "dot2"]
print("BLAS-1 at the largest n: GB/s achieved (ratio to the measured copy bandwidth)")
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{path}: unreadable ({error})")
        continue
    copy = doc.get("copy_gb_per_s")
    copy_text = f"{copy:.1f} GB/s" if copy is not None else "not measured"
    print(f"\n{doc['device']['name']} ({doc['device']['platform']}): copy {copy_text}")
    print(f"{'backend':<8} {'prec':<6} {'n':>10}" + "".join(f" {op:>14}" for op in ops))
    rows = doc.get("rows", [])
    order = {"native": 0, "clblast": 1, "auto": 2}
    groups = sorted({(r["backend"], r["precision"]) for r in rows},
                    key=lambda g: (order.get(g[0], 3), g[1]))
    for backend, precision in groups:
        mine = [r for r in rows if r["backend"] == backend and r["precision"] == precision]
        largest = max(r["n"] for r in mine)
        cells = []
        for op in ops:
            hit = [r for r in mine if r["n"] == largest and r["op"] == op]
            if hit and hit[0]["gb_per_s"] is not None:
                ratio = hit[0]["ratio_to_copy"]
                ratio_text = f"({ratio:.2f})" if ratio is not None else ""
                cells.append(f"{hit[0]['gb_per_s']:.3g}{ratio_text}")
            else:
                cells.append("-")
        print(f"{backend:<8} {precision:<6} {largest:>10}" + "".join(f" {c:>14}" for c in cells))
    decisions = doc.get("decision", [])
    if decisions:
        top = max(e["n"] for e in decisions)
        speedups = [f"{e['op']}/{e['precision']}={e['native_speedup']:.2f}"
                    for e in decisions if e["n"] == top]
        print(f"native speedup over clblast at n={top} (>1: native faster):")
        print("  " + " ".join(speedups))
    if doc.get("failures"):
        print(f"benchmark failures: {doc['failures']}")
PYTHON
  [[ ${#spmv_jsons[@]} -gt 0 ]] && python3 - "${spmv_jsons[@]}" <<'PYTHON'
import json
import sys

for path in sys.argv[1:]:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{path}: unreadable ({error})")
        continue
    copy = doc.get("copy_gb_per_s")
    copy_text = f"{copy:.1f} GB/s" if copy is not None else "not measured"
    target = doc.get("settings", {}).get("target_nnz", 0)
    print(f"\nSpMV on {doc['device']['name']} ({doc['device']['platform']}): copy {copy_text}, "
          f"~{target:.2g} nonzeros per matrix; fastest format, GB/s under the minimal-bytes "
          f"model (ratio to copy)")
    print(f"{'matrix':<10} {'prec':<6} {'best format':<28} {'us':>9} {'GB/s':>7} {'ratio':>6}"
          f"  {'auto':<5} {'auto/best':>9}")
    for entry in doc.get("summary", []):
        auto = entry.get("auto_format", "-")
        auto_ratio = (f"{entry['auto_time_us'] / entry['best_time_us']:.2f}"
                      if entry.get("auto_time_us") else "-")
        ratio = entry.get("best_ratio_to_copy")
        print(f"{entry['matrix']:<10} {entry['precision']:<6} {entry['best_description']:<28} "
              f"{entry['best_time_us']:>9.1f} {entry['best_gb_per_s']:>7.1f} "
              f"{ratio if ratio is not None else float('nan'):>6.3f}  {auto:<5} {auto_ratio:>9}")
    wrong = [r for r in doc.get("rows", []) if not r.get("verified")]
    if wrong or doc.get("failures"):
        print(f"benchmark failures: {doc.get('failures')}; wrong results: "
              + ", ".join(f"{r['matrix']}/{r['format']}/{r['precision']}" for r in wrong))
PYTHON
  [[ ${#assembly_jsons[@]} -gt 0 ]] && python3 - "${assembly_jsons[@]}" <<'PYTHON'
import json
import sys

for path in sys.argv[1:]:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{path}: unreadable ({error})")
        continue
    copy = doc.get("copy_gb_per_s")
    copy_text = f"{copy:.1f} GB/s" if copy is not None else "not measured"
    print(f"\nP1 assembly on {doc['device']['name']} ({doc['device']['platform']}): copy "
          f"{copy_text}; per mesh and precision the fastest order/path, warm ms, host/device "
          f"speed-up, GB/s under the minimal-bytes model (ratio to copy), boundary cells")
    print(f"{'mesh':<16} {'prec':<6} {'best':<14} {'warm ms':>9} {'host ms':>9} {'x':>7} "
          f"{'GB/s':>7} {'ratio':>6} {'bnd%':>5}  {'native patch ms':>15} {'morton patch ms':>15}")
    rows = doc.get("rows", [])
    groups = []
    for r in rows:
        if (r["mesh"], r["precision"]) not in groups:
            groups.append((r["mesh"], r["precision"]))
    for mesh, precision in groups:
        mine = [r for r in rows if r["mesh"] == mesh and r["precision"] == precision]
        best = min(mine, key=lambda r: r["warm_ms"])
        def patch_ms(order):
            hit = [r for r in mine if r["order"] == order and r["path"] == "patch"]
            return f"{hit[0]['warm_ms']:.3f}" if hit else "-"
        ratio = best.get("ratio_to_copy")
        print(f"{mesh:<16} {precision:<6} {best['order'] + '/' + best['path']:<14} "
              f"{best['warm_ms']:>9.3f} {best['host_ms']:>9.2f} "
              f"{best['speedup_host_over_device']:>7.1f} {best['gb_per_s']:>7.2f} "
              f"{ratio if ratio is not None else float('nan'):>6.3f} "
              f"{100 * best['boundary_cell_fraction']:>5.1f}  {patch_ms('native'):>15} "
              f"{patch_ms('morton'):>15}")
    if doc.get("failures") or doc.get("skipped"):
        print(f"benchmark failures: {doc.get('failures')}; skipped: {doc.get('skipped')}")
PYTHON
  if [[ -f "${results_dir}/cusparse.json" && -f "${results_dir}/spmv-gpu.json" ]]; then
    python3 perf/cusparse_spmv.py --cusparse-json "${results_dir}/cusparse.json" \
      --clmg-json "${results_dir}/spmv-gpu.json"
  fi
else
  tail -n 60 "${bench_log}"
fi
failed=0
for i in "${!step_names[@]}"; do
  printf '%-24s %s\n' "${step_names[$i]}" "${step_results[$i]}"
  [[ "${step_results[$i]}" == ok* ]] || failed=1
done
echo "results in ${results_dir}:"; ls -l "${results_dir}"
exit "${failed}"
