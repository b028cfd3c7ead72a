"""The simulated scheduler decides through the grouped path (``drawb.alloc.verdicts`` over a ``PlanState``)
exactly as it decided when it asked one ``drawb.alloc.Allocator`` node by node: the same node, the same
allocations, the same FailedScheduling message, the same claim deallocated, the same error.

The oracle below is that node-by-node decision, kept here only to compare with. Scenarios come from
``drawb.testing.alloc_scenarios.generate`` for every supported version, their nodes cloned (so alike
nodes exist), with node taints, unschedulable nodes, pod node selectors, claims already allocated to
another node, pods without claims and claims naming a missing class drawn at random.
"""

from __future__ import annotations

import copy
import random

import pytest

from drawb import versions
from drawb.alloc import AllocationError, Allocator
from drawb.alloc.view import PlanState
from drawb.api.nodeaffinity import node_filter, selector_matches
from drawb.cluster.sim.scheduler import Decision, _pre_filter, fit_error, reserved_for_pod, schedule
from drawb.testing.alloc_scenarios import GATES, generate, nvidia_classes


def _oracle(pod: dict, claims: list[dict], nodes: list[dict], cluster: dict) -> Decision:
    """The decision as the simulated scheduler made it before: one Allocator asked node by node."""
    class_names = {c["metadata"]["name"] for c in cluster["classes"]}
    reason = _pre_filter(pod, claims, class_names.__contains__)
    if reason:
        return Decision(message=fit_error(len(nodes), None, reason, ["no new claims to deallocate"]))
    to_allocate = [c for c in claims if not (c.get("status") or {}).get("allocation")]
    allocated = [c for c in claims if (c.get("status") or {}).get("allocation")]
    reasons: dict[str, int] = {}
    unavailable: list[dict] = []
    allocator = None
    for node in nodes:
        reason = node_filter(pod, node)
        if reason is None and claims:
            missing = [c for c in allocated if not selector_matches(c["status"]["allocation"].get("nodeSelector"), node)]
            if missing:
                unavailable.extend(c for c in missing if c not in unavailable)
                reason = "resourceclaim not available on the node"
            elif to_allocate:
                try:
                    if allocator is None:
                        allocator = Allocator(to_allocate, slices=cluster["slices"], classes=cluster["classes"],
                                              allocated=[c for c in cluster["claims"] if _results(c)],
                                              **cluster["version"])  # fmt: skip
                    results = allocator.allocate(node)
                except AllocationError as err:
                    return Decision(message=f'running "DynamicResources" filter plugin: {err}', error=True)
                if results is None:
                    reason = "cannot allocate all claims"
                else:
                    return Decision(node=node["metadata"]["name"],
                                    allocations={c["metadata"]["name"]: r for c, r in zip(to_allocate, results)})
        if reason is None:
            return Decision(node=node["metadata"]["name"])
        reasons[reason] = reasons.get(reason, 0) + 1
    post = "still not schedulable" if claims else "no new claims to deallocate"
    for claim in unavailable:
        reserved = (claim.get("status") or {}).get("reservedFor") or []
        if not reserved or len(reserved) == 1 and reserved_for_pod(claim, pod):
            return Decision(deallocate=claim["metadata"]["name"],
                            message=fit_error(len(nodes), reasons, None, ["deallocation of ResourceClaim completed"]))
    return Decision(message=fit_error(len(nodes), reasons, None, [post]))


