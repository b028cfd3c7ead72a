"""Time a statement in fresh interpreters (nothing cached in memory between runs), for the import benches."""

from __future__ import annotations

import statistics
import subprocess
import sys

PROBE = """
import time
{setup}
t = time.perf_counter()
{body}
print(time.perf_counter() - t)
"""


def measure(body: str, setup: str = "") -> float:
    """Seconds ``body`` takes in a fresh interpreter, after ``setup`` (not timed)."""
    probe = PROBE.format(setup=setup, body=body)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def print_table(bodies: dict[str, str], runs: int, setup: str = "", digits: int = 2) -> None:
    """A Markdown table: each body's median over ``runs`` fresh interpreters."""
    print(f"| what | median of {runs} fresh interpreters (s) |\n|---|---|")
    for label, body in bodies.items():
        print(f"| {label} | {statistics.median(measure(body, setup) for _ in range(runs)):.{digits}f} |")
