"""How long ``%load_ext drawb`` takes in a fresh IPython, against ``import pandas`` (budget: <= 1 s).

Run: .venv/bin/python bench/bench_load_ext.py [--runs N]
Each run is a fresh interpreter, so nothing is cached in memory between runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBE = """
import time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
t = time.perf_counter()
{body}
print(time.perf_counter() - t)
"""

BODIES = {
    "%load_ext drawb": "shell.run_line_magic('load_ext', 'drawb')",
    "import pandas": "import pandas",
    "%load_ext drawb + %dra devices": "shell.run_line_magic('load_ext', 'drawb'); shell.run_line_magic('dra', 'devices')",
}


def measure(body: str) -> float:
    """Seconds the body takes in a fresh interpreter with an IPython shell already made."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(body=body)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    print(f"| what | median of {runs} fresh interpreters (s) |\n|---|---|")
    for label, body in BODIES.items():
        times = [measure(body) for _ in range(runs)]
        print(f"| `{label}` | {statistics.median(times):.3f} |")


if __name__ == "__main__":
    main()
