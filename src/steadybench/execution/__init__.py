"""The execution layer: K independent executions of a case, through one driver.

steadybench's intervals stand on independent executions (Kalibera & Jones, ISMM 2013;
Touati et al., source ``003`` §2). Every command that makes them goes through this package:

* :mod:`.backend` — what one execution is: a :class:`~.backend.Backend` runs one execution of
  its cases for an :class:`~.backend.ExecutionRequest` and returns an :class:`~.backend.Outcome`
  per case (the raw case, its method, how it ended);
* :mod:`.backends` — the places an execution can run: a spawned worker interpreter
  (:class:`~.backends.WorkerBackend`), this process (:class:`~.backends.InProcessBackend`), a
  command's run loop (:class:`~.backends.CommandBackend`); a new place is one more class;
* :mod:`.driver` — :func:`~.driver.run_executions`: K executions in turn, the hard time limit
  across all K, stop on a failing execution, Ctrl-C → the partial case, progress, the
  countermeasures of the four stages;
* :mod:`.merge` — :func:`~.merge.merge_executions`, the one function that pools executions into
  a case and makes each execution's typed record
  (:class:`steadybench.model.execution.Execution`).

Nothing is imported here, so importing one module does not pull in the others.
"""
