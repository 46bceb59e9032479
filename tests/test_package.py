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


def test_a_submodule_does_not_hide_the_function_of_its_name():
    """``Measurement`` lives in the module ``steadybench.measure``; loading it must not make
    ``sb.measure`` the module instead of the function."""
    code = ("import steadybench as sb; sb.Measurement; import steadybench.measure; "
            "print(callable(sb.measure) and not hasattr(sb.measure, '__path__') "
            "and sb.measure.__name__ == 'measure')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
