"""Names a package loads on first use (PEP 562), so importing it stays cheap.

``steadybench``, ``steadybench.compare``, ``steadybench.programs``, ``steadybench.methods`` and
``steadybench.stats`` export names whose modules import numpy or scipy. A worker process, a
measured program and ``steadybench --help`` must not pay for those, so each package declares
``name → module`` and gets its ``__getattr__``/``__dir__`` from :func:`lazy_exports`.
"""

# Imported by the package's ``__init__`` before the console script guards against Ctrl-C
# (:mod:`steadybench.entry`): nothing is imported at module level, not even ``__future__``
# (hence the quoted annotations), so that window loads no module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_exports(package: "str", namespace: "dict[str, Any]", exports: "dict[str, str]"
                 ) -> "tuple[Callable[[str], Any], Callable[[], list[str]]]":
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to the module
    (relative to the package) that defines it; a loaded name is stored in ``namespace`` (the
    package's globals), so later lookups are plain attribute reads."""

    def __getattr__(name: "str") -> "Any":  # noqa: N807 - the module hook's name
        import importlib
        import types

        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        # Importing a submodule binds it on the package under its own name, which hides an
        # export of that name (``steadybench.measure``, the function, by the module): put the
        # exports back.
        for other, where in exports.items():
            if isinstance(namespace.get(other), types.ModuleType):
                namespace[other] = getattr(importlib.import_module(where, package), other)
        return value

    def __dir__() -> "list[str]":  # noqa: N807
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
