"""What the first ``render``/``validate`` of a process pays: importing drawb.render and validating once,
against the anchor ``import jsonschema`` (which imports every optional format library it finds,
rfc3987_syntax included, and which every import of drawb.render paid before it loaded jsonschema
without it). Each run is a fresh interpreter.

Run: .venv/bin/python bench/bench_render_import.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

PROBE = """
import time
t = time.perf_counter()
{body}
print(time.perf_counter() - t)
"""

BODIES = {
    "import drawb.render": "import drawb.render",
    "import drawb.render + render('single-gpu') (validated)": "from drawb.render import render; render('single-gpu')",
    "anchor: import jsonschema": "import jsonschema",
}


def measure(body: str) -> float:
    """Seconds ``body`` takes in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", PROBE.format(body=body)], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"| what | median of {runs} fresh interpreters (s) |\n|---|---|")
    for name, body in BODIES.items():
        print(f"| {name} | {statistics.median(measure(body) for _ in range(runs)):.2f} |")


if __name__ == "__main__":
    main()
