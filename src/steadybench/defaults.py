"""The defaults of ``steadybench run``, in one place (the CLI's ``--help`` quotes them).

* Method :data:`METHOD` (calibrated samples, median per execution:
  :mod:`steadybench.methods.calibrated`).
* :data:`PROCESSES` independent executions, each a spawned interpreter
  (:mod:`steadybench.runner.workers`); the headline's interval is across them (Kalibera &
  Jones, ISMM 2013).
* In each execution: :data:`WARMUP` warm-up sample, then samples for :data:`EXECUTION_TIME`
  seconds. A fixed time rather than a precision target: a precision target stops executions
  early, so a short burst of load lands on a larger share of the samples, and the precision that
  matters is across executions anyway.

Together about 3 s per benchmark on a 2-core VM. Many short executions rather than a few long
ones: measured here, executions of ``sorted()`` differ from one another by 2–3 % (layout,
placement, the machine's moment) while one execution's median is good to ~0.6 % after 0.1 s, so
the headline gains more from another execution than from longer ones (the spread of a mean
of K executions is σ_between/√K).
"""

from __future__ import annotations

#: the measurement method
METHOD = "auto"
#: independent executions (worker processes) per benchmark
PROCESSES = 25
#: seconds of sampling per execution, at most (the stop rule's time bound)
EXECUTION_TIME = 0.06
#: warm-up samples per execution
WARMUP = 1
#: how the executions' hidden factors are chosen (:mod:`steadybench.runner.layout`)
LAYOUT = "design"
#: the ways of choosing them, for ``--layout`` of ``run`` and ``ab``
LAYOUTS = ("design", "fixed", "random")

#: ``steadybench ab``: seconds of rounds by default (``--max-time``); with the start-up and the
#: last round, a comparison that only the budget ends takes about 9 s on a 2-core VM
AB_MAX_TIME = 8.5
#: ``steadybench ab``: rounds at most by default (``--max-rounds``); more than fit in the time
#: budget at ~0.2 s per round, so that the budget, not the count, ends a comparison
AB_MAX_ROUNDS = 60
#: ``steadybench ab``: how the executions' hidden factors are chosen. ``fixed`` (ASLR off too):
#: in each round A and B run under the same hash seed, environment size and addresses, so the
#: layout's effect cancels in the paired ratio. With ``design`` (ASLR on) the rounds' ratios
#: spread so much wider that ``benchmarks/verdicts.py`` detected a 5 % slowdown in 80 % of
#: pairs instead of 100 % (docs/comparison.md)
AB_LAYOUT = "fixed"
#: ``steadybench ab``: seconds of sampling in each execution of a benchmark file
AB_EXECUTION_TIME = 0.03


def describe() -> str:
    """The default stop rule and method, in words (for ``--help``)."""
    return (f"Default: method {METHOD} (calibrated samples, the median), {PROCESSES} "
            f"independent executions (fresh processes); in each, {WARMUP} warm-up sample, then "
            f"samples for {EXECUTION_TIME:g} s. The stop options apply inside each execution. "
            "The headline is the median of the executions' values, with its interval across "
            "executions.")
