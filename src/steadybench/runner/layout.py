"""How each independent execution's hidden factors are chosen: a fixed design, or at random.

Layout effects move a Python benchmark by several percent from one process to the next: the hash
seed orders dicts and sets, the environment's size shifts the stack, address-space randomisation
(ASLR) moves the heap and the libraries (Mytkowicz et al., "Producing wrong data without doing
anything obviously wrong", ASPLOS 2009; Curtsinger & Berger, "Stabilizer", ASPLOS 2013). A
headline over K executions therefore averages over K layouts. If the K layouts are drawn afresh
by every invocation, as pyperf does, two invocations of the same benchmark average over
different layouts and disagree by the layout spread divided by √K, even on a quiet machine.

``design`` (the default) holds the Python-level factors at a fixed design instead, so every
invocation uses the same K of them (common random numbers, the standard variance-reduction
technique of simulation studies; DataMill varied hidden factors on purpose in the same spirit,
Petkovich et al., ICPE 2013):

* execution i gets the hash seed :func:`design_hash_seed` (i), the same in every invocation;
* its environment is padded by ``⌊frac(i·φ)·4096⌋`` bytes (φ the golden ratio: a low-discrepancy
  sequence, so any K executions spread over 0–4 KiB evenly);
* address-space randomisation stays as the system has it (on, normally), so the executions sample
  the addresses every ordinary run of the program gets.

``fixed`` (``--layout fixed``) also turns ASLR off for each execution (the Linux personality
ADDR_NO_RANDOMIZE, set around the spawn for the child only, never the system-wide
``randomize_va_space``), so that execution i repeats the very same addresses in every invocation.
That is the most repeatable, but the addresses are then not a sample of ordinary runs: on the
development VM (2-core Xeon, Linux 6.1) every ASLR-off layout made a 40-addition loop 12 % slower
(990 ns against 885 ns with ASLR on, whatever the seed and padding) and ``sorted()`` of 1,000
ints 5 % slower, so it was the default only until that was measured. Use it to bisect a layout
effect, not for the headline. Where the personality cannot be set, ASLR stays on and the
execution records it.

The K executions vary the layout in every mode, so the headline is not tied to one lucky or
unlucky layout, and its interval across executions shows the layout spread. ``ab`` runs under
``fixed`` (:data:`steadybench.defaults.AB_LAYOUT`): execution i of A and of B share seed, padding
and addresses, so what the layout does cancels in their ratio. ``random`` (``--layout random``)
draws seed and padding afresh per execution, as pyperf does.
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from ..defaults import LAYOUTS  # the ways of choosing the hidden factors

#: largest environment padding, bytes (Mytkowicz et al. varied 0–4 KiB)
MAX_ENV_PAD = 4095
#: the golden ratio's fractional part: i·φ mod 1 is evenly spread for any prefix of i
_PHI = 0.6180339887498949
#: seed of the design's hash seeds (any fixed number: it only has to be the same every time)
_DESIGN_SEED = 20091107


@dataclass(frozen=True)
class ExecutionLayout:
    """The hidden factors of one execution."""

    hash_seed: int
    env_pad: int
    #: ask the worker to turn ASLR off for itself
    fixed: bool


def design_hash_seed(index: int) -> int:
    """The design's hash seed of execution ``index`` (1 … 2³²−2, never 0: 0 turns hashing
    randomisation off, which would make execution 0 unlike the others)."""
    return random.Random(_DESIGN_SEED + index).randrange(1, 2**32 - 1)


def layout_for(index: int, layout: str = "design") -> ExecutionLayout:
    """The hidden factors of execution ``index`` (0-based) under ``layout``."""
    if layout in ("design", "fixed"):
        pad = int(((index + 1) * _PHI) % 1.0 * (MAX_ENV_PAD + 1))
        return ExecutionLayout(design_hash_seed(index), pad, layout == "fixed")
    if layout == "random":
        return ExecutionLayout(random.randrange(1, 2**32 - 1),
                               random.randrange(0, MAX_ENV_PAD + 1), False)
    raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")


#: Linux personality flag ADDR_NO_RANDOMIZE (``personality(2)``)
ADDR_NO_RANDOMIZE = 0x0040000
_PERSONALITY_LOCK = threading.Lock()


@contextlib.contextmanager
def aslr_off_for_children(wanted: bool = True) -> Iterator[bool]:
    """While the block runs, processes this process starts inherit the personality
    ADDR_NO_RANDOMIZE (a child's personality is copied at ``fork`` and applies to the image it
    ``exec``s); this process's own layout is not changed, and the previous personality is put
    back at the end. Yields whether the flag is in force (False off Linux, or where a sandbox
    refuses ``personality``). Setting it here, around the spawn, spares the worker a second
    start-up (re-executing itself) that would double the cost of every execution."""
    if not wanted or not sys.platform.startswith("linux"):
        yield False
        return
    with _PERSONALITY_LOCK:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            current = libc.personality(0xFFFFFFFF)
            if current == -1 or libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
                yield False
                return
        except (OSError, AttributeError):
            yield False
            return
        try:
            yield True
        finally:
            libc.personality(current)
