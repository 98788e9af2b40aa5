"""examples/python_amg.py and python_gmg.py run and report both solves."""

import subprocess
import sys

from conftest import DATA, REPO


def test_example_script():
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python_amg.py"), str(DATA / "poisson2d_32.mtx"),
         "mg.smoother=chebyshev"],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "clmg.solve: cg + amg" in done.stdout
    assert "scipy cg with M = clmg.amg(A)" in done.stdout


def test_gmg_example_script():
    """examples/python_gmg.py: the geometric multigrid in SciPy's CG and in M.solve."""
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "python_gmg.py"), "5", "q1"],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "scipy cg with M = clmg.poisson_multigrid" in done.stdout
    assert "M.solve:" in done.stdout
