"""clmg's finite-element problems from Python: the solution as a NumPy array,
the mesh as a meshio.Mesh.

:func:`poisson` is ``clmg poisson`` (Q1/Q2 on CIRCLE, BLOOD or a Gmsh mesh,
solved by geometric multigrid on the device); :func:`helmholtz` is ``clmg
helmholtz`` (P1 on triangles or tetrahedra, assembled on the device or the
host, solved by the options layer's Krylov methods). Solver options are the
options layer's keys, as for :func:`clmg.solve`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import warnings
from typing import Any, Callable, Mapping

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import _clmg

__all__ = [
    "FlowHistory",
    "FlowInfo",
    "FlowResult",
    "HelmholtzResult",
    "PoissonInfo",
    "PoissonMultigrid",
    "PoissonResult",
    "flow",
    "helmholtz",
    "poisson",
    "poisson_multigrid",
]

# VTK's node order of a tensor cell as tensor coordinates in units of
# 1 / degree (lib/mesh/vtu.c's tables, which the library's .vtu writer uses;
# a test compares the two through meshio): corners counter-clockwise (bottom
# face, then top), then the edge midpoints, face centres and body centre.
_VTK_TENSOR = {
    (2, 1): ("quad", [(0, 0), (1, 0), (1, 1), (0, 1)]),
    (2, 2): ("quad9", [(0, 0), (2, 0), (2, 2), (0, 2), (1, 0), (2, 1), (1, 2), (0, 1), (1, 1)]),
    (3, 1): (
        "hexahedron",
        [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)],
    ),
    (3, 2): (
        "hexahedron27",
        [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0), (0, 0, 2), (2, 0, 2), (2, 2, 2), (0, 2, 2)]
        + [(1, 0, 0), (2, 1, 0), (1, 2, 0), (0, 1, 0), (1, 0, 2), (2, 1, 2), (1, 2, 2), (0, 1, 2)]
        + [(0, 0, 1), (2, 0, 1), (2, 2, 1), (0, 2, 1)]
        + [(0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2), (1, 1, 1)],
    ),
}
# clmg's P1/P2 simplex order is VTK's
_VTK_SIMPLEX = {(2, 1): "triangle", (2, 2): "triangle6", (3, 1): "tetra", (3, 2): "tetra10"}


def _meshio():
    try:
        import meshio
    except ImportError as error:
        raise ImportError(
            "the .mesh of a clmg result is a meshio.Mesh: install meshio (pip install meshio); "
            "to_vtu() writes the .vtu without it"
        ) from error
    return meshio


class _FEMesh:
    """The finest mesh and its degree-`degree` Lagrange nodes, as arrays."""

    def __init__(self, handle: Any, degree: int):
        self._handle = handle
        self.degree = degree
        arrays = handle.arrays()
        self.dim = arrays["dim"]
        self.simplex = arrays["simplex"]
        self.vertices = np.frombuffer(arrays["coords"], dtype=np.float64).reshape(-1, self.dim)
        self.material = (
            None
            if arrays["material"] is None
            else np.frombuffer(arrays["material"], dtype=np.int32)
        )
        nodes = handle.nodes(degree)
        self.points = np.frombuffer(nodes["coords"], dtype=np.float64).reshape(-1, self.dim)
        self.cells = np.frombuffer(nodes["cell_nodes"], dtype=np.int32).reshape(
            -1, nodes["per_cell"]
        )

    def vtk_cells(self) -> tuple[str, np.ndarray]:
        """meshio's cell type and the cells' nodes in VTK's order."""
        if self.simplex:
            return _VTK_SIMPLEX[(self.dim, self.degree)], self.cells
        name, coordinates = _VTK_TENSOR[(self.dim, self.degree)]
        side = self.degree + 1
        order = [sum(c * side**axis for axis, c in enumerate(coords)) for coords in coordinates]
        return name, self.cells[:, order]

    def meshio(self, point_data: Mapping[str, np.ndarray]):
        meshio = _meshio()
        name, cells = self.vtk_cells()
        cell_data = {} if self.material is None else {"material": [self.material.copy()]}
        return meshio.Mesh(
            self.points.copy(),
            [(name, cells.astype(np.int64))],
            point_data={key: np.asarray(value).copy() for key, value in point_data.items()},
            cell_data=cell_data,
        )

    def write_vtu(self, path: str | os.PathLike, fields: Mapping[str, np.ndarray], ascii: bool):
        items = []
        for name, values in fields.items():
            array = np.ascontiguousarray(values, dtype=np.float64)
            if array.shape[0] != self.points.shape[0]:
                raise ValueError(
                    f"field {name!r} has {array.shape[0]} values, not one per node "
                    f"({self.points.shape[0]})"
                )
            components = 1 if array.ndim == 1 else array.shape[1]
            items.append((name, array, components, False))
        self._handle.write_vtu(os.fspath(path), self.degree, items, bool(ascii))


def _resolve(context, device):
    from . import _resolve_context  # the package's, made after this module loads

    return _resolve_context(context, device)


def _parse(options, keywords):
    from . import _Options

    return _Options(options, keywords)


