"""Measurement methods: how one sample is taken and how samples become an estimate."""

from .base import DirectMethod, Method, estimate_from_stats

__all__ = ["DirectMethod", "Method", "estimate_from_stats"]
