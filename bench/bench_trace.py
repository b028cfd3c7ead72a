"""The allocator's search with its trace off (what ``allocate`` pays), and the trace itself, per node.

Run: nice -n 5 .venv/bin/python bench/bench_trace.py [--scenarios 40] [--repeats 40]

Every node of the first ``--scenarios`` generated scenarios (``drawb.testing.alloc_scenarios``) at
Kubernetes 1.36 with the scenarios' gates: ``Allocator.search(node)`` (the search, the trace off) and,
where this revision has it, ``Allocator.trace(node, every=True)`` (what ``why`` asks for). Each figure is
the best of ``--repeats`` passes over all nodes, in CPU time of this process (``time.process_time``: a
loaded host inflates wall time far more), divided by the number of nodes. Run it with two revisions
first on ``sys.path`` to compare the search before and after a change.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from drawb.alloc import AllocationError, Allocator
from drawb.testing.alloc_scenarios import GATES, generate_many, nvidia_classes


def best(calls: list, call, repeats: int) -> float:
    """The best CPU seconds of one pass of ``call(allocator, node)`` over every (allocator, node)."""
    def one() -> float:
        start = time.process_time()
        for allocator, node in calls:
            try:
                call(allocator, node)
            except AllocationError:
                pass
        return time.process_time() - start

    one()
    return min(one() for _ in range(repeats))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    calls = []
    for scenario in generate_many(args.scenarios, 0):
        allocator = Allocator(scenario.claims, slices=scenario.slices, classes=[*nvidia_classes(), *scenario.classes],
                              allocated=scenario.allocated, kubernetes_version="1.36", feature_gates=GATES)
        calls += [(allocator, node) for node in scenario.nodes]
    search = best(calls, lambda a, n: a.search(n), args.repeats)
    print(f"| search, the trace off | {len(calls)} nodes | {search * 1e6 / len(calls):,.1f} us per node (CPU) |")
    if hasattr(Allocator, "trace"):
        traced = best(calls, lambda a, n: a.trace(n, every=True), args.repeats)
        print(f"| trace, every stage | {len(calls)} nodes | {traced * 1e6 / len(calls):,.1f} us per node (CPU) |")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
