"""The finite-element problems: clmg.poisson and clmg.helmholtz against known
properties of their solutions, the clmg command's figures, and meshio.

meshio tests skip without meshio unless CLMG_REQUIRE_MESHIO=1 (CI sets it);
the comparison with `clmg poisson --json` runs where CLMG_COMMAND names the
command (ctest sets it) or build/apps/clmg exists.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import clmg
from conftest import REPO


def meshio_or_skip():
    if os.environ.get("CLMG_REQUIRE_MESHIO") == "1":
        import meshio

        return meshio
    return pytest.importorskip("meshio")


def clmg_command():
    command = os.environ.get("CLMG_COMMAND") or str(REPO / "build" / "apps" / "clmg")
    if not os.access(command, os.X_OK):
        pytest.skip("no clmg command (set CLMG_COMMAND)")
    return command


@pytest.fixture(scope="module")
def circle(ctx):
    return clmg.poisson(level=4, mesh="circle", return_matrix=True, context=ctx)


@pytest.fixture(scope="module")
def blobs(ctx):
    return clmg.helmholtz("blobs2d:1", sigma={1: 1.0, 2: 100.0}, context=ctx)


def test_poisson_circle(circle):
    r = circle
    n = r.info.unknowns
    assert r.u.shape == (n,) and r.b.shape == (n,) and r.points.shape == (n, 2)
    assert n == 576  # Q1 on level 4: 8 * 4^3 cells, 8 * 8 rings of 9 nodes
    assert r.info.converged and r.info.status == "success"
    assert r.info.residuals.shape == (r.info.iterations + 1,)
    # the default where the device has fp64: a float cycle inside double CG
    assert r.info.view["options"]["krylov"] == "cg"
    assert r.info.view["options"]["precision"] == "mixed"
    assert r.info.levels == 4
    # the residual recomputed on the host from the returned matrix
    assert np.linalg.norm(r.b - r.A @ r.u) <= 1e-8 * np.linalg.norm(r.b) * 1.01
    assert abs(r.A - r.A.T).max() < 1e-12
    # SciPy's own index type for a matrix of this size: clmg.solve takes it
    # without copying the columns
    assert r.A.indices.dtype == np.int32 and r.A.indptr.dtype == np.int32
    # the maximum principle: f = 1 >= 0, u = 0 on the square and 1 on the circle
    assert r.u.min() >= -1e-10 and r.u.max() <= 1 + 1e-10
    radius = np.linalg.norm(r.points, axis=1)
    on_circle = np.abs(radius - 0.5) < 1e-9
    on_square = np.max(np.abs(r.points), axis=1) > 1 - 1e-12
    assert on_circle.sum() == 8 * 8 and on_square.sum() == 8 * 8
    assert np.allclose(r.u[on_circle], 1.0) and np.allclose(r.u[on_square], 0.0)
    assert np.all(r.u[~on_circle & ~on_square] > 0)


def test_poisson_numberings_and_elements_agree(ctx, circle):
    # the host assembly in another numbering gives the same solution on the same nodes
    host = clmg.poisson(
        level=4, numbering="cm", krylov="cg", tol=1e-10, context=ctx, return_matrix=True
    )
    assert np.allclose(host.points, circle.points)
    assert np.abs(host.u - circle.u).max() < 1e-7
    assert abs(host.A - circle.A).max() < 1e-12
    q2 = clmg.poisson(level=3, element="q2", return_matrix=True, context=ctx)
    assert q2.info.unknowns == circle.info.unknowns  # Q2 on level L has Q1's nodes of L + 1
    assert q2.cells.shape[1] == 9
    assert np.linalg.norm(q2.b - q2.A @ q2.u) <= 1e-8 * np.linalg.norm(q2.b) * 1.01
    assert q2.u.min() >= -1e-8 and q2.u.max() <= 1 + 1e-8
    # Q1 and Q2 approximate the same function: close at the vertices of level 3,
    # the first nodes of both (refinement and Q2 keep the vertices' numbers)
    vertices = 160
    assert np.array_equal(q2.points[:vertices], circle.points[:vertices])
    assert 0 < np.abs(circle.u[:vertices] - q2.u[:vertices]).max() < 0.01


def test_poisson_mixed_and_blood(ctx):
    mixed = clmg.poisson(level=3, precision="mixed", context=ctx)
    assert mixed.info.converged and mixed.info.options["krylov"] == "cg"
    blood = clmg.poisson(level=2, mesh="blood", context=ctx)
    assert blood.info.converged
    assert blood.info.options["mg"]["pre"] == 64 or blood.info.options["mg"]["pre"] == "64"
    # f = 0 and u = 1 on the boundary: u = 1
    assert np.abs(blood.u - 1).max() < 1e-5


def test_poisson_agrees_with_the_command(circle):
    command = clmg_command()
    env = dict(os.environ, CLMG_DEVICE=os.environ.get("CLMG_DEVICE") or "")
    if not env["CLMG_DEVICE"]:
        del env["CLMG_DEVICE"]
    out = subprocess.run(
        [command, "poisson", "--level", "4", "--json", "-q"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["unknowns"] == circle.info.unknowns
    assert report["nonzeros"] == circle.info.nonzeros
    assert report["levels"] == circle.info.levels
    assert report["iterations"] == circle.info.iterations
    assert report["relative_residual"] == pytest.approx(circle.info.relative_residual, rel=1e-6)


def test_poisson_monitor_stops(ctx):
    seen = []
    with pytest.warns(clmg.ConvergenceWarning):
        r = clmg.poisson(level=3, context=ctx, monitor=lambda k, res: seen.append(k) or k >= 2)
    assert not r.info.converged and r.info.iterations == 2 and seen[-1] == 2


def test_vtu_round_trip(tmp_path, ctx, circle, blobs):
    meshio = meshio_or_skip()
    q2 = clmg.poisson(level=2, element="q2", context=ctx)
    for result, kind in ((circle, "quad"), (q2, "quad9"), (blobs, "triangle")):
        mesh = result.mesh
        assert isinstance(mesh, meshio.Mesh)
        assert mesh.cells[0].type == kind
        # the library's .vtu (binary and ASCII) read back by meshio: the same mesh
        for ascii in (False, True):
            path = tmp_path / f"{kind}-{ascii}.vtu"
            result.to_vtu(path, ascii=ascii, twice=2 * result.u)
            back = meshio.read(path)
            assert np.allclose(back.points[:, :2], mesh.points)
            assert back.cells[0].type == kind
            assert np.array_equal(back.cells[0].data, mesh.cells[0].data)
            assert np.allclose(back.point_data["u"], result.u)
            assert np.allclose(back.point_data["twice"], 2 * result.u)
        # and meshio's own writer of the .mesh
        path = tmp_path / f"{kind}-meshio.vtu"
        meshio.write(path, mesh)
        back = meshio.read(path)
        assert np.array_equal(back.cells[0].data, mesh.cells[0].data)
        assert np.allclose(back.point_data["u"], result.u)
    assert np.array_equal(blobs.mesh.cell_data["material"][0], blobs.material)


def test_meshio_missing(monkeypatch, circle, tmp_path):
    monkeypatch.setitem(sys.modules, "meshio", None)
    with pytest.raises(ImportError, match="pip install meshio"):
        circle.mesh
    circle.to_vtu(tmp_path / "u.vtu")  # the library's writer needs no meshio
    assert (tmp_path / "u.vtu").stat().st_size > 0


def test_helmholtz(ctx, blobs):
    r = blobs
    n = r.points.shape[0]
    assert n == 81 and r.A.shape == (n, n) and r.cells.shape == (128, 3)
    assert set(np.unique(r.material)) == {1, 2}
    assert abs(r.A - r.A.T).max() < 1e-10
    assert r.info.converged and r.info.true_relative_residual < 1e-8
    assert np.allclose(r.u, spla.spsolve(r.A.tocsc(), r.b), rtol=1e-6, atol=1e-9)
    # b = (phi_i, 1) sums to the area; the host assembly is the same system
    assert r.b.sum() == pytest.approx(1.0, rel=1e-12)
    host = clmg.helmholtz("blobs2d:1", sigma={1: 1.0, 2: 100.0}, assembly="host", context=ctx)
    assert abs(host.A - r.A).max() < 1e-12 and np.abs(host.b - r.b).max() < 1e-14
    assembled = clmg.helmholtz("blobs2d:1", sigma={1: 1.0, 2: 100.0}, solve=False, context=ctx)
    assert assembled.u is None and assembled.info is None
    assert abs(assembled.A - r.A).max() == 0 and np.array_equal(assembled.b, r.b)
    # lambda = 1, sigma = 1, f = 1, natural conditions: u = 1
    ones = clmg.helmholtz("blobs2d:1", tol=1e-10, context=ctx)
    assert np.abs(ones.u - 1).max() < 1e-8
    # u = 0 on the Dirichlet boundary (tag 1: all of it)
    zero = clmg.helmholtz("blobs2d:1", dirichlet=[1], rhs="ones", precond="amg", context=ctx)
    boundary = np.any((zero.points < 1e-12) | (zero.points > 1 - 1e-12), axis=1)
    assert np.all(zero.u[boundary] == 0) and np.all(zero.u[~boundary] > 0)


def test_bad_arguments(ctx, tmp_path):
    with pytest.raises(ValueError, match="unknown element"):
        clmg.poisson(level=2, element="p1", context=ctx)
    with pytest.raises(ValueError, match="level must be 1 to 16"):
        clmg.poisson(level=0, context=ctx)
    with pytest.raises(TypeError, match="level must be an integer"):
        clmg.poisson(level=2.5, context=ctx)
    with pytest.raises(ValueError, match="unknown mesh 'square'"):
        clmg.poisson(level=2, mesh="square", context=ctx)
    with pytest.raises(FileNotFoundError, match="no mesh file"):
        clmg.poisson(level=2, mesh=str(tmp_path / "none.msh"), context=ctx)
    bad = tmp_path / "bad.msh"
    bad.write_text("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n")
    with pytest.raises(clmg.ClmgError):
        clmg.poisson(level=2, mesh=bad, context=ctx)
    with pytest.raises(ValueError, match="2lv numbering only"):
        clmg.poisson(level=2, numbering="cm", assembly="device", context=ctx)
    with pytest.raises(ValueError, match="unknown numbering"):
        clmg.poisson(level=2, numbering="abc", assembly="host", context=ctx)
    with pytest.raises(ValueError, match="multigrid cycles .none. or CG"):
        clmg.poisson(level=2, krylov="gmres", context=ctx)
    with pytest.raises(clmg.ClmgError, match="mg.smoother"):
        clmg.poisson(level=2, mg_smoother="nonesuch", context=ctx)
    with pytest.raises(TypeError, match="unknown option"):
        clmg.poisson(level=2, smoother="jacobi", context=ctx)
    with pytest.raises(ValueError, match="level must be 0 to 6"):
        clmg.helmholtz("blobs2d:9", context=ctx)
    with pytest.raises(ValueError, match="not of triangles"):
        clmg.helmholtz(REPO / "tests" / "data" / "quads_22.msh", context=ctx)
    with pytest.raises(ValueError, match="sigma values"):
        clmg.helmholtz("blobs2d:1", sigma={1: -1.0}, context=ctx)
    with pytest.raises(clmg.ClmgError, match="2"):  # material 2 has no sigma: the library's error
        clmg.helmholtz("blobs2d:1", sigma={1: 1.0}, context=ctx)
    with pytest.raises(ValueError, match="unknown right-hand side"):
        clmg.helmholtz("blobs2d:1", rhs="twos", context=ctx)
