"""What a remote target costs, against a real sshd on 127.0.0.1 and the stand-in adb
(run: python benchmarks/remote_overhead.py; needs Debian's openssh-server).

Prints, for an 8-CPU fake tree read locally, over SSH and over the stand-in adb: one file read,
one machine_state (what `system show` collects), one tune + reset; and for `exec` the host's
time per run against the time measured on the device for the same run (the transport's cost,
which stays outside the measured interval). Loopback only: a real board or phone adds its
network or USB round trip to every file read, not to the measured times.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_machine import make_machine  # noqa: E402
from steadybench.programs.process import CommandRunner  # noqa: E402
from steadybench.system.readers import machine_state  # noqa: E402
from steadybench.system.sysfs import SysRoot  # noqa: E402
from steadybench.system.tuning import reset, tune  # noqa: E402
from steadybench.targets import close_all, open_target, remote_root  # noqa: E402
from steadybench.targets.remote_run import RemoteCommandRunner  # noqa: E402
from targets_support import FAKE_ADB, start_sshd, why_no_sshd  # noqa: E402


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def measure(label: str, root: SysRoot, state: Path) -> dict[str, float]:
    rel = "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"
    read = per_call(lambda: root.read(rel), 200)
    snap = per_call(lambda: machine_state(root, top_interval=0), 5)

    def cycle() -> None:
        tune(root, state / f"{label}.json")
        reset([state / f"{label}.json"], root=root)

    tuned = per_call(cycle, 5)
    print(f"{label:12s} read {read * 1e3:7.3f} ms   machine_state {snap * 1e3:8.1f} ms   "
          f"tune+reset {tuned * 1e3:8.1f} ms")
    return {"read": read, "state": snap, "tune": tuned}


def exec_split(label: str, runner) -> None:
    argv = runner.resolve(["sleep", "0.01"])
    host, device = [], []
    for _ in range(30):
        start = time.perf_counter_ns()
        run = runner.run(argv)
        host.append((time.perf_counter_ns() - start) / 1e6)
        device.append(run.wall_ns / 1e6)
    h, d = statistics.median(host), statistics.median(device)
    print(f"{label:12s} exec `sleep 0.01`: host time per run {h:6.2f} ms, measured "
          f"{d:6.2f} ms (transport outside the interval: {h - d:5.2f} ms, ×{h / d:.2f})")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(tmp_path / "state")
        state = tmp_path / "journals"
        state.mkdir()
        tree = make_machine(tmp_path / "m", cpus=8, thermal={"a": 45000, "b": 50000})
        local = measure("local", SysRoot(tree), state)
        exec_split("local", CommandRunner())
        os.environ["PATH"] = f"{FAKE_ADB.parent}{os.pathsep}{os.environ['PATH']}"
        adb = measure("adb (stand-in)", remote_root(f"adb?root={tree}"), state)
        exec_split("adb (stand-in)", RemoteCommandRunner(open_target("adb")))
        close_all()
        reason = why_no_sshd()
        if reason:
            print(f"ssh: skipped ({reason})")
            return
        server = start_sshd(tmp_path / "sshd")
        os.environ["STEADYBENCH_SSH_CONFIG"] = str(server.config)
        try:
            ssh = measure("ssh", remote_root(server.url(tree)), state)
            exec_split("ssh (python)", RemoteCommandRunner(open_target(server.url()),
                                                           timer="python"))
            exec_split("ssh (shell)", RemoteCommandRunner(open_target(server.url()),
                                                          timer="shell"))
        finally:
            close_all()
            server.stop()
        for name, figures in (("adb", adb), ("ssh", ssh)):
            print(f"{name} / local: read ×{figures['read'] / local['read']:.0f}, "
                  f"machine_state ×{figures['state'] / local['state']:.0f}, "
                  f"tune+reset ×{figures['tune'] / local['tune']:.1f}")


if __name__ == "__main__":
    main()
