"""Start-up overhead of a process, measured the way the commands are measured.

The wall time of one run of an external command includes creating the process, loading the
program and reaping it — a cost the command's own work does not have. Like hyperfine, which
subtracts the time of an empty shell, steadybench first times a trivial process (``true``, or
``sh -c ''`` with ``--shell``) with the very same runner, and subtracts the start-up cost from
every measurement. A few runs are made before the measurement; then ``exec`` makes one
more per round of its interleaved schedule, so the start-up cost is sampled under the same
drift of the machine as the commands, and the mean of all of them is subtracted at the end.
The mean (as hyperfine does), because the corrected mean is then an unbiased estimate of the
difference of expectations: the interruptions that lengthen a few runs of the commands
lengthen the trivial runs alike. (A median would be steadier but, subtracted from a mean,
biased by the skew of the distribution.) This is the differential
measurement of Moreno and Fischmeister (source ``002``, §3): the systematic error ε is
estimated separately and removed. Raw figures are kept next to corrected ones, and a warning is
given when a command is so short that the correction is larger than what remains.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigurationError, MeasurementError
from .process import CommandRunner

#: runs of the trivial process: at least this many...
CALIBRATION_MIN_RUNS = 5
#: ...and more until this much time is spent, up to CALIBRATION_MAX_RUNS
CALIBRATION_TIME = 0.02
CALIBRATION_MAX_RUNS = 20
CALIBRATION_WARMUP = 3


@dataclass
class Calibration:
    """Start-up cost of a trivial process, in seconds."""

    command: list[str]
    samples: list[float]

    @property
    def value(self) -> float:
        """The cost subtracted from each run: the mean of the samples."""
        return float(np.mean(self.samples))

    def to_dict(self) -> dict[str, Any]:
        arr = np.asarray(self.samples, dtype=float)
        return {
            "command": list(self.command),
            "runs": int(arr.size),
            "mean": float(arr.mean()),
            "median": float(np.median(arr)),
            "stdev": float(arr.std(ddof=1)) if arr.size > 1 else None,
            "min": float(arr.min()),
            "max": float(arr.max()),
            "unit": "s",
            "subtracted": "mean",
        }


def trivial_command(runner: CommandRunner) -> list[str]:
    """The argument list of a process that does nothing, run the way ``runner`` runs commands."""
    if runner.shell:
        return [runner.shell_path, "-c", ""]
    found = shutil.which("true")
    if found is None:  # pragma: no cover - every POSIX system has true(1)
        raise ConfigurationError("cannot calibrate the start-up cost: no 'true' program found")
    return [found]


def calibrate(runner: CommandRunner, min_runs: int = CALIBRATION_MIN_RUNS,
              max_time: float = CALIBRATION_TIME, max_runs: int = CALIBRATION_MAX_RUNS,
              warmup: int = CALIBRATION_WARMUP) -> Calibration:
    """Time the trivial process: ``warmup`` runs, then ``min_runs`` or more until ``max_time``."""
    argv = trivial_command(runner)
    probe = CommandRunner(shell=False, timeout=10.0, clock=runner.clock, env=runner.env)
    return sample_startup(argv, lambda: probe.run(argv), "", min_runs, max_time, max_runs,
                          warmup)


def sample_startup(argv: list[str], run_once: Callable[[], Any], where: str, min_runs: int,
                   max_time: float, max_runs: int, warmup: int) -> Calibration:
    """Run the trivial program (``run_once``: one run, a ProcessRun) ``warmup`` times, then
    ``min_runs`` or more times until ``max_time`` seconds of runs; ``where`` names the machine
    in the error (" on HOST"). Shared by the local and the remote calibration."""
    samples: list[float] = []
    spent = 0
    for i in range(warmup + max_runs):
        run = run_once()
        if not run.ok:
            raise MeasurementError(f"cannot calibrate the start-up cost{where}: "
                                   f"{' '.join(argv)} failed ({run.describe_failure()})")
        if i < warmup:
            continue
        samples.append(run.wall_ns / 1e9)
        spent += run.wall_ns
        if len(samples) >= min_runs and spent >= max_time * 1e9:
            break
    return Calibration(argv, samples)

