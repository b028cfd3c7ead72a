"""``capacity`` and ``preview`` against the real scheduler, one copy at a time.

Generated allocation scenarios (``drawb.testing.alloc_scenarios``: static MIG and partitionable GPUs,
device taints, claims already allocated, counts, ``All``, ``firstAvailable``, constraints) are applied
for real. Each scenario's claims become ResourceClaimTemplates, and a pod using them is pinned to the
scenario's nodes by required node affinity. drawb, connected to the cluster like a user
(``capacity -f pod.yaml --json``, ``preview -f pod.yaml --json``), predicts how many copies fit and
where the first goes; then copies of the pod are created one by one, each waiting for the real
scheduler's verdict, until one stays Pending. The count drawb predicted must equal the copies the
scheduler placed, and the node of the first copy must be one drawb says fits.
"""

from __future__ import annotations

import copy
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from drawb.commands.registry import run_line
from drawb.plan import PlanState, capacity
from drawb.plan.workload import Workload
from drawb.session import Session
from drawb.testing import alloc_live
from drawb.testing.alloc_scenarios import GATES, MANAGED_BY, generate, nvidia_classes
from drawb.testing.api import path_for

pytestmark = pytest.mark.live

SCENARIOS = 24
ZERO = 4  # scenarios where drawb predicts that no copy fits
MAX_COPIES = 10  # scenarios whose offline prediction is larger are left out, to keep the module short
HOSTNAME = "kubernetes.io/hostname"
RUN = "capacity"


@pytest.fixture(scope="module")
def cluster(start_control_plane):
    """Gates the scenarios need (as in the allocator differential): partitionable devices, device taints."""
    cp = start_control_plane(GATES, runtime_config="resource.k8s.io/v1alpha3=true")
    yield cp
    cp.cluster.down()


def _offline_total(scenario) -> int | None:
    """drawb's prediction on the scenario's own objects, to pick scenarios; None when it errors or is capped."""
    state = PlanState(nodes=scenario.nodes, slices=scenario.slices, classes=[*nvidia_classes(), *scenario.classes],
                      claims=scenario.allocated, kubernetes_version="1.34", feature_gates=GATES)
    claims = [copy.deepcopy(c) for c in scenario.claims]
    result = capacity(Workload("ResourceClaim", "x", "t", {"spec": {}}, claims, [True] * len(claims)), state)
    if result.error or any(n.capped for n in result.nodes):
        return None
    return result.total


def pick_scenarios() -> list:
    """Scenarios where copies fit (at most MAX_COPIES), and a few where none does."""
    fitting, none_fit, seed = [], [], 0
    while len(fitting) + len(none_fit) < SCENARIOS and seed < 600:
        scenario = generate(seed, prefix="pc")
        seed += 1
        if any(f in scenario.features for f in ("admin access", "over the claim limit")):
            continue
        total = _offline_total(scenario)
        if total is not None and 0 < total <= MAX_COPIES and len(fitting) < SCENARIOS - ZERO:
            fitting.append(scenario)
        elif total == 0 and len(none_fit) < ZERO:
            none_fit.append(scenario)
    return fitting + none_fit


def _templates(scenario, namespace: str) -> list[dict]:
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
             "metadata": {"name": claim["metadata"]["name"], "namespace": namespace,
                          "labels": {**MANAGED_BY, alloc_live.RUN_LABEL: RUN}},
             "spec": {"spec": copy.deepcopy(claim["spec"])}} for claim in scenario.claims]


def _pod(scenario, namespace: str, index: int) -> dict:
    entries = [{"name": f"c{i}", "resourceClaimTemplateName": c["metadata"]["name"]} for i, c in enumerate(scenario.claims)]
    nodes = [n["metadata"]["name"] for n in scenario.nodes]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{scenario.name}-copy{index}", "namespace": namespace,
                         "labels": {**MANAGED_BY, alloc_live.RUN_LABEL: RUN}},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                         "nodeSelectorTerms": [{"matchExpressions": [
                             {"key": HOSTNAME, "operator": "In", "values": nodes}]}]}}},
                     "containers": [{"name": "ctr", "image": "ubuntu:22.04", "command": ["sleep", "infinity"],
                                     "resources": {"claims": [{"name": e["name"]} for e in entries]}}],
                     "resourceClaims": entries}}


