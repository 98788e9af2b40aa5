"""clmg.flow: the Navier-Stokes cases of ``clmg flow`` from Python, against
the command's JSON figures (the same run: the same iterations, the same
values to rounding), the solution's physics (no slip, the lid, a discretely
divergence-free velocity), its mesh and .vtu, and bad arguments."""

import json
import os
import subprocess
import warnings

import numpy as np
import pytest

import clmg
from conftest import REPO


def clmg_command():
    command = os.environ.get("CLMG_COMMAND") or str(REPO / "build" / "apps" / "clmg")
    if not os.access(command, os.X_OK):
        pytest.skip("no clmg command (set CLMG_COMMAND)")
    return command


def command_json(*args):
    env = dict(os.environ)
    if not env.get("CLMG_DEVICE"):
        env.pop("CLMG_DEVICE", None)
    out = subprocess.run(
        [clmg_command(), "flow", *args, "--json", "-q"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def cavity(ctx):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it converges: no ConvergenceWarning
        return clmg.flow("cavity", level=2, context=ctx)


@pytest.fixture(scope="module")
def dfg1(ctx):
    return clmg.flow("dfg1", level=1, context=ctx)


def test_cavity_agrees_with_the_command(cavity):
    report = command_json("--case", "cavity", "--level", "2")
    info = cavity.info
    assert info.steady and info.converged and info.status == "success"
    assert report["unknowns"] == info.unknowns
    assert report["levels"] == info.levels
    assert report["triangles"] == cavity.triangles.shape[0]
    assert report["iterations"] == info.steps == len(cavity.history.step)
    assert report["linear_iterations"] == info.linear_iterations
    assert info.linear_iterations == cavity.history.iterations.sum()
    assert report["viscosity"] == pytest.approx(info.viscosity, rel=1e-15)
    assert report["nonlinear_residual"] == pytest.approx(info.nonlinear_residual, rel=1e-6)
    assert info.nonlinear_residual <= 1e-8
    assert report["options"] == info.options


def test_cavity_solution(cavity):
    edges = cavity.edge_midpoints.shape[0]
    assert cavity.velocity.shape == (edges, 2)
    assert cavity.pressure.shape == (cavity.triangles.shape[0],)
    assert cavity.info.unknowns == 2 * edges + cavity.triangles.shape[0]
    # the lid moves at (1, 0); the other walls hold the fluid
    mid = cavity.edge_midpoints
    lid = np.isclose(mid[:, 1], 1.0)
    walls = np.isclose(mid[:, 0], 0) | np.isclose(mid[:, 0], 1) | np.isclose(mid[:, 1], 0)
    assert lid.any() and walls.any()
    assert np.allclose(cavity.velocity[lid], [1.0, 0.0], atol=1e-12)
    assert np.allclose(cavity.velocity[walls], 0.0, atol=1e-12)
    # the flow turns: a vortex, u_x < 0 somewhere below the lid
    assert cavity.velocity[:, 0].min() < -0.1
    # P1nc velocity is divergence-free triangle by triangle (to the solver's
    # tolerance): the flux through each triangle's edges sums to 0
    tri = cavity.vertices[cavity.triangles]  # T x 3 x 2
    flux = np.zeros(tri.shape[0])
    scale = np.zeros(tri.shape[0])
    for k in range(3):  # edge k is opposite vertex k
        a, b, c = tri[:, (k + 1) % 3], tri[:, (k + 2) % 3], tri[:, k]
        normal = np.stack([b[:, 1] - a[:, 1], a[:, 0] - b[:, 0]], axis=1)
        outward = np.sign(np.einsum("ij,ij->i", normal, (a + b) / 2 - c))[:, None]
        u = cavity.velocity[cavity._cell_edges[:, k]]
        flux += np.einsum("ij,ij->i", u, normal * outward)
        scale += np.abs(u).sum(axis=1) * np.linalg.norm(normal, axis=1)
    assert np.abs(flux).max() <= 1e-6 * scale.max()
    # the pressure's level is free; its mean is finite
    assert np.isfinite(cavity.pressure).all()


def test_cavity_mesh_and_vtu(cavity, tmp_path):
    meshio = pytest.importorskip("meshio")
    mesh = cavity.mesh
    assert mesh.cells_dict["triangle"].shape == cavity.triangles.shape
    assert np.array_equal(mesh.cell_data["pressure"][0], cavity.pressure)
    assert np.allclose(
        mesh.cell_data["velocity"][0],
        cavity.velocity[cavity._cell_edges].mean(axis=1),
    )
    path = tmp_path / "cavity.vtu"
    cavity.to_vtu(path)
    back = meshio.read(path)
    assert back.cells[0].data.shape[0] == cavity.triangles.shape[0]
    pressure = np.asarray(back.cell_data["pressure"][0]).ravel()
    assert np.allclose(pressure, cavity.pressure, rtol=1e-12, atol=1e-14)


def test_dfg1_agrees_with_the_command(dfg1):
    report = command_json("--case", "dfg1", "--level", "1")
    info = dfg1.info
    assert info.reynolds == 20 and info.viscosity == pytest.approx(1e-3, rel=1e-15)
    assert report["iterations"] == info.steps
    assert report["linear_iterations"] == info.linear_iterations
    assert report["unknowns"] == info.unknowns
    for key, value in (
        ("drag_coefficient", info.drag),
        ("lift_coefficient", info.lift),
        ("pressure_difference", info.pressure_difference),
    ):
        assert report[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    # the benchmark's values (Schaefer and Turek: c_D 5.58, delta p 0.1175)
    # within a coarse level's discretisation error
    assert 5.0 < info.drag < 6.2
    assert 0.09 < info.pressure_difference < 0.14
    assert np.isfinite(dfg1.history.drag).all()
    assert dfg1.history.drag[-1] == info.drag


def test_unsteady_steps(ctx):
    result = clmg.flow("dfg2", level=1, steps=2, dt=0.005, context=ctx)
    assert not result.info.steady
    assert result.info.steps == 2
    assert np.allclose(result.history.time, [0.005, 0.01])
    assert np.isfinite(result.history.lift).all()
    assert (result.history.linear_residual <= 1e-8).all()
    report = command_json("--case", "dfg2", "--level", "1", "--steps", "2", "--dt", "0.005")
    assert report["linear_iterations"] == result.info.linear_iterations
    assert report["lift_coefficient"] == pytest.approx(result.info.lift, rel=1e-9, abs=1e-12)


def test_dfg3_and_the_schemes(ctx):
    """DFG 2D-3 (inflow 1.5 sin(pi t / 8)) and the time schemes and upwinds
    by name, against clmg flow with the same flags."""
    result = clmg.flow("dfg3", level=1, steps=2, dt=0.01, context=ctx)
    assert np.allclose(result.history.time, [0.01, 0.02])
    report = command_json("--case", "dfg3", "--level", "1", "--steps", "2", "--dt", "0.01")
    assert report["time_scheme"] == "crank-nicolson" and report["upwind"] == "weighted"
    assert report["linear_iterations"] == result.info.linear_iterations
    assert report["lift_coefficient"] == pytest.approx(result.info.lift, rel=1e-9, abs=1e-12)
    # the inflow at t = 0.02 is sin(pi 0.02 / 8) of its peak: the drag is far
    # below DFG 2D-2's at the same time
    dfg2 = clmg.flow("dfg2", level=1, steps=2, dt=0.01, context=ctx)
    assert abs(result.info.drag) < 0.5 * abs(dfg2.info.drag)
    first = clmg.flow(
        "dfg2", level=1, steps=2, dt=0.01, time_scheme="bdf2", upwind="samarskij", context=ctx
    )
    report = command_json(
        "--case", "dfg2", "--level", "1", "--steps", "2", "--dt", "0.01",
        "--time-scheme", "bdf2", "--upwind", "samarskij",
    )
    assert report["time_scheme"] == "bdf2" and report["upwind"] == "samarskij"
    assert report["lift_coefficient"] == pytest.approx(first.info.lift, rel=1e-9, abs=1e-12)
    assert first.info.lift != pytest.approx(dfg2.info.lift, rel=1e-6)


def test_not_converged_warns(ctx):
    with pytest.warns(clmg.ConvergenceWarning):
        result = clmg.flow("cavity", level=1, flow_nonlinear_maxit=2, context=ctx)
    assert not result.info.converged and result.info.steps == 2
    assert result.info.status == "not converged"


def test_bad_arguments(ctx, tmp_path):
    with pytest.raises(ValueError, match="unknown case 'dfg4'"):
        clmg.flow("dfg4", context=ctx)
    with pytest.raises(ValueError, match="dfg3's inflow varies in time"):
        clmg.flow("dfg3", steady=True, context=ctx)
    with pytest.raises(ValueError, match="unknown time_scheme"):
        clmg.flow("dfg2", time_scheme="rk4", context=ctx)
    with pytest.raises(TypeError, match="case must be"):
        clmg.flow(3, context=ctx)
    with pytest.raises(TypeError, match="level must be an integer"):
        clmg.flow("cavity", level="2", context=ctx)
    with pytest.raises(ValueError, match="level must be 0 to 12"):
        clmg.flow("cavity", level=-1, context=ctx)
    with pytest.raises(ValueError, match="re must be finite and > 0"):
        clmg.flow("cavity", re=-5, context=ctx)
    with pytest.raises(TypeError, match="re must be a number"):
        clmg.flow("cavity", re="high", context=ctx)
    with pytest.raises(ValueError, match="give one or the other"):
        clmg.flow("cavity", steady=True, steps=5, context=ctx)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        clmg.flow("dfg2", steps=0, context=ctx)
    with pytest.raises(ValueError, match="dt must be finite and > 0"):
        clmg.flow("dfg2", steps=1, dt=0.0, context=ctx)
    with pytest.raises(ValueError, match="unknown upwind"):
        clmg.flow("cavity", upwind="central", context=ctx)
    with pytest.raises(ValueError, match="for a .msh case"):
        clmg.flow("cavity", walls=[1], context=ctx)
    with pytest.raises(FileNotFoundError, match="no mesh file"):
        clmg.flow(str(tmp_path / "none.msh"), walls=[1], inflow=2, context=ctx)
    quads = REPO / "tests" / "data" / "quads_22.msh"
    with pytest.raises(ValueError, match="needs walls"):
        clmg.flow(quads, context=ctx)
    with pytest.raises(clmg.ClmgError):  # quadrilaterals: the library's refusal
        clmg.flow(quads, walls=[1], inflow=2, level=0, context=ctx)
    with pytest.raises(TypeError, match="unknown option"):
        clmg.flow("cavity", smoother="vanka", context=ctx)
    with pytest.raises(clmg.ClmgError, match="mg.smoother"):
        clmg.flow("cavity", level=1, mg_smoother="chebyshev", context=ctx)
    with pytest.raises(clmg.ClmgError, match="krylov"):
        clmg.flow("cavity", level=1, krylov="cg", context=ctx)


OBSTACLE = REPO / "examples" / "data" / "channel_obstacle.msh"
OBSTACLE_TAGS = dict(walls=[3], slip=[4], outflow=[2], inflow=1)


def test_gmsh_case_keywords(ctx):
    """A Gmsh channel with a square obstacle: the parabolic inflow's values at
    the inflow edges against the formula, zero normal velocity on the slip
    walls, no slip on the obstacle, the body's coefficients and the pressure
    difference as clmg flow's with the same flags."""
    result = clmg.flow(
        OBSTACLE, level=0, steps=2, dt=0.01, inflow_profile="parabolic", inflow_peak=1.5,
        body=3, reference_length=0.1, pressure_points=(0.14, 0.2, 0.26, 0.2), context=ctx,
        **OBSTACLE_TAGS,
    )
    mid, u = result.edge_midpoints, result.velocity
    inflow = np.isclose(mid[:, 0], 0.0)
    assert inflow.sum() == 8
    y = mid[inflow, 1]
    assert np.allclose(u[inflow, 0], 4 * 1.5 * y * (0.41 - y) / 0.41**2, rtol=1e-12, atol=1e-12)
    assert np.allclose(u[inflow, 1], 0.0, atol=1e-12)
    slip = np.isclose(mid[:, 1], 0.0) | np.isclose(mid[:, 1], 0.41)
    assert np.allclose(u[slip, 1], 0.0, atol=1e-12)
    assert np.abs(u[slip, 0]).max() > 0.1  # free slip: the walls' tangential velocity moves
    # the mean velocity 1 and the reference length 0.1: nu = 0.1 / Re
    assert result.info.viscosity == pytest.approx(0.1 / 100, rel=1e-14)
    assert np.isfinite(result.history.drag).all() and result.info.drag > 0
    assert np.isfinite(result.info.pressure_difference)
    report = command_json(
        "--case", str(OBSTACLE), "--walls", "3", "--slip", "4", "--outflow", "2", "--inflow",
        "1", "--inflow-profile", "parabolic", "--inflow-peak", "1.5", "--body", "3",
        "--reference-length", "0.1", "--pressure-points", "0.14,0.2,0.26,0.2", "--level", "0",
        "--steps", "2", "--dt", "0.01",
    )
    for key, value in (
        ("drag_coefficient", result.info.drag),
        ("lift_coefficient", result.info.lift),
        ("pressure_difference", result.info.pressure_difference),
    ):
        assert report[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    # uniform: the peak on every inflow edge; no body: no coefficients
    uniform = clmg.flow(OBSTACLE, level=0, steps=1, inflow_peak=0.5, context=ctx, **OBSTACLE_TAGS)
    inflow = np.isclose(uniform.edge_midpoints[:, 0], 0.0)
    assert np.allclose(uniform.velocity[inflow, 0], 0.5, rtol=1e-14)
    assert np.isnan(uniform.info.drag)


def test_gmsh_case_refusals(ctx):
    tags = dict(OBSTACLE_TAGS)
    with pytest.raises(ValueError, match="boundary tag 2 of the mesh has no condition"):
        clmg.flow(OBSTACLE, level=0, walls=[3], slip=[4], inflow=1, context=ctx)
    with pytest.raises(ValueError, match="tag 4 is both a wall and a slip tag"):
        clmg.flow(OBSTACLE, level=0, **{**tags, "walls": [3, 4]}, context=ctx)
    with pytest.raises(ValueError, match="an outflow tag 9: no boundary edge"):
        clmg.flow(OBSTACLE, level=0, **{**tags, "outflow": [2, 9]}, context=ctx)
    with pytest.raises(ValueError, match="body tag 7"):
        clmg.flow(OBSTACLE, level=0, body=7, context=ctx, **tags)
    with pytest.raises(ValueError, match="inflow_profile is 'uniform' or 'parabolic'"):
        clmg.flow(OBSTACLE, level=0, inflow_profile="cubic", context=ctx, **tags)
    with pytest.raises(ValueError, match="pressure_points must be 4 numbers"):
        clmg.flow(OBSTACLE, level=0, pressure_points=(1, 2), context=ctx, **tags)
    with pytest.raises(ValueError, match="peak must be finite and > 0"):
        clmg.flow(OBSTACLE, level=0, inflow_peak=0.0, context=ctx, **tags)
    with pytest.raises(ValueError, match="for a .msh case"):
        clmg.flow("dfg1", slip=[3], context=ctx)
