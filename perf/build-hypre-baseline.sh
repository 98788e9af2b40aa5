#!/usr/bin/env bash
# Builds the hypre baselines of the AMG benchmark (clmg_hypre_pcg) from
# Debian's source of hypre, for machines that have neither hypre nor MPI.
# Two builds, one script (the source, its checksum and the build of only
# what BoomerAMG-PCG needs are shared):
#
#   perf/build-hypre-baseline.sh                 the CPU baseline
#   perf/build-hypre-baseline.sh --gpu           the GPU baseline (on the GPU machine)
#   perf/build-hypre-baseline.sh --fetch [--gpu] only fetch and check the source
#
# CPU (default): hypre 2.26.0 (Debian 12 bookworm) built sequentially (no
# MPI, no OpenMP), and clmg_hypre_pcg linked fully statically against it, so
# the program needs no shared library (not even glibc's). It lands in .hypre/
# (ignored by git) with a note of versions and settings (.hypre/VERSION);
# copy the repository with .hypre/ to the GPU machine and perf/gpu.sh runs it
# when it has not built clmg_hypre_pcg itself. Run it on a Debian 12
# (bookworm) x86_64 machine with clmg's build dependencies (OpenCL, CLBlast:
# CMake configures the whole project).
#
# GPU (--gpu): hypre 2.32.0 (Debian 13 trixie) built with CUDA for the GPU
# (configure --with-cuda --with-gpu-arch=90 --with-cxxstandard=17
# --enable-device-memory-pool, no MPI: hypre allows a sequential CUDA build),
# and clmg_hypre_pcg in its GPU mode (perf/hypre_pcg.c) linked against it and
# against CUDA's runtime, cuSPARSE, cuBLAS and cuRAND. Run it on the GPU
# machine itself (it has CUDA, and the CPU cores for the build): perf/gpu.sh
# does, from the source tarball carried in .hypre-src/. Why 2.32.0 and a
# patch: CUDA 13 ships CCCL 3.0, which removed thrust::unary_function,
# thrust::binary_function, thrust::identity and thrust::not1, and changed
# cudaMemPrefetchAsync to take a cudaMemLocation; hypre 2.26.0 and 2.32.0
# both use them (hypre 3.0 replaced them). 2.32.0 is the newest hypre of a
# Debian release; perf/hypre-2.32-cuda13.patch gives it stand-ins with the
# old meaning (in _hypre_utilities.hpp and device_utils.h) and the CUDA 13
# prefetch call (memory.c), nothing in BoomerAMG or PCG. The program lands
# in BUILD_DIR (default build-hypre-gpu)/perf/clmg_hypre_pcg with a note
# beside it (BUILD_DIR/HYPRE-VERSION).
#
# --fetch: only download the source tarball into .hypre-src/ (ignored by
# git) and check it, for a machine without network access: carry
# .hypre-src/ with the repository (the device tool: carry .hypre-src).
#
# The source: the upstream tarball of Debian's source package
# (hypre_VERSION.orig.tar.gz), fetched from the Debian archive's pool and
# checked against the SHA-256 that Debian's signed source index gives for
# it; a tarball already in .hypre-src/ with the right checksum is used as it
# is. Debian's patches are not applied: they change hypre's build system,
# tests and packaging only, none of BoomerAMG or PCG, so the CPU numerics
# are those of Debian's libhypre-dev 2.26.0 (an MPI build), which `cmake -S .
# -B build` finds on its own where it is installed.
#
# Only what clmg_hypre_pcg needs is built (hypre's IJ, ParCSR, Krylov and
# BoomerAMG directories and what they call; not Struct, SStruct or FEI), all
# directories at once under one make -j, then libHYPRE.a from their objects
# as hypre's own archive rule makes it. Then CMake with CLMG_HYPRE_ROOT (and,
# for the CPU, CLMG_HYPRE_STATIC=ON; perf/CMakeLists.txt) for the target
# clmg_hypre_pcg, and a smoke run on a small Laplacian. No root needed.
#
# Environment knobs (all optional):
#   HYPRE_WORK            work folder: source, hypre's build (default
#                         /tmp/hypre-seq, --gpu: /tmp/hypre-gpu)
#   HYPRE_SOURCE_DIR      where the tarballs are kept (default .hypre-src in
#                         the repository root)
#   BUILD_DIR             clmg's CMake build folder (default build-hypre,
#                         --gpu: build-hypre-gpu, in the repository root)
#   JOBS                  parallel build jobs (default: nproc)
#   HYPRE_DEBIAN_MIRROR   Debian mirror for the source (default
#                         http://deb.debian.org/debian)
#   CUDA_HOME             --gpu: the CUDA toolkit (default /usr/local/cuda)
#   HYPRE_GPU_ARCH        --gpu: the compute capability to build for (default
#                         90, the H100 and H200)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=cpu
fetch_only=0
for arg in "$@"; do
  case "${arg}" in
  --gpu) mode=gpu ;;
  --fetch) fetch_only=1 ;;
  -h | --help)
    sed -n '2,/^set -euo pipefail/{/^set/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
    exit 0
    ;;
  *)
    echo "build-hypre-baseline: unknown argument '${arg}' (see --help)" >&2
    exit 2
    ;;
  esac
