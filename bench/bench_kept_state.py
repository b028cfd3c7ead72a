"""A command on the simulated cluster the command line keeps between commands, at 10,000 nodes.

Run: nice -n 5 .venv/bin/python bench/bench_kept_state.py [--runs 5] [--nodes 10000]

Each figure is a whole process as a user runs it (``python -m drawb.cli ...``), start to exit (on the wall
clock, and its CPU time: the wall time it takes on a core of its own), in a
state folder of its own (``XDG_STATE_HOME``), bytecode compiled beforehand as an installed package's is
(``PYTHONDONTWRITEBYTECODE`` unset). Measured in the same run, interleaved:

- anchors: ``python -c pass`` (the interpreter's start) and ``drawb --help``;
- ``drawb claims`` on the kept default scenario;
- ``drawb --scenario synthetic:N claims`` on the kept N-node cluster (the budget: at most 2 s);
- the first command on the N-node scenario (``connect``: built, then written), once.

Then, in one process, where the kept cluster's command spends its time: the imports, reading the state
file (its size), and the command itself.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

BREAKDOWN = """
import time
t0 = time.perf_counter()
from drawb.commands.registry import run_line
from drawb.session import Session
import drawb.commands.read, drawb.inventory.claims, drawb.cluster.sim.cluster
t1 = time.perf_counter()
from drawb.cluster.sim.state import KeptState, key_for
kept = KeptState(key_for("{scenario}", None, None, None))
cluster = kept.load()
t2 = time.perf_counter()
session = Session(prog="drawb", _cluster=cluster)
run_line(session, "", prog="drawb", argv=["claims"])
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, kept.path.stat().st_size)
"""


def _env(state: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "XDG_STATE_HOME": state, "PYTHONPATH": str(ROOT)}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds the process ``argv`` takes, start to exit (it must succeed): on the wall clock, and of CPU (user
    and system: what its wall time is on a core of its own, as drawb runs in one thread)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(samples: list[float]) -> str:
    return f"{statistics.median(samples):.2f} s ({min(samples):.2f}-{max(samples):.2f})"


def _row(label: str, samples: list[tuple[float, float]]) -> str:
    return f"| {label} | {_median([s[0] for s in samples])} | {_median([s[1] for s in samples])} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10_000)
    options = parser.parse_args()
    compileall.compile_dir(ROOT / "drawb", quiet=1)
    scenario = f"synthetic:{options.nodes}"
    drawb = [sys.executable, "-m", "drawb.cli"]
    with tempfile.TemporaryDirectory() as state:
        env = _env(state)
        first = timed([*drawb, "--scenario", scenario, "connect"], env)
        timed([*drawb, "connect"], env)
        rows: dict[str, list[tuple[float, float]]] = {"`python -c pass`": [], "`drawb --help`": [], "`drawb claims` (kept default)": [],
                                        f"`drawb --scenario {scenario} claims` (kept)": []}
        commands = [[sys.executable, "-c", "pass"], [*drawb, "--help"], [*drawb, "claims"],
                    [*drawb, "--scenario", scenario, "claims"]]
        for _ in range(options.runs):
            for label, argv in zip(rows, commands):
                rows[label].append(timed(argv, env))
        parts = [subprocess.run([sys.executable, "-c", BREAKDOWN.format(scenario=scenario)], capture_output=True,
                                text=True, check=True, cwd=ROOT, env=env).stdout.split() for _ in range(options.runs)]
    print(f"load average {os.getloadavg()[0]:.1f}; median of {options.runs} (min-max)\n")
    print("| process, start to exit | wall | CPU (user + system) |\n|---|---|---|")
    for label, samples in rows.items():
        print(_row(label, samples))
    print(f"| `drawb --scenario {scenario} connect`, first (built, then kept) | {first[0]:.2f} s | {first[1]:.2f} s |")
    print(f"\nIn one process (median): imports {statistics.median(float(p[0]) for p in parts):.2f} s, reading the "
          f"state file ({int(parts[0][3]) / 1e6:.1f} MB) {statistics.median(float(p[1]) for p in parts):.2f} s, "
          f"`claims` {statistics.median(float(p[2]) for p in parts):.2f} s")


if __name__ == "__main__":
    main()
