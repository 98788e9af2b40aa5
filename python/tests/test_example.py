"""examples/python_amg.py runs and reports both solves."""

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
