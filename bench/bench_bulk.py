"""Bulk input benchmark: ``drawb validate`` and ``drawb apply --dry-run`` of one 10,000-document file on the
simulated cluster, against the real API server's server-side dry run of the same file.

Run: .venv/bin/python bench/bench_bulk.py [--runs 3] [--documents 10000] [--kubeconfig K]

The file is what a generator of per-user or per-job claims writes: ResourceClaims in ``default`` (nine in
ten) and ResourceClaimTemplates, each named apart, asking for 1 to 4 devices of ``gpu.nvidia.com``, with
none or one of five CEL selectors. Each is timed end to end as a user runs it, in a fresh process (the
``drawb`` command of this interpreter's environment, its imports included), alternately:

- ``drawb validate FILE`` (the simulated cluster, the default target): budget 5 s;
- ``drawb apply --dry-run FILE`` on the simulated cluster: budget 10 s;
- anchor: ``kubectl apply --dry-run=server -f FILE`` against a local control plane (the real
  kube-apiserver of ``DRAWB_K8S_VERSION``, default 1.34; started here unless ``--kubeconfig`` names one).

The simulated cluster is kept in a state file between commands (as a user's is); it lives in a folder of
this run. Wall time and CPU time (user + system of the process) are both reported: on a shared machine the wall
time swings with the load, the CPU time much less. ``--profile`` prints where validate's time goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

SELECTORS = [
    None,
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
    "device.attributes['gpu.nvidia.com'].type == 'gpu'",
    "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))",
    "'gpu.nvidia.com' in device.attributes && device.attributes['gpu.nvidia.com'].index < 4",
]


def documents(count: int) -> list[dict]:
    """``count`` claims and claim templates, as a generator of per-job claims writes them."""
    out = []
    for i in range(count):
        request = {"deviceClassName": "gpu.nvidia.com", "count": 1 + i % 4}
        selector = SELECTORS[i % len(SELECTORS)]
        if selector:
            request["selectors"] = [{"cel": {"expression": selector}}]
        spec = {"devices": {"requests": [{"name": "gpus", "exactly": request}]}}
        template = i % 10 == 9
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate" if template else "ResourceClaim",
                    "metadata": {"name": f"bulk-{i:05d}", "namespace": "default",
                                 "labels": {"team": f"team-{i % 7}", "job": f"job-{i // 8}"}},
                    "spec": {"spec": spec} if template else spec})
    return out


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``command`` (which must succeed), and its status line (else its last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = (proc.stdout + proc.stderr).strip().splitlines() or [""]
    return wall, cpu, next((line for line in lines if line.startswith(("valid:", "invalid:", "dry run:"))), lines[-1])


def summary(name: str, runs: list[tuple[float, float, str]], budget: float | None) -> str:
    wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    walls = ", ".join(f"{r[0]:.2f}" for r in runs)
    verdict = "" if budget is None else f"; budget {budget:.0f} s: {'met' if wall <= budget else 'MISSED'} (wall)"
    return f"{name}: median {wall:.2f} s wall (all: {walls}), {cpu:.2f} s CPU{verdict}"


def profile(path: Path) -> None:
    """Where ``drawb validate``'s time goes, in this process (cumulative, top 25)."""
    import cProfile
    import pstats

    from drawb.cli import main as drawb_main

    profiler = cProfile.Profile()
    profiler.runcall(drawb_main, ["--progress-bar", "never", "validate", str(path)])
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--kubeconfig", help="an existing local control plane (default: start one)")
    parser.add_argument("--no-anchor", action="store_true", help="skip the real API server (drawb's figures only)")
    parser.add_argument("--profile", action="store_true", help="profile one validate and stop")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-bulk-"))
    path = workdir / "bulk.yaml"
    path.write_text(yaml.safe_dump_all(documents(args.documents), sort_keys=False))
    size = path.stat().st_size
    if args.profile:
        profile(path)
        return 0
    drawb = str(Path(sys.executable).parent / "drawb")
    # this checkout's drawb, with a simulated cluster of its own (state files are per drawb build)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "XDG_STATE_HOME": str(workdir / "state")}
    local, kubectl = None, None
    if not args.no_anchor:
        kubeconfig = args.kubeconfig
        if kubeconfig is None:
            from drawb.testing.cluster import LocalCluster

            local = LocalCluster(name=f"bench-bulk-{os.getpid()}")
            local.up(scenario="default")
            kubeconfig = str(local.kubeconfig)
            bin_dir = local.bin_dir
        else:
            bin_dir = Path(os.path.realpath(Path(kubeconfig).parent / "bin" / "kubectl")).parent
        kubectl = [str(bin_dir / "kubectl") if (bin_dir / "kubectl").exists() else "kubectl", "--kubeconfig", kubeconfig]
    try:
        validate = [drawb, "--progress-bar", "never", "validate", str(path)]
        dry_run = [drawb, "--progress-bar", "never", "apply", "--dry-run", str(path)]
        anchor_command = kubectl and [*kubectl, "apply", "--dry-run=server", "-f", str(path)]
        ours_validate, ours_apply, anchor = [], [], []
        for _ in range(args.runs):
            ours_validate.append(timed(validate, env))
            ours_apply.append(timed(dry_run, env))
            if anchor_command:
                anchor.append(timed(anchor_command))
        print(f"file: {args.documents:,} documents, {size / 1e6:.1f} MB; runs: {args.runs}; "
              f"load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}")
        print(f"  validate said: {ours_validate[-1][2]}")
        print(f"  apply --dry-run said: {ours_apply[-1][2]}")
        print(summary("drawb validate FILE (simulated cluster)", ours_validate, 5))
        print(summary("drawb apply --dry-run FILE (simulated cluster)", ours_apply, 10))
        if anchor:
            print(f"  kubectl said: {anchor[-1][2]}")
            print(summary("anchor: kubectl apply --dry-run=server -f FILE (real API server)", anchor, None))
    finally:
        if local is not None:
            local.down()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
