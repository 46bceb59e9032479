"""A fleet: a suite spread over many hosts with Dask distributed (issue 17).

Dask's scheduler does the scheduling; steadybench adds what a benchmark needs on top of it:

* every case (or every A/B round) is one Dask task that needs one unit of the ``benchmark``
  resource, and each host's worker (``steadybench worker``) offers exactly one, so a host never
  runs two benchmarks at once (Dask "worker resources"; the one-job-per-runner rule of Bencher
  and of CPython's benchmark runners);
* inside the task the benchmark runs in the core's own spawned worker processes
  (:mod:`steadybench.runner.workers`), never in Dask's threads;
* each execution that ends is sent to the scheduler at once (an event), so a host that dies
  mid-case loses nothing already measured: Dask re-runs the case elsewhere and the result lists
  the lost attempt, marked (:mod:`steadybench.fleet.attempts`);
* the host is a level of the hierarchy (:mod:`steadybench.fleet.hosts`).

Modules: ``connect`` (scheduler address or file, the ``benchmark`` resource check), ``host``
(the worker plugin: host id and fingerprint), ``task`` (what runs on a host), ``dispatch``
(submit, collect, Ctrl-C, lost attempts), ``suite`` (``run --cluster``), ``options`` (the
shared ``--cluster`` option), ``hosts`` (statistics per host), ``exec``/``ab`` (the other
commands). See ``docs/fleet.md``.
"""

#: the Dask worker resource a benchmark task needs; a host offers exactly one unit
RESOURCE = "benchmark"
#: the name of steadybench's worker plugin on every fleet host
PLUGIN_NAME = "steadybench-host"
#: the scheduler metadata under which hosts publish their fingerprints
METADATA_KEY = ("steadybench", "hosts")