done

jobs="${JOBS:-$(nproc)}"
mirror="${HYPRE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
source_dir="${HYPRE_SOURCE_DIR:-${repo_root}/.hypre-src}"
out_dir="${repo_root}/.hypre"
if [[ "${mode}" == cpu ]]; then
  hypre_version=2.26.0
  debian_version="${hypre_version}-3 (Debian 12 bookworm)"
  orig_sha256=c214084bddc61a06f3758d82947f7f831e76d7e3edeac2c78bb82d597686e05d
  work="${HYPRE_WORK:-/tmp/hypre-seq}"
  build_dir="${BUILD_DIR:-${repo_root}/build-hypre}"
  patch_file=""
  configure_args=(--without-MPI --without-openmp --disable-fortran --disable-shared CC=gcc
    CFLAGS=-O3)
else
  hypre_version=2.32.0
  debian_version="${hypre_version}-4 (Debian 13 trixie)"
  orig_sha256=2277b6f01de4a7d0b01cfe12615255d9640eaa02268565a7ce1a769beab25fa1
  work="${HYPRE_WORK:-/tmp/hypre-gpu}"
  build_dir="${BUILD_DIR:-${repo_root}/build-hypre-gpu}"
  patch_file="${repo_root}/perf/hypre-2.32-cuda13.patch"
  cuda_home="${CUDA_HOME:-/usr/local/cuda}"
  gpu_arch="${HYPRE_GPU_ARCH:-90}"
  configure_args=(--without-MPI --without-openmp --disable-fortran --disable-shared
    --with-cuda "--with-cuda-home=${cuda_home}" "--with-gpu-arch=${gpu_arch}"
    --with-cxxstandard=17 --enable-device-memory-pool CC=gcc CXX=g++ CFLAGS=-O3 CXXFLAGS=-O3)
fi
orig_tarball="hypre_${hypre_version}.orig.tar.gz"
tarball="${source_dir}/${orig_tarball}"
# The directories BoomerAMG-PCG through the IJ interface needs (hypre's
# HYPRE_BASIC, MULTIVEC, KRYLOV, IJ and DISTRIBUTED_LS directories).
hypre_dirs=(blas lapack utilities multivector krylov seq_mv seq_block_mv parcsr_mv
  parcsr_block_mv distributed_matrix IJ_mv matrix_matrix parcsr_ls distributed_ls)

say() { printf '\n== build-hypre-baseline (%s): %s\n' "${mode}" "$*"; }
tarball_ok() { [[ -f "${tarball}" ]] && echo "${orig_sha256}  ${tarball}" | sha256sum --check --status; }

# ---- 1. hypre's source: Debian's upstream tarball, checked ----
say "hypre ${hypre_version} source (Debian ${debian_version}) in ${source_dir}"
if tarball_ok; then
  echo "${orig_tarball}: there, SHA-256 checked"
