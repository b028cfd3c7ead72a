"""The cluster map at 100,000 devices: ``%dra map`` and ``drawb map --out`` (SVG and PNG).

Run: nice -n 5 .venv/bin/python bench/bench_map.py [--scenario synthetic:10000x10] [--runs 5]

On the scenario's simulated cluster (its device frame read once), it times the map the command
builds (states, the per-pool summary and its SVG: what ``%dra map`` computes before the widget shows
it), the same with a selector that errors on some devices (``--selector`` through the vectorized CEL
preview), the notebook's ``%dra map`` with its widget, ``--out map.svg`` and ``--out map.png``; and,
on the 8-node cluster (``synthetic:8x10``), the detailed map with every device. Anchors, in the same
run: the warm ``session.devices()`` and ``drawb.inventory.device_frame`` on the same slices.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from magic_shell import bench_args, drawb_shell, timed  # noqa: E402

SELECTOR = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"  # errors on whole GPUs (no profile)


def main() -> None:
    args = bench_args(__doc__.splitlines()[0])

    from drawb.commands.map import cluster_map_of
    from drawb.inventory import device_frame
    from drawb.session import Session

    def median(fn, runs: int = args.runs) -> float:
        return statistics.median(timed(fn) for _ in range(runs))

    print(f"load average {os.getloadavg()[0]:.1f}; scenario {args.scenario}")
    shell = drawb_shell()
    timed(lambda: shell.run_line_magic("dra", f"connect --scenario {args.scenario}"))
    session = shell.magics_manager.registry["DRAMagics"].session
    session.devices()
    out = Path(tempfile.mkdtemp())
    built = cluster_map_of(session)
    print(f"  {len(built.states)} devices; {'summary' if built.nodes is None else 'detail'}, SVG {len(built.svg)} bytes")
    rows = [
        ("map: states, summary and SVG", median(lambda: cluster_map_of(session)), 2.0),
        ("map --selector (CEL errors on whole GPUs)", median(lambda: cluster_map_of(session, SELECTOR)), 2.0),
        ("%dra map (the widget)", median(lambda: shell.run_line_magic("dra", "map")), 2.0),
        ("map --out map.svg", median(lambda: shell.run_line_magic("dra", f"map --out {out / 'map.svg'}")), 2.0),
        ("map --out map.png (cairosvg)", median(lambda: shell.run_line_magic("dra", f"map --out {out / 'map.png'}")), 2.0),
    ]
    small = Session()
    small.connect(scenario="synthetic:8x10")
    small.devices()
    rows.append(("8 nodes: detailed map, every device (synthetic:8x10)", median(lambda: cluster_map_of(small)), 2.0))
    rows.append(("8 nodes: --out map.png", median(lambda: cluster_map_of(small).save(out / "small.png")), 2.0))
    warm = median(session.devices, 3)
    slices = session.cluster.list("ResourceSlice")
    anchor = median(lambda: device_frame(slices), 3)
    for label, value, budget in rows:
        verdict = "  (budget %d ms: %s)" % (budget * 1000, "met" if value <= budget else "MISSED")
        print(f"{label:70s} {value * 1000:8.0f} ms{verdict}")
    print(f"{'anchor: session.devices(), warm (median of 3)':70s} {warm * 1000:8.0f} ms")
    print(f"{'anchor: device_frame(slices) of the same cluster (median of 3)':70s} {anchor * 1000:8.0f} ms")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
