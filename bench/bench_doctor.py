"""How long ``drawb doctor`` takes on the local control plane, against reading the same objects.

Run: .venv/bin/python bench/bench_doctor.py [--runs N] [--gates Name=true,...] [--kubeconfig PATH]
Starts a local control plane with the fake driver's default scenario (stopped at the end; or
uses the cluster of --kubeconfig, e.g. one from `scripts/cluster up --scenario default`), then
alternates, in one process: ``diagnose`` (every check and the eight gate probes), and the anchor,
listing the six kinds the doctor reads with the same client (what the checks cannot do without).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from drawb.cluster.kube import KubeCluster
from drawb.doctor import diagnose
from drawb.testing.cluster import LocalCluster, parse_feature_gates

KINDS = ("Node", "ResourceSlice", "DeviceClass", "ResourceClaim", "Pod", "PriorityClass")


def measure(kube: KubeCluster, runs: int) -> tuple[list[float], list[float]]:
    """Seconds of ``diagnose`` and of the anchor, alternated ``runs`` times after one warm-up."""
    diagnose(kube)
    doctor, anchor = [], []
    for _ in range(runs):
        doctor.append(diagnose(kube).seconds)
        started = time.monotonic()
        for kind in KINDS:
            kube.list(kind)
        anchor.append(time.monotonic() - started)
    return doctor, anchor


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--gates", default="", help="feature gates of the cluster, e.g. DRAExtendedResource=true")
    parser.add_argument("--kubeconfig", help="an existing cluster instead of a fresh one")
    args = parser.parse_args()
    if args.kubeconfig:
        doctor, anchor = measure(KubeCluster(kubeconfig=args.kubeconfig), args.runs)
    else:
        with tempfile.TemporaryDirectory() as work:
            cluster = LocalCluster(name=f"bench-doctor-{os.getpid()}", workdir=Path(work),
                                   feature_gates=parse_feature_gates(args.gates))
            try:
                cluster.up(scenario="default")
                doctor, anchor = measure(KubeCluster(kubeconfig=str(cluster.kubeconfig)), args.runs)
            finally:
                cluster.down()
    load = os.getloadavg()[0]
    gates = "those of the --kubeconfig cluster" if args.kubeconfig else args.gates or "1.34 defaults"
    print(f"gates: {gates}; load average {load:.1f}; median of {args.runs}")
    print("| what | median (ms) | min (ms) |\n|---|---|---|")
    for label, times in (("list the 6 kinds the doctor reads (anchor)", anchor), ("`diagnose` (drawb doctor)", doctor)):
        print(f"| {label} | {statistics.median(times) * 1000:.0f} | {min(times) * 1000:.0f} |")
    print(f"doctor / anchor: {statistics.median(doctor) / statistics.median(anchor):.1f}x")


if __name__ == "__main__":
    main()