else
  url="${mirror}/pool/main/h/hypre/${orig_tarball}"
  echo "fetching ${url}"
  mkdir -p "${source_dir}"
  rm -f "${tarball}.part"
  if command -v curl >/dev/null; then
    curl -fsSL --retry 3 -o "${tarball}.part" "${url}"
  elif command -v wget >/dev/null; then
    wget -q -O "${tarball}.part" "${url}"
  else
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "${url}" "${tarball}.part"
  fi || {
    echo "build-hypre-baseline: cannot fetch ${url} (no network here? run" \
      "perf/build-hypre-baseline.sh --fetch$([[ ${mode} == gpu ]] && echo ' --gpu') where there is" \
      "one and carry ${source_dir})" >&2
    exit 1
  }
  mv -f "${tarball}.part" "${tarball}"
fi
echo "${orig_sha256}  ${tarball}" | sha256sum --check
if [[ ${fetch_only} -eq 1 ]]; then
  ls -l "${tarball}"
  exit 0
fi

for tool in gcc make cmake tar ar; do
  command -v "${tool}" >/dev/null || {
    echo "build-hypre-baseline: ${tool} is missing (apt-get install build-essential cmake)" >&2
    exit 1
  }
done
if [[ "${mode}" == gpu ]]; then
  [[ -x "${cuda_home}/bin/nvcc" ]] || {
    echo "build-hypre-baseline: no CUDA compiler at ${cuda_home}/bin/nvcc (set CUDA_HOME)" >&2
    exit 1
  }
  command -v g++ >/dev/null || {
    echo "build-hypre-baseline: g++ is missing (nvcc's host compiler)" >&2
    exit 1
  }
  command -v patch >/dev/null || command -v git >/dev/null || {
    echo "build-hypre-baseline: neither patch nor git is there to apply ${patch_file}" >&2
    exit 1
  }
  nvcc_version="$("${cuda_home}/bin/nvcc" --version | tail -n 2 | tr '\n' ' ')"
  echo "nvcc: ${nvcc_version}"
fi

# ---- 2. hypre: the directories clmg_hypre_pcg needs, and libHYPRE.a ----
src="${work}/hypre-${hypre_version}/src"
prefix="${src}/hypre" # hypre's build folder: include/ and lib/
stamp="${prefix}/clmg-build-stamp"
patch_sha256=""
[[ -n "${patch_file}" ]] && patch_sha256="$(sha256sum "${patch_file}" | cut -d' ' -f1)"
stamp_text="hypre ${hypre_version} ${orig_sha256} patch ${patch_sha256:-none} configure \
${configure_args[*]} dirs ${hypre_dirs[*]} $(gcc --version | head -n 1) ${nvcc_version:-}"
started=${SECONDS}
if [[ -f "${prefix}/lib/libHYPRE.a" && -f "${stamp}" && "$(cat "${stamp}")" == "${stamp_text}" ]]; then
  say "hypre already built in ${prefix} with the same source and settings"
