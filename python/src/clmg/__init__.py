"""clmg for Python: SciPy matrices in, NumPy arrays out.

The solvers of clmg's options layer (the same keys as the ``clmg`` command's
options and its JSON: ``krylov``, ``precond``, ``tol``, ``mg.smoother``,
``amg.coarsening``, ...) on an OpenCL device, and clmg's multigrid
hierarchies as SciPy preconditioners::

    import clmg, scipy.sparse.linalg as spla
    x, info = clmg.solve(A, b, precond="amg", tol=1e-10)
    M = clmg.amg(A, mg_smoother="chebyshev")     # a LinearOperator
    x, code = spla.cg(A, b, M=M)

Everything is checked by the library itself (``clmg._clmg``, a thin C
binding of clmg's public API); its failures raise :class:`ClmgError` with
the library's message.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
import time
import warnings
from typing import Any, Callable, Mapping

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import _clmg
from ._clmg import ClmgError
from . import problems

__all__ = [
    "ClmgError",
    "ConvergenceWarning",
    "Context",
    "Multigrid",
    "SolveInfo",
    "Solver",
    "amg",
    "context",
    "devices",
    "fe",
    "flow",
    "helmholtz",
    "option_keys",
    "poisson",
    "poisson_multigrid",
    "check_options",
    "problems",
    "solve",
]

__version__ = _clmg.version()


class ConvergenceWarning(UserWarning):
    """A solve stopped without meeting its tolerance (info.converged is False)."""


def devices() -> list[dict]:
    """Every OpenCL device of every platform, as ``clmg info`` lists them: dicts
    with ``platform_index``, ``device_index`` (the "P:D" device string),
    ``name``, ``platform_name``, ``vendor``, ``is_gpu``, ``has_fp64``,
    ``global_mem_bytes``, ..."""
    return _clmg.devices()


def option_keys() -> list[dict]:
    """The options layer's keys: dicts with ``key`` ("mg.smoother"), ``kind``,
    ``default``, ``values`` (a name's valid values) and ``description``."""
    return _clmg.option_keys()


# ---- contexts ----


class Context:
    """An OpenCL device opened by clmg (clmg_context_create).

    ``device`` is a device string as the ``clmg`` command's ``--device`` and
    ``CLMG_DEVICE`` take it: "pocl", "nvidia", "gpu", "cpu", "P:D" or a
    substring of the platform or device name; None: ``$CLMG_DEVICE``, else
    the first GPU, else the first CPU. ``memory_limit`` (bytes, 0: none)
    bounds what the context may hold on the device; ``disable_fp64`` treats
    the device as one without double precision.
    """

    def __init__(
        self,
        device: str | None = None,
        *,
        cache_dir: str | os.PathLike | None = None,
        memory_limit: int = 0,
        disable_fp64: bool = False,
    ):
        if device is not None and not isinstance(device, str):
            raise TypeError(f"device must be a string such as 'pocl' or '0:0', not {device!r}")
        if not isinstance(memory_limit, (int, np.integer)) or memory_limit < 0:
            raise ValueError(f"memory_limit must be a number of bytes >= 0, not {memory_limit!r}")
        self.requested = device
        self._c = _clmg.Context(
            device,
            None if cache_dir is None else os.fspath(cache_dir),
            int(memory_limit),
            bool(disable_fp64),
        )

    @property
    def device(self) -> dict:
        """The device's facts (name, platform, memory, has_fp64, ...)."""
        return self._c.device()

    def copy_bandwidth(self) -> float:
        """The device's copy bandwidth in GB/s, read and written bytes both
        counted (clmg_measure_copy_bandwidth): the floor a benchmark's bytes
        are measured against."""
        return self._c.copy_bandwidth()

    def __repr__(self) -> str:
        d = self.device
        return f"<clmg.Context {d['platform_index']}:{d['device_index']} {d['name']!r}>"


_contexts: dict[str | None, Context] = {}
_contexts_lock = threading.Lock()


def context(device: str | None = None) -> Context:
    """The shared context of a device string (made on first use, then reused,
    so kernels are compiled once per process): what :func:`solve` and
    :func:`amg` use when given ``device=`` or nothing."""
    with _contexts_lock:
        if device not in _contexts:
            _contexts[device] = Context(device)
        return _contexts[device]


def _resolve_context(context_: Context | None, device: str | None) -> Context:
    if context_ is not None:
        if not isinstance(context_, Context):
            raise TypeError(f"context must be a clmg.Context, not {type(context_).__name__}")
        if device is not None:
            raise ValueError("give a context or a device, not both")
        return context_
    return context(device)


# ---- input ----


def _refuse_complex(dtype: np.dtype, what: str) -> None:
    if np.issubdtype(dtype, np.complexfloating):
        raise TypeError(f"{what} is complex ({dtype}); clmg solves real systems only")
    if not (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)):
        raise TypeError(f"{what} has dtype {dtype}; expected real numbers")


