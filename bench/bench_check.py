"""Check benchmark: check start -> first log line on the local control plane, against ``kubectl logs -f``.

Run: .venv/bin/python bench/bench_check.py [--runs 5] [--kubeconfig K]

Without ``--kubeconfig`` it starts a local control plane (scenario ``default``: the real API server,
scheduler and controller manager, kwok and the fake driver) and stops it at the end. In the same
run, alternately:

- drawb: ``drawb.check.check(cluster, template="single-gpu")``, from the call (render, validate,
  dry run, apply) to the first log line its progress reports, and to its verdict;
- anchor: the same two objects (renamed) written with ``kubectl apply -f -``, then
  ``kubectl logs -f`` retried until it prints the first line, timed from the apply.

Both wait for the same things: the resourceclaim controller creates the claim, the scheduler
allocates it and binds the pod, kwok starts it, the fake driver writes the log. A warm-up check
first loads drawb.render (jsonschema and its format grammars take seconds to import once).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from drawb.check import build_objects, check
from drawb.cluster.kube import KubeCluster


def drawb_once(cluster: KubeCluster, namespace: str) -> dict[str, float]:
    """One check: seconds to its first log line and to its verdict."""
    first: list[float] = []
    started = time.monotonic()

    def progress(line: str) -> None:
        if line.startswith("  | ") and not first:
            first.append(time.monotonic() - started)

    verdict = check(cluster, namespace=namespace, template="single-gpu", progress=progress, timeout=60)
    if verdict.status != "PASS" or not first:
        raise RuntimeError(f"check did not pass: {verdict}")
    return {"first_line_s": first[0], "verdict_s": time.monotonic() - started}


def kubectl_once(kubectl: list[str], cluster: KubeCluster, namespace: str) -> float:
    """Seconds from ``kubectl apply`` of the same objects to the first line of ``kubectl logs -f``."""
    objects = build_objects(cluster, namespace=namespace, template="single-gpu")
    docs = [copy.deepcopy(d) for d in objects.documents]
    for doc in docs:
        doc["metadata"]["labels"]["drawb/check-run"] = f"anchor-{objects.run_id}"
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    started = time.monotonic()
    subprocess.run([*kubectl, "apply", "-f", "-"], input=manifest, text=True, check=True, capture_output=True)
    try:
        while True:
            proc = subprocess.Popen([*kubectl, "logs", "-f", "-n", namespace, objects.pod_name], text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            line = proc.stdout.readline()
            proc.kill()
            proc.wait()
            if line:
                return time.monotonic() - started
            if time.monotonic() - started > 60:
                raise RuntimeError("kubectl logs -f printed nothing in 60 s")
            time.sleep(0.05)
    finally:
        for doc in reversed(docs):
            subprocess.run([*kubectl, "delete", "--wait=false", "-n", namespace, doc["kind"].lower(),
                            doc["metadata"]["name"]], capture_output=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kubeconfig", help="an existing local control plane (default: start one)")
    args = parser.parse_args()

    local = None
    kubeconfig = args.kubeconfig
    if kubeconfig is None:
        from drawb.testing.cluster import LocalCluster

        local = LocalCluster(name=f"bench-check-{os.getpid()}")
        local.up(scenario="default")
        kubeconfig = str(local.kubeconfig)
    try:
        bin_dir = Path(os.path.realpath(Path(kubeconfig).parent / "bin" / "kubectl")).parent if local is None else local.bin_dir
        kubectl = [str(bin_dir / "kubectl") if (bin_dir / "kubectl").exists() else "kubectl", "--kubeconfig", kubeconfig]
        cluster = KubeCluster(kubeconfig=kubeconfig)
        namespace = f"bench-check-{uuid.uuid4().hex[:6]}"
        subprocess.run([*kubectl, "create", "namespace", namespace], check=True, capture_output=True)
        time.sleep(1)  # the namespace's default ServiceAccount
        drawb_once(cluster, namespace)  # warm-up: imports, connections
        ours, anchor = [], []
        for _ in range(args.runs):
            ours.append(drawb_once(cluster, namespace))
            anchor.append(kubectl_once(kubectl, cluster, namespace))
        first = statistics.median(r["first_line_s"] for r in ours)
        verdict = statistics.median(r["verdict_s"] for r in ours)
        kube = statistics.median(anchor)
        print(f"runs: {args.runs}, load average {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}")
        firsts = ", ".join(f"{r['first_line_s']:.2f}" for r in ours)
        print(f"drawb check: start -> first log line  median {first:.2f} s  (all: {firsts})")
        print(f"drawb check: start -> verdict, cleaned up median {verdict:.2f} s")
        anchors = ", ".join(f"{a:.2f}" for a in anchor)
        print(f"kubectl apply -> kubectl logs -f line median {kube:.2f} s  (all: {anchors})")
        print(f"ratio drawb/kubectl: {first / kube:.2f}; budget 3 s: {'met' if first <= 3 else 'MISSED'}")
        subprocess.run([*kubectl, "delete", "namespace", namespace, "--wait=false"], capture_output=True, check=False)
        cluster.close()
    finally:
        if local is not None:
            local.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