def _verdict(api, namespace: str, name: str, timeout: float = 45) -> tuple[str, str | None, list[dict]]:
    """("placed", node, allocations) or ("pending", None, []) once the scheduler has decided."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = api.get(path_for("Pod", name, namespace))
        if pod["spec"].get("nodeName"):
            claims = [api.get(path_for("ResourceClaim", s["resourceClaimName"], namespace))
                      for s in pod["status"].get("resourceClaimStatuses") or []]
            return "placed", pod["spec"]["nodeName"], [c["status"]["allocation"] for c in claims]
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond["type"] == "PodScheduled" and cond["status"] == "False":
                return "pending", None, []
        time.sleep(0.3)
    return "undecided", None, []


def _place_until_pending(api, namespace: str, scenario, limit: int) -> list[tuple[str, list[dict]]]:
    placed = []
    for index in range(limit + 1):
        api.create(_pod(scenario, namespace, index))
        kind, node, allocations = _verdict(api, namespace, f"{scenario.name}-copy{index}")
        if kind != "placed":
            return placed if kind == "pending" else [*placed, ("undecided", [])]
        placed.append((node, allocations))
    return placed


def test_capacity_and_preview_agree_with_the_real_scheduler(cluster, tmp_path, timings):
    started = time.monotonic()
    api = cluster.api()
    namespace = alloc_live.admin_namespace(cluster, "preview-capacity")
    scenarios = pick_scenarios()
    assert len(scenarios) >= 20
    alloc_live.publish(api, scenarios, nvidia_classes(), cluster.cluster.pod_log_dir)
    alloc_live.create_allocated(api, namespace, scenarios, RUN)
    for scenario in scenarios:
        for template in _templates(scenario, namespace):
            api.create(template)
    time.sleep(1)  # let the scheduler's informers see the existing allocations first

    session = Session(kubeconfig=str(cluster.kubeconfig), namespace=namespace)
    predictions = {}
    try:
        for scenario in scenarios:
            path = tmp_path / f"{scenario.name}.yaml"
            path.write_text(yaml.safe_dump(_pod(scenario, namespace, 0)))
            counted = json.loads(run_line(session, f"capacity -f {path} --json", prog="drawb"))
            previewed = json.loads(run_line(session, f"preview -f {path} --json", prog="drawb"))
            predictions[scenario.name] = (counted, previewed)
    finally:
        session.close()
    timings["preview_capacity_predict_s"] = time.monotonic() - started

    with ThreadPoolExecutor(max_workers=8) as pool:
        placements = dict(zip([s.name for s in scenarios], pool.map(
            lambda s: _place_until_pending(api, namespace, s, predictions[s.name][0]["total"] + 1), scenarios)))
    timings["preview_capacity_s"] = time.monotonic() - started

    wrong, same_devices, first_placed = [], 0, 0
    for scenario in scenarios:
        counted, previewed = predictions[scenario.name]
        placed = placements[scenario.name]
        where = f"{scenario.name} ({', '.join(scenario.features)})"
        if counted["error"] or previewed["error"]:
            wrong.append(f"{where}: drawb errors: {counted['error'] or previewed['error']}")
            continue
        if len(placed) != counted["total"]:
            wrong.append(f"{where}: drawb predicts {counted['total']} copies, the scheduler placed {len(placed)} "
                         f"({[n for n, _ in placed]}); drawb per node {dict(zip([r['node'] for r in counted['rows']], [r['copies'] for r in counted['rows']]))}")
        if not placed:
            if previewed["fits"]:
                wrong.append(f"{where}: preview says it fits on {previewed['fits']}, the scheduler keeps it Pending")
            continue
        node, allocations = placed[0]
        first_placed += 1
        if node not in previewed["fits"]:
            wrong.append(f"{where}: the scheduler put the first copy on {node}, preview says only {previewed['fits']}")
            continue
        mine = sorted((r["request"], r["pool"], r["device"]) for r in previewed["rows"] if r["node"] == node)
        theirs = sorted((r["request"], r["pool"], r["device"]) for a in allocations for r in a["devices"]["results"])
        same_devices += mine == theirs
    print(f"\ncapacity/preview live: {len(scenarios)} scenarios, {sum(len(p) for p in placements.values())} copies "
          f"placed; first copy on a node preview named in {first_placed}, the same devices as preview in "
          f"{same_devices}; {time.monotonic() - started:.0f}s")
    alloc_live.clean(api, namespace, RUN)
    assert not wrong, "\n".join(wrong)
