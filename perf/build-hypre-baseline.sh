#!/usr/bin/env bash
# Builds the hypre baseline of the AMG benchmark (clmg_hypre_pcg) for a
# machine that has neither hypre nor MPI, e.g. the GPU machine of perf/gpu.sh:
# hypre built sequentially (no MPI, no OpenMP) from Debian's source package,
# and clmg_hypre_pcg linked fully statically against it, so the program needs
# no shared library (not even glibc's). It lands in .hypre/ (ignored by git)
# with a note of versions and settings (.hypre/VERSION); copy the repository
# with .hypre/ to the GPU machine and perf/gpu.sh runs it when it has not
# built clmg_hypre_pcg itself. Run it on a Debian 12 (bookworm) x86_64
# machine with network access and clmg's build dependencies (OpenCL, CLBlast:
# CMake configures the whole project); it needs no root:
#
#   perf/build-hypre-baseline.sh
#
# Steps: apt-get source --download-only hypre=2.26.0-3 through a private apt
# configuration (a bookworm deb-src line in the work folder; the system's apt
# sources are left alone), a check of the upstream tarball's SHA-256 against
# the one Debian's signed source index gives, hypre's configure --without-MPI
# --without-openmp --disable-fortran and make install into the work folder,
# then CMake with CLMG_HYPRE_ROOT and CLMG_HYPRE_STATIC=ON (perf/CMakeLists.txt)
# for the target clmg_hypre_pcg, and a smoke run on a small Laplacian.
# Debian's patches are not applied: they change hypre's build system, tests
# and packaging only, none of BoomerAMG or PCG, so the numerics are those of
# Debian's libhypre-dev 2.26.0 (an MPI build), which `cmake -S . -B build`
# finds on its own where it is installed.
#
# Environment knobs (all optional):
#   HYPRE_WORK            work folder (default /tmp/hypre-seq): source,
#                         hypre's build and its install prefix (install/)
#   BUILD_DIR             clmg's CMake build folder (default build-hypre in the
#                         repository root)
#   JOBS                  parallel build jobs (default: nproc)
#   HYPRE_DEBIAN_MIRROR   Debian mirror for the source package (default
#                         http://deb.debian.org/debian)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${HYPRE_WORK:-/tmp/hypre-seq}"
build_dir="${BUILD_DIR:-${repo_root}/build-hypre}"
jobs="${JOBS:-$(nproc)}"
mirror="${HYPRE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
out_dir="${repo_root}/.hypre"

hypre_version=2.26.0
debian_version="${hypre_version}-3" # Debian 12 (bookworm)
orig_tarball="hypre_${hypre_version}.orig.tar.gz"
orig_sha256=c214084bddc61a06f3758d82947f7f831e76d7e3edeac2c78bb82d597686e05d
install_dir="${work}/install"
configure_args=(--prefix="${install_dir}" --without-MPI --without-openmp --disable-fortran
  --disable-shared CC=gcc CFLAGS=-O3)

say() { printf '\n== build-hypre-baseline: %s\n' "$*"; }

for tool in apt-get gcc make cmake sha256sum tar file; do
  command -v "${tool}" >/dev/null || {
    echo "build-hypre-baseline: ${tool} is missing (apt-get install build-essential cmake file)" >&2
    exit 1
  }
done
if [[ "$(uname -m)" != x86_64 ]]; then
  echo "build-hypre-baseline: warning: this machine is $(uname -m), the GPU machine x86_64" >&2
fi

# ---- 1. hypre's source from Debian, through a private apt configuration ----
say "fetch hypre ${debian_version} (Debian source package) into ${work}/source"
apt_dir="${work}/apt"
mkdir -p "${apt_dir}/lists/partial" "${apt_dir}/cache/archives/partial" \
  "${apt_dir}/sources.list.d" "${work}/source"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror} bookworm main" \
  >"${apt_dir}/sources.list"
apt_options=(-o "Dir::Etc::SourceList=${apt_dir}/sources.list"
  -o "Dir::Etc::SourceParts=${apt_dir}/sources.list.d"
  -o "Dir::State::Lists=${apt_dir}/lists" -o "Dir::Cache=${apt_dir}/cache")
if [[ ${EUID} -eq 0 ]]; then
  # root: download as root into the work folder, which _apt may not reach
  apt_options+=(-o APT::Sandbox::User=root)
fi
tarball="${work}/source/${orig_tarball}"
if [[ -f "${tarball}" ]] && echo "${orig_sha256}  ${tarball}" | sha256sum --check --status; then
  echo "${orig_tarball} already there"
else
  rm -f "${work}/source"/hypre_*
  apt-get "${apt_options[@]}" update
  (cd "${work}/source" && apt-get "${apt_options[@]}" source --download-only "hypre=${debian_version}")
fi
echo "${orig_sha256}  ${tarball}" | sha256sum --check

# ---- 2. sequential hypre: no MPI, no OpenMP, hypre's own BLAS/LAPACK ----
stamp="${install_dir}/clmg-build-stamp"
stamp_text="hypre ${hypre_version} ${orig_sha256} configure ${configure_args[*]} $(gcc --version | head -n 1)"
if [[ -f "${install_dir}/lib/libHYPRE.a" && -f "${stamp}" && "$(cat "${stamp}")" == "${stamp_text}" ]]; then
  say "hypre already built in ${install_dir} with the same source and settings"