def _results(claim: dict) -> list[dict]:
    return (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []


def _gates(version: str) -> dict[str, bool]:
    """The generator's gates where the version has them unlocked (the others keep their defaults)."""
    known = versions.rules(version).gates
    return {g: v for g, v in GATES.items() if g in known and not known[g].locked}


def _cluster(seed: int, version: str) -> tuple[dict, list[dict], dict]:
    """A generated scenario's nodes three more times under new names, some holding its allocated claims,
    with random taints and unschedulable nodes; the pod's claims; the pod."""
    scenario = generate(seed, prefix="sg", kubernetes_version=version)
    rng = random.Random(seed * 7 + len(version))
    nodes, slices, held = [copy.deepcopy(n) for n in scenario.nodes], list(scenario.slices), list(scenario.allocated)
    for i in range(3):
        renames = {n["metadata"]["name"]: f"{n['metadata']['name']}-k{i}" for n in scenario.nodes}
        for node in scenario.nodes:
            twin = copy.deepcopy(node)
            twin["metadata"]["name"] = renames[node["metadata"]["name"]]
            twin["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = twin["metadata"]["name"]
            nodes.append(twin)
        pools = {}
        for rs in scenario.slices:
            twin = copy.deepcopy(rs)
            spec = twin["spec"]
            twin["metadata"]["name"] += f"-k{i}"
            spec["nodeName"] = renames.get(spec.get("nodeName"), spec.get("nodeName"))
            pools[spec["pool"]["name"]] = renames.get(spec["pool"]["name"], spec["pool"]["name"] + f"-k{i}")
            spec["pool"]["name"] = pools[spec["pool"]["name"]]
            slices.append(twin)
        if rng.random() < 0.5:
            for claim in scenario.allocated:
                twin = copy.deepcopy(claim)
                twin["metadata"]["name"] += f"-k{i}"
                for result in twin["status"]["allocation"]["devices"]["results"]:
                    result["pool"] = pools.get(result["pool"], result["pool"])
                held.append(twin)
    for node in nodes:
        draw = rng.random()
        if draw < 0.15:
            node.setdefault("spec", {})["taints"] = [{"key": "example.com/maintenance", "value": "yes",
                                                      "effect": rng.choice(["NoSchedule", "NoExecute"])}]
        elif draw < 0.25:
            node.setdefault("spec", {})["unschedulable"] = True
    claims = copy.deepcopy(scenario.claims)
    for claim in claims:
        claim["metadata"]["namespace"] = "t"
    pod: dict = {"metadata": {"name": "p", "namespace": "t", "uid": "uid-p"}, "spec": {}}
    draw = rng.random()
    if draw < 0.2:
        pod["spec"]["tolerations"] = [{"key": "example.com/maintenance", "operator": "Exists"}]
    elif draw < 0.35:
        pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": rng.choice(nodes)["metadata"]["name"]}
    draw = rng.random()
    if draw < 0.15 and held:  # a claim the pod shares, allocated for one node
        shared = copy.deepcopy(rng.choice(held))
        shared["metadata"].update(name="shared", namespace="t")
        target = rng.choice(nodes)["metadata"]["name"]
        shared["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [target]}]}]}
        shared["status"]["reservedFor"] = rng.choice([[], [{"resource": "pods", "name": "p", "uid": "uid-p"}],
                                                      [{"resource": "pods", "name": "q", "uid": "uid-q"}]])
        claims.append(shared)
    elif draw < 0.2:
        claims = []
    elif draw < 0.25 and claims:
        claims[0]["spec"]["devices"]["requests"][0].get("exactly", {})["deviceClassName"] = "no-such-class"
    rng.shuffle(nodes)  # the store's order: both take the nodes in name order
    cluster = {"nodes": nodes, "slices": slices, "classes": [*nvidia_classes(), *scenario.classes],
               "claims": [*held, *claims],
               "version": {"kubernetes_version": version, "feature_gates": _gates(version)}}
    return cluster, claims, pod


def _decide(pod: dict, claims: list[dict], cluster: dict) -> Decision:
    nodes = sorted(cluster["nodes"], key=lambda n: n["metadata"]["name"])

    def snapshot() -> PlanState:
        return PlanState(nodes=nodes, slices=cluster["slices"], classes=cluster["classes"], claims=cluster["claims"],
                         **cluster["version"])

    class_names = {c["metadata"]["name"] for c in cluster["classes"]}
    return schedule(pod, claims, nodes, snapshot, class_names.__contains__)


@pytest.mark.parametrize("version", versions.known())
@pytest.mark.parametrize("seed", range(40))
def test_grouped_decision_is_the_node_by_node_one(version, seed):
    cluster, claims, pod = _cluster(seed, version)
    nodes = sorted(cluster["nodes"], key=lambda n: n["metadata"]["name"])
    assert _decide(pod, claims, cluster) == _oracle(pod, claims, nodes, cluster)


def test_the_comparison_sees_every_kind_of_decision():
    """The scenarios above reach a node, no node, a deallocation, a missing class and an allocator error
    (else the comparison would prove less than it claims)."""
    kinds = set()
    for version in versions.known():
        for seed in range(40):
            cluster, claims, pod = _cluster(seed, version)
            made = _decide(pod, claims, cluster)
            kinds.add("error" if made.error else "deallocate" if made.deallocate else
                      "allocated" if made.allocations else "node" if made.node else
                      "class" if "does not exist" in made.message else "none")
    assert kinds >= {"error", "deallocate", "allocated", "node", "class", "none"}