else
  say "build hypre ${hypre_version} (${mode}) in ${work}"
  rm -rf "${work}/hypre-${hypre_version}"
  mkdir -p "${work}"
  tar -xzf "${tarball}" -C "${work}"
  if [[ -n "${patch_file}" ]]; then
    echo "applying $(basename "${patch_file}")"
    if command -v patch >/dev/null; then
      patch -d "${work}/hypre-${hypre_version}" -p1 --forward <"${patch_file}"
    else
      git -C "${work}/hypre-${hypre_version}" apply -p1 "${patch_file}"
    fi
  fi
  (
    cd "${src}"
    ./configure "${configure_args[@]}" >"${work}/configure.log" 2>&1 || {
      tail -n 30 "${work}/configure.log"
      exit 1
    }
    grep -q '^#define HYPRE_SEQUENTIAL 1' HYPRE_config.h
    if [[ "${mode}" == gpu ]]; then
      grep -q '^#define HYPRE_USING_CUDA 1' HYPRE_config.h
    fi
    # hypre's top-level make does this first, then one directory after the
    # other; here the directories build side by side under one jobserver
    # (they include each other's sources, not each other's build output).
    mkdir -p "${prefix}/include" "${prefix}/lib"
    cp -f HYPRE_config.h HYPRE.h HYPREf.h "${prefix}/include/"
    present=() # those of this version (2.26 has no seq_block_mv)
    for dir in "${hypre_dirs[@]}"; do
      if [[ -d "${dir}" ]]; then
        present+=("${dir}")
      fi
    done
    {
      echo "all: ${present[*]}"
      echo ".PHONY: all ${present[*]}"
      for dir in "${present[@]}"; do
        # shellcheck disable=SC2016 # $(MAKE) is for make
        printf '%s:\n\t+$(MAKE) -C %s all\n' "${dir}" "${dir}"
      done
    } >clmg-subset.mk
    make -j "${jobs}" -f clmg-subset.mk >"${work}/make.log" 2>&1 || {
      grep -n -m 20 -E 'error|Error' "${work}/make.log" || true
      tail -n 30 "${work}/make.log"
      exit 1
    }
    # libHYPRE.a from these directories' objects, as hypre's lib/Makefile
    # makes it from all of them (distributed_ls: its Euclid, ParaSails and
    # pilut folders); appended (ar q), since BLAS and LAPACK each have an
    # lsame.o of their own.
    shopt -s nullglob
    rm -f "${prefix}/lib/libHYPRE.a"
    for dir in "${present[@]}"; do
      objects=("${dir}"/*.o "${dir}"/*.obj)
      if [[ "${dir}" == distributed_ls ]]; then
        objects=("${dir}"/*/*.o)
      fi
      ar -qc "${prefix}/lib/libHYPRE.a" "${objects[@]}"
    done
    ranlib "${prefix}/lib/libHYPRE.a"
  )
  echo "${stamp_text}" >"${stamp}"
  say "hypre built in $((SECONDS - started)) s"
fi
ls -l "${prefix}/lib/libHYPRE.a"

# ---- 3. clmg_hypre_pcg against it ----
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DCLMG_BUILD_TESTS=OFF -DCLMG_BUILD_APPS=OFF
  "-DCLMG_HYPRE_ROOT=${prefix}")
if [[ "${mode}" == cpu ]]; then
  cmake_args+=(-DCLMG_HYPRE_STATIC=ON)
else
  cmake_args+=(-DCLMG_HYPRE_STATIC=OFF "-DCUDAToolkit_ROOT=${cuda_home}")
fi
say "build clmg_hypre_pcg in ${build_dir}"
cmake -S "${repo_root}" -B "${build_dir}" "${cmake_args[@]}"
cmake --build "${build_dir}" --target clmg_hypre_pcg -j "${jobs}"
program="${build_dir}/perf/clmg_hypre_pcg"
file_output="$(file -b "${program}" 2>/dev/null || echo "(file(1) missing)")"
echo "file: ${file_output}"
if [[ "${mode}" == cpu && "${file_output}" != *"statically linked"* ]]; then
  echo "build-hypre-baseline: ${program} is not statically linked" >&2
  exit 1
fi

# ---- 4. a smoke run: the 5-point Laplacian on a 20 x 20 grid, b = 1 ----
say "smoke run"
smoke="${work}/smoke-laplace-20.mtx"
awk 'BEGIN {
  m = 20; n = m * m; e = 0
  for (i = 0; i < n; i++) { e++; if (i % m > 0) e++; if (i >= m) e++ }
  print "%%MatrixMarket matrix coordinate real symmetric"
  print n, n, e
  for (i = 0; i < n; i++) {
    print i + 1, i + 1, 4
    if (i % m > 0) print i + 1, i, -1
    if (i >= m) print i + 1, i + 1 - m, -1
  }
}' >"${smoke}"
smoke_json="$("${program}" "${smoke}" --tol 1e-8)"
echo "${smoke_json}"
if [[ "${smoke_json}" != *'"status": "ok"'* || "${smoke_json}" != *'"converged": true'* ||
  "${smoke_json}" != *"\"device\": \"${mode}\""* ]]; then
  echo "build-hypre-baseline: the smoke run failed" >&2
  exit 1
