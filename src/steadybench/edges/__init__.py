"""Timing from a digitised pin signal (Moreno and Fischmeister, source ``002`` §1 and §6).

Embedded code toggles an output pin before and after the code under test; the pin's signal is
digitised (the paper: a sound card at 24 bits, 192 kHz; today also oscilloscopes and logic
analysers) and the time between the two edges is the measurement. This package turns such a
capture into steadybench samples:

* :mod:`.capture` reads a WAV file (8/16/24/32-bit PCM, 32/64-bit float) or a CSV of
  ``time,value`` samples;
* :mod:`.detect` finds every edge at the inflection point of the band-limited transition (§6:
  the zero crossing of the numerical second derivative, located with second-order
  interpolation for sub-sample resolution), rising and falling told apart, a hysteresis band
  keeping noise from making edges;
* :mod:`.timing` pairs each ``A → ¬A`` edge with the next ``¬A → A`` edge (always the same
  kinds, §5 "Pin-toggling measurement errors") and makes a case of the pulse widths that the
  ``direct``, ``linefit`` (the 1..M pattern of §4) and ``differential`` (§3.1) estimates apply
  to.

``steadybench edges CAPTURE`` (:mod:`steadybench.cli.edges`) is the command.
"""

from __future__ import annotations

from .capture import Capture, CaptureError, read_capture, read_csv, read_wav
from .detect import EdgeOptions, Edges, find_edges
from .timing import PAIR_KINDS, edge_case, pulse_widths

__all__ = [
    "PAIR_KINDS", "Capture", "CaptureError", "EdgeOptions", "Edges", "edge_case", "find_edges",
    "pulse_widths", "read_capture", "read_csv", "read_wav",
]