def _as_csr(A: Any) -> tuple[sp.csr_array, np.ndarray, np.ndarray, np.ndarray]:
    """A square real matrix (SciPy sparse of any format, or a dense array) as
    canonical CSR, and its arrays in clmg_csr's layout: int64 row offsets,
    int32 columns, float64 values. The caller's matrix is not modified."""
    if isinstance(A, spla.LinearOperator):
        raise TypeError("A must be a matrix (SciPy sparse or dense), not a LinearOperator")
    if sp.issparse(A):
        _refuse_complex(A.dtype, "A")
        A = sp.csr_array(A)  # a copy for other formats; shares arrays for CSR
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
    else:
        dense = np.asarray(A)
        _refuse_complex(dense.dtype, "A")
        if dense.ndim != 2:
            raise ValueError(f"A must be 2-D, not of shape {dense.shape}")
        A = sp.csr_array(dense)
    rows, cols = A.shape
    if rows != cols:
        raise ValueError(f"A must be square, not {rows} x {cols}")
    if rows == 0:
        raise ValueError("A has no rows")
    if rows > np.iinfo(np.int32).max:
        raise ValueError(f"A has {rows} rows; clmg takes at most {np.iinfo(np.int32).max}")
    data = np.ascontiguousarray(A.data, dtype=np.float64)
    if not np.all(np.isfinite(data)):
        raise ValueError("A has entries that are not finite (NaN or infinity)")
    indices = np.ascontiguousarray(A.indices, dtype=np.int32)
    indptr = np.ascontiguousarray(A.indptr, dtype=np.int64)
    return sp.csr_array((data, indices, indptr), shape=A.shape), indptr, indices, data


def _as_vector(v: Any, n: int, what: str) -> np.ndarray:
    """A real vector of n entries ((n,) or (n, 1)) as a new float64 array."""
    array = np.asarray(v)
    _refuse_complex(array.dtype, what)
    if array.shape not in ((n,), (n, 1)):
        raise ValueError(f"{what} must have shape ({n},) or ({n}, 1), not {array.shape}")
    out = np.array(array, dtype=np.float64, order="C").reshape(n)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} has entries that are not finite (NaN or infinity)")
    return out


# ---- options ----

_ARRAY_KEYS = ("amg.coordinates", "amg.near_nullspace")


def _keyword_names() -> dict[str, str]:
    """mg_smoother -> mg.smoother, for every key of the options layer."""
    return {info["key"].replace(".", "_"): info["key"] for info in _clmg.option_keys()}


_KEYWORDS = _keyword_names()


def _flatten(options: Mapping, prefix: str = "") -> list[tuple[str, Any]]:
    pairs = []
    for key, value in options.items():
        if not isinstance(key, str):
            raise TypeError(f"option names are strings, not {key!r}")
        if isinstance(value, Mapping):  # {"mg": {"smoother": ...}}, as the JSON takes it
            pairs.extend(_flatten(value, prefix + key + "."))
        else:
            pairs.append((prefix + key, value))
    return pairs


