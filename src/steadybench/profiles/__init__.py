"""Profiles: where a benchmark's cost goes, and how it moved between two versions (``--profile``).

A profile is one *extra* execution of a case under a profiler, separate from the measured
executions, so that no estimate is ever taken from a profiled process (docs/profiles.md):

* :mod:`.model` — the typed record (:class:`~.model.Profile`: stacks of frames with their
  cost, calls covered, garbage collection and allocations per call);
* :mod:`.sampler` — py-spy driving a process from outside (time, by sampling);
* :mod:`.callgrind` — valgrind's callgrind (instructions per function, exact), and its reader;
* :mod:`.child` — the profiled process of a Python case (its calls, collection on and timed);
* :mod:`.backend` — the profiled execution as a backend of :mod:`steadybench.execution`;
* :mod:`.filtering` — the calls' region of each stack, steadybench's own frames hidden;
* :mod:`.diff` — functions ranked by their change between two profiles, with sampling error;
* :mod:`.writers` — speedscope JSON and collapsed stacks; :mod:`.console` the text;
  :mod:`.flame` the report's flame graphs.
"""
