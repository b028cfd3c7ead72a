"""The device browser at 100,000 devices: ``%dra browse``'s first page, then filters, search, sort, paging.

Run: nice -n 5 .venv/bin/python bench/bench_browse.py [--scenario synthetic:10000x10] [--runs 5]

In one real IPython shell with ``%load_ext drawb`` connected to the scenario (and its device frame
read once, as ``%dra devices`` leaves it), it times ``%dra browse`` (the widget built and its first
page in the grid: kernel-side time), then the widget's programmatic twins, each the same work a click
or a keystroke starts: a facet filter (MIG profile, one node, a product and a state), a search,
a sort, a page flip, and a live redraw after a claim changes. Anchors, in the same run: the warm
``session.devices()`` (what every read command starts from) and ``drawb.inventory.device_frame`` on
the same slices (the frame the browser is cut from).
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from magic_shell import bench_args, drawb_shell, timed  # noqa: E402


def main() -> None:
    args = bench_args(__doc__.splitlines()[0])

    shell = drawb_shell()
    print(f"load average {os.getloadavg()[0]:.1f}; scenario {args.scenario}")
    timed(lambda: shell.run_line_magic("dra", f"connect --scenario {args.scenario}"))
    session = shell.magics_manager.registry["DRAMagics"].session
    session.devices()

    def median(fn, runs: int = args.runs) -> float:
        return statistics.median(timed(fn) for _ in range(runs))

    rows = []
    browsers = []
    first = timed(lambda: browsers.append(shell.run_line_magic("dra", "browse")))
    browser = browsers[0]
    rows.append(("%dra browse: widget and first page (first)", first, 1.0))
    rows.append(("%dra browse: widget and first page (median)", median(
        lambda: shell.run_line_magic("dra", "browse --no-live").close()), 1.0))
    print(f"  {browser.total} devices, page of {len(browser.rows)} rows")

    def toggle(**facets):
        def run():
            browser.filter(**facets)
            browser.filter(**{f: None for f in facets})
        return run

    rows.append(("filter profile=1g.10gb and back (two redraws, per redraw)",
                 median(toggle(profile="1g.10gb")) / 2, 0.2))
    nodes = browser.table.facet_values("node")
    node = nodes[len(nodes) // 2][0]
    rows.append((f"filter node={node} and back (per redraw)", median(toggle(node=node)) / 2, 0.2))
    rows.append(("filter product=NVIDIA H200, state=free and back (per redraw)",
                 median(toggle(product="NVIDIA H200", state="free")) / 2, 0.2))
    rows.append(("search 'node-0421' and back (per redraw)",
                 median(lambda: (browser.search("node-0421"), browser.search(""))) / 2, 0.2))
    rows.append(("sort by memory, descending, and back (per redraw)",
                 median(lambda: (browser.sort("memory", descending=True), browser.sort(""))) / 2, 0.2))
    rows.append(("next page and back (per redraw)",
                 median(lambda: (browser.next_page(), browser.previous_page())) / 2, 0.2))
    rows.append(("live redraw after a change (flush: table rebuilt from the live inventory)",
                 median(lambda: (browser.set_trait("stale", True), browser.flush()), 3), None))
    browser.close()

    from drawb.inventory import device_frame

    warm = median(session.devices, 3)
    slices = session.cluster.list("ResourceSlice")
    anchor = median(lambda: device_frame(slices), 3)
    for label, value, budget in rows:
        verdict = "" if budget is None else ("  (budget %d ms: %s)" % (budget * 1000, "met" if value <= budget else "MISSED"))
        print(f"{label:78s} {value * 1000:8.0f} ms{verdict}")
    print(f"{'anchor: session.devices(), warm (median of 3)':78s} {warm * 1000:8.0f} ms")
    print(f"{'anchor: device_frame(slices) of the same cluster (median of 3)':78s} {anchor * 1000:8.0f} ms")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