def _text(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise TypeError(f"an option value is a string, number or boolean, not {value!r}")


class _Options:
    """The text and (key, value) pairs handed to clmg_options_parse and
    clmg_options_set, from options= (a "key=value ..." string or a dict,
    dotted or nested keys) then keyword arguments (mg_smoother=...). Arrays
    for amg.coordinates and amg.near_nullspace are written to a scratch
    Matrix Market file (the library's writer), which the options layer reads."""

    def __init__(self, options: str | Mapping | None, keywords: Mapping[str, Any]):
        self.text: str | None = None
        pairs: list[tuple[str, Any]] = []
        if isinstance(options, str):
            self.text = options
        elif isinstance(options, Mapping):
            pairs.extend(_flatten(options))
        elif options is not None:
            raise TypeError("options must be a 'key=value ...' string or a dict")
        for name, value in keywords.items():
            key = _KEYWORDS.get(name)
            if key is None:
                raise TypeError(
                    f"unknown option {name!r}; the options are {', '.join(sorted(_KEYWORDS))} "
                    "(dotted keys as mg_smoother=... or options={'mg.smoother': ...})"
                )
            pairs.append((key, value))
        self._scratch: tempfile.TemporaryDirectory | None = None
        self.pairs = [(key, self._value(key, value)) for key, value in pairs]

    def _value(self, key: str, value: Any) -> str:
        if key in _ARRAY_KEYS and not isinstance(value, (str, os.PathLike)):
            array = np.array(value, dtype=np.float64, order="C")
            if array.ndim == 1:
                array = array.reshape(-1, 1)
            if array.ndim != 2 or array.size == 0:
                raise ValueError(f"{key} takes a 2-D array (rows x columns), not {array.shape}")
            if self._scratch is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="clmg-")
            path = os.path.join(self._scratch.name, key.replace(".", "_") + ".mtx")
            _clmg.write_array(path, array, array.shape[0], array.shape[1])
            return path
        return _text(value)

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.pairs)

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None


def check_options(options: str | Mapping | None = None, **keywords: Any) -> dict:
    """The options as the library reads them (every key and value checked,
    ClmgError otherwise), as a dict of the keys set."""
    parsed = _Options(options, keywords)
    try:
        return json.loads(_clmg.check_options(parsed.text, parsed.pairs))
    finally:
        parsed.close()


# ---- solvers ----


@dataclasses.dataclass
class SolveInfo:
    """What a solve reports."""

    converged: bool  #: the residual recomputed from x met the tolerance
    iterations: int  #: Krylov iterations (multigrid cycles for krylov=none)
    residuals: np.ndarray  #: relative residual after each iteration (entry 0: the start)
    initial_residual: float  #: ||b - A x0||, on the device
    final_residual: float  #: ||b - A x||, recomputed from x on the device
    relative_residual: float  #: final_residual / ||b||
    true_residual: float  #: ||b - A x|| recomputed on the host in double from the returned x
    true_relative_residual: float  #: true_residual / ||b|| (/ 1 when b = 0)
    setup_time: float  #: seconds the solver's setup took, kernel compilation excluded
    compile_time: float  #: seconds the setup spent compiling (or loading) kernels
    solve_time: float  #: seconds of the solve, uploads and downloads included
    status: str  #: the library's status ("success", "not converged", ...)
    message: str  #: why it did not converge ("" when it did)
    view: dict  #: the solver's view (clmg_solver_view_json): resolved options, levels, ...


