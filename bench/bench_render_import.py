"""What the first ``render``/``validate`` of a process pays: importing drawb.render and validating once,
against the anchor ``import jsonschema`` (which imports every optional format library it finds,
rfc3987_syntax included, and which every import of drawb.render paid before it loaded jsonschema
without it). Each run is a fresh interpreter.

Run: .venv/bin/python bench/bench_render_import.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_interpreter import print_table  # noqa: E402

BODIES = {
    "import drawb.render": "import drawb.render",
    "import drawb.render + render('single-gpu') (validated)": "from drawb.render import render; render('single-gpu')",
    "anchor: import jsonschema": "import jsonschema",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"load average {os.getloadavg()[0]:.1f}")
    print_table(BODIES, runs)


if __name__ == "__main__":
    main()
