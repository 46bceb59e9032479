"""Issue 27 item 15 (presets): values that were accepted silently are refused in one line
before anything is built or changed: ``nan``, ``inf``, ``poll = 0``, ``fraction = 0`` or ``2``,
``max_wait = inf``, ``mhz = -1``, ``governor = ""``."""

from __future__ import annotations

import pytest

from fake_machine import make_machine
from steadybench.errors import ConfigurationError
from steadybench.system.presets import build_preset


@pytest.mark.parametrize("measure, line", [
    ("cooldown", "poll = 0"), ("cooldown", "poll = nan"), ("cooldown", "max_wait = inf"),
    ("cooldown", "max_wait = -1.0"), ("cooldown", "upper = nan"), ("cooldown", "upper = inf"),
    ("warmup", "fraction = 0"), ("warmup", "fraction = 2"), ("warmup", "fraction = nan"),
    ("warmup", "max_wait = inf"), ("warmup", "spin = -inf"), ("quiet", "interval = 0"),
    ("quiet", "max_wait = nan"), ("settle", "max_wait = inf"), ("gpu", "mhz = -1"),
    ("gpu", "mhz = 0"), ("tune", 'governor = ""'), ("tune", 'governor = "  "'),
    ("pin", "fallback_spin = nan"), ("pin", "fallback_spin = inf"),
])
def test_bad_preset_values_are_refused(tmp_path, measure, line):
    root = make_machine(tmp_path / "m")
    preset = tmp_path / "p.toml"
    preset.write_text(f'countermeasures = ["{measure}"]\n[{measure}]\n{line}\n')
    with pytest.raises(ConfigurationError, match=rf"\[{measure}\]"):
        build_preset(str(preset), root)


def test_good_values_still_build(tmp_path):
    root = make_machine(tmp_path / "m")
    preset = tmp_path / "p.toml"
    preset.write_text('countermeasures = ["warmup", "quiet"]\n[warmup]\nfraction = 0.9\n'
                      "max_wait = 1.5\n[quiet]\ninterval = 0.25\nmax_wait = 3\n")
    build_preset(str(preset), root)
