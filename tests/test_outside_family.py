"""A method family defined outside src/odekit runs through the public seams alone.

``examples/adams_bashforth.py`` defines the two-step Adams-Bashforth method
as a coefficients class, a ``@jitable`` stepper and one ``register_family``
call.  Registering it changes the registry for the whole process, so it is
exercised in a child process: both backends, ``odekit methods``, and the
order study the registry-driven convergence test applies to every method.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

CHILD = r"""
import contextlib, io, json, math, runpy, sys
import numpy as np
import odekit
from odekit import cli

runpy.run_path(sys.argv[1], run_name="adams_bashforth")
sys.path.insert(0, sys.argv[2])
from test_convergence import FORCED, TOL, study

m = odekit.method("ab2")
out = {"family": str(m.family), "evaluations": m.evaluations_per_step, "order": m.order}
out["measured"] = study(FORCED, m, 40, FORCED.exact)[0]
ends = {}
for backend in ("python", "numba"):
    sol = odekit.solve(FORCED, "ab2", h=0.01, backend=backend)
    ends[backend] = (sol.backend, float(sol.y[-1]), sol.stats.nfev)
out["ends"] = ends
text = io.StringIO()
with contextlib.redirect_stdout(text):
    cli.main(["methods"])
out["listing"] = [line for line in text.getvalue().splitlines() if line.startswith("ab2 ")]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def child():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "examples" / "adams_bashforth.py"),
                           str(ROOT / "tests")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_it_passes_the_registry_driven_order_study(child):
    assert child["family"] == "adams_bashforth"
    assert abs(child["measured"] - child["order"]) <= 0.25


def test_it_runs_compiled_and_as_python_with_the_same_numbers(child):
    python, numba = child["ends"]["python"], child["ends"]["numba"]
    assert (python[0], numba[0]) == ("python", "numba")
    assert numba[1] == pytest.approx(python[1], rel=1e-14, abs=0)
    # 200 steps: f at t0, Heun's second stage in the first step, then one evaluation a step
    assert python[2] == numba[2] == 1 + 1 + 199


def test_it_is_listed_by_odekit_methods(child):
    (line,) = child["listing"]
    assert line.split()[:4] == ["ab2", "adams_bashforth", "2", "1"]
