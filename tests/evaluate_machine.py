"""A fake big.LITTLE board for the ``evaluate`` tests (Rancid's XU3-like target).

Built on :func:`fake_machine.make_machine`, plus the files a phone or board has that the
desktop tree lacks: a Mali-like GPU and a DDR controller under ``/sys/class/devfreq``, a RAPL
package under ``/sys/class/powercap`` and a sensor that reports whole degrees. The big cluster
is CPUs 0–1 (capacity 1024) and the LITTLE one CPUs 2–3 (capacity 430), so that pinning to the
big cores works on the two-core machines the tests run on. The whole-degree sensor reads
40, below every threshold whether it is read as degrees or millidegrees, so no cool-down
waits whichever way a reader interprets it.
"""

from __future__ import annotations

from pathlib import Path

from fake_machine import make_machine, put

GPU = "sys/class/devfreq/ff9a0000.gpu"
DDR = "sys/class/devfreq/dmc"
RAPL = "sys/class/powercap/intel-rapl:0"


def make_board(root: Path) -> Path:
    """Write the fake board under ``root`` and return ``root``."""
    make_machine(root, cpus=4, governor="schedutil",
                 governors="performance schedutil powersave",
                 max_khz=[2000000, 2000000, 1400000, 1400000], min_khz=200000,
                 cur_khz=600000, capacities=[1024, 1024, 430, 430], boost=1,
                 thermal={"cpu-thermal": 45000, "gpu-thermal": 44000})
    for base, freqs, governor in ((GPU, "200000000 400000000 600000000 800000000",
                                   "simple_ondemand"),
                                  (DDR, "165000000 400000000 825000000", "dmc_ondemand")):
        put(root, f"{base}/governor", f"{governor}\n")
        put(root, f"{base}/available_governors",
            f"{governor} performance powersave userspace\n")
        put(root, f"{base}/available_frequencies", f"{freqs}\n")
        put(root, f"{base}/cur_freq", f"{freqs.split()[0]}\n")
        put(root, f"{base}/min_freq", f"{freqs.split()[0]}\n")
        put(root, f"{base}/max_freq", f"{freqs.split()[-1]}\n")
    put(root, f"{GPU}/name", "mali\n")
    put(root, f"{RAPL}/name", "package-0\n")
    put(root, f"{RAPL}/energy_uj", "123456789\n")
    put(root, f"{RAPL}/max_energy_range_uj", "262143328850\n")
    put(root, "sys/class/thermal/thermal_zone2/type", "board-thermal\n")
    put(root, "sys/class/thermal/thermal_zone2/temp", "40\n")
    return root