def _csr(matrix: Mapping) -> sp.csr_array:
    """The library's matrix as SciPy CSR with int32 indices where the entries
    fit (SciPy's own choice; int64 row offsets would make SciPy widen the
    columns too, and clmg.solve narrow them back: a copy of every column)."""
    rows = matrix["rows"]
    indptr = np.frombuffer(matrix["indptr"], dtype=np.int64)
    if indptr[-1] <= np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    else:
        indptr = indptr.copy()
    return sp.csr_array(
        (
            np.frombuffer(matrix["data"], dtype=np.float64).copy(),
            np.frombuffer(matrix["indices"], dtype=np.int32).copy(),
            indptr,
        ),
        shape=(rows, rows),
    )


def _nodes_matrix(matrix: Mapping) -> tuple[sp.csr_array, sp.csr_array, np.ndarray | None]:
    """The finest matrix in the nodes' numbering, in the hierarchy's, and
    perm (row i of the hierarchy is node perm[i]; None: the same numbering)."""
    A = _csr(matrix)
    if "perm" not in matrix:
        return A, A, None
    perm = np.frombuffer(matrix["perm"], dtype=np.int32).copy()
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size, dtype=np.int32)
    nodes = sp.csr_array(A[inverse][:, inverse])
    nodes.sort_indices()
    return nodes, A, perm


def _coarse_mesh(mesh: str, generators: Mapping[str, tuple[str, int]]) -> tuple[Any, str]:
    """The coarse mesh of a name ("circle", "regular:2", ...) or a .msh file."""
    if not isinstance(mesh, (str, os.PathLike)):
        raise TypeError(f"mesh must be a name or a Gmsh file's path, not {mesh!r}")
    text = os.fspath(mesh)
    for prefix, (kind, max_level) in generators.items():
        if text == prefix or text.startswith(prefix + ":"):
            level = 0
            if ":" in text:
                try:
                    level = int(text.split(":", 1)[1])
                except ValueError:
                    raise ValueError(
                        f"mesh {text!r}: the level after ':' must be an integer"
                    ) from None
                if not 0 <= level <= max_level:
                    raise ValueError(f"mesh {text!r}: the level must be 0 to {max_level}")
            return _clmg.make_mesh(kind, level), prefix
    if not text.endswith(".msh"):
        names = ", ".join(generators)
        raise ValueError(f"unknown mesh {text!r}: {names}, or a Gmsh file (.msh)")
    if not os.path.isfile(text):
        raise FileNotFoundError(f"no mesh file {text!r}")
    return _clmg.make_mesh("gmsh", 0, text), "file"


# ---- Poisson ----


@dataclasses.dataclass
class PoissonInfo:
    """What a Poisson solve reports (the figures of ``clmg poisson --json``)."""

    converged: bool  #: the residual met the tolerance
    iterations: int  #: multigrid cycles (krylov=none) or CG iterations
    residuals: np.ndarray  #: relative residual at the start and after each iteration
    initial_residual: float  #: ||b - A u0||
    final_residual: float  #: ||b - A u||
    relative_residual: float  #: final_residual / ||b||
    unknowns: int  #: rows of the finest level
    nonzeros: int  #: entries of the finest matrix
    levels: int  #: levels of the hierarchy
    coarse_unknowns: int  #: rows of the coarsest level
    assembly_time: float  #: seconds: the hierarchy assembled and uploaded, multigrid built
    compile_time: float  #: seconds: the solver's setup, kernels compiled or loaded
    solve_time: float  #: seconds of the solve
    status: str  #: the library's status ("success", "not converged", ...)
    message: str  #: why it did not converge ("" when it did)
    options: dict  #: the solver's options as resolved (every key)
    view: dict  #: the solver's view (clmg_solver_view_json)


@dataclasses.dataclass
class PoissonResult:
    """A solved Poisson problem: ``u`` on the nodes of the finest mesh."""

    u: np.ndarray  #: the solution, one value per node (``points``)
    b: np.ndarray  #: the right-hand side (g on Dirichlet nodes)
    points: np.ndarray  #: nodes x dim: the Lagrange nodes of the element
    element: str  #: "q1" or "q2"
    info: PoissonInfo  #: iterations, residuals, times
    A: sp.csr_array | None  #: the finest matrix (return_matrix=True), in the nodes' numbering
    _mesh: _FEMesh = dataclasses.field(repr=False)

    @property
    def cells(self) -> np.ndarray:
        """Cells x nodes per cell: each cell's nodes in VTK's order (meshio's)."""
        return self._mesh.vtk_cells()[1]

    @property
    def mesh(self):
        """The finest mesh as a meshio.Mesh (quad/hexahedron, or quad9/hexahedron27
        for Q2) with point_data {"u": u}. Needs meshio."""
        return self._mesh.meshio({"u": self.u})

    def to_vtu(self, path: str | os.PathLike, *, ascii: bool = False, **fields: np.ndarray) -> None:
        """Writes the mesh with u (and any other per-node ``fields``) as a VTK
        .vtu file by the library's writer (no meshio needed)."""
        self._mesh.write_vtu(path, {"u": self.u, **fields}, ascii)


_POISSON_MESHES = {"circle": ("circle", 0), "blood": ("blood", 0)}


