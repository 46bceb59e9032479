"""The defaults of ``steadybench run``, in one place (the CLI's ``--help`` quotes them).

* Method :data:`METHOD` (calibrated samples, median per execution:
  :mod:`steadybench.methods.calibrated`).
* :data:`PROCESSES` independent executions, each a spawned interpreter
  (:mod:`steadybench.runner.workers`); the headline's interval is across them (Kalibera &
  Jones, ISMM 2013).
* In each execution: :data:`WARMUP` warm-up sample, then samples until the per-execution
  interval of the mean is within ±1 % after at least :data:`MIN_RUNS` samples, or
  :data:`EXECUTION_TIME` seconds have passed.

Together about 3 s per benchmark on a typical machine, as before the executions were isolated.
"""

from __future__ import annotations

#: the measurement method
METHOD = "auto"
#: independent executions (worker processes) per benchmark
PROCESSES = 10
#: seconds of sampling per execution, at most (the stop rule's time bound)
EXECUTION_TIME = 0.2
#: samples per execution, at least, before the precision target can stop it
MIN_RUNS = 10
#: warm-up samples per execution
WARMUP = 1


def describe() -> str:
    """The default stop rule and method, in words (for ``--help``)."""
    return (f"Default: method {METHOD}, {PROCESSES} independent executions (fresh "
            f"processes); in each, {WARMUP} warm-up sample, then samples until ≥ {MIN_RUNS} "
            f"and a ±1 % interval, or {EXECUTION_TIME:g} s.")
