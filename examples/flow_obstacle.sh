#!/bin/sh
# clmg flow on a user's own geometry: a Gmsh channel with a square obstacle
# (examples/data/channel_obstacle.msh, written by channel_obstacle.py beside
# it; tags 1 inflow, 2 outflow, 3 obstacle, 4 channel walls). Every boundary
# tag gets one condition: no slip on the obstacle, free slip on the channel
# walls, do-nothing at the outflow and a parabolic inflow of peak 1.5 (mean
# 1: Re = 1 * 0.1 / nu = 100 with the obstacle's side 0.1 as the length).
# Writes obstacle.csv (steps with the obstacle's drag and lift coefficients
# and the pressure difference across it), obstacle_NNNN.vtu and obstacle.pvd
# (open it in ParaView) in the current folder.
#
#   sh examples/flow_obstacle.sh [LEVEL [STEPS]]      (defaults 1 and 20)
#
# CLMG (default: clmg on the PATH, else build/apps/clmg) names the command.
set -e
here=$(cd "$(dirname "$0")" && pwd)
clmg=${CLMG:-$(command -v clmg || echo "$here/../build/apps/clmg")}
"$clmg" flow --case "$here/data/channel_obstacle.msh" \
  --walls 3 --slip 4 --outflow 2 --inflow 1 \
  --inflow-profile parabolic --inflow-peak 1.5 \
  --body 3 --reference-length 0.1 --pressure-points 0.14,0.2,0.26,0.2 \
  --re 100 --level "${1:-1}" --steps "${2:-20}" --dt 0.01 \
  --time-scheme crank-nicolson --upwind weighted \
  --csv obstacle.csv --vtk obstacle --vtk-every 10 -q
echo "wrote obstacle.csv, obstacle.pvd and its .vtu files"
tail -n 1 obstacle.csv
