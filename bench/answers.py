"""The answers of ``why``, ``preview`` and ``capacity`` as JSON, to compare two revisions of drawb.

A change to the scheduler's view (``drawb.alloc``, ``drawb.plan``, ``drawb.explain``) must not change
what these commands say. This script records their ``--json`` answers, run through the command runner
as the CLI runs them, on:

- the generated scenarios (``drawb.testing.alloc_scenarios.generate``) of every supported version,
  each with a pod holding the scenario's claims (the simulated scheduler places it, or it stays
  pending), a template made of its first claim and a pod of that template, on a simulated cluster at
  that version: ``why`` on both pods and on the last claim, ``preview`` and ``capacity`` of the
  template and of a pod of it given as a file (as if applied);
- the synthetic bench cluster of ``bench/bench_why.py`` (half of its devices allocated, the pending
  trainer pod) through a series of changes: after each, one more running pod is deleted.

Run it once per revision, with that revision's checkout first on ``sys.path``, then compare:

    PYTHONPATH=OLD python bench/answers.py --out old.json
    PYTHONPATH=NEW python bench/answers.py --out new.json
    python bench/answers.py --compare old.json new.json

Timings differ between runs and are not recorded; every other field is.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path

from drawb import versions
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from drawb.cluster.sim.scenarios.scenario import Scenario
from drawb.commands.registry import run_line
from drawb.errors import DrawbError
from drawb.session import Session
from drawb.testing.alloc_scenarios import GATES, generate, nvidia_classes

NS = "answers"


def answer(session: Session, line: str) -> object:
    """One command's JSON answer, or its error as {"error": kind, "message": text}."""
    try:
        return json.loads(str(run_line(session, f"{line} --json", prog="drawb")))
    except DrawbError as err:
        return {"error": type(err).__name__, "message": str(err)}


def _gates(version: str) -> dict[str, bool]:
    known = versions.rules(version).gates
    return {g: v for g, v in GATES.items() if g in known and not known[g].locked}


def generated_cluster(seed: int, version: str) -> SimCluster:
    """The generated scenario of ``seed`` at ``version``, with the pending pod ``p`` and template ``t``."""
    gen = generate(seed, prefix="an", kubernetes_version=version)
    claims = []
    for claim in copy.deepcopy([*gen.allocated, *gen.claims]):
        claim["metadata"]["namespace"] = NS
        claims.append(claim)
    wanted = claims[len(gen.allocated):]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
           "spec": {"containers": [{"name": "main", "image": "x"}],
                    "resourceClaims": [{"name": f"c{i}", "resourceClaimName": c["metadata"]["name"]}
                                       for i, c in enumerate(wanted)]}}
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}, *claims, pod]
    if wanted:
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                        "metadata": {"name": "t", "namespace": NS}, "spec": {"spec": wanted[0]["spec"]}})
        objects.append(_template_pod("q"))
    scenario = Scenario(name=gen.name, description="generated", gpu_nodes=[], nodes=gen.nodes,
                        resource_slices=gen.slices, device_classes=[*nvidia_classes(), *gen.classes],
                        feature_gates=_gates(version), server_version=version, objects=objects)
    return SimCluster(scenario, workloads=False, clock=ManualClock())


def _template_pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"containers": [{"name": "main", "image": "x"}],
                     "resourceClaims": [{"name": "c", "resourceClaimTemplateName": "t"}]}}


def template_pod(directory: Path) -> Path:
    """A pod of template ``t`` not in the cluster, as a manifest file."""
    path = directory / "r.yaml"
    path.write_text(json.dumps(_template_pod("r")))
    return path


def generated_answers(seeds: int, directory: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    pod_file = template_pod(directory)
    for version in versions.known():
        for seed in range(seeds):
            sim = generated_cluster(seed, version)
            session = Session(namespace=NS)
            session._cluster = sim
            claims = [c["metadata"]["name"] for c in sim.list("ResourceClaim", NS)]
            lines = [f"why p -n {NS}", f"preview pod/p -n {NS}"]
            if claims:
                lines += [f"why claim/{claims[-1]} -n {NS}", f"preview template/t -n {NS}", f"capacity template/t -n {NS}",
                          f"why q -n {NS}", f"preview -f {pod_file}", f"capacity -f {pod_file}"]
            for line in lines:
                out[f"{version} seed {seed}: {line.replace(str(pod_file), 'r.yaml')}"] = answer(session, line)
    return out


def bench_answers(nodes: int, changes: int) -> dict[str, object]:
    from bench.bench_why import COMMANDS, NS as BENCH_NS, cluster

    sim = cluster(nodes)
    session = Session(namespace=BENCH_NS)
    session._cluster = sim
    running = sorted(p["metadata"]["name"] for p in sim.list("Pod", BENCH_NS) if p["metadata"]["name"].startswith("job-"))
    out: dict[str, object] = {}
    for step in range(changes + 1):
        if step:
            sim.delete("Pod", running.pop(), BENCH_NS, force_unmanaged=True)
            sim.list("Namespace")  # the controllers release the claim
        for line in COMMANDS.values():
            out[f"bench {nodes} nodes, change {step}: {line}"] = answer(session, line)
    return out


def _without_timings(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if not k.endswith(("_ms", "_s", "seconds"))}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def compare(old_path: Path, new_path: Path) -> int:
    old, new = json.loads(old_path.read_text()), json.loads(new_path.read_text())
    differ = [k for k in old.keys() | new.keys() if old.get(k) != new.get(k)]
    for key in sorted(differ)[:20]:
        print(f"differs: {key}\n  old: {json.dumps(old.get(key))[:400]}\n  new: {json.dumps(new.get(key))[:400]}")
    print(f"{len(old)} answers before, {len(new)} after, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seeds", type=int, default=25, help="generated scenarios per version")
    parser.add_argument("--nodes", type=int, default=10000, help="nodes of the bench cluster")
    parser.add_argument("--changes", type=int, default=3, help="running pods deleted one after the other")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    with tempfile.TemporaryDirectory() as directory:
        answers = {**generated_answers(args.seeds, Path(directory)), **bench_answers(args.nodes, args.changes)}
    args.out.write_text(json.dumps(_without_timings(answers), indent=1, sort_keys=True))
    print(f"{len(answers)} answers written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