fi

# ---- 5. the note of versions and settings (CPU: with the program in .hypre/) ----
if [[ "${mode}" == cpu ]]; then
  note="${out_dir}/VERSION"
  mkdir -p "${out_dir}"
  cp "${program}" "${out_dir}/clmg_hypre_pcg.tmp"
  mv -f "${out_dir}/clmg_hypre_pcg.tmp" "${out_dir}/clmg_hypre_pcg"
  placed="${out_dir}/clmg_hypre_pcg"
else
  note="${build_dir}/HYPRE-VERSION"
  placed="${program}"
fi
{
  echo "clmg_hypre_pcg: the hypre BoomerAMG-PCG baseline of perf/amg_baselines.py ($(
    [[ ${mode} == gpu ]] && echo 'GPU mode' || echo 'CPU'
  )),"
  echo "run by perf/gpu.sh; made by perf/build-hypre-baseline.sh$([[ ${mode} == gpu ]] && echo ' --gpu')"
  echo "built:       $(date -u '+%Y-%m-%d %H:%M UTC') on $(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release), $(uname -m)"
  echo "hypre:       ${hypre_version} (HYPRE_RELEASE_VERSION $(sed -n 's/^#define HYPRE_RELEASE_VERSION "\(.*\)"/\1/p' "${prefix}/include/HYPRE_config.h"))"
  echo "source:      Debian source package hypre ${debian_version}, ${orig_tarball}"
  echo "             sha256 ${orig_sha256}; Debian's patches not applied"
  if [[ -n "${patch_file}" ]]; then
    echo "patch:       perf/$(basename "${patch_file}") (sha256 ${patch_sha256}): CUDA 13 stand-ins"
  fi
  echo "configure:   ./configure ${configure_args[*]}"
  echo "             (make -j ${jobs} of those of: ${hypre_dirs[*]};"
  echo "             libHYPRE.a from their objects)"
  echo "HYPRE_config.h: $(grep '^#define HYPRE_' "${prefix}/include/HYPRE_config.h" |
    grep -v -E 'RELEASE|HYPRE_FMANGLE|HYPRE_MAXDIM' | sed 's/^#define //' | tr '\n' ' ')"
  echo "compiler:    $(gcc --version | head -n 1)${nvcc_version:+; nvcc ${nvcc_version}}"
  if [[ "${mode}" == cpu ]]; then
    echo "C library:   $(ldd --version | head -n 1) (linked statically)"
    echo "link:        cmake -DCLMG_HYPRE_ROOT=<hypre build> -DCLMG_HYPRE_STATIC=ON (-static,"
    echo "             Release: -O3), target clmg_hypre_pcg"
  else
    echo "link:        cmake -DCLMG_HYPRE_ROOT=<hypre build> (libHYPRE.a; CUDA's runtime, cuSPARSE,"
    echo "             cuBLAS, cuRAND shared, from ${cuda_home}), target clmg_hypre_pcg"
  fi
  echo "clmg:        commit $(git -C "${repo_root}" rev-parse HEAD 2>/dev/null || echo unknown);"
  echo "             perf/hypre_pcg.c sha256 $(sha256sum "${repo_root}/perf/hypre_pcg.c" | cut -d' ' -f1)"
  echo "settings:    $(sed -n 's/.*"settings": "\([^"]*\)".*/\1/p' <<<"${smoke_json}")"
  echo "             (PCG: two-norm, ||r|| <= tol ||b||, no absolute tolerance; one process)"
  echo "program:     ${placed}, $(stat -c %s "${placed}") bytes, sha256 $(sha256sum "${placed}" | cut -d' ' -f1)"
  echo "file:        ${file_output}"
} >"${note}"
cat "${note}"
