"""Outputs: loggers (console, JSON, XML, CSV, Markdown), and results file I/O."""

from .results_io import load_results, results_to_json, write_results

__all__ = ["load_results", "results_to_json", "write_results"]
