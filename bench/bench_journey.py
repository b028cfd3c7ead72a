"""The seed's journey on the simulated cluster, and the CLI's check, in fresh interpreters.

Run: nice -n 5 .venv/bin/python bench/bench_journey.py [--runs 5]

- journey: in a real IPython shell with ``%load_ext drawb`` (not timed), ``%dra connect`` (the default
  scenario), ``%dra render single-gpu --apply`` and ``%dra logs cuda-check --follow``, timed from the
  connect to the ``nvidia-smi -L`` line the last one returns (the budget: at most 5 s);
- check: ``drawb check single-gpu`` as a user runs it, a whole process, from its start to its exit
  (the verdict PASS).

Both run on the wall clock, as a user's session does: the simulated image pull and the container's
start are waited for in real time. Each is the median of ``--runs`` fresh interpreters.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

JOURNEY = """
import contextlib, io, time
from IPython.testing.globalipapp import start_ipython
shell = start_ipython()
shell.run_line_magic("load_ext", "drawb")
shell.display_pub.publish = lambda *a, **k: None
with contextlib.redirect_stdout(io.StringIO()):
    start = time.perf_counter()
    shell.run_line_magic("dra", "connect")
    shell.run_line_magic("dra", "render single-gpu --apply")
    log = shell.run_line_magic("dra", "logs cuda-check --follow")
    took = time.perf_counter() - start
assert log.lines[0].startswith("GPU 0: NVIDIA "), log.lines
print(took)
"""


def journey_once() -> float:
    """Seconds from ``%dra connect`` to the cuda-check pod's ``nvidia-smi -L`` line, in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", JOURNEY], capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def check_once() -> float:
    """Seconds ``drawb check single-gpu`` takes as a process, start to exit."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "drawb.cli", "check", "single-gpu"], capture_output=True, text=True,
                         cwd=ROOT)
    took = time.perf_counter() - start
    if out.returncode != 0 or "PASS" not in out.stdout:
        raise RuntimeError(f"drawb check single-gpu did not pass:\n{out.stdout}{out.stderr}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    journeys = [journey_once() for _ in range(runs)]
    checks = [check_once() for _ in range(runs)]
    print(f"| what | median of {runs} fresh interpreters (s) | min | max |\n|---|---|---|---|")
    for label, values in (("journey: `%dra connect` -> `nvidia-smi -L` line", journeys),
                          ("`drawb check single-gpu`, process start -> exit", checks)):
        print(f"| {label} | {statistics.median(values):.2f} | {min(values):.2f} | {max(values):.2f} |")


if __name__ == "__main__":
    main()
