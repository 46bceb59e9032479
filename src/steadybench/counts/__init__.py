"""Counts that do not drift: instructions and estimated cycles under valgrind's cachegrind.

Time on a shared machine moves with the machine; the number of instructions a process executes
on valgrind's synthetic CPU does not. This package is the count backend of ``--measure
instructions|cycles``:

* :mod:`.valgrind` runs one process under cachegrind and reads its totals;
* :mod:`.cycles` combines instructions and simulated cache misses into estimated cycles;
* :mod:`.layout` fixes what a count depends on besides the code (hash seed, environment size,
  ASLR);
* :mod:`.backend` is one counted execution and what a count is comparable with;
* :mod:`.fit` takes start-up, set-up and harness out with a line over call counts;
* :mod:`.child` is the counted process of a Python case, :mod:`.python` a Python case counted
  (and :class:`~.python.CountRunner`, the runner the manager uses);
* :mod:`.programs` counts ``exec`` commands (per process) and ITERS programs (per iteration);
* :mod:`.verdict` compares counts ("B executes 3.1 % more instructions than A").

See docs/methods.md, "Counts", for what counts measure and miss.
"""
