"""The kept simulated cluster's file at 10,000 nodes: building the cluster, writing its file, reading it back.

Run: nice -n 5 .venv/bin/python bench/bench_kept_file.py [--runs 3] [--nodes 10000]

Each step as a command runs it (inside ``drawb.collector.collection_around_command``), in a fresh process of
its own, timed on the wall clock and in CPU time (``time.process_time``: the wall time on a core of its own):
``SimCluster("synthetic:N")`` built (what ``connect`` does first), its file written (``state.write``: the
pickle, its MAC, the atomic write) and, in another fresh process, read back (``state.read``), the kept
cluster's command's first step. The imports are not counted. Median of ``--runs`` (min-max).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STEP = """
import sys, time
from drawb.collector import collection_around_command
from drawb.cluster.sim import state
from drawb.cluster.sim.cluster import SimCluster

def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    with collection_around_command():
        value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu

path = sys.argv[2]
if sys.argv[1] == "write":
    cluster, wall, cpu = timed(lambda: SimCluster("synthetic:{nodes}"))
    _, wall2, cpu2 = timed(lambda: state.write(cluster, None, path))
    print(wall, cpu, wall2, cpu2)
else:
    _, wall, cpu = timed(lambda: state.read(path))
    print(wall, cpu)
"""


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):.2f} s ({min(samples):.2f}-{max(samples):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=10_000)
    options = parser.parse_args()
    code = STEP.format(nodes=options.nodes)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows: dict[str, list[list[float]]] = {"build": [[], []], "write": [[], []], "read": [[], []]}
    size = 0
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "kept.state")
        for _ in range(options.runs):
            out = subprocess.run([sys.executable, "-c", code, "write", path], capture_output=True, text=True,
                                 check=True, cwd=ROOT, env=env).stdout.split()
            for i, step in enumerate(("build", "write")):
                rows[step][0].append(float(out[2 * i]))
                rows[step][1].append(float(out[2 * i + 1]))
            size = os.path.getsize(path)
            out = subprocess.run([sys.executable, "-c", code, "read", path], capture_output=True, text=True,
                                 check=True, cwd=ROOT, env=env).stdout.split()
            rows["read"][0].append(float(out[0]))
            rows["read"][1].append(float(out[1]))
    print(f"load average {os.getloadavg()[0]:.1f}; synthetic:{options.nodes}, file {size / 1e6:.1f} MB; "
          f"median of {options.runs} (min-max)\n")
    print("| step | wall | CPU |\n|---|---|---|")
    labels = {"build": f'`SimCluster("synthetic:{options.nodes}")`', "write": "`state.write`", "read": "`state.read`"}
    for step, (wall, cpu) in rows.items():
        print(f"| {labels[step]} | {_median(wall)} | {_median(cpu)} |")


if __name__ == "__main__":
    main()
