"""How long ``%load_ext drawb`` takes in a fresh IPython, against ``import pandas`` (budget: <= 1 s).

Run: .venv/bin/python bench/bench_load_ext.py [--runs N]
Each run is a fresh interpreter with an IPython shell already made, so nothing is cached in memory
between runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_interpreter import print_table  # noqa: E402

SHELL = "from IPython.core.interactiveshell import InteractiveShell\nshell = InteractiveShell.instance()"
BODIES = {
    "`%load_ext drawb`": "shell.run_line_magic('load_ext', 'drawb')",
    "`import pandas`": "import pandas",
    "`%load_ext drawb + %dra devices`": "shell.run_line_magic('load_ext', 'drawb'); shell.run_line_magic('dra', 'devices')",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    print_table(BODIES, parser.parse_args().runs, setup=SHELL, digits=3)


if __name__ == "__main__":
    main()
