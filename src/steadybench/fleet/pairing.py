"""``compare --by-host``: pair two results files host by host.

A fleet's results record each case's host (``case.extra["host"]``). Comparing BASE and NEW by
host pairs a case only with the same case on the same host, so the verdict compares versions,
not machines; each host's pair is a row of its own (its label carries ``host=...``), and the
suite summary counts them as separate benchmarks.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..compare.readers import SampleSet, _from_results
from ..errors import ConfigurationError


def with_hosts(samples: SampleSet) -> SampleSet:
    """``samples`` with each case's host among its parameters (``host=...``), so matching by
    key pairs the same host only; one line when the input has no host records."""
    results = samples.full_results()
    if results is None or not any(c.extra.get("host") is not None for c in results.cases):
        raise ConfigurationError(f"--by-host: {samples.path} has no host records (results of "
                                 "'run --cluster' or 'exec --cluster' have them)")
    hosted = dataclasses.replace(results, cases=[
        dataclasses.replace(case, params={**case.params, "host": case.extra.get("host")})
        for case in results.cases])
    return _from_results(Path(samples.path), hosted)
