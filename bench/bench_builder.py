"""The claim builder's preview at scale: from setting a condition to the preview updated, kernel-side.

Run: nice -n 5 .venv/bin/python bench/bench_builder.py [--scenario synthetic:10000x10] [--runs 7]

Connects to the simulated cluster, opens a ``ClaimBuilder`` (``%dra build``'s widget) and times
``set_condition`` (the programmatic twin of typing a value and pausing; the debounce delay itself is
not counted) until the widget shows the new CEL, match count, tables, validation, predicted
allocation and YAML, for several condition kinds. The anchor, measured in the same run: ``drawb.cel.preview``
of the same selector alone on the same device frame (the least a preview has to do); beside it, the model's
part of the update (``drawb.build.outcome.evaluate``: CEL preview, validation, predicted allocation, YAML).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

# (kind, the value set while timing, the value set between runs) - alternating so every run changes something
CHANGES = [
    ("product", "NVIDIA H100 80GB HBM3", "NVIDIA H200"),
    ("memory", "80Gi", "40Gi"),
    ("driver_version", "575.0.0", "560.0.0"),
    ("compute_capability", "9.0.0", "8.0.0"),
]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="synthetic:10000x10")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    from drawb.build.outcome import evaluate
    from drawb.cel import preview
    from drawb.notebook.claimbuilder import ClaimBuilder
    from drawb.session import Session

    session = Session()
    start = time.perf_counter()
    session.connect(scenario=args.scenario)
    frame = session.devices()
    print(f"load average {os.getloadavg()[0]:.1f}; scenario {args.scenario}: {len(frame)} devices, "
          f"connected in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    builder = ClaimBuilder(session, debounce=0)
    print(f"ClaimBuilder opened in {time.perf_counter() - start:.2f} s")
    classes = session.cluster.list("DeviceClass")
    print(f"{'condition':<20} {'builder update (median ms)':>27} {'of it, evaluate() (ms)':>23} "
          f"{'anchor: cel preview (median ms)':>32} {'matches':>8} node")
    for kind, value, other in CHANGES:
        builder.spec.requests[0].choices[0].conditions = []
        builder.add_condition(kind, other)
        times, anchors, models = [], [], []
        for _ in range(args.runs):
            builder.set_condition(0, other)
            t = time.perf_counter()
            builder.set_condition(0, value)
            times.append(time.perf_counter() - t)
            selector = builder.outcome.choices[0].selector
            t = time.perf_counter()
            preview(frame, selector, device_classes=classes, class_name=builder.spec.requests[0].choices[0].device_class)
            anchors.append(time.perf_counter() - t)
            t = time.perf_counter()
            evaluate(builder.spec, frame=frame, classes=classes, state=builder._state, namespace="default",
                     kubernetes_version=session.cluster.server_version(), cluster=session.cluster)
            models.append(time.perf_counter() - t)
        print(f"{kind:<20} {median_ms(times):>27.1f} {median_ms(models):>23.1f} {median_ms(anchors):>32.1f} {builder.match_count:>8} "
              f"{builder.predicted_node}")


if __name__ == "__main__":
    main()