def _poisson_arguments(level, mesh, element, numbering, assembly, coarse_rows):
    """poisson()'s and poisson_multigrid()'s problem arguments checked: the
    coarse mesh, the problem's name and whether to assemble on the device."""
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise TypeError(f"level must be an integer, not {level!r}")
    if not 1 <= level <= 16:
        raise ValueError(f"level must be 1 to 16, not {level}")
    if element not in ("q1", "q2"):
        raise ValueError(f"unknown element {element!r} (there are: q1, q2)")
    if not isinstance(numbering, str):
        raise TypeError(f"numbering must be a string, not {numbering!r}")
    if assembly not in (None, "device", "host"):
        raise ValueError(f"unknown assembly {assembly!r} (there are: device, host)")
    if coarse_rows is not None and (
        isinstance(coarse_rows, bool)
        or not isinstance(coarse_rows, (int, np.integer))
        or coarse_rows < 1
    ):
        raise ValueError(f"coarse_rows must be a number of rows >= 1, not {coarse_rows!r}")
    on_device = numbering.lower() == "2lv" if assembly is None else assembly == "device"
    coarse, kind = _coarse_mesh(mesh, _POISSON_MESHES)
    return coarse, "unit" if kind == "file" else kind, on_device


def poisson(
    level: int = 4,
    mesh: str | os.PathLike = "circle",
    element: str = "q1",
    options: str | Mapping | None = None,
    *,
    numbering: str = "2lv",
    assembly: str | None = None,
    seed: int = 1,
    coarse_rows: int | None = None,
    return_matrix: bool = False,
    context: Any = None,
    device: str | None = None,
    monitor: Callable[[int, float], Any] | None = None,
    **keywords: Any,
) -> PoissonResult:
    """``clmg poisson``: -Laplace(u) = f with Dirichlet conditions, Q1 or Q2
    finite elements on the coarse mesh refined ``level - 1`` times, solved by
    geometric multigrid (Geveler et al. 2011) on the device.

    ``mesh``: "circle" (CIRCLE: f = 1, u = 0 on the square, u = 1 on the
    circle), "blood" (f = 0, u = 1 on the boundary; 64+64 Jacobi steps at
    omega 0.5 unless given) or a Gmsh .msh file of quadrilaterals or
    hexahedra (f = 1, u = 0 on the boundary). ``element``: "q1" or "q2".
    ``numbering``: "2lv" (the default), "cm", "xyz", "sto" (random, ``seed``)
    or "hie"; ``assembly``: "device" (the default with 2lv) or "host" (the
    other numberings). ``coarse_rows``: solve directly on the finest level of
    at most that many rows. Solver options as for :func:`clmg.solve`
    (``options=`` then keywords: ``krylov`` "none" (cycles, the default) or
    "cg", ``mg_smoother``, ``mg_pre``, ``mg_cycle``, ``tol``, ``maxit``
    (default 200), ``precision``, ``format``, ...). ``return_matrix``: the
    finest matrix as ``result.A`` (in the nodes' numbering).
    """
    coarse, problem, on_device = _poisson_arguments(
        level, mesh, element, numbering, assembly, coarse_rows
    )
    ctx = _resolve(context, device)
    parsed = _parse(options, keywords)
    try:
        raw = _clmg.poisson(
            ctx._c,
            coarse,
            int(level),
            1 if element == "q1" else 2,
            problem,
            numbering,
            int(seed),
            on_device,
            0 if coarse_rows is None else int(coarse_rows),
            parsed.text,
            parsed.pairs,
            bool(return_matrix),
            monitor,
        )
    finally:
        parsed.close()
    degree = 1 if element == "q1" else 2
    fe_mesh = _FEMesh(raw["mesh"], degree)
    result = raw["result"]
    u = np.frombuffer(raw["u"], dtype=np.float64).copy()
    A = None
    if raw["matrix"] is not None:
        A = _nodes_matrix(raw["matrix"])[0]
    info = PoissonInfo(
        converged=result["converged"],
        iterations=result["iterations"],
        residuals=np.array(result["history"], dtype=np.float64),
        initial_residual=result["initial_residual"],
        final_residual=result["final_residual"],
        relative_residual=result["relative_residual"],
        unknowns=raw["unknowns"],
        nonzeros=raw["nonzeros"],
        levels=raw["levels"],
        coarse_unknowns=raw["coarse_unknowns"],
        assembly_time=raw["assembly_s"],
        compile_time=raw["kernels_s"],
        solve_time=raw["solve_s"],
        status=result["status"],
        message=result["message"],
        options=json.loads(raw["options"]),
        view=json.loads(raw["view"]),
    )
    if not info.converged:
        from . import ConvergenceWarning

        warnings.warn(
            f"clmg.poisson: {info.status} after {info.iterations} iterations "
            f"(relative residual {info.relative_residual:.3e}): {info.message}",
            ConvergenceWarning,
            stacklevel=2,
        )
    return PoissonResult(
        u=u,
        b=np.frombuffer(raw["b"], dtype=np.float64).copy(),
        points=fe_mesh.points,
        element=element,
        info=info,
        A=A,
        _mesh=fe_mesh,
    )


# the package's classes (__init__ imports this module after defining them)
from . import ConvergenceWarning, Multigrid, _as_vector  # noqa: E402


