#!/usr/bin/env bash
# Fills .deps/ (ignored by git) with the Debian packages that perf/gpu.sh
# installs where they are missing, for a GPU machine without network access:
# CLBlast, cJSON, cmocka (for the test suites) and pkg-config (tests/ finds
# cmocka through it); and .whl/ with wheels for CPython 3.12: jsonschema's
# (the CLI tests check every command's JSON against
# docs/result.schema.json), pyamg's (the AMG baselines) and MPICH (clmg_mpi).
# Run it on a machine with network access, then copy the repository, .deps/
# and .whl/ included, to the GPU machine:
#
#   perf/fetch-deps.sh
#
# The packages are Debian 12's (CLBlast 1.5.3); they also install on Ubuntu
# 24.04 x86_64. apt-get download needs no root, only current package lists
# (run `apt-get update` first if it cannot find a package).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps_dir="${repo_root}/.deps"
packages=(libclblast1 libclblast-dev libcjson1 libcjson-dev libcmocka0 libcmocka-dev
  pkg-config pkgconf pkgconf-bin libpkgconf3)

mkdir -p "${deps_dir}"
cd "${deps_dir}"
for package in "${packages[@]}"; do
  rm -f "${package}"_*.deb
done
apt-get download "${packages[@]}"
echo "fetch-deps: .deps/ now holds:"
ls -l "${deps_dir}"
python3 -m pip download jsonschema --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_17_x86_64 --implementation cp -d "${repo_root}/.whl"
# pyamg (with SciPy and NumPy) for the AMG baselines; MPICH for clmg_mpi and
# perf/scaling.sh where the GPU machine has no MPI (perf/gpu.sh unpacks it).
# MPICH's wheels are manylinux_2_28 and pure-Python tagged: a version is
# pinned, because without one pip picks the empty placeholder 0.0.0.
# (pyamg alone: the GPU machine's Python has NumPy and SciPy, and pyamg's
# newer wheels are manylinux_2_28: with 2_17 only, pip takes 5.2.1, whose CG
# fails against the GPU machine's newer SciPy, whose make_system returns 4 values)
python3 -m pip download pyamg --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --implementation cp \
  -d "${repo_root}/.whl"
python3 -m pip download "mpich==4.3.2" --no-deps --only-binary=:all: \
  --platform manylinux_2_28_x86_64 -d "${repo_root}/.whl"
echo "fetch-deps: .whl/ now holds:"
ls -l "${repo_root}/.whl"
