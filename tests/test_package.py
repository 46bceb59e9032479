"""The package's top level: every public name resolves, lazily."""

import subprocess
import sys

import steadybench as sb


def test_every_public_name_resolves():
    assert set(sb.__all__) - {"__version__"} == set(sb._EXPORTS)
    for name in sb.__all__:
        assert getattr(sb, name) is not None


def test_importing_the_package_does_not_load_scipy():
    code = "import sys, steadybench.iters_protocol; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