class PoissonMultigrid(Multigrid):
    """The geometric multigrid hierarchy of a finite-element Poisson problem
    (:func:`poisson_multigrid`) on the device, as a SciPy LinearOperator:
    ``M @ r`` is one cycle of the hierarchy from zero (what CG applies per
    iteration), so ``scipy.sparse.linalg.cg(M.A, b, M=M)`` converges in a
    few iterations. ``A`` is the finest matrix (scipy CSR, Dirichlet rows
    as identity rows with their columns eliminated, as ``clmg.poisson(...,
    return_matrix=True)`` gives it) and ``b`` the problem's right-hand side,
    both in the nodes' numbering (``points``); :meth:`solve` runs the
    library's solver with this hierarchy on the device."""

    def __init__(self, handle, facts: Mapping, element: str, context, monitor):
        self._c = handle
        self.context = context
        self.monitor = monitor
        self._view = None
        self.A, self._A_numbered, self._perm = _nodes_matrix(facts["matrix"])
        self.shape = self.A.shape
        self.element = element
        self._mesh = _FEMesh(facts["mesh"], 1 if element == "q1" else 2)
        self.points = self._mesh.points
        self.b = np.frombuffer(facts["b"], dtype=np.float64).copy()
        #: the initial guess of the problem's own solve: g on Dirichlet nodes, 0 elsewhere
        self.x0 = np.frombuffer(facts["x0"], dtype=np.float64).copy()
        self.unknowns = facts["unknowns"]
        self.nonzeros = facts["nonzeros"]
        self.coarse_unknowns = facts["coarse_unknowns"]
        self.assembly_time = facts["assembly_s"]
        self.compile_time = facts["kernels_s"]
        resolved = json.loads(facts["options"])
        self._limits = (float(resolved["tol"]), int(resolved["maxit"]))
        spla.LinearOperator.__init__(self, dtype=np.dtype(np.float64), shape=self.A.shape)

    def _to_hierarchy(self, v: np.ndarray) -> np.ndarray:
        return v if self._perm is None else np.ascontiguousarray(v[self._perm])

    def _to_nodes(self, v: np.ndarray) -> np.ndarray:
        if self._perm is None:
            return v
        out = np.empty_like(v)
        out[self._perm] = v
        return out

    def _matvec(self, r: Any) -> np.ndarray:
        r_ = self._to_hierarchy(self._input(r))
        z = np.empty_like(r_)
        self._c.precondition(r_, z)
        return self._to_nodes(z)

    def solve(
        self,
        b: Any = None,
        x0: Any = None,
        *,
        tol: float | None = None,
        maxit: int | None = None,
        monitor: Callable[[int, float], Any] | None = None,
    ):
        """Solves A x = b on the device with this hierarchy (the options'
        ``krylov``: "cg", the default here, CG preconditioned by one cycle;
        "none": cycles alone), from x0 (default 0; with b None: the
        problem's own b and its initial guess ``x0``). ``tol`` (relative)
        and ``maxit`` replace the options' for this solve. Returns x (in
        the nodes' numbering) and a :class:`clmg.SolveInfo`; a solve that
        stops short warns with :class:`clmg.ConvergenceWarning`."""
        n = self.shape[0]
        if b is None:
            b_ = self.b.copy()
            x = self.x0.copy() if x0 is None else _as_vector(x0, n, "x0")
        else:
            b_ = _as_vector(b, n, "b")
            x = np.zeros(n) if x0 is None else _as_vector(x0, n, "x0")
        if tol is not None and (
            isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating))
        ):
            raise TypeError(f"tol must be a number, not {tol!r}")
        if maxit is not None and (
            isinstance(maxit, bool) or not isinstance(maxit, (int, np.integer))
        ):
            raise TypeError(f"maxit must be an integer, not {maxit!r}")
        limits = (
            self._limits[0] if tol is None else float(tol),
            self._limits[1] if maxit is None else int(maxit),
        )
        if not (np.isfinite(limits[0]) and limits[0] > 0):
            raise ValueError(f"tol must be a finite number above 0, not {tol!r}")
        if not 1 <= limits[1] <= np.iinfo(np.int32).max:
            raise ValueError(f"maxit must be at least 1, not {maxit!r}")
        changed = limits != self._limits
        if changed:
            self._c.set_limits(*limits)
            self._view = None
        try:
            x_h, info = self._solve(
                self._to_hierarchy(b_), self._to_hierarchy(x), monitor, self._A_numbered
            )
        finally:
            if changed:
                self._c.set_limits(*self._limits)
                self._view = None
        if not info.converged:
            warnings.warn(
                f"clmg: {info.message or info.status}", ConvergenceWarning, stacklevel=2
            )
        return self._to_nodes(x_h), info

    @property
    def cells(self) -> np.ndarray:
        """Cells x nodes per cell, each cell's nodes in VTK's order."""
        return self._mesh.vtk_cells()[1]

    def __repr__(self) -> str:
        d = self._c.describe()
        return (
            f"<clmg.PoissonMultigrid {self.element} {d['rows']} rows, {d['levels']} levels, "
            f"krylov {d['method']}, {d['precision']}>"
        )



