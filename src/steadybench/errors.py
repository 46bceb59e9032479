"""The project's own exception types.

User mistakes (a bad option, an unreadable file, malformed program output, an impossible
setting) raise :class:`SteadybenchError` or a subclass. The command line prints such an error as
one line, ``error: <message>``, and exits non-zero; ``--debug`` shows the traceback.
"""

from __future__ import annotations


class SteadybenchError(Exception):
    """Base class of every error caused by input the user can fix."""

    exit_code = 2


class ConfigurationError(SteadybenchError):
    """An option, parameter or benchmark definition is invalid."""


class DefinitionError(SteadybenchError):
    """A benchmark file cannot be loaded or defines no benchmarks."""


class ResultsFormatError(SteadybenchError):
    """A results or sample file cannot be read or has the wrong format or schema."""


class MeasurementError(SteadybenchError):
    """A measurement could not produce a trustworthy number (for example a failed fit)."""


class SystemControlError(SteadybenchError):
    """Reading or changing machine settings failed."""


class BenchmarkFailed(SteadybenchError):
    """One or more benchmarks failed; the results of the others were still written."""

    exit_code = 1


class Interrupted(KeyboardInterrupt):
    """Ctrl-C arrived; the partial results were written before this was raised (the CLI
    exits 130). Below the CLI (the fleet) it is raised the same way. ``said``: the command has
    already told the user (``interrupted: partial results``), so the CLI does not say it
    again."""

    def __init__(self, said: bool = False) -> None:
        super().__init__()
        self.said = said


class SampleFormatError(ResultsFormatError):
    """A sample file cannot be read, or holds a value that is not a valid time (``compare``'s
    readers and the formats it reads, :mod:`steadybench.formats`)."""