class Solver:
    """A solver composed by clmg's options layer for the square matrix A
    (clmg_solver_create): device matrix, preconditioner and Krylov method,
    set up once, then :meth:`solve` as often as needed.

    ``options`` is a "key=value ..." string or a dict (dotted keys
    {"mg.smoother": "chebyshev"} or nested {"mg": {"smoother": ...}}); keyword
    arguments set keys too, dots as underscores (``mg_smoother="chebyshev"``),
    after ``options``. ``monitor(iteration, relative_residual)`` is called
    after every iteration of each solve; a true return stops the solve.
    """

    def __init__(
        self,
        A: Any,
        options: str | Mapping | None = None,
        *,
        context: Context | None = None,
        device: str | None = None,
        monitor: Callable[[int, float], Any] | None = None,
        **keywords: Any,
    ):
        self.A, indptr, indices, data = _as_csr(A)
        self.shape = self.A.shape
        self.context = _resolve_context(context, device)
        self.monitor = monitor
        parsed = self._parse(options, keywords)
        try:
            self._c = _clmg.Solver(
                self.context._c,
                self.A.shape[0],
                indptr,
                indices,
                data,
                parsed.text,
                parsed.pairs,
            )
        finally:
            parsed.close()
        self._view: dict | None = None

    def _parse(self, options, keywords) -> _Options:
        return _Options(options, keywords)

    @property
    def view(self) -> dict:
        """The solver as the library resolved it (clmg_solver_view_json):
        "options" (every key, auto replaced by what was chosen), "method",
        "preconditioner", "precision", "format", the hierarchy's levels."""
        if self._view is None:
            self._view = json.loads(self._c.view_json())
        return self._view

    @property
    def options(self) -> dict:
        """The resolved options (nested as the JSON layer writes them)."""
        return self.view["options"]

    def view_text(self) -> str:
        """The view as text for people (clmg_solver_view)."""
        return self._c.view()

    def solve(
        self,
        b: Any,
        x0: Any = None,
        *,
        monitor: Callable[[int, float], Any] | None = None,
    ) -> tuple[np.ndarray, SolveInfo]:
        """Solves A x = b from x0 (default 0): the solution as a float64 NumPy
        array and a :class:`SolveInfo`. A solve that stops short of the
        tolerance returns its last iterate with info.converged False and
        issues a :class:`ConvergenceWarning`; library failures raise ClmgError."""
        n = self.A.shape[0]
        b_ = _as_vector(b, n, "b")
        x = np.zeros(n) if x0 is None else _as_vector(x0, n, "x0")
        x, info = self._solve(b_, x, monitor, self.A)
        if not info.converged:
            warnings.warn(f"clmg: {info.message or info.status}", ConvergenceWarning, stacklevel=2)
        return x, info

    def _solve(
        self, b_: np.ndarray, x: np.ndarray, monitor: Callable | None, A: sp.csr_array
    ) -> tuple[np.ndarray, SolveInfo]:
        """The solve of b_ from x (float64 vectors in the solver's numbering,
        x overwritten), A the host matrix in that numbering; no warning."""
        if monitor is not None and not callable(monitor):
            raise TypeError("monitor must be callable(iteration, relative_residual)")
        start = time.perf_counter()
        result = self._c.solve(b_, x, monitor if monitor is not None else self.monitor)
        solve_time = time.perf_counter() - start
        # a double solver's true residual comes from the device (one product
        # there); a float one's is recomputed here in double
        true_residual, b_norm = result["true_residual"], result["b_norm"]
        if not (np.isfinite(true_residual) and np.isfinite(b_norm)):
            true_residual = float(np.linalg.norm(b_ - A @ x))
            b_norm = float(np.linalg.norm(b_))
        times = self._c.times()
        info = SolveInfo(
            converged=result["converged"],
            iterations=result["iterations"],
            residuals=np.asarray(result["history"], dtype=np.float64),
            initial_residual=result["initial_residual"],
            final_residual=result["final_residual"],
            relative_residual=result["relative_residual"],
            true_residual=true_residual,
            true_relative_residual=true_residual / b_norm if b_norm > 0 else true_residual,
            setup_time=times["setup"],
            compile_time=times["compile"],
            solve_time=solve_time,
            status=result["status"],
            message=result["message"],
            view=self.view,
        )
        return x, info

    def __repr__(self) -> str:
        d = self._c.describe()
        name = "Multigrid" if isinstance(self, Multigrid) else type(self).__name__
        return (
            f"<clmg.{name} {d['rows']} rows, krylov {d['method']}, "
            f"precond {d['precond']}, {d['precision']}>"
        )


