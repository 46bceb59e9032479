"""Profiles as files other tools open: speedscope JSON (https://www.speedscope.app, its
``file-format-schema.json``: a "sampled" profile of shared frames) and collapsed stacks
(flamegraph.pl, inferno, speedscope). Written atomically."""

from __future__ import annotations

import json
from pathlib import Path

from . import collapsed
from .model import Profile

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def speedscope(profile: Profile, name: str) -> dict[str, object]:
    frames, table = profile.frame_table()
    samples = [ids for ids, _ in table]
    weights = [weight for _, weight in table]
    unit = "none"  # sample counts or instructions: speedscope has no unit for either
    total = float(sum(weights))
    return {"$schema": SCHEMA, "name": name, "exporter": "steadybench",
            "activeProfileIndex": 0,
            "shared": {"frames": [{"name": f.function, "file": f.file, "line": f.line}
                                  for f in frames]},
            "profiles": [{"type": "sampled", "name": name, "unit": unit, "startValue": 0,
                          "endValue": total, "samples": samples, "weights": weights}]}


def write_profile(profile: Profile, path: str | Path, name: str) -> Path:
    """``.json`` → speedscope; anything else → collapsed stacks. Returns the path."""
    from ..fileio import atomic_write_text

    path = Path(path)
    if path.suffix == ".json":
        text = json.dumps(speedscope(profile, name)) + "\n"
    else:
        text = collapsed.write(profile.stacks)
    atomic_write_text(str(path), text)
    return path
