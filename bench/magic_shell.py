"""What the benches that time ``%dra`` commands share: their arguments, a real IPython shell with
``%load_ext drawb`` (display output discarded), and a quiet timer."""

from __future__ import annotations

import argparse
import contextlib
import io
import time


def bench_args(description: str, runs: int = 5) -> argparse.Namespace:
    """``--scenario`` (the simulated cluster, default the 100,000-device synthetic one) and ``--runs``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenario", default="synthetic:10000x10")
    parser.add_argument("--runs", type=int, default=runs)
    return parser.parse_args()


def drawb_shell():
    """A real InteractiveShell with drawb loaded; what commands display is dropped, not rendered."""
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    shell.run_line_magic("load_ext", "drawb")
    shell.display_pub.publish = lambda *a, **k: None
    return shell


def timed(fn) -> float:
    """Seconds ``fn()`` takes (what it prints, the magic's source line, is dropped)."""
    with contextlib.redirect_stdout(io.StringIO()):
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
