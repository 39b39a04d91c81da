"""tools/import_graph.py lists a package's imports and finds its cycles, deferred imports included.

Tested on small packages written here, each shaped like a case in odekit:
a cycle closed only by an import inside a function, a cycle through a
subpackage's ``__init__``, and a layered package without one; and on
odekit itself, which must have none.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "import_graph.py"


def package(root, files):
    """Write ``{relative path: source}`` under ``root / "pkg"``; return the package's folder."""
    for name, source in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root / "pkg"


def run(folder, *options):
    done = subprocess.run([sys.executable, str(SCRIPT), *options, str(folder)], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


LAYERED = {
    "__init__.py": "from . import core, study\n",
    "core.py": "from .theory import order\n",
    "theory.py": "import math\n\ndef order():\n    return 4\n",
    "study.py": "from . import core\nfrom pkg.theory import order\n\ndef run():\n    from .core import order\n",
}


def test_a_layered_package_has_no_cycle(tmp_path):
    code, out, _ = run(package(tmp_path, LAYERED), "--check")
    assert code == 0
    assert "pkg.core -> pkg.theory\n" in out
    assert "pkg.study -> pkg.core, pkg.theory\n" in out    # the deferred import repeats a top-level one
    assert "pkg.theory -> (none)\n" in out                 # math is not the package's
    assert "0 import cycle(s)" in out


def test_a_cycle_closed_by_a_deferred_import_is_found(tmp_path):
    files = dict(LAYERED, **{"theory.py": "def order():\n    from .study import run\n    return run()\n"})
    folder = package(tmp_path, files)
    code, out, _ = run(folder, "--check")
    assert code == 1
    assert "pkg.theory -> pkg.study*\n" in out              # marked: imported only inside a function
    assert "1. 3 modules: pkg.core, pkg.study, pkg.theory" in out
    assert "e.g. pkg.core -> pkg.theory -> pkg.study* -> pkg.core\n" in out
    assert run(folder)[0] == 0                              # without --check it only reports


def test_importing_a_submodule_counts_its_package_init(tmp_path):
    # kernels/__init__ imports driver; driver's import of kernels.layout stays inside the
    # subpackage, but core's import of kernels.layout runs kernels/__init__ first: a cycle
    # core -> kernels -> driver -> core
    folder = package(tmp_path, {
        "__init__.py": "",
        "core.py": "from .kernels.layout import SLOTS\n",
        "kernels/__init__.py": "from . import driver\n",
        "kernels/layout.py": "SLOTS = 3\n",
        "kernels/driver.py": "from . import layout\nfrom .. import core\n",
    })
    code, out, _ = run(folder, "--check")
    assert code == 1
    assert "pkg.core -> pkg.kernels, pkg.kernels.layout\n" in out
    assert "pkg.kernels.driver -> pkg.core, pkg.kernels.layout\n" in out
    assert "3 modules: pkg.core, pkg.kernels, pkg.kernels.driver" in out


def test_a_folder_that_is_not_a_package_is_refused(tmp_path):
    code, _, err = run(tmp_path, "--check")
    assert code == 2
    assert "PACKAGE_DIR must be a package's folder" in err and str(tmp_path) in err



def test_odekit_has_no_import_cycle():
    """Layers you can see: theory below the run, studies above it, plot at the top -- deferred imports too."""
    done = subprocess.run([sys.executable, str(SCRIPT), "--check", str(ROOT / "src" / "odekit")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