def poisson_multigrid(
    level: int = 4,
    mesh: str | os.PathLike = "circle",
    element: str = "q1",
    options: str | Mapping | None = None,
    *,
    numbering: str = "2lv",
    assembly: str | None = None,
    seed: int = 1,
    coarse_rows: int | None = None,
    context: Any = None,
    device: str | None = None,
    monitor: Callable[[int, float], Any] | None = None,
    **keywords: Any,
) -> "PoissonMultigrid":
    """The geometric multigrid of :func:`poisson`'s problem (the same
    arguments and options), set up on the device and not solved, as a
    :class:`PoissonMultigrid`: a SciPy LinearOperator whose ``M @ r`` is one
    cycle of the hierarchy (the preconditioner for scipy.sparse.linalg.cg,
    ``M=M``), with the finest matrix ``.A``, the right-hand side ``.b`` and
    :meth:`~PoissonMultigrid.solve`. ``krylov`` defaults to "cg" here;
    ``monitor(iteration, relative_residual)`` is called after each iteration
    of every solve::

        M = clmg.poisson_multigrid(level=6, mesh="circle", element="q1")
        x, code = scipy.sparse.linalg.cg(M.A, M.b, M=M)
    """
    coarse, problem, on_device = _poisson_arguments(
        level, mesh, element, numbering, assembly, coarse_rows
    )
    if monitor is not None and not callable(monitor):
        raise TypeError("monitor must be callable(iteration, relative_residual)")
    ctx = _resolve(context, device)
    parsed = _parse(options, keywords)
    # krylov=cg first: what the caller gives comes after it
    parsed.text = "krylov=cg " + (parsed.text or "")
    try:
        handle, facts = _clmg.poisson_multigrid(
            ctx._c,
            coarse,
            int(level),
            1 if element == "q1" else 2,
            problem,
            numbering,
            int(seed),
            on_device,
            0 if coarse_rows is None else int(coarse_rows),
            parsed.text,
            parsed.pairs,
        )
    finally:
        parsed.close()
    return PoissonMultigrid(handle, facts, element, ctx, monitor)


# ---- Helmholtz ----


@dataclasses.dataclass
class HelmholtzResult:
    """A solved P1 Helmholtz problem: ``u`` on the vertices of the mesh."""

    u: np.ndarray | None  #: the solution, one value per vertex (``points``); None: solve=False
    A: sp.csr_array  #: A = S + lambda M (Dirichlet rows and columns eliminated)
    b: np.ndarray  #: the right-hand side
    points: np.ndarray  #: vertices x dim
    material: np.ndarray | None  #: each cell's material id (None: all 1)
    info: Any  #: the solve's clmg.SolveInfo (true residual included); None: solve=False
    assembly: str  #: "device" or "host"
    assembly_time: float  #: seconds of the assembly (on the device: a second, warm run)
    assembly_first_time: float  #: the first run (device: with the assembler's setup and kernels)
    _mesh: _FEMesh = dataclasses.field(repr=False)

    @property
    def cells(self) -> np.ndarray:
        """Cells x (dim + 1): each triangle's or tetrahedron's vertices."""
        return self._mesh.cells

    @property
    def mesh(self):
        """The mesh as a meshio.Mesh (triangle or tetra cells) with
        point_data {"u": u} and cell_data {"material": ...}. Needs meshio."""
        return self._mesh.meshio({} if self.u is None else {"u": self.u})

    def to_vtu(self, path: str | os.PathLike, *, ascii: bool = False, **fields: np.ndarray) -> None:
        """Writes the mesh with u (and other per-vertex ``fields``) as a VTK .vtu
        file by the library's writer (no meshio needed)."""
        self._mesh.write_vtu(path, ({} if self.u is None else {"u": self.u}) | fields, ascii)


_HELMHOLTZ_MESHES = {"regular": ("regular", 5), "blobs": ("blobs", 6), "blobs2d": ("blobs2d", 6)}


def helmholtz(
    mesh: str | os.PathLike = "regular:1",
    options: str | Mapping | None = None,
    *,
    sigma: Mapping[int, float] | None = None,
    lambda_: float = 1.0,
    rhs: str = "f1",
    dirichlet: Any = (),
    assembly: str = "device",
    solve: bool = True,
    context: Any = None,
    device: str | None = None,
    monitor: Callable[[int, float], Any] | None = None,
    **keywords: Any,
) -> HelmholtzResult:
    """``clmg helmholtz``: -div(sigma grad u) + lambda u = f with P1 elements on a
    triangle or tetrahedron mesh (Fu et al. 2014), natural boundary conditions
    except u = 0 on the ``dirichlet`` tags; A = S + lambda M assembled on the
    device (patch assembly) or the host, then solved by :class:`clmg.Solver`
    with the options (``krylov``, ``precond``, ``tol``, ... as for
    :func:`clmg.solve`; defaults: CG with Jacobi, tol 1e-8).

    ``mesh``: "regular:L" (Fu et al.'s Regular cube, L = 0 to 5),
    "blobs:L" / "blobs2d:L" (two materials: 2 in three balls or discs, L = 0
    to 6) or a Gmsh .msh file of triangles or tetrahedra (cell groups are
    material ids). ``sigma``: {material id: sigma} (default 1 everywhere);
    ``rhs``: "f1" (b_i = (phi_i, 1)) or "ones" (b_i = 1). ``solve=False``
    stops after the assembly (``u`` and ``info`` None), as ``--no-solve``.
    """
    if assembly not in ("device", "host"):
        raise ValueError(f"unknown assembly {assembly!r} (there are: device, host)")
    if rhs not in ("f1", "ones"):
        raise ValueError(f"unknown right-hand side {rhs!r} (there are: f1, ones)")
    lam = float(lambda_)
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lambda_ must be finite and >= 0, not {lambda_!r}")
    ids = np.zeros(0, dtype=np.int32)
    values = np.zeros(0, dtype=np.float64)
    if sigma is not None:
        if not isinstance(sigma, Mapping) or not sigma:
            raise TypeError("sigma is a dict {material id: sigma}, with at least one entry")
        ids = np.array(list(sigma.keys()), dtype=np.int64)
        values = np.array(list(sigma.values()), dtype=np.float64)
        if np.any(ids < 1) or np.any(ids > np.iinfo(np.int32).max):
            raise ValueError(f"material ids are >= 1: {sorted(sigma)}")
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError("sigma values must be finite and >= 0")
        ids = ids.astype(np.int32)
    tags = np.array(list(dirichlet), dtype=np.int64).reshape(-1)
    if np.any(tags < 1) or np.any(tags > np.iinfo(np.int32).max):
        raise ValueError(f"Dirichlet tags are >= 1, not {list(dirichlet)}")
    tags = tags.astype(np.int32)
    handle, _ = _coarse_mesh(mesh, _HELMHOLTZ_MESHES)
    arrays = handle.arrays()
    if not arrays["simplex"]:
        raise ValueError(
            f"mesh {os.fspath(mesh)!r} is not of triangles or tetrahedra (P1 needs simplices)"
        )
    from . import Solver

    ctx = _resolve(context, device)
    system = _clmg.helmholtz_system(
        handle, ids, values, lam, rhs, tags, ctx._c if assembly == "device" else None
    )
    A = _csr(system["matrix"])
    b = np.frombuffer(system["b"], dtype=np.float64).copy()
    u = info = None
    if solve:
        solver = Solver(A, options, context=ctx, **keywords)
        u, info = solver.solve(b, monitor=monitor)
    fe_mesh = _FEMesh(handle, 1)
    return HelmholtzResult(
        u=u,
        A=A,
        b=b,
        points=fe_mesh.points,
        material=fe_mesh.material,
        info=info,
        assembly=assembly,
        assembly_time=system["assembly_s"],
        assembly_first_time=system["assembly_first_s"],
        _mesh=fe_mesh,
    )


