"""The manager (Rancid's BenchmarkManager, §V-A): runs benchmarks and returns Results.

It holds benchmarks, meters, processors and loggers. For every (configuration, parameter set)
of every benchmark it asks the configuration's runner to execute the case with the manager's
meters, runs the *online* processors on the finished case and tells the loggers; when all cases
of a benchmark are done it runs the *global* processors on them. Ctrl-C ends the current case
(keeping its runs, marked interrupted), finishes the processing and logging of what was
measured, and raises :class:`~steadybench.cli.Interrupted` carrying the partial Results. An
error of ours around one case (machine control failing in a runner's action) makes that case
failed and the run goes on; only a ConfigurationError stops it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .environment import capture_environment
from .errors import ConfigurationError, SteadybenchError
from .meters.base import Meter
from .model.benchmark import Benchmark
from .model.results import CaseResult, Results
from .output.loggers import Logger
from .processors.base import Processor, finalize_case


class PartialResults(KeyboardInterrupt):
    """Ctrl-C during :meth:`Manager.run`; ``results`` holds everything measured until then."""

    def __init__(self, results: Results) -> None:
        super().__init__("interrupted")
        self.results = results


class Manager:
    """Holds benchmarks, meters, processors and loggers; :meth:`run` returns Results."""

    def __init__(
        self,
        title: str = "steadybench",
        *,
        benchmarks: Iterable[Benchmark] = (),
        meters: Iterable[Meter] = (),
        processors: Iterable[Processor] = (),
        global_processors: Iterable[Processor] = (),
        loggers: Iterable[Logger] = (),
        confidence: float = 0.95,
    ) -> None:
        self.title = title
        self.benchmarks: list[Benchmark] = list(benchmarks)
        self.meters: list[Meter] = list(meters)
        self.processors: list[Processor] = list(processors)
        self.global_processors: list[Processor] = list(global_processors)
        self.loggers: list[Logger] = list(loggers)
        self.confidence = confidence
        self.context: dict = {}

    def add_benchmark(self, benchmark: Benchmark) -> Manager:
        self.benchmarks.append(benchmark)
        return self

    def add_meter(self, meter: Meter) -> Manager:
        self.meters.append(meter)
        return self

    def add_processor(self, processor: Processor) -> Manager:
        """Add an online processor (run on each case as soon as it finishes)."""
        self.processors.append(processor)
        return self

    def add_global_processor(self, processor: Processor) -> Manager:
        """Add a global processor (run on all cases of a benchmark once it completes)."""
        self.global_processors.append(processor)
        return self

    def add_logger(self, logger: Logger) -> Manager:
        self.loggers.append(logger)
        return self

    def run(self, select: Callable[[str], bool] | None = None) -> Results:
        """Run every benchmark (those whose title ``select`` accepts) and return Results."""
        chosen = [b for b in self.benchmarks if select is None or select(b.title)]
        if not chosen:
            raise ConfigurationError(
                "no benchmarks to run"
                if not self.benchmarks
                else "no benchmark matches the selection"
            )
        clock = chosen[0].configurations[0].runner.clock if chosen[0].configurations else None
        results = Results(
            suite=self.title, environment=capture_environment(clock), context=dict(self.context)
        )
        total = sum(len(b.configurations) * max(len(b.parameters), 1) for b in chosen)
        for logger in self.loggers:
            logger.start(results, total)
        try:
            for benchmark in chosen:
                self._run_benchmark(benchmark, results)
        except KeyboardInterrupt:
            results.interrupted = True
            self._finish(results)
            raise PartialResults(results) from None
        self._finish(results)
        return results

    def _run_benchmark(self, benchmark: Benchmark, results: Results) -> None:
        done: list[CaseResult] = []
        try:
            for config, params in benchmark.cases():
                runner = config.runner
                for logger in self.loggers:
                    logger.case_start(benchmark.title, config.implementation.name, params.to_dict())
                progress = self._progress if self.loggers else None
                runner.confidence = self.confidence  # per-execution intervals at this level
                case: CaseResult | None = None
                try:
                    case = runner.execute(
                        config.implementation,
                        params,
                        self.meters,
                        benchmark=benchmark.title,
                        progress=progress,
                    )
                except ConfigurationError:
                    raise
                except SteadybenchError as exc:
                    case = self._failed_case(runner, config, params, benchmark.title, exc)
                finally:
                    if case is None:  # interrupted inside execute: recover the partial case
                        case = getattr(runner, "last_case", None)
                    if case is not None:
                        _add_throughput(case, config.implementation, params)
                        self._finish_case(case, runner, results, done)
        finally:
            if done:
                for processor in self.global_processors:
                    processor.process(done)
                for logger in self.loggers:
                    logger.benchmark_end(benchmark.title, done)

    @staticmethod
    def _failed_case(runner, config, params, title: str, exc: SteadybenchError) -> CaseResult:
        """The case a runner gave up on with an error of ours (tuning the machine failed, or
        another process holds the tuning lock): a failed case, so the other benchmarks still
        run and every output is written (issue 12, item 6)."""
        case = getattr(runner, "last_case", None)
        if case is None or case.benchmark != title:
            case = runner.new_case(config.implementation, params, title)
        case.errors.append(str(exc))
        case.stop_reason = case.stop_reason or "error"
        return case

    def _finish_case(
        self, case: CaseResult, runner, results: Results, done: list[CaseResult]
    ) -> None:
        finalize_case(case, self.processors, runner.method, self.confidence)
        if case.extra.get("throughput"):  # the rates, as numbers, for the JSON's readers
            from .output.rates import rate_fields

            case.extra["rates"] = rate_fields(case)
        results.cases.append(case)
        done.append(case)
        for logger in self.loggers:
            logger.case_end(case)

    def _progress(self, case: CaseResult, state) -> None:
        for logger in self.loggers:
            logger.progress(case, state)

    def _finish(self, results: Results) -> None:
        for logger in self.loggers:
            logger.finish(results)


def _add_throughput(case: CaseResult, implementation: Any, params: Any) -> None:
    """What one call processes, for the rates every output shows (output/rates.py)."""
    declared = getattr(implementation, "throughput", None)
    if declared:
        from .output.rates import amounts_for

        case.extra["throughput"] = amounts_for(declared, params.to_dict())


def run_benchmarks(benchmarks: Sequence[Benchmark], **kwargs) -> Results:
    """Convenience: ``Manager(benchmarks=benchmarks, **kwargs).run()``."""
    return Manager(benchmarks=benchmarks, **kwargs).run()
