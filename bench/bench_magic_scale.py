"""The simulated cluster at scale, through the magic: what a notebook user waits for at 100,000 devices.

Run: .venv/bin/python bench/bench_magic_scale.py [--scenario synthetic:10000x10] [--runs 5]

In one real IPython shell with ``%load_ext drawb``, it times ``%dra connect --scenario ...``, the
first ``%dra devices`` and the following ones, ``%dra slices``, ``%dra attrs``, and ``%%dra select``
(the first and then warm) for every selector shape of ``bench_select.py``, and reports the peak RSS
of the process. The anchor, measured in the same run: ``drawb.inventory.device_frame`` on the same
ResourceSlices (the frame every read view is cut from: the work a command cannot avoid).
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_select import SHAPES  # noqa: E402
from magic_shell import bench_args, drawb_shell, timed  # noqa: E402


def main() -> None:
    args = bench_args(__doc__.splitlines()[0])

    shell = drawb_shell()

    def line(text: str) -> float:
        return timed(lambda: shell.run_line_magic("dra", text))

    def cell(head: str, body: str) -> float:
        return timed(lambda: shell.run_cell_magic("dra", head, body))

    print(f"load average {os.getloadavg()[0]:.1f}; scenario {args.scenario}")
    rows = [("%dra connect", line(f"connect --scenario {args.scenario}"))]
    rows.append(("%dra devices (first)", line("devices")))
    rows.append(("%dra devices (warm, median)", statistics.median(line("devices") for _ in range(args.runs))))
    rows.append(("%dra slices (median)", statistics.median(line("slices") for _ in range(args.runs))))
    rows.append(("%dra attrs (median)", statistics.median(line("attrs") for _ in range(args.runs))))
    for label, (expression, classes) in SHAPES.items():
        if classes:
            continue  # class selectors come from a DeviceClass; the magic's select takes one expression
        first = cell("select", expression)
        warm = statistics.median(cell("select", expression) for _ in range(args.runs))
        rows.append((f"%%dra select {label} (first / warm)", (first, warm)))

    from drawb.inventory import device_frame

    slices = shell.user_ns.get("_drawb_slices") or _session_slices(shell)
    anchor = statistics.median(timed(lambda: device_frame(slices)) for _ in range(3))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    for label, value in rows:
        text = f"{value[0] * 1000:8.0f} ms / {value[1] * 1000:6.0f} ms" if isinstance(value, tuple) else f"{value * 1000:8.0f} ms"
        print(f"{label:70s} {text}")
    print(f"{'anchor: device_frame(slices) of the same cluster (median of 3)':70s} {anchor * 1000:8.0f} ms")
    print(f"peak RSS {rss_mb:.0f} MB; load average {os.getloadavg()[0]:.1f}")


def _session_slices(shell) -> list[dict]:
    magics = shell.magics_manager.registry["DRAMagics"]
    return magics.session.cluster.list("ResourceSlice")


if __name__ == "__main__":
    main()