# ---- the Navier-Stokes flow (clmg flow) ----

_FLOW_CASES = ("cavity", "dfg1", "dfg2", "dfg3", "canopy")
# the columns of the binding's per-step record (module_flow)
_FLOW_STEP_COLUMNS = (
    "step",
    "time",
    "iterations",
    "nonlinear_residual",
    "linear_residual",
    "assembly_time",
    "setup_time",
    "solve_time",
    "drag",
    "lift",
    "pressure_difference",
)


@dataclasses.dataclass
class FlowHistory:
    """Per time step or Oseen iteration, one entry each (NumPy arrays)."""

    step: np.ndarray  #: 1, 2, ...
    time: np.ndarray  #: the step's time (unsteady; 0 for Oseen iterations)
    iterations: np.ndarray  #: GMRES iterations of the step's linear solve
    nonlinear_residual: np.ndarray  #: steady: the iterate's relative residual before the step
    linear_residual: np.ndarray  #: the linear solve's true relative residual
    assembly_time: np.ndarray  #: seconds refilling the levels' systems
    setup_time: np.ndarray  #: seconds setting the multigrid up
    solve_time: np.ndarray  #: seconds in GMRES
    drag: np.ndarray  #: DFG: the cylinder's drag coefficient c_D (NaN for other cases)
    lift: np.ndarray  #: DFG: the lift coefficient c_L (NaN for other cases)
    pressure_difference: np.ndarray  #: DFG: p(0.15, 0.2) - p(0.25, 0.2) (NaN for other cases)


@dataclasses.dataclass
class FlowInfo:
    """How a :func:`flow` run went (the keys of ``clmg flow --json``)."""

    case: str  #: "cavity", "dfg1", "dfg2", "canopy" or the .msh path
    reynolds: float
    viscosity: float
    steady: bool  #: Oseen iteration to a steady flow (else time steps)
    converged: bool
    steps: int  #: Oseen iterations or time steps done
    linear_iterations: int  #: GMRES iterations over all steps
    nonlinear_residual: float  #: steady: the last iterate's (0 for time steps)
    unknowns: int  #: 2 edges + triangles of the finest level
    levels: int
    drag: float  #: DFG: c_D after the last step (NaN otherwise)
    lift: float  #: DFG: c_L after the last step (NaN otherwise)
    pressure_difference: float  #: DFG: delta p after the last step (NaN otherwise)
    assembly_time: float  #: seconds, summed over the steps
    setup_time: float
    solve_time: float
    total_time: float  #: the whole run: mesh, hierarchy, steps
    status: str  #: the library's status ("success", "not converged", ...)
    message: str
    options: dict  #: the options as resolved: options= takes them back


@dataclasses.dataclass
class FlowResult:
    """A Navier-Stokes solution with Crouzeix-Raviart P1nc/P0 elements on the
    finest triangle mesh: the velocity at the edge midpoints, the pressure per
    triangle."""

    velocity: np.ndarray  #: edges x 2: (u_x, u_y) at each edge's midpoint
    pressure: np.ndarray  #: one value per triangle (P0)
    edge_midpoints: np.ndarray  #: edges x 2: where ``velocity`` lives
    vertices: np.ndarray  #: vertices x 2
    triangles: np.ndarray  #: triangles x 3: vertex numbers
    history: FlowHistory  #: per step
    info: FlowInfo
    _handle: Any = dataclasses.field(repr=False)
    _x: np.ndarray = dataclasses.field(repr=False)
    _cell_edges: np.ndarray = dataclasses.field(repr=False)

    @property
    def cell_velocity(self) -> np.ndarray:
        """Triangles x 2: the velocity at each triangle's centroid (the mean of
        its three edge values, the P1nc function's mean over it)."""
        return self.velocity[self._cell_edges].mean(axis=1)

    @property
    def mesh(self):
        """The finest mesh as a meshio.Mesh (triangles) with cell_data
        {"pressure", "velocity" (at the centroids)}. Needs meshio."""
        meshio = _meshio()
        return meshio.Mesh(
            self.vertices.copy(),
            [("triangle", self.triangles.astype(np.int64))],
            cell_data={
                "pressure": [self.pressure.copy()],
                "velocity": [self.cell_velocity],
            },
        )

    def to_vtu(self, path: str | os.PathLike) -> None:
        """Writes the solution as ``clmg flow --vtk`` does (clmg_flow_write_vtu):
        quadratic triangles whose nodes carry the velocity, the pressure as cell
        data. No meshio needed."""
        _clmg.flow_write_vtu(self._handle, self._x, os.fspath(path))


