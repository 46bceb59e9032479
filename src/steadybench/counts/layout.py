"""The layout a counted process runs under: the same in every invocation.

Counts depend on the hash seed (dict and set order, hence which code paths run), on the size of
the environment (where the stack starts, hence alignment) and on address-space randomisation
(where the heap and libraries are). Counting uses the design of
:mod:`steadybench.runner.layout` with ASLR off (its ``fixed`` mode): layout ``i`` has the
design's hash seed ``i`` and padding ``i``, and every process runs with the personality
ADDR_NO_RANDOMIZE, so two invocations on one machine and interpreter count the same. Beyond the
design's padding, the environment is padded up to :data:`ENV_TARGET` bytes, so that machines
whose environments differ in size (a longer ``PATH``, another user name) still start their
processes' stacks at the same place. K layouts (``-p K``) show how much a count depends on the
layout; their spread is reported as the case's ``between_cov``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from ..runner.layout import layout_for

#: the environment of a counted process is padded to this many bytes (plus the design's
#: padding); an environment already larger is left as it is and the layout records its size
ENV_TARGET = 16384
#: the variable carrying the padding
PAD_VARIABLE = "STEADYBENCH_ENV_PAD"
#: variables that must not reach a counted process: steadybench's own machinery, and the
#: shell's record of the directory it was started from (PWD, OLDPWD), whose lengths would move
#: the process's heap objects (see :mod:`.view`)
_DROPPED = ("STEADYBENCH_WORKER_FD", "STEADYBENCH_FIXED_LAYOUT", PAD_VARIABLE, "PYTHONHASHSEED",
            "PWD", "OLDPWD")


@dataclass(frozen=True)
class CountLayout:
    """What a counted process's layout was: recorded with every count."""

    index: int
    hash_seed: int
    env_bytes: int
    aslr_off: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def env_size(env: Mapping[str, str]) -> int:
    """Bytes the environment takes in a new process (``NAME=value\\0`` each)."""
    return sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in env.items())


def layout_env(index: int, base: Mapping[str, str] | None = None,
               extra: Mapping[str, str] | None = None) -> tuple[dict[str, str], int, int]:
    """The environment of layout ``index``: ``(env, hash_seed, env_bytes)``."""
    design = layout_for(index, "fixed")
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROPPED}
    env.update(extra or {})
    env["PYTHONHASHSEED"] = str(design.hash_seed)
    size = env_size(env) + len(PAD_VARIABLE) + 2
    pad = max(0, ENV_TARGET - size) + design.env_pad
    env[PAD_VARIABLE] = "x" * pad
    return env, design.hash_seed, env_size(env)