else
  say "build hypre ${hypre_version} sequentially into ${install_dir}"
  rm -rf "${work}/hypre-${hypre_version}" "${install_dir}"
  tar -xzf "${tarball}" -C "${work}"
  (
    cd "${work}/hypre-${hypre_version}/src"
    ./configure "${configure_args[@]}" >"${work}/configure.log" 2>&1 || {
      tail -n 30 "${work}/configure.log"
      exit 1
    }
    grep -q '^#define HYPRE_SEQUENTIAL 1' HYPRE_config.h
    make -j "${jobs}" >"${work}/make.log" 2>&1 || {
      tail -n 30 "${work}/make.log"
      exit 1
    }
    make install >"${work}/install.log" 2>&1
  )
  echo "${stamp_text}" >"${stamp}"
fi
ls -l "${install_dir}/lib/libHYPRE.a"

# ---- 3. clmg_hypre_pcg, linked statically against it ----
say "build clmg_hypre_pcg (static) in ${build_dir}"
cmake -S "${repo_root}" -B "${build_dir}" -DCMAKE_BUILD_TYPE=Release \
  -DCLMG_BUILD_TESTS=OFF -DCLMG_BUILD_APPS=OFF \
  "-DCLMG_HYPRE_ROOT=${install_dir}" -DCLMG_HYPRE_STATIC=ON
cmake --build "${build_dir}" --target clmg_hypre_pcg -j "${jobs}"
program="${build_dir}/perf/clmg_hypre_pcg"
file_output="$(file -b "${program}")"
echo "file: ${file_output}"
if [[ "${file_output}" != *"statically linked"* ]]; then
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
if [[ "${smoke_json}" != *'"status": "ok"'* || "${smoke_json}" != *'"converged": true'* ]]; then
  echo "build-hypre-baseline: the smoke run failed" >&2
  exit 1
fi

# ---- 5. .hypre/: the program and a note of versions and settings ----
say "copy to ${out_dir}"
mkdir -p "${out_dir}"
cp "${program}" "${out_dir}/clmg_hypre_pcg.tmp"
mv -f "${out_dir}/clmg_hypre_pcg.tmp" "${out_dir}/clmg_hypre_pcg"
{
  echo "clmg_hypre_pcg: the hypre BoomerAMG-PCG baseline of perf/amg_baselines.py, run by"
  echo "perf/gpu.sh where it has not built one; made by perf/build-hypre-baseline.sh"
  echo "built:       $(date -u '+%Y-%m-%d %H:%M UTC') on $(sed -n 's/^PRETTY_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' /etc/os-release), $(uname -m)"
  echo "hypre:       ${hypre_version} (HYPRE_RELEASE_VERSION $(sed -n 's/^#define HYPRE_RELEASE_VERSION "\(.*\)"/\1/p' "${install_dir}/include/HYPRE_config.h"))"
  echo "source:      Debian bookworm source package hypre ${debian_version}, ${orig_tarball}"
  echo "             sha256 ${orig_sha256}; Debian's patches not applied"
  echo "configure:   ./configure ${configure_args[*]}"
  echo "             (install prefix: the work folder; make -j ${jobs}, make install)"
  echo "hypre build: sequential (HYPRE_SEQUENTIAL: no MPI, hypre's MPI stand-ins), no OpenMP,"
  echo "             hypre's internal BLAS and LAPACK, 32-bit HYPRE_Int and HYPRE_BigInt, double,"
  echo "             static library libHYPRE.a"
  echo "HYPRE_config.h: $(grep '^#define HYPRE_' "${install_dir}/include/HYPRE_config.h" |
    grep -v -E 'RELEASE|HYPRE_FMANGLE|HYPRE_MAXDIM' | sed 's/^#define //' | tr '\n' ' ')"
  echo "compiler:    $(gcc --version | head -n 1)"
  echo "C library:   $(ldd --version | head -n 1) (linked statically)"
  echo "link:        cmake -DCLMG_HYPRE_ROOT=<install prefix> -DCLMG_HYPRE_STATIC=ON (-static,"
  echo "             Release: -O3), target clmg_hypre_pcg"
  echo "clmg:        commit $(git -C "${repo_root}" rev-parse HEAD 2>/dev/null || echo unknown);"
  echo "             perf/hypre_pcg.c sha256 $(sha256sum "${repo_root}/perf/hypre_pcg.c" | cut -d' ' -f1)"
  echo "settings:    PCG (two-norm, ||r|| <= tol ||b||, no absolute tolerance) preconditioned by"
  echo "             one BoomerAMG V-cycle: PMIS coarsening (8), hybrid symmetric Gauss-Seidel (6),"
  echo "             one sweep, strong threshold 0.25, other settings hypre's defaults;"
  echo "             one process, one thread"
  echo "program:     $(stat -c %s "${out_dir}/clmg_hypre_pcg") bytes, sha256 $(sha256sum "${out_dir}/clmg_hypre_pcg" | cut -d' ' -f1)"
  echo "file:        ${file_output}"
} >"${out_dir}/VERSION"
cat "${out_dir}/VERSION"
echo
ls -l "${out_dir}"