def flow(
    case: str | os.PathLike = "cavity",
    re: float | None = None,
    level: int = 3,
    options: str | Mapping | None = None,
    *,
    steady: bool | None = None,
    steps: int | None = None,
    dt: float | None = None,
    upwind: str | None = None,
    time_scheme: str | None = None,
    walls: Any = None,
    inflow: int | None = None,
    slip: Any = None,
    outflow: Any = None,
    inflow_profile: str | None = None,
    inflow_peak: float | None = None,
    body: int | None = None,
    reference_length: float | None = None,
    pressure_points: Any = None,
    context: Any = None,
    device: str | None = None,
    **keywords: Any,
) -> FlowResult:
    """``clmg flow``: incompressible Navier-Stokes on triangles with
    Crouzeix-Raviart P1nc/P0 elements and a Vanka multigrid (Bauer, Klement,
    Oberhuber and Zabka 2016), on the device.

    ``case``: "cavity" (the lid-driven unit square), "dfg1" (DFG 2D-1,
    steady, Re 20), "dfg2" (DFG 2D-2, time steps, Re 100), "dfg3" (DFG 2D-3,
    inflow 1.5 sin(pi t / 8), t in [0, 8]), "canopy" (an urban canopy, time
    steps) or a Gmsh .msh file of triangles whose every boundary tag has one
    condition: ``walls`` (no slip), ``slip`` (free slip), ``outflow``
    (do-nothing) or ``inflow`` (one tag, a straight segment; the velocity
    along its normal into the domain), as ``clmg flow FILE.msh``'s flags.
    ``inflow_profile``: "uniform" (the default) or "parabolic" (4 U s (L - s)
    / L^2 along the inflow of length L) of peak ``inflow_peak`` U (default 1);
    the velocity scale of Re is its mean. ``body``: the tag whose drag and
    lift coefficients the history and info report (with the mean velocity
    and ``reference_length``, default 1); ``pressure_points``: (x1, y1, x2,
    y2), the pressure difference p(x1, y1) - p(x2, y2). ``re``: the
    Reynolds number (the case's by default). ``level``: the coarse mesh
    refined that many times (``clmg flow --level``). ``steady``: Oseen
    iteration to a steady flow (the default for cavity, dfg1 and a .msh);
    else ``steps`` time steps of ``dt`` (defaults 100, dfg3 8 / dt, and
    0.01); giving ``steps`` or ``dt`` with ``steady=True`` is an error.
    ``upwind`` (key flow.upwind): "samarskij", "full" or "weighted" (with
    ``flow_upwind_parameter``; 0 is central differences); ``time_scheme``
    (flow.time_scheme): "backward-euler", "crank-nicolson", "fs-theta" or
    "bdf2"; ``flow_step_iterations``: linear solves per time step (auto: 2 for
    Crank-Nicolson and fs-theta, a Picard iteration after the extrapolated
    wind; 1 for BDF2); ``flow_linearisation``: "picard" (the default) or "newton"
    (steady: Newton steps once the residual is at most ``flow_newton_start``,
    1e-3). Their defaults are the case's, as ``clmg flow``'s: dfg2 and dfg3
    Crank-Nicolson with the weighted upwind of parameter 0.1, the others
    backward Euler and Samarskij. Solver options as the options layer's keys
    (``options=`` then keywords: ``mg_smoother`` "vanka" or "vanka-store",
    ``flow_nonlinear_tol``, ``flow_nonlinear_maxit``, ``tol``, ``maxit``,
    ``restart``, ...). A run that stops short of its tolerance issues a
    :class:`clmg.ConvergenceWarning`; library failures raise ClmgError.
    """
    if not isinstance(case, (str, os.PathLike)):
        raise TypeError(f"case must be a name or a Gmsh file's path, not {case!r}")
    spec = os.fspath(case)
    path = None
    if spec.endswith(".msh"):
        if not os.path.isfile(spec):
            raise FileNotFoundError(f"no mesh file {spec!r}")
        if inflow is None:
            raise ValueError(
                "a .msh case needs walls=[tags] (and slip=, outflow= for its other boundary "
                "tags) and inflow=tag"
            )
        name, path = "gmsh", spec
    elif spec in _FLOW_CASES:
        gmsh = (walls, inflow, slip, outflow, inflow_profile, inflow_peak, body,
                reference_length, pressure_points)
        if any(value is not None for value in gmsh):
            raise ValueError(
                "walls, inflow, slip, outflow, inflow_profile, inflow_peak, body, "
                f"reference_length and pressure_points are for a .msh case, not {spec!r}"
            )
        name = spec
    else:
        raise ValueError(
            f"unknown case {spec!r} (there are: {', '.join(_FLOW_CASES)}, or a .msh file)"
        )
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise TypeError(f"level must be an integer, not {level!r}")
    if re is not None:
        if isinstance(re, bool) or not isinstance(re, (int, float, np.integer, np.floating)):
            raise TypeError(f"re must be a number, not {re!r}")
        if not (np.isfinite(re) and re > 0):
            raise ValueError(f"re must be finite and > 0, not {re!r}")
    if steady is not None and not isinstance(steady, (bool, np.bool_)):
        raise TypeError(f"steady must be True or False, not {steady!r}")
    if steady and (steps is not None or dt is not None):
        raise ValueError(
            "steady=True runs Oseen iterations to the steady state; steps and dt are for "
            "time steps: give one or the other"
        )
    if steps is not None and (
        isinstance(steps, bool) or not isinstance(steps, (int, np.integer))
    ):
        raise TypeError(f"steps must be an integer, not {steps!r}")
    if steps is not None and steps < 1:
        raise ValueError(f"steps must be >= 1, not {steps}")
    if dt is not None and (
        isinstance(dt, bool) or not isinstance(dt, (int, float, np.integer, np.floating))
    ):
        raise TypeError(f"dt must be a number, not {dt!r}")
    if upwind is not None:
        if upwind not in ("samarskij", "full", "weighted"):
            raise ValueError(f"unknown upwind {upwind!r} (there are: samarskij, full, weighted)")
        keywords["flow_upwind"] = upwind
    if time_scheme is not None:
        schemes = ("backward-euler", "crank-nicolson", "fs-theta", "bdf2")
        if time_scheme not in schemes:
            raise ValueError(
                f"unknown time_scheme {time_scheme!r} (there are: {', '.join(schemes)})"
            )
        keywords["flow_time_scheme"] = time_scheme
    if steady is None and (steps is not None or dt is not None):
        steady = False  # time steps asked for
    ctx = _resolve(context, device)
    parsed = _parse(options, keywords)
    try:
        raw = _clmg.flow(
            ctx._c,
            name,
            path,
            None if walls is None else [int(tag) for tag in walls],
            0 if inflow is None else int(inflow),
            0.0 if re is None else float(re),
            int(level),
            -1 if steady is None else int(bool(steady)),
            0 if steps is None else int(steps),
            0.01 if dt is None else float(dt),
            parsed.text,
            parsed.pairs,
            None if slip is None else [int(tag) for tag in slip],
            None if outflow is None else [int(tag) for tag in outflow],
            inflow_profile,
            1.0 if inflow_peak is None else float(inflow_peak),
            0 if body is None else int(body),
            1.0 if reference_length is None else float(reference_length),
            None if pressure_points is None else [float(v) for v in pressure_points],
        )
    finally:
        parsed.close()
    handle = raw["mesh"]
    arrays = handle.arrays()
    vertices = np.frombuffer(arrays["coords"], dtype=np.float64).reshape(-1, 2).copy()
    triangles = np.frombuffer(arrays["cells"], dtype=np.int32).reshape(-1, 3).copy()
    x = np.frombuffer(raw["x"], dtype=np.float64).copy()
    edges = raw["edges"]
    edge_vertices = np.frombuffer(raw["edge_vertices"], dtype=np.int32).reshape(-1, 2)
    cell_edges = np.frombuffer(raw["cell_edges"], dtype=np.int32).reshape(-1, 3).copy()
    record = np.frombuffer(raw["history"], dtype=np.float64).reshape(-1, len(_FLOW_STEP_COLUMNS))
    columns = {key: record[:, k].copy() for k, key in enumerate(_FLOW_STEP_COLUMNS)}
    for key in ("step", "iterations"):
        columns[key] = columns[key].astype(np.int64)
    history = FlowHistory(**columns)
    last = {
        key: float(columns[key][-1]) if record.shape[0] else float("nan")
        for key in ("drag", "lift", "pressure_difference")
    }
    info = FlowInfo(
        case=spec,
        reynolds=raw["reynolds"],
        viscosity=raw["viscosity"],
        steady=raw["steady"],
        converged=raw["converged"],
        steps=raw["steps"],
        linear_iterations=raw["linear_iterations"],
        nonlinear_residual=raw["nonlinear_residual"],
        unknowns=raw["unknowns"],
        levels=raw["levels"],
        drag=last["drag"],
        lift=last["lift"],
        pressure_difference=last["pressure_difference"],
        assembly_time=float(columns["assembly_time"].sum()),
        setup_time=float(columns["setup_time"].sum()),
        solve_time=float(columns["solve_time"].sum()),
        total_time=raw["total_s"],
        status=raw["status"],
        message=raw["message"],
        options=json.loads(raw["options"]),
    )
    result = FlowResult(
        velocity=np.stack([x[:edges], x[edges : 2 * edges]], axis=1),
        pressure=x[2 * edges :].copy(),
        edge_midpoints=vertices[edge_vertices].mean(axis=1),
        vertices=vertices,
        triangles=triangles,
        history=history,
        info=info,
        _handle=handle,
        _x=x,
        _cell_edges=cell_edges,
    )
    if not info.converged or info.status != "success":
        from . import ConvergenceWarning

        warnings.warn(
            f"clmg.flow: {info.message or info.status}", ConvergenceWarning, stacklevel=2
        )
    return result