class Multigrid(Solver, spla.LinearOperator):
    """A solver with a multigrid hierarchy on the device, which is also a
    SciPy LinearOperator: ``M @ r`` (``M.matvec(r)``) is one multigrid cycle
    from zero for A z = r, so ``M`` is a preconditioner for
    scipy.sparse.linalg.cg, gmres, ... (``M=M``). The hierarchy stays on the
    device; each application uploads r and downloads z. :meth:`solve` runs
    the whole solver (the Krylov method of ``krylov``, auto: CG for a
    symmetric A with a positive diagonal, else GMRES; ``krylov="none"``:
    cycles alone) on the device. :func:`amg` makes one."""

    def __init__(self, A: Any, options: str | Mapping | None = None, **keywords: Any):
        Solver.__init__(self, A, options, **keywords)
        if self._c.describe()["levels"] == 0:
            raise ValueError("this solver has no multigrid hierarchy (precond must be amg)")
        spla.LinearOperator.__init__(self, dtype=np.dtype(np.float64), shape=self.A.shape)

    @property
    def levels(self) -> int:
        """The hierarchy's levels."""
        return self._c.describe()["levels"]

    def _input(self, r: Any) -> np.ndarray:
        """The preconditioner's input as a new float64 vector (float32 and
        integers are cast; complex is refused)."""
        r_ = np.asarray(r)
        _refuse_complex(r_.dtype, "the preconditioner's input")
        r_ = np.array(r_, dtype=np.float64, order="C").reshape(-1)
        if r_.shape[0] != self.A.shape[0]:
            raise ValueError(f"the input has {r_.shape[0]} entries, not {self.A.shape[0]}")
        return r_

    def _matvec(self, r: Any) -> np.ndarray:
        r_ = self._input(r)
        z = np.empty_like(r_)
        self._c.precondition(r_, z)
        return z

    def aspreconditioner(self) -> "Multigrid":
        """The object itself (pyamg's spelling)."""
        return self


class _AMG(Multigrid):
    def _parse(self, options, keywords) -> _Options:
        parsed = _Options(options, keywords)
        # precond=amg first: a precond the caller gives is refused below
        parsed.text = "precond=amg " + (parsed.text or "")
        return parsed

    def __init__(self, A: Any, options: str | Mapping | None = None, **keywords: Any):
        Solver.__init__(self, A, options, **keywords)
        precond = self._c.describe()["precond"]
        if precond != "amg":
            raise ValueError(f"clmg.amg builds an AMG hierarchy: precond must be amg, not {precond}")
        spla.LinearOperator.__init__(self, dtype=np.dtype(np.float64), shape=self.A.shape)


def amg(A: Any, options: str | Mapping | None = None, **keywords: Any) -> Multigrid:
    """An algebraic multigrid hierarchy of A on the device (precond=amg with
    the amg.* and mg.* options), as a :class:`Multigrid`: a SciPy
    LinearOperator preconditioner (one cycle per application) with
    :meth:`~Solver.solve`. Elasticity: ``amg_block_size=3`` and
    ``amg_coordinates=`` an array of node coordinates (nodes x 2 or 3) give
    the rigid-body modes; ``amg_near_nullspace=`` takes vectors (rows x k)."""
    return _AMG(A, options, **keywords)


def solve(
    A: Any,
    b: Any,
    x0: Any = None,
    options: str | Mapping | None = None,
    *,
    context: Context | None = None,
    device: str | None = None,
    monitor: Callable[[int, float], Any] | None = None,
    **keywords: Any,
) -> tuple[np.ndarray, SolveInfo]:
    """Solves A x = b as the options say (krylov, precond, tol, mg.*, amg.*,
    ... as for the clmg command; defaults: krylov auto, Jacobi, tol 1e-8):
    ``x, info = clmg.solve(A, b, precond="amg", mg_smoother="chebyshev")``."""
    solver = Solver(A, options, context=context, device=device, **keywords)
    return solver.solve(b, x0, monitor=monitor)


# the finite-element problems (fe.py uses the package's helpers above)
from . import fe  # noqa: E402
from .fe import flow, helmholtz, poisson, poisson_multigrid  # noqa: E402
