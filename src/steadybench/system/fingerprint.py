"""The environment fingerprint recorded with every result, and what differences matter.

Rancid §VI compares baseline and managed runs of the same code and device; numbers measured on
another CPU, kernel, governor, turbo setting or Python build are not comparable without saying
so. :func:`fingerprint` captures those facts; :func:`fingerprint_differences` lists the ones that
differ between two results, in words, so a comparison can warn.
"""

from __future__ import annotations

import platform
import socket
from typing import Any

from .devices import read_devfreq
from .readers import python_state, read_boost, read_cpu_model, read_cpus, read_isolated, read_kernel
from .sysfs import SysRoot, format_cpulist


class PlannedRoot:
    """A root read as it will be once ``planned`` (path → new bytes) is written: the fingerprint
    of a managed run describes the machine as it measures, not as it was before tuning (boost
    off, governors set). It wraps any root (a local :class:`SysRoot` or one read through
    another transport): the planned files are answered here, everything else by the root."""

    def __init__(self, base: SysRoot, planned: dict[str, bytes]) -> None:
        self._base = base
        self.planned = {"/" + k.lstrip("/"): v for k, v in planned.items()}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)

    def read_bytes(self, rel: str) -> bytes | None:
        key = "/" + rel.lstrip("/")
        if key in self.planned:
            return self.planned[key]
        return self._base.read_bytes(rel)

    def read(self, rel: str) -> str | None:
        data = self.read_bytes(rel)
        return None if data is None else data.decode("utf-8", errors="replace").strip()

    def read_int(self, rel: str) -> int | None:
        text = self.read(rel)
        try:
            return None if text is None else int(text.split()[0])
        except (IndexError, ValueError):
            return None


def fingerprint(root: SysRoot, planned: dict[str, bytes] | None = None) -> dict[str, Any]:
    """CPU model and count, kernel, architecture, host, governors, boost, frequency limits,
    devfreq governors, isolated CPUs, ASLR and the Python build (plain JSON types).

    ``planned`` (path → bytes) are changes a preset will make before measuring: the fingerprint
    then describes the tuned machine."""
    if planned:
        root = PlannedRoot(root, planned)  # type: ignore[assignment]
    cpus = [c for c in read_cpus(root) if c["online"]]
    freq = [c for c in cpus if c.get("cpufreq")]
    kernel = read_kernel(root)
    py = python_state()
    return {
        "cpu_model": read_cpu_model(root) or platform.processor() or platform.machine(),
        "cpu_count": len(cpus),
        "machine": root.architecture(),
        "hostname": socket.gethostname() if root.is_real else None,
        "kernel": kernel["release"] or (platform.release() if root.is_real else None),
        "governors": sorted({str(c.get("governor")) for c in freq}) if freq else None,
        "max_mhz": sorted({c.get("hw_max_mhz") for c in freq if c.get("hw_max_mhz")}) or None,
        "boost": read_boost(root)["enabled"],
        "devfreq": {d["name"]: f"{d['governor']} min {d['min_mhz']:g} MHz"
                    if d.get("min_mhz") is not None else str(d["governor"])
                    for d in read_devfreq(root)} or None,
        "isolated": format_cpulist(read_isolated(root)["isolated"]),
        "aslr": kernel["aslr"],
        "python": {k: py[k] for k in ("version", "implementation", "debug_build", "dev_mode",
                                       "assertions")},
    }


#: (key path, label); differences in these are reported
_KEYS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cpu_model",), "CPU model"),
    (("cpu_count",), "online CPUs"),
    (("machine",), "architecture"),
    (("hostname",), "host"),
    (("kernel",), "kernel"),
    (("governors",), "frequency governor"),
    (("max_mhz",), "maximum frequency (MHz)"),
    (("boost",), "boost/turbo"),
    (("devfreq",), "devfreq (GPU, memory) governors"),
    (("isolated",), "isolated CPUs"),
    (("python", "version"), "Python version"),
    (("python", "implementation"), "Python implementation"),
    (("python", "debug_build"), "Python debug build"),
    (("python", "dev_mode"), "Python -X dev"),
    (("preset",), "preset"),
)


def _as_fingerprint(env: dict[str, Any]) -> dict[str, Any]:
    """Accept a fingerprint, a preset record (``{"fingerprint": ...}``), a Results ``context``
    holding one under ``machine``, or ``Results.environment`` (same key names)."""
    if not isinstance(env, dict):
        return {}
    for outer in ("machine", "system"):
        inner = env.get(outer)
        if isinstance(inner, dict) and isinstance(inner.get("fingerprint"), dict):
            out = dict(inner["fingerprint"])
            out.setdefault("preset", inner.get("preset"))
            return out
    if isinstance(env.get("fingerprint"), dict):
        out = dict(env["fingerprint"])
        out.setdefault("preset", env.get("preset"))
        return out
    return env


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)  # type: ignore[assignment]
    return data


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    return str(value)


def fingerprint_differences(env_a: dict[str, Any], env_b: dict[str, Any]) -> list[str]:
    """Human-readable differences that matter between two fingerprints.

    Keys missing on either side are not compared (older results, or a machine that does not
    expose them). Example: ``["frequency governor: powersave vs performance"]``.
    """
    a, b = _as_fingerprint(env_a), _as_fingerprint(env_b)
    out = []
    for path, label in _KEYS:
        va, vb = _get(a, path), _get(b, path)
        if va is None or vb is None or va == vb:
            continue
        out.append(f"{label}: {_show(va)} vs {_show(vb)}")
    return out
